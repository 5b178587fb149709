#pragma once

// A test that runs the boardlab-run binary as users do, in a temporary directory of its own.
//
//   class MyCliTest : public BoardlabRunTest {};
//   TEST_F(MyCliTest, X) { CommandResult r = Run(Path("m.pte") + " --profile json"); }
//
// SetUp skips the test when boardlab-run is not built; TearDown removes the directory.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "gtest/gtest.h"
#include "tests/support/process.h"
#include "tests/support/test_paths.h"

namespace boardlab::runtime::testing {

class BoardlabRunTest : public ::testing::Test {
 protected:
  /// `prefix` names the temporary directories of the derived tests.
  explicit BoardlabRunTest(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    binary_ = boardlab::testing::RunBinary();
    if (binary_.empty() || !std::filesystem::exists(binary_)) {
      GTEST_SKIP() << "boardlab-run is not built (" << binary_ << ")";
    }
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + "_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  /// `name` inside the test's directory.
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  /// boardlab-run ARGS, with stderr in the output unless `with_stderr` is false.
  boardlab::testing::CommandResult Run(const std::string& args, bool with_stderr = true) {
    return boardlab::testing::RunCommand(binary_ + " " + args, with_stderr);
  }

  std::string binary_;
  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace boardlab::runtime::testing
