// IF and WHILE end to end: models with several subgraphs (tests/support/control_flow_models.h)
// compiled by boardlab and run by the host runtime, against hand-derived outputs (the models are
// built so that their int8 arithmetic is exact) and against TFLite's interpreter.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boardlab/schema/program_generated.h"
#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/cli/debug_map_names.h"
#include "runtime/cli/profile_table.h"
#include "tests/runtime/pte_runner.h"
#include "tests/support/control_flow_models.h"
#include "tests/support/tflite_oracle.h"

namespace boardlab {
namespace {

using Bytes = std::vector<uint8_t>;
using Inference = std::vector<Bytes>;

Bytes Vector(int seed) {
  Bytes x(8);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<uint8_t>(seed * 37 + k * 29 - 90);
  return x;
}

Bytes Compiled(const Bytes& model, bool cpu_only = false) {
  return runtime::testing::CompiledPte(model, cpu_only);
}

// WHILE of WhileModelBuilder by hand: x doubles (saturating) while n < 5.
std::pair<int8_t, Bytes> LoopByHand(int8_t n, Bytes x) {
  for (; n < 5; ++n) {
    for (uint8_t& v : x) {
      v = static_cast<uint8_t>(std::clamp(2 * static_cast<int8_t>(v), -128, 127));
    }
  }
  return {n, x};
}

TEST(ControlFlowTest, IfRunsTheBranchItsConditionPicks) {
  const Bytes pte = Compiled(testing::IfModelBuilder().Finish());
  ASSERT_FALSE(pte.empty());
  // One loaded program, several inferences: the branch changes from one to the next.
  std::vector<Inference> inferences;
  for (int i = 0; i < 4; ++i) inferences.push_back({Bytes{static_cast<uint8_t>(i % 2)}, Vector(i)});
  const runtime::testing::PteRun run = runtime::testing::RunPteInferences(pte, inferences);
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), inferences.size());
  for (size_t i = 0; i < inferences.size(); ++i) {
    // ADD(x, x) at twice the scale is x again; then: ADD(a, a) at twice the scale is a again;
    // else: RELU with zero point -3 is max(a, -3).
    Bytes expected = inferences[i][1];
    if (inferences[i][0][0] == 0) {
      for (uint8_t& v : expected) v = static_cast<uint8_t>(std::max<int8_t>(v, -3));
    }
    EXPECT_EQ(run.outputs[i], expected) << "inference " << i;
  }
}

TEST(ControlFlowTest, WhileLoopsUntilItsCondIsFalse) {
  const Bytes pte = Compiled(testing::WhileModelBuilder().Finish());
  ASSERT_FALSE(pte.empty());
  const int8_t counts[] = {2, 5, 7, 0, -100};  // 3, 0, 0, 5 and 105 iterations
  std::vector<Inference> inferences;
  for (int8_t n : counts) inferences.push_back({Bytes{static_cast<uint8_t>(n)}, Vector(n)});
  const runtime::testing::PteRun run = runtime::testing::RunPteInferences(pte, inferences);
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), 2 * inferences.size());
  for (size_t i = 0; i < inferences.size(); ++i) {
    auto [n, x] = LoopByHand(counts[i], inferences[i][1]);
    for (uint8_t& v : x) v = static_cast<uint8_t>(std::max<int8_t>(v, 0));  // RELU, zero point 0
    EXPECT_EQ(run.outputs[2 * i], Bytes{static_cast<uint8_t>(n)}) << "inference " << i;
    EXPECT_EQ(run.outputs[2 * i + 1], x) << "inference " << i;
  }
}

TEST(ControlFlowTest, WhileInsideIfAndAPassThroughBranch) {
  const Bytes pte = Compiled(testing::NestedControlFlowBuilder().Finish());
  ASSERT_FALSE(pte.empty());
  std::vector<Inference> inferences;
  for (int i = 0; i < 4; ++i) {
    inferences.push_back(
        {Bytes{static_cast<uint8_t>(i < 2)}, Bytes{static_cast<uint8_t>(i)}, Vector(i)});
  }
  const runtime::testing::PteRun run = runtime::testing::RunPteInferences(pte, inferences);
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), 2 * inferences.size());
  for (size_t i = 0; i < inferences.size(); ++i) {
    const int8_t n = static_cast<int8_t>(inferences[i][1][0]);
    const auto [n_out, x_out] =
        inferences[i][0][0] != 0 ? LoopByHand(n, inferences[i][2]) : std::pair{n, inferences[i][2]};
    EXPECT_EQ(run.outputs[2 * i], Bytes{static_cast<uint8_t>(n_out)}) << "inference " << i;
    EXPECT_EQ(run.outputs[2 * i + 1], x_out) << "inference " << i;
  }
}

// SharedDelayModelBuilder by hand: TFLite Micro prepares subgraph 1's SIGNAL_DELAY once and both
// IFs invoke that one node, so a single line delays every frame either IF feeds it: what comes
// out is the concatenated stream of those frames, 3 samples late (zeros first).
class OneDelayLine {
 public:
  std::vector<int16_t> Run(const std::vector<int16_t>& frame) {
    line_.insert(line_.end(), frame.begin(), frame.end());
    std::vector<int16_t> out(line_.begin(), line_.begin() + static_cast<ptrdiff_t>(frame.size()));
    line_.erase(line_.begin(), line_.begin() + static_cast<ptrdiff_t>(frame.size()));
    return out;
  }

 private:
  std::vector<int16_t> line_ = {0, 0, 0};
};

Bytes Int16Bytes(const std::vector<int16_t>& values) {
  Bytes bytes;
  for (int16_t v : values) {
    bytes.push_back(static_cast<uint8_t>(v & 0xff));
    bytes.push_back(static_cast<uint8_t>((static_cast<uint16_t>(v) >> 8) & 0xff));
  }
  return bytes;
}

// The two IFs take turns on the delay subgraph, run it both or neither: one loaded program,
// eight inferences. Inference 1 (only IF b delays) must see the last sample of inference 0's
// frame that IF a fed the line, not zeros from a line of IF b's own. With handles, boardlab
// copies the branch for variable "b", and the copy's delay is still the one line.
TEST(ControlFlowTest, CallSitesOfOneSubgraphShareItsStatefulOps) {
  for (const bool through_handles : {false, true}) {
    SCOPED_TRACE(through_handles ? "through handles" : "plain");
    const Bytes pte = Compiled(testing::SharedDelayModelBuilder(through_handles).Finish());
    ASSERT_FALSE(pte.empty());
    const std::pair<bool, bool> conds[] = {{true, false},  {false, true}, {true, true},
                                           {false, false}, {false, true}, {true, false},
                                           {true, true},   {false, true}};
    std::vector<Inference> inferences;
    std::vector<Bytes> expected;
    OneDelayLine line;
    for (size_t i = 0; i < std::size(conds); ++i) {
      const auto [a, b] = conds[i];
      std::vector<int16_t> x(4);
      for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<int16_t>(1000 * i + 100 * k - 7);
      inferences.push_back({Bytes{a}, Bytes{b}, Int16Bytes(x)});
      expected.push_back(Int16Bytes(a ? line.Run(x) : x));
      expected.push_back(Int16Bytes(b ? line.Run(x) : x));
    }
    const runtime::testing::PteRun run = runtime::testing::RunPteInferences(pte, inferences);
    ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
    EXPECT_EQ(run.outputs, expected);
  }
}

// The main graph's ADD may go to the NPU; the IF and its branches stay on the CPU. Both builds
// give the same bytes.
// A profile named from the debug map says which subgraph a row's op indices count in: "op 0"
// of subgraph 2 is not the main graph's op 0.
TEST(ControlFlowTest, ProfileRowsOfSubgraphOpsNameTheirSubgraph) {
  absl::StatusOr<compiler::CompileResult> compiled =
      compiler::Compile(testing::IfModelBuilder().Finish(), {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  run::Profile profile;
  for (size_t i = 0; i < 10; ++i) {  // the chain of IfExpandsIntoJumpsAroundBothBranches
    run::ProfileRow row;
    row.instruction = i;
    row.npu = i == 0;
    row.op = "unnamed";
    profile.rows.push_back(row);
  }
  run::NameFromDebugMap(nlohmann::json::parse(compiled->debug_map_json), profile);
  std::map<std::string, const run::ProfileRow*> by_name;
  for (const run::ProfileRow& r : profile.rows) by_name[r.op] = &r;
  ASSERT_TRUE(by_name.count("RELU #0 of subgraph 2")) << "rows named: " << by_name.size();
  EXPECT_EQ(by_name["RELU #0 of subgraph 2"]->subgraph, 2);
  EXPECT_EQ(by_name["RELU #0 of subgraph 2"]->source_ops, std::vector<int32_t>{0});
  ASSERT_TRUE(by_name.count("ADD #0 of subgraph 1"));
  EXPECT_EQ(by_name["ADD #0 of subgraph 1"]->subgraph, 1);
  ASSERT_TRUE(by_name.count("IF #1 condition"));
  EXPECT_EQ(by_name["IF #1 condition"]->subgraph, 0);
  const nlohmann::json rows = run::ProfileJson(profile)["ops"];
  int with_subgraph = 0;
  for (const nlohmann::json& r : rows) {
    if (!r.contains("subgraph")) continue;
    ++with_subgraph;
    EXPECT_NE(
        r["op"].get<std::string>().find(absl::StrCat("of subgraph ", r["subgraph"].get<int>())),
        std::string::npos)
        << r.dump();
  }
  EXPECT_EQ(with_subgraph, 2);  // one op per branch; the copies in and out are IF's own steps
}

TEST(ControlFlowTest, NpuSegmentsOutsideControlFlowGiveTheSameOutputs) {
  const Bytes model = testing::IfModelBuilder().Finish();
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(model, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string& report = compiled->report_json;
  EXPECT_NE(report.find("IF #1: control flow"), std::string::npos) << report;
  const std::vector<Inference> inferences = {{Bytes{1}, Vector(3)}, {Bytes{0}, Vector(4)}};
  const runtime::testing::PteRun npu =
      runtime::testing::RunPteInferences(compiled->pte, inferences);
  const runtime::testing::PteRun cpu =
      runtime::testing::RunPteInferences(Compiled(model, true), inferences);
  ASSERT_EQ(npu.error, runtime::Error::kOk) << npu.message;
  EXPECT_EQ(npu.outputs, cpu.outputs);
}

class ControlFlowOracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = testing::TfliteOracleUnavailable()) GTEST_SKIP() << *why;
  }

  // The interpreter's outputs of `inferences` (one interpreter per model, inferences in turn),
  // compared with boardlab's.
  void CompareWithInterpreter(const Bytes& model, const std::vector<std::string>& input_types,
                              const std::vector<std::vector<int32_t>>& input_shapes,
                              const std::vector<std::string>& output_types,
                              const std::vector<Inference>& inferences) {
    std::vector<Bytes> expected;
    std::string error;
    ASSERT_TRUE(testing::RunTfliteOracleInferences(model, input_types, input_shapes, output_types,
                                                   inferences, &expected, &error))
        << error;
    const runtime::testing::PteRun run =
        runtime::testing::RunPteInferences(Compiled(model), inferences);
    ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
    EXPECT_EQ(run.outputs, expected);
  }
};

TEST_F(ControlFlowOracleTest, IfEqualsTheInterpreter) {
  std::vector<Inference> inferences;
  for (int i = 0; i < 6; ++i) inferences.push_back({Bytes{static_cast<uint8_t>(i % 2)}, Vector(i)});
  CompareWithInterpreter(testing::IfModelBuilder().Finish(), {"bool", "int8"}, {{1}, {1, 8}},
                         {"int8"}, inferences);
}

// The then-branch's RELU6 is fused into its ADD (tests/compiler/control_flow_import_test.cc);
// inputs from -128 up saturate both bounds.
TEST_F(ControlFlowOracleTest, IfWithAFusedBranchEqualsTheInterpreter) {
  std::vector<Inference> inferences;
  for (int i = 0; i < 6; ++i) {
    Bytes x(8);
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<uint8_t>(-128 + 37 * (i + 8 * k));
    inferences.push_back({Bytes{static_cast<uint8_t>(i % 2 == 0)}, x});
  }
  CompareWithInterpreter(testing::IfWithAFusableBranchBuilder().Finish(), {"bool", "int8"},
                         {{1}, {1, 8}}, {"int8"}, inferences);
}

TEST_F(ControlFlowOracleTest, WhileEqualsTheInterpreter) {
  std::vector<Inference> inferences;
  for (int8_t n : {2, 5, 7, 0, -100}) {
    inferences.push_back({Bytes{static_cast<uint8_t>(n)}, Vector(n)});
  }
  CompareWithInterpreter(testing::WhileModelBuilder().Finish(), {"int8", "int8"}, {{1}, {1, 8}},
                         {"int8", "int8"}, inferences);
}

TEST_F(ControlFlowOracleTest, NestedControlFlowEqualsTheInterpreter) {
  std::vector<Inference> inferences;
  for (int i = 0; i < 4; ++i) {
    inferences.push_back(
        {Bytes{static_cast<uint8_t>(i < 2)}, Bytes{static_cast<uint8_t>(i)}, Vector(i)});
  }
  CompareWithInterpreter(testing::NestedControlFlowBuilder().Finish(), {"bool", "int8", "int8"},
                         {{1}, {1}, {1, 8}}, {"int8", "int8"}, inferences);
}

}  // namespace
}  // namespace boardlab
