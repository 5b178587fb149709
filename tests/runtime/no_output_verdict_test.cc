// boardlab-run on a model whose CIRCULAR_BUFFER ends inferences early (TFLite Micro's
// kTfLiteAbort): an inference that produced no output is "no output yet", exit 0, its outputs
// not judged against --expected; once an inference runs to the end, the outputs are judged again.

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/runtime/boardlab_run_test_base.h"
#include "tests/support/shared_data.h"
#include "tests/support/tflite_builder.h"

namespace boardlab::runtime::testing {
namespace {

using boardlab::testing::CommandResult;
using boardlab::testing::TflType;
using Bytes = std::vector<uint8_t>;

class NoOutputVerdict : public BoardlabRunTest {
 protected:
  NoOutputVerdict() : BoardlabRunTest("boardlab_no_output") {}

  // int8 [1,1,1,3] into a CIRCULAR_BUFFER of 4 slots without options: TFLite Micro's guess for
  // that shape runs it every other inference, so the first of each pair ends early.
  void SetUp() override {
    BoardlabRunTest::SetUp();
    if (IsSkipped()) return;
    boardlab::testing::TfliteBuilder b;
    const boardlab::testing::QuantParams q{{1.0f}, {0}};
    const int in = b.AddTensor("input", {1, 1, 1, 3}, TflType::kInt8, q);
    const int out = b.AddTensor("buffer", {1, 4, 1, 3}, TflType::kInt8, q);
    b.AddCustomOperator("CIRCULAR_BUFFER", {in}, {out}, {});
    b.SetInputs({in});
    b.SetOutputs({out});
    absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(b.Finish(), {});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    ASSERT_TRUE(boardlab::testing::WriteFile(Path("cb.pte"), compiled->pte));
    ASSERT_TRUE(boardlab::testing::WriteFile(Path("in.bin"), Bytes{1, 2, 3}));
  }

  CommandResult RunWith(int iterations, const Bytes& expected, const std::string& profile) {
    EXPECT_TRUE(boardlab::testing::WriteFile(Path("expected.bin"), expected));
    return Run(Path("cb.pte") + " --input " + Path("in.bin") + " --expected " +
                   Path("expected.bin") + " --iterations " + std::to_string(iterations) +
                   " --profile " + profile,
               /*with_stderr=*/profile != "json");
  }

  // The --profile json document of a run that exited 0; null when it did not or is no JSON.
  nlohmann::json JsonRun(int iterations, const Bytes& expected) {
    const CommandResult run = RunWith(iterations, expected, "json");
    EXPECT_EQ(run.exit_code, 0) << run.output;
    nlohmann::json doc = nlohmann::json::parse(run.output, nullptr, false);
    EXPECT_TRUE(doc.is_object()) << run.output;
    return run.exit_code == 0 && doc.is_object() ? doc : nlohmann::json();
  }
};

TEST_F(NoOutputVerdict, AnInferenceThatEndedEarlyIsNotJudged) {
  const Bytes wrong(12, 0x7f);
  const CommandResult table = RunWith(1, wrong, "table");
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("verdict: NO OUTPUT YET"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("0 of 1 inferences produced output"), std::string::npos)
      << table.output;
  const nlohmann::json doc = JsonRun(1, wrong);
  ASSERT_FALSE(doc.is_null());
  EXPECT_EQ(doc["verdict"], "no_output");
  EXPECT_EQ(doc["inferences_with_output"], 0);
  EXPECT_EQ(doc["iterations"], 1);
}

// The second inference runs the buffer: both inputs are in its last two slots, and a wrong
// expectation fails again.
TEST_F(NoOutputVerdict, TheNextInferenceIsJudgedAgain) {
  const Bytes buffer = {0, 0, 0, 0, 0, 0, 1, 2, 3, 1, 2, 3};
  const nlohmann::json doc = JsonRun(2, buffer);
  ASSERT_FALSE(doc.is_null());
  EXPECT_EQ(doc["verdict"], "pass");
  EXPECT_EQ(doc["inferences_with_output"], 1);
  Bytes wrong = buffer;
  wrong[0] = 9;
  EXPECT_NE(RunWith(2, wrong, "table").exit_code, 0);
}

}  // namespace
}  // namespace boardlab::runtime::testing
