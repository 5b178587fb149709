#pragma once

// `boardlab watch JOB` (and `submit --wait`): follow a job's event stream to its end, printing
// progress, then show the verdict, the per-op profile and write the job's files.
//
// The stream survives a server restart: when it breaks, FollowJob reconnects with
// WatchJobRequest.after_seq = the last seq seen (events are dense from 1 per job), with
// exponential backoff, until no event has arrived for WatchOptions::reconnect_window.
//
// Usage:
//   ProgressPrinter progress(std::cerr);
//   absl::StatusOr<v1::Job> job = FollowJob(connection, "42", WatchOptions{}, progress);

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "boardlab/v1/job_service.grpc.pb.h"
#include "cli/connection.h"
#include "cli/diff.h"
#include "proto/support/blob_client.h"

namespace boardlab::cli {

struct WatchOptions {
  std::chrono::milliseconds first_backoff{250};
  std::chrono::milliseconds max_backoff{5000};
  /// Give up when the stream has delivered no event for this long.
  std::chrono::milliseconds reconnect_window{std::chrono::minutes(2)};
};

/// What FollowJob reports while it follows a job.
class JobObserver {
 public:
  virtual ~JobObserver() = default;
  /// Every event once, in seq order; the last one carries `finished`.
  virtual void OnEvent(const v1::JobEvent& event) = 0;
  /// The stream broke with `why`; the next attempt starts in `retry_in`.
  virtual void OnStreamBroken(const absl::Status& why, std::chrono::milliseconds retry_in) = 0;
};

/// Follows `job_id` until its `finished` event and returns that final job record.
/// Errors: NotFound / InvalidArgument / PermissionDenied / Unauthenticated from the server at
/// once; Unavailable when the reconnect window ran out.
absl::StatusOr<v1::Job> FollowJob(const Connection& connection, const std::string& job_id,
                                  const WatchOptions& options, JobObserver& observer);

/// Progress for people: one line per state with the time since the first event and how long
/// the previous state took, and the job's log lines indented under them:
///   [   0.00s] compiling
///               | compiled: artifact 5cd7e95fe5db, 56704 bytes
///   [   1.40s] queued (compiling took 1.4s)
///   [   1.52s] assigned to board sim-0, attempt 1 (queued took 120ms)
class ProgressPrinter : public JobObserver {
 public:
  /// `out` must outlive the printer.
  explicit ProgressPrinter(std::ostream& out);
  void OnEvent(const v1::JobEvent& event) override;
  void OnStreamBroken(const absl::Status& why, std::chrono::milliseconds retry_in) override;

 private:
  void PrintState(const v1::JobEvent& event);

  std::ostream& out_;
  int64_t first_time_ms_ = -1;
  int64_t state_start_ms_ = -1;
  v1::JobState state_ = v1::JOB_STATE_UNSPECIFIED;
  int failed_reconnects_ = 0;  // since the last event
};

/// What to do with a finished job.
struct ReportOptions {
  std::string out_dir;   // "" = do not download the job's files
  bool json = false;     // print the final job as one JSON object instead of tables
  std::string junit;     // "" = no JUnit XML report (cli/junit.h)
  std::string baseline;  // submit --baseline: a job id or --out directory to diff against
  DiffGates gates;       // the gates of that diff (cli/diff.h)
};

/// Prints the verdict, the checks, the inference time and the profile table (or the JSON) on
/// stdout, writes the JUnit report to `options.junit`, downloads the files to `options.out_dir`,
/// and returns the exit code: the verdict's, or kExitInfra when the report or the files of a
/// passing job cannot be written. With a baseline, the diff against it follows the verdict and a
/// failed gate makes a passing job exit 1.
int ReportFinishedJob(const Connection& connection, const v1::Job& job,
                      const ReportOptions& options);

/// The per-op profile table of a finished job (its clock, where each op ran), fetched from the
/// artifact store and named through its debug map; nothing when the job has no profile, a
/// warning on stderr when it cannot be read.
void PrintJobProfile(api::BlobClient& blobs, const v1::Job& job, std::ostream& out);

/// FollowJob with a ProgressPrinter on stderr, then ReportFinishedJob; returns the exit code.
int WatchAndReport(const Connection& connection, const std::string& job_id,
                   const ReportOptions& report, const WatchOptions& watch);

}  // namespace boardlab::cli
