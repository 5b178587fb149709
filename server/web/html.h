#pragma once

// Text made safe for the web pages (server/web/): HTML escaping of every value a page shows
// (model names, tenants, board ids and log text are user input), and the URL encoding of query
// strings and login forms.
//
//   out += "<td>" + HtmlEscape(job.spec().name()) + "</td>";
//   out += "<a href=\"/jobs/" + UrlEncode(job.id()) + "\">";
//   absl::StatusOr<FormFields> query = ParseForm("state=done&verdict=pass");

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace boardlab::server::web {

/// `text` for HTML text and for attribute values in double or single quotes: &, <, >, " and '
/// become character references, and bytes that are not valid UTF-8 (or are control characters
/// other than tab, newline and carriage return) become "?", so that a page stays well formed
/// whatever bytes a value holds.
std::string HtmlEscape(std::string_view text);

/// Percent-encodes every byte except RFC 3986's unreserved characters (A-Z a-z 0-9 - . _ ~), for
/// a path segment or a query value.
std::string UrlEncode(std::string_view text);

/// A path segment with its %XX escapes decoded ('+' stays '+'). Errors: InvalidArgument for a
/// '%' not followed by two hex digits.
absl::StatusOr<std::string> PercentDecode(std::string_view text);

/// Fields of an application/x-www-form-urlencoded text (a login form's body, a URL's query):
/// '+' is a space, %XX a byte. A name given twice keeps its last value.
using FormFields = std::map<std::string, std::string>;

/// Errors: InvalidArgument for a '%' not followed by two hex digits.
absl::StatusOr<FormFields> ParseForm(std::string_view text);

}  // namespace boardlab::server::web
