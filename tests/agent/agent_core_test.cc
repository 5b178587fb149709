// agent/agent_core.h: the step function, driven by plain events; and agent/journal.h.

// GCC 12 at -O3 (Release) reports JobKey's string in AgentEvent variants built from temporaries
// as maybe-uninitialized; they are not (a known false positive of its variant inlining).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "agent/agent_core.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace boardlab::agent {
namespace {

namespace fs = std::filesystem;

class AgentCoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("agent_core_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  AgentCore::Options Options() {
    AgentCore::Options o;
    o.agent_id = "a1";
    o.hostname = "host";
    o.version = "0.1.0";
    BoardConfig sim;
    sim.id = "sim-0";
    sim.type = "imxrt700-sim";
    sim.driver = "sim";
    sim.tags = {{"lab", "a"}};
    BoardConfig qemu;
    qemu.id = "qemu-0";
    qemu.type = "imxrt700-qemu";
    qemu.driver = "qemu";
    o.boards = {sim, qemu};
    o.journal_path = (dir_ / "journal").string();
    return o;
  }

  std::unique_ptr<AgentCore> NewCore() {
    absl::StatusOr<std::unique_ptr<AgentCore>> core = AgentCore::Create(Options());
    EXPECT_TRUE(core.ok()) << core.status();
    return core.ok() ? std::move(*core) : nullptr;
  }

  // Step + TakeEffects; the step must succeed.
  std::vector<AgentEffect> Step(AgentCore& core, const AgentEvent& event) {
    absl::Status s = core.Step(event);
    EXPECT_TRUE(s.ok()) << s;
    return core.TakeEffects();
  }

  static FromServer Welcome(int interval_ms = 1000) {
    FromServer m;
    m.message.mutable_welcome()->set_session_id("s1");
    m.message.mutable_welcome()->set_heartbeat_interval_ms(interval_ms);
    return m;
  }
  static FromServer Assign(const std::string& job, int attempt, const std::string& board) {
    FromServer m;
    v1::Assignment& a = *m.message.mutable_assign();
    a.set_job_id(job);
    a.set_attempt(attempt);
    a.set_board_id(board);
    return m;
  }
  static FromServer Ack(const std::string& job, int attempt) {
    FromServer m;
    m.message.mutable_ack()->set_job_id(job);
    m.message.mutable_ack()->set_attempt(attempt);
    return m;
  }
  static FromServer Cancel(const std::string& job, int attempt) {
    FromServer m;
    m.message.mutable_cancel()->set_job_id(job);
    m.message.mutable_cancel()->set_attempt(attempt);
    return m;
  }
  static JobDone Done(const std::string& job, int attempt, v1::RunOutcome outcome) {
    JobDone d;
    d.key = {job, attempt};
    d.result.set_outcome(outcome);
    d.result.set_message("m");
    return d;
  }
  static const v1::AgentMessage& Sent(const AgentEffect& e) {
    EXPECT_TRUE(std::holds_alternative<Send>(e));
    static const v1::AgentMessage empty;
    return std::holds_alternative<Send>(e) ? std::get<Send>(e).message : empty;
  }

  // A connected core (Hello sent, Welcome received).
  std::unique_ptr<AgentCore> Connected() {
    auto core = NewCore();
    Step(*core, StreamUp{});
    Step(*core, Welcome());
    return core;
  }

  fs::path dir_;
};

TEST_F(AgentCoreTest, HelloFirstWithBoards) {
  auto core = NewCore();
  std::vector<AgentEffect> effects = Step(*core, StreamUp{});
  ASSERT_EQ(effects.size(), 1u);
  const v1::Hello& hello = Sent(effects[0]).hello();
  EXPECT_EQ(hello.agent_id(), "a1");
  EXPECT_EQ(hello.hostname(), "host");
  EXPECT_EQ(hello.version(), "0.1.0");
  ASSERT_EQ(hello.boards_size(), 2);
  EXPECT_EQ(hello.boards(1).id(), "sim-0");
  EXPECT_EQ(hello.boards(1).type(), "imxrt700-sim");
  ASSERT_EQ(hello.boards(1).tags_size(), 1);
  EXPECT_EQ(hello.boards(1).tags(0).key(), "lab");
  EXPECT_EQ(hello.in_flight_size(), 0);
  EXPECT_FALSE(core->welcomed());

  // Before Welcome nothing but Hello goes out.
  EXPECT_TRUE(Step(*core, HeartbeatDue{5}).empty());
  EXPECT_EQ(Step(*core, Welcome(250)).size(), 0u);
  EXPECT_TRUE(core->welcomed());
  EXPECT_EQ(core->heartbeat_interval_ms(), 250);
  effects = Step(*core, HeartbeatDue{5});
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(Sent(effects[0]).heartbeat().time_ms(), 5);
}

TEST_F(AgentCoreTest, HeartbeatIntervalDefaultsAndFloor) {
  auto core = NewCore();
  Step(*core, StreamUp{});
  Step(*core, Welcome(0));
  EXPECT_EQ(core->heartbeat_interval_ms(), kDefaultHeartbeatIntervalMs);
  Step(*core, Welcome(1));
  EXPECT_EQ(core->heartbeat_interval_ms(), kMinHeartbeatIntervalMs);
}

TEST_F(AgentCoreTest, AssignmentStartsTheJobAndTheResultFreesTheBoard) {
  auto core = Connected();
  std::vector<AgentEffect> effects = Step(*core, Assign("j1", 1, "sim-0"));
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_EQ(Sent(effects[0]).stage().stage(), v1::JOB_STATE_LOADING);
  EXPECT_EQ(Sent(effects[0]).stage().job_id(), "j1");
  ASSERT_TRUE(std::holds_alternative<StartJob>(effects[1]));
  EXPECT_EQ(std::get<StartJob>(effects[1]).board.id, "sim-0");
  EXPECT_EQ(core->running_jobs(), 1u);

  effects = Step(*core, JobStage{{"j1", 1}, v1::JOB_STATE_RUNNING, {"loading"}});
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(Sent(effects[0]).stage().stage(), v1::JOB_STATE_RUNNING);
  ASSERT_EQ(Sent(effects[0]).stage().lines_size(), 1);  // the lines printed before the stage
  EXPECT_EQ(Sent(effects[0]).stage().lines(0), "loading");
  effects = Step(*core, JobLogs{{"j1", 1}, {"a", "b"}});
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(Sent(effects[0]).logs().lines_size(), 2);

  effects = Step(*core, Done("j1", 1, v1::RUN_OUTCOME_PASS));
  ASSERT_EQ(effects.size(), 1u);
  const v1::RunResult& result = Sent(effects[0]).result();
  EXPECT_EQ(result.job_id(), "j1");
  EXPECT_EQ(result.attempt(), 1);
  EXPECT_EQ(result.board_id(), "sim-0");
  EXPECT_EQ(result.outcome(), v1::RUN_OUTCOME_PASS);
  EXPECT_EQ(core->running_jobs(), 0u);
  EXPECT_EQ(core->unacked_results(), 1u);

  // The board takes the next job.
  effects = Step(*core, Assign("j2", 1, "sim-0"));
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<StartJob>(effects[1]));

  Step(*core, Ack("j1", 1));
  EXPECT_EQ(core->unacked_results(), 0u);
}

TEST_F(AgentCoreTest, BusyAndUnknownBoardsAreBoardErrors) {
  auto core = Connected();
  Step(*core, Assign("j1", 1, "sim-0"));
  std::vector<AgentEffect> effects = Step(*core, Assign("j2", 1, "sim-0"));
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(Sent(effects[0]).result().outcome(), v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(Sent(effects[0]).result().message(), "board 'sim-0' is busy with job j1#1");
  effects = Step(*core, Assign("j3", 2, "evk-9"));
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(Sent(effects[0]).result().job_id(), "j3");
  EXPECT_EQ(Sent(effects[0]).result().attempt(), 2);
  EXPECT_EQ(Sent(effects[0]).result().message(), "board 'evk-9' is not on agent 'a1'");
  EXPECT_EQ(core->running_jobs(), 1u);
}

TEST_F(AgentCoreTest, RepeatedAssignmentIsNotStartedTwice) {
  auto core = Connected();
  Step(*core, Assign("j1", 1, "sim-0"));
  EXPECT_TRUE(Step(*core, Assign("j1", 1, "sim-0")).empty());
  Step(*core, Done("j1", 1, v1::RUN_OUTCOME_FAIL));
  // Known and finished: the result again.
  std::vector<AgentEffect> effects = Step(*core, Assign("j1", 1, "sim-0"));
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(Sent(effects[0]).result().outcome(), v1::RUN_OUTCOME_FAIL);
}

TEST_F(AgentCoreTest, CancelOnlyRunningJobs) {
  auto core = Connected();
  Step(*core, Assign("j1", 1, "sim-0"));
  EXPECT_TRUE(Step(*core, Cancel("j1", 2)).empty());
  std::vector<AgentEffect> effects = Step(*core, Cancel("j1", 1));
  ASSERT_EQ(effects.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<CancelJob>(effects[0]));
  EXPECT_EQ(std::get<CancelJob>(effects[0]).key, (JobKey{"j1", 1}));
  effects = Step(*core, Done("j1", 1, v1::RUN_OUTCOME_CANCELLED));
  EXPECT_EQ(Sent(effects[0]).result().outcome(), v1::RUN_OUTCOME_CANCELLED);
}

TEST_F(AgentCoreTest, ResultsWaitForTheNextWelcome) {
  auto core = Connected();
  Step(*core, Assign("j1", 1, "sim-0"));
  Step(*core, Assign("j2", 1, "qemu-0"));
  Step(*core, StreamDown{});
  // While disconnected: logs are dropped, the result is kept.
  EXPECT_TRUE(Step(*core, JobLogs{{"j1", 1}, {"x"}}).empty());
  EXPECT_TRUE(Step(*core, Done("j1", 1, v1::RUN_OUTCOME_PASS)).empty());

  std::vector<AgentEffect> effects = Step(*core, StreamUp{});
  ASSERT_EQ(effects.size(), 1u);
  const v1::Hello& hello = Sent(effects[0]).hello();
  ASSERT_EQ(hello.in_flight_size(), 2);
  EXPECT_EQ(hello.in_flight(0).job_id(), "j1");
  EXPECT_FALSE(hello.in_flight(0).still_running());
  EXPECT_EQ(hello.in_flight(1).job_id(), "j2");
  EXPECT_EQ(hello.in_flight(1).board_id(), "qemu-0");
  EXPECT_TRUE(hello.in_flight(1).still_running());

  effects = Step(*core, Welcome());
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(Sent(effects[0]).result().job_id(), "j1");
  // Not acknowledged: sent again after the next Welcome too.
  Step(*core, StreamDown{});
  Step(*core, StreamUp{});
  EXPECT_EQ(Step(*core, Welcome()).size(), 1u);
  Step(*core, Ack("j1", 1));
  Step(*core, StreamDown{});
  Step(*core, StreamUp{});
  EXPECT_EQ(Step(*core, Welcome()).size(), 0u);
}

// A driver's word on a board goes out as a BoardStatus when it changes while connected, and in
// Hello otherwise; one that changes between Hello and Welcome follows the Welcome, before any
// result (the server must know a board is recovering before it schedules on that result).
TEST_F(AgentCoreTest, BoardConditionsReachTheServerInHelloOrAsTheyChange) {
  auto core = Connected();
  std::vector<AgentEffect> effects = Step(
      *core, BoardConditionChanged{"qemu-0", v1::BOARD_CONDITION_RECOVERING, "board error: x"});
  ASSERT_EQ(effects.size(), 1u);
  const v1::BoardStatus& status = Sent(effects[0]).board_status();
  EXPECT_EQ(status.board_id(), "qemu-0");
  EXPECT_EQ(status.condition(), v1::BOARD_CONDITION_RECOVERING);
  EXPECT_EQ(status.reason(), "board error: x");
  // The same word again is not news; an unknown board is ignored.
  EXPECT_TRUE(
      Step(*core, BoardConditionChanged{"qemu-0", v1::BOARD_CONDITION_RECOVERING, "board error: x"})
          .empty());
  EXPECT_TRUE(
      Step(*core, BoardConditionChanged{"nope", v1::BOARD_CONDITION_QUARANTINED, "y"}).empty());

  // Disconnected: kept for the next Hello.
  Step(*core, StreamDown{});
  EXPECT_TRUE(Step(*core, BoardConditionChanged{"qemu-0", v1::BOARD_CONDITION_QUARANTINED, "dead"})
                  .empty());
  effects = Step(*core, StreamUp{});
  ASSERT_EQ(effects.size(), 1u);
  const v1::Hello& hello = Sent(effects[0]).hello();
  ASSERT_EQ(hello.boards_size(), 2);
  EXPECT_EQ(hello.boards(0).id(), "qemu-0");
  EXPECT_EQ(hello.boards(0).condition(), v1::BOARD_CONDITION_QUARANTINED);
  EXPECT_EQ(hello.boards(0).condition_reason(), "dead");
  EXPECT_EQ(hello.boards(1).condition(), v1::BOARD_CONDITION_READY);
  EXPECT_TRUE(Step(*core, Welcome()).empty());  // Hello said it already

  // Between Hello and Welcome: sent after the Welcome, before the results.
  Step(*core, Assign("j1", 1, "sim-0"));
  Step(*core, StreamDown{});
  Step(*core, Done("j1", 1, v1::RUN_OUTCOME_BOARD_ERROR));
  Step(*core, StreamUp{});
  EXPECT_TRUE(
      Step(*core, BoardConditionChanged{"sim-0", v1::BOARD_CONDITION_RECOVERING, "z"}).empty());
  effects = Step(*core, Welcome());
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_EQ(Sent(effects[0]).board_status().board_id(), "sim-0");
  EXPECT_EQ(Sent(effects[0]).board_status().condition(), v1::BOARD_CONDITION_RECOVERING);
  EXPECT_EQ(Sent(effects[1]).result().job_id(), "j1");
}

TEST_F(AgentCoreTest, RestartReportsRunsThatDiedWithTheAgent) {
  {
    auto core = Connected();
    Step(*core, Assign("j1", 1, "sim-0"));
    Step(*core, Assign("j2", 3, "qemu-0"));
    Step(*core, StreamDown{});
    Step(*core, Done("j2", 3, v1::RUN_OUTCOME_FAIL));
    // The process ends here without acks.
  }
  auto core = NewCore();
  EXPECT_EQ(core->running_jobs(), 0u);
  EXPECT_EQ(core->unacked_results(), 2u);
  std::vector<AgentEffect> effects = Step(*core, StreamUp{});
  const v1::Hello& hello = Sent(effects[0]).hello();
  ASSERT_EQ(hello.in_flight_size(), 2);
  EXPECT_FALSE(hello.in_flight(0).still_running());
  EXPECT_FALSE(hello.in_flight(1).still_running());
  effects = Step(*core, Welcome());
  ASSERT_EQ(effects.size(), 2u);
  const v1::RunResult& lost = Sent(effects[0]).result();
  EXPECT_EQ(lost.job_id(), "j1");
  EXPECT_EQ(lost.board_id(), "sim-0");
  EXPECT_EQ(lost.outcome(), v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(lost.message(), "agent restarted during the run");
  const v1::RunResult& failed = Sent(effects[1]).result();
  EXPECT_EQ(failed.job_id(), "j2");
  EXPECT_EQ(failed.attempt(), 3);
  EXPECT_EQ(failed.outcome(), v1::RUN_OUTCOME_FAIL);
  // The board is free again.
  EXPECT_EQ(Step(*core, Assign("j3", 1, "sim-0")).size(), 2u);
}

TEST_F(AgentCoreTest, ShutdownCancelsRunsAsBoardErrors) {
  auto core = Connected();
  Step(*core, Assign("j1", 1, "sim-0"));
  Step(*core, Assign("j2", 1, "qemu-0"));
  Step(*core, Cancel("j2", 1));
  std::vector<AgentEffect> effects = Step(*core, ShutdownRequested{});
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<CancelJob>(effects[0]));
  effects = Step(*core, Done("j1", 1, v1::RUN_OUTCOME_CANCELLED));
  EXPECT_EQ(Sent(effects[0]).result().outcome(), v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(Sent(effects[0]).result().message(), "the agent shut down during the run");
  // The server's own cancel stays a cancel.
  effects = Step(*core, Done("j2", 1, v1::RUN_OUTCOME_CANCELLED));
  EXPECT_EQ(Sent(effects[0]).result().outcome(), v1::RUN_OUTCOME_CANCELLED);
  effects = Step(*core, Assign("j3", 1, "sim-0"));
  EXPECT_EQ(Sent(effects[0]).result().message(), "the agent is shutting down");
}

TEST_F(AgentCoreTest, ResultForAnUnknownJobIsAnError) {
  auto core = Connected();
  EXPECT_EQ(core->Step(Done("nope", 1, v1::RUN_OUTCOME_PASS)).code(), absl::StatusCode::kInternal);
}

TEST_F(AgentCoreTest, JournalRoundTrip) {
  const std::string path = (dir_ / "j" / "journal").string();
  JournalEntry running;
  running.job_id = "a";
  running.attempt = 1;
  running.board_id = "sim-0";
  running.running = true;
  JournalEntry done;
  done.job_id = "b";
  done.attempt = 2;
  done.board_id = "qemu-0";
  done.running = false;
  v1::RunResult result;
  result.set_job_id("b");
  result.set_outcome(v1::RUN_OUTCOME_FAIL);
  result.set_inference_cycles(12345678901234ull);
  result.add_checks()->set_max_abs_diff(3);
  result.mutable_log()->set_sha256(std::string(64, 'a'));
  done.result = result;
  ASSERT_TRUE(SaveJournal(path, {running, done}).ok());
  absl::StatusOr<std::vector<JournalEntry>> loaded = LoadJournal(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ((*loaded)[0].job_id, "a");
  EXPECT_TRUE((*loaded)[0].running);
  EXPECT_FALSE((*loaded)[0].result.has_value());
  EXPECT_EQ((*loaded)[1].attempt, 2);
  EXPECT_EQ((*loaded)[1].board_id, "qemu-0");
  ASSERT_TRUE((*loaded)[1].result.has_value());
  EXPECT_EQ((*loaded)[1].result->SerializeAsString(), result.SerializeAsString());
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

// A file renders a waiting result once and reuses it in later snapshots, but never a rendering
// of a result that has changed since (a retried attempt's result under the same key).
TEST_F(AgentCoreTest, JournalSnapshotsKeepEachResultAsLastSaved) {
  const std::string path = (dir_ / "journal").string();
  JournalEntry done;
  done.job_id = "b";
  done.attempt = 1;
  done.running = false;
  v1::RunResult result;
  result.set_job_id("b");
  result.set_message("first");
  done.result = result;
  JournalFile file(path);
  ASSERT_TRUE(file.Save({done}).ok());
  result.set_message("second");
  done.result = result;
  JournalEntry other = done;
  other.job_id = "c";
  other.result->set_job_id("c");
  for (int save = 0; save < 2; ++save) {  // the second save reuses both renderings
    ASSERT_TRUE(file.Save({done, other}).ok());
    absl::StatusOr<std::vector<JournalEntry>> loaded = LoadJournal(path);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_EQ(loaded->size(), 2u);
    EXPECT_EQ(loaded->at(0).result->message(), "second");
    EXPECT_EQ(loaded->at(1).result->job_id(), "c");
  }
  ASSERT_TRUE(file.Save({other}).ok());  // b acknowledged
  EXPECT_EQ(LoadJournal(path)->size(), 1u);
}

TEST_F(AgentCoreTest, MissingJournalIsEmptyAndACorruptOneIsAnError) {
  absl::StatusOr<std::vector<JournalEntry>> none = LoadJournal((dir_ / "absent").string());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  const std::string path = (dir_ / "journal").string();
  std::ofstream(path) << "{\"version\": 1, \"jobs\": [{\"attempt\": 1}]";
  absl::StatusOr<std::vector<JournalEntry>> bad = LoadJournal(path);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("move the file away"), std::string::npos);
  EXPECT_FALSE(AgentCore::Create(Options()).ok());
}

// Saves alternate between two files; a save cut short (its file unreadable) leaves the one
// before it, and a series of saves creates no further files.
TEST_F(AgentCoreTest, JournalSurvivesASaveCutShort) {
  const std::string path = (dir_ / "journal").string();
  JournalEntry entry;
  entry.job_id = "a";
  entry.attempt = 1;
  entry.board_id = "sim-0";
  JournalFile file(path);
  ASSERT_TRUE(file.Save({entry}).ok());
  entry.attempt = 2;
  ASSERT_TRUE(file.Save({entry}).ok());
  absl::StatusOr<std::vector<JournalEntry>> loaded = LoadJournal(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ((*loaded)[0].attempt, 2);
  entry.attempt = 3;
  ASSERT_TRUE(JournalFile(path).Save({entry}).ok());  // a new writer goes on from the newest
  EXPECT_EQ(LoadJournal(path)->at(0).attempt, 3);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
  std::ofstream(path + ".1") << "{\"version\": 1, \"seq\": 3, \"jo";  // attempt 3's save, cut
  loaded = LoadJournal(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->at(0).attempt, 2);
}

// A busy agent's snapshots come faster than they are worth saving: within the interval they
// replace each other, and the last one is saved (at once when someone flushes).
TEST_F(AgentCoreTest, JournalWriterSavesOneSnapshotPerInterval) {
  const std::string path = (dir_ / "journal").string();
  JournalWriter writer(path, nullptr, std::chrono::seconds(10));
  for (int attempt = 1; attempt <= 10; ++attempt) {
    writer.Write({JournalEntry{"j1", attempt, "sim-0", true, std::nullopt}});
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_LE(writer.writes(), 1);  // the first, at once; the others wait for the interval
  writer.Flush();
  EXPECT_LE(writer.writes(), 2);
  absl::StatusOr<std::vector<JournalEntry>> saved = LoadJournal(path);
  ASSERT_TRUE(saved.ok()) << saved.status();
  ASSERT_EQ(saved->size(), 1u);
  EXPECT_EQ(saved->at(0).attempt, 10);
}

TEST_F(AgentCoreTest, JournalWriterSavesTheLastSnapshotOffTheCallersThread) {
  const std::string path = (dir_ / "journal").string();
  std::vector<std::string> errors;
  {
    JournalWriter writer(path, [&](const absl::Status& e) { errors.emplace_back(e.message()); });
    AgentCore::Options options = Options();
    options.journal_path = path;
    options.write_journal = [&](std::vector<JournalEntry> entries) {
      writer.Write(std::move(entries));
    };
    auto core = AgentCore::Create(options);
    ASSERT_TRUE(core.ok()) << core.status();
    ASSERT_TRUE((*core)->Step(StreamUp{}).ok());
    ASSERT_TRUE((*core)->Step(Welcome()).ok());
    ASSERT_TRUE((*core)->Step(Assign("j1", 1, "sim-0")).ok());
    writer.Flush();
    absl::StatusOr<std::vector<JournalEntry>> running = LoadJournal(path);
    ASSERT_TRUE(running.ok()) << running.status();
    ASSERT_EQ(running->size(), 1u);
    EXPECT_TRUE((*running)[0].running);
    ASSERT_TRUE((*core)->Step(Done("j1", 1, v1::RUN_OUTCOME_PASS)).ok());
    EXPECT_GE(writer.writes(), 1);
  }  // the writer's destructor saves the last snapshot
  absl::StatusOr<std::vector<JournalEntry>> done = LoadJournal(path);
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->size(), 1u);
  EXPECT_FALSE((*done)[0].running);
  EXPECT_TRUE(errors.empty());
}

}  // namespace
}  // namespace boardlab::agent
