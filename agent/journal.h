#pragma once

// The agent's journal, `<state_dir>/journal`: the jobs it runs and the results the server has
// not acknowledged yet, so that a reconnect (or a restart of the agent) can report them. JSON,
// replaced atomically (write to a temporary file, fsync, rename) on every change.
//
//   {"version": 1, "jobs": [{"job_id": "j1", "attempt": 1, "board_id": "sim-0",
//                            "running": false, "result": {<RunResult as proto JSON>}}]}

#include <optional>
#include <string>
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

/// Reads the journal; a missing file is an empty journal. Errors: DataLoss when the file is not
/// a journal (the message names the file and says how to start afresh).
absl::StatusOr<std::vector<JournalEntry>> LoadJournal(const std::string& path);

/// Replaces the journal with `entries`. Errors: Internal (disk).
absl::Status SaveJournal(const std::string& path, const std::vector<JournalEntry>& entries);

}  // namespace boardlab::agent
