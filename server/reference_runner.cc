#include "server/reference_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "runtime/cli/run_cases.h"

extern char** environ;

namespace boardlab::server {
namespace {

namespace fs = std::filesystem;
constexpr int kTimeoutSeconds = 120;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Runs argv with stdout and stderr into `log`; kills it after kTimeoutSeconds. Returns the exit
// status as waitpid gives it, or -1 when it could not start or timed out.
int RunWithTimeout(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kTimeoutSeconds);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status;
}

// boardlab-run's spelling of an input: the blob's file, or random:SEED.
absl::StatusOr<std::string> InputArgument(BlobStore& blobs, const v1::InputSpec& input) {
  if (!input.has_blob()) return absl::StrCat("random:", input.random_seed());
  return blobs.PathOf(input.blob());
}

}  // namespace

std::string DefaultBoardlabRun() { return BOARDLAB_RUN_BINARY; }

ReferenceRunner::ReferenceRunner(std::string boardlab_run, std::string work_dir, BlobStore& blobs)
    : boardlab_run_(std::move(boardlab_run)), work_dir_(std::move(work_dir)), blobs_(blobs) {}

// A temporary directory for one reference run, removed with this object.
struct ReferenceRunner::WorkDir {
  explicit WorkDir(const std::string& root) {
    static std::atomic<int> counter{0};
    path = fs::path(root) / absl::StrCat("reference-", getpid(), "-", counter++);
    std::error_code error;
    fs::create_directories(path, error);
  }
  ~WorkDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  fs::path path;
};

absl::Status ReferenceRunner::RunInDirectory(const v1::Digest& artifact,
                                             const std::vector<std::string>& options,
                                             const WorkDir& dir) {
  auto pte = blobs_.PathOf(artifact);
  if (!pte.ok()) return pte.status();
  std::vector<std::string> argv = {boardlab_run_, *pte,        "--board",
                                   "sim",         "--outputs", (dir.path / "outputs").string()};
  argv.insert(argv.end(), options.begin(), options.end());
  int status = RunWithTimeout(argv, dir.path / "log.txt");
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat("the reference run failed: ", ReadAll(dir.path / "log.txt")));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::Digest>> ReferenceRunner::StoreOutputs(const std::string& dir,
                                                                      int num_outputs) {
  std::vector<v1::Digest> outputs;
  for (int i = 0; i < num_outputs; ++i) {
    fs::path file = fs::path(dir) / absl::StrCat("output", i, ".bin");
    if (!fs::exists(file)) {
      return absl::InternalError(
          absl::StrCat("the reference run wrote no ", file.filename().string()));
    }
    auto digest = blobs_.Put(ReadAll(file));
    if (!digest.ok()) return digest.status();
    outputs.push_back(*digest);
  }
  return outputs;
}

absl::StatusOr<std::vector<v1::Digest>> ReferenceRunner::Run(
    const v1::Digest& artifact, const google::protobuf::RepeatedPtrField<v1::InputSpec>& inputs,
    int num_outputs) {
  const WorkDir dir(work_dir_);
  std::vector<std::string> options;
  for (const auto& input : inputs) {
    absl::StatusOr<std::string> argument = InputArgument(blobs_, input);
    if (!argument.ok()) return argument.status();
    options.insert(options.end(), {"--input", *argument});
  }
  if (absl::Status ran = RunInDirectory(artifact, options, dir); !ran.ok()) return ran;
  return StoreOutputs((dir.path / "outputs").string(), num_outputs);
}

absl::StatusOr<std::vector<std::vector<v1::Digest>>> ReferenceRunner::RunCases(
    const v1::Digest& artifact, const google::protobuf::RepeatedPtrField<v1::RunCase>& cases,
    int num_outputs) {
  const WorkDir dir(work_dir_);
  std::vector<run::CaseFiles> files;
  for (const v1::RunCase& c : cases) {
    run::CaseFiles entry{c.name(), {}, {}};
    for (const v1::InputSpec& input : c.inputs()) {
      absl::StatusOr<std::string> argument = InputArgument(blobs_, input);
      if (!argument.ok()) return argument.status();
      entry.inputs.push_back(*argument);
    }
    files.push_back(std::move(entry));
  }
  const fs::path manifest = dir.path / "cases.json";
  if (!(std::ofstream(manifest) << run::CaseManifestJson(files))) {
    return absl::InternalError(absl::StrCat("cannot write '", manifest.string(), "'"));
  }
  if (absl::Status ran = RunInDirectory(artifact, {"--cases", manifest.string()}, dir); !ran.ok()) {
    return ran;
  }
  std::vector<std::vector<v1::Digest>> outputs;
  for (const v1::RunCase& c : cases) {
    auto stored = StoreOutputs((dir.path / "outputs" / c.name()).string(), num_outputs);
    if (!stored.ok()) return stored.status();
    outputs.push_back(*std::move(stored));
  }
  return outputs;
}

}  // namespace boardlab::server
