#include "server/lab_board.h"

#include "absl/strings/ascii.h"

namespace boardlab::server {

v1::BoardState LabBoard::State() const {
  if (session_id.empty()) return v1::BOARD_STATE_OFFLINE;
  if (Running()) return v1::BOARD_STATE_BUSY;
  if (quarantined) return v1::BOARD_STATE_QUARANTINED;
  if (maintenance) return v1::BOARD_STATE_MAINTENANCE;
  if (recovering) return v1::BOARD_STATE_RECOVERING;
  if (!lease_id.empty()) return v1::BOARD_STATE_RESERVED;
  return v1::BOARD_STATE_IDLE;
}

v1::Board LabBoard::View() const {
  v1::Board view = board;
  view.set_state(State());
  if (view.state() == v1::BOARD_STATE_RECOVERING) view.set_reason(recovery_reason);
  return view;
}

std::string BoardStateName(v1::BoardState state) {
  std::string name = v1::BoardState_Name(state);
  return absl::AsciiStrToLower(name.substr(std::string("BOARD_STATE_").size()));
}

}  // namespace boardlab::server
