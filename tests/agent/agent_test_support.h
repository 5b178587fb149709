#pragma once

// Doubles and helpers shared by the agent tests: a scratch directory, tiny compiled artifacts,
// fake runner scripts and an in-memory BlobStore.

#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/blob_store.h"
#include "agent/board_executor.h"
#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "proto/support/digest.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

namespace boardlab::agent::testing {

/// A fresh directory per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    path_ = std::filesystem::temp_directory_path() /
            absl::StrCat("boardlab_agent_", ::getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// An executable /bin/sh script at `path` with `body`.
inline std::string WriteScript(const std::string& path, const std::string& body) {
  WriteText(path, "#!/bin/sh\n" + body);
  ::chmod(path.c_str(), 0755);
  return path;
}

/// A fixture for board drivers: a request in a scratch directory, a run driven to its report on
/// a local io_context, the log lines it produced.
class ExecutorTest : public ::testing::Test {
 protected:
  BoardRunRequest Request() {
    BoardRunRequest r;
    r.board_id = "sim-0";
    r.artifact_path = dir_ / "model.pte";
    r.timeout_seconds = 30;
    r.work_dir = dir_ / "work";
    std::filesystem::create_directories(r.work_dir);
    return r;
  }

  // Runs the io_context until `done` or for at most a minute. It does not stop when the
  // io_context runs out of work for a moment: a driver's thread (a probe, a child's exit) may
  // post its answer after the last handler ran.
  void RunIoUntil(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(20));
    }
  }

  // Runs `request` on `executor` until on_done; `during` is called once the run started.
  BoardReport RunOn(BoardExecutor& executor, const BoardRunRequest& request,
                    std::function<void(BoardRun&)> during = nullptr) {
    std::optional<BoardReport> report;
    lines_.clear();
    std::unique_ptr<BoardRun> run = executor.Start(
        request, [&](std::string line) { lines_.push_back(line); },
        [&](BoardReport r) { report = std::move(r); });
    if (during) during(*run);
    RunIoUntil([&] { return report.has_value(); });
    EXPECT_TRUE(report.has_value());
    return report.value_or(BoardReport{});
  }

  bool HasLine(const std::string& text) const {
    for (const std::string& l : lines_) {
      if (l.find(text) != std::string::npos) return true;
    }
    return false;
  }

  ScratchDir dir_;
  boost::asio::io_context io_;
  std::vector<std::string> lines_;
};

/// A single-conv model (NPU) compiled to .pte bytes; input [1,8,8,3] int8, output [1,8,8,4].
inline std::string ConvPte() {
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(boardlab::testing::SingleConv2D(), compiler::CompileOptions{});
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return "";
  return std::string(r->pte.begin(), r->pte.end());
}

/// The built boardlab-run, with a compiled single-conv model written to dir/model.pte; empty when
/// boardlab-run is not built (the caller skips).
inline std::string RealRunnerWithModel(const ScratchDir& dir) {
  const std::string runner = boardlab::testing::RunBinary();
  if (runner.empty() || !std::filesystem::exists(runner)) return "";
  WriteText(dir / "model.pte", ConvPte());
  return runner;
}

/// The artifact store in memory. Thread-safe.
class FakeBlobStore : public BlobStore {
 public:
  absl::StatusOr<std::string> Get(const v1::Digest& digest) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++gets_;
    auto it = blobs_.find(digest.sha256());
    if (it == blobs_.end()) {
      return absl::NotFoundError(absl::StrCat("blob ", digest.sha256(), " not found"));
    }
    return it->second;
  }
  absl::StatusOr<v1::Digest> Put(std::string_view bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fail_puts_) return absl::UnavailableError("store down");
    v1::Digest digest = api::DigestOf(bytes);
    blobs_[digest.sha256()] = std::string(bytes);
    return digest;
  }
  v1::Digest Add(const std::string& bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    v1::Digest digest = api::DigestOf(bytes);
    blobs_[digest.sha256()] = bytes;
    return digest;
  }
  std::string Bytes(const v1::Digest& digest) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blobs_.find(digest.sha256());
    return it == blobs_.end() ? "" : it->second;
  }
  int gets() {
    std::lock_guard<std::mutex> lock(mutex_);
    return gets_;
  }
  void set_fail_puts(bool fail) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_puts_ = fail;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::string> blobs_;
  int gets_ = 0;
  bool fail_puts_ = false;
};

}  // namespace boardlab::agent::testing
