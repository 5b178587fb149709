#include "server/board_leases.h"

#include "absl/strings/str_cat.h"
#include "proto/support/digest.h"

namespace boardlab::server {
namespace {

void ClearLease(LabBoard& board) {
  board.lease_id.clear();
  board.board.clear_reserved_by();
  board.board.set_lease_expires_ms(0);
}

}  // namespace

absl::Status ReserveBoard(LabBoard& board, const Caller& caller, const std::string& lease_id,
                          int ttl_seconds, int64_t now_ms) {
  const int ttl = ttl_seconds > 0 ? ttl_seconds : kDefaultLeaseSeconds;
  const bool renewing = !lease_id.empty() && lease_id == board.lease_id &&
                        (caller.is_admin() || board.board.reserved_by() == caller.tenant);
  if (!renewing) {
    if (!board.lease_id.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "board '", board.board.id(), "' is reserved by ", board.board.reserved_by()));
    }
    if (board.State() != v1::BOARD_STATE_IDLE) {
      return absl::FailedPreconditionError(absl::StrCat("board '", board.board.id(), "' is ",
                                                        BoardStateName(board.State()),
                                                        "; only an idle board can be reserved"));
    }
    board.lease_id =
        api::Sha256Hex(absl::StrCat(board.board.id(), now_ms, caller.tenant)).substr(0, 16);
    board.board.set_reserved_by(caller.tenant);
  }
  board.reserved_until_ms = now_ms + int64_t{ttl} * 1000;
  board.board.set_lease_expires_ms(board.reserved_until_ms);
  return absl::OkStatus();
}

absl::Status ReleaseBoard(LabBoard& board, const Caller& caller, const std::string& lease_id) {
  if (board.lease_id.empty()) return absl::OkStatus();
  if (!caller.is_admin() &&
      (board.lease_id != lease_id || board.board.reserved_by() != caller.tenant)) {
    return absl::PermissionDeniedError("that lease id does not hold this board");
  }
  ClearLease(board);
  return absl::OkStatus();
}

bool ExpireReservation(LabBoard& board, int64_t now_ms) {
  if (board.lease_id.empty() || now_ms <= board.reserved_until_ms) return false;
  ClearLease(board);
  return true;
}

}  // namespace boardlab::server
