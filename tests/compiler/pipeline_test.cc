// The whole compiler on generated models: exact delegated / non-delegated op counts, like
// ExecuTorch's NXP backend tests.

#include <gtest/gtest.h>

#include "compiler/driver.h"
#include "tests/support/test_models.h"

namespace boardlab::compiler {
namespace {

struct Counts {
  int npu = 0, cpu = 0;
};

Counts CountUnits(const Graph& g) {
  Counts c;
  for (const Op& op : g.ops) {
    c.npu += op.unit == Unit::kNpu;
    c.cpu += op.unit == Unit::kCpu;
  }
  return c;
}

CompileResult CompileOrDie(const std::vector<uint8_t>& model, const CompileOptions& options = {}) {
  absl::StatusOr<CompileResult> result = Compile(model, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : CompileResult{};
}

class SingleOpPipelineTest : public ::testing::TestWithParam<OpType> {};

TEST_P(SingleOpPipelineTest, CompilesAndPlacesTheOp) {
  const OpType type = GetParam();
  absl::StatusOr<CompileResult> result = Compile(testing::SingleOpModel(type), {});
  ASSERT_TRUE(result.ok()) << OpTypeName(type) << ": " << result.status();
  const Graph& g = result->compilation.graph;
  EXPECT_GT(result->pte.size(), 0u);
  if (IsResourceVariableOp(type) || type == OpType::kCallOnce) {
    // Their smallest model has all four ops and an ADD (resource_variable_import_test.cc); each
    // of the four must be placed on the CPU with its reason.
    for (const Op& op : g.ops) {
      if (op.type == OpType::kAdd) continue;
      EXPECT_EQ(op.unit, Unit::kCpu) << OpTypeName(op.type);
      EXPECT_FALSE(op.cpu_reason.empty()) << OpTypeName(op.type);
    }
    return;
  }
  ASSERT_EQ(g.ops.size(), 1u);
  const Op& op = g.ops[0];
  EXPECT_TRUE(op.unit == Unit::kNpu || op.unit == Unit::kCpu);
  if (op.unit == Unit::kCpu) {
    EXPECT_FALSE(op.cpu_reason.empty());
  }
  EXPECT_EQ(result->compilation.num_partitions, op.unit == Unit::kNpu ? 1 : 0);
  EXPECT_GT(result->pte.size(), 0u);
}

std::vector<OpType> AllOpTypes() {
  std::vector<OpType> types;
  for (int i = 0; i < kNumOpTypes; ++i) types.push_back(static_cast<OpType>(i));
  return types;
}

INSTANTIATE_TEST_SUITE_P(EveryOp, SingleOpPipelineTest, ::testing::ValuesIn(AllOpTypes()),
                         [](const ::testing::TestParamInfo<OpType>& info) {
                           return std::string(OpTypeName(info.param));
                         });

TEST(PipelineCounts, ComputeOpsAloneGoToTheNpu) {
  for (OpType type :
       {OpType::kConv2D, OpType::kDepthwiseConv2D, OpType::kFullyConnected, OpType::kAdd,
        OpType::kMul, OpType::kSoftmax, OpType::kAveragePool2D, OpType::kMaxPool2D}) {
    CompileResult r = CompileOrDie(testing::SingleOpModel(type));
    const Counts c = CountUnits(r.compilation.graph);
    EXPECT_EQ(c.npu, 1) << OpTypeName(type) << ": " << r.compilation.graph.ops[0].cpu_reason;
    EXPECT_EQ(c.cpu, 0) << OpTypeName(type);
  }
}

TEST(PipelineCounts, FloatBoundaryOpsStayOnTheCpu) {
  for (OpType type : {OpType::kQuantize, OpType::kDequantize}) {
    CompileResult r = CompileOrDie(testing::SingleOpModel(type));
    EXPECT_EQ(CountUnits(r.compilation.graph).cpu, 1) << OpTypeName(type);
  }
}

TEST(PipelineCounts, NoOpAloneIsNotDelegated) {
  CompileResult r = CompileOrDie(testing::SingleOpModel(OpType::kReshape));
  const Graph& g = r.compilation.graph;
  ASSERT_EQ(g.ops.size(), 1u);
  EXPECT_EQ(g.ops[0].unit, Unit::kCpu);
  EXPECT_NE(g.ops[0].cpu_reason.find("no-op"), std::string::npos) << g.ops[0].cpu_reason;
}

TEST(PipelineCounts, TinyDsCnnIsOneNpuPartition) {
  CompileResult r = CompileOrDie(testing::TinyDsCnn());
  const Counts c = CountUnits(r.compilation.graph);
  EXPECT_EQ(c.npu, 7);
  EXPECT_EQ(c.cpu, 0);
  EXPECT_EQ(r.compilation.num_partitions, 1);
}

TEST(PipelineCounts, NoNpuSplitsTheGraphAroundTheNamedOp) {
  CompileOptions options;
  options.no_npu = {OpType::kDepthwiseConv2D};
  CompileResult r = CompileOrDie(testing::TinyDsCnn(), options);
  const Counts c = CountUnits(r.compilation.graph);
  EXPECT_EQ(c.npu, 6);
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(r.compilation.num_partitions, 2);
}

TEST(PipelineCounts, CpuOnlyMakesNoPartition) {
  CompileOptions options;
  options.cpu_only = true;
  CompileResult r = CompileOrDie(testing::TinyDsCnn(), options);
  EXPECT_EQ(CountUnits(r.compilation.graph).cpu, 7);
  EXPECT_EQ(r.compilation.num_partitions, 0);
}

TEST(PipelineFusion, SeparateReluIsFusedIntoTheConv) {
  CompileResult r = CompileOrDie(testing::ConvThenRelu());
  const Graph& g = r.compilation.graph;
  ASSERT_EQ(g.ops.size(), 1u);
  EXPECT_EQ(g.ops[0].type, OpType::kConv2D);
  EXPECT_EQ(g.ops[0].opts<ConvOptions>().activation, Activation::kRelu);
  EXPECT_EQ(g.ops[0].fused_sources, std::vector<int>{1});
}

TEST(PipelineFormat, EdgeTransposesFollowTheFormatOption) {
  for (FormatConversion where : {FormatConversion::kNpu, FormatConversion::kCpu}) {
    CompileOptions options;
    options.format_conversion = where;
    CompileResult r = CompileOrDie(testing::NchwTransposeModel(), options);
    const Graph& g = r.compilation.graph;
    ASSERT_EQ(g.ops.size(), 3u);
    const Counts c = CountUnits(g);
    EXPECT_EQ(c.cpu, where == FormatConversion::kCpu ? 2 : 0);
    EXPECT_EQ(r.compilation.num_partitions, 1);
    EXPECT_EQ(g.tensors[g.inputs[0]].layout, Layout::kNCHW);
  }
}

}  // namespace
}  // namespace boardlab::compiler
