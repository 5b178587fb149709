#include "compiler/cost_model.h"

#include "gtest/gtest.h"

namespace boardlab::compiler {
namespace {

using runtime::timing::CpuKernelClass;
using runtime::timing::NpuKernelClass;

int AddTensor(Graph& g, std::vector<int32_t> shape, bool constant = false) {
  Tensor t;
  t.shape = std::move(shape);
  t.is_constant = constant;
  if (constant) t.data.resize(t.NumElements());
  return g.AddTensor(std::move(t));
}

Op MakeOp(OpType type, std::vector<int> inputs, std::vector<int> outputs, OpOptions options = {}) {
  Op op;
  op.type = type;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  op.options = std::move(options);
  return op;
}

// KWS's first layers: CONV_2D 10x4 s2 1->64 @49x10->25x5, DEPTHWISE 3x3 64, AVERAGE_POOL 25x5,
// SOFTMAX on 64 values.
Compilation KwsHead() {
  Compilation c;
  Graph& g = c.graph;
  const int in = AddTensor(g, {1, 49, 10, 1});
  const int w0 = AddTensor(g, {64, 10, 4, 1}, true);
  const int c0 = AddTensor(g, {1, 25, 5, 64});
  const int w1 = AddTensor(g, {1, 3, 3, 64}, true);
  const int c1 = AddTensor(g, {1, 25, 5, 64});
  const int p = AddTensor(g, {1, 1, 1, 64});
  const int out = AddTensor(g, {1, 64});
  g.ops.push_back(MakeOp(OpType::kConv2D, {in, w0, kNoTensor}, {c0}, ConvOptions{}));
  g.ops.push_back(MakeOp(OpType::kDepthwiseConv2D, {c0, w1, kNoTensor}, {c1}, ConvOptions{}));
  PoolOptions pool;
  pool.filter_h = 25;
  pool.filter_w = 5;
  g.ops.push_back(MakeOp(OpType::kAveragePool2D, {c1}, {p}, pool));
  g.ops.push_back(MakeOp(OpType::kSoftmax, {p}, {out}, SoftmaxOptions{}));
  g.inputs = {in};
  g.outputs = {out};
  g.RebuildUses();
  for (Op& op : g.ops) op.unit = Unit::kNpu;
  c.target.timing.npu_kernel_setup_cycles = 1000;
  c.target.timing.sram_bytes_per_cycle = 8;
  return c;
}

TEST(CostModel, NpuShapeOfConv) {
  const Compilation c = KwsHead();
  const auto s = NpuShapeFor(c.graph, c.graph.ops[0], /*weights_in_flash=*/true);
  EXPECT_EQ(s.kind, NpuKernelClass::kConv);
  EXPECT_EQ(s.out_rows, 25);
  EXPECT_EQ(s.out_cols, 5);
  EXPECT_EQ(s.out_channels, 64);
  EXPECT_EQ(s.in_channels, 1);
  EXPECT_EQ(s.kernel_taps, 40);
  EXPECT_EQ(s.input_bytes, 490);
  EXPECT_EQ(s.output_bytes, 8000);
  EXPECT_EQ(s.weight_bytes, 2560);
  EXPECT_TRUE(s.weights_in_flash);
}

TEST(CostModel, NpuShapeOfDepthwisePoolAndSoftmax) {
  const Compilation c = KwsHead();
  const auto dw = NpuShapeFor(c.graph, c.graph.ops[1], false);
  EXPECT_EQ(dw.kind, NpuKernelClass::kDepthwise);
  EXPECT_EQ(dw.in_channels, 1);
  EXPECT_EQ(dw.kernel_taps, 9);
  const auto pool = NpuShapeFor(c.graph, c.graph.ops[2], true);
  EXPECT_EQ(pool.kind, NpuKernelClass::kPool);
  EXPECT_EQ(pool.kernel_taps, 125);
  EXPECT_FALSE(pool.weights_in_flash);  // nothing to prefetch
  const auto softmax = NpuShapeFor(c.graph, c.graph.ops[3], false);
  EXPECT_EQ(softmax.kind, NpuKernelClass::kSoftmax);
  EXPECT_EQ(softmax.out_rows, 1);
  EXPECT_EQ(softmax.out_channels, 64);
}

TEST(CostModel, CpuShapes) {
  const Compilation c = KwsHead();
  const auto conv = CpuShapeFor(c.graph, c.graph.ops[0]);
  EXPECT_EQ(conv.kind, CpuKernelClass::kConv);
  EXPECT_EQ(conv.macs, 320000);
  const auto pool = CpuShapeFor(c.graph, c.graph.ops[2]);
  EXPECT_EQ(pool.kind, CpuKernelClass::kElementwise);
  EXPECT_EQ(pool.macs, 64 * 125);
  EXPECT_EQ(pool.elements, 64);
  EXPECT_EQ(CpuShapeFor(c.graph, c.graph.ops[3]).kind, CpuKernelClass::kLut);
}

TEST(CostModel, EstimateFillsEveryOp) {
  Compilation c = KwsHead();
  c.graph.ops[3].unit = Unit::kCpu;
  c.target.timing.cpu_kernel_call_cycles = 300;
  c.target.timing.cpu_cycles_per_element_lut = 10;
  ASSERT_TRUE(EstimateCost(c).ok());
  ASSERT_EQ(c.op_costs.size(), 4u);
  EXPECT_DOUBLE_EQ(c.op_costs[0].utilization, 1.0 / 8);
  EXPECT_DOUBLE_EQ(c.op_costs[1].utilization, 9.0 / 16);
  EXPECT_EQ(c.op_costs[3].cycles, 300u + 640);
  double sum = 0;
  for (const OpCost& cost : c.op_costs) {
    EXPECT_GT(cost.cycles, 0u);
    sum += cost.microseconds;
  }
  EXPECT_DOUBLE_EQ(c.total_microseconds, sum);
}

TEST(CostModel, UnassignedOpIsAnError) {
  Compilation c = KwsHead();
  c.graph.ops[1].unit = Unit::kUnassigned;
  c.graph.ops[1].source_index = 7;
  const absl::Status s = EstimateCost(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "EstimateCost: DEPTHWISE_CONV_2D #7 has no unit (run the partitioner first)");
}

}  // namespace
}  // namespace boardlab::compiler
