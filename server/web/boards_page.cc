#include "server/web/boards_page.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/lab_board.h"
#include "server/web/html.h"
#include "server/web/page_layout.h"

namespace boardlab::server::web {
namespace {

const Column kBoard{"Board"}, kType{"Type"}, kState{"State"}, kHolder{"Holder"}, kHealth{"Health"},
    kJobsRun{"Jobs run", Column::kNumber}, kLastFailure{"Last failure"}, kTags{"Tags"};

std::string Holder(const v1::Board& board, int64_t now_ms) {
  if (!board.job_id().empty()) {
    return absl::StrCat("job <a href=\"/jobs/", UrlEncode(board.job_id()), "\">",
                        HtmlEscape(board.job_id()), "</a>");
  }
  if (!board.reserved_by().empty()) {
    return absl::StrCat("reserved by ", HtmlEscape(board.reserved_by()), " for ",
                        AgeText(now_ms, board.lease_expires_ms()), " more");
  }
  return "-";
}

std::string Health(const v1::Board& board) {
  std::string out = board.consecutive_failures() == 0
                        ? Badge("ok")
                        : HtmlEscape(absl::StrCat(board.consecutive_failures(),
                                                  " infrastructure failure(s) in a row"));
  if (!board.reason().empty()) absl::StrAppend(&out, "<br>", HtmlEscape(board.reason()));
  return out;
}

std::string LastFailure(const v1::Board& board, int64_t now_ms) {
  if (board.last_failure_ms() <= 0) return "never";
  return absl::StrCat("<span title=\"", TimeText(board.last_failure_ms()), "\">",
                      AgeText(board.last_failure_ms(), now_ms),
                      " ago</span>: ", HtmlEscape(board.last_failure()));
}

std::string Tags(const v1::Board& board) {
  return HtmlEscape(absl::StrJoin(board.tags(), ", ", [](std::string* out, const v1::Tag& tag) {
    absl::StrAppend(out, tag.key(), "=", tag.value());
  }));
}

std::string BoardRow(const v1::Board& board, int64_t now_ms) {
  return absl::StrCat(
      "<tr>", Cell(kBoard, HtmlEscape(board.id())), Cell(kType, HtmlEscape(board.type())),
      Cell(kState, Badge(BoardStateName(board.state()))), Cell(kHolder, Holder(board, now_ms)),
      Cell(kHealth, Health(board)), Cell(kJobsRun, absl::StrCat(board.jobs_run())),
      Cell(kLastFailure, LastFailure(board, now_ms)), Cell(kTags, Tags(board)), "</tr>\n");
}

// One line per board type: "imxrt700-sim: 3 boards (2 idle, 1 busy); 4 jobs queued".
std::string TypeSummary(const BoardsPageData& data) {
  std::set<std::string> types;
  for (const v1::Board& board : data.boards) types.insert(board.type());
  for (const auto& [type, queued] : data.queued_jobs) types.insert(type);
  std::string out = "<ul>";
  for (const std::string& type : types) {
    std::map<std::string, int> by_state;
    int total = 0;
    for (const v1::Board& board : data.boards) {
      if (board.type() != type) continue;
      ++by_state[BoardStateName(board.state())];
      ++total;
    }
    const auto queued = data.queued_jobs.find(type);
    absl::StrAppend(&out, "<li><strong>", HtmlEscape(type), "</strong>: ", total, " board(s) (",
                    HtmlEscape(absl::StrJoin(by_state, ", ",
                                             [](std::string* s, const auto& entry) {
                                               absl::StrAppend(s, entry.second, " ", entry.first);
                                             })),
                    "); ", queued == data.queued_jobs.end() ? 0 : queued->second,
                    " job(s) queued</li>");
  }
  return out + "</ul>\n";
}

}  // namespace

std::string BoardsPageBody(const BoardsPageData& data) {
  std::string out = "<h1>Boards</h1>\n";
  if (data.boards.empty() && data.queued_jobs.empty()) {
    return out + "<p class=\"muted\">No agent has registered a board yet.</p>\n";
  }
  std::string rows;
  for (const v1::Board& board : data.boards) rows += BoardRow(board, data.now_ms);
  return absl::StrCat(
      out, TypeSummary(data),
      CardsTable({kBoard, kType, kState, kHolder, kHealth, kJobsRun, kLastFailure, kTags}, rows));
}

}  // namespace boardlab::server::web
