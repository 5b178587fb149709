// status, cancel and jobs: JobService's unary calls.

#include <iostream>

#include "boardlab/v1/job_service.grpc.pb.h"
#include "cli/arguments.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/tables.h"
#include "cli/watch.h"
#include "proto/support/blob_client.h"

namespace boardlab::cli {
namespace {

absl::Status AddListFilters(const JobsArgs& args, v1::ListJobsRequest& request) {
  for (const std::string& name : args.states) {
    absl::StatusOr<v1::JobState> state = ParseJobState(name);
    if (!state.ok()) return state.status();
    request.add_states(*state);
  }
  for (const std::string& text : args.labels) {
    absl::StatusOr<v1::Tag> label = ParseKeyValue(text, "--label");
    if (!label.ok()) return label.status();
    *request.add_labels() = *std::move(label);
  }
  request.set_board_type(args.board_type);
  return absl::OkStatus();
}

// Pages through ListJobs until `limit` jobs (newest first) or the last page.
absl::StatusOr<v1::ListJobsResponse> ListNewestJobs(const Connection& connection,
                                                    v1::ListJobsRequest request, int limit) {
  std::unique_ptr<v1::JobService::Stub> stub = v1::JobService::NewStub(connection.channel);
  v1::ListJobsResponse all;
  do {
    request.set_page_size(std::min(limit - all.jobs_size(), 1000));
    v1::ListJobsResponse page;
    absl::Status status = UnaryCall(connection, [&](grpc::ClientContext& context) {
      return stub->ListJobs(&context, request, &page);
    });
    if (!status.ok()) return status;
    for (v1::Job& job : *page.mutable_jobs()) {
      if (all.jobs_size() < limit) *all.add_jobs() = std::move(job);
    }
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty() && all.jobs_size() < limit);
  return all;
}

}  // namespace

int RunStatus(const Connection& connection, const std::string& job_id, bool json) {
  std::unique_ptr<v1::JobService::Stub> stub = v1::JobService::NewStub(connection.channel);
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  v1::Job job;
  absl::Status status = UnaryCall(connection, [&](grpc::ClientContext& context) {
    return stub->GetJob(&context, request, &job);
  });
  if (!status.ok()) return FailWithStatus(status, "getting job " + job_id, connection.server);
  if (json) {
    std::cout << MessageJson(job) << "\n";
  } else {
    PrintJobSummary(job, std::cout);
    api::BlobClient blobs(connection.channel, connection.token);
    PrintJobProfile(blobs, job, std::cout);
  }
  return job.state() == v1::JOB_STATE_DONE ? ExitCodeForResult(job.result()) : kExitPass;
}

int RunCancel(const Connection& connection, const std::string& job_id) {
  std::unique_ptr<v1::JobService::Stub> stub = v1::JobService::NewStub(connection.channel);
  v1::CancelJobRequest request;
  request.set_job_id(job_id);
  v1::Job job;
  absl::Status status = UnaryCall(connection, [&](grpc::ClientContext& context) {
    return stub->CancelJob(&context, request, &job);
  });
  if (!status.ok()) return FailWithStatus(status, "cancelling job " + job_id, connection.server);
  std::cout << "job " << job.id() << ": "
            << (job.state() == v1::JOB_STATE_DONE ? VerdictName(job.result())
                                                  : StateName(job.state()))
            << "\n";
  return kExitPass;
}

int RunJobs(const Connection& connection, const JobsArgs& args) {
  v1::ListJobsRequest request;
  absl::Status filters = AddListFilters(args, request);
  if (!filters.ok()) return Fail(kExitUsage, filters.message());
  absl::StatusOr<v1::ListJobsResponse> jobs = ListNewestJobs(connection, request, args.limit);
  if (!jobs.ok()) return FailWithStatus(jobs.status(), "listing jobs", connection.server);
  if (args.json) {
    jobs->clear_next_page_token();
    std::cout << MessageJson(*jobs) << "\n";
  } else {
    PrintJobsTable(jobs->jobs(), std::cout);
  }
  return kExitPass;
}

}  // namespace boardlab::cli
