#include "server/web/jobs_page.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/cli/budget_checks.h"
#include "server/web/page_layout.h"

namespace boardlab::server::web {
namespace {

const Column kJob{"Job"}, kState{"State"}, kVerdict{"Verdict"}, kTenant{"Tenant"},
    kModel{"Model", Column::kLongName}, kBoardType{"Board type"}, kBoard{"Board"},
    kLatency{"Latency", Column::kNumber}, kAge{"Age", Column::kNumber};

// The enum value a filter names ("done" for JOB_STATE_DONE); nullopt for "" (any).
template <typename Enum>
absl::StatusOr<std::optional<Enum>> ParseEnum(const std::string& parameter,
                                              const std::string& value, const char* prefix,
                                              bool (*parse)(const std::string&, Enum*)) {
  if (value.empty()) return std::nullopt;
  Enum parsed{};
  if (!parse(prefix + absl::AsciiStrToUpper(value), &parsed) || static_cast<int>(parsed) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the filter ", parameter, "='", value, "' names no ", parameter));
  }
  return parsed;
}

std::string Option(const std::string& value, const std::string& label, const std::string& chosen) {
  return absl::StrCat("<option value=\"", HtmlEscape(value), "\"",
                      value == chosen ? " selected" : "", ">", HtmlEscape(label), "</option>");
}

std::string Select(const std::string& name, const std::string& label,
                   const std::vector<std::string>& values, const std::string& chosen) {
  std::string out =
      absl::StrCat("<label>", label, "<select name=\"", name, "\">", Option("", "any", chosen));
  for (const std::string& value : values) out += Option(value, value, chosen);
  return out + "</select></label>";
}

std::vector<std::string> StateValues() {
  std::vector<std::string> values;
  for (int s = v1::JobState_MIN + 1; s <= v1::JobState_MAX; ++s) {
    if (v1::JobState_IsValid(s)) values.push_back(JobStateText(static_cast<v1::JobState>(s)));
  }
  return values;
}

std::vector<std::string> VerdictValues() {
  std::vector<std::string> values;
  for (int r = v1::JobResult_MIN + 1; r <= v1::JobResult_MAX; ++r) {
    if (v1::JobResult_IsValid(r)) {
      values.push_back(absl::AsciiStrToLower(VerdictText(static_cast<v1::JobResult>(r))));
    }
  }
  return values;
}

std::string FilterForm(const JobsPageData& data) {
  std::vector<std::string> types = data.board_types;
  if (!data.query.board_type.empty() &&
      std::find(types.begin(), types.end(), data.query.board_type) == types.end()) {
    types.push_back(data.query.board_type);
  }
  std::string out = absl::StrCat("<form class=\"filters\" method=\"get\" action=\"/jobs\">",
                                 Select("state", "State", StateValues(), data.query.state),
                                 Select("verdict", "Verdict", VerdictValues(), data.query.verdict),
                                 Select("board_type", "Board type", types, data.query.board_type));
  if (data.tenant_filter) {
    absl::StrAppend(&out,
                    "<label>Tenant<input name=\"tenant\" placeholder=\"all tenants\" value=\"",
                    HtmlEscape(data.query.tenant), "\"></label>");
  }
  return out + "<button type=\"submit\">Filter</button></form>\n";
}

// The state column: "queued 2/5" while the job waits, else its state.
std::string StateCell(const v1::Job& job) {
  if (job.state() == v1::JOB_STATE_QUEUED && job.queue_position() > 0) {
    return Badge(absl::StrCat("queued ", job.queue_position(), "/", job.queue_length()));
  }
  return Badge(JobStateText(job.state()));
}

// The mean inference time with the clock that timed it in small print: a simulated or emulated
// figure must not pass for the board's time.
std::string LatencyCell(const v1::Job& job) {
  if (job.inference_us() <= 0) return "-";
  return absl::StrFormat("%.1f&nbsp;us<br><small>%s</small>", job.inference_us(),
                         HtmlEscape(run::InferenceClockText(job.inference_clock())));
}

// The job's name when the client gave one, else the start of its model's digest.
std::string ModelCell(const v1::Job& job) {
  const std::string& digest = job.spec().model().sha256();
  if (!job.spec().name().empty()) {
    return absl::StrCat("<span title=\"", HtmlEscape(digest), "\">", HtmlEscape(job.spec().name()),
                        "</span>");
  }
  return absl::StrCat("<code title=\"", HtmlEscape(digest), "\">", HtmlEscape(digest.substr(0, 12)),
                      "</code>");
}

std::string JobRow(const v1::Job& job, int64_t now_ms) {
  const std::string verdict = VerdictText(job.result());
  const std::string& type = job.spec().selector().board_type();
  return absl::StrCat("<tr>",
                      Cell(kJob, absl::StrCat("<a href=\"/jobs/", UrlEncode(job.id()), "\">",
                                              HtmlEscape(job.id()), "</a>")),
                      Cell(kState, StateCell(job)),
                      Cell(kVerdict, verdict.empty() ? "-" : Badge(verdict)),
                      Cell(kTenant, HtmlEscape(job.tenant())), Cell(kModel, ModelCell(job)),
                      Cell(kBoardType, type.empty() ? "default" : HtmlEscape(type)),
                      Cell(kBoard, job.board_id().empty() ? "-" : HtmlEscape(job.board_id())),
                      Cell(kLatency, LatencyCell(job)),
                      Cell(kAge, AgeText(job.submit_time_ms(), now_ms)), "</tr>\n");
}

// The query string of these filters on page `page` ("" = the first).
std::string QueryString(const JobsQuery& query, const std::string& page) {
  std::string out;
  for (const auto& [name, value] :
       {std::pair<const char*, const std::string*>{"state", &query.state},
        {"verdict", &query.verdict},
        {"board_type", &query.board_type},
        {"tenant", &query.tenant},
        {"page", &page}}) {
    if (!value->empty())
      absl::StrAppend(&out, out.empty() ? "?" : "&", name, "=", UrlEncode(*value));
  }
  return out;
}

}  // namespace

absl::StatusOr<JobsQuery> ParseJobsQuery(const FormFields& fields) {
  JobsQuery query;
  for (const auto& [name, value] : fields) {
    if (name == "state") {
      query.state = value;
    } else if (name == "verdict") {
      query.verdict = value;
    } else if (name == "board_type") {
      query.board_type = value;
    } else if (name == "tenant") {
      query.tenant = value;
    } else if (name == "page") {
      query.page = value;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "the jobs page has no filter '", name, "' (state, verdict, board_type, tenant, page)"));
    }
  }
  auto state = ParseEnum<v1::JobState>("state", query.state, "JOB_STATE_", v1::JobState_Parse);
  if (!state.ok()) return state.status();
  query.state_value = *state;
  auto verdict =
      ParseEnum<v1::JobResult>("verdict", query.verdict, "JOB_RESULT_", v1::JobResult_Parse);
  if (!verdict.ok()) return verdict.status();
  query.verdict_value = *verdict;
  return query;
}

v1::ListJobsRequest ListRequestFor(const JobsQuery& query) {
  v1::ListJobsRequest request;
  if (query.state_value) request.add_states(*query.state_value);
  if (query.verdict_value) request.add_results(*query.verdict_value);
  request.set_board_type(query.board_type);
  request.set_tenant(query.tenant);
  request.set_page_token(query.page);
  request.set_page_size(kJobsPageSize);
  return request;
}

std::string JobsPageBody(const JobsPageData& data) {
  std::string body = absl::StrCat("<h1>Jobs</h1>\n", FilterForm(data));
  if (data.jobs.empty()) {
    return body + "<p class=\"muted\">No jobs match these filters.</p>\n";
  }
  std::string rows;
  for (const v1::Job& job : data.jobs) rows += JobRow(job, data.now_ms);
  body += CardsTable({kJob, kState, kVerdict, kTenant, kModel, kBoardType, kBoard, kLatency, kAge},
                     rows);
  if (!data.next_page.empty()) {
    absl::StrAppend(&body, "<p class=\"pager\"><a href=\"/jobs",
                    HtmlEscape(QueryString(data.query, data.next_page)), "\">Older jobs</a></p>\n");
  }
  return body;
}

}  // namespace boardlab::server::web
