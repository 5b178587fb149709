// Grouped CONV_2D and one-channel DEPTHWISE_CONV_2D with a depth multiplier (issue 13): on the
// CPU the grouped convolution runs whole (TFLite Micro's ConvPerChannel groups); on the NPU it
// runs split into one convolution per group (or as a depthwise convolution when every group has
// one channel), and the one-channel depthwise as a convolution. Both placements give the same
// bytes, and both agree with the TFLite interpreter within the 1 LSB of its float
// requantization (tflite-int8.md section 13), as every convolution does.

#include <cstdlib>
#include <string>
#include <vector>

#include "boardlab/schema/npu_payload_generated.h"
#include "compiler/driver.h"
#include "compiler/npu_lowering.h"
#include "gtest/gtest.h"
#include "tests/runtime/pte_runner.h"
#include "tests/support/test_models.h"
#include "tests/support/tflite_oracle.h"

namespace boardlab {
namespace {

using compiler::CompileOptions;
using compiler::CompileResult;
using compiler::OpType;
using compiler::Unit;
using testing::ConvParams;

std::vector<uint8_t> RandomInput(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (uint8_t& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

CompileResult CompileOrFail(const std::vector<uint8_t>& model, bool cpu_only) {
  CompileOptions options;
  options.cpu_only = cpu_only;
  absl::StatusOr<CompileResult> r = compiler::Compile(model, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : CompileResult{};
}

std::vector<uint8_t> RunModel(const CompileResult& r, const std::vector<uint8_t>& input) {
  const runtime::testing::PteRun run = runtime::testing::RunPte(r.pte, {input});
  EXPECT_EQ(run.error, runtime::Error::kOk) << run.message;
  return run.outputs.empty() ? std::vector<uint8_t>{} : run.outputs[0];
}

int CountOps(const CompileResult& r, OpType type, Unit unit) {
  int n = 0;
  for (const compiler::Op& op : r.compilation.graph.ops) n += op.type == type && op.unit == unit;
  return n;
}

struct GroupedCase {
  std::string name;
  ConvParams params;
};

std::vector<GroupedCase> GroupedCases() {
  using compiler::Activation;
  using compiler::Padding;
  std::vector<GroupedCase> cases;
  cases.push_back({"2 groups 8->6", {.in_c = 8, .out_c = 6, .groups = 2}});
  GroupedCase four{"4 groups VALID stride 2 RELU6", {.in_h = 9, .in_w = 7, .in_c = 8, .out_c = 8}};
  four.params.groups = 4;
  four.params.opts = {Padding::kValid, 2, 2, 1, 1, Activation::kRelu6};
  cases.push_back(four);
  GroupedCase pointwise{"3 groups 1x1 RELU per-tensor",
                        {.in_c = 9, .out_c = 12, .kernel_h = 1, .kernel_w = 1, .groups = 3}};
  pointwise.params.opts.activation = Activation::kRelu;
  pointwise.params.per_channel = false;
  cases.push_back(pointwise);
  cases.push_back({"10 groups dilation 2", {.in_h = 10, .in_w = 10, .in_c = 20, .out_c = 10}});
  cases.back().params.groups = 10;
  cases.back().params.opts.dilation_h = cases.back().params.opts.dilation_w = 2;
  cases.push_back({"depthwise-shaped 6 groups", {.in_c = 6, .out_c = 6, .groups = 6}});
  return cases;
}

std::vector<uint8_t> GroupedModel(const GroupedCase& c) { return testing::SingleConv2D(c.params); }

size_t InputBytes(const ConvParams& p) { return static_cast<size_t>(p.in_h) * p.in_w * p.in_c; }

TEST(GroupedConv, NpuSplitGivesTheCpuBytes) {
  for (const GroupedCase& c : GroupedCases()) {
    SCOPED_TRACE(c.name);
    const std::vector<uint8_t> model = GroupedModel(c);
    const CompileResult cpu = CompileOrFail(model, /*cpu_only=*/true);
    const CompileResult npu = CompileOrFail(model, /*cpu_only=*/false);
    EXPECT_EQ(CountOps(cpu, OpType::kConv2D, Unit::kCpu), 1);  // whole, grouped
    const int32_t groups = c.params.groups;
    if (groups == c.params.in_c && groups == c.params.out_c) {
      EXPECT_EQ(CountOps(npu, OpType::kDepthwiseConv2D, Unit::kNpu), 1);
    } else {
      EXPECT_EQ(CountOps(npu, OpType::kConv2D, Unit::kNpu), groups);
      EXPECT_EQ(CountOps(npu, OpType::kSlice, Unit::kNpu), groups);
      EXPECT_EQ(CountOps(npu, OpType::kConcatenation, Unit::kNpu), 1);
    }
    EXPECT_EQ(npu.compilation.num_partitions, 1);
    for (uint32_t seed : {1u, 2u, 3u}) {
      const std::vector<uint8_t> input = RandomInput(InputBytes(c.params), seed);
      EXPECT_EQ(RunModel(npu, input), RunModel(cpu, input)) << "seed " << seed;
    }
  }
}

TEST(GroupedConv, AgreesWithTheInterpreterWithinItsRequantization) {
  if (auto why = testing::TfliteOracleUnavailable()) GTEST_SKIP() << *why;
  std::vector<testing::OracleCase> oracle;
  std::vector<std::vector<uint8_t>> ours;
  for (const GroupedCase& c : GroupedCases()) {
    const std::vector<uint8_t> model = GroupedModel(c);
    const CompileResult cpu = CompileOrFail(model, true);
    for (uint32_t seed : {4u, 5u}) {
      const std::vector<uint8_t> input = RandomInput(InputBytes(c.params), seed);
      oracle.push_back({model, {input}});
      ours.push_back(RunModel(cpu, input));
    }
  }
  std::vector<std::vector<uint8_t>> expected;
  std::string error;
  ASSERT_TRUE(testing::RunTfliteOracle(oracle, &expected, &error)) << error;
  int64_t total = 0, exact = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i].size(), expected[i].size()) << i;
    for (size_t k = 0; k < ours[i].size(); ++k) {
      const int diff =
          std::abs(static_cast<int8_t>(ours[i][k]) - static_cast<int8_t>(expected[i][k]));
      EXPECT_LE(diff, 1) << "case " << i << " element " << k;
      exact += diff == 0;
      ++total;
    }
  }
  std::printf("[ oracle   ] grouped CONV_2D %.2f%% exact of %lld elements\n",
              100.0 * static_cast<double>(exact) / static_cast<double>(total),
              static_cast<long long>(total));
}

TEST(GroupedConv, MoreGroupsThanTheSplitLimitStayOnTheCpuWithTheReason) {
  const std::vector<uint8_t> model =
      testing::SingleConv2D({.in_c = 24, .out_c = 12, .kernel_h = 1, .kernel_w = 1, .groups = 12});
  const CompileResult r = CompileOrFail(model, false);
  ASSERT_EQ(r.compilation.graph.ops.size(), 1u);
  const compiler::Op& op = r.compilation.graph.ops[0];
  EXPECT_EQ(op.unit, Unit::kCpu);
  EXPECT_NE(op.cpu_reason.find("groups=12 > 10"), std::string::npos) << op.cpu_reason;
  const std::vector<uint8_t> input = RandomInput(8 * 8 * 24, 9);
  EXPECT_EQ(RunModel(r, input), RunModel(CompileOrFail(model, true), input));
}

TEST(GroupedConv, NoNpuConvKeepsTheGroupedConvolutionWhole) {
  CompileOptions options;
  options.no_npu = {OpType::kConv2D};
  absl::StatusOr<CompileResult> r =
      compiler::Compile(testing::SingleConv2D({.in_c = 8, .out_c = 6, .groups = 2}), options);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->compilation.graph.ops.size(), 1u);
  EXPECT_EQ(r->compilation.graph.ops[0].cpu_reason, "CONV_2D #0: --no-npu CONV_2D");
}

// DEPTHWISE_CONV_2D over one input channel with depth_multiplier M runs on the NPU as a
// convolution with M output channels.
TEST(SingleChannelDepthwise, RunsOnTheNpuAsAConvolution) {
  using compiler::Activation;
  for (int32_t multiplier : {8, 3, 16}) {
    SCOPED_TRACE(multiplier);
    testing::DepthwiseParams p{.in_h = 12, .in_w = 10, .in_c = 1, .multiplier = multiplier};
    p.opts.activation = multiplier == 3 ? Activation::kRelu : Activation::kNone;
    p.opts.stride_h = p.opts.stride_w = multiplier == 16 ? 2 : 1;
    const std::vector<uint8_t> model = testing::SingleDepthwise(p);
    const CompileResult npu = CompileOrFail(model, false);
    ASSERT_EQ(CountOps(npu, OpType::kDepthwiseConv2D, Unit::kNpu), 1)
        << npu.compilation.graph.ops[0].cpu_reason;
    absl::StatusOr<std::vector<compiler::NpuPartitionBlob>> blobs =
        compiler::LowerNpuPartitions(npu.compilation);
    ASSERT_TRUE(blobs.ok()) << blobs.status();
    absl::StatusOr<compiler::NpuPayloadView> view = compiler::ParseNpuPayload(blobs->at(0).bytes);
    ASSERT_TRUE(view.ok()) << view.status();
    const auto* program = npu::GetNpuProgram(view->flatbuffer.data());
    ASSERT_EQ(program->kernels()->size(), 1u);
    EXPECT_EQ(program->kernels()->Get(0)->kind(), npu::KernelKind::Conv2D);
    const CompileResult cpu = CompileOrFail(model, true);
    for (uint32_t seed : {1u, 2u}) {
      const std::vector<uint8_t> input = RandomInput(12 * 10, seed);
      EXPECT_EQ(RunModel(npu, input), RunModel(cpu, input)) << "seed " << seed;
    }
  }
}

}  // namespace
}  // namespace boardlab
