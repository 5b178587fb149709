// Crashes on purpose: an agent killed mid-run, the server killed with a full queue, a client
// killed while it watches. The jobs must survive all three.

#include <algorithm>
#include <fstream>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/service/harness.h"

namespace boardlab::testing::service {
namespace {

using std::chrono::seconds;

// Submits without waiting and returns the job id.
std::string SubmitNoWait(ServiceLab& lab, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"submit"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--json");
  ClientResult r = lab.RunClient(argv);
  EXPECT_EQ(r.exit_code, 0) << r;
  absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
  EXPECT_TRUE(job.ok()) << job.status() << "\n" << r;
  return job.ok() ? job->id() : "";
}

// Waits until the job runs (RUNNING) and returns its board.
::testing::AssertionResult WaitUntilRunning(ServiceLab& lab, const std::string& job_id,
                                            std::string& board_id) {
  std::string last = "nothing";
  ::testing::AssertionResult running = WaitFor(
      [&] {
        absl::StatusOr<v1::Job> job = lab.GetJob(job_id);
        if (!job.ok()) return false;
        last = v1::JobState_Name(job->state());
        if (job->state() == v1::JOB_STATE_DONE) return true;
        board_id = job->board_id();
        return job->state() == v1::JOB_STATE_RUNNING;
      },
      seconds(60), absl::StrCat("job ", job_id, " to run"), std::chrono::milliseconds(20));
  if (!running) return running << " (last state " << last << ")";
  if (last != "JOB_STATE_RUNNING") {
    return ::testing::AssertionFailure() << "job " << job_id << " finished before it was seen "
                                         << "running: make the run slower";
  }
  return running;
}

TEST(FailoverTest, AgentKilledMidRunJobFinishesOnAnotherAgentAtAttemptTwo) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());  // --heartbeat-ms 200: a lease dies 600 ms after the last beat
  ASSERT_TRUE(lab.StartAgent("victim", 1));
  const std::string model = lab.WriteFile("conv.tflite", SlowModel());
  const std::string job_id = SubmitNoWait(
      lab, {model, "--input", "random:1", "--iterations", std::to_string(kSlowIterations)});
  ASSERT_FALSE(job_id.empty());
  std::string board;
  ASSERT_TRUE(WaitUntilRunning(lab, job_id, board));
  ASSERT_EQ(board, "victim-sim-0");
  // The rescuer connects only now, so that attempt 1 cannot have gone to it.
  ASSERT_TRUE(lab.StartAgent("rescuer", 1));
  absl::StatusOr<v1::Job> before = lab.GetJob(job_id);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(before->state(), v1::JOB_STATE_RUNNING) << "the run ended before the kill";
  lab.KillAgent("victim");

  absl::StatusOr<v1::Job> job = lab.WaitForJobDone(job_id, seconds(60));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message();
  EXPECT_EQ(job->attempt(), 2);
  EXPECT_EQ(job->board_id(), "rescuer-sim-0");

  absl::StatusOr<std::vector<v1::JobEvent>> events = lab.Events(job_id);
  ASSERT_TRUE(events.ok()) << events.status();
  int finished = 0;
  for (const v1::JobEvent& e : *events) finished += e.kind_case() == v1::JobEvent::kFinished;
  EXPECT_EQ(finished, 1) << "the job was recorded as finished more than once";
  EXPECT_EQ(events->back().finished().result(), v1::JOB_RESULT_PASS);
  std::vector<BoardInterval> runs = BoardIntervals(*events);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].board_id, "victim-sim-0");
  EXPECT_EQ(runs[0].attempt, 1);
  EXPECT_EQ(runs[1].board_id, "rescuer-sim-0");
  EXPECT_EQ(runs[1].attempt, 2);
  // The lost lease was seen, and the victim's board is now offline.
  absl::StatusOr<std::vector<v1::Board>> boards = lab.Boards();
  ASSERT_TRUE(boards.ok()) << boards.status();
  for (const v1::Board& b : *boards) {
    if (b.id() == "victim-sim-0") {
      EXPECT_EQ(b.state(), v1::BOARD_STATE_OFFLINE);
    } else if (b.id() == "rescuer-sim-0") {
      EXPECT_EQ(b.state(), v1::BOARD_STATE_IDLE);
    }
  }
}

TEST(FailoverTest, ServerKilledWithFiftyQueuedJobsRunsThemAllAfterRestart) {
  constexpr int kQueued = 50;
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());  // --heartbeat-ms 200: a lease dies 600 ms after the last beat
  ASSERT_TRUE(lab.StartAgent("a", 2));
  for (const char* board : {"a-sim-0", "a-sim-1"}) {
    ClientResult r = lab.RunClient({"board", "maintenance", board, "on", "--reason", "e2e"});
    ASSERT_EQ(r.exit_code, 0) << r;
  }
  const std::string model = lab.WriteFile("fc.tflite", FastModel());
  std::set<std::string> submitted;
  for (int i = 0; i < kQueued; ++i) {
    std::string id =
        SubmitNoWait(lab, {model, "--input", absl::StrCat("random:", i), "--label", "batch=1"});
    ASSERT_FALSE(id.empty());
    submitted.insert(id);
  }
  ASSERT_EQ(submitted.size(), static_cast<size_t>(kQueued));
  ASSERT_TRUE(lab.WaitForJobs(kQueued, v1::JOB_STATE_QUEUED, seconds(30)));

  lab.KillServer();
  ASSERT_TRUE(lab.RestartServer());
  // The agent reconnects by itself; its boards are still in maintenance.
  ::testing::AssertionResult reconnected = WaitFor(
      [&] {
        auto boards = lab.Boards();
        if (!boards.ok()) return false;
        return std::count_if(boards->begin(), boards->end(), [](const v1::Board& b) {
                 return b.state() != v1::BOARD_STATE_OFFLINE;
               }) == 2;
      },
      seconds(30), "the agent to reconnect");
  ASSERT_TRUE(reconnected);
  absl::StatusOr<std::vector<v1::Board>> boards = lab.Boards();
  ASSERT_TRUE(boards.ok()) << boards.status();
  for (const v1::Board& b : *boards) {
    EXPECT_EQ(b.state(), v1::BOARD_STATE_MAINTENANCE) << b.id() << " lost its maintenance";
  }
  absl::StatusOr<std::vector<v1::Job>> queued = lab.ListJobs({v1::JOB_STATE_QUEUED});
  ASSERT_TRUE(queued.ok()) << queued.status();
  EXPECT_EQ(queued->size(), static_cast<size_t>(kQueued)) << "queued jobs lost in the restart";

  for (const char* board : {"a-sim-0", "a-sim-1"}) {
    ClientResult r = lab.RunClient({"board", "maintenance", board, "off"});
    ASSERT_EQ(r.exit_code, 0) << r;
  }
  ASSERT_TRUE(lab.WaitForJobs(kQueued, v1::JOB_STATE_DONE, seconds(60)));
  absl::StatusOr<std::vector<v1::Job>> jobs = lab.ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->size(), static_cast<size_t>(kQueued));
  for (const v1::Job& job : *jobs) {
    EXPECT_TRUE(submitted.count(job.id())) << "unknown job " << job.id();
    EXPECT_EQ(job.state(), v1::JOB_STATE_DONE) << job.id();
    EXPECT_EQ(job.result(), v1::JOB_RESULT_PASS) << job.id() << ": " << job.message();
    EXPECT_EQ(job.attempt(), 1) << job.id();
  }
}

TEST(FailoverTest, ServerKilledMidRunJobFinishesOnceAndTheWatcherReconnects) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ASSERT_TRUE(lab.StartAgent("a", 1));
  const std::string model = lab.WriteFile("conv.tflite", SlowModel());
  absl::StatusOr<std::unique_ptr<Process>> watcher =
      lab.StartClient({"submit", model, "--input", "random:3", "--iterations",
                       std::to_string(kSlowIterations), "--wait", "--json"},
                      lab.Path("watcher.log"));
  ASSERT_TRUE(watcher.ok()) << watcher.status();
  std::string job_id;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto jobs = lab.ListJobs();
        if (jobs.ok() && !jobs->empty()) job_id = jobs->front().id();
        return !job_id.empty();
      },
      seconds(30), "the watcher's job"));
  std::string board;
  ASSERT_TRUE(WaitUntilRunning(lab, job_id, board));
  lab.KillServer();
  ASSERT_TRUE(lab.RestartServer());

  // The agent reconnects and reports the run it kept going; the job ends once, on attempt 1.
  absl::StatusOr<v1::Job> job = lab.WaitForJobDone(job_id, seconds(60));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message();
  EXPECT_EQ(job->attempt(), 1);
  EXPECT_EQ(job->board_id(), "a-sim-0");
  absl::StatusOr<std::vector<v1::JobEvent>> events = lab.Events(job_id);
  ASSERT_TRUE(events.ok()) << events.status();
  int finished = 0;
  for (const v1::JobEvent& e : *events) finished += e.kind_case() == v1::JobEvent::kFinished;
  EXPECT_EQ(finished, 1);
  // The client followed the job across the restart and exits with its verdict.
  std::optional<int> code = (*watcher)->Wait(seconds(30));
  ASSERT_TRUE(code.has_value()) << "the watcher did not finish";
  EXPECT_EQ(*code, 0) << std::ifstream(lab.Path("watcher.log")).rdbuf();
}

TEST(FailoverTest, WatchingClientKilledDoesNotStopItsJob) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ASSERT_TRUE(lab.StartAgent("a", 1));
  const std::string model = lab.WriteFile("conv.tflite", SlowModel());
  absl::StatusOr<std::unique_ptr<Process>> watcher =
      lab.StartClient({"submit", model, "--input", "random:2", "--expect-reference", "--iterations",
                       std::to_string(kSlowIterations / 4), "--wait"},
                      lab.Path("watcher.log"));
  ASSERT_TRUE(watcher.ok()) << watcher.status();
  std::string job_id;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto jobs = lab.ListJobs();
        if (jobs.ok() && !jobs->empty()) job_id = jobs->front().id();
        return !job_id.empty();
      },
      seconds(30), "the watcher's job"));
  std::string board;
  ASSERT_TRUE(WaitUntilRunning(lab, job_id, board));
  ASSERT_TRUE((*watcher)->Running()) << "the watcher exited early";
  (*watcher)->Kill();

  absl::StatusOr<v1::Job> job = lab.WaitForJobDone(job_id, seconds(60));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message();
  EXPECT_EQ(job->attempt(), 1);
  // And a new watcher sees the whole story.
  ClientResult again = lab.RunClient({"watch", job_id, "--json"});
  EXPECT_EQ(again.exit_code, 0) << again;
}

}  // namespace
}  // namespace boardlab::testing::service
