#include "compiler/npu_constraints.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace boardlab::compiler {
namespace {

ConstraintResult Ok() { return {true, ""}; }
ConstraintResult Fail(std::string detail) { return {false, std::move(detail)}; }

std::string QuantText(const Quantization& q) {
  if (q.empty()) return "none";
  if (q.per_channel()) return absl::StrCat(q.scale.size(), " scales");
  return absl::StrFormat("scale %g zp %d", q.scale[0], q.zp());
}

// Names an operand in details: "input 1 'conv1/weights'".
std::string Operand(const Graph& g, const std::string& role, size_t index, int tensor) {
  return absl::StrCat(role, " ", index, " '", g.tensors[tensor].name, "'");
}

// Calls `fn(description, tensor)` for each activation of `op`: every input that is not a
// constant and every output. Stops at the first failure `fn` returns.
template <typename Fn>
ConstraintResult ForEachActivation(const Graph& g, const Op& op, Fn fn) {
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (op.inputs[i] == kNoTensor || g.tensors[op.inputs[i]].is_constant) continue;
    ConstraintResult r = fn(Operand(g, "input", i, op.inputs[i]), g.tensors[op.inputs[i]]);
    if (!r.ok) return r;
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    ConstraintResult r = fn(Operand(g, "output", i, op.outputs[i]), g.tensors[op.outputs[i]]);
    if (!r.ok) return r;
  }
  return Ok();
}

bool HasInput(const Op& op, size_t i) { return op.inputs.size() > i && op.inputs[i] != kNoTensor; }

// ---- Generic constraints -----------------------------------------------------------------------

ConstraintResult Int8Activations(const Graph& g, const Op& op, const NpuLimits&) {
  return ForEachActivation(g, op, [](const std::string& name, const Tensor& t) {
    if (t.type == DataType::kInt8) return Ok();
    return Fail(absl::StrCat(name, " is ", std::string(DataTypeName(t.type))));
  });
}

ConstraintResult PerTensorActivations(const Graph& g, const Op& op, const NpuLimits&) {
  return ForEachActivation(g, op, [](const std::string& name, const Tensor& t) {
    if (t.quant.scale.size() == 1) return Ok();
    return Fail(absl::StrCat(name, " has quantization ", QuantText(t.quant)));
  });
}

ConstraintResult MaxRank(const Graph& g, const Op& op, const NpuLimits& limits) {
  auto check = [&](const std::string& role, const std::vector<int>& tensors) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i] == kNoTensor) continue;
      const size_t rank = g.tensors[tensors[i]].shape.size();
      if (rank > static_cast<size_t>(limits.max_rank)) {
        return Fail(
            absl::StrCat(Operand(g, role, i, tensors[i]), " rank=", rank, " > ", limits.max_rank));
      }
    }
    return Ok();
  };
  ConstraintResult r = check("input", op.inputs);
  return r.ok ? check("output", op.outputs) : r;
}

ConstraintResult StaticShapes(const Graph& g, const Op& op, const NpuLimits&) {
  return ForEachActivation(g, op, [](const std::string& name, const Tensor& t) {
    for (int32_t d : t.shape) {
      if (d < 1) return Fail(absl::StrCat(name, " has shape [", absl::StrJoin(t.shape, ","), "]"));
    }
    return Ok();
  });
}

// ---- Quantization sharing ----------------------------------------------------------------------

ConstraintResult SharedQuant(const Graph& g, const Op& op, const NpuLimits&) {
  const Quantization& in = g.input(op, 0).quant;
  const Quantization& out = g.output(op).quant;
  if (in.SameAs(out)) return Ok();
  return Fail(absl::StrCat("input ", QuantText(in), ", output ", QuantText(out)));
}

ConstraintResult AllInputsShareQuant(const Graph& g, const Op& op, const NpuLimits&) {
  const Quantization& out = g.output(op).quant;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (op.inputs[i] == kNoTensor) continue;
    const Quantization& in = g.tensors[op.inputs[i]].quant;
    if (!in.SameAs(out)) {
      return Fail(absl::StrCat("input ", i, " ", QuantText(in), ", output ", QuantText(out)));
    }
  }
  return Ok();
}

// ---- Weights and bias --------------------------------------------------------------------------

ConstraintResult WeightsConstInt8Zp0(const Graph& g, const Op& op, const NpuLimits&) {
  const Tensor& w = g.input(op, 1);
  if (!w.is_constant) return Fail(absl::StrCat("weights '", w.name, "' are not constant"));
  if (w.type != DataType::kInt8) {
    return Fail(absl::StrCat("weights '", w.name, "' are ", std::string(DataTypeName(w.type))));
  }
  for (int64_t zp : w.quant.zero_point) {
    if (zp != 0) return Fail(absl::StrCat("weights '", w.name, "' zero point ", zp));
  }
  return Ok();
}

ConstraintResult BiasConstInt32(const Graph& g, const Op& op, const NpuLimits&) {
  if (!HasInput(op, 2)) return Ok();  // the lowering synthesises a zero bias
  const Tensor& b = g.input(op, 2);
  if (!b.is_constant) return Fail(absl::StrCat("bias '", b.name, "' is not constant"));
  if (b.type != DataType::kInt32) {
    return Fail(absl::StrCat("bias '", b.name, "' is ", std::string(DataTypeName(b.type))));
  }
  return Ok();
}

// The NPU lowering recomputes the bias scale as input_scale * weight_scale[c] and requires the
// model's to match, with TFLite's own tolerance (kernel_util.cc).
ConstraintResult BiasScale(const Graph& g, const Op& op, const NpuLimits&) {
  if (!HasInput(op, 2)) return Ok();
  const Quantization& in = g.input(op, 0).quant;
  const Quantization& w = g.input(op, 1).quant;
  const Quantization& b = g.input(op, 2).quant;
  if (in.empty() || w.empty() || b.empty()) {
    return Fail(absl::StrCat("scales: input ", QuantText(in), ", weights ", QuantText(w), ", bias ",
                             QuantText(b)));
  }
  const size_t channels = std::max(w.scale.size(), b.scale.size());
  if ((w.scale.size() != 1 && w.scale.size() != channels) ||
      (b.scale.size() != 1 && b.scale.size() != channels)) {
    return Fail(absl::StrCat("weights have ", w.scale.size(), " scales, bias ", b.scale.size()));
  }
  for (size_t c = 0; c < channels; ++c) {
    const double w_scale = w.scale[w.scale.size() == 1 ? 0 : c];
    const double expected = static_cast<double>(in.scale[0]) * w_scale;
    const double actual = b.scale[b.scale.size() == 1 ? 0 : c];
    if (std::fabs(expected - actual) > 1e-6 * std::min(expected, actual)) {
      return Fail(absl::StrFormat("bias scale[%d]=%g != input scale %g * weight scale %g = %g", c,
                                  actual, in.scale[0], w_scale, expected));
    }
  }
  return Ok();
}

// ---- Convolutions ------------------------------------------------------------------------------

// Kernel height and width: CONV_2D weights are OHWI, DEPTHWISE_CONV_2D weights 1xHxWxC.
std::pair<int32_t, int32_t> KernelHw(const Graph& g, const Op& op) {
  const Tensor& w = g.input(op, 1);
  return {w.shape[1], w.shape[2]};
}

ConstraintResult AxisLimit(const std::string& name, int32_t h, int32_t w, int32_t limit) {
  if (h > limit) return Fail(absl::StrCat(name, "_h=", h, " > ", limit));
  if (w > limit) return Fail(absl::StrCat(name, "_w=", w, " > ", limit));
  return Ok();
}

ConstraintResult ConvKernel(const Graph& g, const Op& op, const NpuLimits& limits) {
  auto [h, w] = KernelHw(g, op);
  return AxisLimit("kernel", h, w, limits.conv_max_kernel);
}

ConstraintResult ConvStride(const Graph&, const Op& op, const NpuLimits& limits) {
  const auto& o = op.opts<ConvOptions>();
  return AxisLimit("stride", o.stride_h, o.stride_w, limits.conv_max_stride);
}

ConstraintResult ConvDilation(const Graph&, const Op& op, const NpuLimits& limits) {
  const auto& o = op.opts<ConvOptions>();
  return AxisLimit("dilation", o.dilation_h, o.dilation_w, limits.conv_max_dilation);
}

// A grouped convolution reaches the NPU split (compiler/split_group_conv.h): as one depthwise
// when every group has one input and one output channel, else as at most conv_max_groups
// convolutions.
ConstraintResult ConvGroupsRule(const Graph& g, const Op& op, const NpuLimits& limits) {
  const int32_t groups = ConvGroups(g, op);
  const bool depthwise = groups == g.input(op, 0).shape[3] && groups == g.output(op).shape[3];
  if (groups == 1 || depthwise || groups <= limits.conv_max_groups) return Ok();
  return Fail(absl::StrCat("groups=", groups, " > ", limits.conv_max_groups, " (input ",
                           g.input(op, 0).shape[3], " channels, output ", g.output(op).shape[3],
                           ")"));
}

ConstraintResult ConvKernelMacs(const Graph& g, const Op& op, const NpuLimits& limits) {
  auto [h, w] = KernelHw(g, op);
  const int64_t cin = g.input(op, 1).shape[3];
  const int64_t granule = limits.num_macs;
  const int64_t macs = int64_t{h} * w * ((cin + granule - 1) / granule * granule);
  if (macs <= limits.conv_max_kernel_macs) return Ok();
  return Fail(absl::StrCat("kernel_h*kernel_w*ceil", granule, "(Cin)=", macs, " > ",
                           limits.conv_max_kernel_macs));
}

ConstraintResult DepthMultiplierOne(const Graph& g, const Op& op, const NpuLimits&) {
  const int32_t m = op.opts<ConvOptions>().depth_multiplier;
  if (m == 1 || IsSingleChannelDepthwise(g, op)) return Ok();
  return Fail(absl::StrCat("depth_multiplier=", m, " over ", g.input(op, 0).shape[3],
                           " input channels (a group convolution)"));
}

// A one-channel depthwise runs as a convolution: the convolution's dot-product rule applies.
ConstraintResult SingleChannelDepthwiseMacs(const Graph& g, const Op& op, const NpuLimits& limits) {
  if (!IsSingleChannelDepthwise(g, op)) return Ok();
  auto [h, w] = KernelHw(g, op);
  const int64_t macs = int64_t{h} * w * limits.num_macs;
  if (macs <= limits.conv_max_kernel_macs) return Ok();
  return Fail(absl::StrCat("kernel_h*kernel_w*ceil", limits.num_macs, "(1)=", macs, " > ",
                           limits.conv_max_kernel_macs));
}

ConstraintResult WeightsRank2(const Graph& g, const Op& op, const NpuLimits&) {
  const size_t rank = g.input(op, 1).shape.size();
  if (rank == 2) return Ok();
  return Fail(absl::StrCat("weights rank=", rank));
}

// ---- Element-wise ------------------------------------------------------------------------------

ConstraintResult Broadcast(const Graph& g, const Op& op, const NpuLimits&) {
  const int64_t out = g.output(op).NumElements();
  std::vector<int64_t> counts;
  for (int t : op.inputs) {
    if (t == kNoTensor) continue;
    if (g.tensors[t].NumElements() == out) return Ok();
    counts.push_back(g.tensors[t].NumElements());
  }
  return Fail(
      absl::StrCat("inputs have ", absl::StrJoin(counts, " and "), " elements, output ", out));
}

// ---- Pooling, softmax --------------------------------------------------------------------------

ConstraintResult PoolKernel(const Graph&, const Op& op, const NpuLimits& limits) {
  const auto& o = op.opts<PoolOptions>();
  return AxisLimit("filter", o.filter_h, o.filter_w, limits.pool_max_kernel);
}

ConstraintResult PoolStride(const Graph&, const Op& op, const NpuLimits& limits) {
  const auto& o = op.opts<PoolOptions>();
  return AxisLimit("stride", o.stride_h, o.stride_w, limits.pool_max_stride);
}

// Softmax runs over the last (channel) axis; every other axis counts as a row.
std::pair<int64_t, int64_t> SoftmaxRowsChannels(const Graph& g, const Op& op) {
  const Tensor& in = g.input(op, 0);
  const int64_t c = in.shape.empty() ? 1 : in.shape.back();
  return {c == 0 ? 0 : in.NumElements() / c, c};
}

ConstraintResult SoftmaxChannels(const Graph& g, const Op& op, const NpuLimits& limits) {
  const int64_t c = SoftmaxRowsChannels(g, op).second;
  if (c <= limits.softmax_max_channels) return Ok();
  return Fail(absl::StrCat("C=", c, " > ", limits.softmax_max_channels));
}

ConstraintResult SoftmaxRows(const Graph& g, const Op& op, const NpuLimits& limits) {
  const int64_t rows = SoftmaxRowsChannels(g, op).first;
  if (rows <= limits.softmax_max_rows) return Ok();
  return Fail(absl::StrCat("N*H*W=", rows, " > ", limits.softmax_max_rows));
}

ConstraintResult SoftmaxElements(const Graph& g, const Op& op, const NpuLimits& limits) {
  auto [rows, c] = SoftmaxRowsChannels(g, op);
  if (rows * c <= limits.softmax_max_elements) return Ok();
  return Fail(absl::StrCat("C*N*H*W=", rows * c, " > ", limits.softmax_max_elements));
}

ConstraintResult SoftmaxOutputQuant(const Graph& g, const Op& op, const NpuLimits&) {
  const Quantization& q = g.output(op).quant;
  if (q.scale.size() == 1 && q.scale[0] == 1.0f / 256 && q.zp() == -128) return Ok();
  return Fail(absl::StrCat("output ", QuantText(q)));
}

// ---- Data movement -----------------------------------------------------------------------------

ConstraintResult ConstantOperands(const Graph& g, const Op& op, size_t first) {
  for (size_t i = first; i < op.inputs.size(); ++i) {
    if (op.inputs[i] != kNoTensor && !g.tensors[op.inputs[i]].is_constant) {
      return Fail(absl::StrCat(Operand(g, "input", i, op.inputs[i]), " is not constant"));
    }
  }
  return Ok();
}

ConstraintResult OperandsAfterFirstConstant(const Graph& g, const Op& op, const NpuLimits&) {
  return ConstantOperands(g, op, 1);
}

ConstraintResult PadValueIsZeroPoint(const Graph& g, const Op& op, const NpuLimits&) {
  if (!HasInput(op, 2)) return Ok();  // PADV2 without a value pads with the zero point
  std::optional<std::vector<int64_t>> value = ConstantIntegers(g.input(op, 2));
  const int64_t zp = g.output(op).quant.zp();
  if (!value || value->size() != 1) return Fail("the pad value is not a constant int8 scalar");
  if ((*value)[0] == zp) return Ok();
  return Fail(absl::StrCat("pad value ", (*value)[0], " != zero point ", zp));
}

ConstraintResult ResizeScale(const Graph& g, const Op& op, const NpuLimits& limits) {
  const Tensor& in = g.input(op, 0);
  const Tensor& out = g.output(op);
  constexpr std::array<std::pair<const char*, int>, 2> kAxes = {{{"H", 1}, {"W", 2}}};
  for (auto [name, axis] : kAxes) {
    const int32_t from = in.shape[axis];
    const int32_t to = out.shape[axis];
    const bool integer = from > 0 && to % from == 0;
    const int32_t scale = integer ? to / from : 0;
    if (!integer || std::find(limits.resize_scales.begin(), limits.resize_scales.end(), scale) ==
                        limits.resize_scales.end()) {
      return Fail(absl::StrCat(name, " ", from, " -> ", to, ": scale not in {",
                               absl::StrJoin(limits.resize_scales, ", "), "}"));
    }
  }
  return Ok();
}

// ---- Matrix multiply ---------------------------------------------------------------------------

ConstraintResult BatchMatMulRank3(const Graph& g, const Op& op, const NpuLimits&) {
  const size_t a = g.input(op, 0).shape.size();
  const size_t b = g.input(op, 1).shape.size();
  if (a == 3 && b == 3) return Ok();
  return Fail(absl::StrCat("ranks ", a, " and ", b));
}

ConstraintResult BatchMatMulZeroPoints(const Graph& g, const Op& op, const NpuLimits&) {
  const int64_t a = g.input(op, 0).quant.zp();
  const int64_t b = g.input(op, 1).quant.zp();
  if (a == 0 && b == 0) return Ok();
  return Fail(absl::StrCat("zero points ", a, " and ", b));
}

// ---- Never on the NPU --------------------------------------------------------------------------

ConstraintResult TypeConversion(const Graph& g, const Op& op, const NpuLimits&) {
  return Fail(absl::StrCat(std::string(DataTypeName(g.input(op, 0).type)), " -> ",
                           std::string(DataTypeName(g.output(op).type))));
}

ConstraintResult NeverOnNpu(const Graph&, const Op&, const NpuLimits&) { return Fail(""); }

// ---- Tables ------------------------------------------------------------------------------------

constexpr NpuConstraint kSharedQuant = {"shared_quantization",
                                        "input 0 and the output have the same scale and zero point",
                                        SharedQuant};
constexpr NpuConstraint kAllInputsShareQuant = {"all_inputs_share_quantization",
                                                "every input has the output's scale and zero point",
                                                AllInputsShareQuant};
constexpr NpuConstraint kWeights = {"weights_const_int8_zp0",
                                    "weights are a constant int8 tensor with zero point 0",
                                    WeightsConstInt8Zp0};
constexpr NpuConstraint kBias = {
    "bias_const_int32", "the bias, when present, is a constant int32 tensor", BiasConstInt32};
constexpr NpuConstraint kBiasScale = {
    "bias_scale", "bias scale[c] == input scale * weight scale[c] (relative tolerance 1e-6)",
    BiasScale};
constexpr NpuConstraint kConvKernel = {"conv_kernel", "kernel_h, kernel_w <= conv_max_kernel",
                                       ConvKernel};
constexpr NpuConstraint kConvStride = {"conv_stride", "stride_h, stride_w <= conv_max_stride",
                                       ConvStride};
constexpr NpuConstraint kConvDilation = {
    "conv_dilation", "dilation_h, dilation_w <= conv_max_dilation", ConvDilation};
constexpr NpuConstraint kBroadcast = {
    "broadcast", "some input has as many elements as the output (one-sided broadcast)", Broadcast};
constexpr NpuConstraint kConstOperands = {
    "constant_operands",
    "every operand after input 0 (paddings, begin/end/size/strides, "
    "permutation, axes) is constant",
    OperandsAfterFirstConstant};

struct OpRules {
  bool npu = false;
  std::vector<NpuConstraint> constraints;
};

std::vector<std::pair<OpType, std::vector<NpuConstraint>>> NpuOpRules() {
  const std::vector<NpuConstraint> none;
  const std::vector<NpuConstraint> conv_common = {kWeights,    kBias,         kConvKernel,
                                                  kConvStride, kConvDilation, kBiasScale};
  std::vector<NpuConstraint> conv = conv_common;
  conv.push_back({"conv_kernel_macs",
                  "kernel_h * kernel_w * round_up(Cin, num_macs) <= conv_max_kernel_macs (Cin of "
                  "one group for a grouped convolution)",
                  ConvKernelMacs});
  conv.push_back({"conv_groups",
                  "ungrouped; or grouped with one input and one output channel per group (run as "
                  "a depthwise convolution), or with at most conv_max_groups groups (run as one "
                  "convolution per group)",
                  ConvGroupsRule});
  std::vector<NpuConstraint> depthwise = conv_common;
  depthwise.insert(depthwise.begin(),
                   {"depth_multiplier_1",
                    "depth_multiplier is 1, or the input has one channel (then it is lowered as "
                    "a convolution with depth_multiplier output channels); a multiplier > 1 over "
                    "several channels is a group convolution the Neutron flow does not take",
                    DepthMultiplierOne});
  depthwise.push_back({"single_channel_depthwise_kernel_macs",
                       "a one-channel depthwise lowered as a convolution meets its rule: "
                       "kernel_h * kernel_w * round_up(1, num_macs) <= conv_max_kernel_macs",
                       SingleChannelDepthwiseMacs});
  const std::vector<NpuConstraint> pool = {
      kSharedQuant,
      {"pool_kernel", "filter_h, filter_w <= pool_max_kernel", PoolKernel},
      {"pool_stride", "stride_h, stride_w <= pool_max_stride", PoolStride}};
  const std::vector<NpuConstraint> moves = {kSharedQuant, kConstOperands};
  return {
      {OpType::kConv2D, conv},
      {OpType::kDepthwiseConv2D, depthwise},
      {OpType::kFullyConnected,
       {kWeights,
        {"fc_weights_rank2", "weights have rank 2 ([units, depth])", WeightsRank2},
        kBias,
        kBiasScale}},
      {OpType::kAdd, {kBroadcast}},
      {OpType::kSub, {kBroadcast}},
      {OpType::kMul, {kBroadcast}},
      {OpType::kMaximum, {kBroadcast, kAllInputsShareQuant}},
      {OpType::kMinimum, {kBroadcast, kAllInputsShareQuant}},
      {OpType::kMean, moves},
      {OpType::kAveragePool2D, pool},
      {OpType::kMaxPool2D, pool},
      {OpType::kSoftmax,
       {{"softmax_channels", "C (last axis) <= softmax_max_channels", SoftmaxChannels},
        {"softmax_rows", "N*H*W (all other axes) <= softmax_max_rows", SoftmaxRows},
        {"softmax_elements", "C*N*H*W <= softmax_max_elements", SoftmaxElements},
        {"softmax_output_quantization", "output scale 1/256 and zero point -128",
         SoftmaxOutputQuant}}},
      {OpType::kConcatenation, {kAllInputsShareQuant}},
      {OpType::kPad, moves},
      {OpType::kPadV2,
       {kSharedQuant,
        kConstOperands,
        {"padv2_value_is_zero_point", "the pad value is the zero point (pads with real 0)",
         PadValueIsZeroPoint}}},
      {OpType::kReshape, {kSharedQuant}},
      {OpType::kSqueeze, {kSharedQuant}},
      {OpType::kExpandDims, {kSharedQuant, kConstOperands}},
      {OpType::kSlice, moves},
      {OpType::kStridedSlice, moves},
      {OpType::kTranspose, moves},
      {OpType::kResizeNearestNeighbor,
       {kSharedQuant,
        {"resize_scale", "output H and W are the input's times a factor in resize_scales",
         ResizeScale}}},
      {OpType::kRelu, none},
      {OpType::kRelu6, none},
      {OpType::kLogistic, none},
      {OpType::kTanh, none},
      {OpType::kHardSwish, none},
      {OpType::kLeakyRelu, none},
      {OpType::kBatchMatMul,
       {{"batch_matmul_rank3", "both inputs have rank 3", BatchMatMulRank3},
        {"batch_matmul_zero_points_0", "both inputs have zero point 0", BatchMatMulZeroPoints}}},
  };
}

const std::array<OpRules, kNumOpTypes>& RuleTable() {
  static const std::array<OpRules, kNumOpTypes> table = [] {
    std::array<OpRules, kNumOpTypes> t;
    // Anything without rules below stays on the CPU: a new op type is safe by default.
    for (OpRules& rules : t) {
      rules.constraints = {NpuNotSupportedConstraint()};
    }
    for (auto& [type, constraints] : NpuOpRules()) {
      t[static_cast<size_t>(type)] = {true, std::move(constraints)};
    }
    t[static_cast<size_t>(OpType::kQuantize)].constraints = {
        {"quantize_not_on_npu",
         "QUANTIZE converts float (or requantizes int8 and int16) to int8 or int16; the NPU "
         "computes int8 only",
         TypeConversion}};
    t[static_cast<size_t>(OpType::kDequantize)].constraints = {
        {"dequantize_not_on_npu",
         "DEQUANTIZE converts int8 or int16 to float; the NPU computes int8 only", TypeConversion}};
    t[static_cast<size_t>(OpType::kCast)].constraints = {
        {"cast_not_on_npu", "CAST converts between element types; the NPU computes int8 only",
         TypeConversion}};
    // TFLite Micro computes these in float32 only (no int8 kernel), so a model that holds them
    // is float there, which the NPU does not compute.
    for (OpType type : {OpType::kNeg, OpType::kExp, OpType::kLog, OpType::kSqrt, OpType::kSquare,
                        OpType::kRound, OpType::kFloor, OpType::kCeil, OpType::kSin, OpType::kCos,
                        OpType::kFloorDiv, OpType::kFloorMod, OpType::kL2Pool2D}) {
      t[static_cast<size_t>(type)].constraints = {
          {"float32_only",
           "TFLite Micro computes this op in float32 only (it has no int8 kernel); the NPU "
           "computes int8 only",
           NeverOnNpu}};
    }
    // Recurrent ops keep state between inferences; the Neutron operator set (neutron-rt700.md
    // section 4) has none of them.
    for (OpType type : {OpType::kSvdf, OpType::kUnidirectionalSequenceLstm}) {
      t[static_cast<size_t>(type)].constraints = {
          {"stateful_op",
           "a recurrent op whose state persists between inferences; the Neutron operator set "
           "(neutron-rt700.md section 4) has no such op",
           NeverOnNpu}};
    }
    // IF and WHILE decide at run time which ops run next; the NPU runs a fixed command stream.
    // The ops of the subgraphs they call run on the CPU too (partition.cc).
    for (OpType type : {OpType::kIf, OpType::kWhile, OpType::kCallOnce}) {
      t[static_cast<size_t>(type)].constraints = {
          {"control_flow",
           "control flow (the subgraphs it calls run on the Cortex-M33 too); the NPU runs a "
           "fixed command stream",
           NeverOnNpu}};
    }
    // A resource variable is state in the Cortex-M33's memory that any subgraph may read or
    // assign; the ops are copies into and out of it.
    for (OpType type : {OpType::kVarHandle, OpType::kReadVariable, OpType::kAssignVariable}) {
      t[static_cast<size_t>(type)].constraints = {
          {"resource_variable",
           "a resource-variable op: a copy into or out of state kept between inferences; the "
           "Neutron operator set (neutron-rt700.md section 4) has no such op",
           NeverOnNpu}};
    }
    t[static_cast<size_t>(OpType::kDetectionPostprocess)].constraints = {
        {"float_postprocessing",
         "SSD post-processing in float32 (box decoding, sorting, non-max suppression); the "
         "Neutron operator set (neutron-rt700.md section 4) has no such op",
         NeverOnNpu}};
    for (OpType type :
         {OpType::kSignalWindow, OpType::kSignalFftAutoScale, OpType::kSignalDelay,
          OpType::kSignalEnergy, OpType::kSignalFilterBank, OpType::kSignalFilterBankSquareRoot,
          OpType::kSignalFilterBankLog, OpType::kSignalPcan, OpType::kSignalSpectralSubtraction,
          OpType::kSignalRfft, OpType::kSignalIrfft}) {
      t[static_cast<size_t>(type)].constraints = {
          {"signal_op",
           "a TFLite Micro signal library op (audio front end, its tensors plain int16, int32, "
           "uint32 or float32 values without quantization, as its description lists); the "
           "Neutron operator set (neutron-rt700.md section 4) has no such op",
           NeverOnNpu}};
    }
    // TFLite Micro's streaming ops (stream_options.h): state kept across inferences.
    for (OpType type : {OpType::kSignalFramer, OpType::kSignalStacker, OpType::kSignalOverlapAdd,
                        OpType::kCircularBuffer}) {
      t[static_cast<size_t>(type)].constraints = {
          {"streaming_op",
           "a TFLite Micro streaming op (its state, kept in persistent memory from one inference "
           "to the next, and the decision whether an inference produces output are the CPU's); "
           "the Neutron operator set (neutron-rt700.md section 4) has no such op",
           NeverOnNpu}};
    }
    // The Neutron-C flow runs these (neutron-rt700.md section 4), boardlab's lowering does not.
    for (OpType type :
         {OpType::kAbs, OpType::kReduceMax, OpType::kReduceMin, OpType::kSum, OpType::kMirrorPad,
          OpType::kSplit, OpType::kSplitV, OpType::kRsqrt, OpType::kPrelu, OpType::kDiv,
          OpType::kResizeBilinear, OpType::kTransposeConv}) {
      t[static_cast<size_t>(type)].constraints = {NpuNotLoweredConstraint()};
    }
    return t;
  }();
  return table;
}

std::string Message(const Graph& g, const Op& op, const NpuConstraint& c,
                    const ConstraintResult& r) {
  if (r.detail.empty()) return absl::StrCat(g.Describe(op), ": ", std::string(c.description));
  return absl::StrCat(g.Describe(op), ": ", std::string(c.description), " \xE2\x80\x94 ", r.detail);
}

}  // namespace

const std::vector<NpuConstraint>& GenericNpuConstraints() {
  static const std::vector<NpuConstraint> constraints = {
      {"int8_activations",
       "activations (inputs that are not constants, and outputs) are int8 (Neutron computes "
       "8-bit activations only, so 16x8 ops with int16 activations run on the CPU)",
       Int8Activations},
      {"per_tensor_quantization",
       "activations have per-tensor quantization (one scale and zero "
       "point)",
       PerTensorActivations},
      {"max_rank", "every operand has rank <= max_rank", MaxRank},
      {"static_shapes", "every activation dimension is known and >= 1", StaticShapes},
  };
  return constraints;
}

const NpuConstraint& NpuNotSupportedConstraint() {
  static constexpr NpuConstraint kNotSupported = {"not_supported",
                                                  "not supported by the Neutron NPU", NeverOnNpu};
  return kNotSupported;
}

const NpuConstraint& NpuNotLoweredConstraint() {
  static constexpr NpuConstraint kNotLowered = {
      "not_lowered",
      "the Neutron-C flow can run this op (neutron-rt700.md section 4), but boardlab's NPU "
      "lowering has no kernel for it yet",
      NeverOnNpu};
  return kNotLowered;
}

const std::vector<NpuConstraint>& ConstraintsFor(OpType type) {
  return RuleTable()[static_cast<size_t>(type)].constraints;
}

bool NpuSupportsOpType(OpType type) { return RuleTable()[static_cast<size_t>(type)].npu; }

std::vector<std::string> CheckNpuSupport(const Graph& graph, const Op& op,
                                         const NpuLimits& limits) {
  std::vector<std::string> failures;
  auto run = [&](const std::vector<NpuConstraint>& constraints) {
    for (const NpuConstraint& c : constraints) {
      ConstraintResult r = c.check(graph, op, limits);
      if (!r.ok) failures.push_back(Message(graph, op, c, r));
    }
  };
  // For an op type the NPU never runs, the type is the whole story; operand details would only
  // bury it.
  if (NpuSupportsOpType(op.type)) run(GenericNpuConstraints());
  run(ConstraintsFor(op.type));
  return failures;
}

int32_t ConvGroups(const Graph& graph, const Op& op) {
  if (op.type != OpType::kConv2D) return 1;
  const int32_t depth = graph.input(op, 1).shape[3];
  return depth > 0 ? graph.input(op, 0).shape[3] / depth : 1;
}

bool IsSingleChannelDepthwise(const Graph& graph, const Op& op) {
  return op.type == OpType::kDepthwiseConv2D && graph.input(op, 0).shape.size() == 4 &&
         graph.input(op, 0).shape[3] == 1 && graph.output(op).shape.back() > 1;
}

std::optional<std::vector<int64_t>> ConstantIntegers(const Tensor& tensor) {
  if (!tensor.is_constant) return std::nullopt;
  const int size = DataTypeSize(tensor.type);
  const int64_t count = tensor.NumElements();
  const bool integer = tensor.type == DataType::kInt8 || tensor.type == DataType::kUint8 ||
                       tensor.type == DataType::kInt32 || tensor.type == DataType::kInt64;
  if (!integer || count < 0 || tensor.data.size() != static_cast<size_t>(count * size)) {
    return std::nullopt;
  }
  std::vector<int64_t> values(count);
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* p = tensor.data.data() + i * size;
    switch (tensor.type) {
      case DataType::kInt8:
        values[i] = static_cast<int8_t>(*p);
        break;
      case DataType::kUint8:
        values[i] = *p;
        break;
      case DataType::kInt32: {
        int32_t v;
        std::memcpy(&v, p, sizeof v);  // little-endian host, like the TFLite buffers
        values[i] = v;
        break;
      }
      default: {
        int64_t v;
        std::memcpy(&v, p, sizeof v);
        values[i] = v;
        break;
      }
    }
  }
  return values;
}

}  // namespace boardlab::compiler
