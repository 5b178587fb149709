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
  std::vector<ClusterBoard> elsewhere;
  if (cluster_ != nullptr) {
    auto listed = cluster_->ClusterBoards();
    if (listed.ok()) elsewhere = *std::move(listed);
  }
  std::lock_guard lock(mutex_);
  std::map<std::string, v1::Board> boards;
  for (const auto& [id, board] : boards_) {
    if (board_type.empty() || board.board.type() == board_type) boards[id] = board.View();
  }
  // Replicas: the boards of the others' agents as they last wrote them; one whose replica is
  // gone, or that this replica holds no longer, is offline.
  for (ClusterBoard& board : elsewhere) {
    if (!board_type.empty() && board.board.type() != board_type) continue;
    if (board.owner == cluster_->ReplicaId() && boards.count(board.board.id())) continue;
    if (board.owner.empty() || !board.owner_alive) board.board.set_state(v1::BOARD_STATE_OFFLINE);
    boards[board.board.id()] = std::move(board.board);
  }
  std::vector<v1::Board> list;
  for (auto& [id, board] : boards) list.push_back(std::move(board));
  return list;
}

absl::StatusOr<v1::Board> Lab::GetBoard(const std::string& board_id) {
  {
    std::lock_guard lock(mutex_);
    absl::StatusOr<LabBoard*> board = FindBoard(board_id);
    if (board.ok() || cluster_ == nullptr) {
      if (!board.ok()) return board.status();
      return (*board)->View();
    }
  }
  for (const v1::Board& board : ListBoards("")) {
    if (board.id() == board_id) return board;
  }
  return absl::NotFoundError(absl::StrCat("board '", board_id, "' does not exist"));
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
  const std::string id = board.board.id();
  Schedule();
  return ViewAfterSchedule(id);
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
  const std::string id = board.board.id();
  Schedule();
  return ViewAfterSchedule(id);
}

// Replicas may drop a board that another replica took while Schedule() committed.
absl::StatusOr<v1::Board> Lab::ViewAfterSchedule(const std::string& board_id) {
  auto it = boards_.find(board_id);
  if (it == boards_.end()) {
    return absl::UnavailableError(
        absl::StrCat("board '", board_id, "' moved to another replica meanwhile: ask again"));
  }
  return it->second.View();
}

absl::StatusOr<LabBoard*> Lab::FindBoard(const std::string& board_id) {
  auto it = boards_.find(board_id);
  if (it != boards_.end()) return &it->second;
  if (cluster_ != nullptr) {
    for (const ClusterBoard& board : cluster_boards_) {
      if (board.board.id() != board_id) continue;
      // Its live state (session, reservation, health checks) is in that replica's memory.
      return absl::FailedPreconditionError(absl::StrCat(
          "board '", board_id, "' is served by another replica (",
          board.owner.empty() ? "none: its agent is offline" : board.owner,
          "): reserve, release and maintenance go through the replica its agent is connected to"));
    }
  }
  return absl::NotFoundError(absl::StrCat("board '", board_id, "' does not exist"));
}

void Lab::PersistBoard(LabBoard& board) { pending_.boards[board.board.id()] = board.View(); }

void Lab::FreeBoard(const std::string& board_id) {
  auto it = boards_.find(board_id);
  if (it == boards_.end()) return;
  it->second.board.clear_job_id();
  if (cluster_ != nullptr) maybe_queued_.insert(it->second.board.type());
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
    for (int s = v1::BOARD_STATE_IDLE; s <= v1::BOARD_STATE_RECOVERING; ++s) {
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
