#include "compiler/validate_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/op_checker.h"
#include "compiler/quantization.h"

namespace boardlab::compiler {
namespace {

// Every activation int8, or int16 throughout for an op boardlab runs in 16x8.
absl::Status QuantizedActivations(const OpChecker& c) {
  return c.AllQuantizedActivations(Runs16x8(c.op().type));
}

absl::Status CheckWindow(const OpChecker& c, int32_t stride_h, int32_t stride_w, int32_t dilation_h,
                         int32_t dilation_w, int32_t filter_h, int32_t filter_w) {
  if (stride_h < 1 || stride_w < 1) {
    return c.Invalid(absl::StrCat("stride ", stride_h, "x", stride_w, " must be at least 1"));
  }
  if (dilation_h < 1 || dilation_w < 1) {
    return c.Invalid(absl::StrCat("dilation ", dilation_h, "x", dilation_w, " must be at least 1"));
  }
  if (filter_h < 1 || filter_w < 1) {
    return c.Invalid(absl::StrCat("filter ", filter_h, "x", filter_w, " must be at least 1"));
  }
  return absl::OkStatus();
}

absl::Status CheckSpatialOutput(const OpChecker& c, Padding padding, int32_t filter_h,
                                int32_t filter_w, int32_t stride_h, int32_t stride_w,
                                int32_t dilation_h, int32_t dilation_w, int32_t channels) {
  const Tensor& in = c.In(0);
  const int32_t out_h = WindowedOutputSize(padding, in.shape[1], filter_h, stride_h, dilation_h);
  const int32_t out_w = WindowedOutputSize(padding, in.shape[2], filter_w, stride_w, dilation_w);
  if (out_h < 1 || out_w < 1) {
    return c.Invalid(absl::StrCat("the ", filter_h, "x", filter_w, " window does not fit the ",
                                  in.shape[1], "x", in.shape[2], " input with VALID padding"));
  }
  return c.OutputShape({in.shape[0], out_h, out_w, channels});
}

absl::Status CheckPerChannelWeights(const OpChecker& c, const Tensor& w, int channel_axis) {
  if (w.quant.empty()) return c.Invalid(absl::StrCat("weights '", w.name, "' lack quantization"));
  const int32_t channels = w.shape[channel_axis];
  if (w.quant.per_channel() &&
      (w.quant.axis != channel_axis || static_cast<int32_t>(w.quant.scale.size()) != channels)) {
    return c.Invalid(absl::StrCat("weights '", w.name, "' have ", w.quant.scale.size(),
                                  " scales along dimension ", w.quant.axis, ", expected ", channels,
                                  " along dimension ", channel_axis));
  }
  for (int64_t zp : w.quant.zero_point) {
    if (zp != 0) {
      return c.Unsupported(absl::StrCat("weights '", w.name, "' have zero point ", zp,
                                        "; int8 weights must be symmetric (zero point 0)"));
    }
  }
  const auto* values = reinterpret_cast<const int8_t*>(w.data.data());
  if (std::find(values, values + w.data.size(), int8_t{-128}) != values + w.data.size()) {
    c.Warn(absl::StrCat("weights '", w.name,
                        "' contain -128, outside the symmetric int8 range [-127, 127]"));
  }
  return absl::OkStatus();
}

// The bias type of a conv-like op: int32 with int8 activations; int64 in 16x8, where TFLite
// Micro's CONV_2D also takes int32 (`conv_int32_in_16x8`; it then accumulates in int32).
absl::Status CheckBias(const OpChecker& c, size_t index, int32_t channels,
                       bool conv_int32_in_16x8 = false) {
  if (!c.Has(index)) return absl::OkStatus();
  const Tensor& b = c.In(index);
  if (!c.Is16x8()) {
    RETURN_IF_ERROR(c.Constant(b, "bias", DataType::kInt32));
  } else if (b.type == DataType::kInt64 || (conv_int32_in_16x8 && b.type == DataType::kInt32)) {
    RETURN_IF_ERROR(c.Constant(b, "bias", b.type));
  } else {
    return c.Unsupported(absl::StrCat(
        "bias '", b.name, "' is ", DataTypeName(b.type), "; TFLite Micro's 16x8 ",
        OpTypeName(c.op().type),
        conv_int32_in_16x8 ? " takes an int64 or int32 bias" : " takes an int64 bias"));
  }
  if (b.NumElements() != channels) {
    return c.Invalid(absl::StrCat("bias '", b.name, "' has ", b.NumElements(), " elements for ",
                                  channels, " output channels"));
  }
  return absl::OkStatus();
}

absl::Status ValidateConv(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 3));
  RETURN_IF_ERROR(c.Rank(c.In(0), "input", 4, 4));
  RETURN_IF_ERROR(c.Rank(c.In(1), "weights", 4, 4));
  RETURN_IF_ERROR(c.AllQuantizedActivations(/*allow_16x8=*/true));
  const Tensor& w = c.In(1);
  RETURN_IF_ERROR(c.Constant(w, "weights", DataType::kInt8));
  const auto& o = c.op().opts<ConvOptions>();
  RETURN_IF_ERROR(
      CheckWindow(c, o.stride_h, o.stride_w, o.dilation_h, o.dilation_w, w.shape[1], w.shape[2]));
  // Grouped convolution (TFLite Micro's ConvPerChannel): the weights' depth divides the input
  // channels into groups, and each group owns an equal share of the output channels.
  const int32_t in_c = c.In(0).shape[3];
  if (in_c % w.shape[3] != 0) {
    return c.Invalid(absl::StrCat("weights expect ", w.shape[3], " input channels, input has ",
                                  in_c, " (not a whole number of groups)"));
  }
  const int32_t groups = in_c / w.shape[3];
  if (w.shape[0] % groups != 0) {
    return c.Invalid(absl::StrCat(groups, " groups (input ", in_c, " channels, weights ",
                                  w.shape[3], ") do not divide the ", w.shape[0],
                                  " output channels"));
  }
  RETURN_IF_ERROR(CheckPerChannelWeights(c, w, 0));
  RETURN_IF_ERROR(CheckBias(c, 2, w.shape[0], /*conv_int32_in_16x8=*/true));
  return CheckSpatialOutput(c, o.padding, w.shape[1], w.shape[2], o.stride_h, o.stride_w,
                            o.dilation_h, o.dilation_w, w.shape[0]);
}

// TRANSPOSE_CONV (TFLite Micro's transpose_conv.cc): inputs output_shape (constant int32 [4]),
// weights (constant int8 OHWI, per-channel along O, zero point 0), the int8 input and an optional
// constant int32 bias [O]; in 16x8 an int16 input and an int64 bias. TFLite Micro versions
// disagree on applying the fused activation, so only NONE is taken.
absl::Status ValidateTransposeConv(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(3, 4));
  const Tensor& shape = c.In(0);
  const Tensor& w = c.In(1);
  const Tensor& in = c.In(2);
  RETURN_IF_ERROR(c.Constant(shape, "output_shape", DataType::kInt32));
  RETURN_IF_ERROR(c.Constant(w, "weights", DataType::kInt8));
  RETURN_IF_ERROR(c.Rank(w, "weights", 4, 4));
  RETURN_IF_ERROR(c.Rank(in, "input", 4, 4));
  RETURN_IF_ERROR(c.AllQuantizedActivations(/*allow_16x8=*/true));
  const auto& o = c.op().opts<ConvOptions>();
  RETURN_IF_ERROR(CheckWindow(c, o.stride_h, o.stride_w, 1, 1, w.shape[1], w.shape[2]));
  if (o.activation != Activation::kNone) {
    return c.Unsupported(absl::StrCat("fused activation ", static_cast<int>(o.activation),
                                      "; boardlab's TRANSPOSE_CONV takes NONE only (TFLite Micro "
                                      "versions differ in applying it)"));
  }
  if (in.shape[3] != w.shape[3]) {
    return c.Invalid(
        absl::StrCat("weights expect ", w.shape[3], " input channels, input has ", in.shape[3]));
  }
  RETURN_IF_ERROR(CheckPerChannelWeights(c, w, 0));
  RETURN_IF_ERROR(CheckBias(c, 3, w.shape[0]));
  const std::vector<int32_t> out = c.ConstantInts(shape);
  if (out.size() != 4 || out[0] != in.shape[0] || out[3] != w.shape[0] || out[1] < 1 ||
      out[2] < 1) {
    return c.Invalid(absl::StrCat("output_shape [", absl::StrJoin(out, ","), "] is not [",
                                  in.shape[0], ",H,W,", w.shape[0], "]"));
  }
  return c.OutputShape(out);
}

absl::Status ValidateDepthwise(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 3));
  RETURN_IF_ERROR(c.Rank(c.In(0), "input", 4, 4));
  RETURN_IF_ERROR(c.Rank(c.In(1), "weights", 4, 4));
  RETURN_IF_ERROR(c.AllQuantizedActivations(/*allow_16x8=*/true));
  const Tensor& w = c.In(1);
  RETURN_IF_ERROR(c.Constant(w, "weights", DataType::kInt8));
  const auto& o = c.op().opts<ConvOptions>();
  RETURN_IF_ERROR(
      CheckWindow(c, o.stride_h, o.stride_w, o.dilation_h, o.dilation_w, w.shape[1], w.shape[2]));
  const int32_t in_c = c.In(0).shape[3];
  if (w.shape[0] != 1 || w.shape[3] % in_c != 0) {
    return c.Invalid(absl::StrCat("depthwise weights ", ShapeString(w.shape),
                                  " do not match an input with ", in_c, " channels"));
  }
  if (o.depth_multiplier != 0 && w.shape[3] != static_cast<int64_t>(in_c) * o.depth_multiplier) {
    // TFLite Micro derives the multiplier from the shapes; a stale option is harmless.
    c.Warn(absl::StrCat("depth_multiplier ", o.depth_multiplier, " disagrees with the shapes (",
                        w.shape[3] / in_c, "); using the shapes"));
  }
  RETURN_IF_ERROR(CheckPerChannelWeights(c, w, 3));
  RETURN_IF_ERROR(CheckBias(c, 2, w.shape[3]));
  return CheckSpatialOutput(c, o.padding, w.shape[1], w.shape[2], o.stride_h, o.stride_w,
                            o.dilation_h, o.dilation_w, w.shape[3]);
}

absl::Status ValidateFullyConnected(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 3));
  RETURN_IF_ERROR(c.AllQuantizedActivations(/*allow_16x8=*/true));
  const Tensor& w = c.In(1);
  RETURN_IF_ERROR(c.Rank(w, "weights", 2, 2));
  RETURN_IF_ERROR(c.Constant(w, "weights", DataType::kInt8));
  const int32_t units = w.shape[0];
  const int32_t depth = w.shape[1];
  if (c.In(0).NumElements() % depth != 0) {
    return c.Invalid(absl::StrCat("input ", ShapeString(c.In(0).shape),
                                  " is not a whole number of rows of depth ", depth));
  }
  RETURN_IF_ERROR(CheckPerChannelWeights(c, w, 0));
  RETURN_IF_ERROR(CheckBias(c, 2, units));
  const int64_t rows = c.In(0).NumElements() / depth;
  if (c.Out().shape.empty() || c.Out().shape.back() != units ||
      c.Out().NumElements() != rows * units) {
    return c.Invalid(absl::StrCat("output ", ShapeString(c.Out().shape), " does not hold ", rows,
                                  " rows of ", units, " units"));
  }
  return absl::OkStatus();
}

absl::Status ValidatePool(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  RETURN_IF_ERROR(c.Rank(c.In(0), "input", 4, 4));
  if (c.op().type == OpType::kL2Pool2D) {
    RETURN_IF_ERROR(c.TypeIn(c.In(0), "input", {DataType::kFloat32},
                             "TFLite Micro's L2_POOL_2D computes float32 only"));
    RETURN_IF_ERROR(c.SameType(c.In(0), c.Out()));
  } else {
    RETURN_IF_ERROR(QuantizedActivations(c));
  }
  const auto& o = c.op().opts<PoolOptions>();
  RETURN_IF_ERROR(CheckWindow(c, o.stride_h, o.stride_w, 1, 1, o.filter_h, o.filter_w));
  return CheckSpatialOutput(c, o.padding, o.filter_h, o.filter_w, o.stride_h, o.stride_w, 1, 1,
                            c.In(0).shape[3]);
}

absl::Status ValidateBinary(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const bool is_16x8 = Runs16x8(c.op().type) && c.Is16x8();
  for (size_t i = 0; i < 2; ++i) {
    if (!c.In(i).is_constant) continue;
    RETURN_IF_ERROR(is_16x8 ? c.Int16Activation(c.In(i), "constant input")
                            : c.Int8Activation(c.In(i), "constant input"));
  }
  RETURN_IF_ERROR(c.AllQuantizedActivations(Runs16x8(c.op().type)));
  std::vector<int32_t> shape;
  RETURN_IF_ERROR(c.Broadcast(c.In(0).shape, c.In(1).shape, shape));
  return c.OutputShape(shape);
}

absl::Status ValidateUnary(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  RETURN_IF_ERROR(QuantizedActivations(c));
  return c.OutputShape(c.In(0).shape);
}

// LOGISTIC and TANH: the int8 output quantization the spec fixes; in 16x8 what TFLite Micro's
// Prepare requires (output scale 2^-15, an input scale its int16 rescale can take).
absl::Status ValidateSigmoid(const OpChecker& c, float int8_scale, int64_t int8_zp) {
  RETURN_IF_ERROR(ValidateUnary(c));
  if (!c.Is16x8()) return ValidateFixedOutputQuant(c, int8_scale, int8_zp);
  const char* name = OpTypeName(c.op().type);
  int log2 = 0;
  if (!CheckedLog2(c.Out().quant.scale[0], &log2) || log2 != -15) {
    return c.Unsupported(absl::StrCat("output scale ", c.Out().quant.scale[0],
                                      " is not 2^-15, which TFLite Micro's 16x8 ", name,
                                      " requires"));
  }
  const float in_scale = c.In(0).quant.scale[0];
  if (ComputeSigmoid16Params(in_scale, c.op().type == OpType::kTanh).multiplier > 32767) {
    return c.Unsupported(absl::StrCat("input scale ", in_scale, " is above 32767 / (3 * 4096), ",
                                      "the largest TFLite Micro's 16x8 ", name,
                                      " rescales to its table"));
  }
  return absl::OkStatus();
}

absl::Status ValidateSoftmax(const OpChecker& c) {
  RETURN_IF_ERROR(ValidateUnary(c));
  if (c.In(0).shape.empty()) return c.Invalid("input is a scalar");
  if (!c.Is16x8()) return ValidateFixedOutputQuant(c, 1.0f / 256, -128);
  // TFLite Micro's Prepare: within 0.001 * 2^-15 of 2^-15, zero point 0.
  const FixedQuantRule prepare{/*relative_tolerance=*/0.001f, /*unsupported=*/true,
                               "16x8 SOFTMAX (TFLite Micro's Prepare)"};
  RETURN_IF_ERROR(ValidateFixedOutputQuant(c, 1.0f / 32768, 0, prepare));
  const QuantizedMultiplier m =
      ComputeSoftmax16Multiplier(c.op().opts<SoftmaxOptions>().beta, c.In(0).quant.scale[0]);
  if (m.shift > 30) {
    return c.Unsupported("beta * input scale is too large for the int16 rescale (shift > 30)");
  }
  return absl::OkStatus();
}

absl::Status ValidateReshape(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 2));
  RETURN_IF_ERROR(QuantizedActivations(c));
  return c.SameElementCount();
}

absl::Status ValidateTranspose(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  RETURN_IF_ERROR(QuantizedActivations(c));
  const Tensor& perm = c.In(1);
  RETURN_IF_ERROR(c.Constant(perm, "permutation", DataType::kInt32));
  std::vector<int32_t> p = c.ConstantInts(perm);
  const size_t rank = c.In(0).shape.size();
  std::vector<int32_t> sorted = p;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int32_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity) {
    return c.Invalid(absl::StrCat("permutation [", absl::StrJoin(p, ","),
                                  "] is not a permutation of rank ", rank));
  }
  std::vector<int32_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) shape[i] = c.In(0).shape[p[i]];
  return c.OutputShape(shape);
}

absl::Status ValidatePad(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, c.op().type == OpType::kPadV2 ? 3 : 2));
  RETURN_IF_ERROR(QuantizedActivations(c));
  const Tensor& pads = c.In(1);
  RETURN_IF_ERROR(c.Constant(pads, "paddings", DataType::kInt32));
  const size_t rank = c.In(0).shape.size();
  if (pads.shape != std::vector<int32_t>{static_cast<int32_t>(rank), 2}) {
    return c.Invalid(
        absl::StrCat("paddings have shape ", ShapeString(pads.shape), ", expected [", rank, ",2]"));
  }
  std::vector<int32_t> p = c.ConstantInts(pads);
  std::vector<int32_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (p[2 * i] < 0 || p[2 * i + 1] < 0) {
      return c.Invalid(absl::StrCat("negative padding on dimension ", i));
    }
    const int64_t padded = int64_t{c.In(0).shape[i]} + p[2 * i] + p[2 * i + 1];
    if (padded > kMaxDimension) {
      return c.Invalid(absl::StrCat("padding dimension ", i, " to ", padded, " elements"));
    }
    shape[i] = static_cast<int32_t>(padded);
  }
  if (c.Has(2)) {
    const Tensor& value = c.In(2);
    const DataType type = c.In(0).type;
    if (!value.is_constant || value.type != type || value.NumElements() != 1) {
      return c.Unsupported(
          absl::StrCat("PADV2 pad value must be one constant ", DataTypeName(type)));
    }
  }
  return c.OutputShape(shape);
}

absl::Status ValidateMean(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  RETURN_IF_ERROR(QuantizedActivations(c));
  RETURN_IF_ERROR(c.Constant(c.In(1), "axes", DataType::kInt32));
  const int32_t rank = static_cast<int32_t>(c.In(0).shape.size());
  std::vector<int32_t> shape = c.In(0).shape;
  std::vector<char> reduced(rank, 0);
  for (int32_t axis : c.ConstantInts(c.In(1))) {
    if (axis < -rank || axis >= rank) {
      return c.Invalid(absl::StrCat("axis ", axis, " outside rank ", rank));
    }
    reduced[(axis + rank) % rank] = 1;
  }
  std::vector<int32_t> expected;
  for (int32_t i = 0; i < rank; ++i) {
    if (!reduced[i]) {
      expected.push_back(shape[i]);
    } else if (c.op().opts<ReducerOptions>().keep_dims) {
      expected.push_back(1);
    }
  }
  return c.OutputShape(expected);
}

absl::Status ValidateConcat(const OpChecker& c) {
  if (c.op().inputs.empty()) return c.Invalid("has no inputs");
  RETURN_IF_ERROR(c.Arity(c.op().inputs.size(), c.op().inputs.size()));
  RETURN_IF_ERROR(QuantizedActivations(c));
  const int32_t rank = static_cast<int32_t>(c.In(0).shape.size());
  int32_t axis = c.op().opts<ConcatOptions>().axis;
  if (axis < -rank || axis >= rank) {
    return c.Invalid(absl::StrCat("axis ", axis, " outside rank ", rank));
  }
  axis = (axis + rank) % rank;
  std::vector<int32_t> shape = c.In(0).shape;
  for (size_t i = 1; i < c.op().inputs.size(); ++i) {
    const std::vector<int32_t>& s = c.In(i).shape;
    bool ok = static_cast<int32_t>(s.size()) == rank;
    for (int32_t d = 0; ok && d < rank; ++d) ok = d == axis || s[d] == shape[d];
    if (!ok) {
      return c.Invalid(absl::StrCat("input ", i, " ", ShapeString(s), " does not match ",
                                    ShapeString(c.In(0).shape), " outside axis ", axis));
    }
    const int64_t joined = int64_t{shape[axis]} + s[axis];
    if (joined > kMaxDimension) {
      return c.Invalid(absl::StrCat("joined axis ", axis, " has ", joined, " elements"));
    }
    shape[axis] = static_cast<int32_t>(joined);
  }
  return c.OutputShape(shape);
}

absl::Status ValidateSlice(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(3, 3));
  RETURN_IF_ERROR(QuantizedActivations(c));
  RETURN_IF_ERROR(c.Constant(c.In(1), "begin", DataType::kInt32));
  RETURN_IF_ERROR(c.Constant(c.In(2), "size", DataType::kInt32));
  const std::vector<int32_t>& in = c.In(0).shape;
  std::vector<int32_t> begin = c.ConstantInts(c.In(1));
  std::vector<int32_t> size = c.ConstantInts(c.In(2));
  if (begin.size() != in.size() || size.size() != in.size()) {
    return c.Invalid("begin and size must have one entry per input dimension");
  }
  std::vector<int32_t> shape(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t extent = size[i] == -1 ? int64_t{in[i]} - begin[i] : size[i];
    if (begin[i] < 0 || extent < 1 || begin[i] + extent > in[i]) {
      return c.Invalid(absl::StrCat("slice [", begin[i], ", +", size[i], ") of dimension ", i,
                                    " (size ", in[i], ") is out of range"));
    }
    shape[i] = static_cast<int32_t>(extent);
  }
  return c.OutputShape(shape);
}

absl::Status ValidateStridedSlice(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(4, 4));
  RETURN_IF_ERROR(QuantizedActivations(c));
  for (size_t i = 1; i < 4; ++i) {
    RETURN_IF_ERROR(c.Constant(c.In(i), "begin/end/strides", DataType::kInt32));
  }
  const auto& o = c.op().opts<StridedSliceOptions>();
  if (o.ellipsis_mask != 0 || o.new_axis_mask != 0) {
    return c.Unsupported("STRIDED_SLICE with ellipsis or new-axis masks");
  }
  const std::vector<int32_t>& in = c.In(0).shape;
  std::vector<int32_t> begin = c.ConstantInts(c.In(1));
  std::vector<int32_t> end = c.ConstantInts(c.In(2));
  std::vector<int32_t> strides = c.ConstantInts(c.In(3));
  if (begin.size() != in.size() || end.size() != in.size() || strides.size() != in.size()) {
    return c.Invalid("begin, end and strides must have one entry per input dimension");
  }
  std::vector<int32_t> shape;
  for (size_t i = 0; i < in.size(); ++i) {
    if (strides[i] == 0) return c.Invalid(absl::StrCat("stride 0 on dimension ", i));
    const int64_t n = in[i];
    auto clamp_index = [n](int64_t v, bool positive) {
      if (v < 0) v += n;
      return positive ? std::clamp<int64_t>(v, 0, n) : std::clamp<int64_t>(v, -1, n - 1);
    };
    const bool positive = strides[i] > 0;
    int64_t b = (o.begin_mask >> i) & 1 ? (positive ? 0 : n - 1) : clamp_index(begin[i], positive);
    int64_t e = (o.end_mask >> i) & 1 ? (positive ? n : -1) : clamp_index(end[i], positive);
    if (o.offset && !((o.end_mask >> i) & 1)) e = clamp_index(b + end[i], positive);
    if ((o.shrink_axis_mask >> i) & 1) {
      e = b + 1;
      if (b < 0 || b >= n) return c.Invalid(absl::StrCat("shrink index out of range on ", i));
      continue;
    }
    const int64_t stride = strides[i];
    const int64_t extent =
        positive ? (e - b + stride - 1) / stride : (b - e - stride - 1) / -stride;
    if (extent < 1) return c.Invalid(absl::StrCat("empty slice on dimension ", i));
    shape.push_back(static_cast<int32_t>(extent));
  }
  return c.OutputShape(shape);
}

absl::Status ValidateResize(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  RETURN_IF_ERROR(c.Rank(c.In(0), "input", 4, 4));
  RETURN_IF_ERROR(QuantizedActivations(c));
  RETURN_IF_ERROR(c.Constant(c.In(1), "size", DataType::kInt32));
  std::vector<int32_t> size = c.ConstantInts(c.In(1));
  if (size.size() != 2 || size[0] < 1 || size[1] < 1) {
    return c.Invalid("size must be two positive integers");
  }
  const std::vector<int32_t>& in = c.In(0).shape;
  return c.OutputShape({in[0], size[0], size[1], in[3]});
}

// RESIZE_BILINEAR int8 (TFLite Micro's resize_bilinear.cc): it interpolates the raw int8
// values, so input and output must share one quantization for the result to mean anything;
// align_corners and half_pixel_centers exclude each other.
absl::Status ValidateResizeBilinear(const OpChecker& c) {
  RETURN_IF_ERROR(ValidateResize(c));
  if (!c.In(0).quant.SameAs(c.Out().quant)) {
    return c.Unsupported(
        "input and output are quantized differently; TFLite Micro's RESIZE_BILINEAR interpolates "
        "the raw int8 values and needs one quantization for both");
  }
  const auto& o = c.op().opts<ResizeOptions>();
  if (o.align_corners && o.half_pixel_centers) {
    return c.Invalid("align_corners and half_pixel_centers are both set (TFLite Micro refuses)");
  }
  return absl::OkStatus();
}

absl::Status ValidateBatchMatMul(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  RETURN_IF_ERROR(c.Rank(c.In(0), "lhs", 2, 5));
  RETURN_IF_ERROR(c.Rank(c.In(1), "rhs", 2, 5));
  // TFLite Micro's 16x8 BATCH_MATMUL: both operands and the output int16 with zero point 0.
  const bool is_16x8 = c.Is16x8();
  for (size_t i = 0; i < 2; ++i) {
    if (!c.In(i).is_constant) continue;
    RETURN_IF_ERROR(is_16x8 ? c.Int16Activation(c.In(i), "constant input")
                            : c.Int8Activation(c.In(i), "constant input"));
  }
  RETURN_IF_ERROR(c.AllQuantizedActivations(/*allow_16x8=*/true));
  if (is_16x8) {
    const QuantizedMultiplier m = ComputeBatchMatMulMultiplier(
        c.In(0).quant.scale[0], c.In(1).quant.scale[0], c.Out().quant.scale[0]);
    if (m.shift > 7) {
      return c.Unsupported(
          absl::StrCat("lhs scale * rhs scale / output scale is ", std::ldexp(1.0, m.shift),
                       " or more; TFLite Micro's 16x8 requantization takes multipliers below 2^7"));
    }
  }
  const auto& o = c.op().opts<BatchMatMulOptions>();
  const auto& a = c.In(0).shape;
  const auto& b = c.In(1).shape;
  const int32_t rows = o.adj_x ? a[a.size() - 1] : a[a.size() - 2];
  const int32_t depth_a = o.adj_x ? a[a.size() - 2] : a[a.size() - 1];
  const int32_t depth_b = o.adj_y ? b[b.size() - 1] : b[b.size() - 2];
  const int32_t cols = o.adj_y ? b[b.size() - 2] : b[b.size() - 1];
  if (depth_a != depth_b) {
    return c.Invalid(absl::StrCat("inner dimensions differ: ", depth_a, " vs ", depth_b));
  }
  std::vector<int32_t> batch;
  if (!BroadcastShape(std::vector<int32_t>(a.begin(), a.end() - 2),
                      std::vector<int32_t>(b.begin(), b.end() - 2), batch)) {
    return c.Invalid("batch dimensions do not broadcast");
  }
  batch.push_back(rows);
  batch.push_back(cols);
  return c.OutputShape(batch);
}

// An int8 or (16x8) int16 activation.
absl::Status QuantizedActivation(const OpChecker& c, const Tensor& t, const char* role) {
  return t.type == DataType::kInt16 ? c.Int16Activation(t, role) : c.Int8Activation(t, role);
}

// QUANTIZE as TFLite Micro's reference kernel: float32 -> int8 or int16 (affine quantize), and
// requantizing int8 or int16 -> int8 or int16.
absl::Status ValidateQuantize(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  const Tensor& in = c.In(0);
  if (in.type != DataType::kFloat32 && in.type != DataType::kInt8 && in.type != DataType::kInt16) {
    return c.Unsupported(absl::StrCat("QUANTIZE from ", DataTypeName(in.type),
                                      "; boardlab quantizes float32, int8 and int16"));
  }
  if (in.type != DataType::kFloat32) RETURN_IF_ERROR(QuantizedActivation(c, in, "input"));
  const Tensor& out = c.Out();
  if (out.type != DataType::kInt8 && out.type != DataType::kInt16) {
    return c.Unsupported(absl::StrCat("QUANTIZE to ", DataTypeName(out.type),
                                      "; boardlab quantizes to int8 and int16"));
  }
  RETURN_IF_ERROR(QuantizedActivation(c, out, "output"));
  return c.OutputShape(in.shape);
}

absl::Status ValidateDequantize(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  RETURN_IF_ERROR(QuantizedActivation(c, c.In(0), "input"));
  if (c.Out().type != DataType::kFloat32) {
    return c.Unsupported(absl::StrCat("DEQUANTIZE to ", DataTypeName(c.Out().type)));
  }
  return c.OutputShape(c.In(0).shape);
}

}  // namespace

bool Runs16x8(OpType type) {
  switch (type) {
    case OpType::kQuantize:
    case OpType::kDequantize:
    case OpType::kConv2D:
    case OpType::kDepthwiseConv2D:
    case OpType::kFullyConnected:
    case OpType::kTransposeConv:
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kSoftmax:
    case OpType::kLogistic:
    case OpType::kTanh:
    case OpType::kLeakyRelu:
    case OpType::kPad:
    case OpType::kPadV2:
    case OpType::kStridedSlice:
    case OpType::kSlice:
    case OpType::kReshape:
    case OpType::kSqueeze:
    case OpType::kTranspose:
    case OpType::kConcatenation:
    case OpType::kMaxPool2D:
    case OpType::kAveragePool2D:
    case OpType::kMaximum:
    case OpType::kMinimum:
    case OpType::kResizeNearestNeighbor:
    case OpType::kMean:
    case OpType::kSum:
    case OpType::kRelu:
    case OpType::kRelu6:
    case OpType::kBatchMatMul:
    case OpType::kAbs:
    case OpType::kPrelu:
    case OpType::kSquaredDifference:
    case OpType::kGreater:
    case OpType::kUnidirectionalSequenceLstm:
      return true;
    default:
      return false;
  }
}

bool MovesInt16Values(OpType type) {
  return IsCopyOp(type) || IsControlFlowOp(type) || IsResourceVariableOp(type) ||
         type == OpType::kShape || type == OpType::kCast || type == OpType::kSelectV2;
}

std::string No16x8Reason(OpType type) {
  const char* name = OpTypeName(type);
  if (Runs16x8(type)) {
    return absl::StrCat("the 16x8 form of ", name,
                        " takes int16 activations throughout (inputs and output)");
  }
  return absl::StrCat("TFLite Micro has no 16x8 (int16 activation) kernel for ", name);
}

absl::Status ValidateFixedOutputQuant(const OpChecker& c, float scale, int64_t zero_point,
                                      const FixedQuantRule& rule) {
  const Quantization& q = c.Out().quant;
  if (std::fabs(q.scale[0] - scale) > scale * rule.relative_tolerance || q.zp() != zero_point) {
    const std::string what =
        absl::StrCat("output quantization (scale ", q.scale[0], ", zero point ", q.zp(),
                     ") must be (", scale, ", ", zero_point, ") for ", rule.required_by);
    return rule.unsupported ? c.Unsupported(what) : c.Invalid(what);
  }
  return absl::OkStatus();
}

bool IsStateOperand(OpType type, size_t index) {
  return (type == OpType::kSvdf && index == 4) ||
         (type == OpType::kUnidirectionalSequenceLstm && (index == 18 || index == 19));
}

int32_t WindowedOutputSize(Padding padding, int32_t in, int32_t filter, int32_t stride,
                           int32_t dilation) {
  // 64-bit: strides and filters straight from the file may be anything up to INT32_MAX.
  const int64_t effective = (int64_t{filter} - 1) * dilation + 1;
  if (padding == Padding::kSame) return static_cast<int32_t>((int64_t{in} + stride - 1) / stride);
  const int64_t out = (int64_t{in} + stride - effective) / stride;
  return out < 0 ? 0 : static_cast<int32_t>(out);
}

int32_t WindowedPaddingBefore(Padding padding, int32_t in, int32_t filter, int32_t stride,
                              int32_t dilation, int32_t out) {
  if (padding == Padding::kValid) return 0;
  const int64_t effective = static_cast<int64_t>(filter - 1) * dilation + 1;
  const int64_t total =
      std::max<int64_t>(0, (out - 1) * static_cast<int64_t>(stride) + effective - in);
  return static_cast<int32_t>(total / 2);
}

namespace {

// An op with neither a 16x8 form nor a type-generic kernel refuses int16 activations (inputs
// that are not constants, and outputs) before its own checks, with one reason for all of them.
// State operands are not activations: the int16 state of int8 SVDF and the int16 cell state of
// the int8 LSTM belong to their int8 forms (their own checks validate them). The signal library
// ops compute on plain int16 samples, not on 16x8 activations; their own checks take them.
absl::Status RefuseInt16WithoutKernel(const OpChecker& c) {
  const OpType type = c.op().type;
  if (Runs16x8(type) || MovesInt16Values(type) || IsSignalOp(type)) return absl::OkStatus();
  for (size_t i = 0; i < c.op().inputs.size(); ++i) {
    if (!c.Has(i) || c.In(i).is_constant || c.In(i).type != DataType::kInt16) continue;
    if (IsStateOperand(type, i)) continue;
    return c.Unsupported(absl::StrCat("input '", c.In(i).name, "' is int16; ", No16x8Reason(type)));
  }
  for (size_t i = 0; i < c.op().outputs.size(); ++i) {
    if (c.Out(i).type != DataType::kInt16) continue;
    return c.Unsupported(
        absl::StrCat("output '", c.Out(i).name, "' is int16; ", No16x8Reason(type)));
  }
  return absl::OkStatus();
}

absl::Status ValidateByType(const OpChecker& c);

// A resource handle means something only to the resource-variable ops and to the control flow
// that might pass it on (import_resource_variables.cc refuses that later, with its reason).
absl::Status RefuseResourceOperands(const OpChecker& c) {
  const OpType type = c.op().type;
  if (IsResourceVariableOp(type) || IsControlFlowOp(type)) return absl::OkStatus();
  for (const std::vector<int>* list : {&c.op().inputs, &c.op().outputs}) {
    for (int t : *list) {
      if (t == kNoTensor || c.graph().tensors[t].type != DataType::kResource) continue;
      return c.Unsupported(absl::StrCat("takes resource tensor '", c.graph().tensors[t].name,
                                        "'; only READ_VARIABLE and ASSIGN_VARIABLE use resource "
                                        "handles"));
    }
  }
  return absl::OkStatus();
}

// The shapes of TFLite Micro's resource-variable kernels (var_handle.cc, read_variable.cc,
// assign_variable.cc) and CALL_ONCE (call_once.cc); which variable a handle names, and what the
// variable holds, is resolved once every subgraph is imported (import_resource_variables.cc).
absl::Status ValidateResourceVariableOp(const OpChecker& c) {
  auto handle = [&c](const Tensor& t, const char* role) -> absl::Status {
    if (t.type != DataType::kResource || t.NumElements() != 1) {
      return c.Invalid(absl::StrCat(role, " '", t.name, "' is ", DataTypeName(t.type),
                                    ", it must be a resource handle of one element"));
    }
    return absl::OkStatus();
  };
  auto value = [&c](const Tensor& t, const char* role) -> absl::Status {
    if (t.type != DataType::kResource) return absl::OkStatus();
    return c.Invalid(absl::StrCat(role, " '", t.name, "' is a resource handle, not a value"));
  };
  switch (c.op().type) {
    case OpType::kCallOnce:
      return c.Arity(0, 0, 0);
    case OpType::kVarHandle:
      RETURN_IF_ERROR(c.Arity(0, 0, 1));
      if (c.op().opts<VarHandleOptions>().shared_name.empty()) {
        return c.Invalid("has no shared_name: it names no variable");
      }
      return handle(c.Out(), "output");
    case OpType::kReadVariable:
      RETURN_IF_ERROR(c.Arity(1, 1, 1));
      RETURN_IF_ERROR(handle(c.In(0), "input"));
      return value(c.Out(), "output");
    default:  // ASSIGN_VARIABLE
      RETURN_IF_ERROR(c.Arity(2, 2, 0));
      RETURN_IF_ERROR(handle(c.In(0), "input 0"));
      return value(c.In(1), "input 1");
  }
}

}  // namespace

absl::Status ValidateOpOperands(const Graph& graph, const Op& op,
                                std::vector<std::string>* warnings) {
  OpChecker c(graph, op, warnings);
  RETURN_IF_ERROR(RefuseResourceOperands(c));
  RETURN_IF_ERROR(RefuseInt16WithoutKernel(c));
  return ValidateByType(c);
}

namespace {

absl::Status ValidateByType(const OpChecker& c) {
  if (IsCopyOp(c.op().type)) return ValidateDataMovementOp(c);
  switch (c.op().type) {
    case OpType::kConv2D:
      return ValidateConv(c);
    case OpType::kDepthwiseConv2D:
      return ValidateDepthwise(c);
    case OpType::kTransposeConv:
      return ValidateTransposeConv(c);
    case OpType::kFullyConnected:
      return ValidateFullyConnected(c);
    case OpType::kAveragePool2D:
    case OpType::kMaxPool2D:
    case OpType::kL2Pool2D:
      return ValidatePool(c);
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kMaximum:
    case OpType::kMinimum:
      return ValidateBinary(c);
    case OpType::kRelu:
    case OpType::kRelu6:
    case OpType::kHardSwish:
    case OpType::kLeakyRelu:
      return ValidateUnary(c);
    case OpType::kLogistic:
      return ValidateSigmoid(c, 1.0f / 256, -128);
    case OpType::kTanh:
      return ValidateSigmoid(c, 1.0f / 128, 0);
    case OpType::kSoftmax:
      return ValidateSoftmax(c);
    case OpType::kReshape:
    case OpType::kSqueeze:
      return ValidateReshape(c);
    case OpType::kTranspose:
      return ValidateTranspose(c);
    case OpType::kPad:
    case OpType::kPadV2:
      return ValidatePad(c);
    case OpType::kMean:
      return ValidateMean(c);
    case OpType::kConcatenation:
      return ValidateConcat(c);
    case OpType::kSlice:
      return ValidateSlice(c);
    case OpType::kStridedSlice:
      return ValidateStridedSlice(c);
    case OpType::kResizeNearestNeighbor:
      return ValidateResize(c);
    case OpType::kResizeBilinear:
      return ValidateResizeBilinear(c);
    case OpType::kBatchMatMul:
      return ValidateBatchMatMul(c);
    case OpType::kQuantize:
      return ValidateQuantize(c);
    case OpType::kDequantize:
      return ValidateDequantize(c);
    case OpType::kShape:
    case OpType::kFill:
    case OpType::kZerosLike:
    case OpType::kEmbeddingLookup:
    case OpType::kBroadcastArgs:
      return ValidateDataMovementOp(c);
    case OpType::kEqual:
    case OpType::kNotEqual:
    case OpType::kGreater:
    case OpType::kGreaterEqual:
    case OpType::kLess:
    case OpType::kLessEqual:
    case OpType::kLogicalAnd:
    case OpType::kLogicalOr:
    case OpType::kLogicalNot:
    case OpType::kSelectV2:
    case OpType::kReduceMax:
    case OpType::kReduceMin:
    case OpType::kSum:
    case OpType::kArgMax:
    case OpType::kArgMin:
    case OpType::kCast:
    case OpType::kAbs:
    case OpType::kNeg:
      return ValidateSelectionOp(c);
    case OpType::kExp:
    case OpType::kLog:
    case OpType::kSqrt:
    case OpType::kRsqrt:
    case OpType::kSquare:
    case OpType::kRound:
    case OpType::kFloor:
    case OpType::kCeil:
    case OpType::kSin:
    case OpType::kCos:
    case OpType::kFloorDiv:
    case OpType::kFloorMod:
    case OpType::kElu:
    case OpType::kPrelu:
    case OpType::kDiv:
    case OpType::kSquaredDifference:
    case OpType::kAddN:
    case OpType::kCumsum:
    case OpType::kLogSoftmax:
    case OpType::kL2Normalization:
      return ValidateMathOp(c);
    case OpType::kSvdf:
    case OpType::kUnidirectionalSequenceLstm:
    case OpType::kDetectionPostprocess:
      return ValidateSequenceOp(c);
    case OpType::kCallOnce:
    case OpType::kVarHandle:
    case OpType::kReadVariable:
    case OpType::kAssignVariable:
      return ValidateResourceVariableOp(c);
    case OpType::kIf:
    case OpType::kWhile:
      // Their operands are checked against the subgraphs they call, once every subgraph is
      // imported (import_control_flow.cc).
      return absl::OkStatus();
    case OpType::kSignalWindow:
    case OpType::kSignalFftAutoScale:
    case OpType::kSignalDelay:
      return ValidateSignalOp(c);
    case OpType::kSignalEnergy:
    case OpType::kSignalFilterBank:
    case OpType::kSignalFilterBankSquareRoot:
    case OpType::kSignalFilterBankLog:
    case OpType::kSignalPcan:
    case OpType::kSignalSpectralSubtraction:
      return ValidateSignalFilterBankOp(c);
    case OpType::kSignalRfft:
    case OpType::kSignalIrfft:
      return ValidateSignalFftOp(c);
    case OpType::kSignalFramer:
    case OpType::kSignalStacker:
    case OpType::kSignalOverlapAdd:
    case OpType::kCircularBuffer:
      return ValidateStreamOp(c);
    default:
      break;  // the copy ops above; ImportEveryOpTest imports every op type
  }
  return c.Invalid("unknown op type");
}

}  // namespace

}  // namespace boardlab::compiler
