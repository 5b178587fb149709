// agent/child_process.h: what a child inherits from the agent.

#include "agent/child_process.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

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

}  // namespace
}  // namespace boardlab::agent
