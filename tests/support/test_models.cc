#include "tests/support/test_models.h"

#include "tests/support/control_flow_models.h"
#include "tests/support/resource_variable_models.h"

#include "tests/support/op_cases.h"

#include <algorithm>
#include <random>
#include <string>

namespace boardlab::testing {
namespace {

using compiler::OpType;

int32_t Code(OpType type) { return compiler::OpTypeTfliteCode(type); }

QuantParams ActQuant() { return PerTensor(kActScale, kActZeroPoint); }

// An activation tensor as the generators chain them: index, shape and quantization.
struct Act {
  int index;
  std::vector<int32_t> shape;
  QuantParams quant;
};

Act AddAct(TfliteBuilder& b, std::string name, std::vector<int32_t> shape,
           QuantParams quant = ActQuant()) {
  const int index = b.AddTensor(std::move(name), shape, TflType::kInt8, quant);
  return {index, std::move(shape), std::move(quant)};
}

// Per-channel scales around 0.002..0.004 (small enough that the bias scales stay plausible).
std::vector<float> ChannelScales(int32_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> scales(static_cast<size_t>(count));
  for (float& s : scales) s = 0.002f * (1.0f + static_cast<float>(rng() % 64) / 64.0f);
  return scales;
}

// TFLite's output size rule for one spatial axis (tflite-int8.md section 9), written out here
// rather than calling the validator so that the tests check it independently.
int32_t OutSize(Padding padding, int32_t in, int32_t filter, int32_t stride, int32_t dilation) {
  const int32_t effective = (filter - 1) * dilation + 1;
  if (padding == Padding::kSame) return (in + stride - 1) / stride;
  return (in - effective + stride) / stride;
}

// Int8 weights with `scales` along `axis` and a matching int32 bias (scale = in * w[c], zp 0).
struct WeightsAndBias {
  int weights;
  int bias;  // -1 when absent
};

WeightsAndBias AddWeightsAndBias(TfliteBuilder& b, const std::string& name,
                                 std::vector<int32_t> shape, int32_t axis, int32_t channels,
                                 bool per_channel, bool with_bias, int32_t bias_axis,
                                 float in_scale, uint32_t seed) {
  std::vector<float> scales = ChannelScales(per_channel ? channels : 1, seed);
  size_t count = 1;
  for (int32_t d : shape) count *= static_cast<size_t>(d);
  const std::vector<int8_t> values = RandomInt8(count, seed);
  QuantParams wq{scales, std::vector<int64_t>(scales.size(), 0), per_channel ? axis : 0};
  WeightsAndBias out{b.AddConstInt8(name + "/weights", std::move(shape), values, wq), -1};
  if (!with_bias) return out;
  std::vector<float> bias_scales;
  for (float s : scales) bias_scales.push_back(s * in_scale);
  std::mt19937 rng(seed + 1000);
  std::vector<int32_t> bias(static_cast<size_t>(channels));
  for (int32_t& v : bias) v = static_cast<int32_t>(rng() % 2001) - 1000;
  QuantParams bq{bias_scales, std::vector<int64_t>(bias_scales.size(), 0), bias_axis};
  out.bias = b.AddConstInt32(name + "/bias", {channels}, bias, bq);
  return out;
}

Act AppendConv(TfliteBuilder& b, const Act& in, const ConvParams& p, const std::string& name,
               QuantParams out_quant = ActQuant()) {
  WeightsAndBias wb =
      AddWeightsAndBias(b, name, {p.out_c, p.kernel_h, p.kernel_w, p.in_c / p.groups}, 0, p.out_c,
                        p.per_channel, p.bias, p.bias_quant_axis, in.quant.scales[0], p.seed);
  const Conv2DOpts& o = p.opts;
  Act out = AddAct(b, name + "/out",
                   {in.shape[0], OutSize(o.padding, p.in_h, p.kernel_h, o.stride_h, o.dilation_h),
                    OutSize(o.padding, p.in_w, p.kernel_w, o.stride_w, o.dilation_w), p.out_c},
                   std::move(out_quant));
  b.AddOperator(Code(OpType::kConv2D), {in.index, wb.weights, wb.bias}, {out.index}, o);
  return out;
}

Act AppendDepthwise(TfliteBuilder& b, const Act& in, const DepthwiseParams& p,
                    const std::string& name) {
  const int32_t channels = p.in_c * p.multiplier;
  WeightsAndBias wb = AddWeightsAndBias(b, name, {1, p.kernel_h, p.kernel_w, channels}, 3, channels,
                                        true, p.bias, 0, in.quant.scales[0], p.seed);
  DepthwiseConv2DOpts o = p.opts;
  o.depth_multiplier = p.multiplier;
  Act out = AddAct(b, name + "/out",
                   {in.shape[0], OutSize(o.padding, p.in_h, p.kernel_h, o.stride_h, o.dilation_h),
                    OutSize(o.padding, p.in_w, p.kernel_w, o.stride_w, o.dilation_w), channels});
  b.AddOperator(Code(OpType::kDepthwiseConv2D), {in.index, wb.weights, wb.bias}, {out.index}, o);
  return out;
}

Act AppendFullyConnected(TfliteBuilder& b, const Act& in, const FullyConnectedParams& p,
                         const std::string& name) {
  int32_t depth = in.shape.back();
  WeightsAndBias wb = AddWeightsAndBias(b, name, {p.units, depth}, 0, p.units, false, p.bias, 0,
                                        in.quant.scales[0], p.seed);
  int64_t rows = 1;
  for (int32_t d : in.shape) rows *= d;
  rows /= depth;
  Act out = AddAct(b, name + "/out", {static_cast<int32_t>(rows), p.units});
  b.AddOperator(Code(OpType::kFullyConnected), {in.index, wb.weights, wb.bias}, {out.index},
                p.opts);
  return out;
}

// One input and one output of the same shape (RELU, RELU6, HARD_SWISH, LEAKY_RELU, LOGISTIC,
// TANH, SOFTMAX); `out_quant` is fixed by the spec for some of them.
TfliteBuilder UnaryBuilder(OpType type, std::vector<int32_t> shape, QuantParams out_quant,
                           BuilderOptions options = {}) {
  TfliteBuilder b;
  Act in = AddAct(b, "input", shape);
  Act out = AddAct(b, "output", shape, std::move(out_quant));
  b.AddOperator(Code(type), {in.index}, {out.index}, std::move(options));
  b.SetInputs({in.index});
  b.SetOutputs({out.index});
  return b;
}

// One activation input followed by constant int32 operands (shape, axes, paddings, ...).
TfliteBuilder WithInt32Operands(OpType type, std::vector<int32_t> in_shape,
                                std::vector<int32_t> out_shape,
                                const std::vector<std::vector<int32_t>>& operands,
                                BuilderOptions options = {}) {
  TfliteBuilder b;
  Act in = AddAct(b, "input", std::move(in_shape));
  std::vector<int32_t> inputs = {in.index};
  for (size_t i = 0; i < operands.size(); ++i) {
    const auto& v = operands[i];
    std::vector<int32_t> shape = {static_cast<int32_t>(v.size())};
    if (type == OpType::kPad || type == OpType::kPadV2) shape = {shape[0] / 2, 2};
    inputs.push_back(b.AddConstInt32("operand" + std::to_string(i + 1), shape, v));
  }
  Act out = AddAct(b, "output", std::move(out_shape));
  if (type == OpType::kPadV2) {
    const int8_t value = static_cast<int8_t>(kActZeroPoint);
    inputs.push_back(b.AddConstInt8("pad_value", {1}, std::span(&value, 1), ActQuant()));
  }
  b.AddOperator(Code(type), inputs, {out.index}, std::move(options));
  b.SetInputs({in.index});
  b.SetOutputs({out.index});
  return b;
}

TfliteBuilder TypeConversionBuilder(OpType type) {
  TfliteBuilder b;
  const bool quantize = type == OpType::kQuantize;
  const int in = quantize ? b.AddTensor("input", {1, 10}, TflType::kFloat32)
                          : b.AddTensor("input", {1, 10}, TflType::kInt8, ActQuant());
  const int out = quantize ? b.AddTensor("output", {1, 10}, TflType::kInt8, ActQuant())
                           : b.AddTensor("output", {1, 10}, TflType::kFloat32);
  b.AddOperator(Code(type), {in}, {out});
  b.SetInputs({in});
  b.SetOutputs({out});
  return b;
}

TfliteBuilder PoolBuilder(OpType type) {
  TfliteBuilder b;
  Act in = AddAct(b, "input", {1, 8, 8, 4});
  Act out = AddAct(b, "output", {1, 4, 4, 4});
  b.AddOperator(Code(type), {in.index}, {out.index}, SingleOpOptions(type));
  b.SetInputs({in.index});
  b.SetOutputs({out.index});
  return b;
}

TfliteBuilder ConcatBuilder() {
  TfliteBuilder b;
  Act a = AddAct(b, "input_a", {1, 4, 4, 3});
  Act c = AddAct(b, "input_b", {1, 4, 4, 5});
  Act out = AddAct(b, "output", {1, 4, 4, 8});
  b.AddOperator(Code(OpType::kConcatenation), {a.index, c.index}, {out.index},
                SingleOpOptions(OpType::kConcatenation));
  b.SetInputs({a.index, c.index});
  b.SetOutputs({out.index});
  return b;
}

TfliteBuilder BatchMatMulBuilder() {
  TfliteBuilder b;
  Act lhs = AddAct(b, "lhs", {1, 4, 8});
  Act rhs = AddAct(b, "rhs", {1, 6, 8});  // adj_y: the op reads it as [1, 8, 6]
  Act out = AddAct(b, "output", {1, 4, 6});
  b.AddOperator(Code(OpType::kBatchMatMul), {lhs.index, rhs.index}, {out.index},
                SingleOpOptions(OpType::kBatchMatMul));
  b.SetInputs({lhs.index, rhs.index});
  b.SetOutputs({out.index});
  return b;
}

// The single-op models that take constant int32 operands.
TfliteBuilder OperandOpBuilder(OpType type) {
  const BuilderOptions opts = SingleOpOptions(type);
  switch (type) {
    case OpType::kReshape:
      return WithInt32Operands(type, {1, 2, 2, 4}, {1, 16}, {{1, 16}}, opts);
    case OpType::kPad:
    case OpType::kPadV2:
      return WithInt32Operands(type, {1, 4, 4, 3}, {1, 6, 6, 3}, {{0, 0, 1, 1, 1, 1, 0, 0}});
    case OpType::kTranspose:
      return WithInt32Operands(type, {1, 3, 8, 8}, {1, 8, 8, 3}, {{0, 2, 3, 1}});
    case OpType::kMean:
      return WithInt32Operands(type, {1, 4, 4, 8}, {1, 1, 1, 8}, {{1, 2}}, opts);
    case OpType::kSlice:
      return WithInt32Operands(type, {1, 8, 8, 4}, {1, 4, 4, 4}, {{0, 2, 2, 0}, {1, 4, 4, -1}});
    case OpType::kStridedSlice:
      return WithInt32Operands(type, {1, 8, 8, 4}, {1, 4, 4, 4},
                               {{0, 0, 0, 0}, {1, 8, 8, 4}, {1, 2, 2, 1}}, opts);
    case OpType::kResizeNearestNeighbor:
      return WithInt32Operands(type, {1, 4, 4, 3}, {1, 8, 8, 3}, {{8, 8}}, opts);
    default:
      return TfliteBuilder();
  }
}

}  // namespace

QuantParams PerTensor(float scale, int64_t zero_point) { return {{scale}, {zero_point}, 0}; }

std::vector<int8_t> RandomInt8(size_t count, uint32_t seed) {
  // std::mt19937's sequence is fixed by the standard (unlike the distributions), so the bytes
  // are the same with every standard library.
  std::mt19937 rng(seed);
  std::vector<int8_t> values(count);
  for (int8_t& v : values) v = static_cast<int8_t>(static_cast<int32_t>(rng() % 255) - 127);
  return values;
}

TfliteBuilder SingleConv2DBuilder(const ConvParams& p) {
  TfliteBuilder b;
  Act in = AddAct(b, "input", {1, p.in_h, p.in_w, p.in_c});
  Act out = AppendConv(b, in, p, "conv");
  b.SetInputs({in.index});
  b.SetOutputs({out.index});
  return b;
}

std::vector<uint8_t> SingleConv2D(const ConvParams& p) { return SingleConv2DBuilder(p).Finish(); }

TfliteBuilder SingleDepthwiseBuilder(const DepthwiseParams& p) {
  TfliteBuilder b;
  Act in = AddAct(b, "input", {1, p.in_h, p.in_w, p.in_c});
  Act out = AppendDepthwise(b, in, p, "depthwise");
  b.SetInputs({in.index});
  b.SetOutputs({out.index});
  return b;
}

std::vector<uint8_t> SingleDepthwise(const DepthwiseParams& p) {
  return SingleDepthwiseBuilder(p).Finish();
}

TfliteBuilder SingleFullyConnectedBuilder(const FullyConnectedParams& p) {
  TfliteBuilder b;
  Act in = AddAct(b, "input", p.in_shape);
  Act out = AppendFullyConnected(b, in, p, "fc");
  b.SetInputs({in.index});
  b.SetOutputs({out.index});
  return b;
}

std::vector<uint8_t> SingleFullyConnected(const FullyConnectedParams& p) {
  return SingleFullyConnectedBuilder(p).Finish();
}

TfliteBuilder SingleBinaryBuilder(OpType type, std::vector<int32_t> a_shape,
                                  std::vector<int32_t> b_shape, Activation activation) {
  std::vector<int32_t> out_shape(std::max(a_shape.size(), b_shape.size()), 1);
  for (size_t i = 0; i < out_shape.size(); ++i) {
    const int32_t da = i < a_shape.size() ? a_shape[a_shape.size() - 1 - i] : 1;
    const int32_t db = i < b_shape.size() ? b_shape[b_shape.size() - 1 - i] : 1;
    out_shape[out_shape.size() - 1 - i] = std::max(da, db);
  }
  TfliteBuilder b;
  Act x = AddAct(b, "input_a", std::move(a_shape));
  Act y = AddAct(b, "input_b", std::move(b_shape), PerTensor(0.08f, 5));
  Act out = AddAct(b, "output", std::move(out_shape), PerTensor(0.1f, -1));
  const bool has_options = type == OpType::kAdd || type == OpType::kSub || type == OpType::kMul;
  BuilderOptions options;
  if (has_options) options = ElementwiseOpts{activation};
  b.AddOperator(Code(type), {x.index, y.index}, {out.index}, options);
  b.SetInputs({x.index, y.index});
  b.SetOutputs({out.index});
  return b;
}

std::vector<uint8_t> SingleSoftmax(int32_t n, float beta) {
  return UnaryBuilder(OpType::kSoftmax, {1, n}, PerTensor(1.0f / 256, -128), SoftmaxOpts{beta})
      .Finish();
}

BuilderOptions SingleOpOptions(OpType type) {
  switch (type) {
    case OpType::kConv2D:
      return Conv2DOpts{};
    case OpType::kDepthwiseConv2D:
      return DepthwiseConv2DOpts{};
    case OpType::kFullyConnected:
      return FullyConnectedOpts{};
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
      return ElementwiseOpts{};
    case OpType::kAveragePool2D:
    case OpType::kMaxPool2D:
      return Pool2DOpts{Padding::kValid, 2, 2, 2, 2, Activation::kNone};
    case OpType::kConcatenation:
      return ConcatenationOpts{3, Activation::kNone};
    case OpType::kSoftmax:
      return SoftmaxOpts{1.0f};
    case OpType::kMean:
      return ReducerOpts{true};
    case OpType::kReshape:
      return ReshapeOpts{{1, 16}};
    case OpType::kSqueeze:
      return SqueezeOpts{{1, 2}};
    case OpType::kStridedSlice:
      return StridedSliceOpts{.begin_mask = 9, .end_mask = 9};
    case OpType::kResizeNearestNeighbor:
      return ResizeNearestNeighborOpts{false, true};
    case OpType::kLeakyRelu:
      return LeakyReluOpts{0.1f};
    case OpType::kBatchMatMul:
      return BatchMatMulOpts{false, true};
    default:
      return std::monostate{};
  }
}

TfliteBuilder SingleOpBuilder(OpType type) {
  switch (type) {
    case OpType::kConv2D:
      return SingleConv2DBuilder();
    case OpType::kDepthwiseConv2D:
      return SingleDepthwiseBuilder();
    case OpType::kFullyConnected:
      return SingleFullyConnectedBuilder();
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kMaximum:
    case OpType::kMinimum:
      return SingleBinaryBuilder(type, {1, 4, 4, 8}, {1, 1, 1, 8});
    case OpType::kAveragePool2D:
    case OpType::kMaxPool2D:
      return PoolBuilder(type);
    case OpType::kConcatenation:
      return ConcatBuilder();
    case OpType::kDequantize:
    case OpType::kQuantize:
      return TypeConversionBuilder(type);
    case OpType::kLogistic:
      return UnaryBuilder(type, {1, 10}, PerTensor(1.0f / 256, -128));
    case OpType::kSoftmax:
      return UnaryBuilder(type, {1, 10}, PerTensor(1.0f / 256, -128), SingleOpOptions(type));
    case OpType::kTanh:
      return UnaryBuilder(type, {1, 10}, PerTensor(1.0f / 128, 0));
    case OpType::kRelu:
    case OpType::kRelu6:
    case OpType::kHardSwish:
    case OpType::kLeakyRelu:
      return UnaryBuilder(type, {1, 4, 4, 8}, PerTensor(0.04f, -128), SingleOpOptions(type));
    case OpType::kSqueeze: {
      TfliteBuilder b;
      Act in = AddAct(b, "input", {1, 1, 1, 8});
      Act out = AddAct(b, "output", {1, 8});
      b.AddOperator(Code(type), {in.index}, {out.index}, SingleOpOptions(type));
      b.SetInputs({in.index});
      b.SetOutputs({out.index});
      return b;
    }
    case OpType::kBatchMatMul:
      return BatchMatMulBuilder();
    case OpType::kIf:
      return SingleIfBuilder();
    case OpType::kWhile:
      return SingleWhileBuilder();
    case OpType::kCallOnce:
    case OpType::kVarHandle:
    case OpType::kReadVariable:
    case OpType::kAssignVariable:
      // None of them works alone: the smallest model has all four.
      return CounterModelBuilder(TflType::kInt8);
    default:
      break;
  }
  // The layout and selection ops: the first of their generated cases.
  if (std::vector<OpCase> cases = CasesOf(type); !cases.empty()) {
    return SingleCaseModel(cases.front()).builder;
  }
  return OperandOpBuilder(type);
}

std::vector<uint8_t> SingleOpModel(OpType type) { return SingleOpBuilder(type).Finish(); }

std::vector<uint8_t> TinyDsCnn() {
  TfliteBuilder b;
  b.set_name("tiny_ds_cnn");
  Act x = AddAct(b, "input", {1, 49, 10, 1}, PerTensor(0.5847f, 83));
  ConvParams first{.in_h = 49, .in_w = 10, .in_c = 1, .out_c = 8, .kernel_h = 10, .kernel_w = 4};
  first.opts = {Padding::kSame, 2, 2, 1, 1, Activation::kRelu};
  x = AppendConv(b, x, first, "conv1");  // [1,25,5,8]
  DepthwiseParams dw{.in_h = 25, .in_w = 5, .in_c = 8};
  dw.opts.activation = Activation::kRelu;
  x = AppendDepthwise(b, x, dw, "dw1");
  ConvParams pw{.in_h = 25, .in_w = 5, .in_c = 8, .out_c = 8, .kernel_h = 1, .kernel_w = 1};
  pw.seed = 7;
  x = AppendConv(b, x, pw, "pw1");
  Act pooled = AddAct(b, "pool/out", {1, 1, 1, 8});
  b.AddOperator(Code(OpType::kAveragePool2D), {x.index}, {pooled.index},
                Pool2DOpts{Padding::kValid, 1, 1, 5, 25, Activation::kNone});
  const int32_t new_shape[] = {1, 8};
  const int shape = b.AddConstInt32("reshape/shape", {2}, new_shape);
  Act flat = AddAct(b, "reshape/out", {1, 8});
  b.AddOperator(Code(OpType::kReshape), {pooled.index, shape}, {flat.index}, ReshapeOpts{{1, 8}});
  Act logits = AppendFullyConnected(b, flat, {.in_shape = {1, 8}, .units = 12}, "fc");
  Act probs = AddAct(b, "softmax/out", {1, 12}, PerTensor(1.0f / 256, -128));
  b.AddOperator(Code(OpType::kSoftmax), {logits.index}, {probs.index}, SoftmaxOpts{});
  b.SetInputs({0});
  b.SetOutputs({probs.index});
  return b.Finish();
}

std::vector<uint8_t> NchwTransposeModel() {
  TfliteBuilder b;
  b.set_name("nchw_transpose");
  Act nchw = AddAct(b, "input", {1, 3, 16, 16});
  const int32_t to_nhwc[] = {0, 2, 3, 1};
  const int32_t to_nchw[] = {0, 3, 1, 2};
  const int perm_in = b.AddConstInt32("perm_to_nhwc", {4}, to_nhwc);
  Act nhwc = AddAct(b, "transpose_in/out", {1, 16, 16, 3});
  b.AddOperator(Code(OpType::kTranspose), {nchw.index, perm_in}, {nhwc.index});
  Act conv = AppendConv(b, nhwc, {.in_h = 16, .in_w = 16}, "conv");
  const int perm_out = b.AddConstInt32("perm_to_nchw", {4}, to_nchw);
  Act out = AddAct(b, "output", {1, 4, 16, 16});
  b.AddOperator(Code(OpType::kTranspose), {conv.index, perm_out}, {out.index});
  b.SetInputs({nchw.index});
  b.SetOutputs({out.index});
  return b.Finish();
}

std::vector<uint8_t> ConvGroupsModel() {
  TfliteBuilder b;
  b.set_name("conv_groups");
  Act a = AddAct(b, "grouped/in", {1, 9, 7, 8});
  ConvParams four{.in_h = 9, .in_w = 7, .in_c = 8, .out_c = 8, .groups = 4};
  four.opts = {Padding::kValid, 2, 2, 1, 1, Activation::kRelu6};
  Act a_out = AppendConv(b, a, four, "grouped");
  Act d = AddAct(b, "per_channel/in", {1, 8, 8, 6}, PerTensor(0.1f, -128));
  Act d_out = AppendConv(b, d, {.in_c = 6, .out_c = 6, .groups = 6, .seed = 5}, "per_channel");
  Act m = AddAct(b, "multiplier/in", {1, 12, 10, 1});
  Act m_out =
      AppendDepthwise(b, m, {.in_h = 12, .in_w = 10, .in_c = 1, .multiplier = 8}, "multiplier");
  b.SetInputs({a.index, d.index, m.index});
  b.SetOutputs({a_out.index, d_out.index, m_out.index});
  return b.Finish();
}

std::vector<uint8_t> ConvThenRelu() {
  TfliteBuilder b;
  Act in = AddAct(b, "input", {1, 8, 8, 3});
  Act conv = AppendConv(b, in, {}, "conv");
  Act out = AddAct(b, "relu/out", conv.shape, conv.quant);
  b.AddOperator(Code(OpType::kRelu), {conv.index}, {out.index});
  b.SetInputs({in.index});
  b.SetOutputs({out.index});
  return b.Finish();
}

std::vector<uint8_t> CircularBufferModel() {
  TfliteBuilder b;
  const QuantParams q = PerTensor(1.0f, 0);
  const int in = b.AddTensor("input", {1, 1, 1, 3}, TflType::kInt8, q);
  const int out = b.AddTensor("buffer", {1, 4, 1, 3}, TflType::kInt8, q);
  b.AddCustomOperator("CIRCULAR_BUFFER", {in}, {out}, {});
  b.SetInputs({in});
  b.SetOutputs({out});
  return b.Finish();
}

std::vector<uint8_t> CircularBufferReluModel() {
  TfliteBuilder b;
  const QuantParams q = PerTensor(1.0f, 0);
  const int in = b.AddTensor("input", {1, 1, 1, 3}, TflType::kInt8, q);
  const int buffer = b.AddTensor("buffer", {1, 4, 1, 3}, TflType::kInt8, q);
  const int out = b.AddTensor("relu", {1, 4, 1, 3}, TflType::kInt8, q);
  b.AddCustomOperator("CIRCULAR_BUFFER", {in}, {buffer}, {});
  b.AddOperator(Code(OpType::kRelu), {buffer}, {out});
  b.SetInputs({in});
  b.SetOutputs({out});
  return b.Finish();
}

}  // namespace boardlab::testing
