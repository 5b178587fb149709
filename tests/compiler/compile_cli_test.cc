// Runs the boardlab-compile binary the way users do and checks exit codes, messages and files.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/process.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_paths.h"

namespace {

namespace fs = std::filesystem;

using RunResult = boardlab::testing::CommandResult;

RunResult RunCompiler(const std::string& args) {
  return boardlab::testing::RunCommand(boardlab::testing::CompilerBinary() + " " + args);
}

class CompileCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("boardlab_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void WriteBytes(const std::string& name, const std::string& bytes) const {
    std::ofstream(Path(name), std::ios::binary) << bytes;
  }
  fs::path dir_;
};

TEST_F(CompileCliTest, CompilesKwsAndWritesArtifactAndReport) {
  auto model = boardlab::testing::SharedModelPath("mlperf-tiny/kws_dscnn_int8.tflite");
  if (!model) GTEST_SKIP() << "shared models folder absent: ../shared/models";
  RunResult r = RunCompiler(*model + " -o " + Path("kws.pte") + " --report " + Path("kws.json") +
                            " --debug-map " + Path("kws.map.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("latency"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("DEPTHWISE_CONV_2D"), std::string::npos);
  ASSERT_TRUE(fs::exists(Path("kws.pte")));
  std::ifstream pte(Path("kws.pte"), std::ios::binary);
  char head[12] = {};
  pte.read(head, sizeof(head));
  EXPECT_EQ(std::string(head + 4, 4), "ET12");
  EXPECT_EQ(std::string(head + 8, 4), "eh00");
  EXPECT_GT(fs::file_size(Path("kws.json")), 100u);
  EXPECT_GT(fs::file_size(Path("kws.map.json")), 10u);
}

TEST_F(CompileCliTest, QuietPrintsNothing) {
  auto model = boardlab::testing::SharedModelPath("tflite-micro/hello_world_int8.tflite");
  if (!model) GTEST_SKIP() << "shared models folder absent: ../shared/models";
  RunResult r = RunCompiler(*model + " -o " + Path("hw.pte") + " --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "");
}

TEST_F(CompileCliTest, RandomBytesExitThreeWithOneLine) {
  WriteBytes("junk.tflite", std::string("\x10\x00\x00\x00TFL3 this is not a model at all", 36));
  RunResult r = RunCompiler(Path("junk.tflite") + " -o " + Path("junk.pte"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("invalid model"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_FALSE(fs::exists(Path("junk.pte")));
}

TEST_F(CompileCliTest, WrongIdentifierExitThree) {
  WriteBytes("png.tflite", std::string("\x89PNG\r\n\x1a\n0123456789abcdef", 24));
  RunResult r = RunCompiler(Path("png.tflite") + " -o " + Path("x.pte"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("TFL3"), std::string::npos) << r.output;
}

TEST_F(CompileCliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunCompiler("").exit_code, 2);
  EXPECT_EQ(RunCompiler("a.tflite -o b.pte --weights somewhere").exit_code, 2);
  RunResult r = RunCompiler("a.tflite -o b.pte --no-npu CONV_3D");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("CONV_3D"), std::string::npos) << r.output;
}

TEST_F(CompileCliTest, UnknownTargetExitTwo) {
  auto model = boardlab::testing::SharedModelPath("tflite-micro/hello_world_int8.tflite");
  if (!model) GTEST_SKIP() << "shared models folder absent: ../shared/models";
  RunResult r = RunCompiler(*model + " -o " + Path("hw.pte") + " --target imxrt9000");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("imxrt9000"), std::string::npos) << r.output;
}

TEST_F(CompileCliTest, MissingFileExitOne) {
  RunResult r = RunCompiler(Path("absent.tflite") + " -o " + Path("x.pte"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("absent.tflite"), std::string::npos) << r.output;
}

TEST_F(CompileCliTest, DoesNotFitExitFour) {
  auto model = boardlab::testing::SharedModelPath("mlperf-tiny/vww_96_int8.tflite");
  if (!model) GTEST_SKIP() << "shared models folder absent: ../shared/models";
  RunResult r = RunCompiler(*model + " -o " + Path("v.pte") + " --weights sram --sram-budget 4096");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("does not fit"), std::string::npos) << r.output;
}

}  // namespace
