#include "compiler/npu_constraints.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/supported_ops_doc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/test_paths.h"

namespace boardlab::compiler {
namespace {

using ::testing::HasSubstr;

// Builds tiny IR graphs directly (no TFLite file): activations, constants and ops.
struct Builder {
  Graph g;

  int Act(std::vector<int32_t> shape, float scale = 0.5f, int64_t zp = 0,
          DataType type = DataType::kInt8) {
    Tensor t;
    t.name = absl::StrCat("t", g.tensors.size());
    t.shape = std::move(shape);
    t.type = type;
    if (type != DataType::kFloat32) t.quant = {{scale}, {zp}, 0};
    return g.AddTensor(std::move(t));
  }
  int Const(std::vector<int32_t> shape, DataType type, std::vector<float> scales,
            std::vector<uint8_t> data = {}) {
    Tensor t;
    t.name = absl::StrCat("c", g.tensors.size());
    t.shape = std::move(shape);
    t.type = type;
    t.is_constant = true;
    t.quant.scale = scales;
    t.quant.zero_point.assign(scales.size(), 0);
    t.data = data.empty() ? std::vector<uint8_t>(t.SizeBytes(), 0) : std::move(data);
    return g.AddTensor(std::move(t));
  }
  int Ints(std::vector<int32_t> values) {
    std::vector<uint8_t> data(values.size() * 4);
    std::memcpy(data.data(), values.data(), data.size());
    return Const({static_cast<int32_t>(values.size())}, DataType::kInt32, {}, std::move(data));
  }
  int AddOp(OpType type, std::vector<int> in, std::vector<int> out, OpOptions options = {}) {
    Op op;
    op.type = type;
    op.inputs = std::move(in);
    op.outputs = std::move(out);
    op.options = std::move(options);
    op.source_index = static_cast<int>(g.ops.size());
    g.ops.push_back(std::move(op));
    g.RebuildUses();
    return static_cast<int>(g.ops.size()) - 1;
  }
  Op& op(int i) { return g.ops[i]; }
  Tensor& t(int i) { return g.tensors[i]; }
};

// A 1x8x8xCin -> 1x8x8xCout conv with a kh x kw kernel; input scale 0.5, weight scale 0.25.
int Conv(Builder& b, int32_t cin, int32_t kh, int32_t kw, int32_t cout = 4) {
  const int in = b.Act({1, 8, 8, cin});
  const int w = b.Const({cout, kh, kw, cin}, DataType::kInt8, std::vector<float>(cout, 0.25f));
  const int bias = b.Const({cout}, DataType::kInt32, std::vector<float>(cout, 0.125f));
  const int out = b.Act({1, 8, 8, cout});
  return b.AddOp(OpType::kConv2D, {in, w, bias}, {out}, ConvOptions{});
}

int Depthwise(Builder& b, int32_t c, int32_t multiplier = 1) {
  const int in = b.Act({1, 8, 8, c});
  const int w = b.Const({1, 3, 3, c * multiplier}, DataType::kInt8, {0.25f});
  const int out = b.Act({1, 8, 8, c * multiplier});
  ConvOptions o;
  o.depth_multiplier = multiplier;
  return b.AddOp(OpType::kDepthwiseConv2D, {in, w, kNoTensor}, {out}, o);
}

int Unary(Builder& b, OpType type, std::vector<int32_t> shape, OpOptions options = {}) {
  const int in = b.Act(shape);
  const int out = b.Act(shape);
  return b.AddOp(type, {in}, {out}, std::move(options));
}

const NpuConstraint& Find(OpType type, std::string_view id) {
  for (const auto* table : {&GenericNpuConstraints(), &ConstraintsFor(type)}) {
    for (const NpuConstraint& c : *table) {
      if (c.id == id) return c;
    }
  }
  ADD_FAILURE() << "no constraint " << id << " for " << OpTypeName(type);
  static const NpuConstraint kNone = {"", "", nullptr};
  return kNone;
}

ConstraintResult Check(Builder& b, int op, std::string_view id, const NpuLimits& limits = {}) {
  const NpuConstraint& c = Find(b.op(op).type, id);
  if (c.check == nullptr) return {false, "missing"};
  return c.check(b.g, b.op(op), limits);
}

// Every constraint id the tests below exercise; NpuConstraintTables.EveryConstraintIsTested
// fails when a table gains a constraint without a test.
const std::set<std::string_view> kTestedIds = {"int8_activations",
                                               "per_tensor_quantization",
                                               "max_rank",
                                               "static_shapes",
                                               "weights_const_int8_zp0",
                                               "bias_const_int32",
                                               "bias_scale",
                                               "conv_kernel",
                                               "conv_stride",
                                               "conv_dilation",
                                               "conv_kernel_macs",
                                               "conv_groups",
                                               "single_channel_depthwise_kernel_macs",
                                               "depth_multiplier_1",
                                               "fc_weights_rank2",
                                               "broadcast",
                                               "all_inputs_share_quantization",
                                               "shared_quantization",
                                               "constant_operands",
                                               "pool_kernel",
                                               "pool_stride",
                                               "softmax_channels",
                                               "softmax_rows",
                                               "softmax_elements",
                                               "softmax_output_quantization",
                                               "padv2_value_is_zero_point",
                                               "resize_scale",
                                               "batch_matmul_rank3",
                                               "batch_matmul_zero_points_0",
                                               "quantize_not_on_npu",
                                               "dequantize_not_on_npu",
                                               "cast_not_on_npu",
                                               "float32_only",
                                               "stateful_op",
                                               "control_flow",
                                               "resource_variable",
                                               "float_postprocessing",
                                               "signal_op",
                                               "streaming_op",
                                               "not_lowered",
                                               "not_supported"};

TEST(NpuConstraintTables, EveryConstraintIsTested) {
  std::set<std::string_view> ids;
  for (const NpuConstraint& c : GenericNpuConstraints()) ids.insert(c.id);
  for (int i = 0; i < kNumOpTypes; ++i) {
    for (const NpuConstraint& c : ConstraintsFor(static_cast<OpType>(i))) {
      ids.insert(c.id);
      EXPECT_FALSE(c.description.empty()) << c.id;
    }
  }
  for (std::string_view id : ids) EXPECT_TRUE(kTestedIds.count(id)) << id << " has no test";
}

// The op types the NPU may run: those of neutron-rt700.md section 4 that boardlab lowers.
TEST(NpuConstraintTables, NpuOpTypesAreTheLoweredNeutronOps) {
  const std::set<OpType> npu = {OpType::kAdd,
                                OpType::kAveragePool2D,
                                OpType::kConcatenation,
                                OpType::kConv2D,
                                OpType::kDepthwiseConv2D,
                                OpType::kFullyConnected,
                                OpType::kLogistic,
                                OpType::kMaxPool2D,
                                OpType::kMul,
                                OpType::kRelu,
                                OpType::kRelu6,
                                OpType::kReshape,
                                OpType::kSoftmax,
                                OpType::kTanh,
                                OpType::kPad,
                                OpType::kTranspose,
                                OpType::kMean,
                                OpType::kSub,
                                OpType::kSqueeze,
                                OpType::kStridedSlice,
                                OpType::kMaximum,
                                OpType::kMinimum,
                                OpType::kPadV2,
                                OpType::kSlice,
                                OpType::kResizeNearestNeighbor,
                                OpType::kLeakyRelu,
                                OpType::kHardSwish,
                                OpType::kBatchMatMul,
                                OpType::kExpandDims};
  for (int i = 0; i < kNumOpTypes; ++i) {
    const OpType type = static_cast<OpType>(i);
    EXPECT_EQ(NpuSupportsOpType(type), npu.count(type) == 1) << OpTypeName(type);
  }
}

TEST(NpuConstraint, Int8Activations) {
  Builder b;
  const int relu = Unary(b, OpType::kRelu, {1, 4});
  EXPECT_TRUE(Check(b, relu, "int8_activations").ok);
  b.t(b.op(relu).inputs[0]).type = DataType::kInt16;
  ConstraintResult r = Check(b, relu, "int8_activations");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.detail, "input 0 't0' is int16");
}

TEST(NpuConstraint, PerTensorQuantization) {
  Builder b;
  const int relu = Unary(b, OpType::kRelu, {1, 4});
  EXPECT_TRUE(Check(b, relu, "per_tensor_quantization").ok);
  b.t(b.op(relu).outputs[0]).quant = {{0.5f, 0.25f}, {0, 0}, 1};
  ConstraintResult r = Check(b, relu, "per_tensor_quantization");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.detail, "output 0 't1' has quantization 2 scales");
}

TEST(NpuConstraint, MaxRank) {
  Builder b;
  const int ok = Unary(b, OpType::kRelu, {1, 1, 1, 1, 1, 2});
  const int bad = Unary(b, OpType::kRelu, {1, 1, 1, 1, 1, 1, 2});
  EXPECT_TRUE(Check(b, ok, "max_rank").ok);
  EXPECT_EQ(Check(b, bad, "max_rank").detail, "input 0 't2' rank=7 > 6");
}

TEST(NpuConstraint, StaticShapes) {
  Builder b;
  const int ok = Unary(b, OpType::kRelu, {1, 4});
  const int bad = Unary(b, OpType::kRelu, {-1, 4});
  EXPECT_TRUE(Check(b, ok, "static_shapes").ok);
  EXPECT_EQ(Check(b, bad, "static_shapes").detail, "input 0 't2' has shape [-1,4]");
}

TEST(NpuConstraint, WeightsConstInt8Zp0) {
  Builder b;
  const int conv = Conv(b, 8, 3, 3);
  EXPECT_TRUE(Check(b, conv, "weights_const_int8_zp0").ok);
  Tensor& w = b.t(b.op(conv).inputs[1]);
  w.quant.zero_point[1] = 3;
  EXPECT_EQ(Check(b, conv, "weights_const_int8_zp0").detail, "weights 'c1' zero point 3");
  w.quant.zero_point[1] = 0;
  w.is_constant = false;
  EXPECT_EQ(Check(b, conv, "weights_const_int8_zp0").detail, "weights 'c1' are not constant");
}

TEST(NpuConstraint, BiasConstInt32) {
  Builder b;
  const int conv = Conv(b, 8, 3, 3);
  EXPECT_TRUE(Check(b, conv, "bias_const_int32").ok);
  b.t(b.op(conv).inputs[2]).type = DataType::kInt64;
  EXPECT_EQ(Check(b, conv, "bias_const_int32").detail, "bias 'c2' is int64");
  b.op(conv).inputs[2] = kNoTensor;  // a missing bias is synthesised
  EXPECT_TRUE(Check(b, conv, "bias_const_int32").ok);
}

TEST(NpuConstraint, BiasScale) {
  Builder b;
  const int conv = Conv(b, 8, 3, 3);
  EXPECT_TRUE(Check(b, conv, "bias_scale").ok);  // 0.5 * 0.25 = 0.125
  b.t(b.op(conv).inputs[2]).quant.scale[2] = 0.126f;
  ConstraintResult r = Check(b, conv, "bias_scale");
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.detail, "bias scale[2]=0.126 != input scale 0.5 * weight scale 0.25 = 0.125");
}

TEST(NpuConstraint, ConvKernel) {
  Builder b;
  const int ok = Conv(b, 1, 3, 4096);
  const int bad = Conv(b, 1, 1, 4097);
  EXPECT_TRUE(Check(b, ok, "conv_kernel").ok);
  EXPECT_EQ(Check(b, bad, "conv_kernel").detail, "kernel_w=4097 > 4096");
}

TEST(NpuConstraint, ConvStride) {
  Builder b;
  const int conv = Conv(b, 8, 1, 1);
  EXPECT_TRUE(Check(b, conv, "conv_stride").ok);
  b.op(conv).opts<ConvOptions>().stride_h = 5000;
  EXPECT_EQ(Check(b, conv, "conv_stride").detail, "stride_h=5000 > 4096");
}

TEST(NpuConstraint, ConvDilation) {
  Builder b;
  const int conv = Conv(b, 8, 3, 3);
  EXPECT_TRUE(Check(b, conv, "conv_dilation").ok);
  b.op(conv).opts<ConvOptions>().dilation_w = 4097;
  EXPECT_EQ(Check(b, conv, "conv_dilation").detail, "dilation_w=4097 > 4096");
}

TEST(NpuConstraint, ConvKernelMacs) {
  Builder b;
  const int fits = Conv(b, 7280, 3, 3, 1);     // 9 * 7280 = 65520 <= 65535
  const int rounded = Conv(b, 7281, 3, 3, 1);  // Cin rounds up to 7288: 9 * 7288 = 65592
  const int bad = Conv(b, 8192, 3, 3, 1);      // 9 * 8192 = 73728
  EXPECT_TRUE(Check(b, fits, "conv_kernel_macs").ok);
  EXPECT_EQ(Check(b, rounded, "conv_kernel_macs").detail,
            "kernel_h*kernel_w*ceil8(Cin)=65592 > 65535");
  EXPECT_EQ(Check(b, bad, "conv_kernel_macs").detail, "kernel_h*kernel_w*ceil8(Cin)=73728 > 65535");
}

TEST(NpuConstraint, DepthMultiplier1) {
  Builder b;
  const int ok = Depthwise(b, 8);
  const int bad = Depthwise(b, 8, 2);
  const int one_channel = Depthwise(b, 1, 8);  // lowered as a convolution with 8 outputs
  EXPECT_TRUE(Check(b, ok, "depth_multiplier_1").ok);
  EXPECT_TRUE(Check(b, one_channel, "depth_multiplier_1").ok);
  EXPECT_EQ(Check(b, bad, "depth_multiplier_1").detail,
            "depth_multiplier=2 over 8 input channels (a group convolution)");
}

TEST(NpuConstraint, SingleChannelDepthwiseKernelMacs) {
  Builder b;
  const int in = b.Act({1, 8, 8, 1});
  const int w = b.Const({1, 100, 90, 4}, DataType::kInt8, {0.25f});
  const int out = b.Act({1, 8, 8, 4});
  ConvOptions o;
  o.depth_multiplier = 4;
  const int big = b.AddOp(OpType::kDepthwiseConv2D, {in, w, kNoTensor}, {out}, o);
  EXPECT_EQ(Check(b, big, "single_channel_depthwise_kernel_macs").detail,
            "kernel_h*kernel_w*ceil8(1)=72000 > 65535");
  EXPECT_TRUE(Check(b, Depthwise(b, 1, 8), "single_channel_depthwise_kernel_macs").ok);
  EXPECT_TRUE(Check(b, Depthwise(b, 8, 1), "single_channel_depthwise_kernel_macs").ok);
}

// Grouped CONV_2D: 8 input channels, weights of depth `depth`, `cout` output channels.
int GroupedConv(Builder& b, int32_t cin, int32_t depth, int32_t cout) {
  const int in = b.Act({1, 8, 8, cin});
  const int w = b.Const({cout, 3, 3, depth}, DataType::kInt8, std::vector<float>(cout, 0.25f));
  const int out = b.Act({1, 8, 8, cout});
  return b.AddOp(OpType::kConv2D, {in, w, kNoTensor}, {out}, ConvOptions{});
}

TEST(NpuConstraint, ConvGroups) {
  Builder b;
  EXPECT_TRUE(Check(b, GroupedConv(b, 8, 8, 4), "conv_groups").ok);    // ungrouped
  EXPECT_TRUE(Check(b, GroupedConv(b, 40, 4, 20), "conv_groups").ok);  // 10 groups
  EXPECT_TRUE(Check(b, GroupedConv(b, 32, 1, 32), "conv_groups").ok);  // depthwise-shaped
  EXPECT_EQ(Check(b, GroupedConv(b, 48, 4, 24), "conv_groups").detail,
            "groups=12 > 10 (input 48 channels, output 24)");
  NpuLimits two;
  two.conv_max_groups = 2;
  EXPECT_FALSE(Check(b, GroupedConv(b, 12, 4, 6), "conv_groups", two).ok);
}

TEST(NpuConstraint, FcWeightsRank2) {
  Builder b;
  const int in = b.Act({1, 16});
  const int w = b.Const({4, 16}, DataType::kInt8, {0.25f});
  const int out = b.Act({1, 4});
  const int fc =
      b.AddOp(OpType::kFullyConnected, {in, w, kNoTensor}, {out}, FullyConnectedOptions{});
  EXPECT_TRUE(Check(b, fc, "fc_weights_rank2").ok);
  b.t(w).shape = {4, 4, 4};
  EXPECT_EQ(Check(b, fc, "fc_weights_rank2").detail, "weights rank=3");
}

TEST(NpuConstraint, Broadcast) {
  Builder b;
  const int a = b.Act({1, 4, 4, 8});
  const int c = b.Act({1, 1, 1, 8});
  const int out = b.Act({1, 4, 4, 8});
  const int add = b.AddOp(OpType::kAdd, {a, c}, {out}, ElementwiseOptions{});
  EXPECT_TRUE(Check(b, add, "broadcast").ok);
  const int x = b.Act({1, 4, 1, 8});
  const int y = b.Act({1, 1, 4, 8});
  const int out2 = b.Act({1, 4, 4, 8});
  const int both = b.AddOp(OpType::kMul, {x, y}, {out2}, ElementwiseOptions{});
  EXPECT_EQ(Check(b, both, "broadcast").detail, "inputs have 32 and 32 elements, output 128");
}

TEST(NpuConstraint, AllInputsShareQuantization) {
  Builder b;
  const int x = b.Act({1, 8});
  const int y = b.Act({1, 8});
  const int out = b.Act({1, 8});
  const int cat = b.AddOp(OpType::kConcatenation, {x, y}, {out}, ConcatOptions{});
  EXPECT_TRUE(Check(b, cat, "all_inputs_share_quantization").ok);
  b.t(y).quant.zero_point[0] = 5;
  EXPECT_EQ(Check(b, cat, "all_inputs_share_quantization").detail,
            "input 1 scale 0.5 zp 5, output scale 0.5 zp 0");
}

TEST(NpuConstraint, SharedQuantization) {
  Builder b;
  const int pool = Unary(b, OpType::kMaxPool2D, {1, 4, 4, 8}, PoolOptions{});
  EXPECT_TRUE(Check(b, pool, "shared_quantization").ok);
  b.t(b.op(pool).outputs[0]).quant.scale[0] = 0.75f;
  EXPECT_EQ(Check(b, pool, "shared_quantization").detail,
            "input scale 0.5 zp 0, output scale 0.75 zp 0");
}

TEST(NpuConstraint, ConstantOperands) {
  Builder b;
  const int in = b.Act({1, 2, 3, 4});
  const int perm = b.Ints({0, 2, 1, 3});
  const int out = b.Act({1, 3, 2, 4});
  const int transpose = b.AddOp(OpType::kTranspose, {in, perm}, {out});
  EXPECT_TRUE(Check(b, transpose, "constant_operands").ok);
  b.t(perm).is_constant = false;
  EXPECT_EQ(Check(b, transpose, "constant_operands").detail, "input 1 'c1' is not constant");
}

TEST(NpuConstraint, PoolKernel) {
  Builder b;
  PoolOptions o;
  o.filter_h = 4096;
  const int ok = Unary(b, OpType::kAveragePool2D, {1, 4, 4, 8}, o);
  o.filter_w = 8000;
  const int bad = Unary(b, OpType::kAveragePool2D, {1, 4, 4, 8}, o);
  EXPECT_TRUE(Check(b, ok, "pool_kernel").ok);
  EXPECT_EQ(Check(b, bad, "pool_kernel").detail, "filter_w=8000 > 4096");
}

TEST(NpuConstraint, PoolStride) {
  Builder b;
  PoolOptions o;
  o.stride_w = 2;
  const int ok = Unary(b, OpType::kMaxPool2D, {1, 4, 4, 8}, o);
  o.stride_h = 4097;
  const int bad = Unary(b, OpType::kMaxPool2D, {1, 4, 4, 8}, o);
  EXPECT_TRUE(Check(b, ok, "pool_stride").ok);
  EXPECT_EQ(Check(b, bad, "pool_stride").detail, "stride_h=4097 > 4096");
}

int Softmax(Builder& b, std::vector<int32_t> shape) {
  const int in = b.Act(shape);
  const int out = b.Act(shape, 1.0f / 256, -128);
  return b.AddOp(OpType::kSoftmax, {in}, {out}, SoftmaxOptions{});
}

TEST(NpuConstraint, SoftmaxChannels) {
  Builder b;
  const int ok = Softmax(b, {1, 2040});
  const int bad = Softmax(b, {1, 2048});
  EXPECT_TRUE(Check(b, ok, "softmax_channels").ok);
  EXPECT_EQ(Check(b, bad, "softmax_channels").detail, "C=2048 > 2040");
}

TEST(NpuConstraint, SoftmaxRows) {
  Builder b;
  const int ok = Softmax(b, {1, 64, 64, 10});
  const int bad = Softmax(b, {1, 65, 64, 10});
  EXPECT_TRUE(Check(b, ok, "softmax_rows").ok);
  EXPECT_EQ(Check(b, bad, "softmax_rows").detail, "N*H*W=4160 > 4096");
}

TEST(NpuConstraint, SoftmaxElements) {
  Builder b;
  const int ok = Softmax(b, {1, 4096, 128});
  const int bad = Softmax(b, {1, 4096, 129});
  EXPECT_TRUE(Check(b, ok, "softmax_elements").ok);
  EXPECT_EQ(Check(b, bad, "softmax_elements").detail, "C*N*H*W=528384 > 524288");
}

TEST(NpuConstraint, SoftmaxOutputQuantization) {
  Builder b;
  const int softmax = Softmax(b, {1, 10});
  EXPECT_TRUE(Check(b, softmax, "softmax_output_quantization").ok);
  b.t(b.op(softmax).outputs[0]).quant.zero_point[0] = 0;
  EXPECT_EQ(Check(b, softmax, "softmax_output_quantization").detail,
            "output scale 0.00390625 zp 0");
}

TEST(NpuConstraint, Padv2ValueIsZeroPoint) {
  Builder b;
  const int in = b.Act({1, 4, 4, 8}, 0.5f, -3);
  const int paddings = b.Ints({0, 0, 1, 1, 1, 1, 0, 0});
  b.t(paddings).shape = {4, 2};
  const int value = b.Const({1}, DataType::kInt8, {0.5f}, {static_cast<uint8_t>(-3)});
  const int out = b.Act({1, 6, 6, 8}, 0.5f, -3);
  const int pad = b.AddOp(OpType::kPadV2, {in, paddings, value}, {out});
  EXPECT_TRUE(Check(b, pad, "padv2_value_is_zero_point").ok);
  b.t(value).data[0] = 0;
  EXPECT_EQ(Check(b, pad, "padv2_value_is_zero_point").detail, "pad value 0 != zero point -3");
}

TEST(NpuConstraint, ResizeScale) {
  Builder b;
  const int in = b.Act({1, 4, 4, 8});
  const int out = b.Act({1, 8, 16, 8});
  const int ok =
      b.AddOp(OpType::kResizeNearestNeighbor, {in, b.Ints({8, 16})}, {out}, ResizeOptions{});
  const int out3 = b.Act({1, 12, 4, 8});
  const int bad =
      b.AddOp(OpType::kResizeNearestNeighbor, {in, b.Ints({12, 4})}, {out3}, ResizeOptions{});
  const int out_frac = b.Act({1, 4, 6, 8});
  const int frac =
      b.AddOp(OpType::kResizeNearestNeighbor, {in, b.Ints({4, 6})}, {out_frac}, ResizeOptions{});
  EXPECT_TRUE(Check(b, ok, "resize_scale").ok);
  EXPECT_EQ(Check(b, bad, "resize_scale").detail, "H 4 -> 12: scale not in {1, 2, 4, 8}");
  EXPECT_EQ(Check(b, frac, "resize_scale").detail, "W 4 -> 6: scale not in {1, 2, 4, 8}");
}

int BatchMatMul(Builder& b, std::vector<int32_t> a_shape, int64_t b_zp) {
  const int x = b.Act(a_shape);
  const int y = b.Act({2, 8, 4}, 0.5f, b_zp);
  const int out = b.Act({2, 4, 4});
  return b.AddOp(OpType::kBatchMatMul, {x, y}, {out}, BatchMatMulOptions{});
}

TEST(NpuConstraint, BatchMatmulRank3) {
  Builder b;
  const int ok = BatchMatMul(b, {2, 4, 8}, 0);
  const int bad = BatchMatMul(b, {1, 2, 4, 8}, 0);
  EXPECT_TRUE(Check(b, ok, "batch_matmul_rank3").ok);
  EXPECT_EQ(Check(b, bad, "batch_matmul_rank3").detail, "ranks 4 and 3");
}

TEST(NpuConstraint, BatchMatmulZeroPoints0) {
  Builder b;
  const int ok = BatchMatMul(b, {2, 4, 8}, 0);
  const int bad = BatchMatMul(b, {2, 4, 8}, 7);
  EXPECT_TRUE(Check(b, ok, "batch_matmul_zero_points_0").ok);
  EXPECT_EQ(Check(b, bad, "batch_matmul_zero_points_0").detail, "zero points 0 and 7");
}

TEST(NpuConstraint, QuantizeNotOnNpu) {
  Builder b;
  const int in = b.Act({1, 8}, 0, 0, DataType::kFloat32);
  const int out = b.Act({1, 8});
  const int q = b.AddOp(OpType::kQuantize, {in}, {out});
  EXPECT_EQ(Check(b, q, "quantize_not_on_npu").detail, "float32 -> int8");
  EXPECT_THAT(CheckNpuSupport(b.g, b.op(q), {}),
              ::testing::ElementsAre("QUANTIZE #0: QUANTIZE converts float (or requantizes int8 "
                                     "and int16) to int8 or int16; the NPU computes int8 only "
                                     "\xE2\x80\x94 float32 -> int8"));
}

TEST(NpuConstraint, DequantizeNotOnNpu) {
  Builder b;
  const int in = b.Act({1, 8});
  const int out = b.Act({1, 8}, 0, 0, DataType::kFloat32);
  const int dq = b.AddOp(OpType::kDequantize, {in}, {out});
  EXPECT_FALSE(Check(b, dq, "dequantize_not_on_npu").ok);
  EXPECT_EQ(Check(b, dq, "dequantize_not_on_npu").detail, "int8 -> float32");
}

TEST(NpuConstraint, CastNotOnNpu) {
  Builder b;
  const int in = b.Act({1, 8});
  const int out = b.Act({1, 8}, 0, 0, DataType::kInt32);
  const int cast = b.AddOp(OpType::kCast, {in}, {out});
  EXPECT_EQ(Check(b, cast, "cast_not_on_npu").detail, "int8 -> int32");
}

// The ops TFLite Micro computes in float only stay on the CPU with that reason.
TEST(NpuConstraint, Float32OnlyOpsStayOnTheCpu) {
  for (OpType type : {OpType::kNeg, OpType::kExp, OpType::kLog, OpType::kSqrt, OpType::kSquare,
                      OpType::kRound, OpType::kFloor}) {
    Builder b;
    const int in = b.Act({1, 8}, 0, 0, DataType::kFloat32);
    const int out = b.Act({1, 8}, 0, 0, DataType::kFloat32);
    const int op = b.AddOp(type, {in}, {out});
    EXPECT_FALSE(Check(b, op, "float32_only").ok) << OpTypeName(type);
    EXPECT_THAT(CheckNpuSupport(b.g, b.op(op), {}),
                ::testing::ElementsAre(HasSubstr("it has no int8 kernel")));
  }
}

// Ops the Neutron has no counterpart for: each fails its constraint with the reason named.
struct CpuOnlyCase {
  const char* name;
  std::vector<OpType> types;
  const char* constraint;
  const char* reason;
};

TEST(NpuConstraint, OpsWithoutANeutronCounterpartStayOnTheCpu) {
  const CpuOnlyCase cases[] = {
      // SVDF and LSTM keep their state between inferences, which no Neutron op does.
      {"stateful",
       {OpType::kSvdf, OpType::kUnidirectionalSequenceLstm},
       "stateful_op",
       "state persists between inferences"},
      // IF and WHILE choose at run time what runs next; the NPU runs a fixed command stream.
      {"control flow",
       {OpType::kIf, OpType::kWhile, OpType::kCallOnce},
       "control_flow",
       "fixed command stream"},
      // Resource variables are state in the Cortex-M33's memory, copied in and out.
      {"resource variables",
       {OpType::kVarHandle, OpType::kReadVariable, OpType::kAssignVariable},
       "resource_variable",
       "a copy into or out of state kept between inferences"},
      // TFLite Micro's signal library ops (audio front ends).
      {"signal",
       {OpType::kSignalWindow, OpType::kSignalFftAutoScale, OpType::kSignalDelay,
        OpType::kSignalEnergy, OpType::kSignalFilterBank, OpType::kSignalFilterBankSquareRoot,
        OpType::kSignalFilterBankLog, OpType::kSignalPcan, OpType::kSignalSpectralSubtraction,
        OpType::kSignalRfft, OpType::kSignalIrfft},
       "signal_op",
       "signal library op"},
      // TFLite Micro's streaming ops: state across inferences, and CIRCULAR_BUFFER's early end.
      {"streaming",
       {OpType::kSignalFramer, OpType::kSignalStacker, OpType::kSignalOverlapAdd,
        OpType::kCircularBuffer},
       "streaming_op",
       "TFLite Micro streaming op"},
  };
  for (const CpuOnlyCase& c : cases) {
    for (OpType type : c.types) {
      Builder b;
      const int op = Unary(b, type, {1, 4});
      EXPECT_FALSE(Check(b, op, c.constraint).ok) << c.name << " " << OpTypeName(type);
      EXPECT_THAT(CheckNpuSupport(b.g, b.op(op), {}), ::testing::ElementsAre(HasSubstr(c.reason)))
          << c.name;
    }
  }
}

// SSD post-processing is float sorting and selection, which the Neutron NPU has no op for.
TEST(NpuConstraint, DetectionPostprocessStaysOnTheCpu) {
  Builder b;
  const int op = Unary(b, OpType::kDetectionPostprocess, {1, 4});
  EXPECT_FALSE(Check(b, op, "float_postprocessing").ok);
  EXPECT_THAT(CheckNpuSupport(b.g, b.op(op), {}),
              ::testing::ElementsAre(HasSubstr("non-max suppression")));
}

// ABS, the reductions, MIRROR_PAD, SPLIT, RSQRT, PRELU and DIV are Neutron ops boardlab does not
// lower: the reason says so rather than blaming the hardware.
TEST(NpuConstraint, NotLowered) {
  for (OpType type :
       {OpType::kAbs, OpType::kReduceMax, OpType::kReduceMin, OpType::kSum, OpType::kMirrorPad,
        OpType::kSplit, OpType::kSplitV, OpType::kRsqrt, OpType::kPrelu, OpType::kDiv}) {
    Builder b;
    const int op = Unary(b, type, {1, 4});
    EXPECT_FALSE(Check(b, op, "not_lowered").ok) << OpTypeName(type);
    EXPECT_THAT(CheckNpuSupport(b.g, b.op(op), {}),
                ::testing::ElementsAre(HasSubstr("boardlab's NPU lowering has no kernel")));
  }
}

TEST(NpuConstraint, NotSupported) {
  // No op type lacks rules today; the fallback entry must fail whatever it is given.
  Builder b;
  const int relu = Unary(b, OpType::kRelu, {1, 4});
  const NpuConstraint& c = NpuNotSupportedConstraint();
  EXPECT_EQ(c.id, "not_supported");
  EXPECT_FALSE(c.check(b.g, b.op(relu), {}).ok);
}

TEST(NpuConstraint, CheckNpuSupportListsEveryFailureWithNumbers) {
  Builder b;
  const int conv = Conv(b, 8192, 3, 3, 1);
  b.op(conv).opts<ConvOptions>().stride_w = 9999;
  const std::vector<std::string> failures = CheckNpuSupport(b.g, b.op(conv), {});
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0],
            "CONV_2D #0: stride_h, stride_w <= conv_max_stride \xE2\x80\x94 stride_w=9999 > 4096");
  EXPECT_THAT(failures[1], HasSubstr("kernel_h*kernel_w*ceil8(Cin)=73728 > 65535"));
  Builder ok;
  EXPECT_TRUE(CheckNpuSupport(ok.g, ok.op(Conv(ok, 8, 3, 3)), {}).empty());
}

TEST(NpuConstraint, ConstantIntegersReadsLittleEndianData) {
  Builder b;
  EXPECT_EQ(*ConstantIntegers(b.t(b.Ints({-2, 70000}))), (std::vector<int64_t>{-2, 70000}));
  const int i8 = b.Const({2}, DataType::kInt8, {}, {0xff, 0x05});
  EXPECT_EQ(*ConstantIntegers(b.t(i8)), (std::vector<int64_t>{-1, 5}));
  EXPECT_FALSE(ConstantIntegers(b.t(b.Act({2}))).has_value());
}

// docs/supported-ops.md is generated; this fails when the tables change without regenerating
// it. BOARDLAB_UPDATE_DOCS=1 rewrites the file instead.
TEST(NpuConstraintDoc, SupportedOpsMarkdownIsUpToDate) {
  // From the configured repository root, not __FILE__: ccache's base_dir makes that relative.
  const std::filesystem::path doc =
      std::filesystem::path(boardlab::testing::RepoDir()) / "docs" / "supported-ops.md";
  absl::StatusOr<TargetSpec> target = LoadTargetSpec("imxrt700");
  ASSERT_TRUE(target.ok()) << target.status();
  const std::string generated = GenerateSupportedOpsMarkdown(target->npu);
  if (const char* update = std::getenv("BOARDLAB_UPDATE_DOCS"); update && *update == '1') {
    std::ofstream(doc, std::ios::binary) << generated;
  }
  std::ifstream file(doc, std::ios::binary);
  ASSERT_TRUE(file) << "cannot read " << doc;
  std::ostringstream text;
  text << file.rdbuf();
  EXPECT_EQ(text.str(), generated)
      << doc << " is stale: run compiler_tests with BOARDLAB_UPDATE_DOCS=1";
}

}  // namespace
}  // namespace boardlab::compiler
