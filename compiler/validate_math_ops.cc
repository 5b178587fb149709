// Operand checks of the arithmetic and math ops (issue 13, batch 2). Types and quantization
// rules are TFLite Micro's (the Prepare and Eval functions of elementwise.cc, exp.cc, floor.cc,
// round.cc, elu.cc and prelu.cc): what TFLite Micro refuses is refused here when compiling,
// with the reason.

#include "compiler/op_checker.h"

namespace boardlab::compiler {
namespace {

// EXP, LOG, SQRT, SQUARE, ROUND and FLOOR: TFLite Micro evaluates them on float32 only.
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
  RETURN_IF_ERROR(c.TypeIn(in, "input", {DataType::kInt8, DataType::kFloat32},
                           "TFLite Micro's PRELU takes int8 or float32"));
  RETURN_IF_ERROR(c.SameType(in, alpha));
  RETURN_IF_ERROR(c.SameType(in, c.Out()));
  RETURN_IF_ERROR(c.QuantizedIfInt8(in, "input"));
  RETURN_IF_ERROR(c.QuantizedIfInt8(alpha, "alpha"));
  RETURN_IF_ERROR(c.QuantizedIfInt8(c.Out(), "output"));
  RETURN_IF_ERROR(c.Rank(in, "input", 0, 4));
  RETURN_IF_ERROR(c.Rank(alpha, "alpha", 0, 4));
  std::vector<int32_t> shape;
  RETURN_IF_ERROR(c.Broadcast(in.shape, alpha.shape, shape));
  return c.OutputShape(shape);
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
      return ValidateFloatUnary(c);
    case OpType::kRsqrt:
    case OpType::kElu:
      return ValidateInt8OrFloatUnary(c);
    case OpType::kPrelu:
      return ValidatePrelu(c);
    default:
      return c.Invalid("not a math op");
  }
}

}  // namespace boardlab::compiler
