#pragma once

// Doubles and helpers shared by the agent tests: a scratch directory, tiny compiled artifacts,
// fake runner scripts and an in-memory BlobStore.

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "agent/blob_store.h"
#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "proto/support/digest.h"
#include "tests/support/test_models.h"

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

/// A single-conv model (NPU) compiled to .pte bytes; input [1,8,8,3] int8, output [1,8,8,4].
inline std::string ConvPte() {
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(boardlab::testing::SingleConv2D(), compiler::CompileOptions{});
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return "";
  return std::string(r->pte.begin(), r->pte.end());
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
