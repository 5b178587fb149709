#include "server/lab.h"

#include "absl/strings/str_cat.h"
#include "server/board_leases.h"
#include "server/clock.h"

namespace boardlab::server {

namespace {

// The blobs an agent fetches to run a job: its artifact, inputs and expected outputs (of every
// case).
bool JobNeedsBlob(const v1::Job& job, const std::string& sha256) {
  if (job.files().artifact().sha256() == sha256) return true;
  for (const auto& input : job.spec().run().inputs()) {
    if (input.has_blob() && input.blob().sha256() == sha256) return true;
  }
  for (const auto& expected : job.spec().run().expected()) {
    if (expected.sha256() == sha256) return true;
  }
  for (const v1::RunCase& c : job.spec().run().cases()) {
    for (const auto& input : c.inputs()) {
      if (input.has_blob() && input.blob().sha256() == sha256) return true;
    }
    for (const auto& expected : c.expected()) {
      if (expected.sha256() == sha256) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<v1::Board> Lab::ListBoards(const std::string& board_type) {
  std::lock_guard lock(mutex_);
  std::vector<v1::Board> boards;
  for (const auto& [id, board] : boards_) {
    if (board_type.empty() || board.board.type() == board_type) boards.push_back(board.View());
  }
  return boards;
}

absl::StatusOr<v1::Board> Lab::GetBoard(const std::string& board_id) {
  std::lock_guard lock(mutex_);
  absl::StatusOr<LabBoard*> board = FindBoard(board_id);
  if (!board.ok()) return board.status();
  return (*board)->View();
}

absl::StatusOr<v1::ReserveResponse> Lab::Reserve(const Caller& caller,
                                                 const v1::ReserveRequest& request) {
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  absl::StatusOr<LabBoard*> found = FindBoard(request.board_id());
  if (!found.ok()) return found.status();
  LabBoard& board = **found;
  if (absl::Status ok =
          ReserveBoard(board, caller, request.lease_id(), request.ttl_seconds(), NowMs());
      !ok.ok()) {
    return ok;
  }
  UpdateBoardMetrics();
  v1::ReserveResponse response;
  response.set_lease_id(board.lease_id);
  *response.mutable_board() = board.View();
  return response;
}

absl::StatusOr<v1::Board> Lab::Release(const Caller& caller, const v1::ReleaseRequest& request) {
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  absl::StatusOr<LabBoard*> found = FindBoard(request.board_id());
  if (!found.ok()) return found.status();
  LabBoard& board = **found;
  if (absl::Status ok = ReleaseBoard(board, caller, request.lease_id()); !ok.ok()) return ok;
  UpdateBoardMetrics();
  Schedule();
  return board.View();
}

absl::StatusOr<v1::Board> Lab::SetMaintenance(const v1::SetMaintenanceRequest& request) {
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  absl::StatusOr<LabBoard*> found = FindBoard(request.board_id());
  if (!found.ok()) return found.status();
  LabBoard& board = **found;
  board.maintenance = request.on();
  if (request.on()) {
    board.board.set_reason(request.reason().empty() ? "maintenance" : request.reason());
  } else {
    health_.OnMaintenanceEnded(board);
  }
  PersistBoard(board);
  UpdateBoardMetrics();
  Schedule();
  return board.View();
}

absl::StatusOr<LabBoard*> Lab::FindBoard(const std::string& board_id) {
  auto it = boards_.find(board_id);
  if (it == boards_.end()) {
    return absl::NotFoundError(absl::StrCat("board '", board_id, "' does not exist"));
  }
  return &it->second;
}

void Lab::PersistBoard(LabBoard& board) { pending_.boards[board.board.id()] = board.View(); }

void Lab::FreeBoard(const std::string& board_id) {
  auto it = boards_.find(board_id);
  if (it == boards_.end()) return;
  it->second.board.clear_job_id();
  PersistBoard(it->second);
  UpdateBoardMetrics();
}

void Lab::SendTo(const LabBoard& board, const v1::ServerMessage& message) {
  auto session = sessions_.find(board.session_id);
  if (session != sessions_.end()) Send(session->second.session, message);
}

void Lab::UpdateBoardMetrics() {
  std::map<std::string, std::map<v1::BoardState, int>> counts;
  for (const auto& [id, board] : boards_) counts[board.board.type()][board.State()]++;
  for (const auto& [type, by_state] : counts) {
    for (int s = v1::BOARD_STATE_IDLE; s <= v1::BOARD_STATE_QUARANTINED; ++s) {
      auto state = static_cast<v1::BoardState>(s);
      auto it = by_state.find(state);
      metrics_.BoardsInState(type, BoardStateName(state), it == by_state.end() ? 0 : it->second);
    }
  }
}

bool Lab::AgentMayRead(const std::string& sha256) {
  std::lock_guard lock(mutex_);
  if (health_.IsCheckBlob(sha256)) return true;
  for (const auto& [id, board] : boards_) {
    if (board.board.job_id().empty()) continue;
    JobEntry* entry = FindJob(board.board.job_id());
    if (entry != nullptr && JobNeedsBlob(entry->job, sha256)) return true;
  }
  return false;
}

void Lab::SetHealthCheck(const CompileRecord& artifact, const v1::Digest& input,
                         const v1::Digest& expected) {
  std::lock_guard lock(mutex_);
  health_.SetCheck(artifact, input, expected);
}

void Lab::StartHealthChecks(int64_t now) {
  for (auto& [id, board] : boards_) {
    std::optional<v1::Assignment> check = health_.StartCheckIfDue(board, now);
    if (!check) continue;
    v1::ServerMessage message;
    *message.mutable_assign() = *std::move(check);
    SendTo(board, message);
  }
}

}  // namespace boardlab::server
