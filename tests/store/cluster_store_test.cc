// The store's seam for several replicas (server/cluster_store.h): each test opens the same
// database twice, as two replicas do (two connections, two replica ids), and checks what one
// replica's calls do to the other's: ownership, claims under concurrency, recovery of a dead
// replica, compile claims and notifications. Every store that offers the seam runs this suite
// (tests/store/store_backends.h); SQLite offers none, which is checked too.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"
#include "server/clock.h"
#include "server/cluster_store.h"
#include "server/store.h"
#include "tests/store/store_backends.h"
#include "tests/support/postgres_server.h"

namespace boardlab::server {
namespace {

using std::chrono::milliseconds;

TEST(ClusterStoreSeamTest, SqliteIsOneServersOwnStore) {
  std::unique_ptr<StoreBackend> backend = MakeStoreBackend("sqlite");
  ASSERT_TRUE(backend->PrepareEmptyDatabase().ok());
  auto store = backend->Open();
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->Cluster(), nullptr);
}

class ClusterStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = MakeStoreBackend(GetParam());
    if (std::string why_not = backend_->SkipReason(); !why_not.empty()) GTEST_SKIP() << why_not;
    ASSERT_TRUE(backend_->PrepareEmptyDatabase().ok());
    for (StorePtr* store : {&store_a_, &store_b_}) {
      auto opened = backend_->Open();
      ASSERT_TRUE(opened.ok()) << opened.status();
      *store = *std::move(opened);
    }
    a_ = store_a_->Cluster();
    b_ = store_b_->Cluster();
    ASSERT_NE(a_, nullptr);
    ASSERT_NE(b_, nullptr);
    ASSERT_NE(a_->ReplicaId(), b_->ReplicaId());
    ASSERT_TRUE(a_->RegisterReplica("a:1").ok());
    ASSERT_TRUE(b_->RegisterReplica("b:1").ok());
  }

  static v1::Job Job(int64_t number, v1::JobState state, const std::string& tenant = "ci",
                     int priority = 0) {
    v1::Job job;
    job.set_id("j" + std::to_string(number));
    job.set_tenant(tenant);
    job.set_state(state);
    job.mutable_spec()->mutable_selector()->set_board_type("sim");
    job.mutable_spec()->set_priority(priority);
    return job;
  }

  static v1::Board Board(const std::string& id) {
    v1::Board board;
    board.set_id(id);
    board.set_type("sim");
    board.set_state(v1::BOARD_STATE_IDLE);
    return board;
  }

  // Commits `job` as `replica`'s (owner "" for a queued or finished one), with one event.
  absl::StatusOr<CommitLosses> TryWrite(ClusterStore* replica, int64_t number, const v1::Job& job,
                                        const std::string& owner,
                                        const std::string& board_id = "") {
    StoreBatch batch;
    batch.jobs[number] = job;
    batch.jobs[number].set_board_id(board_id);
    v1::JobEvent event;
    event.set_job_id(job.id());
    event.set_seq(++seq_);
    event.set_state(job.state());
    batch.events.push_back(event);
    std::map<int64_t, JobRuntime> runtimes;
    runtimes[number].owner = owner;
    return replica->CommitOwned(batch, runtimes);
  }

  // TryWrite, which must succeed.
  CommitLosses Write(ClusterStore* replica, int64_t number, const v1::Job& job,
                     const std::string& owner, const std::string& board_id = "") {
    auto losses = TryWrite(replica, number, job, owner, board_id);
    EXPECT_TRUE(losses.ok()) << losses.status();
    return losses.ok() ? *losses : CommitLosses();
  }

  static v1::Job Submitted(int64_t number, const std::string& tenant,
                           const std::string& request_id) {
    v1::Job job = Job(number, v1::JOB_STATE_COMPILING, tenant);
    job.set_request_id(request_id);
    return job;
  }

  // A claim for board `board_id` alone that takes whatever matches.
  std::optional<OwnedJob> Claim(ClusterStore* replica, const std::string& board_id = "b0") {
    auto claimed = replica->ClaimQueuedJob(
        {Board(board_id)},
        [](const v1::Job&, const JobRuntime&, const v1::Board&) { return true; });
    EXPECT_TRUE(claimed.ok()) << claimed.status();
    if (!claimed.ok() || !claimed->has_value()) return std::nullopt;
    EXPECT_EQ((*claimed)->board_id, board_id);
    return (*claimed)->owned;
  }

  // A claim for `boards` whose tags must include the job's (as the Lab's test does), with the
  // board it went to: "job@board", or "" when none.
  std::string ClaimFor(ClusterStore* replica, const std::vector<v1::Board>& boards,
                       bool* more = nullptr) {
    auto claimed = replica->ClaimQueuedJob(
        boards, [](const v1::Job& job, const JobRuntime&, const v1::Board& board) {
          for (const v1::Tag& wanted : job.spec().selector().tags()) {
            bool found = false;
            for (const v1::Tag& tag : board.tags()) {
              found |= tag.key() == wanted.key() && tag.value() == wanted.value();
            }
            if (!found) return false;
          }
          return true;
        });
    EXPECT_TRUE(claimed.ok()) << claimed.status();
    if (!claimed.ok() || !claimed->has_value()) return "";
    if (more != nullptr) *more = (*claimed)->more;
    return (*claimed)->owned.job.id() + "@" + (*claimed)->board_id;
  }

  static v1::Board Tagged(const std::string& id, const std::string& key, const std::string& value) {
    v1::Board board = Board(id);
    v1::Tag* tag = board.add_tags();
    tag->set_key(key);
    tag->set_value(value);
    return board;
  }

  static v1::Job Needing(int64_t number, const std::string& key, const std::string& value) {
    v1::Job job = Job(number, v1::JOB_STATE_QUEUED);
    v1::Tag* tag = job.mutable_spec()->mutable_selector()->add_tags();
    tag->set_key(key);
    tag->set_value(value);
    return job;
  }

  static v1::Job PinnedTo(int64_t number, const std::string& board_id) {
    v1::Job job = Job(number, v1::JOB_STATE_QUEUED);
    job.mutable_spec()->mutable_selector()->set_board_id(board_id);
    return job;
  }

  std::unique_ptr<StoreBackend> backend_;
  StorePtr store_a_;
  StorePtr store_b_;
  ClusterStore* a_ = nullptr;
  ClusterStore* b_ = nullptr;
  std::atomic<int64_t> seq_{0};  // event numbers, unique within a test
};

INSTANTIATE_TEST_SUITE_P(Stores, ClusterStoreTest, ::testing::Values("postgres"),
                         [](const auto& info) { return info.param; });

TEST_P(ClusterStoreTest, JobNumbersFromTwoReplicasNeverRepeat) {
  std::set<int64_t> numbers;
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (ClusterStore* replica : {a_, b_}) {
    threads.emplace_back([&, replica] {
      for (int i = 0; i < 50; ++i) {
        auto number = replica->NextJobNumber();
        ASSERT_TRUE(number.ok()) << number.status();
        std::lock_guard lock(mutex);
        EXPECT_TRUE(numbers.insert(*number).second) << *number << " handed out twice";
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(numbers.size(), 100u);
}

// A submit's reads in one call: what NextJobNumber, UnfinishedJobsOf, GetCompile and
// FindJobByRequestId would each answer.
TEST_P(ClusterStoreTest, ASubmitsLookupAnswersWhatItsFourReadsWould) {
  Write(a_, 1, Submitted(1, "ci", "r1"), a_->ReplicaId());
  Write(b_, 2, Job(2, v1::JOB_STATE_QUEUED, "ci"), "");
  Write(b_, 3, Job(3, v1::JOB_STATE_DONE, "ci"), "");
  Write(b_, 4, Submitted(4, "dev", "r2"), b_->ReplicaId());
  CompileRecord compiled;
  compiled.artifact.set_sha256("aa");
  compiled.input_bytes = {4, 8};
  ASSERT_TRUE(store_a_->PutCompile("k1", compiled).ok());

  auto first = b_->LookUpForSubmit("ci", "r1", "k1");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->unfinished, 2);  // j1 and j2, whichever replica wrote them
  ASSERT_TRUE(first->compile.has_value());
  EXPECT_EQ(first->compile->artifact.sha256(), "aa");
  EXPECT_EQ(first->compile->input_bytes, (std::vector<int64_t>{4, 8}));
  ASSERT_TRUE(first->by_request_id.has_value());
  EXPECT_EQ(first->by_request_id->id(), "j1");

  // Another tenant's request id, no request id, an unknown key: nothing found.
  auto second = a_->LookUpForSubmit("ci", "r2", "k2");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->compile.has_value());
  EXPECT_FALSE(second->by_request_id.has_value());
  EXPECT_GT(second->number, first->number);  // numbers from the one sequence
  auto third = a_->LookUpForSubmit("dev", "", "k1");
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_FALSE(third->by_request_id.has_value());
  EXPECT_EQ(third->unfinished, 1);
  EXPECT_EQ(*a_->NextJobNumber(), third->number + 1);
}

TEST_P(ClusterStoreTest, ACommitRecordsItsBlobGrants) {
  StoreBatch batch;
  batch.blob_grants.insert({"t1", "aa"});
  batch.blob_grants.insert({"t1", "bb"});
  batch.blob_grants.insert({"t2", "aa"});
  ASSERT_TRUE(a_->CommitOwned(batch, {})->empty());
  ASSERT_TRUE(b_->CommitOwned(batch, {})->empty());  // again: nothing new, no error
  EXPECT_TRUE(*store_a_->HasBlobGrant("t1", "aa"));
  EXPECT_TRUE(*store_a_->HasBlobGrant("t1", "bb"));
  EXPECT_TRUE(*store_a_->HasBlobGrant("t2", "aa"));
  EXPECT_FALSE(*store_a_->HasBlobGrant("t2", "bb"));
}

TEST_P(ClusterStoreTest, AReplicaWritesOnlyWhatItOwns) {
  // A submits a job: new, so it is A's.
  EXPECT_TRUE(Write(a_, 1, Job(1, v1::JOB_STATE_COMPILING), a_->ReplicaId()).empty());
  // B may neither change it nor add to its events.
  CommitLosses lost = Write(b_, 1, Job(1, v1::JOB_STATE_DONE), "");
  EXPECT_EQ(lost.jobs, std::vector<int64_t>{1});
  EXPECT_EQ((*store_a_->GetJob("j1"))->state(), v1::JOB_STATE_COMPILING);
  EXPECT_EQ(store_a_->Events("j1", 0)->size(), 1u);
  // A gives it to the queue; then nobody owns it and neither may write it.
  EXPECT_TRUE(Write(a_, 1, Job(1, v1::JOB_STATE_QUEUED), "").empty());
  EXPECT_EQ(Write(a_, 1, Job(1, v1::JOB_STATE_DONE), "").jobs, std::vector<int64_t>{1});
  // Boards likewise: the first writer owns a new board.
  StoreBatch boards;
  boards.boards["b0"] = Board("b0");
  EXPECT_TRUE(a_->CommitOwned(boards, {})->empty());
  EXPECT_EQ(b_->CommitOwned(boards, {})->boards, std::vector<std::string>{"b0"});
}

// A request id is its client's idempotency key: one job per tenant and request id, whichever
// replica commits it.
TEST_P(ClusterStoreTest, ARequestIdAnotherReplicasJobHoldsIsRefused) {
  EXPECT_TRUE(Write(a_, 1, Submitted(1, "ci", "r1"), a_->ReplicaId()).empty());
  auto refused = TryWrite(b_, 2, Submitted(2, "ci", "r1"), b_->ReplicaId());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kAlreadyExists) << refused.status();
  // Nothing of the refused commit stays.
  EXPECT_FALSE(store_b_->GetJob("j2")->has_value());
  EXPECT_TRUE(store_b_->Events("j2", 0)->empty());
  EXPECT_EQ((*store_b_->FindJobByRequestId("ci", "r1"))->id(), "j1");
  // Another tenant's request id, and jobs without one, are other jobs.
  EXPECT_TRUE(Write(b_, 3, Submitted(3, "dev", "r1"), b_->ReplicaId()).empty());
  EXPECT_TRUE(Write(b_, 4, Submitted(4, "ci", ""), b_->ReplicaId()).empty());
  EXPECT_TRUE(Write(a_, 5, Submitted(5, "ci", ""), a_->ReplicaId()).empty());
  // The owner writes its job again (a state change) without a conflict with itself.
  EXPECT_TRUE(Write(a_, 1, Job(1, v1::JOB_STATE_QUEUED), "").empty());
}

// Two replicas receive the same first submit at the same moment: the first one's commit is in
// flight (its job inserted, not committed) when the second one's arrives. The second waits for
// the first on the unique index and then fails: one job.
TEST_P(ClusterStoreTest, TheSecondOfTwoConcurrentCommitsOfOneRequestIdWaitsAndFails) {
  auto server = testing::PostgresServer::Shared();
  ASSERT_TRUE(server.ok()) << server.status();
  auto first = (*server)->Connect(backend_->PostgresUri());
  auto watcher = (*server)->Connect(backend_->PostgresUri());
  ASSERT_TRUE(first.ok() && watcher.ok());
  const v1::Job winner = Submitted(1, "ci", "r1");
  ASSERT_TRUE((*first)->Execute("BEGIN").ok());
  ASSERT_TRUE((*first)
                  ->Execute("INSERT INTO jobs (number, id, tenant, request_id, state, board_type, "
                            "record) VALUES (1, 'j1', 'ci', 'r1', 1, 'sim', '\\x" +
                            absl::BytesToHexString(winner.SerializeAsString()) + "')")
                  .ok());
  absl::StatusOr<CommitLosses> second = absl::UnknownError("not committed");
  std::thread commit([&] { second = TryWrite(b_, 2, Submitted(2, "ci", "r1"), b_->ReplicaId()); });
  // The second commit waits for the first transaction's lock (at most 30 s).
  bool waiting = false;
  for (int i = 0; i < 300 && !waiting; ++i) {
    auto waits = (*watcher)->Query(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND "
        "wait_event_type = 'Lock'");
    ASSERT_TRUE(waits.ok()) << waits.status();
    waiting = *waits != "0";
    if (!waiting) std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_TRUE(waiting) << "the second commit did not wait for the first";
  ASSERT_TRUE((*first)->Execute("COMMIT").ok());
  commit.join();
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists) << second.status();
  EXPECT_FALSE(store_a_->GetJob("j2")->has_value());
  EXPECT_EQ((*store_a_->FindJobByRequestId("ci", "r1"))->id(), "j1");
}

// Many submits of the same request ids from two replicas at once: one job each.
TEST_P(ClusterStoreTest, RacingCommitsOfTheSameRequestIdsMakeOneJobEach) {
  constexpr int kRequests = 30;
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      ClusterStore* replica = r == 0 ? a_ : b_;
      for (int i = 0; i < kRequests; ++i) {
        auto number = replica->NextJobNumber();
        ASSERT_TRUE(number.ok()) << number.status();
        auto done = TryWrite(replica, *number, Submitted(*number, "ci", "r" + std::to_string(i)),
                             replica->ReplicaId());
        if (absl::IsAlreadyExists(done.status())) {
          ++refused;
        } else {
          EXPECT_TRUE(done.ok()) << done.status();
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(refused, kRequests);
  auto jobs = store_a_->JobsAfter(0, 1000);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->size(), size_t{kRequests});
}

TEST_P(ClusterStoreTest, ConcurrentClaimsTakeEachJobOnce) {
  constexpr int kJobs = 40;
  for (int n = 1; n <= kJobs; ++n) Write(a_, n, Job(n, v1::JOB_STATE_QUEUED), "");
  std::set<int64_t> taken[2];
  std::vector<std::thread> threads;
  ClusterStore* replicas[2] = {a_, b_};
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      while (auto job = Claim(replicas[r], "board-" + std::to_string(r))) {
        EXPECT_EQ(job->runtime.owner, replicas[r]->ReplicaId());
        taken[r].insert(job->number);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(taken[0].size() + taken[1].size(), size_t{kJobs});
  for (int64_t number : taken[0]) EXPECT_FALSE(taken[1].count(number)) << number << " twice";
}

// While one replica's claim holds a row locked (its transaction is open), another replica's
// claim skips that row instead of waiting for it.
TEST_P(ClusterStoreTest, AClaimSkipsARowAnotherClaimHolds) {
  Write(a_, 1, Job(1, v1::JOB_STATE_QUEUED), "");
  Write(a_, 2, Job(2, v1::JOB_STATE_QUEUED), "");
  std::mutex mutex;
  std::condition_variable changed;
  bool holding = false;
  bool b_done = false;
  int looks = 0;
  std::thread a_claim([&] {
    auto claimed = a_->ClaimQueuedJob(
        {Board("b0")}, [&](const v1::Job& job, const JobRuntime&, const v1::Board&) {
          // The first look (the one-statement claim) refuses j1, so that the claim looks at the
          // queue row by row, each row locked: there it holds j1's lock.
          if (++looks == 1) return false;
          std::unique_lock lock(mutex);
          holding = true;
          changed.notify_all();
          // Hold job 1's row lock until B's claim is over (at most 30 s if B wrongly waits).
          changed.wait_for(lock, std::chrono::seconds(30), [&] { return b_done; });
          return job.id() == "j1";
        });
    ASSERT_TRUE(claimed.ok()) << claimed.status();
    ASSERT_TRUE(claimed->has_value());
    EXPECT_EQ((*claimed)->owned.job.id(), "j1");
  });
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(30), [&] { return holding; }));
  }
  const int64_t start = NowMs();
  std::optional<OwnedJob> b_job = Claim(b_, "b1");
  const int64_t took = NowMs() - start;
  {
    std::lock_guard lock(mutex);
    b_done = true;
  }
  changed.notify_all();
  a_claim.join();
  ASSERT_TRUE(b_job.has_value());
  EXPECT_EQ(b_job->job.id(), "j2");
  EXPECT_LT(took, 10000) << "B waited for A's lock";
  EXPECT_FALSE(Claim(b_, "b1").has_value());  // j1 is A's now
}

TEST_P(ClusterStoreTest, ClaimsGoByPriorityThenFairShareThenAge) {
  // Tenant "busy" runs two jobs already, tenant "idle" none.
  Write(a_, 1, Job(1, v1::JOB_STATE_RUNNING, "busy"), a_->ReplicaId(), "x0");
  Write(a_, 2, Job(2, v1::JOB_STATE_RUNNING, "busy"), a_->ReplicaId(), "x1");
  Write(a_, 3, Job(3, v1::JOB_STATE_QUEUED, "busy"), "");
  Write(a_, 4, Job(4, v1::JOB_STATE_QUEUED, "idle"), "");
  Write(a_, 5, Job(5, v1::JOB_STATE_QUEUED, "busy", /*priority=*/5), "");
  Write(a_, 6, Job(6, v1::JOB_STATE_QUEUED, "idle"), "");
  std::vector<std::string> order;
  while (auto job = Claim(b_)) order.push_back(job->job.id());
  // Priority first; then "idle" (fewer running) oldest first, whose claimed jobs are still
  // QUEUED and so do not count as running; then "busy".
  EXPECT_EQ(order, (std::vector<std::string>{"j5", "j4", "j6", "j3"}));
}

// Many tenants with more queued jobs each than a claim looks at per tenant (the first 8, in
// postgres_cluster.cc), mixed priorities, and jobs pinned elsewhere: claims still go in the
// whole queue's order of priority, fair share (running jobs) and age.
TEST_P(ClusterStoreTest, ClaimsFollowTheWholeOrderOverManyTenantsAndPriorities) {
  constexpr int kTenants = 4;
  constexpr int kQueuedEach = 12;
  int64_t number = 0;
  // Tenant t runs t jobs.
  for (int t = 0; t < kTenants; ++t) {
    for (int r = 0; r < t; ++r) {
      ++number;
      Write(a_, number, Job(number, v1::JOB_STATE_RUNNING, "t" + std::to_string(t)),
            a_->ReplicaId(), "x" + std::to_string(number));
    }
  }
  struct Expected {
    int priority;
    int running;
    int64_t number;
    bool operator<(const Expected& other) const {
      return std::tie(other.priority, running, number) <
             std::tie(priority, other.running, other.number);
    }
  };
  std::vector<Expected> expected;
  // Interleaved tenants; within one, priorities out of age order, the highest last.
  for (int i = 0; i < kQueuedEach; ++i) {
    for (int t = 0; t < kTenants; ++t) {
      ++number;
      const int priority = i == kQueuedEach - 1 ? 5 : (i * 7 + t) % 3;
      v1::Job job = Job(number, v1::JOB_STATE_QUEUED, "t" + std::to_string(t), priority);
      if ((i + t) % 5 == 0) {
        job.mutable_spec()->mutable_selector()->set_board_id("elsewhere");
      } else {
        expected.push_back({priority, t, number});
      }
      Write(a_, number, job, "");
    }
  }
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> want;
  for (const Expected& job : expected) want.push_back("j" + std::to_string(job.number));
  std::vector<std::string> order;
  while (auto job = Claim(b_)) order.push_back(job->job.id());
  EXPECT_EQ(order, want);
}

// Another claim holds a tenant's first queued jobs (all that a claim looks at per tenant, and
// more), as a claim that looks row by row does: a claim takes the first job after them rather
// than finding none.
TEST_P(ClusterStoreTest, AClaimFindsAJobBehindATenantsFirstJobsOthersHold) {
  constexpr int kHeld = 10;
  for (int n = 1; n <= kHeld + 2; ++n) Write(a_, n, Job(n, v1::JOB_STATE_QUEUED), "");
  auto server = testing::PostgresServer::Shared();
  ASSERT_TRUE(server.ok()) << server.status();
  auto holder = (*server)->Connect(backend_->PostgresUri());
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_TRUE((*holder)->Execute("BEGIN").ok());
  ASSERT_TRUE((*holder)
                  ->Execute("SELECT number FROM jobs WHERE number <= " + std::to_string(kHeld) +
                            " FOR UPDATE")
                  .ok());
  std::optional<OwnedJob> claimed = Claim(b_);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->job.id(), "j" + std::to_string(kHeld + 1));
  ASSERT_TRUE((*holder)->Execute("ROLLBACK").ok());
  claimed = Claim(b_);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->job.id(), "j1");
}

TEST_P(ClusterStoreTest, AClaimTakesOnlyWhatTheBoardMayRun) {
  v1::Job pinned = Job(1, v1::JOB_STATE_QUEUED);
  pinned.mutable_spec()->mutable_selector()->set_board_id("b9");
  Write(a_, 1, pinned, "");
  v1::Job other_type = Job(2, v1::JOB_STATE_QUEUED);
  other_type.mutable_spec()->mutable_selector()->set_board_type("qemu");
  Write(a_, 2, other_type, "");
  Write(a_, 3, Job(3, v1::JOB_STATE_QUEUED), "");
  // The caller's test (tags, failed boards) refuses job 3.
  auto refused = b_->ClaimQueuedJob(
      {Board("b0")},
      [](const v1::Job& job, const JobRuntime&, const v1::Board&) { return job.id() != "j3"; });
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_FALSE(refused->has_value());
  std::optional<OwnedJob> on_b9 = Claim(b_, "b9");
  ASSERT_TRUE(on_b9.has_value());
  EXPECT_EQ(on_b9->job.id(), "j1");
}

// A claim takes the first job in one statement; one no board may run goes back to the queue by
// another. When that fails, the next claim or poll (TakeStrandedJobs) gives it back; meanwhile
// no other replica takes it.
TEST_P(ClusterStoreTest, ARefusedJobThatCouldNotBeGivenBackIsGivenBackLater) {
  Write(a_, 1, Job(1, v1::JOB_STATE_QUEUED), "");
  ASSERT_TRUE(backend_
                  ->Sql("CREATE FUNCTION refuse_give_back() RETURNS trigger AS $$ BEGIN RAISE "
                        "EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql; CREATE TRIGGER "
                        "refuse_give_back BEFORE UPDATE ON jobs FOR EACH ROW WHEN (OLD.owner IS "
                        "NOT NULL AND NEW.owner IS NULL) EXECUTE FUNCTION refuse_give_back()")
                  .ok());
  const auto none = [](const v1::Job&, const JobRuntime&, const v1::Board&) { return false; };
  EXPECT_FALSE(b_->ClaimQueuedJob({Board("b0")}, none).ok());
  EXPECT_FALSE(Claim(a_).has_value());
  EXPECT_FALSE(b_->TakeStrandedJobs(NowMs(), 10).ok());  // still refused

  ASSERT_TRUE(backend_->Sql("DROP TRIGGER refuse_give_back ON jobs").ok());
  auto stranded = b_->TakeStrandedJobs(NowMs(), 10);
  ASSERT_TRUE(stranded.ok()) << stranded.status();
  EXPECT_TRUE(stranded->empty());
  std::optional<OwnedJob> claimed = Claim(a_);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->job.id(), "j1");
  ASSERT_EQ(claimed->events.size(), 1u);
}

// One claim serves all of a replica's idle boards: a job pinned to one of them, or needing tags
// only one of them has, goes to that board at once (not at the next poll), in queue order.
TEST_P(ClusterStoreTest, OneClaimFindsTheBoardAPinnedOrTaggedJobNeeds) {
  Write(a_, 1, PinnedTo(1, "elsewhere"), "");  // not idle here: left to its board
  Write(a_, 2, Needing(2, "camera", "ov5640"), "");
  Write(a_, 3, PinnedTo(3, "b0"), "");
  Write(a_, 4, Needing(4, "radio", "none-here"), "");  // no idle board has it: stepped over
  Write(a_, 5, Job(5, v1::JOB_STATE_QUEUED), "");
  const std::vector<v1::Board> idle = {Board("b0"), Tagged("b1", "camera", "ov5640"), Board("b2")};
  EXPECT_EQ(ClaimFor(b_, idle), "j2@b1");
  EXPECT_EQ(ClaimFor(b_, {Board("b0"), Board("b2")}), "j3@b0");
  EXPECT_EQ(ClaimFor(b_, {Board("b2")}), "j5@b2");
  EXPECT_EQ(ClaimFor(b_, idle), "");  // j1 waits for its board, j4 for its tag
  EXPECT_EQ(ClaimFor(b_, {Board("elsewhere")}), "j1@elsewhere");
}

// A claim says whether other jobs the boards might run wait behind the one it took: the caller
// claims again only then, rather than once per idle board.
TEST_P(ClusterStoreTest, AClaimSaysWhetherMoreJobsWait) {
  Write(a_, 1, Job(1, v1::JOB_STATE_QUEUED), "");
  Write(a_, 2, PinnedTo(2, "elsewhere"), "");
  Write(a_, 3, Job(3, v1::JOB_STATE_QUEUED), "");
  const std::vector<v1::Board> idle = {Board("b0"), Board("b1")};
  bool more = false;
  EXPECT_EQ(ClaimFor(b_, idle, &more), "j1@b0");
  EXPECT_TRUE(more);
  EXPECT_EQ(ClaimFor(b_, {Board("b1")}, &more), "j3@b1");
  EXPECT_FALSE(more) << "only a job pinned to another board is left";
}

TEST_P(ClusterStoreTest, AnAgentsBoardsAndRunsMoveToTheReplicaItConnectsTo) {
  StoreBatch board;
  board.boards["b0"] = Board("b0");
  ASSERT_TRUE(a_->CommitOwned(board, {})->empty());
  Write(a_, 1, Job(1, v1::JOB_STATE_RUNNING), a_->ReplicaId(), "b0");
  Write(a_, 2, Job(2, v1::JOB_STATE_DONE), "", "b0");  // an earlier run: stays
  auto taken = b_->TakeBoards({"b0", "new-board"});
  ASSERT_TRUE(taken.ok()) << taken.status();
  ASSERT_EQ(taken->boards.size(), 1u);
  ASSERT_EQ(taken->jobs.size(), 1u);
  EXPECT_EQ(taken->jobs[0].job.id(), "j1");
  EXPECT_EQ(taken->jobs[0].runtime.owner, b_->ReplicaId());
  // A's later writes of that run and that board are refused.
  EXPECT_EQ(Write(a_, 1, Job(1, v1::JOB_STATE_DONE), "").jobs, std::vector<int64_t>{1});
  EXPECT_EQ(a_->CommitOwned(board, {})->boards, std::vector<std::string>{"b0"});
  EXPECT_TRUE(Write(b_, 1, Job(1, v1::JOB_STATE_DONE), "", "b0").empty());
}

// Every take reads the taken jobs' events in its own transaction: when that read fails (here the
// events table is renamed away), nothing is taken, and once it can be read the take brings them.
TEST_P(ClusterStoreTest, ATakeThatCannotReadTheEventsTakesNothing) {
  StoreBatch board;
  board.boards["b0"] = Board("b0");
  ASSERT_TRUE(a_->CommitOwned(board, {})->empty());
  Write(a_, 1, Job(1, v1::JOB_STATE_COMPILING), a_->ReplicaId());
  Write(a_, 1, Job(1, v1::JOB_STATE_QUEUED), "");
  Write(a_, 2, Job(2, v1::JOB_STATE_COMPILING), "");  // stranded: its compiler is gone
  Write(a_, 3, Job(3, v1::JOB_STATE_RUNNING), a_->ReplicaId(), "b0");

  ASSERT_TRUE(backend_->Sql("ALTER TABLE events RENAME TO events_away").ok());
  const auto any = [](const v1::Job&, const JobRuntime&, const v1::Board&) { return true; };
  EXPECT_FALSE(b_->ClaimQueuedJob({Board("b1")}, any).ok());
  EXPECT_FALSE(b_->TakeQueuedJob("j1").ok());
  EXPECT_FALSE(b_->TakeStrandedJobs(NowMs(), 10).ok());
  EXPECT_FALSE(b_->TakeBoards({"b0"}).ok());
  ASSERT_TRUE(backend_->Sql("ALTER TABLE events_away RENAME TO events").ok());

  // A still owns its run and its board; the others are still anyone's, with their events.
  EXPECT_TRUE(Write(a_, 3, Job(3, v1::JOB_STATE_RUNNING), a_->ReplicaId(), "b0").empty());
  EXPECT_TRUE(a_->CommitOwned(board, {})->empty());
  std::optional<OwnedJob> queued = Claim(b_, "b1");
  ASSERT_TRUE(queued);
  EXPECT_EQ(queued->job.id(), "j1");
  ASSERT_EQ(queued->events.size(), 2u);
  EXPECT_EQ(queued->events[1].state(), v1::JOB_STATE_QUEUED);
  auto stranded = b_->TakeStrandedJobs(NowMs(), 10);
  ASSERT_TRUE(stranded.ok()) << stranded.status();
  ASSERT_EQ(stranded->size(), 1u);
  EXPECT_EQ((*stranded)[0].job.id(), "j2");
  ASSERT_EQ((*stranded)[0].events.size(), 1u);
  EXPECT_EQ((*stranded)[0].events[0].job_id(), "j2");
  auto taken = b_->TakeBoards({"b0"});
  ASSERT_TRUE(taken.ok()) << taken.status();
  ASSERT_EQ(taken->jobs.size(), 1u);
  EXPECT_EQ(taken->jobs[0].events.size(), 2u);
}

TEST_P(ClusterStoreTest, ADeadReplicasWorkIsReleasedOnce) {
  StoreBatch board;
  board.boards["b0"] = Board("b0");
  ASSERT_TRUE(a_->CommitOwned(board, {})->empty());
  Write(a_, 1, Job(1, v1::JOB_STATE_RUNNING), a_->ReplicaId(), "b0");
  Write(a_, 2, Job(2, v1::JOB_STATE_COMPILING), a_->ReplicaId());
  ASSERT_TRUE(*a_->ClaimCompile("key"));
  std::this_thread::sleep_for(milliseconds(20));
  ASSERT_TRUE(b_->HeartbeatReplica().ok());
  // A's heartbeat is 20 ms old: dead for a lease of 10 ms, alive for a minute's.
  EXPECT_TRUE(b_->RecoverDeadReplicas(60000, 5000)->empty());
  auto dead = b_->RecoverDeadReplicas(10, 5000);
  ASSERT_TRUE(dead.ok()) << dead.status();
  EXPECT_EQ(*dead, std::vector<std::string>{a_->ReplicaId()});
  EXPECT_TRUE(b_->RecoverDeadReplicas(10, 5000)->empty());  // released once
  EXPECT_TRUE(absl::IsNotFound(a_->HeartbeatReplica()));
  auto boards = b_->ClusterBoards();
  ASSERT_EQ(boards->size(), 1u);
  EXPECT_EQ((*boards)[0].owner, "");
  EXPECT_TRUE(*b_->ClaimCompile("key"));  // A's claim went with it
  // The compiling job is taken at once; the run waits for its agent until its lease deadline.
  const int64_t now = NowMs();
  auto stranded = b_->TakeStrandedJobs(now, 10);
  ASSERT_EQ(stranded->size(), 1u);
  EXPECT_EQ((*stranded)[0].job.id(), "j2");
  auto orphans = b_->TakeStrandedJobs(now + 6000, 10);
  ASSERT_EQ(orphans->size(), 1u);
  EXPECT_EQ((*orphans)[0].job.id(), "j1");
  EXPECT_EQ((*orphans)[0].runtime.owner, b_->ReplicaId());
}

TEST_P(ClusterStoreTest, QueuedJobsTimeOutAndAreCancelledByWhoeverTakesThem) {
  v1::Job job = Job(1, v1::JOB_STATE_QUEUED);
  StoreBatch batch;
  batch.jobs[1] = job;
  std::map<int64_t, JobRuntime> runtimes;
  runtimes[1].queue_deadline_ms = NowMs() + 1000;
  ASSERT_TRUE(a_->CommitOwned(batch, runtimes)->empty());
  EXPECT_TRUE(b_->TakeStrandedJobs(NowMs(), 10)->empty());
  auto timed_out = b_->TakeStrandedJobs(NowMs() + 2000, 10);
  ASSERT_EQ(timed_out->size(), 1u);
  // Taken: nobody else may take it to cancel it.
  EXPECT_FALSE(a_->TakeQueuedJob("j1")->has_value());
  Write(a_, 2, Job(2, v1::JOB_STATE_QUEUED), "");
  EXPECT_TRUE(a_->TakeQueuedJob("j2")->has_value());
  // A run's owner is asked to cancel it; a finished job cannot be.
  Write(b_, 3, Job(3, v1::JOB_STATE_RUNNING), b_->ReplicaId(), "b0");
  EXPECT_EQ(*a_->RequestCancel("j3"), b_->ReplicaId());
  Write(b_, 3, Job(3, v1::JOB_STATE_DONE), "", "b0");
  EXPECT_TRUE(absl::IsNotFound(a_->RequestCancel("j3").status()));
}

TEST_P(ClusterStoreTest, OneReplicaCompilesAKeyAndTheOthersHearWhenItIsDone) {
  std::mutex mutex;
  std::condition_variable heard;
  std::vector<ClusterNotification> notifications;
  auto listener = b_->Listen([&](const ClusterNotification& notification) {
    std::lock_guard lock(mutex);
    notifications.push_back(notification);
    heard.notify_all();
  });
  ASSERT_TRUE(listener.ok()) << listener.status();
  EXPECT_TRUE(*a_->ClaimCompile("k1"));
  EXPECT_FALSE(*b_->ClaimCompile("k1"));
  EXPECT_TRUE(*a_->ClaimCompile("k1"));  // its own claim
  ASSERT_TRUE(a_->FinishCompileClaim("k1").ok());
  Write(a_, 1, Job(1, v1::JOB_STATE_QUEUED), "");
  auto heard_all = [&] {
    std::set<std::pair<std::string, std::string>> got;
    for (const auto& n : notifications) got.emplace(n.channel, n.payload);
    return got.count({kCompiledChannel, "k1"}) && got.count({kQueueChannel, "sim"}) &&
           got.count({kEventsChannel, "j1"});
  };
  {
    std::unique_lock lock(mutex);
    EXPECT_TRUE(heard.wait_for(lock, std::chrono::seconds(30), heard_all));
  }
  EXPECT_TRUE(*b_->ClaimCompile("k1"));
}

// A replica need not act on what it committed itself (a job it queued, it claims right after).
TEST_P(ClusterStoreTest, ANotificationSaysWhetherThisReplicaSentIt) {
  std::mutex mutex;
  std::condition_variable heard;
  std::map<std::string, bool> from_here;  // events' job id -> from_here
  auto listener = b_->Listen([&](const ClusterNotification& notification) {
    if (notification.channel != kEventsChannel) return;
    std::lock_guard lock(mutex);
    from_here[notification.payload] = notification.from_here;
    heard.notify_all();
  });
  ASSERT_TRUE(listener.ok()) << listener.status();
  Write(a_, 1, Job(1, v1::JOB_STATE_QUEUED), "");
  Write(b_, 2, Job(2, v1::JOB_STATE_QUEUED), "");
  std::unique_lock lock(mutex);
  ASSERT_TRUE(
      heard.wait_for(lock, std::chrono::seconds(30), [&] { return from_here.size() == 2; }));
  EXPECT_FALSE(from_here["j1"]);
  EXPECT_TRUE(from_here["j2"]);
}

// A replica that claims right after its commit tells the others only of what it left.
TEST_P(ClusterStoreTest, ACommitClaimedNextQueuesWithoutANotification) {
  std::mutex mutex;
  std::condition_variable heard;
  std::vector<std::pair<std::string, std::string>> notifications;
  auto listener = b_->Listen([&](const ClusterNotification& notification) {
    std::lock_guard lock(mutex);
    notifications.emplace_back(notification.channel, notification.payload);
    heard.notify_all();
  });
  ASSERT_TRUE(listener.ok()) << listener.status();
  auto heard_one = [&](const std::string& channel, const std::string& payload) {
    std::unique_lock lock(mutex);
    return heard.wait_for(lock, std::chrono::seconds(30), [&] {
      return std::count(notifications.begin(), notifications.end(),
                        std::make_pair(channel, payload)) > 0;
    });
  };
  StoreBatch quiet;
  quiet.jobs[1] = Job(1, v1::JOB_STATE_QUEUED);
  v1::JobEvent event;
  event.set_job_id("j1");
  event.set_seq(1);
  quiet.events.push_back(event);
  std::map<int64_t, JobRuntime> unowned;
  unowned[1].owner = "";
  ASSERT_TRUE(a_->CommitOwned(quiet, unowned, /*claiming_next=*/true).ok());
  v1::Job loud = Job(2, v1::JOB_STATE_QUEUED);
  loud.mutable_spec()->mutable_selector()->set_board_type("other");
  Write(a_, 2, loud, "");
  // Notifications come in commit order: the first commit's would be here by now.
  ASSERT_TRUE(heard_one(kQueueChannel, "other"));
  EXPECT_TRUE(heard_one(kEventsChannel, "j1"));  // its events are news as ever
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(std::count(notifications.begin(), notifications.end(),
                         std::make_pair(std::string(kQueueChannel), std::string("sim"))),
              0);
  }
  // The job is queued all the same, and told of when its replica leaves it.
  EXPECT_EQ((*b_->QueuedCounts())["sim"], 1);
  ASSERT_TRUE(a_->NotifyQueued("sim").ok());
  EXPECT_TRUE(heard_one(kQueueChannel, "sim"));
}

TEST_P(ClusterStoreTest, CountsAndPlacesCoverEveryReplica) {
  Write(a_, 1, Job(1, v1::JOB_STATE_QUEUED, "t1"), "");
  Write(b_, 2, Job(2, v1::JOB_STATE_QUEUED, "t2", /*priority=*/3), "");
  Write(b_, 3, Job(3, v1::JOB_STATE_RUNNING, "t1"), b_->ReplicaId(), "b0");
  Write(a_, 4, Job(4, v1::JOB_STATE_DONE, "t1"), "");
  EXPECT_EQ((*a_->QueuedCounts()), (std::map<std::string, int>{{"sim", 2}}));
  EXPECT_EQ((*b_->UnfinishedByState()),
            (std::map<v1::JobState, int>{{v1::JOB_STATE_QUEUED, 2}, {v1::JOB_STATE_RUNNING, 1}}));
  EXPECT_EQ(*a_->UnfinishedJobsOf("t1"), 2);
  EXPECT_EQ(*a_->QueuePlace(1), std::make_pair(2, 2));  // behind the higher priority
  EXPECT_EQ(*a_->QueuePlace(2), std::make_pair(1, 2));
  EXPECT_FALSE(a_->QueuePlace(3)->has_value());
}

}  // namespace
}  // namespace boardlab::server
