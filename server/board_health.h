#pragma once

// Board health (docs/server.md, "Failures"): a board whose runs end in infrastructure errors
// `quarantine_after` times in a row is quarantined; a quarantined board, when connected, free and
// not in maintenance, runs the golden-model health check (configured at start-up) and returns to
// service when it passes, or is checked again later. Not thread-safe: the Lab's lock guards it.

#include <cstdint>
#include <optional>
#include <string>

#include "boardlab/v1/agent_service.pb.h"
#include "server/lab_board.h"
#include "server/store.h"

namespace boardlab::server {

class BoardHealth {
 public:
  static constexpr int64_t kRetryCheckMs = 30000;

  BoardHealth(int quarantine_after, int run_timeout_seconds);

  /// The health check's model and data; until set, quarantine ends only by an admin.
  void SetCheck(const CompileRecord& artifact, const v1::Digest& input, const v1::Digest& expected);
  bool has_check() const { return has_check_; }
  /// Whether `sha256` is one of the health check's blobs (agents may download them).
  bool IsCheckBlob(const std::string& sha256) const;

  /// Counts a job's run on `board`: an infrastructure failure adds to its failures in a row and
  /// may quarantine it; anything else resets the count. True when this quarantined the board (the
  /// caller counts it once the board's new state is committed).
  [[nodiscard]] bool CountRun(LabBoard& board, bool infra_failure, const std::string& message,
                              int64_t now_ms);
  /// The board's agent quarantined it (its recovery ran out): quarantined here too, with the
  /// agent's reason, and checked as soon as it is free. True when it was not quarantined before.
  [[nodiscard]] bool QuarantineByAgent(LabBoard& board, const std::string& agent_id,
                                       const std::string& reason, int64_t now_ms);
  /// The assignment that starts `board`'s health check when one is due (marks it running).
  std::optional<v1::Assignment> StartCheckIfDue(LabBoard& board, int64_t now_ms);
  /// Whether `result` answers `board`'s running health check.
  static bool IsCheckResult(const LabBoard& board, const v1::RunResult& result);
  void OnCheckResult(LabBoard& board, const v1::RunResult& result, int64_t now_ms);
  /// An admin ends maintenance of a quarantined board: it is checked now, or, with no check
  /// configured, returns to service on the admin's word.
  void OnMaintenanceEnded(LabBoard& board);

 private:
  static void ReturnToService(LabBoard& board);

  const int quarantine_after_;
  const int run_timeout_seconds_;
  bool has_check_ = false;
  CompileRecord artifact_;
  v1::Digest input_;
  v1::Digest expected_;
  int64_t attempts_ = 0;
};

}  // namespace boardlab::server
