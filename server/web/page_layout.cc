#include "server/web/page_layout.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "server/web/html.h"

namespace boardlab::server::web {
namespace {

// The enum value's name without its prefix: JOB_STATE_QUEUED -> "QUEUED".
std::string WithoutPrefix(const std::string& name, std::string_view prefix) {
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

std::string Header(const Viewer* viewer) {
  std::string out =
      "<header class=\"top\"><a class=\"brand\" href=\"/jobs\">boardlab</a>"
      "<nav><a href=\"/jobs\">Jobs</a><a href=\"/boards\">Boards</a></nav>";
  if (viewer != nullptr) {
    absl::StrAppend(&out, "<div class=\"viewer\"><span>", HtmlEscape(viewer->tenant), " (",
                    HtmlEscape(viewer->role), ")</span>");
    if (viewer->has_session) {
      out +=
          "<form method=\"post\" action=\"/logout\"><button class=\"quiet\">Sign out</button>"
          "</form>";
    }
    out += "</div>";
  }
  return out + "</header>\n";
}

}  // namespace

std::string PageDocument(const std::string& title, const Viewer* viewer, const std::string& body) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>",
      HtmlEscape(title),
      " - boardlab</title><link rel=\"stylesheet\" href=\"/style.css\">"
      "<link rel=\"icon\" href=\"/favicon.svg\" type=\"image/svg+xml\">",
      "</head>\n<body>", Header(viewer), "<main>\n", body, "</main></body></html>\n");
}

std::string LoginPage(const std::string& next, const std::string& error) {
  std::string body = "<div class=\"login\"><h1>Sign in</h1>";
  if (!error.empty()) absl::StrAppend(&body, "<p class=\"error\">", HtmlEscape(error), "</p>");
  absl::StrAppend(
      &body,
      "<form method=\"post\" action=\"/login\"><label for=\"token\">Token</label>"
      "<input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"off\" required "
      "autofocus><input type=\"hidden\" name=\"next\" value=\"",
      HtmlEscape(next),
      "\"><button type=\"submit\">Sign in</button></form>"
      "<p class=\"muted\">The bearer token of your tenant, as for <code>boardlab --token</code>. "
      "The session lasts 12 hours.</p></div>\n");
  return PageDocument("Sign in", nullptr, body);
}

std::string ErrorPage(const Viewer* viewer, int status, const std::string& message) {
  const std::string title = absl::StrCat(status, " ", StatusText(status));
  return PageDocument(title, viewer,
                      absl::StrCat("<h1>", HtmlEscape(title), "</h1><p class=\"error\">",
                                   HtmlEscape(message), "</p>\n"));
}

std::string StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 303:
      return "See Other";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Content Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

std::string JobStateText(v1::JobState state) {
  return absl::AsciiStrToLower(WithoutPrefix(v1::JobState_Name(state), "JOB_STATE_"));
}

std::string VerdictText(v1::JobResult result) {
  if (result == v1::JOB_RESULT_UNSPECIFIED) return "";
  return WithoutPrefix(v1::JobResult_Name(result), "JOB_RESULT_");
}

std::string Badge(const std::string& text) {
  return absl::StrCat("<span class=\"badge ", HtmlEscape(absl::AsciiStrToLower(text)), "\">",
                      HtmlEscape(text), "</span>");
}

namespace {

std::string Table(const char* css_class, const std::vector<Column>& columns,
                  const std::string& rows) {
  std::string out = absl::StrCat("<table class=\"", css_class, "\"><thead><tr>");
  for (const Column& column : columns) {
    absl::StrAppend(&out, column.kind == Column::kNumber ? "<th class=\"num\">" : "<th>",
                    column.title, "</th>");
  }
  return absl::StrCat(out, "</tr></thead><tbody>\n", rows, "</tbody></table>\n");
}

}  // namespace

std::string CardsTable(const std::vector<Column>& columns, const std::string& rows) {
  return Table("cards", columns, rows);
}

std::string PlainTable(const std::vector<Column>& columns, const std::string& rows) {
  return Table("plain", columns, rows);
}

std::string Cell(const Column& column, const std::string& html) {
  const char* css_class = column.kind == Column::kNumber     ? "\" class=\"num\">"
                          : column.kind == Column::kLongName ? "\" class=\"long\">"
                                                             : "\">";
  return absl::StrCat("<td data-label=\"", column.title, css_class, html, "</td>");
}

std::string TimeText(int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixMillis(unix_ms),
                          absl::UTCTimeZone());
}

std::string AgeText(int64_t since_ms, int64_t now_ms) {
  if (since_ms <= 0) return "-";
  const int64_t seconds = std::max<int64_t>(0, (now_ms - since_ms) / 1000);
  if (seconds < 60) return absl::StrCat(seconds, "s");
  if (seconds < 3600) return absl::StrCat(seconds / 60, "m");
  if (seconds < 86400) return absl::StrCat(seconds / 3600, "h");
  return absl::StrCat(seconds / 86400, "d");
}

std::string BytesText(int64_t bytes) {
  if (bytes >= 1 << 20) return absl::StrFormat("%.2f MiB", bytes / 1048576.0);
  if (bytes >= 1 << 10) return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  return absl::StrCat(bytes, " B");
}

}  // namespace boardlab::server::web
