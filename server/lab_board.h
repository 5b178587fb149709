#pragma once

// A board as the Lab keeps it: what the API shows (v1::Board) and what only the server knows
// (its agent session, maintenance and quarantine flags, its reservation, its health checks).

#include <cstdint>
#include <string>

#include "boardlab/v1/board_service.pb.h"

namespace boardlab::server {

struct LabBoard {
  v1::Board board;
  std::string session_id;  // "" = no agent connected
  bool maintenance = false;
  bool quarantined = false;
  std::string lease_id;  // "" = not reserved
  int64_t reserved_until_ms = 0;
  bool health_check_running = false;
  int64_t next_health_check_ms = 0;
  // Its agent is bringing it back after a failure (BOARD_CONDITION_RECOVERING): no jobs, no
  // health check. Not stored: the agent says it again when it reconnects.
  bool recovering = false;
  std::string recovery_reason;
  // An attempt its agent still runs on it that is no longer the board's job (it was given up
  // while the agent was away): "job#attempt", told to stop, until the agent reports its end or
  // comes back without it. Not stored: the agent says it again when it reconnects.
  std::string stale_run;

  /// Whether it runs something: its job, a stale attempt.
  bool Running() const { return !board.job_id().empty() || !stale_run.empty(); }

  /// One state for the API, in this order: a board with no agent is offline whatever else holds,
  /// a board running something is busy even when quarantine or maintenance waits for the job to
  /// end, quarantine and maintenance (which the store keeps) come before a recovery by the agent.
  v1::BoardState State() const;
  /// The API's view, with its state (maintenance and quarantine outlive a busy or offline spell,
  /// so the store must keep them).
  v1::Board View() const;
};

/// "idle", "busy", ... for logs, metrics labels and messages.
std::string BoardStateName(v1::BoardState state);

}  // namespace boardlab::server
