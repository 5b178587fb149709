// Two boardlab-server replicas on one throwaway PostgreSQL and one shared data directory
// (docs/server.md, "Replicas"): jobs submitted to either run on boards of either, exactly once;
// a watch on one replica sees every event of a job the other runs; one compile for identical
// submits spread over both; agents and clients given both addresses carry on when one replica
// is killed. Skipped with the reason where PostgreSQL is not installed.

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/service/harness.h"
#include "tests/support/postgres_server.h"

namespace boardlab::testing::service {
namespace {

using std::chrono::seconds;

constexpr int kReplicaLeaseMs = 2000;

class ReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PostgresServer*> shared = PostgresServer::Shared();
    if (absl::IsFailedPrecondition(shared.status())) {
      GTEST_SKIP() << "replica service tests skipped: " << shared.status().message();
    }
    ASSERT_TRUE(shared.ok()) << shared.status();  // installed, but it did not start
    absl::StatusOr<std::string> uri = (*shared)->CreateDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status();
    options_.config_yaml =
        absl::StrCat("store: \"", *uri, "\"\nstore_password_file: ", (*shared)->password_file(),
                     "\nreplica_lease_ms: ", kReplicaLeaseMs, "\n");
    options_.data_dir = a_.Path("shared-data");
    ASSERT_TRUE(a_.StartServer(options_));
    ASSERT_TRUE(b_.StartServer(options_));
  }

  std::string BothAddresses() const { return a_.address() + "," + b_.address(); }

  // Submits `model` through `lab`'s replica without waiting; the job's id.
  std::string Submit(ServiceLab& lab, const std::string& model,
                     const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"submit", model, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    ClientResult submitted = lab.RunClient(args);
    EXPECT_EQ(submitted.exit_code, 0) << submitted;
    absl::StatusOr<v1::Job> job = ParseJobJson(submitted.out);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? job->id() : "";
  }

  // Each job finished once (one finished event, PASS; with `first_attempt_only` also one
  // ASSIGNED event and attempt 1) and no board ran two jobs at a time; the boards they ran on.
  std::set<std::string> CheckRanOnceEach(ServiceLab& lab, const std::vector<std::string>& ids,
                                         bool first_attempt_only = true) {
    std::vector<BoardInterval> intervals;
    std::set<std::string> boards;
    for (const std::string& id : ids) {
      absl::StatusOr<v1::Job> job = lab.WaitForJobDone(id, seconds(120));
      EXPECT_TRUE(job.ok()) << job.status();
      if (!job.ok()) continue;
      EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << id << ": " << job->message();
      if (first_attempt_only) {
        EXPECT_EQ(job->attempt(), 1) << id;
      }
      absl::StatusOr<std::vector<v1::JobEvent>> events = lab.Events(id);
      EXPECT_TRUE(events.ok()) << events.status();
      if (!events.ok()) continue;
      int assigned = 0;
      int finished = 0;
      for (const v1::JobEvent& event : *events) {
        assigned += event.has_state() && event.state() == v1::JOB_STATE_ASSIGNED;
        finished += event.kind_case() == v1::JobEvent::kFinished;
      }
      if (first_attempt_only) {
        EXPECT_EQ(assigned, 1) << id;
      }
      EXPECT_EQ(finished, 1) << id;
      for (const BoardInterval& interval : BoardIntervals(*events)) intervals.push_back(interval);
      boards.insert(job->board_id());
    }
    for (size_t i = 0; i < intervals.size(); ++i) {
      for (size_t j = i + 1; j < intervals.size(); ++j) {
        const BoardInterval& x = intervals[i];
        const BoardInterval& y = intervals[j];
        if (x.board_id != y.board_id) continue;
        EXPECT_TRUE(x.end_ms <= y.start_ms || y.end_ms <= x.start_ms)
            << x.board_id << " ran " << x.job_id << " and " << y.job_id << " at once";
      }
    }
    return boards;
  }

  ServiceLab a_;
  ServiceLab b_;
  ServerOptions options_;
};

TEST_F(ReplicasTest, JobsSubmittedToEitherReplicaRunOnceOnBoardsOfEither) {
  const std::string model = a_.WriteFile("fc.tflite", FastModel());
  // Only B has an agent: a job submitted to A runs on B's board.
  ASSERT_TRUE(b_.StartAgent("y", 1));
  const std::string crossed = Submit(a_, model);
  EXPECT_EQ(CheckRanOnceEach(a_, {crossed}), std::set<std::string>{"y-sim-0"});
  // With agents on both, jobs submitted to either, some pinned to the other replica's board.
  ASSERT_TRUE(a_.StartAgent("x", 2));
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    ids.push_back(Submit(i % 2 ? a_ : b_, model));
    ids.push_back(Submit(b_, model, {"--board", "x-sim-1"}));
    ids.push_back(Submit(a_, model, {"--board", "y-sim-0"}));
  }
  std::set<std::string> boards = CheckRanOnceEach(b_, ids);
  EXPECT_TRUE(boards.count("x-sim-1") && boards.count("y-sim-0"));
  // Both replicas list every board, and agree on every job.
  absl::StatusOr<std::vector<v1::Job>> from_a = a_.ListJobs();
  absl::StatusOr<std::vector<v1::Job>> from_b = b_.ListJobs();
  ASSERT_TRUE(from_a.ok() && from_b.ok());
  EXPECT_EQ(from_a->size(), ids.size() + 1);
  EXPECT_EQ(from_b->size(), ids.size() + 1);
  for (ServiceLab* lab : {&a_, &b_}) {
    absl::StatusOr<std::vector<v1::Board>> listed = lab->Boards();
    ASSERT_TRUE(listed.ok()) << listed.status();
    EXPECT_EQ(listed->size(), 3u);
  }
}

TEST_F(ReplicasTest, AWatchOnOneReplicaSeesEveryEventOfAJobTheOtherRuns) {
  ASSERT_TRUE(b_.StartAgent("y", 1));
  const std::string model = a_.WriteFile("conv.tflite", SlowModel());
  const std::string id = Submit(b_, model, {"--iterations", "200", "--input", "random:0"});
  absl::StatusOr<std::vector<v1::JobEvent>> watched = absl::UnknownError("not watched");
  std::thread watch([&] { watched = a_.Events(id, seconds(120)); });
  absl::StatusOr<v1::Job> done = b_.WaitForJobDone(id, seconds(120));
  watch.join();
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->result(), v1::JOB_RESULT_PASS) << done->message();
  ASSERT_TRUE(watched.ok()) << watched.status();
  absl::StatusOr<std::vector<v1::JobEvent>> recorded = b_.Events(id);
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  ASSERT_EQ(watched->size(), recorded->size());
  for (size_t i = 0; i < watched->size(); ++i) {
    EXPECT_EQ((*watched)[i].seq(), static_cast<int64_t>(i + 1));
    EXPECT_EQ((*watched)[i].SerializeAsString(), (*recorded)[i].SerializeAsString()) << i;
  }
  bool saw_running = false;
  for (const v1::JobEvent& event : *watched) {
    saw_running |= event.has_state() && event.state() == v1::JOB_STATE_RUNNING;
  }
  EXPECT_TRUE(saw_running);
}

TEST_F(ReplicasTest, IdenticalSubmitsSpreadOverBothReplicasCompileOnce) {
  ASSERT_TRUE(a_.StartAgent("x", 1));
  ASSERT_TRUE(b_.StartAgent("y", 1));
  const std::string model = a_.WriteFile("fc.tflite", FastModel());
  std::vector<std::string> ids(8);
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&, i] { ids[i] = Submit(i % 2 ? a_ : b_, model); });
  }
  for (std::thread& client : clients) client.join();
  CheckRanOnceEach(a_, ids);
  double compiles = 0;
  double requests = 0;
  for (ServiceLab* lab : {&a_, &b_}) {
    absl::StatusOr<std::string> metrics = lab->ScrapeMetrics();
    ASSERT_TRUE(metrics.ok()) << metrics.status();
    compiles += MetricSum(*metrics, "boardlab_compile_cache_requests_total", {{"outcome", "miss"}})
                    .value_or(0);
    requests += MetricSum(*metrics, "boardlab_compile_cache_requests_total").value_or(0);
  }
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(requests, 8);
}

// The agent and the client are given both addresses. The replica the agent is connected to is
// killed while the agent runs a job: the agent reconnects to the other replica, which takes the
// board and the run over; the run's result is recorded once, and the client's --wait (watching
// through whichever replica answers) sees the verdict.
TEST_F(ReplicasTest, AgentsAndClientsCarryOnWhenAReplicaIsKilled) {
  a_.SetServerAddressForProcesses(BothAddresses());
  b_.SetServerAddressForProcesses(BothAddresses());
  ASSERT_TRUE(a_.StartAgent("x", 1));
  // Which replica the agent's stream went to (round robin over both).
  ServiceLab* agents_replica = nullptr;
  ASSERT_TRUE(WaitFor(
      [&] {
        for (ServiceLab* lab : {&a_, &b_}) {
          if (lab->ServerLog().find("\"agent connected\"") != std::string::npos) {
            agents_replica = lab;
          }
        }
        return agents_replica != nullptr;
      },
      seconds(30), "the agent's replica to log its connection"));
  ServiceLab* survivor = agents_replica == &a_ ? &b_ : &a_;
  const std::string model = a_.WriteFile("conv.tflite", SlowModel());
  auto client = a_.StartClient(
      {"submit", model, "--iterations", "400", "--input", "random:0", "--wait", "--json"},
      a_.Path("client.log"));
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE(survivor->WaitForJobs(1, v1::JOB_STATE_RUNNING, seconds(60)));
  agents_replica->KillServer();
  std::optional<int> exit_code = (*client)->Wait(seconds(120));
  ASSERT_TRUE(exit_code.has_value()) << "the client did not finish";
  EXPECT_EQ(*exit_code, 0);
  absl::StatusOr<std::vector<v1::Job>> jobs = survivor->ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ(CheckRanOnceEach(*survivor, {jobs->front().id()}), std::set<std::string>{"x-sim-0"});
  // The run went on across the kill: the agent brought it to the survivor, which recorded it.
  const std::string log = survivor->ServerLog();
  EXPECT_NE(log.find("\"in_flight\":\"1\",\"level\":\"info\",\"msg\":\"agent connected\""),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("\"job\":\"" + jobs->front().id() +
                     "\",\"level\":\"info\",\"message\":\"ran; no expected outputs to "
                     "compare\",\"msg\":\"job finished\""),
            std::string::npos)
      << log;
  // And the next job runs through the survivor alone.
  ClientResult next = a_.RunClient({"submit", model, "--iterations", "1", "--wait"});
  EXPECT_EQ(next.exit_code, 0) << next;
}

// The acceptance run: two replicas, agents on both (each agent lists its own replica
// first), 500 jobs from 10 concurrent clients that spread their calls over both replicas, and one
// replica killed with SIGKILL halfway. Every job a client was told about finishes exactly once
// (PASS, one verdict), no job appears twice, and no board ever ran two jobs at once.
TEST_F(ReplicasTest, FiveHundredJobsFromTenClientsSurviveAReplicaKilledHalfway) {
  constexpr int kClients = 10;
  constexpr int kJobsEach = 50;
  constexpr int kTotal = kClients * kJobsEach;
  a_.SetServerAddressForProcesses(a_.address() + "," + b_.address());
  ASSERT_TRUE(a_.StartAgent("x", 2));
  b_.SetServerAddressForProcesses(b_.address() + "," + a_.address());
  ASSERT_TRUE(b_.StartAgent("y", 2));
  const std::string model = a_.WriteFile("fc.tflite", FastModel());

  std::mutex mutex;
  std::vector<std::string> confirmed;
  std::vector<std::string> failures;
  std::atomic<int> submitted{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&] {
      for (int i = 0; i < kJobsEach; ++i) {
        ClientResult result = b_.RunClient({"submit", model, "--json"}, seconds(120));
        absl::StatusOr<v1::Job> job = ParseJobJson(result.out);
        std::lock_guard lock(mutex);
        if (result.exit_code == 0 && job.ok()) {
          confirmed.push_back(job->id());
        } else {
          failures.push_back(absl::StrCat(result.exit_code, ": ", result.err));
        }
        ++submitted;
      }
    });
  }
  ASSERT_TRUE(WaitFor([&] { return submitted >= kTotal / 2; }, seconds(300), "half the submits"));
  a_.KillServer();
  for (std::thread& client : clients) client.join();
  // A submit may fail only while its replica dies under it, before it was confirmed.
  EXPECT_LE(failures.size(), 2u) << (failures.empty() ? "" : failures.front());
  std::set<std::string> unique(confirmed.begin(), confirmed.end());
  EXPECT_EQ(unique.size(), confirmed.size()) << "a job id was confirmed twice";
  ASSERT_TRUE(b_.WaitForJobs(unique.size(), v1::JOB_STATE_DONE, seconds(300)));
  absl::StatusOr<std::vector<v1::Job>> all = b_.ListJobs();
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), unique.size()) << "jobs nobody was told about";
  std::set<std::string> boards = CheckRanOnceEach(b_, confirmed, /*first_attempt_only=*/false);
  EXPECT_EQ(boards.size(), 4u);
}

}  // namespace
}  // namespace boardlab::testing::service
