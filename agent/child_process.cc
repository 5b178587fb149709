#include "agent/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"

namespace boardlab::agent {
namespace {

// Where the kernel has no pidfd_open (Linux < 5.3), how often waitpid looks for the exit.
constexpr auto kPollInterval = std::chrono::milliseconds(50);
// After the child exited, how long its pipes may stay open (a grandchild still holding them)
// before the agent stops reading.
constexpr auto kPipeGrace = std::chrono::seconds(1);

void IgnoreSigpipe() {
  static std::once_flag once;
  std::call_once(once, [] { ::signal(SIGPIPE, SIG_IGN); });
}

}  // namespace

std::string DescribeChildExit(const ChildExit& exit, int timeout_seconds) {
  switch (exit.kind) {
    case ChildExit::Kind::kExited:
      return absl::StrCat("exit status ", exit.exit_code);
    case ChildExit::Kind::kSignaled: {
      const char* name = sigabbrev_np(exit.signal);
      return absl::StrCat("died of signal ", exit.signal,
                          name != nullptr ? absl::StrCat(" (SIG", name, ")") : "");
    }
    case ChildExit::Kind::kTimedOut:
      return absl::StrCat("timed out after ", timeout_seconds, "s (killed)");
    case ChildExit::Kind::kKilled:
      return "killed";
    case ChildExit::Kind::kStartFailed:
      return absl::StrCat("could not start: ", exit.error);
  }
  return "ended in an unknown way";
}

ChildProcess::ChildProcess(boost::asio::io_context& io)
    : io_(io),
      out_(io),
      err_(io),
      in_(io),
      exit_fd_(io),
      poll_timer_(io),
      deadline_timer_(io),
      grace_timer_(io),
      start_(std::chrono::steady_clock::now()) {}

ChildProcess::~ChildProcess() {
  // Only reached once no handler holds the child any more; if it still runs (the io_context was
  // stopped), do not leave it behind.
  if (pid_ > 0 && !exited_) {
    ::kill(-pid_, SIGKILL);
    int status;
    ::waitpid(pid_, &status, 0);
  }
}

std::shared_ptr<ChildProcess> ChildProcess::Start(boost::asio::io_context& io, ChildOptions options,
                                                  LineFn on_stdout, LineFn on_stderr,
                                                  ExitFn on_exit) {
  std::shared_ptr<ChildProcess> child(new ChildProcess(io));
  child->on_line_[0] = std::move(on_stdout);
  child->on_line_[1] = std::move(on_stderr);
  child->on_exit_ = std::move(on_exit);
  child->Spawn(options);
  return child;
}

void ChildProcess::Spawn(const ChildOptions& options) {
  auto fail = [this](std::string error) {
    exit_.kind = ChildExit::Kind::kStartFailed;
    exit_.error = std::move(error);
    exited_ = true;
    boost::asio::post(io_, [self = shared_from_this()] { self->MaybeFinish(); });
  };
  if (options.argv.empty()) return fail("no program given");

  // Everything the child needs is prepared before fork(): after it, only async-signal-safe calls.
  std::vector<std::string> args = options.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int in[2] = {-1, -1};
  if (options.stdin_pipe) {
    IgnoreSigpipe();
    if (::pipe2(in, O_CLOEXEC) != 0) return fail(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  const auto close_in = [&in] {
    for (int fd : in) {
      if (fd >= 0) ::close(fd);
    }
  };
  int out[2], err[2], status_pipe[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    close_in();
    return fail(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    close_in();
    return fail(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    close_in();
    return fail(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the agent died before prctl took effect
    const int stdin_fd = in[0] >= 0 ? in[0] : ::open("/dev/null", O_RDONLY);
    if (stdin_fd >= 0) ::dup2(stdin_fd, STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    // Nothing else of the agent's reaches the child: Boost.Asio opens sockets and serial ports
    // without O_CLOEXEC, and a child that kept a board's TCP connection or tty open (a
    // long-lived `boardlab-run --serve`, a flash tool) would hold the board's only client slot
    // after the agent closed its end. Marked close-on-exec, so the status pipe still works.
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      for (int fd = 3; fd < 65536; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // kernel < 5.11
    }
    // Signals the agent ignores or handles must not be inherited that way.
    ::signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(argv[0], argv.data());
    const int e = errno;
    ssize_t ignored = ::write(status_pipe[1], &e, sizeof(e));
    (void)ignored;
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  ::close(status_pipe[1]);
  if (in[0] >= 0) ::close(in[0]);
  in[0] = -1;
  if (pid < 0) {
    for (int fd : {out[0], err[0], status_pipe[0]}) ::close(fd);
    close_in();
    return fail(absl::StrCat("fork: ", std::strerror(errno)));
  }
  pid_ = pid;
  ::setpgid(pid, pid);  // also here, so that a Kill() right away reaches the group
  // The status pipe closes on a successful exec (CLOEXEC) or carries exec's errno.
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(status_pipe[0], &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
    int status;
    ::waitpid(pid, &status, 0);
    ::close(out[0]);
    ::close(err[0]);
    close_in();
    exited_ = true;
    exit_.kind = ChildExit::Kind::kStartFailed;
    exit_.error = absl::StrCat("cannot run '", options.argv[0], "': ", std::strerror(exec_errno));
    boost::asio::post(io_, [self = shared_from_this()] { self->MaybeFinish(); });
    return;
  }
  out_.assign(out[0]);
  err_.assign(err[0]);
  if (in[1] >= 0) in_.assign(in[1]);
  max_line_[0] = std::max<size_t>(1, options.max_stdout_line);
  open_[0] = open_[1] = true;
  ReadMore(0);
  ReadMore(1);
  WatchExit(options.poll_exit);
  if (options.timeout.count() > 0) {
    deadline_timer_.expires_after(options.timeout);
    deadline_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec && !self->exited_) self->KillGroup(ChildExit::Kind::kTimedOut);
    });
  }
}

void ChildProcess::Write(std::string data) {
  if (!in_.is_open() || exited_) return;
  writes_.push_back(std::move(data));
  if (writes_.size() == 1) WriteMore();
}

void ChildProcess::WriteMore() {
  boost::asio::async_write(
      in_, boost::asio::buffer(writes_.front()),
      [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
        // A child that stopped reading (EPIPE) ends on its own; on_exit says how.
        if (ec) {
          self->writes_.clear();
          return;
        }
        self->writes_.pop_front();
        if (!self->writes_.empty()) self->WriteMore();
      });
}

void ChildProcess::ReadMore(int which) {
  auto& pipe = which == 0 ? out_ : err_;
  pipe.async_read_some(
      boost::asio::buffer(read_buffer_[which]),
      [self = shared_from_this(), which](const boost::system::error_code& ec, size_t size) {
        if (size > 0) self->OnData(which, self->read_buffer_[which], size);
        if (ec) {
          if (!self->partial_[which].empty()) {
            std::string rest = std::move(self->partial_[which]);
            self->partial_[which].clear();
            if (self->on_line_[which]) self->on_line_[which](std::move(rest));
          }
          self->open_[which] = false;
          self->MaybeFinish();
          return;
        }
        self->ReadMore(which);
      });
}

void ChildProcess::OnData(int which, const char* data, size_t size) {
  std::string& partial = partial_[which];
  for (size_t i = 0; i < size; ++i) {
    const char c = data[i];
    if (c == '\n' || partial.size() >= max_line_[which]) {
      if (!partial.empty() && partial.back() == '\r') partial.pop_back();
      std::string line = std::move(partial);
      partial.clear();
      if (on_line_[which]) on_line_[which](std::move(line));
      if (c == '\n') continue;
    }
    partial.push_back(c);
  }
}

// A pidfd turns readable when the child exits: the io_context wakes then, not on a timer.
void ChildProcess::WatchExit(bool poll) {
  const int pidfd = poll ? -1 : static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd < 0) return PollExit();
  boost::system::error_code error;
  exit_fd_.assign(pidfd, error);
  if (error) {
    ::close(pidfd);
    return PollExit();
  }
  WaitExitFd();
}

void ChildProcess::WaitExitFd() {
  exit_fd_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                      [self = shared_from_this()](const boost::system::error_code& ec) {
                        if (ec) return;
                        if (!self->Reap()) self->WaitExitFd();
                      });
}

void ChildProcess::PollExit() {
  if (Reap()) return;
  poll_timer_.expires_after(kPollInterval);
  poll_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->PollExit();
  });
}

bool ChildProcess::Reap() {
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done != pid_ && !(done < 0 && errno == ECHILD)) return false;
  exited_ = true;
  exit_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  deadline_timer_.cancel();
  if (kill_reason_ != ChildExit::Kind::kExited) {
    exit_.kind = kill_reason_;
  } else if (done == pid_ && WIFEXITED(status)) {
    exit_.kind = ChildExit::Kind::kExited;
    exit_.exit_code = WEXITSTATUS(status);
  } else if (done == pid_ && WIFSIGNALED(status)) {
    exit_.kind = ChildExit::Kind::kSignaled;
    exit_.signal = WTERMSIG(status);
  } else {
    exit_.kind = ChildExit::Kind::kSignaled;
    exit_.error = "lost the child's exit status";
  }
  // Whatever the child left in its group goes with it.
  ::kill(-pid_, SIGKILL);
  boost::system::error_code ignored;
  in_.close(ignored);
  exit_fd_.close(ignored);
  grace_timer_.expires_after(kPipeGrace);
  grace_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    boost::system::error_code ignored;
    if (self->open_[0]) self->out_.close(ignored);
    if (self->open_[1]) self->err_.close(ignored);
  });
  MaybeFinish();
  return true;
}

void ChildProcess::KillGroup(ChildExit::Kind reason) {
  if (exited_ || pid_ <= 0) return;
  if (kill_reason_ == ChildExit::Kind::kExited) kill_reason_ = reason;
  ::kill(-pid_, SIGKILL);
}

void ChildProcess::Kill() { KillGroup(ChildExit::Kind::kKilled); }

void ChildProcess::Detach() {
  on_line_[0] = nullptr;
  on_line_[1] = nullptr;
  on_exit_ = nullptr;
  KillGroup(ChildExit::Kind::kKilled);
}

void ChildProcess::MaybeFinish() {
  if (finished_ || !exited_ || open_[0] || open_[1]) return;
  finished_ = true;
  grace_timer_.cancel();
  poll_timer_.cancel();
  boost::system::error_code ignored;
  exit_fd_.close(ignored);
  if (on_exit_) {
    ExitFn on_exit = std::move(on_exit_);
    on_exit_ = nullptr;
    on_line_[0] = on_line_[1] = nullptr;
    on_exit(exit_);
  }
}

}  // namespace boardlab::agent
