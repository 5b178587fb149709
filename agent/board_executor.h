#pragma once

// The board driver interface: run one artifact on one board and say how it went. The agent
// core never knows what kind of board it talks to (STYLE.md rule 23); `sim` and `qemu` boards
// are ProcessBoardExecutor (boardlab-run in a child process), tests use fakes.
//
//   std::unique_ptr<BoardRun> run = executor.Start(request,
//       [&](std::string line) { logs.push_back(line); },
//       [&](BoardReport report) { Finish(report); });
//   ...
//   run->Cancel();  // on_done follows with outcome CANCELLED

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "boardlab/v1/agent_service.pb.h"

namespace boardlab::agent {

/// What to run. All files are local paths the executor may read; it writes only below work_dir.
struct BoardRunRequest {
  std::string board_id;
  std::string artifact_path;
  // The artifact's SHA-256 (hex), as the job names it and the artifact cache verified it: a
  // serial board's model slot is matched by it without reading the file again. Empty: unknown.
  std::string artifact_sha256;
  std::vector<std::string> inputs;    // FILE.bin or random:SEED, in input order
  std::vector<std::string> expected;  // expected raw bytes of output i
  int atol = 0;
  int iterations = 1;
  int timeout_seconds = 300;      // the run is killed after this long: BOARD_ERROR
  std::string work_dir;           // exists, owned by this run; empty (see ReportsOnlyItsOwnFiles)
  bool health_check = false;      // the server's golden-model check of a quarantined board
  std::string test_fault;         // serial: boardlab-run --test-fault (a test-only board config)
  bool artifact_in_slot = false;  // serial: the agent flashed the artifact into the model slot
  // A many-case run: the manifest of the cases' local files (boardlab-run --cases, written in
  // work_dir); inputs and expected are then empty. cases_verified: they have expected outputs.
  std::string cases_manifest;
  bool cases_verified = false;
};

/// One case of a many-case run: its verdict (outputs not yet uploaded) and its output files.
struct CaseReport {
  v1::CaseResult result;
  std::vector<std::string> output_paths;
};

/// How a run ended and what it left behind.
struct BoardReport {
  v1::RunOutcome outcome = v1::RUN_OUTCOME_BOARD_ERROR;
  std::string message;                    // why, in words (one line)
  std::vector<std::string> output_paths;  // raw outputs in output order (may be empty)
  std::string etdump_path;                // empty when the board wrote none
  std::string profile_json;               // per-op profile, boardlab-run --profile json shape
  std::vector<v1::OutputCheck> checks;
  double inference_us = 0;
  std::string inference_clock;  // what timed inference_us (v1::RunResult.inference_clock)
  uint64_t inference_cycles = 0;
  std::vector<CaseReport> cases;  // a many-case run, in case order; inference_us the slowest's
  // The run's last inference ended early (many cases: every case's), so its outputs were not
  // compared: RUN_OUTCOME_NO_OUTPUT when the run otherwise passed.
  bool no_output = false;
};

/// A run in progress. Destroying it kills the run without a report.
class BoardRun {
 public:
  virtual ~BoardRun() = default;
  /// Stops the run as fast as the board allows (a child process within a second); on_done
  /// follows with RUN_OUTCOME_CANCELLED. No effect after on_done.
  virtual void Cancel() = 0;
};

using LineCallback = std::function<void(std::string line)>;
using DoneCallback = std::function<void(BoardReport report)>;
/// A board's condition apart from its jobs, and why (empty when ready).
using ConditionCallback =
    std::function<void(v1::BoardCondition condition, const std::string& reason)>;

class BoardExecutor {
 public:
  virtual ~BoardExecutor() = default;
  /// Starts `request`. `on_line` gets the board's console lines as they come, `on_done` is called
  /// exactly once (unless the BoardRun is destroyed first). Both are called on the executor's
  /// io_context thread, never from inside Start().
  virtual std::unique_ptr<BoardRun> Start(const BoardRunRequest& request, LineCallback on_line,
                                          DoneCallback on_done) = 0;
  /// True when a report names only files its run wrote, so that a board's work directory may
  /// keep the previous run's files (overwritten in place) instead of being emptied before each
  /// run; BoardRunRequest::work_dir then exists but need not be empty.
  virtual bool ReportsOnlyItsOwnFiles() const { return false; }
  /// Tells `on_change` whenever the driver takes the board out of service or back on its own
  /// (the `serial` driver recovers a board right after a board error, and may quarantine it),
  /// and at once (posted) when the board is not ready already. Called on the io_context thread;
  /// a change to recovering comes before the report of the run that caused it. Drivers whose
  /// boards are always ready never call it.
  virtual void WatchCondition(ConditionCallback on_change) { (void)on_change; }
};

using BoardExecutorPtr = std::unique_ptr<BoardExecutor>;

}  // namespace boardlab::agent
