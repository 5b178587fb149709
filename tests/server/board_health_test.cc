#include "server/board_health.h"

#include <gtest/gtest.h>

namespace boardlab::server {
namespace {

class BoardHealthTest : public ::testing::Test {
 protected:
  BoardHealthTest() : health_(/*quarantine_after=*/2, /*run_timeout_seconds=*/77) {
    board_.board.set_id("b0");
    board_.board.set_type("rt700");
    board_.session_id = "agent#1";
  }

  void SetCheck() {
    CompileRecord artifact;
    artifact.artifact.set_sha256("aa");
    v1::Digest input;
    input.set_sha256("bb");
    v1::Digest expected;
    expected.set_sha256("cc");
    health_.SetCheck(artifact, input, expected);
  }

  static v1::RunResult CheckResult(const v1::Assignment& check, v1::RunOutcome outcome) {
    v1::RunResult result;
    result.set_job_id(check.job_id());
    result.set_board_id(check.board_id());
    result.set_outcome(outcome);
    result.set_message(outcome == v1::RUN_OUTCOME_PASS ? "" : "outputs differ");
    return result;
  }

  BoardHealth health_;
  LabBoard board_;
};

TEST_F(BoardHealthTest, QuarantinesAfterFailuresInARowOnly) {
  EXPECT_EQ(board_.board.last_failure(), "");
  EXPECT_FALSE(health_.CountRun(board_, true, "crash", 0));
  EXPECT_FALSE(health_.CountRun(board_, false, "", 0));  // a good run resets the count
  EXPECT_EQ(board_.board.last_failure(), "crash");       // but the last failure stays on record
  EXPECT_FALSE(health_.CountRun(board_, true, "crash", 3));
  EXPECT_FALSE(board_.quarantined);
  EXPECT_TRUE(health_.CountRun(board_, true, "hang", 5));  // quarantined now: the caller counts it
  EXPECT_TRUE(board_.quarantined);
  EXPECT_EQ(board_.State(), v1::BOARD_STATE_QUARANTINED);
  EXPECT_NE(board_.board.reason().find("2 infrastructure failures in a row; last: hang"),
            std::string::npos)
      << board_.board.reason();
  EXPECT_EQ(board_.next_health_check_ms, 5);
  EXPECT_EQ(board_.board.last_failure(), "hang");
  EXPECT_EQ(board_.board.last_failure_ms(), 5);
}

TEST_F(BoardHealthTest, NoCheckWithoutAGoldenModel) {
  board_.quarantined = true;
  EXPECT_FALSE(health_.StartCheckIfDue(board_, 0));
  EXPECT_FALSE(health_.IsCheckBlob("aa"));
  health_.OnMaintenanceEnded(board_);  // the admin's word is final
  EXPECT_FALSE(board_.quarantined);
}

TEST_F(BoardHealthTest, ChecksAQuarantinedFreeBoardOnceAndReturnsItWhenItPasses) {
  SetCheck();
  EXPECT_TRUE(health_.IsCheckBlob("bb"));
  EXPECT_FALSE(health_.IsCheckBlob("dd"));
  EXPECT_FALSE(health_.StartCheckIfDue(board_, 0));  // healthy: nothing to check
  EXPECT_FALSE(health_.CountRun(board_, true, "crash", 0));
  EXPECT_TRUE(health_.CountRun(board_, true, "crash", 0));
  std::optional<v1::Assignment> check = health_.StartCheckIfDue(board_, 0);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->health_check());
  EXPECT_EQ(check->job_id(), "health-b0");
  EXPECT_EQ(check->artifact().sha256(), "aa");
  EXPECT_EQ(check->timeout_seconds(), 77);
  EXPECT_FALSE(health_.StartCheckIfDue(board_, 0));  // already running
  v1::RunResult passed = CheckResult(*check, v1::RUN_OUTCOME_PASS);
  ASSERT_TRUE(BoardHealth::IsCheckResult(board_, passed));
  health_.OnCheckResult(board_, passed, 10);
  EXPECT_FALSE(board_.quarantined);
  EXPECT_EQ(board_.board.consecutive_failures(), 0);
  EXPECT_TRUE(board_.board.reason().empty());
  EXPECT_FALSE(BoardHealth::IsCheckResult(board_, passed));  // no check running any more
}

TEST_F(BoardHealthTest, AFailedCheckIsRetriedLater) {
  SetCheck();
  board_.quarantined = true;
  std::optional<v1::Assignment> check = health_.StartCheckIfDue(board_, 1000);
  ASSERT_TRUE(check);
  health_.OnCheckResult(board_, CheckResult(*check, v1::RUN_OUTCOME_FAIL), 1000);
  EXPECT_TRUE(board_.quarantined);
  EXPECT_NE(board_.board.reason().find("health check failed: outputs differ"), std::string::npos);
  EXPECT_EQ(board_.board.last_failure(), "health check failed: outputs differ");
  EXPECT_EQ(board_.board.last_failure_ms(), 1000);
  EXPECT_FALSE(health_.StartCheckIfDue(board_, 1000 + BoardHealth::kRetryCheckMs - 1));
  std::optional<v1::Assignment> again =
      health_.StartCheckIfDue(board_, 1000 + BoardHealth::kRetryCheckMs);
  ASSERT_TRUE(again);
  EXPECT_GT(again->attempt(), check->attempt());
}

TEST_F(BoardHealthTest, BusyOfflineOrMaintainedBoardsWaitForTheirCheck) {
  SetCheck();
  board_.quarantined = true;
  board_.maintenance = true;
  EXPECT_FALSE(health_.StartCheckIfDue(board_, 0));
  board_.maintenance = false;
  board_.board.set_job_id("j1");
  EXPECT_FALSE(health_.StartCheckIfDue(board_, 0));
  board_.board.clear_job_id();
  board_.session_id.clear();
  EXPECT_FALSE(health_.StartCheckIfDue(board_, 0));
  board_.session_id = "agent#2";
  board_.next_health_check_ms = 500;
  health_.OnMaintenanceEnded(board_);  // with a check configured: checked now, not released
  EXPECT_TRUE(board_.quarantined);
  EXPECT_TRUE(health_.StartCheckIfDue(board_, 0));
}

}  // namespace
}  // namespace boardlab::server
