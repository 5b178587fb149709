#include "server/lab.h"

#include <sqlite3.h>

#include <set>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "tests/server/lab_fixture.h"

namespace boardlab::server::testing {
namespace {

TEST_F(LabTest, SubmitNamesAMissingModelBlob) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  v1::Digest missing;
  missing.set_sha256(std::string(64, 'a'));
  missing.set_size_bytes(10);
  auto response = lab_->Submit(Caller{"t", Role::kClient}, Request(missing));
  ASSERT_EQ(response.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(response.status().message(), "upload it first"))
      << response.status();
}

// A blob of another tenant is "not in the store" word for word like a missing one; once the
// tenant holds it (its upload was checked), the same submit runs.
TEST_F(LabTest, SubmitRefusesABlobTheTenantDoesNotHold) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  auto request = Request(PutModel());
  auto refused = lab_->Submit(Caller{"stranger", Role::kClient}, request);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kNotFound) << refused.status();
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "upload it first"));
  ASSERT_TRUE(store_->GrantBlob("stranger", request.spec().model().sha256()).ok());
  EXPECT_TRUE(lab_->Submit(Caller{"stranger", Role::kClient}, request).ok());
}

TEST_F(LabTest, SubmitRefusesABoardTypeNoBoardHas) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  auto request = Request(PutModel());
  request.mutable_spec()->mutable_selector()->set_board_type("imxrt700-evk");
  auto response = lab_->Submit(Caller{"t", Role::kClient}, request);
  ASSERT_EQ(response.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(response.status().message(),
            "no board of type 'imxrt700-evk' is registered with this server (known board types: "
            "imxrt700-sim)");
}

TEST_F(LabTest, SubmitRefusesBadOptionsWithTheirName) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  struct Case {
    std::function<void(v1::JobSpec&)> mutate;
    std::string message_part;
  };
  std::vector<Case> cases = {
      {[](v1::JobSpec& s) { s.mutable_compile()->set_weights("rom"); }, "weights"},
      {[](v1::JobSpec& s) { s.mutable_compile()->set_target("imxrt1170"); }, "target"},
      {[](v1::JobSpec& s) { s.mutable_compile()->add_no_npu("CONV_9D"); }, "CONV_9D"},
      {[](v1::JobSpec& s) { s.mutable_run()->set_atol(300); }, "atol"},
      {[](v1::JobSpec& s) { s.mutable_run()->set_iterations(-1); }, "iterations"},
      {[](v1::JobSpec& s) { s.set_priority(5000); }, "priority"},
      {[](v1::JobSpec& s) { s.mutable_run()->add_inputs(); }, "neither a blob nor a seed"},
  };
  for (const auto& c : cases) {
    auto request = Request(PutModel());
    c.mutate(*request.mutable_spec());
    auto response = lab_->Submit(Caller{"t", Role::kClient}, request);
    EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument) << c.message_part;
    EXPECT_TRUE(absl::StrContains(response.status().message(), c.message_part))
        << response.status();
  }
}

// A started lab with agent "a" of one board, and a request for a model carrying `request_id`.
class LabRequestIdTest : public LabTest {
 protected:
  v1::SubmitJobRequest StartWithRequest(const std::string& request_id) {
    StartLab();
    session_ = Connect("a", 1, agent_);
    auto request = Request(PutModel());
    request.set_request_id(request_id);
    return request;
  }
  std::shared_ptr<FakeSession> agent_;
  std::string session_;
};

TEST_F(LabRequestIdTest, ARequestIdIsSubmittedOnce) {
  const auto request = StartWithRequest("ci-run-42");
  v1::Job first = Submit(request, "team");
  auto again = lab_->Submit(Caller{"team", Role::kClient}, request);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->deduplicated());
  EXPECT_EQ(again->job().id(), first.id());
  // Another tenant's identical request id is its own job.
  auto other = lab_->Submit(Caller{"other", Role::kClient}, request);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->deduplicated());
  EXPECT_NE(other->job().id(), first.id());
}

// A submit answers once its job is committed. When the store cannot commit it (here another
// program holds the database's write lock longer than SQLite waits for it), the submit fails with
// the store's error and leaves no job behind; once the lock is gone the same request is new.
TEST_F(LabRequestIdTest, ASubmitWhoseCommitFailsIsRefusedAndLeavesNoJob) {
  const auto request = StartWithRequest("ci-run-9");
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "boardlab.db").c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto refused = lab_->Submit(Caller{"team", Role::kClient}, request);
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), ::testing::HasSubstr("locked"));
  auto listed = lab_->ListJobs(Caller{"team", Role::kClient}, v1::ListJobsRequest());
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->jobs_size(), 0);
  auto submitted = lab_->Submit(Caller{"team", Role::kClient}, request);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  EXPECT_FALSE(submitted->deduplicated());
  EXPECT_TRUE(agent_->WaitAssignment(1).has_value());
}

// A change whose commit fails (another program holds SQLite's write lock) is not dropped: it is
// written with the next call's commit, so a restart after that finds it.
TEST_F(LabRequestIdTest, AChangeWhoseCommitFailedIsWrittenWithTheNextCommit) {
  const auto request = StartWithRequest("ci-run-11");
  const v1::Job job = Submit(request, "team");
  auto a = agent_->WaitAssignment(1);
  ASSERT_TRUE(a);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "boardlab.db").c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  Stage(session_, *a, v1::JOB_STATE_RUNNING);  // its commit fails
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_EQ(Get(job.id()).state(), v1::JOB_STATE_RUNNING);
  Submit(Request(PutModel()), "team");  // the next commit
  RestartLab();
  EXPECT_EQ(Get(job.id()).state(), v1::JOB_STATE_RUNNING);
}

TEST_F(LabTest, ATenantAtItsLimitOfUnfinishedJobsIsRefusedUntilOneFinishes) {
  config_.max_unfinished_jobs_per_tenant = 2;
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  v1::Digest model = PutModel();
  auto request = Request(model);
  request.set_request_id("ci-run-7");
  Submit(request, "team");
  auto running = agent->WaitAssignment(1);
  ASSERT_TRUE(running);
  Submit(Request(model), "team");

  auto refused = lab_->Submit(Caller{"team", Role::kClient}, Request(model));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::HasSubstr("tenant 'team' has 2 unfinished jobs"));
  // A retried submit of a known request id is an answer, not a new job; other tenants go on.
  auto again = lab_->Submit(Caller{"team", Role::kClient}, request);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->deduplicated());
  EXPECT_TRUE(lab_->Submit(Caller{"other", Role::kClient}, Request(model)).ok());

  Result(session, *running, v1::RUN_OUTCOME_PASS);
  WaitState(running->job_id(), v1::JOB_STATE_DONE);
  EXPECT_TRUE(lab_->Submit(Caller{"team", Role::kClient}, Request(model)).ok());
}

TEST_F(LabTest, AJobRunsOnAnIdleBoardAndPasses) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  v1::Job job = Submit(Request(PutModel()));
  auto assignment = agent->WaitAssignment();
  ASSERT_TRUE(assignment);
  EXPECT_EQ(assignment->job_id(), job.id());
  EXPECT_EQ(assignment->board_id(), "a-b0");
  EXPECT_EQ(assignment->attempt(), 1);
  EXPECT_TRUE(blobs_->Has(assignment->artifact()));
  EXPECT_EQ(Get(job.id()).state(), v1::JOB_STATE_ASSIGNED);
  EXPECT_EQ(lab_->GetBoard("a-b0")->state(), v1::BOARD_STATE_BUSY);

  for (auto stage : {v1::JOB_STATE_LOADING, v1::JOB_STATE_RUNNING, v1::JOB_STATE_COLLECTING}) {
    Stage(session, *assignment, stage);
    EXPECT_EQ(Get(job.id()).state(), stage);
  }
  // The log comes inline (the agent was told inline_logs) and becomes the job's log blob.
  Result(session, *assignment, v1::RUN_OUTCOME_PASS, "", "the board's log\n");
  v1::Job done = Get(job.id());
  EXPECT_EQ(done.state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(done.result(), v1::JOB_RESULT_PASS);
  EXPECT_EQ(done.inference_us(), 12.5);
  EXPECT_EQ(*blobs_->Read(done.files().log()), "the board's log\n");
  EXPECT_EQ(lab_->GetBoard("a-b0")->state(), v1::BOARD_STATE_IDLE);

  // The event log: dense sequence numbers, every state in order, the final record last.
  auto events = lab_->WaitEvents(Caller{"default", Role::kClient}, job.id(), 0, 0);
  ASSERT_TRUE(events.ok());
  std::vector<v1::JobState> states;
  for (size_t i = 0; i < events->size(); ++i) {
    EXPECT_EQ((*events)[i].seq(), static_cast<int64_t>(i + 1));
    if ((*events)[i].has_state()) states.push_back((*events)[i].state());
  }
  EXPECT_EQ(states, (std::vector<v1::JobState>{v1::JOB_STATE_COMPILING, v1::JOB_STATE_QUEUED,
                                               v1::JOB_STATE_ASSIGNED, v1::JOB_STATE_LOADING,
                                               v1::JOB_STATE_RUNNING, v1::JOB_STATE_COLLECTING,
                                               v1::JOB_STATE_DONE}));
  EXPECT_TRUE(events->back().has_finished());
  // A result repeated after a reconnect is acknowledged and recorded once.
  Result(session, *assignment, v1::RUN_OUTCOME_FAIL);
  EXPECT_EQ(Get(job.id()).result(), v1::JOB_RESULT_PASS);
}

// The latency budget is judged on the clock the agent names: a simulator's time is labelled as
// such, and QEMU's instruction count is no time at all.
TEST_F(LabTest, TheLatencyBudgetIsJudgedOnTheClockTheAgentNames) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  const v1::Digest model = PutModel();
  const std::pair<std::string, std::string> runs[] = {{"rt700-sim-cycles", "simulated RT700"},
                                                      {"qemu-icount", ""}};
  for (const auto& [clock, label] : runs) {
    v1::SubmitJobRequest request = Request(model);
    request.mutable_spec()->mutable_budgets()->set_max_latency_us(1000);
    v1::Job job = Submit(request);
    auto assignment = agent->WaitAssignment();
    ASSERT_TRUE(assignment);
    Result(session, *assignment, v1::RUN_OUTCOME_PASS, "", "", clock);
    v1::Job done = Get(job.id());
    ASSERT_EQ(done.budget_checks_size(), 1) << clock;
    const v1::BudgetCheck& latency = done.budget_checks(0);
    EXPECT_EQ(latency.clock(), label) << clock;
    if (label.empty()) {
      EXPECT_FALSE(latency.has_measured());
      EXPECT_EQ(done.result(), v1::JOB_RESULT_FAIL);
      EXPECT_EQ(done.message(),
                "budget failed: latency not measured (a QEMU board counts instructions, not time)");
    } else {
      EXPECT_EQ(latency.measured(), 12.5);
      EXPECT_EQ(done.result(), v1::JOB_RESULT_PASS) << done.message();
    }
  }
}

TEST_F(LabTest, AMalformedModelEndsAsACompileError) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  v1::Job job = Submit(Request(PutBlob({'n', 'o', 't', ' ', 'a', ' ', 'm', 'o', 'd', 'e', 'l'})));
  v1::Job done = WaitState(job.id(), v1::JOB_STATE_DONE);
  EXPECT_EQ(done.result(), v1::JOB_RESULT_COMPILE_ERROR);
  EXPECT_FALSE(done.message().empty());
  EXPECT_TRUE(agent->Assignments().empty());
}

TEST_F(LabTest, AnInputOfTheWrongSizeIsAnInvalidRequestAfterCompilingAndRefusedOnceCached) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  auto request = Request(PutModel());
  *request.mutable_spec()->mutable_run()->add_inputs()->mutable_blob() =
      PutBlob(std::vector<uint8_t>(15, 1));
  v1::Job done = WaitState(Submit(request).id(), v1::JOB_STATE_DONE);
  EXPECT_EQ(done.result(), v1::JOB_RESULT_INVALID_REQUEST);
  EXPECT_EQ(done.message(), "input 0 has 15 bytes; the model's input 0 needs 16");
  EXPECT_EQ(done.attempt(), 0) << "retried or sent to a board";
  // The model is in the compile cache now: the same request is refused before it is queued.
  absl::StatusOr<v1::SubmitJobResponse> again =
      lab_->Submit(Caller{"default", Role::kAdmin}, request);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kInvalidArgument) << again.status();
  EXPECT_EQ(again.status().message(), "input 0 has 15 bytes; the model's input 0 needs 16");
  EXPECT_TRUE(agent->Assignments().empty());
}

TEST_F(LabTest, ARepeatedModelIsServedFromTheCompileCache) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  v1::Digest model = PutModel();
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Submit(Request(model)).id());
  for (const auto& id : ids) WaitCompiled(id);
  v1::Job later = Submit(Request(model));
  WaitCompiled(later.id());
  EXPECT_TRUE(Get(later.id()).compile_cache_hit());
  EXPECT_FALSE(Get(ids[0]).compile_cache_hit());
}

// Each commit of a call's changes is timed: the ceiling of a server's job rate is one commit at
// a time (docs/operations.md, "What to monitor").
TEST_F(LabTest, CommitsAreTimed) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  const double before = Total(*metrics_, "boardlab_store_commit_duration_seconds");
  WaitCompiled(Submit(Request(PutModel())).id());
  EXPECT_GE(Total(*metrics_, "boardlab_store_commit_duration_seconds"), before + 2)
      << "the submit's commit and the queued job's";
}

// A submit whose compile the cache holds writes its job once, already queued: the answer says
// so, and a server that dies right after the answer comes back with the job queued, not
// compiling (its compile would have been asked for again).
TEST_F(LabTest, ASubmitOfACachedModelIsQueuedInItsFirstCommit) {
  StartLab();
  std::shared_ptr<FakeSession> busy;
  Connect("a", 1, busy);
  v1::Digest model = PutModel();
  Submit(Request(model));
  ASSERT_TRUE(busy->WaitAssignment().has_value());  // and never answered: the board stays busy
  const double requests = Total(*metrics_, "boardlab_compile_cache_requests_total");
  v1::SubmitJobRequest request = Request(model);
  request.set_request_id("r2");
  v1::Job second = Submit(request);
  EXPECT_EQ(Submit(request).id(), second.id());  // a retry, answered with the same job
  EXPECT_EQ(Total(*metrics_, "boardlab_compile_cache_requests_total"), requests + 1)
      << "one cache hit: the retry compiles nothing";
  EXPECT_EQ(second.state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(second.compile_cache_hit());
  EXPECT_TRUE(second.files().has_artifact());
  RestartLab();
  v1::Job recovered = Get(second.id());
  EXPECT_EQ(recovered.state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(recovered.compile_cache_hit());
  auto events = lab_->WaitEvents(Caller{"default", Role::kClient}, second.id(), 0, 0);
  ASSERT_TRUE(events.ok()) << events.status();
  std::vector<v1::JobState> states;
  for (const v1::JobEvent& event : *events) {
    if (event.has_state()) states.push_back(event.state());
  }
  EXPECT_EQ(states, (std::vector<v1::JobState>{v1::JOB_STATE_COMPILING, v1::JOB_STATE_QUEUED}));
  // The restarted server runs it as any queued job.
  std::shared_ptr<FakeSession> agent;
  Connect("b", 1, agent);
  std::optional<v1::Assignment> assigned = agent->WaitAssignment();
  ASSERT_TRUE(assigned.has_value());
  EXPECT_EQ(assigned->job_id(), second.id());
}

// The queued jobs know their place (higher priority first) and why they wait; the higher
// priority then runs first.
TEST_F(LabTest, HigherPriorityGoesFirstInTheQueueAndOnTheBoard) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  v1::Digest model = PutModel();
  v1::Job first = Submit(Request(model));
  auto running = agent->WaitAssignment(1);
  ASSERT_TRUE(running);
  EXPECT_EQ(Get(first.id()).queue_position(), 0) << "a job on a board has no queue place";
  v1::Job low = Submit(Request(model, 0));
  WaitState(low.id(), v1::JOB_STATE_QUEUED);
  v1::Job high = Submit(Request(model, 5));
  WaitState(high.id(), v1::JOB_STATE_QUEUED);

  v1::Job low_now = Get(low.id());
  v1::Job high_now = Get(high.id());
  EXPECT_EQ(high_now.queue_position(), 1);
  EXPECT_EQ(low_now.queue_position(), 2);
  EXPECT_EQ(low_now.queue_length(), 2);
  EXPECT_EQ(high_now.queue_length(), 2);
  v1::ListJobsRequest queued_jobs;
  queued_jobs.add_states(v1::JOB_STATE_QUEUED);
  auto listed = lab_->ListJobs(Caller{"default", Role::kAdmin}, queued_jobs);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->jobs_size(), 2);
  EXPECT_EQ(listed->jobs(0).id(), high.id());  // newest first
  EXPECT_EQ(listed->jobs(0).queue_position(), 1);
  EXPECT_EQ(listed->jobs(1).queue_position(), 2);
  auto events = store_->Events(low.id(), 0);
  ASSERT_TRUE(events.ok()) << events.status();
  std::string waiting;
  for (const v1::JobEvent& event : *events) {
    if (event.has_log() && absl::StrContains(event.log(), "waiting")) waiting = event.log();
  }
  EXPECT_EQ(waiting, "waiting for a board of type imxrt700-sim: 1 queued; boards: 1 busy");

  Result(session, *running, v1::RUN_OUTCOME_PASS);
  auto next = agent->WaitAssignment(2);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->job_id(), high.id());
}

TEST_F(LabTest, EqualPrioritiesAreSharedFairlyBetweenTenants) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 2, agent);
  v1::Digest model = PutModel();
  // Hold both boards with a reservation while the queue fills, so order is decided at once.
  auto lease0 = lab_->Reserve(Caller{"x", Role::kClient}, [] {
    v1::ReserveRequest r;
    r.set_board_id("a-b0");
    return r;
  }());
  auto lease1 = lab_->Reserve(Caller{"x", Role::kClient}, [] {
    v1::ReserveRequest r;
    r.set_board_id("a-b1");
    return r;
  }());
  ASSERT_TRUE(lease0.ok() && lease1.ok());
  std::vector<std::string> busy_tenant;
  for (int i = 0; i < 3; ++i) busy_tenant.push_back(Submit(Request(model), "busy").id());
  std::string quiet = Submit(Request(model), "quiet").id();
  for (const auto& id : busy_tenant) WaitState(id, v1::JOB_STATE_QUEUED);
  WaitState(quiet, v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(agent->Assignments().empty());  // reserved boards take no jobs
  v1::ReleaseRequest release;
  release.set_board_id("a-b0");
  release.set_lease_id(lease0->lease_id());
  ASSERT_TRUE(lab_->Release(Caller{"x", Role::kClient}, release).ok());
  release.set_board_id("a-b1");
  release.set_lease_id(lease1->lease_id());
  ASSERT_TRUE(lab_->Release(Caller{"x", Role::kClient}, release).ok());
  agent->WaitAssignment(2);
  std::set<std::string> assigned;
  for (const auto& a : agent->Assignments()) assigned.insert(a.job_id());
  EXPECT_EQ(assigned, (std::set<std::string>{busy_tenant[0], quiet}));
}

TEST_F(LabTest, ABoardErrorIsRetriedOnAnotherBoard) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 2, agent);
  v1::Job job = Submit(Request(PutModel()));
  auto first = agent->WaitAssignment(1);
  ASSERT_TRUE(first);
  Result(session, *first, v1::RUN_OUTCOME_BOARD_ERROR, "firmware hung");
  auto second = agent->WaitAssignment(2);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->job_id(), job.id());
  EXPECT_EQ(second->attempt(), 2);
  EXPECT_NE(second->board_id(), first->board_id());
  Result(session, *second, v1::RUN_OUTCOME_PASS);
  v1::Job done = Get(job.id());
  EXPECT_EQ(done.result(), v1::JOB_RESULT_PASS);
  EXPECT_EQ(done.attempt(), 2);
}

TEST_F(LabTest, ModelFailuresAreNotRetried) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 2, agent);
  v1::Job job = Submit(Request(PutModel()));
  auto first = agent->WaitAssignment(1);
  ASSERT_TRUE(first);
  Result(session, *first, v1::RUN_OUTCOME_MODEL_ERROR, "does not fit: needs 9 bytes, board has 8");
  v1::Job done = Get(job.id());
  EXPECT_EQ(done.result(), v1::JOB_RESULT_RUN_ERROR);
  EXPECT_EQ(done.message(), "does not fit: needs 9 bytes, board has 8");
  EXPECT_EQ(agent->Assignments().size(), 1u);
}

TEST_F(LabTest, TheRetryBudgetEndsInAnInfrastructureError) {
  config_.retry_budget = 1;
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 2, agent);
  v1::Job job = Submit(Request(PutModel()));
  for (size_t i = 1; i <= 2; ++i) {
    auto a = agent->WaitAssignment(i);
    ASSERT_TRUE(a);
    Result(session, *a, v1::RUN_OUTCOME_BOARD_ERROR, "crashed");
  }
  v1::Job done = Get(job.id());
  EXPECT_EQ(done.result(), v1::JOB_RESULT_INFRA_ERROR);
  EXPECT_TRUE(absl::StrContains(done.message(), "retry budget 1 used up")) << done.message();
}

TEST_F(LabTest, ABoardThatKeepsFailingIsQuarantined) {
  config_.quarantine_after = 2;
  config_.retry_budget = 5;
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  v1::Digest model = PutModel();
  Submit(Request(model));
  for (size_t i = 1; i <= 2; ++i) {
    auto a = agent->WaitAssignment(i);
    ASSERT_TRUE(a);
    Result(session, *a, v1::RUN_OUTCOME_BOARD_ERROR, "flash failed");
  }
  auto board = lab_->GetBoard("a-b0");
  ASSERT_TRUE(board.ok());
  EXPECT_EQ(board->state(), v1::BOARD_STATE_QUARANTINED);
  EXPECT_TRUE(absl::StrContains(board->reason(), "flash failed")) << board->reason();
  lab_->Tick();
  EXPECT_EQ(agent->Assignments().size(), 2u);  // no more jobs for it
}

// boardlab_board_quarantines_total counts quarantines the store has: one whose commit failed
// (another program holds the database's write lock) is not counted until the next commit writes
// it too.
TEST_F(LabTest, AQuarantineIsCountedOnlyOnceItIsCommitted) {
  config_.quarantine_after = 1;
  StartLab();
  std::shared_ptr<FakeSession> agent;
  const std::string session = Connect("a", 2, agent);
  const v1::Digest model = PutModel();
  for (int job = 0; job < 2; ++job) Submit(Request(model));
  ASSERT_TRUE(agent->WaitAssignment(2));
  const std::vector<v1::Assignment> sent = agent->Assignments();
  ASSERT_EQ(sent.size(), 2u);
  const v1::Assignment* first = &sent[0];
  const v1::Assignment* second = &sent[1];
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "boardlab.db").c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  Result(session, *first, v1::RUN_OUTCOME_BOARD_ERROR, "flash failed");
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_EQ(lab_->GetBoard(first->board_id())->state(), v1::BOARD_STATE_QUARANTINED);
  EXPECT_EQ(Total(*metrics_, "boardlab_board_quarantines_total"), 0);
  Result(session, *second, v1::RUN_OUTCOME_BOARD_ERROR, "flash failed");
  EXPECT_EQ(lab_->GetBoard(second->board_id())->state(), v1::BOARD_STATE_QUARANTINED);
  EXPECT_EQ(Total(*metrics_, "boardlab_board_quarantines_total"), 2);
}

TEST_F(LabTest, ASilentAgentsJobMovesToAnotherAgent) {
  config_.heartbeat_interval_ms = 50;  // lease: 150 ms
  StartLab();
  std::shared_ptr<FakeSession> silent, alive;
  std::string silent_session = Connect("silent", 1, silent);
  v1::Job job = Submit(Request(PutModel()));
  auto first = silent->WaitAssignment(1);
  ASSERT_TRUE(first);
  std::string alive_session = Connect("alive", 1, alive);
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    Heartbeat(alive_session);
    lab_->Tick();
  }
  EXPECT_TRUE(silent->closed());
  auto second = alive->WaitAssignment(1);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->job_id(), job.id());
  EXPECT_EQ(second->attempt(), 2);
  Result(alive_session, *second, v1::RUN_OUTCOME_PASS);
  EXPECT_EQ(Get(job.id()).result(), v1::JOB_RESULT_PASS);
}

// The agent's lease ran out mid-run and the job went back to the queue, but the agent comes
// back still running that attempt: its board must get nothing new until the agent reports the
// stale attempt ended (each refusal "board is busy" would cost the job a retry).
TEST_F(LabTest, ABoardStillRunningAnExpiredAttemptGetsNoJobUntilItEnds) {
  config_.heartbeat_interval_ms = 50;  // lease: 150 ms
  config_.retry_budget = 2;
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  v1::Job job = Submit(Request(PutModel()));
  auto first = agent->WaitAssignment(1);
  ASSERT_TRUE(first);
  for (int i = 0; i < 100 && !agent->closed(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    lab_->Tick();
  }
  ASSERT_TRUE(agent->closed());
  ASSERT_EQ(Get(job.id()).state(), v1::JOB_STATE_QUEUED);

  v1::InFlightJob in_flight;
  in_flight.set_job_id(first->job_id());
  in_flight.set_attempt(first->attempt());
  in_flight.set_board_id(first->board_id());
  in_flight.set_still_running(true);
  std::shared_ptr<FakeSession> back;
  const std::string session = Connect("a", 1, back, "imxrt700-sim", {in_flight});
  bool told_to_stop = false;
  for (const auto& m : back->sent()) {
    told_to_stop |= m.has_cancel() && m.cancel().job_id() == job.id() && m.cancel().attempt() == 1;
  }
  EXPECT_TRUE(told_to_stop);
  EXPECT_TRUE(back->Assignments().empty());
  EXPECT_EQ(lab_->GetBoard(first->board_id())->state(), v1::BOARD_STATE_BUSY);
  lab_->Tick();
  EXPECT_TRUE(back->Assignments().empty());

  Result(session, *first, v1::RUN_OUTCOME_CANCELLED, "cancelled; boardlab-run killed");
  auto second = back->WaitAssignment(1);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->job_id(), job.id());
  EXPECT_EQ(second->attempt(), 2);
  Result(session, *second, v1::RUN_OUTCOME_PASS);
  v1::Job done = Get(job.id());
  EXPECT_EQ(done.result(), v1::JOB_RESULT_PASS) << done.message();
  EXPECT_EQ(done.attempt(), 2);
}

// The stale attempt is the agent's word at one connect: an agent that comes back without it
// (restarted, its run died) frees the board.
TEST_F(LabTest, ABoardEndingAStaleAttemptIsFreedByAHelloWithoutIt) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  v1::InFlightJob in_flight;
  in_flight.set_job_id("j99999999");
  in_flight.set_attempt(3);
  in_flight.set_board_id("a-b0");
  in_flight.set_still_running(true);
  Connect("a", 1, agent, "imxrt700-sim", {in_flight});
  EXPECT_EQ(lab_->GetBoard("a-b0")->state(), v1::BOARD_STATE_BUSY);
  Connect("a", 1, agent);
  EXPECT_EQ(lab_->GetBoard("a-b0")->state(), v1::BOARD_STATE_IDLE);
}

TEST_F(LabTest, CancellingAQueuedJobEndsIt) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  lab_->AgentGone(session);  // the board is known but offline: jobs wait
  v1::Job job = Submit(Request(PutModel()));
  WaitState(job.id(), v1::JOB_STATE_QUEUED);
  auto cancelled = lab_->Cancel(Caller{"default", Role::kClient}, job.id());
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(Get(job.id()).result(), v1::JOB_RESULT_CANCELLED);
}

TEST_F(LabTest, CancellingARunningJobTellsItsAgent) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  v1::Job job = Submit(Request(PutModel()));
  auto a = agent->WaitAssignment(1);
  ASSERT_TRUE(a);
  ASSERT_TRUE(lab_->Cancel(Caller{"default", Role::kClient}, job.id()).ok());
  bool told = false;
  for (const auto& m : agent->sent()) told |= m.has_cancel() && m.cancel().job_id() == job.id();
  EXPECT_TRUE(told);
  Result(session, *a, v1::RUN_OUTCOME_CANCELLED);
  EXPECT_EQ(Get(job.id()).result(), v1::JOB_RESULT_CANCELLED);
  EXPECT_EQ(lab_->GetBoard("a-b0")->state(), v1::BOARD_STATE_IDLE);
}

TEST_F(LabTest, OtherTenantsCannotSeeAJob) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  v1::Job job = Submit(Request(PutModel()), "alpha");
  auto seen = lab_->GetJob(Caller{"beta", Role::kClient}, job.id());
  EXPECT_EQ(seen.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(lab_->GetJob(Caller{"alpha", Role::kClient}, job.id()).ok());
}

TEST_F(LabTest, ARestartKeepsQueuedJobsQueued) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  lab_->AgentGone(session);
  v1::Digest model = PutModel();
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Submit(Request(model)).id());
  for (const auto& id : ids) WaitState(id, v1::JOB_STATE_QUEUED);
  RestartLab();
  EXPECT_EQ(lab_->QueuedJobsForTest(), 5);
  session = Connect("a", 1, agent);
  for (size_t i = 1; i <= ids.size(); ++i) {
    auto a = agent->WaitAssignment(i);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->job_id(), ids[i - 1]);
    Result(session, *a, v1::RUN_OUTCOME_PASS);
  }
  for (const auto& id : ids) EXPECT_EQ(Get(id).result(), v1::JOB_RESULT_PASS);
}

TEST_F(LabTest, ARestartedServerWaitsForTheAgentOfARunningJob) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  v1::Job job = Submit(Request(PutModel()));
  auto a = agent->WaitAssignment(1);
  ASSERT_TRUE(a);
  Stage(session, *a, v1::JOB_STATE_RUNNING);
  RestartLab();
  EXPECT_EQ(Get(job.id()).state(), v1::JOB_STATE_RUNNING);
  v1::InFlightJob in_flight;
  in_flight.set_job_id(job.id());
  in_flight.set_attempt(a->attempt());
  in_flight.set_board_id(a->board_id());
  in_flight.set_still_running(false);
  session = Connect("a", 1, agent, "imxrt700-sim", {in_flight});
  Result(session, *a, v1::RUN_OUTCOME_PASS);
  v1::Job done = Get(job.id());
  EXPECT_EQ(done.result(), v1::JOB_RESULT_PASS);
  EXPECT_EQ(done.attempt(), 1);
}

TEST_F(LabTest, AnAgentThatLostItsJobGetsItRetried) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  v1::Job job = Submit(Request(PutModel()));
  ASSERT_TRUE(agent->WaitAssignment(1));
  std::shared_ptr<FakeSession> restarted;
  session = Connect("a", 1, restarted);  // no in-flight jobs: its journal is gone
  EXPECT_TRUE(agent->closed());          // the old session is replaced
  auto again = restarted->WaitAssignment(1);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->job_id(), job.id());
  EXPECT_EQ(again->attempt(), 2);
}

TEST_F(LabTest, AQueuedJobTimesOut) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  lab_->AgentGone(session);
  auto request = Request(PutModel());
  request.mutable_spec()->set_queue_timeout_seconds(1);
  v1::Job job = Submit(request);
  WaitState(job.id(), v1::JOB_STATE_QUEUED);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  lab_->Tick();
  EXPECT_EQ(Get(job.id()).result(), v1::JOB_RESULT_QUEUE_TIMEOUT);
}

TEST_F(LabTest, PinnedJobsWaitForTheirBoard) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 2, agent);
  auto request = Request(PutModel());
  request.mutable_spec()->mutable_selector()->set_board_id("a-b1");
  Submit(request);
  Submit(request);
  auto first = agent->WaitAssignment(1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->board_id(), "a-b1");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(agent->Assignments().size(), 1u);  // the second waits, a-b0 stays idle
  Result(session, *first, v1::RUN_OUTCOME_PASS);
  auto second = agent->WaitAssignment(2);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->board_id(), "a-b1");
}

TEST_F(LabTest, AQuarantinedBoardReturnsWhenItsHealthCheckPasses) {
  config_.quarantine_after = 1;
  config_.retry_budget = 0;
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  v1::Job job = Submit(Request(PutModel()));
  auto first = agent->WaitAssignment(1);
  ASSERT_TRUE(first);
  Result(session, *first, v1::RUN_OUTCOME_BOARD_ERROR, "board hung");
  EXPECT_EQ(lab_->GetBoard("a-b0")->state(), v1::BOARD_STATE_QUARANTINED);

  SetGoldenCheck(first->artifact());
  lab_->Tick();
  auto check = agent->WaitAssignment(2);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->health_check());
  EXPECT_EQ(check->board_id(), "a-b0");
  EXPECT_EQ(check->expected_size(), 1);
  // A failed check keeps it out; a passing one brings it back.
  Result(session, *check, v1::RUN_OUTCOME_FAIL, "outputs differ");
  EXPECT_EQ(lab_->GetBoard("a-b0")->state(), v1::BOARD_STATE_QUARANTINED);
  EXPECT_TRUE(absl::StrContains(lab_->GetBoard("a-b0")->reason(), "health check failed"));
  v1::SetMaintenanceRequest off;  // an admin asks for it back: checked again at once
  off.set_board_id("a-b0");
  ASSERT_TRUE(lab_->SetMaintenance(off).ok());
  lab_->Tick();
  auto again = agent->WaitAssignment(3);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->health_check());
  Result(session, *again, v1::RUN_OUTCOME_PASS);
  auto board = lab_->GetBoard("a-b0");
  EXPECT_EQ(board->state(), v1::BOARD_STATE_IDLE);
  EXPECT_EQ(board->consecutive_failures(), 0);
  EXPECT_EQ(Get(job.id()).result(), v1::JOB_RESULT_INFRA_ERROR);  // the job itself was not retried
}

// The agent speaks for its board: while it recovers the board the board gets no job and shows
// "recovering" with the reason; ready again, it gets the queued job; quarantined by the agent,
// it is quarantined here at once with the agent's reason and checked as soon as it is free.
TEST_F(LabTest, AnAgentsWordOnItsBoardHoldsJobsOffAndQuarantines) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  const auto status = [&](v1::BoardCondition condition, const std::string& reason) {
    v1::AgentMessage message;
    message.mutable_board_status()->set_board_id("a-b0");
    message.mutable_board_status()->set_condition(condition);
    message.mutable_board_status()->set_reason(reason);
    lab_->AgentMessage(session, message);
  };
  status(v1::BOARD_CONDITION_RECOVERING, "its last job ended in a board error: hung");
  auto board = lab_->GetBoard("a-b0");
  ASSERT_TRUE(board.ok());
  EXPECT_EQ(board->state(), v1::BOARD_STATE_RECOVERING);
  EXPECT_EQ(board->reason(), "its last job ended in a board error: hung");
  v1::Job job = Submit(Request(PutModel()));
  WaitState(job.id(), v1::JOB_STATE_QUEUED);
  lab_->Tick();
  EXPECT_TRUE(agent->Assignments().empty());

  status(v1::BOARD_CONDITION_READY, "");
  auto assignment = agent->WaitAssignment(1);
  ASSERT_TRUE(assignment);
  EXPECT_EQ(assignment->job_id(), job.id());
  Result(session, *assignment, v1::RUN_OUTCOME_PASS);
  EXPECT_EQ(lab_->GetBoard("a-b0")->state(), v1::BOARD_STATE_IDLE);
  EXPECT_EQ(lab_->GetBoard("a-b0")->reason(), "");

  status(v1::BOARD_CONDITION_RECOVERING, "board error");
  status(v1::BOARD_CONDITION_QUARANTINED, "no answer after connecting again, reset");
  board = lab_->GetBoard("a-b0");
  EXPECT_EQ(board->state(), v1::BOARD_STATE_QUARANTINED);
  EXPECT_EQ(board->reason(), "quarantined by agent a: no answer after connecting again, reset");
  // A health check goes to it as soon as one is configured.
  SetGoldenCheck(assignment->artifact());
  lab_->Tick();
  auto check = agent->WaitAssignment(2);
  ASSERT_TRUE(check);
  EXPECT_TRUE(check->health_check());
  Result(session, *check, v1::RUN_OUTCOME_PASS);
  EXPECT_EQ(lab_->GetBoard("a-b0")->state(), v1::BOARD_STATE_IDLE);
}

// An agent that (re)connects says in its Hello which of its boards it is recovering or holds in
// quarantine (a quarantine survives an agent restart): nothing is scheduled on them first.
TEST_F(LabTest, AnAgentsHelloCarriesItsBoardsConditions) {
  StartLab();
  std::shared_ptr<FakeSession> before;
  const std::string first = Connect("a", 2, before);  // the boards' type is known from now on
  lab_->AgentGone(first);
  Submit(Request(PutModel()));
  v1::Hello hello;
  hello.set_agent_id("a");
  for (const auto& [id, condition] :
       {std::pair<std::string, v1::BoardCondition>{"a-b0", v1::BOARD_CONDITION_RECOVERING},
        {"a-b1", v1::BOARD_CONDITION_QUARANTINED}}) {
    v1::BoardInfo& info = *hello.add_boards();
    info.set_id(id);
    info.set_type("imxrt700-sim");
    info.set_condition(condition);
    info.set_condition_reason("power cycle failed");
  }
  auto agent = std::make_shared<FakeSession>();
  ASSERT_TRUE(lab_->AgentHello(hello, agent).ok());
  lab_->Tick();
  EXPECT_TRUE(agent->Assignments().empty());
  EXPECT_EQ(lab_->GetBoard("a-b0")->state(), v1::BOARD_STATE_RECOVERING);
  EXPECT_EQ(lab_->GetBoard("a-b1")->state(), v1::BOARD_STATE_QUARANTINED);
  EXPECT_EQ(lab_->GetBoard("a-b1")->reason(), "quarantined by agent a: power cycle failed");
}

}  // namespace
}  // namespace boardlab::server::testing
