// A Lab as one replica on a throwaway PostgreSQL (docs/server.md, "Replicas"), with another
// replica played by a second store on the same database: what this replica changes about a job
// the other one took is not committed, and it must not be counted in this replica's metrics
// either (the replica that holds the job counts it). Skipped with the reason where PostgreSQL is
// not installed.

#include <algorithm>
#include <condition_variable>
#include <mutex>

#include "server/postgres_store.h"
#include "tests/server/lab_fixture.h"
#include "tests/support/postgres_server.h"

namespace boardlab::server::testing {
namespace {

using boardlab::testing::PostgresServer;

constexpr char kBoardType[] = "imxrt700-sim";

class LabReplicaTest : public LabTest {
 protected:
  void SetUp() override {
    LabTest::SetUp();
    absl::StatusOr<PostgresServer*> shared = PostgresServer::Shared();
    if (absl::IsFailedPrecondition(shared.status())) {
      GTEST_SKIP() << "replica Lab test skipped: " << shared.status().message();
    }
    ASSERT_TRUE(shared.ok()) << shared.status();  // installed, but it did not start
    postgres_ = *shared;
    absl::StatusOr<std::string> uri = postgres_->CreateDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status();
    uri_ = *uri;
    // Leases short enough for a quick test; the other replica (which never beats) stays alive.
    config_.heartbeat_interval_ms = 100;
    config_.missed_heartbeats = missed_heartbeats_;
    config_.replica_lease_ms = 600000;
    auto store = PostgresStore::Open(uri_, postgres_->password());
    ASSERT_TRUE(store.ok()) << store.status();
    StartLabOver(*std::move(store));
  }

  void TearDown() override {
    if (lab_) lab_->Shutdown();
    LabTest::TearDown();
  }

  // Submits a job pinned to `board_id` and waits for its assignment on `session`.
  std::optional<v1::Assignment> RunOn(const std::string& board_id, FakeSession& session) {
    v1::SubmitJobRequest request = Request(model_);
    request.mutable_spec()->mutable_selector()->set_board_type(kBoardType);
    request.mutable_spec()->mutable_selector()->set_board_id(board_id);
    Submit(request);
    // Compiled, queued and claimed without a tick (which would expire the silent agents); a
    // minute for a loaded machine (the sanitizer build).
    for (int i = 0; i < 6 && session.Assignments().empty(); ++i) session.WaitAssignment();
    std::vector<v1::Assignment> assigned = session.Assignments();
    if (assigned.empty()) return std::nullopt;
    return assigned.back();
  }

  // The job's row as the database holds it: its state and its owner.
  std::string StoredStateAndOwner(const std::string& job_id) {
    auto session = postgres_->Connect(uri_);
    EXPECT_TRUE(session.ok()) << session.status();
    if (!session.ok()) return "";
    auto row = (*session)->Query(
        "SELECT state || ' ' || coalesce(convert_from(owner, 'UTF8'), '-') FROM jobs WHERE id = '" +
        job_id + "'");
    EXPECT_TRUE(row.ok()) << row.status();
    return row.ok() ? *row : "";
  }

  PostgresServer* postgres_ = nullptr;
  std::string uri_;
  v1::Digest model_;
  int missed_heartbeats_ = 3;  // an agent's lease: 300 ms
};

// Agents that stay connected however slow the machine is (a lease of 30 s): for tests that tick
// without expiring them.
class LabReplicaLongLeaseTest : public LabReplicaTest {
 protected:
  LabReplicaLongLeaseTest() { missed_heartbeats_ = 300; }
};

// Three agents run a job each on this replica. Then the other replica takes the boards (and
// runs) of two of them, as when their agents reconnect there: one of those reports its result
// here anyway, and all three go silent past their lease. Only the run this replica still owns is
// counted (one lease expiry, one retry); the lost ones change neither the database nor a metric.
TEST_F(LabReplicaTest, ChangesLostToAnotherReplicaAreNotCounted) {
  model_ = PutModel();
  std::shared_ptr<FakeSession> kept, moved, reporting;
  Connect("kept", 1, kept, kBoardType);
  Connect("moved", 1, moved, kBoardType);
  const std::string reporting_session = Connect("reporting", 1, reporting, kBoardType);
  std::optional<v1::Assignment> kept_run = RunOn("kept-b0", *kept);
  std::optional<v1::Assignment> moved_run = RunOn("moved-b0", *moved);
  std::optional<v1::Assignment> reported_run = RunOn("reporting-b0", *reporting);
  ASSERT_TRUE(kept_run && moved_run && reported_run);

  auto other = PostgresStore::Open(uri_, postgres_->password());
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE((*other)->RegisterReplica("127.0.0.1:1").ok());
  absl::StatusOr<TakenBoards> taken = (*other)->TakeBoards({"moved-b0", "reporting-b0"});
  ASSERT_TRUE(taken.ok()) << taken.status();
  ASSERT_EQ(taken->jobs.size(), 2u);
  const std::string moved_before = StoredStateAndOwner(moved_run->job_id());
  const std::string reported_before = StoredStateAndOwner(reported_run->job_id());
  const double finished = Total(*metrics_, "boardlab_jobs_finished_total");
  const double run_stages = Total(*metrics_, "boardlab_job_stage_duration_seconds");

  // The reporting agent's result reaches this replica after its board was taken.
  v1::AgentMessage result;
  result.mutable_result()->set_job_id(reported_run->job_id());
  result.mutable_result()->set_attempt(reported_run->attempt());
  result.mutable_result()->set_board_id(reported_run->board_id());
  result.mutable_result()->set_outcome(v1::RUN_OUTCOME_PASS);
  lab_->AgentMessage(reporting_session, result);
  EXPECT_EQ(Total(*metrics_, "boardlab_jobs_finished_total"), finished);
  EXPECT_EQ(Total(*metrics_, "boardlab_job_stage_duration_seconds"), run_stages);
  EXPECT_EQ(StoredStateAndOwner(reported_run->job_id()), reported_before);

  // Every agent goes silent past its lease (three missed 100 ms heartbeats).
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  lab_->Tick();
  EXPECT_TRUE(kept->closed());
  EXPECT_EQ(Total(*metrics_, "boardlab_lease_expiries_total"), 1);
  EXPECT_EQ(Total(*metrics_, "boardlab_job_retries_total"), 1);
  EXPECT_EQ(Total(*metrics_, "boardlab_jobs_finished_total"), finished);
  EXPECT_EQ(StoredStateAndOwner(moved_run->job_id()), moved_before);
  // The kept run went back to the shared queue (state 2, QUEUED, no owner).
  EXPECT_EQ(StoredStateAndOwner(kept_run->job_id()),
            absl::StrCat(static_cast<int>(v1::JOB_STATE_QUEUED), " -"));
}

// A claim that takes a job and then cannot read its events (here: the events table is renamed
// away, so the read fails in PostgreSQL) must leave the job in the queue, not owned by a replica
// that does not run it: once the table is back, the next claim assigns it.
TEST_F(LabReplicaLongLeaseTest, AClaimThatCannotReadTheJobsEventsLeavesItQueued) {
  model_ = PutModel();
  std::shared_ptr<FakeSession> first, second;
  Connect("first", 1, first, kBoardType);
  ASSERT_TRUE(RunOn("first-b0", *first));  // keeps first's only board busy
  v1::SubmitJobRequest request = Request(model_);
  request.mutable_spec()->mutable_selector()->set_board_type(kBoardType);
  const v1::Job waiting = Submit(request);
  ASSERT_FALSE(waiting.id().empty());
  for (int i = 0; i < 600 && Get(waiting.id()).state() != v1::JOB_STATE_QUEUED; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // compiled and queued
  }
  ASSERT_EQ(StoredStateAndOwner(waiting.id()),
            absl::StrCat(static_cast<int>(v1::JOB_STATE_QUEUED), " -"));

  ASSERT_TRUE(postgres_->Execute(uri_, "ALTER TABLE events RENAME TO events_away").ok());
  // A board comes free for it on this replica: its Hello claims the job, and so does the poll
  // of the tick (due after a heartbeat interval), both failing to read its events.
  Connect("second", 1, second, kBoardType);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  lab_->Tick();
  EXPECT_TRUE(second->Assignments().empty());
  EXPECT_EQ(StoredStateAndOwner(waiting.id()),
            absl::StrCat(static_cast<int>(v1::JOB_STATE_QUEUED), " -"));

  ASSERT_TRUE(postgres_->Execute(uri_, "ALTER TABLE events_away RENAME TO events").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  lab_->Tick();
  std::optional<v1::Assignment> assigned = second->WaitAssignment();
  ASSERT_TRUE(assigned);
  EXPECT_EQ(assigned->job_id(), waiting.id());
  EXPECT_EQ(StoredStateAndOwner(waiting.id()).substr(0, 2),
            absl::StrCat(static_cast<int>(v1::JOB_STATE_ASSIGNED), " "));
}

// A run requeued while the database refuses the commit (a trigger on jobs that raises, put in
// place and dropped by the test) is not forgotten: the next commit writes it to the shared queue,
// counted then, once. A submit that failed meanwhile leaves nothing behind.
TEST_F(LabReplicaTest, ARequeueWhoseCommitFailedIsCommittedLater) {
  model_ = PutModel();
  std::shared_ptr<FakeSession> silent;
  Connect("silent", 1, silent, kBoardType);
  std::optional<v1::Assignment> run = RunOn("silent-b0", *silent);
  ASSERT_TRUE(run);
  const std::string assigned = StoredStateAndOwner(run->job_id());
  ASSERT_EQ(assigned.substr(0, 2), absl::StrCat(static_cast<int>(v1::JOB_STATE_ASSIGNED), " "));

  ASSERT_TRUE(postgres_
                  ->Execute(uri_,
                            "CREATE FUNCTION refuse_job_writes() RETURNS trigger AS $$ BEGIN "
                            "RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql; "
                            "CREATE TRIGGER refuse_job_writes BEFORE INSERT OR UPDATE ON jobs "
                            "FOR EACH ROW EXECUTE FUNCTION refuse_job_writes()")
                  .ok());
  // The agent goes silent past its lease (three missed 100 ms heartbeats): its run is requeued,
  // and the commit of that fails.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  lab_->Tick();
  EXPECT_TRUE(silent->closed());
  EXPECT_EQ(StoredStateAndOwner(run->job_id()), assigned);
  EXPECT_EQ(Total(*metrics_, "boardlab_job_retries_total"), 0);
  // A submit meanwhile fails (its client is told so): the kept writes must not carry its job.
  v1::SubmitJobRequest request = Request(model_);
  request.mutable_spec()->mutable_selector()->set_board_type(kBoardType);
  EXPECT_FALSE(lab_->Submit(Caller{"default", Role::kAdmin}, request).ok());

  ASSERT_TRUE(postgres_->Execute(uri_, "DROP TRIGGER refuse_job_writes ON jobs").ok());
  lab_->Tick();
  EXPECT_EQ(StoredStateAndOwner(run->job_id()),
            absl::StrCat(static_cast<int>(v1::JOB_STATE_QUEUED), " -"));
  EXPECT_EQ(Total(*metrics_, "boardlab_job_retries_total"), 1);
  EXPECT_EQ(Total(*metrics_, "boardlab_lease_expiries_total"), 1);
  auto session = postgres_->Connect(uri_);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ(*(*session)->Query("SELECT count(*) FROM jobs"), "1");
}

// The replica that queues a job it has an idle board for tells no other replica (their claims
// would find it gone): it claims first, and announces only what it could not claim (here a job
// pinned to a board another replica serves).
TEST_F(LabReplicaLongLeaseTest, OnlyQueuedJobsTheQueuingReplicaLeavesAreAnnounced) {
  model_ = PutModel();
  std::shared_ptr<FakeSession> here;
  Connect("here", 2, here, kBoardType);  // here-b1 stays idle
  auto other = PostgresStore::Open(uri_, postgres_->password());
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE((*other)->RegisterReplica("127.0.0.1:1").ok());
  StoreBatch elsewhere;
  v1::Board& board = elsewhere.boards["elsewhere-b0"];
  board.set_id("elsewhere-b0");
  board.set_type(kBoardType);
  board.set_state(v1::BOARD_STATE_IDLE);
  ASSERT_TRUE((*other)->CommitOwned(elsewhere, {}).ok());
  std::mutex mutex;
  std::condition_variable heard;
  std::vector<std::string> queued_types;  // kQueueChannel payloads the other replica hears
  auto listener = (*other)->Listen([&](const ClusterNotification& notification) {
    if (notification.channel != kQueueChannel) return;
    std::lock_guard lock(mutex);
    queued_types.push_back(notification.payload);
    heard.notify_all();
  });
  ASSERT_TRUE(listener.ok()) << listener.status();
  auto heard_of = [&](const std::string& type) {
    std::unique_lock lock(mutex);
    return heard.wait_for(lock, std::chrono::seconds(30), [&] {
      return std::count(queued_types.begin(), queued_types.end(), type) > 0;
    });
  };

  ASSERT_TRUE(RunOn("here-b0", *here));
  // Notifications come in commit order: the queued job's would be here before this one.
  ASSERT_TRUE((*other)->NotifyQueued("after-the-first-job").ok());
  ASSERT_TRUE(heard_of("after-the-first-job"));
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(std::count(queued_types.begin(), queued_types.end(), kBoardType), 0);
  }

  v1::SubmitJobRequest pinned = Request(model_);
  pinned.mutable_spec()->mutable_selector()->set_board_type(kBoardType);
  pinned.mutable_spec()->mutable_selector()->set_board_id("elsewhere-b0");
  const v1::Job job = Submit(pinned);
  EXPECT_TRUE(heard_of(kBoardType));
  EXPECT_EQ(StoredStateAndOwner(job.id()),
            absl::StrCat(static_cast<int>(v1::JOB_STATE_QUEUED), " -"));
}

}  // namespace
}  // namespace boardlab::server::testing
