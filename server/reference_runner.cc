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

}  // namespace

std::string DefaultBoardlabRun() { return BOARDLAB_RUN_BINARY; }

ReferenceRunner::ReferenceRunner(std::string boardlab_run, std::string work_dir, BlobStore& blobs)
    : boardlab_run_(std::move(boardlab_run)), work_dir_(std::move(work_dir)), blobs_(blobs) {}

absl::StatusOr<std::vector<v1::Digest>> ReferenceRunner::Run(
    const v1::Digest& artifact, const google::protobuf::RepeatedPtrField<v1::InputSpec>& inputs,
    int num_outputs) {
  static std::atomic<int> counter{0};
  fs::path dir = fs::path(work_dir_) / absl::StrCat("reference-", getpid(), "-", counter++);
  std::error_code error;
  fs::create_directories(dir, error);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{dir};

  auto path_of = [&](const v1::Digest& digest) { return blobs_.PathOf(digest); };
  auto pte = path_of(artifact);
  if (!pte.ok()) return pte.status();
  std::vector<std::string> argv = {boardlab_run_, *pte,        "--board",
                                   "sim",         "--outputs", dir.string()};
  for (const auto& input : inputs) {
    if (input.has_blob()) {
      auto path = path_of(input.blob());
      if (!path.ok()) return path.status();
      argv.insert(argv.end(), {"--input", *path});
    } else {
      argv.insert(argv.end(), {"--input", absl::StrCat("random:", input.random_seed())});
    }
  }
  int status = RunWithTimeout(argv, dir / "log.txt");
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat("the reference run failed: ", ReadAll(dir / "log.txt")));
  }
  std::vector<v1::Digest> outputs;
  for (int i = 0; i < num_outputs; ++i) {
    fs::path file = dir / absl::StrCat("output", i, ".bin");
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

}  // namespace boardlab::server
