#include "cli/watch.h"

#include <algorithm>
#include <iostream>
#include <optional>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/exit_codes.h"
#include "cli/job_files.h"
#include "cli/junit.h"
#include "cli/profile_view.h"
#include "cli/tables.h"
#include "proto/support/blob_client.h"
#include "proto/support/grpc_util.h"

namespace boardlab::cli {
namespace {

struct StreamOutcome {
  std::optional<v1::Job> finished;
  absl::Status status;      // why the stream ended without a `finished` event
  bool progressed = false;  // at least one new event arrived
};

// One connection: reads the events after `last_seq`, hands the new ones to the observer and
// advances `last_seq`. A server that replays an event we have seen is tolerated.
StreamOutcome ReadEventStream(v1::JobService::Stub& stub, const Connection& connection,
                              const std::string& job_id, int64_t& last_seq, JobObserver& observer) {
  grpc::ClientContext context;
  PrepareContext(context, connection, std::chrono::milliseconds(0));
  v1::WatchJobRequest request;
  request.set_job_id(job_id);
  request.set_after_seq(last_seq);
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader = stub.WatchJob(&context, request);
  StreamOutcome outcome;
  v1::JobEvent event;
  while (reader->Read(&event)) {
    if (event.seq() > 0 && event.seq() <= last_seq) continue;
    if (event.seq() > 0) last_seq = event.seq();
    outcome.progressed = true;
    observer.OnEvent(event);
    if (event.has_finished()) {
      outcome.finished = event.finished();
      context.TryCancel();  // the server ends the stream here anyway; do not wait for it
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  if (!outcome.finished) {
    outcome.status = status.ok() ? absl::UnavailableError("the event stream ended early")
                                 : api::FromGrpcStatus(status);
  }
  return outcome;
}

// Errors that reconnecting cannot cure.
bool IsFinalWatchError(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kUnimplemented:
      return true;
    default:
      return false;
  }
}

double Seconds(int64_t ms) { return ms / 1000.0; }

// submit --baseline: the diff of the finished job against the baseline, printed after the verdict
// (on stderr with --json, whose stdout is one JSON object), its suite added to the report.
// Returns the exit code: a failed gate fails a passing job; a baseline that cannot be read is an
// error of its own.
int DiffWithBaseline(const Connection& connection, api::BlobClient& blobs, const v1::Job& job,
                     const ReportOptions& options, int code, std::vector<GateSuite>& suites) {
  absl::StatusOr<JobSnapshot> a = LoadSnapshot(connection, options.baseline);
  absl::StatusOr<JobSnapshot> b =
      a.ok() ? LoadSnapshotOfJob(blobs, job) : absl::StatusOr<JobSnapshot>(a.status());
  if (!b.ok()) {
    const int failed = FailWithStatus(
        b.status(), "diffing against the baseline " + options.baseline, connection.server);
    return code == kExitPass ? failed : code;
  }
  const JobDiff diff = DiffJobs(*a, *b);
  const std::vector<GateCase> gates = JudgeGates(diff, options.gates);
  PrintDiff(diff, gates, options.json ? std::cerr : std::cout);
  suites.push_back(DiffSuite(diff, gates));
  std::string error;
  const int gates_code = GatesExitCode(diff, options.gates, gates, error);
  if (gates_code == kExitUsage) {
    FailWithStatus(absl::InvalidArgumentError(error), "diffing against the baseline",
                   connection.server);
  }
  return code == kExitPass ? gates_code : code;
}

}  // namespace

// A profile that cannot be fetched or read is worth a warning, not a different exit code.
void PrintJobProfile(api::BlobClient& blobs, const v1::Job& job, std::ostream& out) {
  if (job.files().profile().sha256().empty()) return;
  absl::StatusOr<std::string> bytes = blobs.Get(job.files().profile());
  absl::StatusOr<ProfileView> profile =
      bytes.ok() ? ParseProfileJson(*bytes) : absl::StatusOr<ProfileView>(bytes.status());
  if (!profile.ok()) {
    std::cerr << "boardlab: warning: cannot show the profile: " << profile.status().message()
              << "\n";
    return;
  }
  if (!job.files().debug_map().sha256().empty()) {
    absl::StatusOr<std::string> debug_map = blobs.Get(job.files().debug_map());
    absl::StatusOr<std::string> report = blobs.Get(job.files().report());
    if (debug_map.ok()) NameOps(*profile, *debug_map, report.ok() ? *report : "");
  }
  PrintProfileTable(*profile, out, job.cases_size(), std::max(1, job.spec().run().iterations()));
}

absl::StatusOr<v1::Job> FollowJob(const Connection& connection, const std::string& job_id,
                                  const WatchOptions& options, JobObserver& observer) {
  std::unique_ptr<v1::JobService::Stub> stub = v1::JobService::NewStub(connection.channel);
  Backoff backoff(options.first_backoff, options.max_backoff);
  int64_t last_seq = 0;
  auto give_up_at = std::chrono::steady_clock::now() + options.reconnect_window;
  while (true) {
    StreamOutcome outcome = ReadEventStream(*stub, connection, job_id, last_seq, observer);
    if (outcome.finished) return *std::move(outcome.finished);
    if (IsFinalWatchError(outcome.status)) return outcome.status;
    const auto now = std::chrono::steady_clock::now();
    if (outcome.progressed) {
      backoff.Reset();
      give_up_at = now + options.reconnect_window;
    }
    if (now >= give_up_at) {
      return absl::UnavailableError(absl::StrFormat(
          "no event from job %s for %ds, giving up (last: %s); `boardlab watch %s` resumes", job_id,
          std::chrono::duration_cast<std::chrono::seconds>(options.reconnect_window).count(),
          outcome.status.ToString(), job_id));
    }
    const std::chrono::milliseconds delay = backoff.Next();
    observer.OnStreamBroken(outcome.status, delay);
    std::this_thread::sleep_for(delay);
  }
}

ProgressPrinter::ProgressPrinter(std::ostream& out) : out_(out) {}

void ProgressPrinter::OnEvent(const v1::JobEvent& event) {
  if (first_time_ms_ < 0) first_time_ms_ = event.time_ms();
  if (failed_reconnects_ > 0) {
    out_ << "           reconnected\n";
    failed_reconnects_ = 0;
  }
  if (event.has_log()) {
    // One event may carry several lines (the server stores an agent's batch as one event).
    for (absl::string_view line : absl::StrSplit(event.log(), '\n')) {
      out_ << "           | " << line << "\n";
    }
  } else if (event.has_state()) {
    PrintState(event);
  } else if (event.has_finished() && state_ != v1::JOB_STATE_DONE) {
    out_ << absl::StrFormat("[%7.2fs] done\n", Seconds(event.time_ms() - first_time_ms_));
  }
  out_.flush();
}

void ProgressPrinter::PrintState(const v1::JobEvent& event) {
  out_ << absl::StrFormat("[%7.2fs] %s", Seconds(event.time_ms() - first_time_ms_),
                          StateName(event.state()));
  if (event.state() == v1::JOB_STATE_ASSIGNED && !event.board_id().empty()) {
    out_ << absl::StrFormat(" to board %s, attempt %d", event.board_id(), event.attempt());
  }
  if (state_ != v1::JOB_STATE_UNSPECIFIED) {
    out_ << absl::StrFormat(" (%s took %s)", StateName(state_),
                            FormatDuration(event.time_ms() - state_start_ms_));
  }
  out_ << "\n";
  state_ = event.state();
  state_start_ms_ = event.time_ms();
}

void ProgressPrinter::OnStreamBroken(const absl::Status& why, std::chrono::milliseconds retry_in) {
  // The first break says why; the retries while the server is away say only that they failed.
  if (failed_reconnects_++ == 0) {
    out_ << absl::StrFormat("           lost the event stream: %s\n", why.ToString());
  }
  out_ << absl::StrFormat("           reconnecting in %s (attempt %d)\n",
                          FormatDuration(retry_in.count()), failed_reconnects_);
  out_.flush();
}

int ReportFinishedJob(const Connection& connection, const v1::Job& job,
                      const ReportOptions& options) {
  api::BlobClient blobs(connection.channel, connection.token);
  if (options.json) {
    std::cout << MessageJson(job) << "\n";
  } else {
    PrintVerdict(job, std::cout);
    PrintJobProfile(blobs, job, std::cout);
  }
  std::cout.flush();
  int code = ExitCodeForResult(job.result());
  std::vector<GateSuite> suites = {JobSuite(job)};
  if (!options.baseline.empty())
    code = DiffWithBaseline(connection, blobs, job, options, code, suites);
  if (!options.junit.empty()) {
    const absl::Status written = WriteJunitFile(options.junit, suites);
    if (!written.ok()) {
      FailWithStatus(written, "writing the JUnit report", connection.server);
      if (code == kExitPass) code = kExitInfra;
    }
  }
  if (options.out_dir.empty()) return code;
  const absl::Status downloaded = DownloadJobFiles(blobs, job, options.out_dir);
  if (!downloaded.ok()) {
    FailWithStatus(downloaded, "writing the job's files to " + options.out_dir, connection.server);
    return code == kExitPass ? kExitInfra : code;
  }
  size_t written = ListJobFiles(job).size() + 1;
  // The timeline is drawn from files the job already has: failing to draw it is only a warning.
  const absl::StatusOr<int> timeline = WriteJobTimeline(job, options.out_dir);
  if (timeline.ok()) {
    written += static_cast<size_t>(*timeline);
  } else {
    std::cerr << "warning: no timeline (trace.json, timeline.svg): " << timeline.status().message()
              << "\n";
  }
  std::cerr << "wrote " << written << " files to " << options.out_dir << "\n";
  return code;
}

int WatchAndReport(const Connection& connection, const std::string& job_id,
                   const ReportOptions& report, const WatchOptions& watch) {
  ProgressPrinter progress(std::cerr);
  absl::StatusOr<v1::Job> job = FollowJob(connection, job_id, watch, progress);
  if (!job.ok()) return FailWithStatus(job.status(), "watching job " + job_id, connection.server);
  return ReportFinishedJob(connection, *job, report);
}

}  // namespace boardlab::cli
