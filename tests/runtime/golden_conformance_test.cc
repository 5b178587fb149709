// Whole-model conformance: boardlab-run's outputs equal, byte for byte, the TensorFlow Lite Micro
// reference outputs in ../shared/golden for every model and seed there, both with the NPU
// partitions (emulated NPU engine) and with every op on the CPU kernels (--cpu-only).

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "tests/support/process.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_paths.h"

namespace boardlab::runtime {
namespace {

namespace fs = std::filesystem;

struct GoldenCase {
  std::string model;  // path under ../shared/models
  int seed;
  bool cpu_only;
};

std::string Stem(const std::string& model) {
  const std::string file = model.substr(model.find('/') + 1);
  return file.substr(0, file.find('.'));
}

class GoldenConformance : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenConformance, OutputsEqualTflmByteForByte) {
  const GoldenCase& c = GetParam();
  const std::optional<std::string> model_path = testing::SharedModelPath(c.model);
  if (!model_path) GTEST_SKIP() << "shared models folder absent: " << testing::SharedModelsDir();
  const std::string golden =
      testing::SharedModelsDir() + "/../golden/" + Stem(c.model) + "/seed" + std::to_string(c.seed);
  if (!fs::exists(golden + ".input.bin")) GTEST_SKIP() << "no golden case " << golden;
  const std::string run = testing::RunBinary();
  if (run.empty()) GTEST_SKIP() << "boardlab-run is not built";

  compiler::CompileOptions options;
  options.cpu_only = c.cpu_only;
  absl::StatusOr<compiler::CompileResult> compiled =
      compiler::Compile(testing::ReadFile(*model_path), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string pte = ::testing::TempDir() + "/golden_" + Stem(c.model) +
                          (c.cpu_only ? "_cpu_" : "_npu_") + std::to_string(::getpid()) + ".pte";
  ASSERT_TRUE(testing::WriteFile(pte, compiled->pte));

  const testing::CommandResult result =
      testing::RunCommand(run + " " + pte + " --input " + golden + ".input.bin" + " --expected " +
                          golden + ".output.bin --atol 0");
  const std::string& output = result.output;
  const int exit_code = result.exit_code;
  fs::remove(pte);
  EXPECT_EQ(exit_code, 0) << output;
  EXPECT_NE(output.find("max abs diff 0"), std::string::npos) << output;
}

std::vector<GoldenCase> AllCases() {
  std::vector<GoldenCase> cases;
  for (std::string_view model : testing::kRealModels) {
    for (int seed = 1; seed <= 4; ++seed) {
      for (bool cpu_only : {false, true}) cases.push_back({std::string(model), seed, cpu_only});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(SharedGoldens, GoldenConformance, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           std::string name = Stem(info.param.model) + "_seed" +
                                              std::to_string(info.param.seed) +
                                              (info.param.cpu_only ? "_cpu_only" : "_npu");
                           for (char& ch : name) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace boardlab::runtime

namespace boardlab::runtime {
namespace {

// The memory plan may reuse an input's bytes once it has been read; repeated runs must still give
// the golden outputs (the runner sets the inputs before every run).
TEST(GoldenRepeatedRuns, EveryIterationSeesItsInputs) {
  const std::string model = "mlperf-tiny/kws_dscnn_int8.tflite";
  const std::optional<std::string> path = testing::SharedModelPath(model);
  if (!path) GTEST_SKIP() << "shared models folder absent: " << testing::SharedModelsDir();
  const std::string golden = testing::SharedModelsDir() + "/../golden/kws_dscnn_int8/seed1";
  absl::StatusOr<compiler::CompileResult> compiled =
      compiler::Compile(testing::ReadFile(*path), compiler::CompileOptions{});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string pte =
      ::testing::TempDir() + "/golden_repeat_" + std::to_string(::getpid()) + ".pte";
  ASSERT_TRUE(testing::WriteFile(pte, compiled->pte));
  const testing::CommandResult result =
      testing::RunCommand(testing::RunBinary() + " " + pte + " --iterations 3 --input " + golden +
                          ".input.bin --expected " + golden + ".output.bin --atol 0");
  std::filesystem::remove(pte);
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

}  // namespace
}  // namespace boardlab::runtime
