#include "compiler/partition.h"

#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace boardlab::compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Builds small IR graphs directly; every activation is int8 with scale 0.5, zero point 0.
class PartitionTest : public ::testing::Test {
 protected:
  Graph& g() { return c_.graph; }

  int Act(std::vector<int32_t> shape, float scale = 0.5f, int64_t zp = 0) {
    Tensor t;
    t.name = "t" + std::to_string(g().tensors.size());
    t.shape = std::move(shape);
    t.quant = {{scale}, {zp}, 0};
    return g().AddTensor(std::move(t));
  }
  int Const(std::vector<int32_t> shape, DataType type, std::vector<float> scales) {
    Tensor t;
    t.name = "c" + std::to_string(g().tensors.size());
    t.shape = std::move(shape);
    t.type = type;
    t.is_constant = true;
    t.quant.scale = scales;
    t.quant.zero_point.assign(scales.size(), 0);
    t.data.assign(t.SizeBytes(), 0);
    return g().AddTensor(std::move(t));
  }
  int Ints(std::vector<int32_t> values) {
    const int t = Const({static_cast<int32_t>(values.size())}, DataType::kInt32, {});
    std::memcpy(g().tensors[t].data.data(), values.data(), values.size() * 4);
    return t;
  }
  // Adds an op and returns its output tensor.
  int AddOp(OpType type, std::vector<int> in, int out, OpOptions options = {}) {
    Op op;
    op.type = type;
    op.inputs = std::move(in);
    op.outputs = {out};
    op.options = std::move(options);
    op.source_index = static_cast<int>(g().ops.size());
    g().ops.push_back(std::move(op));
    return out;
  }
  // 1x8x8x8 -> 1x8x8x8, 1x1 kernel, bias scale = 0.5 * 0.25.
  int Conv(int in) {
    const int w = Const({8, 1, 1, 8}, DataType::kInt8, {0.25f});
    const int b = Const({8}, DataType::kInt32, {0.125f});
    return AddOp(OpType::kConv2D, {in, w, b}, Act({1, 8, 8, 8}), ConvOptions{});
  }
  int Relu(int in) { return AddOp(OpType::kRelu, {in}, Act(g().tensors[in].shape)); }
  // With the default output quantization the softmax may run on the NPU; with another scale
  // (zero point 0) it stays on the CPU.
  int Softmax(int in, float out_scale = 1.0f / 256) {
    const int64_t zp = out_scale == 1.0f / 256 ? -128 : 0;
    return AddOp(OpType::kSoftmax, {in}, Act(g().tensors[in].shape, out_scale, zp),
                 SoftmaxOptions{});
  }
  int Reshape(int in, std::vector<int32_t> shape) {
    return AddOp(OpType::kReshape, {in}, Act(shape));
  }

  absl::Status Partition() {
    g().RebuildUses();
    return RunPartitioner(c_);
  }
  int Count(Unit unit) const {
    int n = 0;
    for (const Op& op : c_.graph.ops) n += op.unit == unit;
    return n;
  }
  std::vector<int> Partitions() const {
    std::vector<int> parts;
    for (const Op& op : c_.graph.ops) parts.push_back(op.partition);
    return parts;
  }

  Compilation c_;
};

TEST_F(PartitionTest, ConvReluSoftmaxChainIsOnePartition) {
  Softmax(Relu(Conv(Act({1, 8, 8, 8}))));
  ASSERT_TRUE(Partition().ok());
  EXPECT_EQ(Count(Unit::kNpu), 3);
  EXPECT_EQ(Count(Unit::kCpu), 0);
  EXPECT_EQ(c_.num_partitions, 1);
  EXPECT_THAT(Partitions(), ElementsAre(0, 0, 0));
  for (const Op& op : g().ops) EXPECT_EQ(op.cpu_reason, "");
}

TEST_F(PartitionTest, CpuOpBetweenNpuOpsGivesTwoPartitions) {
  // The softmax's output quantization is not the fixed 1/256, so it stays on the CPU.
  Relu(Softmax(Conv(Act({1, 8, 8, 8})), 0.5f));
  ASSERT_TRUE(Partition().ok());
  EXPECT_EQ(Count(Unit::kNpu), 2);
  EXPECT_EQ(Count(Unit::kCpu), 1);
  EXPECT_EQ(c_.num_partitions, 2);
  EXPECT_THAT(Partitions(), ElementsAre(0, -1, 1));
  EXPECT_EQ(g().ops[1].cpu_reason,
            "SOFTMAX #1: output scale 1/256 and zero point -128 \xE2\x80\x94 output scale 0.5 "
            "zp 0");
}

TEST_F(PartitionTest, OpFedThroughACpuOpDoesNotJoinTheProducerPartition) {
  // conv -> softmax (CPU) -> add <- conv: joining the add to the conv's partition would make the
  // partition wait for a CPU op that waits for the partition.
  const int conv = Conv(Act({1, 8, 8, 8}));
  const int cpu = Softmax(conv, 0.5f);
  AddOp(OpType::kAdd, {conv, cpu}, Act({1, 8, 8, 8}), ElementwiseOptions{});
  ASSERT_TRUE(Partition().ok());
  EXPECT_EQ(Count(Unit::kNpu), 2);
  EXPECT_EQ(c_.num_partitions, 2);
  EXPECT_THAT(Partitions(), ElementsAre(0, -1, 1));
}

TEST_F(PartitionTest, ParallelBranchesMergeIntoOnePartition) {
  const int in = Act({1, 8, 8, 8});
  const int a = Conv(in);
  const int b = Relu(Conv(in));
  AddOp(OpType::kAdd, {a, b}, Act({1, 8, 8, 8}), ElementwiseOptions{});
  ASSERT_TRUE(Partition().ok());
  EXPECT_EQ(Count(Unit::kNpu), 4);
  EXPECT_EQ(c_.num_partitions, 1);
  EXPECT_THAT(Partitions(), ElementsAre(0, 0, 0, 0));
}

TEST_F(PartitionTest, IndependentNpuOpsAreSeparatePartitionsNumberedInOrder) {
  const int in = Act({1, 8, 8, 8});
  Softmax(Conv(in), 0.5f);  // conv NPU, softmax CPU
  Relu(in);                 // unconnected to the conv
  ASSERT_TRUE(Partition().ok());
  EXPECT_EQ(c_.num_partitions, 2);
  EXPECT_THAT(Partitions(), ElementsAre(0, -1, 1));
}

TEST_F(PartitionTest, NoOpOnlyPartitionGoesBackToTheCpu) {
  // softmax (CPU) -> reshape -> softmax (CPU): the reshape alone would be an empty NPU graph.
  const int x = Softmax(Act({1, 8, 8, 8}), 0.5f);
  Softmax(Reshape(x, {1, 512}), 0.5f);
  ASSERT_TRUE(Partition().ok());
  EXPECT_EQ(Count(Unit::kNpu), 0);
  EXPECT_EQ(Count(Unit::kCpu), 3);
  EXPECT_EQ(c_.num_partitions, 0);
  EXPECT_EQ(g().ops[1].cpu_reason,
            "RESHAPE #1: partition of no-ops only: the NPU would receive an empty graph");
}

TEST_F(PartitionTest, NoOpNextToComputeStaysOnTheNpu) {
  Reshape(Conv(Act({1, 8, 8, 8})), {1, 512});
  ASSERT_TRUE(Partition().ok());
  EXPECT_EQ(Count(Unit::kNpu), 2);
  EXPECT_EQ(c_.num_partitions, 1);
}

TEST_F(PartitionTest, IdentityTransposeAloneIsRejectedButARealOneIsNot) {
  const int x = Softmax(Act({1, 2, 3, 4}), 0.5f);
  const int identity = AddOp(OpType::kTranspose, {x, Ints({0, 1, 2, 3})}, Act({1, 2, 3, 4}));
  const int y = Softmax(identity, 0.5f);
  AddOp(OpType::kTranspose, {y, Ints({0, 2, 1, 3})}, Act({1, 3, 2, 4}));
  ASSERT_TRUE(Partition().ok());
  EXPECT_THAT(Partitions(), ElementsAre(-1, -1, -1, 0));
  EXPECT_THAT(g().ops[1].cpu_reason, HasSubstr("partition of no-ops only"));
}

TEST_F(PartitionTest, LoneMeanOverSizeOneAxesGoesBackToTheCpu) {
  ReducerOptions keep;
  keep.keep_dims = true;
  const int x = Softmax(Act({1, 1, 1, 8}), 0.5f);
  const int noop = AddOp(OpType::kMean, {x, Ints({1, 2})}, Act({1, 1, 1, 8}), keep);
  const int y = Softmax(noop, 0.5f);
  AddOp(OpType::kMean, {Reshape(y, {1, 2, 4, 1}), Ints({1, -2})}, Act({1, 1, 1, 1}), keep);
  ASSERT_TRUE(Partition().ok());
  EXPECT_THAT(Partitions(), ElementsAre(-1, -1, -1, 0, 0));
  EXPECT_THAT(g().ops[1].cpu_reason, HasSubstr("MEAN #1: MEAN alone in a partition"));
}

TEST_F(PartitionTest, CpuOnlyPutsEveryOpOnTheCpu) {
  c_.options.cpu_only = true;
  Softmax(Relu(Conv(Act({1, 8, 8, 8}))));
  ASSERT_TRUE(Partition().ok());
  EXPECT_EQ(Count(Unit::kCpu), 3);
  EXPECT_EQ(c_.num_partitions, 0);
  EXPECT_EQ(g().ops[0].cpu_reason, "CONV_2D #0: --cpu-only");
  EXPECT_THAT(Partitions(), ElementsAre(-1, -1, -1));
}

TEST_F(PartitionTest, NoNpuForcesOneOpTypeOntoTheCpu) {
  c_.options.no_npu = {OpType::kConv2D};
  Softmax(Relu(Conv(Act({1, 8, 8, 8}))));
  ASSERT_TRUE(Partition().ok());
  EXPECT_EQ(Count(Unit::kNpu), 2);
  EXPECT_EQ(Count(Unit::kCpu), 1);
  EXPECT_EQ(c_.num_partitions, 1);
  EXPECT_EQ(g().ops[0].cpu_reason, "CONV_2D #0: --no-npu CONV_2D");
  EXPECT_THAT(Partitions(), ElementsAre(-1, 0, 0));
}

TEST_F(PartitionTest, QuantizeAndDequantizeAtTheEdgesStayOnTheCpu) {
  Tensor f;
  f.name = "float_in";
  f.shape = {1, 8, 8, 8};
  f.type = DataType::kFloat32;
  const int in = g().AddTensor(f);
  const int q = AddOp(OpType::kQuantize, {in}, Act({1, 8, 8, 8}));
  const int conv = Conv(q);
  f.name = "float_out";
  AddOp(OpType::kDequantize, {conv}, g().AddTensor(f));
  ASSERT_TRUE(Partition().ok());
  EXPECT_THAT(Partitions(), ElementsAre(-1, 0, -1));
  EXPECT_THAT(g().ops[0].cpu_reason,
              HasSubstr("QUANTIZE #0: QUANTIZE converts float (or requantizes int8 and int16) "
                        "to int8 or int16; the NPU computes int8"));
}

TEST_F(PartitionTest, DeadAndRemovedOpsAreLeftAlone) {
  const int x = Relu(Act({1, 8}));
  Relu(x);
  g().ops[1].unit = Unit::kRemoved;
  ASSERT_TRUE(Partition().ok());
  EXPECT_EQ(g().ops[1].unit, Unit::kRemoved);
  EXPECT_EQ(g().ops[1].partition, -1);
  EXPECT_THAT(Partitions(), ElementsAre(0, -1));
}

}  // namespace
}  // namespace boardlab::compiler

namespace boardlab::compiler {
namespace {

class ClampPartitionTest : public ::testing::Test {
 protected:
  // A lone RELU / RELU6 from a graph input, in and out quantized (scale, zp).
  Compilation LoneClamp(OpType type, float scale, int64_t zp) {
    Compilation c;
    auto add = [&](const char* name) {
      Tensor t;
      t.name = name;
      t.shape = {1, 4, 4, 8};
      t.quant = {{scale}, {zp}, 0};
      return c.graph.AddTensor(std::move(t));
    };
    const int in = add("in");
    const int out = add("out");
    Op op;
    op.type = type;
    op.inputs = {in};
    op.outputs = {out};
    op.source_index = 0;
    c.graph.ops.push_back(op);
    c.graph.inputs = {in};
    c.graph.outputs = {out};
    c.graph.RebuildUses();
    return c;
  }
};

TEST_F(ClampPartitionTest, LoneReluWhoseHingeSurvivesQuantizationRunsOnTheNpu) {
  Compilation c = LoneClamp(OpType::kRelu, 0.05f, 0);
  ASSERT_TRUE(RunPartitioner(c).ok());
  EXPECT_EQ(c.graph.ops[0].unit, Unit::kNpu) << c.graph.ops[0].cpu_reason;
}

TEST_F(ClampPartitionTest, LoneReluThatClipsNothingIsANoOpPartition) {
  // Output zero point -128: quantize(0) is the int8 minimum, so RELU changes no value.
  Compilation c = LoneClamp(OpType::kRelu, 0.05f, -128);
  ASSERT_TRUE(RunPartitioner(c).ok());
  EXPECT_EQ(c.graph.ops[0].unit, Unit::kCpu);
  EXPECT_NE(c.graph.ops[0].cpu_reason.find("no-ops only"), std::string::npos)
      << c.graph.ops[0].cpu_reason;
}

TEST_F(ClampPartitionTest, LoneRelu6ClipsWhenSixIsInsideTheRange) {
  // zp -128, scale 6/255 * 0.5: quantize(6) = -128 + 510 > 127 -> no clip -> no-op;
  // scale 0.1: quantize(6) = -68 -> clips -> NPU.
  Compilation identity = LoneClamp(OpType::kRelu6, 6.0f / 510, -128);
  ASSERT_TRUE(RunPartitioner(identity).ok());
  EXPECT_EQ(identity.graph.ops[0].unit, Unit::kCpu);
  Compilation clipping = LoneClamp(OpType::kRelu6, 0.1f, -128);
  ASSERT_TRUE(RunPartitioner(clipping).ok());
  EXPECT_EQ(clipping.graph.ops[0].unit, Unit::kNpu) << clipping.graph.ops[0].cpu_reason;
}

}  // namespace
}  // namespace boardlab::compiler
