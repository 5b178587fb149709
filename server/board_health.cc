#include "server/board_health.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/log.h"

namespace boardlab::server {
namespace {

constexpr char kCheckJobPrefix[] = "health-";

}  // namespace

BoardHealth::BoardHealth(int quarantine_after, int run_timeout_seconds)
    : quarantine_after_(quarantine_after), run_timeout_seconds_(run_timeout_seconds) {}

void BoardHealth::SetCheck(const CompileRecord& artifact, const v1::Digest& input,
                           const v1::Digest& expected) {
  artifact_ = artifact;
  input_ = input;
  expected_ = expected;
  has_check_ = true;
}

bool BoardHealth::IsCheckBlob(const std::string& sha256) const {
  return has_check_ && (sha256 == artifact_.artifact.sha256() || sha256 == input_.sha256() ||
                        sha256 == expected_.sha256());
}

bool BoardHealth::CountRun(LabBoard& board, bool infra_failure, const std::string& message,
                           int64_t now_ms) {
  if (!infra_failure) {
    board.board.set_consecutive_failures(0);
    return false;
  }
  board.board.set_consecutive_failures(board.board.consecutive_failures() + 1);
  board.board.set_last_failure(message);
  board.board.set_last_failure_ms(now_ms);
  if (board.board.consecutive_failures() < quarantine_after_ || board.quarantined) return false;
  board.quarantined = true;
  board.board.set_reason(absl::StrCat("quarantined after ", board.board.consecutive_failures(),
                                      " infrastructure failures in a row; last: ", message));
  board.next_health_check_ms = now_ms;
  LogWarning("board quarantined", {{"board", board.board.id()}, {"reason", board.board.reason()}});
  return true;
}

bool BoardHealth::QuarantineByAgent(LabBoard& board, const std::string& agent_id,
                                    const std::string& reason, int64_t now_ms) {
  board.board.set_reason(absl::StrCat("quarantined by agent ", agent_id, ": ", reason));
  if (board.quarantined) return false;
  board.quarantined = true;
  board.next_health_check_ms = now_ms;
  LogWarning("board quarantined", {{"board", board.board.id()}, {"reason", board.board.reason()}});
  return true;
}

std::optional<v1::Assignment> BoardHealth::StartCheckIfDue(LabBoard& board, int64_t now_ms) {
  if (!has_check_ || !board.quarantined || board.maintenance || board.health_check_running ||
      board.recovering || board.session_id.empty() || board.Running() ||
      now_ms < board.next_health_check_ms) {
    return std::nullopt;
  }
  board.health_check_running = true;
  v1::Assignment assign;
  assign.set_job_id(absl::StrCat(kCheckJobPrefix, board.board.id()));
  assign.set_attempt(static_cast<int32_t>(++attempts_));
  assign.set_board_id(board.board.id());
  *assign.mutable_artifact() = artifact_.artifact;
  *assign.add_inputs()->mutable_blob() = input_;
  *assign.add_expected() = expected_;
  assign.set_iterations(1);
  assign.set_timeout_seconds(run_timeout_seconds_);
  assign.set_health_check(true);
  return assign;
}

bool BoardHealth::IsCheckResult(const LabBoard& board, const v1::RunResult& result) {
  return board.health_check_running && absl::StartsWith(result.job_id(), kCheckJobPrefix);
}

void BoardHealth::OnCheckResult(LabBoard& board, const v1::RunResult& result, int64_t now_ms) {
  board.health_check_running = false;
  if (result.outcome() == v1::RUN_OUTCOME_PASS) {
    ReturnToService(board);
    return;
  }
  board.board.set_reason(absl::StrCat("quarantined; health check failed: ", result.message()));
  board.board.set_last_failure(absl::StrCat("health check failed: ", result.message()));
  board.board.set_last_failure_ms(now_ms);
  board.next_health_check_ms = now_ms + kRetryCheckMs;
}

void BoardHealth::OnMaintenanceEnded(LabBoard& board) {
  if (!board.quarantined) {
    board.board.clear_reason();
  } else if (has_check_) {
    board.next_health_check_ms = 0;  // check it now; it returns to service when it passes
  } else {
    ReturnToService(board);  // no golden model configured: the admin's word is final
  }
}

void BoardHealth::ReturnToService(LabBoard& board) {
  board.quarantined = false;
  board.board.set_consecutive_failures(0);
  board.board.clear_reason();
}

}  // namespace boardlab::server
