#pragma once

// What every web page shares: the HTML document around a page's body (the stylesheet, the header
// with its links and who is signed in), the sign-in and error pages, and the words and numbers
// the pages print (states, verdicts, times, sizes). Every value is HTML-escaped here or by the
// caller (server/web/html.h); no page has a script.
//
//   std::string html = PageDocument("Boards", &viewer, BoardsPageBody(data));

#include <cstdint>
#include <string>
#include <vector>

#include "boardlab/v1/types.pb.h"

namespace boardlab::server::web {

/// Who is looking at a page, for its header.
struct Viewer {
  std::string tenant;
  std::string role;          // "client" or "admin"
  bool has_session = false;  // signed in through the form: the header offers "Sign out"
};

/// A whole HTML document titled `title` ("<title> - boardlab"); `viewer` null on pages shown
/// before signing in. `body` is HTML (already escaped).
std::string PageDocument(const std::string& title, const Viewer* viewer, const std::string& body);

/// The sign-in form: a token field posted to /login with `next` (the page to go to afterwards)
/// as a hidden field; `error` (text) above it when not empty.
std::string LoginPage(const std::string& next, const std::string& error);

/// A page saying what went wrong: "<status> <reason phrase>" and `message` (text).
std::string ErrorPage(const Viewer* viewer, int status, const std::string& message);

/// The reason phrase of an HTTP status code: 404 -> "Not Found".
std::string StatusText(int status);

/// "compiling", "queued", ..., "done".
std::string JobStateText(v1::JobState state);
/// "PASS", "FAIL", "COMPILE_ERROR", ...; "" for a job without a verdict.
std::string VerdictText(v1::JobResult result);
/// A coloured label: <span class="badge KIND">TEXT</span>, KIND the lower-case text.
std::string Badge(const std::string& text);

/// A column of a table: its heading (a constant, not escaped), and how its cells flow.
struct Column {
  enum Kind {
    kText,     // words, wrapped between them
    kNumber,   // right-aligned, never wrapped
    kLongName  // may break anywhere (tensor names, file names: long runs without spaces)
  };
  const char* title;
  Kind kind = kText;
};
/// A table of class "cards" (one card per row on a phone) with these headings around `rows`
/// (<tr>s of Cell()s in the same order).
std::string CardsTable(const std::vector<Column>& columns, const std::string& rows);
/// The same as a plain table, for one narrow enough to stay a table on a phone.
std::string PlainTable(const std::vector<Column>& columns, const std::string& rows);
/// One cell of a table: <td data-label="TITLE" class="num|long">HTML</td> as its column says.
std::string Cell(const Column& column, const std::string& html);

/// "2024-05-01 12:00:07 UTC" (the server does not know the viewer's time zone); "-" for 0.
std::string TimeText(int64_t unix_ms);
/// How long ago, roughly: "42s", "5m", "3h", "2d"; "-" for 0.
std::string AgeText(int64_t since_ms, int64_t now_ms);
/// "812 B", "12.5 KiB", "3.20 MiB".
std::string BytesText(int64_t bytes);

}  // namespace boardlab::server::web
