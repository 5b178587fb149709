// Operand checks of the comparison, logical, selection, reduction and element-wise conversion
// ops. Types and quantization rules are TFLite Micro's (its Prepare and Eval functions):
// anything TFLite Micro refuses at run time is refused here when compiling, with the reason.

#include <algorithm>

#include "compiler/op_checker.h"
#include "compiler/quantization.h"

namespace boardlab::compiler {
namespace {

// TFLite Micro rescales int8 (and GREATER's int16) comparison operands with
// QuantizeMultiplierSmallerThanOneExp of the input scale, which aborts for a scale whose
// multiplier has a positive shift (>= 1). Its int16 GREATER applies the zero points like int8's,
// so they may be anything in int16.
absl::Status ComparableQuantized(const OpChecker& c, const Tensor& t) {
  if (t.type == DataType::kInt16) {
    RETURN_IF_ERROR(c.PerTensorQuantized(t, "input"));
    if (t.quant.zp() < -32768 || t.quant.zp() > 32767) {
      return c.Invalid(
          absl::StrCat("input '", t.name, "' zero point ", t.quant.zp(), " is outside int16"));
    }
  } else {
    RETURN_IF_ERROR(c.Int8Activation(t, "input"));
  }
  const QuantizedMultiplier m = QuantizeMultiplier(t.quant.scale[0]);
  if (m.shift > 0) {
    return c.Unsupported(absl::StrCat("input '", t.name, "' scale ", t.quant.scale[0],
                                      " is not below 1, which TFLite Micro's quantized comparison "
                                      "requires"));
  }
  return absl::OkStatus();
}

absl::Status ValidateComparison(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const Tensor& a = c.In(0);
  const bool equality = c.op().type == OpType::kEqual || c.op().type == OpType::kNotEqual;
  if (equality) {
    RETURN_IF_ERROR(c.TypeIn(
        a, "input",
        {DataType::kInt8, DataType::kInt32, DataType::kInt64, DataType::kFloat32, DataType::kBool},
        "TFLite Micro compares bool, float32, int32, int64 and int8"));
  } else if (c.op().type == OpType::kGreater) {
    RETURN_IF_ERROR(c.TypeIn(
        a, "input",
        {DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kFloat32},
        "TFLite Micro's GREATER orders float32, int32, int64, int8 and int16"));
  } else {
    RETURN_IF_ERROR(c.TypeIn(
        a, "input", {DataType::kInt8, DataType::kInt32, DataType::kInt64, DataType::kFloat32},
        "TFLite Micro orders float32, int32, int64 and int8"));
  }
  RETURN_IF_ERROR(c.SameType(a, c.In(1)));
  if (a.type == DataType::kInt8 || a.type == DataType::kInt16) {
    RETURN_IF_ERROR(ComparableQuantized(c, a));
    RETURN_IF_ERROR(ComparableQuantized(c, c.In(1)));
  }
  RETURN_IF_ERROR(c.TypeIn(c.Out(), "output", {DataType::kBool}, "comparisons write bool"));
  std::vector<int32_t> shape;
  RETURN_IF_ERROR(c.Broadcast(a.shape, c.In(1).shape, shape));
  return c.OutputShape(shape);
}

absl::Status ValidateLogical(const OpChecker& c) {
  const bool unary = c.op().type == OpType::kLogicalNot;
  RETURN_IF_ERROR(c.Arity(unary ? 1 : 2, unary ? 1 : 2));
  for (size_t i = 0; i < c.op().inputs.size(); ++i) {
    RETURN_IF_ERROR(c.TypeIn(c.In(i), "input", {DataType::kBool}, "logical ops take bool"));
  }
  RETURN_IF_ERROR(c.TypeIn(c.Out(), "output", {DataType::kBool}, "logical ops write bool"));
  std::vector<int32_t> shape = c.In(0).shape;
  if (!unary) RETURN_IF_ERROR(c.Broadcast(c.In(0).shape, c.In(1).shape, shape));
  return c.OutputShape(shape);
}

absl::Status ValidateSelect(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(3, 3));
  RETURN_IF_ERROR(c.TypeIn(c.In(0), "condition", {DataType::kBool}, "the condition is bool"));
  const Tensor& x = c.In(1);
  RETURN_IF_ERROR(c.TypeIn(x, "input", {DataType::kInt8, DataType::kInt16, DataType::kFloat32},
                           "TFLite Micro's SELECT_V2 takes int8, int16 or float32"));
  RETURN_IF_ERROR(c.SameType(x, c.In(2)));
  RETURN_IF_ERROR(c.SameType(x, c.Out()));
  c.WarnIfRequantized(x, c.Out());
  c.WarnIfRequantized(c.In(2), c.Out());
  std::vector<int32_t> xy, shape;
  RETURN_IF_ERROR(c.Broadcast(x.shape, c.In(2).shape, xy));
  RETURN_IF_ERROR(c.Broadcast(c.In(0).shape, xy, shape));
  return c.OutputShape(shape);
}

// The output shape of a reduction over `axes` (duplicates allowed, as in TFLite).
absl::Status ReducedShape(const OpChecker& c, const std::vector<int64_t>& axes, bool keep_dims,
                          std::vector<int32_t>& shape) {
  const std::vector<int32_t>& in = c.In(0).shape;
  std::vector<char> reduced(in.size(), 0);
  for (int64_t a : axes) {
    int32_t axis = 0;
    RETURN_IF_ERROR(c.Axis(a, in.size(), "axis", axis));
    reduced[axis] = 1;
  }
  shape.clear();
  for (size_t d = 0; d < in.size(); ++d) {
    if (!reduced[d]) {
      shape.push_back(in[d]);
    } else if (keep_dims) {
      shape.push_back(1);
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateReduce(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const Tensor& in = c.In(0);
  if (c.op().type == OpType::kSum && (c.Is16x8() || in.type == DataType::kInt16)) {
    // TFLite Micro's 16x8 SUM: int16 in and out, zero points 0.
    RETURN_IF_ERROR(c.AllQuantizedActivations(/*allow_16x8=*/true));
  } else {
    RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt8, DataType::kFloat32},
                             "boardlab reduces int8 and float32 (and int16 with SUM)"));
    RETURN_IF_ERROR(c.SameType(in, c.Out()));
    RETURN_IF_ERROR(c.QuantizedIfInt8(in, "input"));
    RETURN_IF_ERROR(c.QuantizedIfInt8(c.Out(), "output"));
  }
  if (in.type == DataType::kInt8 && c.op().type != OpType::kSum &&
      !in.quant.SameAs(c.Out().quant)) {
    return c.Unsupported(absl::StrCat("input and output quantization differ; TFLite Micro's int8 ",
                                      OpTypeName(c.op().type),
                                      " requires the same scale and zero point"));
  }
  if (c.In(1).type != DataType::kInt32) {
    return c.Invalid(absl::StrCat("axis '", c.In(1).name, "' is ", DataTypeName(c.In(1).type),
                                  ", TFLite Micro takes int32"));
  }
  std::vector<int64_t> axes;
  RETURN_IF_ERROR(c.ConstantIndices(c.In(1), "axis", axes));
  std::vector<int32_t> shape;
  RETURN_IF_ERROR(ReducedShape(c, axes, c.op().opts<ReducerOptions>().keep_dims, shape));
  return c.OutputShape(shape);
}

absl::Status ValidateArgMinMax(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(2, 2));
  const Tensor& in = c.In(0);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt8, DataType::kFloat32},
                           "TFLite Micro's ARG_MAX/ARG_MIN take float32 or int8"));
  RETURN_IF_ERROR(c.TypeIn(c.Out(), "output", {DataType::kInt32, DataType::kInt64},
                           "the index output is int32 or int64"));
  if (c.In(1).type != DataType::kInt32) {
    return c.Invalid(absl::StrCat("axis '", c.In(1).name, "' is ", DataTypeName(c.In(1).type),
                                  ", TFLite Micro takes int32"));
  }
  std::vector<int64_t> axes;
  RETURN_IF_ERROR(c.ConstantIndices(c.In(1), "axis", axes));
  if (axes.size() != 1) {
    return c.Invalid(absl::StrCat("axis holds ", axes.size(), " values, expected one"));
  }
  std::vector<int32_t> shape;
  RETURN_IF_ERROR(ReducedShape(c, axes, /*keep_dims=*/false, shape));
  return c.OutputShape(shape);
}

absl::Status ValidateCast(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  RETURN_IF_ERROR(c.TypeIn(
      c.In(0), "input",
      {DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kFloat32, DataType::kBool},
      "TFLite Micro casts from int8, int16, int32, float32 or bool"));
  RETURN_IF_ERROR(c.TypeIn(
      c.Out(), "output", {DataType::kInt8, DataType::kInt16, DataType::kInt32, DataType::kFloat32},
      "TFLite Micro casts to int8, int16, int32 or float32"));
  return c.OutputShape(c.In(0).shape);
}

// ABS: float32, int8, or int16, which TFLite Micro takes quantized (16x8, zero points 0) or as
// plain integers (an input without quantization).
absl::Status ValidateAbs(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  const Tensor& in = c.In(0);
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt8, DataType::kInt16, DataType::kFloat32},
                           "TFLite Micro's ABS takes int8, int16 or float32"));
  RETURN_IF_ERROR(c.SameType(in, c.Out()));
  if (in.type == DataType::kInt16) {
    if (in.quant.empty()) return c.OutputShape(in.shape);
    RETURN_IF_ERROR(c.AllQuantizedActivations(/*allow_16x8=*/true));
  }
  RETURN_IF_ERROR(c.QuantizedIfInt8(in, "input"));
  RETURN_IF_ERROR(c.QuantizedIfInt8(c.Out(), "output"));
  return c.OutputShape(in.shape);
}

absl::Status ValidateNeg(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(1, 1));
  RETURN_IF_ERROR(
      c.TypeIn(c.In(0), "input", {DataType::kFloat32}, "TFLite Micro's NEG computes float32 only"));
  RETURN_IF_ERROR(c.SameType(c.In(0), c.Out()));
  return c.OutputShape(c.In(0).shape);
}

}  // namespace

absl::Status ValidateSelectionOp(const OpChecker& c) {
  const OpType type = c.op().type;
  if (IsComparisonOp(type)) return ValidateComparison(c);
  switch (type) {
    case OpType::kLogicalAnd:
    case OpType::kLogicalOr:
    case OpType::kLogicalNot:
      return ValidateLogical(c);
    case OpType::kSelectV2:
      return ValidateSelect(c);
    case OpType::kReduceMax:
    case OpType::kReduceMin:
    case OpType::kSum:
      return ValidateReduce(c);
    case OpType::kArgMax:
    case OpType::kArgMin:
      return ValidateArgMinMax(c);
    case OpType::kCast:
      return ValidateCast(c);
    case OpType::kAbs:
      return ValidateAbs(c);
    case OpType::kNeg:
      return ValidateNeg(c);
    default:
      return c.Invalid("not a selection op");
  }
}

}  // namespace boardlab::compiler
