#pragma once

// The agent's journal, `<state_dir>/journal`: the jobs it runs and the results the server has
// not acknowledged yet, so that a reconnect (or a restart of the agent) can report them. JSON
// snapshots, numbered, written in turn to `journal` and `journal.1`: each save overwrites (and
// fsyncs) the file holding the older one, so the newer one survives a save cut short; loading
// takes the newest readable file. (A temporary file renamed over the journal did the same, but
// cost the file system an inode allocation per save.)
//
//   {"version": 1, "seq": 7, "jobs": [{"job_id": "j1", "attempt": 1, "board_id": "sim-0",
//                                      "running": false, "result": {<RunResult as proto JSON>}}]}

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "boardlab/v1/agent_service.pb.h"

namespace boardlab::agent {

struct JournalEntry {
  std::string job_id;
  int attempt = 0;
  std::string board_id;
  bool running = true;                  // the run has not ended
  std::optional<v1::RunResult> result;  // set once it ended; kept until the server's ResultAck
};

/// Reads the journal's newest snapshot; no files is an empty journal. Errors: DataLoss when no
/// file is a journal (the message names the file and says how to start afresh).
absl::StatusOr<std::vector<JournalEntry>> LoadJournal(const std::string& path);

/// Replaces the journal with `entries`. Errors: Internal (disk).
absl::Status SaveJournal(const std::string& path, const std::vector<JournalEntry>& entries);

/// The journal's files at `path`; remembers which holds the newest snapshot, so that a series of
/// saves needs no reading. Not thread-safe.
class JournalFile {
 public:
  explicit JournalFile(std::string path);
  /// Errors: Internal (disk); the previous snapshot is then still the newest.
  absl::Status Save(const std::vector<JournalEntry>& entries);

 private:
  struct RenderedResult {
    std::string binary;  // the result's wire form, to tell whether `text` still renders it
    std::string text;    // its proto JSON
  };
  absl::StatusOr<RenderedResult> Render(const std::string& key, const v1::RunResult& result);

  std::string path_;
  int64_t seq_ = 0;                                 // the newest snapshot's number
  std::map<std::string, RenderedResult> rendered_;  // by "job#attempt", the last snapshot's
};

/// Saves journal snapshots on a thread of its own, so that the agent's event loop never waits
/// for fsync (it did three times per job, which capped a busy agent at ~50 jobs/s). A snapshot
/// overtaken by a newer one before it was written is skipped: the newer one says it all. The
/// ordering this gives up is harmless: a result sent before its snapshot is on disk, when the
/// agent dies in between, is reported again as "agent restarted during the run" for the same
/// attempt, which the server already has (it keys results by job and attempt). For the same
/// reason a snapshot may wait: saves are at least `min_interval` apart, so that a busy agent
/// (hundreds of changes a second with eight boards) writes and fsyncs a few dozen snapshots a
/// second, not one after the other for as long as jobs come.
///
///   JournalWriter writer(path, [](const absl::Status& error) { log(error); });
///   writer.Write(core.entries());   // returns at once
///   writer.Flush();                 // the last snapshot is on disk
class JournalWriter {
 public:
  using ErrorFn = std::function<void(const absl::Status& error)>;
  static constexpr std::chrono::milliseconds kMinInterval{20};
  JournalWriter(std::string path, ErrorFn on_error,
                std::chrono::milliseconds min_interval = kMinInterval);
  /// Writes the last snapshot, then stops.
  ~JournalWriter();

  void Write(std::vector<JournalEntry> entries);
  /// Waits until the last snapshot is on disk (without waiting for the interval).
  void Flush();
  /// Snapshots written so far (tests).
  int writes() const;

 private:
  void Loop();

  JournalFile file_;  // used by the writer thread only
  const ErrorFn on_error_;
  const std::chrono::milliseconds min_interval_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::optional<std::vector<JournalEntry>> pending_;
  bool writing_ = false;
  bool stop_ = false;
  int flushing_ = 0;  // callers in Flush(): the next save does not wait for the interval
  int writes_ = 0;
  std::thread thread_;
};

}  // namespace boardlab::agent
