// agent/board_probe.h: the serial driver's HELLO question on the agent's own io_context, against
// a real board endpoint (runtime/link/board_endpoint.h on a thread, the fake board of the link
// tests) behind a pseudo-terminal (the serial_port path) and behind a TCP socket (ser2net's);
// a port that refuses, closes at once or answers with another protocol version; a cancel. No
// thread of the agent's waits: everything runs on the test's io_context.

#include "agent/board_probe.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/link/messages.h"
#include "tests/agent/hello_board.h"
#include "tests/runtime/link/fd_relay.h"
#include "tests/runtime/link/link_test_support.h"
#include "tests/support/free_port.h"

namespace boardlab::agent {
namespace {

using Clock = std::chrono::steady_clock;
namespace lt = link::testing;

class BoardProbeTest : public ::testing::Test {
 protected:
  // Runs the probe of `port` to its answer (or a minute).
  BoardProbe Ask(const std::string& port, int timeout_seconds = 5,
                 std::function<void(BoardProbeCall&)> during = nullptr) {
    SerialBoardConfig serial;
    serial.port = port;
    serial.baud = 921600;
    serial.connect_timeout_seconds = timeout_seconds;
    std::optional<BoardProbe> answer;
    std::shared_ptr<BoardProbeCall> call =
        BoardProbeCall::Start(io_, serial, [&](BoardProbe probe) { answer = std::move(probe); });
    EXPECT_FALSE(answer.has_value());  // never from inside Start
    if (during) during(*call);
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
    while (!answer && Clock::now() < deadline) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(answer.has_value());
    return answer.value_or(BoardProbe{});
  }

  boost::asio::io_context io_;
};

TEST_F(BoardProbeTest, BoardBehindASerialPortAnswers) {
  lt::Pty pty;
  ASSERT_FALSE(pty.path.empty());
  lt::ByteChannel to_board, to_host;
  lt::FakeBoardOptions options;
  options.cache_bytes = 96 * 1024;
  lt::FakeBoard board(to_board, to_host, options);
  board.Start();
  lt::Relay relay(pty.board, to_board, to_host);
  const BoardProbe probe = Ask(pty.path);
  board.Stop();
  ASSERT_TRUE(probe.status.ok()) << probe.status;
  EXPECT_EQ(probe.board, "fake");
  EXPECT_EQ(probe.build_id, "test-build");
  EXPECT_EQ(probe.firmware_version, "9.8.7");
  EXPECT_EQ(probe.cache_capacity, 96u * 1024u);
  EXPECT_FALSE(probe.other_protocol);
}

// A board behind a TCP port; the port accepts and closes at once at first (a proxy or ser2net
// whose board end is still down), and is tried again until the board is there.
TEST_F(BoardProbeTest, BoardBehindATcpPortThatClosesAtFirstAnswers) {
  boardlab::testing::LoopbackListener listener;
  ASSERT_FALSE(listener.port().empty());
  lt::ByteChannel to_board, to_host;
  lt::FakeBoard board(to_board, to_host);
  board.Start();
  std::atomic<int> hung_up{0};
  std::atomic<bool> probed{false};  // the probe has its answer
  std::thread ser2net([&] {
    while (!probed) {
      pollfd ready = {listener.fd(), POLLIN, 0};
      if (::poll(&ready, 1, 50) != 1) continue;  // the probe may have given up
      const int fd = listener.Accept();
      if (fd < 0) return;
      if (hung_up < 2) {  // the board's end is down: the client is dropped
        ++hung_up;
        ::close(fd);
        continue;
      }
      {
        lt::Relay relay(fd, to_board, to_host);
        while (!probed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      ::close(fd);
      return;
    }
  });
  const BoardProbe probe = Ask(listener.port());
  probed = true;
  ser2net.join();
  board.Stop();
  ASSERT_TRUE(probe.status.ok()) << probe.status;
  EXPECT_EQ(probe.build_id, "test-build");
  EXPECT_EQ(hung_up, 2);
}

// Nothing listens: refused again and again until the timeout, then UNAVAILABLE with the reason.
TEST_F(BoardProbeTest, RefusedPortIsUnavailableAfterTheTimeout) {
  const std::string port = absl::StrCat("tcp:127.0.0.1:", boardlab::testing::FreeLoopbackPort());
  const Clock::time_point start = Clock::now();
  const BoardProbe probe = Ask(port, /*timeout_seconds=*/1);
  EXPECT_EQ(probe.status.code(), absl::StatusCode::kUnavailable) << probe.status;
  EXPECT_EQ(probe.status.message(), absl::StrCat("connecting to ", port, ": Connection refused"));
  EXPECT_GT(Clock::now() - start, std::chrono::milliseconds(700));  // it kept trying
}

TEST_F(BoardProbeTest, SilentBoardIsADeadlineWithAHint) {
  boardlab::testing::LoopbackListener silent;  // accepts in the kernel, never answers
  const Clock::time_point start = Clock::now();
  const BoardProbe probe = Ask(silent.port(), /*timeout_seconds=*/1);
  EXPECT_EQ(probe.status.code(), absl::StatusCode::kDeadlineExceeded) << probe.status;
  EXPECT_EQ(probe.status.message(),
            absl::StrCat("no HELLO from a board on ", silent.port(),
                         " within 1 s: is the board-link firmware running, and are the port and "
                         "baud rate right?"));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
}

TEST_F(BoardProbeTest, MissingSerialDeviceIsUnavailableWithTheReason) {
  const BoardProbe probe = Ask("/dev/serial/by-id/usb-NXP_MCU-Link-nonexistent", 1);
  EXPECT_EQ(probe.status.code(), absl::StatusCode::kUnavailable) << probe.status;
  EXPECT_NE(probe.status.message().find(
                "opening serial port '/dev/serial/by-id/usb-NXP_MCU-Link-nonexistent': "),
            std::string::npos)
      << probe.status;
}

TEST_F(BoardProbeTest, BoardOfAnotherProtocolSaysWhichItSpeaks) {
  testing::HelloBoard old_board(/*protocol_version=*/2, "rt700");
  const BoardProbe probe = Ask(old_board.port());
  EXPECT_EQ(probe.status.code(), absl::StatusCode::kFailedPrecondition) << probe.status;
  EXPECT_EQ(probe.status.message(),
            absl::StrCat("the board speaks board link protocol 2, this host ",
                         link::kProtocolVersion, ": flash a matching firmware"));
  EXPECT_TRUE(probe.other_protocol);
  EXPECT_EQ(probe.build_id, "protocol-2-build");
}

TEST_F(BoardProbeTest, CancelAnswersAtOnce) {
  boardlab::testing::LoopbackListener silent;
  Clock::time_point cancelled_at;
  const BoardProbe probe = Ask(silent.port(), /*timeout_seconds=*/30, [&](BoardProbeCall& call) {
    io_.run_for(std::chrono::milliseconds(300));  // connected, CONNECTs going out
    cancelled_at = Clock::now();
    call.Cancel();
  });
  EXPECT_EQ(probe.status.code(), absl::StatusCode::kCancelled) << probe.status;
  EXPECT_LT(Clock::now() - cancelled_at, std::chrono::milliseconds(200));
}

}  // namespace
}  // namespace boardlab::agent
