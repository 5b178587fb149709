// Job life-cycle paths through the real processes: cancel while running, an agent that crashes
// and comes back under the same id, and idempotent submits.

#include <algorithm>

#include "gtest/gtest.h"
#include "tests/service/harness.h"

namespace boardlab::testing::service {
namespace {

using std::chrono::seconds;

std::string SubmitSlow(ServiceLab& lab, const std::string& model, int iterations) {
  ClientResult r = lab.RunClient({"submit", model, "--input", "random:5", "--iterations",
                                  std::to_string(iterations), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r;
  absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
  EXPECT_TRUE(job.ok()) << job.status();
  return job.ok() ? job->id() : "";
}

::testing::AssertionResult WaitForState(ServiceLab& lab, const std::string& job_id,
                                        v1::JobState state) {
  return WaitFor(
      [&] {
        absl::StatusOr<v1::Job> job = lab.GetJob(job_id);
        return job.ok() && job->state() == state;
      },
      seconds(60), v1::JobState_Name(state), std::chrono::milliseconds(20));
}

int FinishedEvents(const std::vector<v1::JobEvent>& events) {
  return static_cast<int>(std::count_if(events.begin(), events.end(), [](const v1::JobEvent& e) {
    return e.kind_case() == v1::JobEvent::kFinished;
  }));
}

TEST(LifecycleTest, CancelWhileRunningFreesTheBoardForTheNextJob) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ASSERT_TRUE(lab.StartAgent("a", 1));
  const std::string model = lab.WriteFile("conv.tflite", SlowModel());
  const std::string job_id = SubmitSlow(lab, model, kSlowIterations * 5);
  ASSERT_FALSE(job_id.empty());
  ASSERT_TRUE(WaitForState(lab, job_id, v1::JOB_STATE_RUNNING));
  ClientResult cancel = lab.RunClient({"cancel", job_id});
  EXPECT_EQ(cancel.exit_code, 0) << cancel;
  absl::StatusOr<v1::Job> job = lab.WaitForJobDone(job_id, seconds(30));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_CANCELLED) << job->message();
  ClientResult watch = lab.RunClient({"watch", job_id});
  EXPECT_EQ(watch.exit_code, 6) << watch;
  // The board is free again and runs the next job.
  ClientResult next = lab.RunClient(
      {"submit", lab.WriteFile("fc.tflite", FastModel()), "--expect-reference", "--wait"});
  EXPECT_EQ(next.exit_code, 0) << next;
}

TEST(LifecycleTest, AgentRestartedUnderTheSameIdMidRunEndsTheJobOnce) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ASSERT_TRUE(lab.StartAgent("a", 1));
  const std::string model = lab.WriteFile("conv.tflite", SlowModel());
  const std::string job_id = SubmitSlow(lab, model, kSlowIterations);
  ASSERT_FALSE(job_id.empty());
  ASSERT_TRUE(WaitForState(lab, job_id, v1::JOB_STATE_RUNNING));
  lab.KillAgent("a");
  ASSERT_TRUE(lab.StartAgent("a", 1));  // same id, same state dir (its journal)
  absl::StatusOr<v1::Job> job = lab.WaitForJobDone(job_id, seconds(60));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message();
  EXPECT_EQ(job->attempt(), 2) << "the run the crash cut off counts as an attempt";
  absl::StatusOr<std::vector<v1::JobEvent>> events = lab.Events(job_id);
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(FinishedEvents(*events), 1);
}

TEST(LifecycleTest, SameRequestIdGivesTheSameJob) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ASSERT_TRUE(lab.StartAgent("a", 1));
  // Hold the job in the queue: the server remembers request ids of unfinished jobs.
  ClientResult hold = lab.RunClient({"board", "maintenance", "a-sim-0", "on"});
  ASSERT_EQ(hold.exit_code, 0) << hold;
  const std::string model = lab.WriteFile("fc.tflite", FastModel());
  const std::vector<std::string> args = {"submit", model, "--request-id", "ci-42", "--json"};
  ClientResult first = lab.RunClient(args);
  ASSERT_EQ(first.exit_code, 0) << first;
  ClientResult second = lab.RunClient(args);
  ASSERT_EQ(second.exit_code, 0) << second;
  absl::StatusOr<v1::Job> a = ParseJobJson(first.out);
  absl::StatusOr<v1::Job> b = ParseJobJson(second.out);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->id(), b->id());
  EXPECT_NE(second.err.find("already submitted"), std::string::npos) << second;
  absl::StatusOr<std::vector<v1::Job>> jobs = lab.ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->size(), 1u);
  ClientResult release = lab.RunClient({"board", "maintenance", "a-sim-0", "off"});
  ASSERT_EQ(release.exit_code, 0) << release;
  absl::StatusOr<v1::Job> done = lab.WaitForJobDone(a->id(), seconds(30));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->result(), v1::JOB_RESULT_PASS) << done->message();
}

}  // namespace
}  // namespace boardlab::testing::service
