#pragma once

// A child process for tests that run the tools as users do and need them in the background (a
// server, an agent, a QEMU board): its own process group, killed with the test (PR_SET_PDEATHSIG).
//
//   absl::StatusOr<std::unique_ptr<Process>> board =
//       Process::Start({"/bin/sh", "firmware/qemu-board.sh", ...}, log, log);
//   (*board)->Terminate(std::chrono::seconds(5));     // SIGTERM to the group, then SIGKILL

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace boardlab::testing {

/// A child process. Destroying it kills its whole process group with SIGKILL and reaps it.
class Process {
 public:
  /// Starts argv (argv[0] is a path) with stdin from /dev/null, stdout appended to `stdout_path`
  /// and stderr to `stderr_path` (may be the same file). BOARDLAB_TOKEN, BOARDLAB_AGENT_TOKEN and
  /// BOARDLAB_SERVER are removed from its environment so that tests control them.
  static absl::StatusOr<std::unique_ptr<Process>> Start(const std::vector<std::string>& argv,
                                                        const std::string& stdout_path,
                                                        const std::string& stderr_path);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  /// True until the process has exited (reaps it when it has).
  bool Running();
  /// kill -9 of this process only (its children live on, as after a real crash), then reaps it.
  void Kill();
  /// The exit code (128 + signal when killed by one), or nullopt when it still runs at `timeout`.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  /// SIGTERM to the whole group (a script passes it on to what it started), then SIGKILL to the
  /// group if the process still runs after `grace`. Returns the exit code.
  int Terminate(std::chrono::milliseconds grace);

 private:
  explicit Process(pid_t pid) : pid_(pid) {}
  bool Reap(bool block);

  pid_t pid_;
  bool reaped_ = false;
  bool killed_ = false;  // by Kill(): its group may hold orphans to clean up
  int exit_code_ = -1;
};

}  // namespace boardlab::testing
