// agent/child_process.h: what a child inherits from the agent, and how its end is noticed.

#include "agent/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace boardlab::agent {
namespace {

// A socket opened as Boost.Asio opens a board's TCP connection (no close-on-exec) must not live
// on in a child: a long-lived child would keep the board's only client slot (QEMU's UART
// chardev, ser2net) after the agent closed its end. The child lists its own descriptors.
TEST(ChildProcessTest, DescriptorsOfTheAgentDoNotReachTheChild) {
  // Far above what the child opens itself (ls's directory takes the lowest free number).
  const int socket_fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(socket_fd, 3);
  const int leaky = ::dup2(socket_fd, 200);
  ::close(socket_fd);
  ASSERT_EQ(leaky, 200);
  ASSERT_EQ(::fcntl(leaky, F_GETFD) & FD_CLOEXEC, 0);
  boost::asio::io_context io;
  std::vector<std::string> fds;
  std::optional<ChildExit> exit;
  auto child = ChildProcess::Start(
      io, {.argv = {"/bin/ls", "/proc/self/fd"}}, [&](std::string line) { fds.push_back(line); },
      [](std::string) {}, [&](const ChildExit& e) { exit = e; });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!exit && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_for(std::chrono::milliseconds(20));
  }
  ::close(leaky);
  ASSERT_TRUE(exit.has_value());
  ASSERT_EQ(exit->kind, ChildExit::Kind::kExited);
  EXPECT_EQ(exit->exit_code, 0);
  // stdin, stdout, stderr and the directory ls reads: nothing of the agent's.
  for (const std::string& fd : fds) {
    EXPECT_NE(fd, absl::StrCat(leaky)) << "the child inherited the agent's socket";
  }
  EXPECT_GE(fds.size(), 3u);
}

// Runs `options`' child to its end (at most 30 s), Kill()ing it first when `kill` is set.
ChildExit RunToExit(ChildOptions options, bool kill = false) {
  boost::asio::io_context io;
  std::optional<ChildExit> exit;
  auto child = ChildProcess::Start(
      io, std::move(options), [](std::string) {}, [](std::string) {},
      [&](const ChildExit& e) { exit = e; });
  if (kill) child->Kill();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!exit && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(exit.has_value()) << "the child's end was not reported in 30 s";
  return exit.value_or(ChildExit());
}

// Each way a child ends, noticed through its pidfd and (GetParam()) by polling waitpid, the
// way of kernels without pidfd_open.
class ChildExitTest : public ::testing::TestWithParam<bool> {
 protected:
  ChildOptions Options(std::vector<std::string> argv) const {
    return {.argv = std::move(argv), .poll_exit = GetParam()};
  }
};

TEST_P(ChildExitTest, AnExitStatusIsReported) {
  const ChildExit exit = RunToExit(Options({"/bin/sh", "-c", "exit 3"}));
  EXPECT_EQ(exit.kind, ChildExit::Kind::kExited);
  EXPECT_EQ(exit.exit_code, 3);
}

TEST_P(ChildExitTest, ADeathBySignalIsReported) {
  const ChildExit exit = RunToExit(Options({"/bin/sh", "-c", "kill -SEGV $$"}));
  EXPECT_EQ(exit.kind, ChildExit::Kind::kSignaled);
  EXPECT_EQ(exit.signal, SIGSEGV);
}

TEST_P(ChildExitTest, AChildPastItsDeadlineIsKilled) {
  ChildOptions options = Options({"/bin/sleep", "30"});
  options.timeout = std::chrono::milliseconds(100);
  const ChildExit exit = RunToExit(options);
  EXPECT_EQ(exit.kind, ChildExit::Kind::kTimedOut);
  EXPECT_LT(exit.seconds, 10);
}

TEST_P(ChildExitTest, KillEndsTheChild) {
  const ChildExit exit = RunToExit(Options({"/bin/sleep", "30"}), /*kill=*/true);
  EXPECT_EQ(exit.kind, ChildExit::Kind::kKilled);
  EXPECT_LT(exit.seconds, 10);
}

INSTANTIATE_TEST_SUITE_P(PidfdAndPolling, ChildExitTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Polling" : "Pidfd"; });

// A child's end is noticed when it happens, not at the next of the 50 ms polls: the child
// writes a line and exits at once, and its end is reported right after the line (a poll would
// notice it up to 50 ms later; the child lives past the first poll, at its start).
TEST(ChildProcessTest, AnExitIsNoticedWithoutWaitingForAPoll) {
  std::vector<double> delays;
  for (int i = 0; i < 9; ++i) {
    boost::asio::io_context io;
    std::chrono::steady_clock::time_point line_at, exit_at;
    bool ended = false;
    auto child = ChildProcess::Start(
        io, {.argv = {"/bin/sh", "-c", "sleep 0.1; echo done"}},
        [&](std::string) { line_at = std::chrono::steady_clock::now(); }, [](std::string) {},
        [&](const ChildExit&) {
          exit_at = std::chrono::steady_clock::now();
          ended = true;
        });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ended && std::chrono::steady_clock::now() < deadline) {
      io.restart();
      io.run_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(ended);
    delays.push_back(std::chrono::duration<double>(exit_at - line_at).count());
  }
  std::sort(delays.begin(), delays.end());
  EXPECT_LT(delays[delays.size() / 2], 0.02) << "median seconds from the last line to the end";
}

}  // namespace
}  // namespace boardlab::agent
