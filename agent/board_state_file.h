#pragma once

// What the agent learnt about one serial board that must outlive the agent process
// (docs/boards.md, "Agent state"): the firmware build id a flash left on the board, and the
// agent's quarantine of it with the reason. One small JSON file per board,
// `<state_dir>/boards/<board id>.json`, replaced atomically (written aside, synced, renamed):
//
//   {"version": 1, "learnt_build_id": "a1b2c3", "quarantined": true,
//    "quarantine_reason": "no answer on tcp:... after connecting again, reset: ..."}
//
//   absl::StatusOr<BoardState> state = LoadBoardState(path);   // no file: a board never seen
//   absl::Status saved = SaveBoardState(path, *state);

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace boardlab::agent {

struct BoardState {
  std::string learnt_build_id;  // what HELLO reported after the agent's flash; empty: unknown
  bool quarantined = false;
  std::string quarantine_reason;
  bool operator==(const BoardState&) const = default;
};

/// The file of board `board_id` under `state_dir`.
std::string BoardStatePath(const std::string& state_dir, const std::string& board_id);

/// Reads `path`. A missing file is a board the agent knows nothing about (the default state).
/// Errors: DataLoss for a file that is not such a document (the message says which file and to
/// move it away).
absl::StatusOr<BoardState> LoadBoardState(const std::string& path);

/// Replaces `path` (its directory is created): a reader, or an agent that dies mid-write, sees
/// the old document or the new one, never a mix. Errors: Internal with the path and the reason.
absl::Status SaveBoardState(const std::string& path, const BoardState& state);

}  // namespace boardlab::agent
