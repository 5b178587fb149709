#pragma once

// One job attempt on one board, from assignment to RunResult:
//   LOADING     fetch artifact, input and expected blobs through the ArtifactCache (transfer pool)
//   RUNNING     BoardExecutor::Start; console lines go out as LogLines in batches
//   COLLECTING  upload outputs, ETDump, profile JSON and the full log (transfer pool)
// then one JobDone event with the RunResult. Blocking transfers run on `transfers`; everything
// else, including every event it reports, happens on the io_context thread.
//
//   auto runner = std::make_shared<JobRunner>(env, assignment, board, report_event);
//   runner->Start();
//   runner->Cancel();   // -> JobDone with RUN_OUTCOME_CANCELLED

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/agent_core.h"
#include "agent/artifact_cache.h"
#include "agent/blob_store.h"
#include "agent/board_executor.h"
#include "agent/config.h"

namespace boardlab::agent {

/// What a runner works with; all of it outlives the runner.
struct JobEnvironment {
  boost::asio::io_context* io = nullptr;
  boost::asio::thread_pool* transfers = nullptr;
  ArtifactCache* cache = nullptr;
  BlobStore* blobs = nullptr;
  BoardExecutor* executor = nullptr;
  std::string work_root;     // <state_dir>/work; each board has a directory below it
  bool inline_logs = false;  // the server takes small logs in the RunResult (no upload)
  bool stage_lines = false;  // the server takes log lines with a stage (one write for both)
};

/// Lines are sent in batches of at most this many, at most this long after the first one.
inline constexpr size_t kLogBatchLines = 64;
inline constexpr auto kLogBatchDelay = std::chrono::milliseconds(200);
/// The full log kept for upload is cut here (the rest is counted, not kept).
inline constexpr size_t kMaxLogBytes = 8u << 20;
/// Logs up to this size go inline in the RunResult when the server takes them.
inline constexpr size_t kMaxInlineLogBytes = 64u << 10;

class JobRunner : public std::enable_shared_from_this<JobRunner> {
 public:
  using EventFn = std::function<void(AgentEvent event)>;

  /// `report` receives JobStage, JobLogs and finally one JobDone, on the io_context thread.
  JobRunner(JobEnvironment env, v1::Assignment assignment, BoardConfig board, EventFn report);

  void Start();
  /// Stops the attempt: kills a running board run, skips what has not started. JobDone follows
  /// with RUN_OUTCOME_CANCELLED.
  void Cancel();

  const JobKey& key() const { return key_; }

 private:
  struct Fetched {
    absl::Status status;
    std::string artifact;
    std::vector<std::string> inputs;
    std::vector<std::string> expected;
    std::string cases_manifest;  // a many-case run: the manifest of the cases' local files
  };
  /// Blocking (transfer thread): fetches the cases' blobs and writes their manifest into the
  /// work directory; false with fetched.status on a failure.
  bool FetchCases(Fetched& fetched);
  void OnFetched(Fetched fetched);
  void OnLine(std::string line);
  void FlushLogs();
  /// Reports `stage`, with the log lines not sent yet when the server takes them so.
  void ReportStage(v1::JobState stage);
  void OnBoardDone(BoardReport report);
  /// Blocking (transfer thread): uploads the run's files, profile and `log`; their digests go
  /// into `result`.
  absl::Status UploadResults(const BoardReport& report, const std::string& log,
                             v1::RunResult& result);
  void Finish(v1::RunResult result);
  std::string work_dir() const;
  double SecondsSince(std::chrono::steady_clock::time_point start) const;

  JobEnvironment env_;
  v1::Assignment assignment_;
  BoardConfig board_;
  EventFn report_;
  JobKey key_;
  boost::asio::steady_timer log_timer_;
  std::vector<std::string> pending_lines_;
  std::string full_log_;
  size_t dropped_log_bytes_ = 0;
  std::unique_ptr<BoardRun> run_;
  bool cancelled_ = false;
  bool finished_ = false;
  bool collecting_ = false;
  std::chrono::steady_clock::time_point stage_start_;
  double load_seconds_ = 0;
  double run_seconds_ = 0;
};

}  // namespace boardlab::agent
