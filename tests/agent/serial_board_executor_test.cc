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
#include "tests/support/free_port.h"

namespace boardlab::agent {
namespace {

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

// A board that answers every CONNECT with a HELLO of `protocol_version` naming itself `board`,
// on a loopback TCP port, as a firmware behind ser2net: protocol 1 is an old firmware (before
// CHECK messages).
class HelloBoard {
 public:
  HelloBoard(uint8_t protocol_version, std::string board)
      : protocol_version_(protocol_version), board_(std::move(board)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~HelloBoard() {
    stop_ = true;
    thread_.join();
  }
  const std::string& port() const { return listener_.port(); }

 private:
  void Loop() {
    while (!stop_) {
      pollfd p = {listener_.fd(), POLLIN, 0};
      if (::poll(&p, 1, 50) != 1) continue;
      const int fd = listener_.Accept();
      if (fd >= 0) Serve(fd);
    }
  }
  void Serve(int fd) {
    uint8_t buffer[1024];
    link::FrameDecoder decoder(buffer, sizeof(buffer));
    while (!stop_) {
      pollfd p = {fd, POLLIN, 0};
      if (::poll(&p, 1, 50) != 1) continue;
      uint8_t bytes[256];
      const ssize_t n = ::read(fd, bytes, sizeof(bytes));
      if (n <= 0) break;
      for (size_t at = 0; at < static_cast<size_t>(n);) {
        at += decoder.Feed(bytes + at, static_cast<size_t>(n) - at);
        if (decoder.frame() == nullptr) continue;
        link::Connect connect;
        if (decoder.frame()->type == link::FrameType::kConnect &&
            link::Decode(decoder.frame()->payload, decoder.frame()->size, &connect)) {
          SendHello(fd, connect.nonce);
        }
        decoder.Consume();
      }
    }
    ::close(fd);
  }
  void SendHello(int fd, uint32_t nonce) const {
    link::Hello hello;
    hello.protocol_version = protocol_version_;
    hello.session = nonce;
    std::snprintf(hello.board, sizeof(hello.board), "%s", board_.c_str());
    std::strcpy(hello.firmware_version, "0.1.0");
    std::snprintf(hello.build_id, sizeof(hello.build_id), "protocol-%u-build",
                  unsigned{protocol_version_});
    uint8_t payload[link::kMinPayloadLimit];
    const size_t size = link::Encode(hello, payload, sizeof(payload));
    uint8_t frame[link::kMinPayloadLimit + link::kFrameOverhead];
    const size_t bytes =
        link::EncodeFrame(link::FrameType::kHello, 0, payload, size, frame, sizeof(frame));
    if (::write(fd, frame, bytes) != static_cast<ssize_t>(bytes)) return;
  }

  const uint8_t protocol_version_;
  const std::string board_;
  boardlab::testing::LoopbackListener listener_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A firmware of another protocol version cannot be reset into working: the agent flashes it,
// and a flash that leaves it speaking the old protocol counts as a failed flash.
TEST_F(SerialExecutorTest, FirmwareOfAnotherProtocolIsFlashedNotReset) {
  HelloBoard old_board(/*protocol_version=*/1, "rt700");
  ASSERT_FALSE(old_board.port().empty());
  board_.serial.port = old_board.port();
  board_.serial.connect_timeout_seconds = 3;
  const std::filesystem::path elf = dir_ / "firmware.elf";
  std::ofstream(elf) << "ELF";
  board_.serial.firmware_elf = elf.string();
  board_.serial.firmware_build_id = "protocol-2-build";
  board_.serial.flash.command = "echo flashing {elf}";
  board_.serial.flash_attempts = 2;
  SerialBoardExecutor executor(io_, board_, "/bin/false", &metrics_, dir_ / "fw");
  const BoardReport r = RunOn(executor, Request());
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  const std::string mismatch = absl::StrCat("the board speaks board link protocol 1, this host ",
                                            link::kProtocolVersion, ": flash a matching firmware");
  EXPECT_TRUE(HasLine(absl::StrCat("boardlab-agent: board evk-0 runs build protocol-1-build: ",
                                   mismatch, "; flashing ", elf.string())));
  EXPECT_EQ(r.message,
            absl::StrCat("board evk-0 quarantined by the agent: flashing failed 2 times; last: "
                         "after flashing, ",
                         mismatch));
  EXPECT_EQ(Count("boardlab_agent_board_flashes_total{board=\"evk-0\",result=\"ok\"}"), 2);
  EXPECT_EQ(Count("boardlab_agent_board_recovery_steps_total{board=\"evk-0\",step=\"reset\"}"), 0);
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
    std::unique_ptr<BoardRun> run;
    std::optional<BoardReport> report;
    run = executor.Start(
        Request(), [](std::string) {}, [&](BoardReport r) { report = r; });
    // Cancelled once the probe has been waiting for a while.
    boost::asio::steady_timer timer(io_, std::chrono::milliseconds(700));
    std::chrono::steady_clock::time_point cancelled_at;
    timer.async_wait([&](boost::system::error_code) {
      cancelled_at = std::chrono::steady_clock::now();
      run->Cancel();
    });
    RunIoUntil([&] { return report.has_value(); });
    ASSERT_TRUE(report.has_value());
    EXPECT_EQ(report->outcome, v1::RUN_OUTCOME_CANCELLED);
    EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, std::chrono::milliseconds(1500));
    EXPECT_FALSE(executor.quarantined());
  }
}

}  // namespace
}  // namespace boardlab::agent
