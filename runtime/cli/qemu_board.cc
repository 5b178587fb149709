#include "runtime/cli/qemu_board.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "boardlab/schema/program_generated.h"
#include "runtime/core/error.h"
#include "runtime/executor/program.h"

#ifndef BOARDLAB_FIRMWARE_ELF_PATH
#define BOARDLAB_FIRMWARE_ELF_PATH ""
#endif
#ifndef BOARDLAB_QEMU_RUNNER_PATH
#define BOARDLAB_QEMU_RUNNER_PATH ""
#endif

extern char** environ;

namespace boardlab::run {
namespace {

namespace rt = boardlab::runtime;

constexpr int kExitUsage = 2;
constexpr int kExitInvalidArtifact = 3;
constexpr int kExitRuntime = 4;
// firmware/run-qemu.sh: 5 = CPU fault (the firmware's fault handler), 124 = its own timeout.
constexpr int kRunnerFault = 5;
constexpr int kRunnerTimeout = 124;
// The firmware takes at most this many --input and --expected files (firmware/main.cc).
constexpr size_t kFirmwareMaxFiles = 8;

int Fail(int code, const std::string& message) {
  std::cerr << "boardlab-run: " << message << "\n";
  return code;
}

std::string FromEnvironmentOr(const char* name, const char* built_in) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : built_in;
}

bool IsFile(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Number of inputs of method "forward", read on the host so that missing inputs can be given as
// random:<index> exactly as on the host (the firmware would leave them zero). Returns the exit
// code of a failure, or -1 on success.
int CountInputs(const std::string& artifact, size_t& num_inputs) {
  std::ifstream in(artifact, std::ios::binary);
  if (!in) return Fail(kExitUsage, "reading artifact '" + artifact + "': cannot open it");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  // Program::Load wants max_align_t alignment; a vector of max_align_t provides it.
  std::vector<std::max_align_t> aligned(bytes.size() / sizeof(std::max_align_t) + 1);
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<uint8_t*>(aligned.data()));
  rt::Result<rt::Program> program =
      rt::Program::Load({reinterpret_cast<const uint8_t*>(aligned.data()), bytes.size()});
  if (!program.ok()) {
    return Fail(kExitInvalidArtifact, "invalid artifact '" + artifact +
                                          "': " + rt::ToString(program.error()) + ": " +
                                          rt::LastErrorMessage());
  }
  num_inputs = 0;
  const auto* plans = program->flatbuffer()->execution_plan();
  for (flatbuffers::uoffset_t i = 0; plans != nullptr && i < plans->size(); ++i) {
    const auto* plan = plans->Get(i);
    if (plan->name() != nullptr && plan->name()->str() == "forward" && plan->inputs() != nullptr) {
      num_inputs = plan->inputs()->size();
    }
  }
  return -1;
}

volatile sig_atomic_t g_interrupted = 0;
extern "C" void OnInterrupt(int) { g_interrupted = 1; }

// Stops the runner's whole process group (bash, timeout, QEMU): SIGTERM, then SIGKILL.
void KillGroup(pid_t pid) {
  ::kill(-pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    int status;
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);  // whatever is left of the group (QEMU may outlive the shell)
  int status;
  ::waitpid(pid, &status, 0);
}

}  // namespace

std::string FirmwareElfPath() {
  return FromEnvironmentOr("BOARDLAB_FIRMWARE_ELF", BOARDLAB_FIRMWARE_ELF_PATH);
}
std::string QemuRunnerPath() {
  return FromEnvironmentOr("BOARDLAB_QEMU_RUNNER", BOARDLAB_QEMU_RUNNER_PATH);
}

int RunOnQemu(const QemuRunOptions& options) {
  const std::string elf = FirmwareElfPath();
  const std::string runner = QemuRunnerPath();
  if (!IsFile(elf)) {
    return Fail(kExitRuntime, "board error: no firmware ELF" +
                                  (elf.empty() ? std::string() : " at '" + elf + "'") +
                                  " (build firmware/ with arm-none-eabi-gcc, or set "
                                  "BOARDLAB_FIRMWARE_ELF)");
  }
  if (runner.empty() || ::access(runner.c_str(), X_OK) != 0) {
    return Fail(kExitRuntime, "board error: no QEMU runner" +
                                  (runner.empty() ? std::string() : " at '" + runner + "'") +
                                  " (firmware/run-qemu.sh, or set BOARDLAB_QEMU_RUNNER)");
  }
  size_t num_inputs = 0;
  if (const int code = CountInputs(options.artifact, num_inputs); code >= 0) return code;
  if (std::max(num_inputs, options.inputs.size()) > kFirmwareMaxFiles ||
      options.expected.size() > kFirmwareMaxFiles) {
    return Fail(kExitUsage, "--board qemu: the firmware takes at most " +
                                std::to_string(kFirmwareMaxFiles) + " inputs and expected outputs");
  }

  // The runner's own timeout is a backstop for when boardlab-run itself dies; the deadline below
  // is the one that counts.
  const double timeout = options.timeout_seconds;
  std::vector<std::string> args = {runner,
                                   "--elf",
                                   elf,
                                   "--icount",
                                   options.icount,
                                   "--timeout",
                                   std::to_string(static_cast<long long>(std::ceil(timeout)) + 30),
                                   "--",
                                   options.artifact};
  for (size_t i = 0; i < std::max(num_inputs, options.inputs.size()); ++i) {
    args.push_back("--input");
    args.push_back(i < options.inputs.size() ? options.inputs[i] : "random:" + std::to_string(i));
  }
  for (const std::string& e : options.expected) {
    args.push_back("--expected");
    args.push_back(e);
  }
  if (!options.expected.empty()) {
    char atol[32];
    std::snprintf(atol, sizeof(atol), "%.17g", options.atol);
    args.push_back("--atol");
    args.push_back(atol);
  }
  if (!options.etdump.empty()) {
    args.push_back("--etdump");
    args.push_back(options.etdump);
  }
  if (!options.outputs_dir.empty()) {
    args.push_back("--outputs");
    args.push_back(options.outputs_dir);
  }
  if (options.iterations != 1) {
    args.push_back("--iterations");
    args.push_back(std::to_string(options.iterations));
  }

  std::string shown;
  for (const std::string& a : args) shown += (shown.empty() ? "" : " ") + a;
  std::cerr << "boardlab-run: board qemu: " << shown << "\n";
  std::cout.flush();
  std::fflush(stdout);
  std::fflush(stderr);

  // The runner in its own process group (so that a timeout can stop QEMU too), stdin from
  // /dev/null (a background group must not touch the terminal), stdout and stderr inherited: the
  // firmware's console streams straight through (to stderr when asked, for a JSON stdout).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (options.console_to_stderr) {
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawn_error = posix_spawn(&pid, runner.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawn_error != 0) {
    return Fail(kExitRuntime, "board error: cannot start '" + runner + "'");
  }

  // Ctrl-C / SIGTERM stop the runner's group too (it is not in the terminal's foreground group).
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  struct sigaction old_int, old_term;
  ::sigaction(SIGINT, &action, &old_int);
  ::sigaction(SIGTERM, &action, &old_term);

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(timeout);
  int status = 0;
  bool timed_out = false;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      status = -1;
      break;
    }
    if (g_interrupted || std::chrono::steady_clock::now() >= deadline) {
      timed_out = !g_interrupted;
      KillGroup(pid);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  std::fflush(stdout);

  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g", timeout);
  if (g_interrupted) return Fail(kExitRuntime, "board error: interrupted; QEMU stopped");
  if (timed_out) {
    return Fail(kExitRuntime, std::string("board error: the firmware timed out after ") + seconds +
                                  " s (--timeout); QEMU killed");
  }
  if (status == -1) return Fail(kExitRuntime, "board error: lost the QEMU runner");
  if (WIFSIGNALED(status)) {
    return Fail(kExitRuntime, "board error: the QEMU runner was killed by signal " +
                                  std::to_string(WTERMSIG(status)));
  }
  const int code = WEXITSTATUS(status);
  if (code <= kExitRuntime) return code;  // the firmware's verdict, as boardlab-run's
  if (code == kRunnerFault) return Fail(kExitRuntime, "board error: the firmware hit a CPU fault");
  if (code == kRunnerTimeout) {
    return Fail(kExitRuntime, "board error: the firmware timed out (run-qemu.sh's timeout)");
  }
  return Fail(kExitRuntime,
              "board error: the QEMU runner exited with status " + std::to_string(code));
}

}  // namespace boardlab::run
