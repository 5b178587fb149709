// agent/serial_board_executor.h without a board: a port nobody answers on climbs the recovery
// ladder (resync, the reset command, the power cycle command) and ends in quarantine with the
// reason; a quarantined board fails the next job at once; a health check runs the ladder again;
// a cancel stops the ladder. The runs with a board (QEMU) are in tests/service/.

#include "agent/serial_board_executor.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "runtime/link/frame.h"
#include "runtime/link/messages.h"
#include "tests/agent/agent_test_support.h"
#include "tests/agent/hello_board.h"
#include "tests/support/free_port.h"

namespace boardlab::agent {
namespace {

using testing::HelloBoard;

class SerialExecutorTest : public testing::ExecutorTest {
 protected:
  SerialExecutorTest() : metrics_(dir_ / "metrics.prom") {
    board_.id = "evk-0";
    board_.driver = "serial";
    board_.type = "imxrt700-evk";
    // Nothing listens there: every connection is refused until the connect timeout.
    board_.serial.port = absl::StrCat("tcp:127.0.0.1:", boardlab::testing::FreeLoopbackPort());
    board_.serial.connect_timeout_seconds = 1;
    board_.serial.reset.command = "echo pressing reset on {board}";
    board_.serial.power_cycle.command = "echo 'uhubctl: no compatible hub' >&2; exit 1";
  }
  // Starts a job on `executor`, cancels it after `delay` and runs it to its report; `*took` is
  // the time from the cancel to the report.
  BoardReport CancelAfter(BoardExecutor& executor, std::chrono::milliseconds delay,
                          std::chrono::steady_clock::duration* took) {
    std::optional<BoardReport> report;
    std::unique_ptr<BoardRun> run = executor.Start(
        Request(), [](std::string) {}, [&](BoardReport r) { report = r; });
    boost::asio::steady_timer timer(io_, delay);
    std::chrono::steady_clock::time_point cancelled_at;
    timer.async_wait([&](boost::system::error_code) {
      cancelled_at = std::chrono::steady_clock::now();
      run->Cancel();
    });
    RunIoUntil([&] { return report.has_value(); });
    *took = std::chrono::steady_clock::now() - cancelled_at;
    EXPECT_TRUE(report.has_value());
    return report.value_or(BoardReport{});
  }
  double Count(const std::string& series) const {
    const std::string text = metrics_.Text();
    const size_t at = text.find(series + " ");
    return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 1));
  }

  BoardConfig board_;
  BoardMetrics metrics_;
};

TEST_F(SerialExecutorTest, SilentBoardClimbsTheLadderIntoQuarantine) {
  SerialBoardExecutor executor(io_, board_, "/bin/false", &metrics_, dir_ / "fw");
  const BoardReport r = RunOn(executor, Request());
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(r.message,
            absl::StrCat("board evk-0 quarantined by the agent: no answer on ", board_.serial.port,
                         " after connecting again, reset, power cycle: power_cycle "
                         "command exit status 1: uhubctl: no compatible hub"));
  EXPECT_TRUE(HasLine("boardlab-agent: board evk-0: reset: echo pressing reset on 'evk-0'"));
  EXPECT_TRUE(HasLine("reset: pressing reset on evk-0"));  // the command's output is logged
  EXPECT_TRUE(HasLine("power_cycle: uhubctl: no compatible hub"));
  EXPECT_TRUE(executor.quarantined());
  EXPECT_EQ(Count("boardlab_agent_board_recovery_steps_total{board=\"evk-0\",step=\"reset\"}"), 1);
  EXPECT_EQ(
      Count("boardlab_agent_board_recovery_steps_total{board=\"evk-0\",step=\"power_cycle\"}"), 1);
  EXPECT_EQ(Count("boardlab_agent_board_quarantined{board=\"evk-0\"}"), 1);

  // The next job fails at once, without touching the board.
  const auto start = std::chrono::steady_clock::now();
  const BoardReport again = RunOn(executor, Request());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  EXPECT_EQ(again.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_NE(again.message.find("board evk-0 is quarantined by the agent: no answer on"),
            std::string::npos)
      << again.message;
  EXPECT_EQ(Count("boardlab_agent_board_recovery_steps_total{board=\"evk-0\",step=\"reset\"}"), 1);

  // The server's health check tries the whole ladder again.
  BoardRunRequest check = Request();
  check.health_check = true;
  const BoardReport checked = RunOn(executor, check);
  EXPECT_EQ(checked.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(Count("boardlab_agent_board_recovery_steps_total{board=\"evk-0\",step=\"reset\"}"), 2);
  EXPECT_EQ(Count("boardlab_agent_board_quarantines_total{board=\"evk-0\"}"), 1);
}

// A firmware of another protocol version cannot be reset into working: the agent flashes it,
// and a flash that leaves it speaking the old protocol counts as a failed flash.
TEST_F(SerialExecutorTest, FirmwareOfAnotherProtocolIsFlashedNotReset) {
  // The versions before this one: the first, and the last (a firmware built before protocol 4's
  // change of the state machine).
  for (const uint16_t old : {uint16_t{1}, static_cast<uint16_t>(link::kProtocolVersion - 1)}) {
    SCOPED_TRACE(old);
    HelloBoard old_board(old, "rt700");
    ASSERT_FALSE(old_board.port().empty());
    board_.serial.port = old_board.port();
    board_.serial.connect_timeout_seconds = 3;
    const std::filesystem::path elf = dir_ / "firmware.elf";
    std::ofstream(elf) << "ELF";
    board_.serial.firmware_elf = elf.string();
    board_.serial.firmware_build_id = absl::StrCat("protocol-", link::kProtocolVersion, "-build");
    board_.serial.flash.command = "echo flashing {elf}";
    board_.serial.flash_attempts = 2;
    BoardMetrics metrics("");
    SerialBoardExecutor executor(io_, board_, "/bin/false", &metrics, dir_ / "fw");
    const BoardReport r = RunOn(executor, Request());
    EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
    const std::string mismatch =
        absl::StrCat("the board speaks board link protocol ", old, ", this host ",
                     link::kProtocolVersion, ": flash a matching firmware");
    EXPECT_TRUE(HasLine(absl::StrCat("boardlab-agent: board evk-0 runs build protocol-", old,
                                     "-build: ", mismatch, "; flashing ", elf.string())));
    EXPECT_EQ(r.message,
              absl::StrCat("board evk-0 quarantined by the agent: flashing failed 2 times; last: "
                           "after flashing, ",
                           mismatch));
    const std::string text = metrics.Text();
    EXPECT_NE(text.find("boardlab_agent_board_flashes_total{board=\"evk-0\",result=\"ok\"} 2"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("step=\"reset\""), std::string::npos) << text;
  }
}

TEST_F(SerialExecutorTest, CancelStopsTheLadder) {
  board_.serial.reset.command = "sleep 30";
  SerialBoardExecutor executor(io_, board_, "/bin/false", &metrics_, dir_ / "fw");
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<BoardRun> run;
  std::optional<BoardReport> report;
  run = executor.Start(
      Request(),
      [&](std::string line) {
        // The reset command has started: cancel the job.
        if (line.find("reset: sleep 30") != std::string::npos) run->Cancel();
      },
      [&](BoardReport r) { report = std::move(r); });
  RunIoUntil([&] { return report.has_value(); });
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->outcome, v1::RUN_OUTCOME_CANCELLED);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(executor.quarantined());
}

// Budgets, diffs and dashboards group by board type: a board configured as an i.MX RT700 type
// that says it is another board (QEMU's an505) is warned of in the job log.
TEST_F(SerialExecutorTest, AnotherBoardUnderAnRt700TypeIsWarnedOf) {
  HelloBoard an505(link::kProtocolVersion, "an505");
  board_.serial.port = an505.port();
  board_.serial.connect_timeout_seconds = 3;
  SerialBoardExecutor executor(io_, board_, "/bin/false", &metrics_, dir_ / "fw");
  ::testing::internal::CaptureStderr();
  RunOn(executor, Request());
  const std::string agent_log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(HasLine(absl::StrCat("boardlab-agent: board evk-0 answered: an505 firmware 0.1.0 ",
                                   "build protocol-", link::kProtocolVersion, "-build")));
  const std::string warning =
      "boardlab-agent: warning: board evk-0 is configured as type imxrt700-evk but its HELLO "
      "says it is an 'an505' board, not 'rt700': its measurements are filed under imxrt700-evk; "
      "give it a type of its own";
  EXPECT_TRUE(HasLine(warning));                                       // the job's log
  EXPECT_NE(agent_log.find(warning), std::string::npos) << agent_log;  // the agent's log
}

TEST_F(SerialExecutorTest, NoWarningForTheRt700OrAnEmulatedBoardOfItsOwnType) {
  for (const auto& [hello_board, type] :
       {std::pair<std::string, std::string>{"rt700", "imxrt700-evk"}, {"an505", "an505-qemu"}}) {
    SCOPED_TRACE(type);
    HelloBoard board(link::kProtocolVersion, hello_board);
    board_.serial.port = board.port();
    board_.serial.connect_timeout_seconds = 3;
    board_.type = type;
    SerialBoardExecutor executor(io_, board_, "/bin/false", &metrics_, dir_ / "fw");
    RunOn(executor, Request());
    EXPECT_TRUE(
        HasLine(absl::StrCat("boardlab-agent: board evk-0 answered: ", hello_board,
                             " firmware 0.1.0 build protocol-", link::kProtocolVersion, "-build")));
    EXPECT_FALSE(HasLine("warning")) << absl::StrJoin(lines_, "\n");
  }
}

// A cancel reaches a probe that waits for a board (BoardRun::Cancel: within about a second),
// not only the ladder's commands: a port that keeps refusing, and a port that accepts and never
// answers (ser2net in front of a board that is off).
TEST_F(SerialExecutorTest, CancelEndsAProbeWithinASecond) {
  boardlab::testing::LoopbackListener silent;
  ASSERT_FALSE(silent.port().empty());
  for (const std::string& port : {board_.serial.port, silent.port()}) {
    SCOPED_TRACE(port);
    board_.serial.port = port;
    board_.serial.connect_timeout_seconds = 20;
    SerialBoardExecutor executor(io_, board_, "/bin/false", &metrics_, dir_ / "fw");
    // Cancelled once the probe has been waiting for a while.
    std::chrono::steady_clock::duration took;
    const BoardReport report = CancelAfter(executor, std::chrono::milliseconds(700), &took);
    EXPECT_EQ(report.outcome, v1::RUN_OUTCOME_CANCELLED);
    EXPECT_LT(took, std::chrono::milliseconds(1500));
    EXPECT_FALSE(executor.quarantined());
  }
}

// A board and a runner for the recovery tests: the board answers HELLO; every job the runner
// runs ends in a board error.
class RecoveryTest : public SerialExecutorTest {
 protected:
  struct Change {
    v1::BoardCondition condition;
    std::string reason;
    int reports_before;  // job reports delivered when the change was announced
  };

  RecoveryTest() {
    board_.serial.port = hello_board_.port();
    board_.serial.connect_timeout_seconds = 1;
    runner_ = testing::WriteScript(
        dir_ / "boardlab-run", "echo 'board error: the board stopped acknowledging' >&2; exit 4\n");
  }
  std::unique_ptr<SerialBoardExecutor> Make() {
    auto executor =
        std::make_unique<SerialBoardExecutor>(io_, board_, runner_, &metrics_, dir_ / "state");
    Watch(*executor);
    return executor;
  }
  void Watch(SerialBoardExecutor& executor) {
    executor.WatchCondition([this](v1::BoardCondition condition, const std::string& reason) {
      changes_.push_back({condition, reason, reports_});
    });
  }
  BoardReport Job(BoardExecutor& executor) {
    const BoardReport report = RunOn(executor, Request());
    ++reports_;
    return report;
  }
  bool HasChange(v1::BoardCondition condition) const {
    for (const Change& c : changes_) {
      if (c.condition == condition) return true;
    }
    return false;
  }

  HelloBoard hello_board_{link::kProtocolVersion, "rt700"};
  std::string runner_;
  std::vector<Change> changes_;
  int reports_ = 0;
};

// The board error is reported after the board is announced as recovering (the server must not
// give it the next job), and the ladder's first rung brings it back at once, with no job.
TEST_F(RecoveryTest, BoardErrorIsRecoveredAtOnceWithoutWaitingForAJob) {
  auto executor = Make();
  ::testing::internal::CaptureStderr();
  const BoardReport failed = Job(*executor);
  EXPECT_EQ(failed.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  ASSERT_FALSE(changes_.empty());
  EXPECT_EQ(changes_[0].condition, v1::BOARD_CONDITION_RECOVERING);
  EXPECT_EQ(changes_[0].reports_before, 0);
  EXPECT_EQ(changes_[0].reason,
            "its last job ended in a board error: board error: the board stopped acknowledging");
  RunIoUntil([&] { return HasChange(v1::BOARD_CONDITION_READY); });
  const std::string agent_log = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_EQ(changes_[1].condition, v1::BOARD_CONDITION_READY);
  EXPECT_EQ(changes_[1].reason, "");
  EXPECT_FALSE(executor->recovering());
  EXPECT_EQ(hello_board_.hellos(), 2);  // the job's probe, then the recovery's
  EXPECT_NE(agent_log.find("boardlab-agent: board evk-0: its last job ended in a board error "
                           "(board error: the board stopped acknowledging); recovering it now: "
                           "connecting again"),
            std::string::npos)
      << agent_log;
  EXPECT_NE(agent_log.find("boardlab-agent: board evk-0 is back: recovered"), std::string::npos)
      << agent_log;
  EXPECT_EQ(Count("boardlab_agent_board_recovery_steps_total{board=\"evk-0\",step=\"resync\"}"), 1);
  EXPECT_EQ(Count("boardlab_agent_board_recoveries_total{board=\"evk-0\",result=\"recovered\"}"),
            1);
  EXPECT_EQ(Count("boardlab_agent_board_recovering{board=\"evk-0\"}"), 0);
}

// The board dies with its job: the ladder runs to its end in the background and quarantines the
// board with the reason; a job assigned meanwhile waits for it, then fails at once; the
// quarantine is in the board's state file.
TEST_F(RecoveryTest, DeadBoardIsQuarantinedWithoutAJobAndAJobThatCameMeanwhileWaits) {
  auto executor = Make();
  ::testing::internal::CaptureStderr();
  std::optional<BoardReport> first, second;
  std::vector<std::string> second_lines;
  std::unique_ptr<BoardRun> second_run;
  std::unique_ptr<BoardRun> first_run = executor->Start(
      Request(),
      [&](std::string line) {
        // The job started on the board: it dies with it.
        if (line.find("boardlab-agent: running on") != std::string::npos) {
          hello_board_.set_answering(false);
        }
      },
      [&](BoardReport r) {
        first = std::move(r);
        ++reports_;
        second_run = executor->Start(
            Request(), [&](std::string line) { second_lines.push_back(line); },
            [&](BoardReport r2) { second = std::move(r2); });
      });
  RunIoUntil([&] { return second.has_value(); });
  const std::string agent_log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(first->outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  const std::string reason =
      absl::StrCat("no answer on ", board_.serial.port,
                   " after connecting again, reset, power cycle: power_cycle command exit status "
                   "1: uhubctl: no compatible hub");
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_EQ(changes_[0].condition, v1::BOARD_CONDITION_RECOVERING);
  EXPECT_EQ(changes_[1].condition, v1::BOARD_CONDITION_QUARANTINED);
  EXPECT_EQ(changes_[1].reason, reason);
  EXPECT_TRUE(executor->quarantined());

  EXPECT_EQ(second->outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(second->message, absl::StrCat("board evk-0 is quarantined by the agent: ", reason));
  EXPECT_NE(absl::StrJoin(second_lines, "\n")
                .find("boardlab-agent: board evk-0: waiting for the agent's recovery of the "
                      "board to end"),
            std::string::npos);

  // Every step in the agent's log and the metrics.
  for (const std::string& step :
       {std::string("recovering it now: connecting again"),
        absl::StrCat("boardlab-agent: board evk-0 does not answer: no HELLO from a board on "),
        std::string("boardlab-agent: board evk-0: reset: echo pressing reset on 'evk-0'"),
        std::string("reset: pressing reset on evk-0"),
        std::string("power_cycle: uhubctl: no compatible hub"),
        absl::StrCat("boardlab-agent: board evk-0 quarantined by the agent: ", reason)}) {
    EXPECT_NE(agent_log.find(step), std::string::npos) << step << "\n" << agent_log;
  }
  for (const char* step : {"resync", "reset", "power_cycle"}) {
    EXPECT_EQ(
        Count(absl::StrCat("boardlab_agent_board_recovery_steps_total{board=\"evk-0\",step=\"",
                           step, "\"}")),
        1)
        << step;
  }
  EXPECT_EQ(Count("boardlab_agent_board_quarantined{board=\"evk-0\"}"), 1);
  EXPECT_EQ(Count("boardlab_agent_board_recoveries_total{board=\"evk-0\",result=\"quarantined\"}"),
            1);
  EXPECT_EQ(Count("boardlab_agent_board_recovering{board=\"evk-0\"}"), 0);

  const absl::StatusOr<BoardState> saved = LoadBoardState(BoardStatePath(dir_ / "state", "evk-0"));
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_TRUE(saved->quarantined);
  EXPECT_EQ(saved->quarantine_reason, reason);
}

// At the agent's start a board that does not answer climbs the ladder into quarantine before any
// job comes (reported RECOVERING meanwhile); it counts ladder steps, not a recovery.
TEST_F(RecoveryTest, CheckAtStartQuarantinesADeadBoardBeforeAnyJob) {
  hello_board_.set_answering(false);
  SerialBoardExecutor executor(io_, board_, runner_, &metrics_, dir_ / "state");
  executor.CheckAtStart();  // as the agent's main does: before the agent watches the conditions
  Watch(executor);
  ::testing::internal::CaptureStderr();
  RunIoUntil([&] { return executor.quarantined(); });
  const std::string agent_log = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_EQ(changes_[0].condition, v1::BOARD_CONDITION_RECOVERING);
  EXPECT_EQ(changes_[0].reason, "the agent checks the board at its start");
  EXPECT_EQ(changes_[1].condition, v1::BOARD_CONDITION_QUARANTINED);
  EXPECT_EQ(changes_[1].reason,
            absl::StrCat("no answer on ", board_.serial.port,
                         " after connecting again, reset, power cycle: power_cycle command exit "
                         "status 1: uhubctl: no compatible hub"));
  EXPECT_NE(agent_log.find(absl::StrCat("boardlab-agent: board evk-0: asking ", board_.serial.port,
                                        " for the board's HELLO (agent start)")),
            std::string::npos)
      << agent_log;
  EXPECT_EQ(Count("boardlab_agent_board_recovery_steps_total{board=\"evk-0\",step=\"reset\"}"), 1);
  EXPECT_EQ(
      Count("boardlab_agent_board_recovery_steps_total{board=\"evk-0\",step=\"power_cycle\"}"), 1);
  EXPECT_EQ(Count("boardlab_agent_board_quarantined{board=\"evk-0\"}"), 1);
  EXPECT_EQ(Count("boardlab_agent_board_recoveries_total{board=\"evk-0\",result=\"quarantined\"}"),
            0);

  // The first job fails at once, without touching the board.
  const BoardReport job = Job(executor);
  EXPECT_EQ(job.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_NE(job.message.find("board evk-0 is quarantined by the agent: no answer on"),
            std::string::npos)
      << job.message;
}

// A board that answers is ready before its first job, which does not ask it again; a board
// quarantined before a restart is not checked (the server's health check lifts that).
TEST_F(RecoveryTest, CheckAtStartReadiesALiveBoardAndTheFirstJobDoesNotAskAgain) {
  SerialBoardExecutor executor(io_, board_, runner_, &metrics_, dir_ / "state");
  executor.CheckAtStart();
  Watch(executor);
  ::testing::internal::CaptureStderr();
  RunIoUntil([&] { return HasChange(v1::BOARD_CONDITION_READY); });
  const std::string agent_log = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_EQ(changes_[0].condition, v1::BOARD_CONDITION_RECOVERING);
  EXPECT_EQ(hello_board_.hellos(), 1);
  EXPECT_NE(agent_log.find("boardlab-agent: board evk-0 is ready (checked at agent start)"),
            std::string::npos)
      << agent_log;
  EXPECT_EQ(Count("boardlab_agent_board_recovery_steps_total{board=\"evk-0\",step=\"resync\"}"), 0);

  Job(executor);  // the runner script ends in a board error, after which a recovery asks again
  EXPECT_FALSE(HasLine(absl::StrCat("boardlab-agent: board evk-0: asking ", board_.serial.port,
                                    " for the board's HELLO")));
  EXPECT_TRUE(HasLine("boardlab-agent: running on"));

  RunIoUntil([&] { return !executor.recovering(); });  // the recovery after that board error
  ASSERT_TRUE(SaveBoardState(BoardStatePath(dir_ / "state", "evk-0"), {"", true, "burnt"}).ok());
  absl::StatusOr<std::unique_ptr<SerialBoardExecutor>> restarted =
      SerialBoardExecutor::Create(io_, board_, runner_, &metrics_, dir_ / "state");
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  const int hellos = hello_board_.hellos();
  (*restarted)->CheckAtStart();
  io_.restart();
  io_.run_for(std::chrono::milliseconds(300));
  EXPECT_TRUE((*restarted)->quarantined());
  EXPECT_EQ(hello_board_.hellos(), hellos);
}

// A cancel reaches a job that waits for the recovery.
TEST_F(RecoveryTest, CancelEndsAJobWaitingForTheRecovery) {
  board_.serial.reset.command = "sleep 30";  // the recovery stays on this rung
  auto executor = Make();
  std::optional<BoardReport> first;
  std::unique_ptr<BoardRun> first_run = executor->Start(
      Request(),
      [&](std::string line) {
        if (line.find("boardlab-agent: running on") != std::string::npos) {
          hello_board_.set_answering(false);
        }
      },
      [&](BoardReport r) { first = std::move(r); });
  RunIoUntil([&] { return first.has_value(); });
  ASSERT_TRUE(executor->recovering());
  std::chrono::steady_clock::duration took;
  const BoardReport second = CancelAfter(*executor, std::chrono::milliseconds(300), &took);
  EXPECT_EQ(second.outcome, v1::RUN_OUTCOME_CANCELLED);
  EXPECT_LT(took, std::chrono::milliseconds(1000));
  EXPECT_TRUE(executor->recovering());  // the recovery goes on
}

// What the agent learnt survives its restart: a quarantine stays (with its reason) until a
// health check finds the board working, and a build id learnt after a flash spares a flash.
TEST_F(RecoveryTest, QuarantineSurvivesARestartUntilAHealthCheckPasses) {
  BoardState saved;
  saved.quarantined = true;
  saved.quarantine_reason = "flashing failed 3 times; last: flash command exit status 1";
  ASSERT_TRUE(SaveBoardState(BoardStatePath(dir_ / "state", "evk-0"), saved).ok());
  absl::StatusOr<std::unique_ptr<SerialBoardExecutor>> executor =
      SerialBoardExecutor::Create(io_, board_, runner_, &metrics_, dir_ / "state");
  ASSERT_TRUE(executor.ok()) << executor.status();
  Watch(**executor);
  EXPECT_TRUE((*executor)->quarantined());
  RunIoUntil([&] { return !changes_.empty(); });  // announced at once
  ASSERT_EQ(changes_.size(), 1u);
  EXPECT_EQ(changes_[0].condition, v1::BOARD_CONDITION_QUARANTINED);
  EXPECT_EQ(changes_[0].reason, saved.quarantine_reason);
  EXPECT_EQ(Count("boardlab_agent_board_quarantined{board=\"evk-0\"}"), 1);
  EXPECT_EQ(Count("boardlab_agent_board_quarantines_total{board=\"evk-0\"}"), 0);  // not new

  const BoardReport refused = Job(**executor);
  EXPECT_EQ(refused.message,
            absl::StrCat("board evk-0 is quarantined by the agent: ", saved.quarantine_reason));
  EXPECT_EQ(hello_board_.hellos(), 0);  // the board was not touched

  // The server's health check finds the board answering: the quarantine is lifted, for good.
  testing::WriteScript(runner_, "exit 0\n");
  BoardRunRequest check = Request();
  check.health_check = true;
  const BoardReport checked = RunOn(**executor, check);
  EXPECT_EQ(checked.outcome, v1::RUN_OUTCOME_PASS) << checked.message;
  EXPECT_FALSE((*executor)->quarantined());
  ASSERT_EQ(changes_.size(), 2u);
  EXPECT_EQ(changes_[1].condition, v1::BOARD_CONDITION_READY);
  const absl::StatusOr<BoardState> after = LoadBoardState(BoardStatePath(dir_ / "state", "evk-0"));
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_FALSE(after->quarantined);
  EXPECT_EQ(after->quarantine_reason, "");
}

TEST_F(RecoveryTest, BuildIdLearntAfterAFlashSparesTheFlashAfterARestart) {
  const std::filesystem::path elf = dir_ / "firmware.elf";
  std::ofstream(elf) << "ELF";
  board_.serial.firmware_elf = elf.string();
  board_.serial.flash.command = "echo flashing {elf}";
  testing::WriteScript(runner_, "exit 0\n");
  const std::string build = absl::StrCat("protocol-", link::kProtocolVersion, "-build");
  {
    auto first = Make();
    EXPECT_EQ(Job(*first).outcome, v1::RUN_OUTCOME_PASS);
    EXPECT_TRUE(HasLine("flash: flashing "));  // the build id was not known
    EXPECT_TRUE(HasLine(absl::StrCat("firmware ", elf.string(), " reports build ", build)));
  }
  const absl::StatusOr<BoardState> saved = LoadBoardState(BoardStatePath(dir_ / "state", "evk-0"));
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(saved->learnt_build_id, build);
  EXPECT_FALSE(saved->quarantined);

  absl::StatusOr<std::unique_ptr<SerialBoardExecutor>> restarted =
      SerialBoardExecutor::Create(io_, board_, runner_, &metrics_, dir_ / "state");
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  EXPECT_EQ(Job(**restarted).outcome, v1::RUN_OUTCOME_PASS);
  EXPECT_FALSE(HasLine("flash: flashing ")) << absl::StrJoin(lines_, "\n");
  EXPECT_EQ(Count("boardlab_agent_board_flashes_total{board=\"evk-0\",result=\"ok\"}"), 1);
}

TEST_F(RecoveryTest, UnreadableStateFileStopsTheAgentWithItsName) {
  const std::string path = BoardStatePath(dir_ / "state", "evk-0");
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << "{\"version\": 1, \"quarantined\": \"yes\"}";
  absl::StatusOr<std::unique_ptr<SerialBoardExecutor>> executor =
      SerialBoardExecutor::Create(io_, board_, runner_, &metrics_, dir_ / "state");
  ASSERT_FALSE(executor.ok());
  EXPECT_EQ(executor.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(executor.status().message(),
            absl::StrCat("Reading board state '", path,
                         "': unknown key or wrong type: 'quarantined' (move the file away: the "
                         "agent then knows nothing of the board and probes it afresh)"));
}

}  // namespace
}  // namespace boardlab::agent
