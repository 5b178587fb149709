#include "server/board_leases.h"

#include <gtest/gtest.h>

namespace boardlab::server {
namespace {

LabBoard IdleBoard() {
  LabBoard board;
  board.board.set_id("b0");
  board.session_id = "agent#1";
  return board;
}

const Caller kAlice{"alice", Role::kClient};
const Caller kBob{"bob", Role::kClient};
const Caller kAdmin{"ops", Role::kAdmin};

TEST(BoardLeasesTest, ReservesAnIdleBoardForItsTime) {
  LabBoard board = IdleBoard();
  ASSERT_TRUE(ReserveBoard(board, kAlice, "", 60, 1000).ok());
  EXPECT_EQ(board.State(), v1::BOARD_STATE_RESERVED);
  EXPECT_EQ(board.lease_id.size(), 16u);
  EXPECT_EQ(board.board.reserved_by(), "alice");
  EXPECT_EQ(board.board.lease_expires_ms(), 61000);
  LabBoard other = IdleBoard();
  ASSERT_TRUE(ReserveBoard(other, kAlice, "", 0, 0).ok());
  EXPECT_EQ(other.reserved_until_ms, kDefaultLeaseSeconds * 1000);
}

TEST(BoardLeasesTest, OnlyTheHoldingTenantRenews) {
  LabBoard board = IdleBoard();
  ASSERT_TRUE(ReserveBoard(board, kAlice, "", 60, 1000).ok());
  const std::string lease = board.lease_id;
  absl::Status stolen = ReserveBoard(board, kBob, lease, 600, 2000);
  EXPECT_EQ(stolen.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(stolen.message().find("reserved by alice"), std::string::npos) << stolen;
  EXPECT_EQ(board.board.lease_expires_ms(), 61000);
  ASSERT_TRUE(ReserveBoard(board, kAlice, lease, 600, 2000).ok());
  EXPECT_EQ(board.lease_id, lease);
  EXPECT_EQ(board.board.lease_expires_ms(), 602000);
}

TEST(BoardLeasesTest, OnlyAnIdleBoardIsReserved) {
  LabBoard busy = IdleBoard();
  busy.board.set_job_id("j00000001");
  absl::Status refused = ReserveBoard(busy, kAlice, "", 60, 0);
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("is busy"), std::string::npos) << refused;
  LabBoard offline = IdleBoard();
  offline.session_id.clear();
  EXPECT_EQ(ReserveBoard(offline, kAlice, "", 60, 0).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(offline.lease_id.empty());
}

TEST(BoardLeasesTest, ReleaseNeedsTheLeaseAndItsTenantOrAnAdmin) {
  LabBoard board = IdleBoard();
  ASSERT_TRUE(ReserveBoard(board, kAlice, "", 60, 0).ok());
  const std::string lease = board.lease_id;
  EXPECT_EQ(ReleaseBoard(board, kAlice, "wrong").code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(ReleaseBoard(board, kBob, lease).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(board.lease_id, lease);
  ASSERT_TRUE(ReleaseBoard(board, kAlice, lease).ok());
  EXPECT_EQ(board.State(), v1::BOARD_STATE_IDLE);
  EXPECT_TRUE(board.board.reserved_by().empty());
  ASSERT_TRUE(ReserveBoard(board, kBob, "", 60, 0).ok());
  ASSERT_TRUE(ReleaseBoard(board, kAdmin, "").ok());
  EXPECT_TRUE(board.lease_id.empty());
  EXPECT_TRUE(ReleaseBoard(board, kBob, "anything").ok());  // nothing held: nothing to do
}

TEST(BoardLeasesTest, ALeaseEndsAfterItsTime) {
  LabBoard board = IdleBoard();
  ASSERT_TRUE(ReserveBoard(board, kAlice, "", 10, 0).ok());
  EXPECT_FALSE(ExpireReservation(board, 10000));
  EXPECT_TRUE(ExpireReservation(board, 10001));
  EXPECT_EQ(board.State(), v1::BOARD_STATE_IDLE);
  EXPECT_EQ(board.board.lease_expires_ms(), 0);
  EXPECT_FALSE(ExpireReservation(board, 20000));
}

}  // namespace
}  // namespace boardlab::server
