// The harness's own pieces that the service tests' verdicts rest on: the event-interval
// reconstruction, the metrics reader and the process handling.

#include "tests/service/harness.h"

#include "gtest/gtest.h"

namespace boardlab::testing::service {
namespace {

v1::JobEvent State(v1::JobState state, int64_t time_ms, const std::string& board, int attempt) {
  v1::JobEvent event;
  event.set_job_id("j1");
  event.set_state(state);
  event.set_time_ms(time_ms);
  event.set_board_id(board);
  event.set_attempt(attempt);
  return event;
}

TEST(HarnessTest, BoardIntervalsFollowRetriesToTheFinishedEvent) {
  std::vector<v1::JobEvent> events = {
      State(v1::JOB_STATE_QUEUED, 1, "", 0),      State(v1::JOB_STATE_ASSIGNED, 2, "b0", 1),
      State(v1::JOB_STATE_RUNNING, 3, "b0", 1),   State(v1::JOB_STATE_QUEUED, 10, "", 1),
      State(v1::JOB_STATE_ASSIGNED, 12, "b1", 2), State(v1::JOB_STATE_COLLECTING, 15, "b1", 2),
      State(v1::JOB_STATE_DONE, 20, "b1", 2),
  };
  v1::JobEvent finished;
  finished.set_time_ms(20);
  finished.mutable_finished()->set_board_id("b1");
  events.push_back(finished);
  std::vector<BoardInterval> runs = BoardIntervals(events);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].board_id, "b0");
  EXPECT_EQ(runs[0].attempt, 1);
  EXPECT_EQ(runs[0].start_ms, 2);
  EXPECT_EQ(runs[0].end_ms, 10);
  EXPECT_EQ(runs[1].board_id, "b1");
  EXPECT_EQ(runs[1].start_ms, 12);
  EXPECT_EQ(runs[1].end_ms, 20);
}

TEST(HarnessTest, MetricSumMatchesNameAndLabels) {
  const std::string text =
      "# HELP boardlab_jobs_finished_total Jobs\n"
      "# TYPE boardlab_jobs_finished_total counter\n"
      "boardlab_jobs_finished_total{board_type=\"a\",result=\"pass\"} 3\n"
      "boardlab_jobs_finished_total{board_type=\"b\",result=\"pass\"} 2\n"
      "boardlab_jobs_finished_total{board_type=\"a\",result=\"fail\"} 1\n"
      "boardlab_jobs_finished_total_extra 100\n"
      "boardlab_agents_connected 1\n";
  EXPECT_EQ(MetricSum(text, "boardlab_jobs_finished_total", {{"result", "pass"}}), 5);
  EXPECT_EQ(MetricSum(text, "boardlab_jobs_finished_total"), 6);
  EXPECT_EQ(MetricSum(text, "boardlab_agents_connected"), 1);
  EXPECT_EQ(MetricSum(text, "boardlab_jobs_finished_total", {{"result", "cancelled"}}),
            std::nullopt);
}

TEST(HarnessTest, ProcessWaitKillAndExitCodes) {
  const std::string log = ::testing::TempDir() + "/harness_test_process.log";
  auto quick = Process::Start({"/bin/sh", "-c", "exit 7"}, log, log);
  ASSERT_TRUE(quick.ok()) << quick.status();
  EXPECT_EQ((*quick)->Wait(std::chrono::seconds(10)), 7);
  auto slow = Process::Start({"/bin/sleep", "30"}, log, log);
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ((*slow)->Wait(std::chrono::milliseconds(50)), std::nullopt);
  EXPECT_TRUE((*slow)->Running());
  (*slow)->Kill();
  EXPECT_FALSE((*slow)->Running());
  EXPECT_EQ((*slow)->Wait(std::chrono::milliseconds(0)), 128 + 9);
  EXPECT_FALSE(Process::Start({"/no/such/binary"}, log, log).ok());
}

TEST(HarnessTest, WaitForTimesOut) {
  EXPECT_FALSE(WaitFor([] { return false; }, std::chrono::milliseconds(30), "never"));
  EXPECT_TRUE(WaitFor([] { return true; }, std::chrono::milliseconds(30), "at once"));
}

}  // namespace
}  // namespace boardlab::testing::service
