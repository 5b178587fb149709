// EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL, LOGICAL_AND, LOGICAL_OR,
// LOGICAL_NOT and SELECT_V2. int8 comparisons (and GREATER's int16, the one TFLite Micro has)
// derive TFLite's rescaling from the operands' quantization at Prepare (compare.h).

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/compare.h"

namespace boardlab::runtime::kernels {
namespace {

// Args: a 0, b 1, zero_points 2, scales 3, out 4 (bool). `int16`: the op takes int16 operands
// (TFLite Micro's GREATER only).
Error PrepareComparison(const char* op, KernelContext& ctx, Args args, bool ordered, bool int16) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *a, *b, *out;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &a));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 1, &b));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 4, ScalarType::kBool, &out));
  const ScalarType t = a->type;
  const bool typed = t == ScalarType::kChar || t == ScalarType::kInt || t == ScalarType::kLong ||
                     t == ScalarType::kFloat || (!ordered && t == ScalarType::kBool) ||
                     (int16 && t == ScalarType::kShort);
  RT_CHECK_OR_RETURN_ERROR(typed && b->type == t, kInvalidProgram,
                           "%s: operand types are not comparable", op);
  auto* d = static_cast<OpDataCompare*>(ctx.op_data);
  RT_CHECK_OR_RETURN_ERROR(ComputeBroadcast(ToShape(*a), ToShape(*b), ToShape(*out), &d->strides),
                           kInvalidProgram, "%s: input shapes do not broadcast to the output", op);
  if (t != ScalarType::kChar && t != ScalarType::kShort) return Error::kOk;
  QuantLists q;
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
  RT_CHECK_OR_RETURN_ERROR(q.count == 3, kInvalidProgram, "%s: quantization lists", op);
  for (int k = 0; k < 2; ++k) {
    d->scaling.offset[k] = -q.zero_point[k];
    QuantizeMultiplier(q.scale[k], &d->scaling.multiplier[k], &d->scaling.shift[k]);
    // TFLite's QuantizeMultiplierSmallerThanOneExp: only scales below 1 are defined.
    RT_CHECK_OR_RETURN_ERROR(q.scale[k] > 0 && d->scaling.shift[k] <= 0, kNotSupported,
                             "%s: input %d scale %g is not in (0, 1)", op, k, q.scale[k]);
  }
  d->scaling.left_shift = 8;
  return Error::kOk;
}

Error EvalComparison(Comparison cmp, KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataCompare*>(ctx.op_data);
  const TensorView &a = *args[0]->tensor, &b = *args[1]->tensor;
  bool* out = args[4]->tensor->As<bool>();
  switch (a.type) {
    case ScalarType::kChar:
      return compare_s8(cmp, d->scaling, d->strides, a.As<const int8_t>(), b.As<const int8_t>(),
                        out);
    case ScalarType::kShort:
      return compare_s16(cmp, d->scaling, d->strides, a.As<const int16_t>(), b.As<const int16_t>(),
                         out);
    case ScalarType::kInt:
      return compare_s32(cmp, d->strides, a.As<const int32_t>(), b.As<const int32_t>(), out);
    case ScalarType::kLong:
      return compare_s64(cmp, d->strides, a.As<const int64_t>(), b.As<const int64_t>(), out);
    case ScalarType::kFloat:
      return compare_f32(cmp, d->strides, a.As<const float>(), b.As<const float>(), out);
    default:
      return compare_bool(cmp, d->strides, a.As<const bool>(), b.As<const bool>(), out);
  }
}

// Args: a 0, b 1, zero_points 2, scales 3, out 4, all bool.
Error PrepareLogical(const char* op, KernelContext& ctx, Args args) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *a, *b, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kBool, &a));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, ScalarType::kBool, &b));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 4, ScalarType::kBool, &out));
  auto* d = static_cast<OpDataLogical*>(ctx.op_data);
  RT_CHECK_OR_RETURN_ERROR(ComputeBroadcast(ToShape(*a), ToShape(*b), ToShape(*out), &d->strides),
                           kInvalidProgram, "%s: input shapes do not broadcast to the output", op);
  return Error::kOk;
}

Error EvalLogical(LogicalOp logical, KernelContext& ctx, Args args) {
  return logical_bool(logical, static_cast<const OpDataLogical*>(ctx.op_data)->strides,
                      args[0]->tensor->As<const bool>(), args[1]->tensor->As<const bool>(),
                      args[4]->tensor->As<bool>());
}

}  // namespace

#define BOARDLAB_COMPARISON_KERNEL(Fn, name, cmp, ordered, int16) \
  Error Fn##Prepare(KernelContext& ctx, Args args) {              \
    return PrepareComparison(name, ctx, args, ordered, int16);    \
  }                                                               \
  Error Fn##Eval(KernelContext& ctx, Args args) { return EvalComparison(cmp, ctx, args); }
BOARDLAB_COMPARISON_KERNEL(Equal, "equal", Comparison::kEqual, false, false)
BOARDLAB_COMPARISON_KERNEL(NotEqual, "not_equal", Comparison::kNotEqual, false, false)
BOARDLAB_COMPARISON_KERNEL(Greater, "greater", Comparison::kGreater, true, true)
BOARDLAB_COMPARISON_KERNEL(GreaterEqual, "greater_equal", Comparison::kGreaterEqual, true, false)
BOARDLAB_COMPARISON_KERNEL(Less, "less", Comparison::kLess, true, false)
BOARDLAB_COMPARISON_KERNEL(LessEqual, "less_equal", Comparison::kLessEqual, true, false)
#undef BOARDLAB_COMPARISON_KERNEL

Error LogicalAndPrepare(KernelContext& ctx, Args args) {
  return PrepareLogical("logical_and", ctx, args);
}
Error LogicalAndEval(KernelContext& ctx, Args args) {
  return EvalLogical(LogicalOp::kAnd, ctx, args);
}
Error LogicalOrPrepare(KernelContext& ctx, Args args) {
  return PrepareLogical("logical_or", ctx, args);
}
Error LogicalOrEval(KernelContext& ctx, Args args) {
  return EvalLogical(LogicalOp::kOr, ctx, args);
}

// Args: in 0, zero_points 1, scales 2, out 3, both bool.
Error LogicalNotPrepare(KernelContext&, Args args) {
  constexpr const char* op = "logical_not";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 4));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kBool, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 3, ScalarType::kBool, &out));
  RT_CHECK_OR_RETURN_ERROR(SameTypeAndShape(*in, *out), kInvalidProgram, "%s: shapes differ", op);
  return Error::kOk;
}

Error LogicalNotEval(KernelContext&, Args args) {
  return logical_not_bool(args[0]->tensor->NumElements(), args[0]->tensor->As<const bool>(),
                          args[3]->tensor->As<bool>());
}

// Args: condition 0 (bool), x 1, y 2, zero_points 3, scales 4, out 5. Values are copied raw.
Error SelectV2Prepare(KernelContext&, Args args) {
  constexpr const char* op = "select_v2";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView *condition, *x, *y, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kBool, &condition));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 1, &x));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 2, &y));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 5, &out));
  int64_t strides[kMaxDims];
  const ShapeN o = ToShape(*out);
  RT_CHECK_OR_RETURN_ERROR(x->type == out->type && y->type == out->type &&
                               BroadcastStridesOf(ToShape(*condition), o, strides) &&
                               BroadcastStridesOf(ToShape(*x), o, strides) &&
                               BroadcastStridesOf(ToShape(*y), o, strides),
                           kInvalidProgram, "%s: operands do not broadcast to the output", op);
  return Error::kOk;
}

Error SelectV2Eval(KernelContext&, Args args) {
  const TensorView &c = *args[0]->tensor, &x = *args[1]->tensor, &y = *args[2]->tensor;
  TensorView& out = *args[5]->tensor;
  return select_elements(ToShape(c), c.As<const bool>(), ToShape(x), x.data, ToShape(y), y.data,
                         ToShape(out), ElementSize(out.type), out.data);
}

}  // namespace boardlab::runtime::kernels
