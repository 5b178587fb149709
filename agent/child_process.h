#pragma once

// A child process driven by a Boost.Asio io_context: its stdout and stderr are read as lines
// while it runs, it is killed (its whole process group) on a deadline or on request, and the
// agent never blocks on it. A crashing or hanging runner therefore cannot take the agent down.
//
//   auto child = ChildProcess::Start(io, {.argv = {"/bin/echo", "hi"}},
//       [](std::string line) { ... },                         // stdout lines
//       [](std::string line) { ... },                         // stderr lines
//       [](const ChildExit& exit) { ... });                   // once, at the end
//   child->Kill();   // SIGKILL to the group; on_exit follows with kind kKilled
//
// The child runs in its own process group with stdin from /dev/null (or a pipe fed by Write(),
// for a runner that takes requests: boardlab-run --serve) and dies with the agent
// (PR_SET_PDEATHSIG; it fires when the *thread* that forked exits, which is why children are
// only started from the io_context thread, the agent's main thread). Exit is noticed when the
// child's pidfd (pidfd_open, Linux >= 5.3) turns readable, where the kernel has none by polling
// waitpid every 50 ms; never by a SIGCHLD handler, which would steal other children's exits from
// libraries and tests.

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace boardlab::agent {

/// Lines longer than this are split (a runaway child cannot grow the agent's memory).
inline constexpr size_t kMaxLineBytes = 4096;

struct ChildOptions {
  std::vector<std::string> argv;           // argv[0] is the program path (no PATH lookup)
  std::chrono::milliseconds timeout{0};    // 0 = none
  bool stdin_pipe = false;                 // stdin is a pipe fed by Write(), not /dev/null
  size_t max_stdout_line = kMaxLineBytes;  // a runner's one-line JSON answer may be longer
  bool poll_exit = false;  // poll waitpid even with a pidfd (tests of old kernels' way)
};

struct ChildExit {
  enum class Kind {
    kExited,       // exit_code is valid
    kSignaled,     // the child died of signal `signal` (not ours)
    kTimedOut,     // we killed it at the deadline
    kKilled,       // we killed it on Kill()
    kStartFailed,  // fork or exec failed; `error` says why
  };
  Kind kind = Kind::kStartFailed;
  int exit_code = -1;
  int signal = 0;
  std::string error;
  double seconds = 0;  // from start to exit
};

/// How a child ended, for messages: "exit status 1", "died of signal 11 (SIGSEGV)", "timed out
/// after 30s (killed)" (with the deadline it was given), "killed", "could not start: ...".
std::string DescribeChildExit(const ChildExit& exit, int timeout_seconds);

class ChildProcess : public std::enable_shared_from_this<ChildProcess> {
 public:
  using LineFn = std::function<void(std::string line)>;
  using ExitFn = std::function<void(const ChildExit& exit)>;

  /// Starts the child. The callbacks run on `io`'s thread, never inside Start(); on_exit runs
  /// exactly once, after the last line, unless Detach() was called. `io` must outlive the child.
  static std::shared_ptr<ChildProcess> Start(boost::asio::io_context& io, ChildOptions options,
                                             LineFn on_stdout, LineFn on_stderr, ExitFn on_exit);

  ~ChildProcess();

  /// SIGKILL to the child's process group; on_exit follows with Kind::kKilled.
  void Kill();
  /// Kills the child and drops the callbacks: nothing is called any more.
  void Detach();
  /// Queues `data` for the child's stdin (ChildOptions::stdin_pipe). Data for a child that has
  /// exited is dropped: its exit is reported through on_exit. SIGPIPE is ignored in this process
  /// once a child has a stdin pipe (a write to a dead child must fail, not kill the agent).
  void Write(std::string data);

  pid_t pid() const { return pid_; }

 private:
  explicit ChildProcess(boost::asio::io_context& io);
  void Spawn(const ChildOptions& options);
  void WriteMore();
  void ReadMore(int which);
  void OnData(int which, const char* data, size_t size);
  void WatchExit(bool poll);
  void WaitExitFd();
  void PollExit();
  bool Reap();  // true once the child has exited (and is reaped)
  void KillGroup(ChildExit::Kind reason);
  void MaybeFinish();

  boost::asio::io_context& io_;
  boost::asio::posix::stream_descriptor out_;
  boost::asio::posix::stream_descriptor err_;
  boost::asio::posix::stream_descriptor in_;
  boost::asio::posix::stream_descriptor exit_fd_;  // the child's pidfd
  std::deque<std::string> writes_;                 // front() is being written
  size_t max_line_[2] = {kMaxLineBytes, kMaxLineBytes};
  boost::asio::steady_timer poll_timer_;
  boost::asio::steady_timer deadline_timer_;
  boost::asio::steady_timer grace_timer_;
  std::chrono::steady_clock::time_point start_;
  pid_t pid_ = -1;
  bool exited_ = false;
  bool open_[2] = {false, false};
  char read_buffer_[2][4096];
  std::string partial_[2];
  ChildExit::Kind kill_reason_ = ChildExit::Kind::kExited;  // kExited: not killed by us
  ChildExit exit_;
  bool finished_ = false;
  LineFn on_line_[2];
  ExitFn on_exit_;
};

}  // namespace boardlab::agent
