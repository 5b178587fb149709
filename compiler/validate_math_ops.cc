// Operand checks of the arithmetic and math ops (issue 13, batch 2). Types and quantization
// rules are TFLite Micro's (the Prepare and Eval functions of elementwise.cc, exp.cc, floor.cc,
// ceil.cc, round.cc, elu.cc, prelu.cc, div.cc, floor_div.cc, floor_mod.cc,
// squared_difference.cc, add_n.cc and cumsum.cc): what TFLite Micro refuses is refused here when
// compiling, with the reason.

#include <cmath>

#include "compiler/op_checker.h"

namespace boardlab::compiler {
namespace {

// EXP, LOG, SQRT, SQUARE, ROUND, FLOOR, CEIL, SIN and COS: TFLite Micro evaluates them on
// float32 only.
absl::Status ValidateFloatUnary(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  const std::string reference =
      absl::StrCat("TFLite Micro's ", OpTypeName(c.op().type), " computes float32 only");
  RETURN_IF_ERROR(c.TypeIn(c.In(0), "input", {DataType::kFloat32}, reference.c_str()));
  RETURN_IF_ERROR(c.SameType(c.In(0), c.Out()));
  return c.OutputShape(c.In(0).shape);
}

// RSQRT and ELU: float32, or int8 with per-tensor quantization in and out.
absl::Status ValidateInt8OrFloatUnary(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  const std::string reference =
      absl::StrCat("TFLite Micro's ", OpTypeName(c.op().type), " takes int8 or float32");
  RETURN_IF_ERROR(
      c.TypeIn(c.In(0), "input", {DataType::kInt8, DataType::kFloat32}, reference.c_str()));
  RETURN_IF_ERROR(c.SameType(c.In(0), c.Out()));
  RETURN_IF_ERROR(c.QuantizedIfInt8(c.In(0), "input"));
  RETURN_IF_ERROR(c.QuantizedIfInt8(c.Out(), "output"));
  return c.OutputShape(c.In(0).shape);
}

// PRELU: input and alpha of one type (int8 or float32), broadcast against each other over at
// most 4 dimensions (TFLite Micro's BroadcastPrelu4DSlow); alpha's quantization is per tensor
// because the kernel reads one scale and zero point.
absl::Status ValidatePrelu(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const Tensor& in = c.In(0);
  const Tensor& alpha = c.In(1);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt8, DataType::kInt16, DataType::kFloat32},
                           "TFLite Micro's PRELU takes int8, int16 or float32"));
  RETURN_IF_ERROR(c.SameType(in, c.Out()));
  if (in.type == DataType::kInt16) {
    // 16x8 (prelu_common.cc): int16 input and output, int8 alpha.
    RETURN_IF_ERROR(c.Int16Activation(in, "input"));
    RETURN_IF_ERROR(c.Int16Activation(c.Out(), "output"));
    RETURN_IF_ERROR(c.TypeIn(alpha, "alpha", {DataType::kInt8},
                             "TFLite Micro's 16x8 PRELU takes an int8 alpha"));
  } else {
    RETURN_IF_ERROR(c.SameType(in, alpha));
  }
  RETURN_IF_ERROR(c.QuantizedIfInt8(in, "input"));
  RETURN_IF_ERROR(c.QuantizedIfInt8(alpha, "alpha"));
  RETURN_IF_ERROR(c.QuantizedIfInt8(c.Out(), "output"));
  RETURN_IF_ERROR(c.Rank(in, "input", 0, 4));
  RETURN_IF_ERROR(c.Rank(alpha, "alpha", 0, 4));
  std::vector<int32_t> shape;
  RETURN_IF_ERROR(c.Broadcast(in.shape, alpha.shape, shape));
  return c.OutputShape(shape);
}

// The broadcast shape of a binary op's two inputs as its output; shapes that differ broadcast
// over at most `max_rank` dimensions (TFLite Micro's slow broadcast loops are fixed-rank).
absl::Status BroadcastOutput(const OpChecker& c, size_t max_rank) {
  const Tensor& a = c.In(0);
  const Tensor& b = c.In(1);
  std::vector<int32_t> shape;
  RETURN_IF_ERROR(c.Broadcast(a.shape, b.shape, shape));
  if (a.shape != b.shape && shape.size() > max_rank) {
    return c.Unsupported(absl::StrCat("broadcasting ", ShapeString(a.shape), " with ",
                                      ShapeString(b.shape), " needs rank ", shape.size(),
                                      "; TFLite Micro broadcasts ", OpTypeName(c.op().type),
                                      " over at most ", max_rank, " dimensions"));
  }
  return c.OutputShape(shape);
}

// DIV and SQUARED_DIFFERENCE: two operands of one type that broadcast, over at most
// `max_broadcast_rank` dimensions when their shapes differ (TFLite Micro's slow broadcast loops
// are fixed-rank). int32 operands carry no quantization, as TFLite Micro's DIV requires.
absl::Status ValidateBroadcastBinary(const OpChecker& c, size_t max_broadcast_rank) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const Tensor& a = c.In(0);
  const Tensor& b = c.In(1);
  // SQUARED_DIFFERENCE also runs in 16x8 (int16, zero points 0); DIV does not.
  const bool takes_int16 = c.op().type == OpType::kSquaredDifference;
  const std::string reference =
      absl::StrCat("TFLite Micro's ", OpTypeName(c.op().type), " takes int8, ",
                   takes_int16 ? "int16, " : "", "int32 or float32");
  RETURN_IF_ERROR(
      takes_int16
          ? c.TypeIn(a, "input",
                     {DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kFloat32},
                     reference.c_str())
          : c.TypeIn(a, "input", {DataType::kInt8, DataType::kInt32, DataType::kFloat32},
                     reference.c_str()));
  RETURN_IF_ERROR(c.SameType(a, b));
  RETURN_IF_ERROR(c.SameType(a, c.Out()));
  if (a.type == DataType::kInt16) {
    for (const Tensor* t : {&a, &b}) RETURN_IF_ERROR(c.Int16Activation(*t, "input"));
    RETURN_IF_ERROR(c.Int16Activation(c.Out(), "output"));
  }
  for (const Tensor* t : {&a, &b, &c.Out()}) {
    RETURN_IF_ERROR(c.QuantizedIfInt8(*t, t == &c.Out() ? "output" : "input"));
    if (t->type == DataType::kInt32 && !t->quant.empty()) {
      return c.Unsupported(absl::StrCat("'", t->name,
                                        "' is quantized int32; TFLite Micro computes ",
                                        OpTypeName(c.op().type), " on plain int32 only"));
    }
  }
  return BroadcastOutput(c, max_broadcast_rank);
}

// FLOOR_DIV and FLOOR_MOD: two float32 operands (floor_div.cc, floor_mod.cc have no other
// type), broadcast over at most 4 dimensions (BroadcastBinaryFunction4DSlow).
absl::Status ValidateFloatBinary(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const std::string reference =
      absl::StrCat("TFLite Micro's ", OpTypeName(c.op().type), " computes float32 only");
  RETURN_IF_ERROR(c.TypeIn(c.In(0), "input", {DataType::kFloat32}, reference.c_str()));
  RETURN_IF_ERROR(c.SameType(c.In(0), c.In(1)));
  RETURN_IF_ERROR(c.SameType(c.In(0), c.Out()));
  return BroadcastOutput(c, 4);
}

// ADD_N: at least two inputs of the output's type and shape; int8 inputs share one quantization
// (TFLite Micro's Prepare requires it: it rescales every input with the first one's scale).
absl::Status ValidateAddN(const OpChecker& c) {
  const size_t n = c.op().inputs.size();
  if (n < 2) return c.Invalid(absl::StrCat("has ", n, " inputs, expected at least 2"));
  // The CPU kernel's limit (runtime OpDataAddN::kMaxInputs).
  constexpr size_t kMaxInputs = 63;
  if (n > kMaxInputs) {
    return c.Unsupported(
        absl::StrCat("has ", n, " inputs; boardlab's ADD_N takes at most ", kMaxInputs));
  }
  RETURN_IF_ERROR(c.Arity(n, n));
  const Tensor& first = c.In(0);
  RETURN_IF_ERROR(c.TypeIn(first, "input", {DataType::kInt8, DataType::kFloat32},
                           "TFLite Micro's ADD_N takes int8 or float32"));
  RETURN_IF_ERROR(c.SameType(first, c.Out()));
  RETURN_IF_ERROR(c.QuantizedIfInt8(c.Out(), "output"));
  for (size_t i = 0; i < n; ++i) {
    const Tensor& t = c.In(i);
    RETURN_IF_ERROR(c.SameType(first, t));
    RETURN_IF_ERROR(c.QuantizedIfInt8(t, "input"));
    if (t.shape != first.shape) {
      return c.Invalid(absl::StrCat("input ", i, " ", ShapeString(t.shape),
                                    " differs from input 0 ", ShapeString(first.shape)));
    }
    if (t.type == DataType::kInt8 && !t.quant.SameAs(first.quant)) {
      return c.Unsupported(absl::StrCat("input ", i, " '", t.name,
                                        "' is quantized differently from input 0; TFLite Micro's "
                                        "ADD_N requires one quantization for every input"));
    }
  }
  return c.OutputShape(first.shape);
}

// CUMSUM: an int8 or float32 input of rank >= 1 and one int32 axis (a constant one must lie
// inside the rank; a run-time one is checked when the op runs, as TFLite Micro does).
absl::Status ValidateCumsum(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const Tensor& in = c.In(0);
  const Tensor& axis = c.In(1);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt8, DataType::kFloat32},
                           "TFLite Micro's CUMSUM takes int8 or float32"));
  RETURN_IF_ERROR(c.SameType(in, c.Out()));
  RETURN_IF_ERROR(c.QuantizedIfInt8(in, "input"));
  RETURN_IF_ERROR(c.QuantizedIfInt8(c.Out(), "output"));
  if (in.shape.empty()) return c.Invalid("input is a scalar; CUMSUM needs an axis to sum along");
  if (axis.type != DataType::kInt32 || axis.NumElements() != 1) {
    return c.Invalid(absl::StrCat("axis '", axis.name, "' is ", DataTypeName(axis.type), " ",
                                  ShapeString(axis.shape), ", expected one int32"));
  }
  if (axis.is_constant) {
    int32_t resolved = 0;
    RETURN_IF_ERROR(c.Axis(c.ConstantInts(axis)[0], in.shape.size(), "axis", resolved));
  }
  return c.OutputShape(in.shape);
}

// LOG_SOFTMAX and L2_NORMALIZATION: int8 in and out of one shape, normalized along the last
// dimension into the fixed output quantization TFLite's Prepare requires.
absl::Status ValidateRowNormalization(const OpChecker& c, float out_scale, int64_t out_zp,
                                      size_t max_rank) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  const Tensor& in = c.In(0);
  RETURN_IF_ERROR(c.Int8Activation(in, "input"));
  RETURN_IF_ERROR(c.Int8Activation(c.Out(), "output"));
  RETURN_IF_ERROR(c.Rank(in, "input", 1, max_rank));
  const FixedQuantRule prepare{/*relative_tolerance=*/0.0f, /*unsupported=*/true,
                               absl::StrCat(OpTypeName(c.op().type), " int8 (TFLite's Prepare)")};
  RETURN_IF_ERROR(ValidateFixedOutputQuant(c, out_scale, out_zp, prepare));
  return c.OutputShape(in.shape);
}

// LOG_SOFTMAX rescales the input by scale * 2^26 into a multiplier >= 1 with a shift below 31
// (TFLite's QuantizeMultiplierGreaterThanOne): input scales in [2^-26, 16).
absl::Status ValidateLogSoftmax(const OpChecker& c) {
  RETURN_IF_ERROR(ValidateRowNormalization(c, 16.0f / 256, 127, 6));
  const float scale = c.In(0).quant.scale[0];
  if (!(scale >= std::ldexp(1.0f, -26) && scale < 16.0f)) {
    return c.Unsupported(absl::StrCat("input scale ", scale,
                                      " is outside [2^-26, 16), where the fixed-point rescaling "
                                      "of LOG_SOFTMAX int8 is defined"));
  }
  return absl::OkStatus();
}

// L2_NORMALIZATION: rank <= 4 and no fused activation (TFLite Micro's l2norm.cc).
absl::Status ValidateL2Normalization(const OpChecker& c) {
  RETURN_IF_ERROR(ValidateRowNormalization(c, 1.0f / 128, 0, 4));
  const Activation act = c.op().opts<ElementwiseOptions>().activation;
  if (act != Activation::kNone) {
    return c.Unsupported(absl::StrCat("fused activation ", static_cast<int>(act),
                                      "; TFLite Micro's L2_NORMALIZATION runs without one only"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateMathOp(const OpChecker& c) {
  switch (c.op().type) {
    case OpType::kExp:
    case OpType::kLog:
    case OpType::kSqrt:
    case OpType::kSquare:
    case OpType::kRound:
    case OpType::kFloor:
    case OpType::kCeil:
    case OpType::kSin:
    case OpType::kCos:
      return ValidateFloatUnary(c);
    case OpType::kFloorDiv:
    case OpType::kFloorMod:
      return ValidateFloatBinary(c);
    case OpType::kRsqrt:
    case OpType::kElu:
      return ValidateInt8OrFloatUnary(c);
    case OpType::kPrelu:
      return ValidatePrelu(c);
    case OpType::kDiv:
      return ValidateBroadcastBinary(c, 5);
    case OpType::kSquaredDifference:
      return ValidateBroadcastBinary(c, 4);
    case OpType::kAddN:
      return ValidateAddN(c);
    case OpType::kCumsum:
      return ValidateCumsum(c);
    case OpType::kLogSoftmax:
      return ValidateLogSoftmax(c);
    case OpType::kL2Normalization:
      return ValidateL2Normalization(c);
    default:
      return c.Invalid("not a math op");
  }
}

}  // namespace boardlab::compiler
