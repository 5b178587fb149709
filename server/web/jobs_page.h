#pragma once

// The jobs page (/jobs): the jobs the viewer may see, newest first, with their state, tenant,
// model, board type, board, verdict, latency and age, and a filter form whose fields are the
// page's query parameters (so a filtered list is a link one can share):
//   /jobs?state=done&verdict=fail&board_type=imxrt700-sim&tenant=ml-team&page=<token>
// Every parameter is optional and an empty one means "any". `tenant` is for admins (the Lab
// refuses it for others, as ListJobs does); `page` is the token of the next page.
//
//   absl::StatusOr<JobsQuery> query = ParseJobsQuery(fields);
//   absl::StatusOr<v1::ListJobsResponse> jobs = lab.ListJobs(caller, ListRequestFor(*query));
//   std::string body = JobsPageBody({*query, jobs->jobs(), ...});

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "boardlab/v1/job_service.pb.h"
#include "server/web/html.h"

namespace boardlab::server::web {

/// Jobs per page.
inline constexpr int kJobsPageSize = 50;

/// The jobs page's filters as its query names them; the values as given ("" = any).
struct JobsQuery {
  std::string state;       // a job state: compiling, queued, ..., done
  std::string verdict;     // a verdict: pass, fail, compile_error, ... (finished jobs)
  std::string board_type;  // e.g. imxrt700-sim
  std::string tenant;      // admins: another tenant's jobs
  std::string page;        // next-page token of the previous page
  // What ParseJobsQuery read from `state` and `verdict`: nullopt = any.
  std::optional<v1::JobState> state_value;
  std::optional<v1::JobResult> verdict_value;
};

/// Errors: InvalidArgument naming the parameter for an unknown parameter, state or verdict.
absl::StatusOr<JobsQuery> ParseJobsQuery(const FormFields& fields);

/// The ListJobs request these filters make (kJobsPageSize jobs).
v1::ListJobsRequest ListRequestFor(const JobsQuery& query);

struct JobsPageData {
  JobsQuery query;
  std::vector<v1::Job> jobs;
  std::string next_page;                 // "" = this is the last page
  std::vector<std::string> board_types;  // offered by the board type filter
  bool tenant_filter = false;            // the viewer is an admin: offer the tenant filter
  int64_t now_ms = 0;
};

/// The page's body (for PageDocument): the filter form, the table, the link to older jobs.
std::string JobsPageBody(const JobsPageData& data);

}  // namespace boardlab::server::web
