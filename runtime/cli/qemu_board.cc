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
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cli/model_io.h"
#include "runtime/cli/run_cases.h"

#ifndef BOARDLAB_FIRMWARE_ELF_PATH
#define BOARDLAB_FIRMWARE_ELF_PATH ""
#endif
#ifndef BOARDLAB_QEMU_RUNNER_PATH
#define BOARDLAB_QEMU_RUNNER_PATH ""
#endif

extern char** environ;

namespace boardlab::run {
namespace {

namespace fs = std::filesystem;

constexpr int kExitPass = 0;
constexpr int kExitMismatch = 1;
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

// The model's tensors, read on the host so that missing inputs can be given as random:<index>
// exactly as on the host (the firmware would leave them zero) and the cases' outputs read back.
// Returns the exit code of a failure, or -1 on success.
int ReadModelIo(const std::string& artifact, ModelIo& io) {
  std::ifstream in(artifact, std::ios::binary);
  if (!in) return Fail(kExitUsage, "reading artifact '" + artifact + "': cannot open it");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  std::string error;
  if (!ReadArtifactIo(bytes.data(), bytes.size(), &io, &error)) {
    return Fail(kExitInvalidArtifact, "invalid artifact '" + artifact + "': " + error);
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

// Runs the firmware under QEMU with `args` and maps how it ended to boardlab-run's exit code.
int RunFirmware(const std::string& runner, std::vector<std::string>& args,
                const QemuRunOptions& options) {
  const double timeout = options.timeout_seconds;
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

// The files of a run of many cases on the firmware (firmware/main.cc CaseReader): the case list
// it reads, the results it writes and, unless --outputs is given, its outputs (read back for the
// top-1), in a temporary directory that goes with this object.
class FirmwareCaseFiles {
 public:
  FirmwareCaseFiles() = default;
  ~FirmwareCaseFiles() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  FirmwareCaseFiles(const FirmwareCaseFiles&) = delete;
  FirmwareCaseFiles& operator=(const FirmwareCaseFiles&) = delete;

  // Writes the case list, makes each case's output directory and adds the firmware's options
  // to `args`. False, with `error`, when a file or directory cannot be made.
  bool Prepare(const QemuRunOptions& options, std::vector<std::string>& args, std::string& error) {
    std::string pattern = (fs::temp_directory_path() / "boardlab-run-cases-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      error = "cannot create a temporary directory for the case list";
      return false;
    }
    dir_ = pattern;
    outputs_ =
        options.outputs_dir.empty() ? (fs::path(dir_) / "outputs").string() : options.outputs_dir;
    std::ofstream list(fs::path(dir_) / "cases.txt", std::ios::trunc);
    for (const CaseFiles& c : options.cases) {
      list << "case " << c.name << "\n";
      for (const std::string& input : c.inputs) list << "input " << input << "\n";
      for (const std::string& expected : c.expected) list << "expected " << expected << "\n";
      std::error_code ec;
      fs::create_directories(fs::path(outputs_) / c.name, ec);  // semihosting cannot mkdir
      if (ec) {
        error = "cannot create '" + (fs::path(outputs_) / c.name).string() + "': " + ec.message();
        return false;
      }
    }
    if (!list.flush()) {
      error = "cannot write the case list in '" + dir_ + "'";
      return false;
    }
    args.insert(args.end(), {"--cases", (fs::path(dir_) / "cases.txt").string(), "--case-results",
                             results(), "--outputs", outputs_});
    return true;
  }

  std::string results() const { return (fs::path(dir_) / "results.tsv").string(); }
  const std::string& outputs() const { return outputs_; }

 private:
  std::string dir_;
  std::string outputs_;
};

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) {
    fields.push_back(line.substr(start, tab - start));
  }
  fields.push_back(line.substr(start));
  return fields;
}

// One output field of a results line: "-", "error" or "pass|fail:DIFF:MISMATCHES:ELEMENTS".
OutputVerdict ParseOutputField(const std::string& field) {
  OutputVerdict verdict;
  if (field == "-") return verdict;
  verdict.checked = true;
  char pass[8] = {};
  unsigned long long mismatches = 0, elements = 0;
  if (std::sscanf(field.c_str(), "%7[a-z]:%lf:%llu:%llu", pass, &verdict.max_abs_diff, &mismatches,
                  &elements) != 4) {
    verdict.error = "the verifier could not compare the output";
    return verdict;
  }
  verdict.pass = std::string(pass) == "pass";
  verdict.mismatches = mismatches;
  verdict.elements = elements;
  return verdict;
}

std::string ReadWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The firmware's line for case `c` (NAME EXIT OUTPUT_TICKS NS EARLY_INFERENCES EARLY_TICKS
// EARLY_NS OUTPUTS..., firmware/main.cc) with the top-1 from its output file; the files' paths
// only when they stay (--outputs). False when the line is not the case's. The ticks are QEMU's,
// not the Cortex-M33's time, so no microseconds.
bool ReadCaseLine(const std::string& line, const CaseFiles& c, const ModelIo& io,
                  const FirmwareCaseFiles& files, bool outputs_stay, CaseOutcome& outcome) {
  constexpr size_t kFirstOutput = 7;
  const std::vector<std::string> fields = SplitTabs(line);
  if (fields.size() < kFirstOutput || fields[0] != c.name) return false;
  outcome.name = c.name;
  outcome.ticks = std::strtoull(fields[2].c_str(), nullptr, 10);
  outcome.early_inferences = static_cast<uint32_t>(std::strtoul(fields[4].c_str(), nullptr, 10));
  outcome.early_ticks = std::strtoull(fields[5].c_str(), nullptr, 10);
  outcome.no_output = fields[1] == "no_output";
  for (size_t i = kFirstOutput; i < fields.size(); ++i) {
    outcome.outputs.push_back(ParseOutputField(fields[i]));
  }
  const fs::path dir = fs::path(files.outputs()) / c.name;
  outcome.detail = OutputsJson(outcome.outputs);
  for (size_t i = 0; outputs_stay && i < outcome.detail.size(); ++i) {
    outcome.detail[i]["path"] = (dir / ("output" + std::to_string(i) + ".bin")).string();
  }
  if (!c.expected.empty() && !outcome.no_output) {
    JudgeTop1(io, ReadWholeFile(dir / "output0.bin"), ReadWholeFile(c.expected[0]), outcome);
  }
  return true;
}

// After a run of cases (exit 0 or 1): their verdicts from the firmware's results, printed after
// its console and written to --case-results. Returns `code`, or 4 when the results are missing.
int ReportFirmwareCases(const QemuRunOptions& options, const ModelIo& io,
                        const FirmwareCaseFiles& files, int code) {
  std::ifstream in(files.results());
  std::vector<CaseOutcome> outcomes;
  std::string line;
  for (const CaseFiles& c : options.cases) {
    CaseOutcome outcome;
    if (!std::getline(in, line) ||
        !ReadCaseLine(line, c, io, files, !options.outputs_dir.empty(), outcome)) {
      return Fail(kExitRuntime,
                  "board error: the firmware gave no result for case '" + c.name + "'");
    }
    outcomes.push_back(std::move(outcome));
  }
  const std::string text = CasesText(outcomes);
  std::fputs(text.c_str(), options.console_to_stderr ? stderr : stdout);
  std::fflush(stdout);
  const std::string clock = options.icount == "off" ? "qemu-virtual-time" : "qemu-icount";
  std::string error;
  if (!options.case_results.empty() &&
      !WriteCaseResults(options.case_results, outcomes, clock, &error)) {
    return Fail(kExitRuntime, error);
  }
  return code;
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
  ModelIo io;
  if (const int code = ReadModelIo(options.artifact, io); code >= 0) return code;
  const size_t num_inputs = io.inputs.size();
  const bool cases_verified = !options.cases.empty() && !options.cases.front().expected.empty();
  if (std::max(num_inputs, options.inputs.size()) > kFirmwareMaxFiles ||
      std::max(options.expected.size(), cases_verified ? io.outputs.size() : 0) >
          kFirmwareMaxFiles) {
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
  FirmwareCaseFiles case_files;
  bool verified = !options.expected.empty();
  if (options.cases.empty()) {
    for (size_t i = 0; i < std::max(num_inputs, options.inputs.size()); ++i) {
      args.push_back("--input");
      args.push_back(i < options.inputs.size() ? options.inputs[i] : "random:" + std::to_string(i));
    }
    for (const std::string& e : options.expected) {
      args.push_back("--expected");
      args.push_back(e);
    }
    if (!options.outputs_dir.empty()) {
      args.push_back("--outputs");
      args.push_back(options.outputs_dir);
    }
  } else {
    std::string error;
    if (!case_files.Prepare(options, args, error)) return Fail(kExitRuntime, error);
    verified = cases_verified;
  }
  if (verified) {
    char atol[32];
    std::snprintf(atol, sizeof(atol), "%.17g", options.atol);
    args.push_back("--atol");
    args.push_back(atol);
  }
  if (!options.etdump.empty()) {
    args.push_back("--etdump");
    args.push_back(options.etdump);
  }
  if (options.iterations != 1) {
    args.push_back("--iterations");
    args.push_back(std::to_string(options.iterations));
  }
  const int code = RunFirmware(runner, args, options);
  if (options.cases.empty() || (code != kExitPass && code != kExitMismatch)) return code;
  return ReportFirmwareCases(options, io, case_files, code);
}

}  // namespace boardlab::run
