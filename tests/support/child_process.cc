#include "tests/support/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace boardlab::testing {
namespace {

// Environment of the children: the caller's, without the variables tests must control.
std::vector<std::string> ChildEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry = *e;
    if (entry.starts_with("BOARDLAB_TOKEN=") || entry.starts_with("BOARDLAB_AGENT_TOKEN=") ||
        entry.starts_with("BOARDLAB_SERVER=")) {
      continue;
    }
    env.push_back(std::move(entry));
  }
  return env;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Process>> Process::Start(const std::vector<std::string>& argv,
                                                        const std::string& stdout_path,
                                                        const std::string& stderr_path) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command line");
  if (::access(argv[0].c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("'", argv[0], "' is not an executable file"));
  }
  // Everything the child needs is prepared before fork(): after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env_strings = ChildEnvironment();
  std::vector<char*> env;
  for (const std::string& entry : env_strings) env.push_back(const_cast<char*>(entry.c_str()));
  env.push_back(nullptr);
  const int out = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int err =
      stderr_path == stdout_path
          ? out
          : ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out < 0 || err < 0 || in < 0) {
    for (int fd : {out, err, in}) {
      if (fd >= 0) ::close(fd);
    }
    return absl::InternalError(absl::StrCat("cannot open the log files of '", argv[0], "'"));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the test died before prctl
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  ::close(in);
  ::close(out);
  if (err != out) ::close(err);
  if (pid < 0) return absl::InternalError(absl::StrCat("fork failed: ", std::strerror(errno)));
  ::setpgid(pid, pid);  // also here, so that the group exists before we may signal it
  return std::unique_ptr<Process>(new Process(pid));
}

Process::~Process() {
  if (!reaped_ || killed_) ::kill(-pid_, SIGKILL);
  if (!reaped_) Reap(/*block=*/true);
}

bool Process::Reap(bool block) {
  if (reaped_) return true;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid_) return false;
  reaped_ = true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return true;
}

bool Process::Running() { return !Reap(/*block=*/false); }

void Process::Kill() {
  if (reaped_) return;
  ::kill(pid_, SIGKILL);
  killed_ = true;
  Reap(/*block=*/true);
}

std::optional<int> Process::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (!Reap(/*block=*/false)) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
  return exit_code_;
}

int Process::Terminate(std::chrono::milliseconds grace) {
  if (!reaped_) {
    ::kill(-pid_, SIGTERM);
    if (!Wait(grace)) Kill();
  }
  ::kill(-pid_, SIGKILL);  // whatever of the group outlived its leader
  return exit_code_;
}

}  // namespace boardlab::testing
