// REDUCE_MAX, REDUCE_MIN (int8 and float32), SUM (int8, int16 for 16x8, and float32) and
// ARG_MAX, ARG_MIN. The axes are constant operands, resolved at Prepare into a mask of reduced
// dimensions.

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/reduce.h"

namespace boardlab::runtime::kernels {
namespace {

bool IsReducible(ScalarType t) { return t == ScalarType::kChar || t == ScalarType::kFloat; }

// SUM also takes int16 (TFLite Micro's 16x8 SUM); REDUCE_MAX / REDUCE_MIN do not.
bool IsReducible(ScalarType t, bool sum) {
  return IsReducible(t) || (sum && t == ScalarType::kShort);
}

// Args: in 0, axes 1, keep_dims 2, zero_points 3, scales 4, out 5.
Error PrepareReduce(const char* op, KernelContext& ctx, Args args, bool sum) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &in));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 5, &out));
  RT_CHECK_OR_RETURN_ERROR(IsReducible(in->type, sum) && out->type == in->type &&
                               in->rank <= kMaxDims && IsIndexTensor(args[1]),
                           kInvalidProgram,
                           "%s: int8, int16 (SUM) or float32 tensors and constant axes", op);
  auto* d = static_cast<OpDataReduce*>(ctx.op_data);
  for (int64_t i = 0; i < args[1]->tensor->NumElements(); ++i) {
    int64_t axis = IndexAt(*args[1]->tensor, i);
    if (axis < 0) axis += in->rank;
    RT_CHECK_OR_RETURN_ERROR(axis >= 0 && axis < in->rank, kInvalidProgram, "%s: axis %ld", op,
                             static_cast<long>(axis));
    d->reduced[axis] = true;
  }
  int64_t kept = 1;
  for (int32_t a = 0; a < in->rank; ++a) kept *= d->reduced[a] ? 1 : in->dims[a];
  RT_CHECK_OR_RETURN_ERROR(out->NumElements() == kept, kInvalidProgram,
                           "%s: output holds %ld elements, the reduction gives %ld", op,
                           static_cast<long>(out->NumElements()), static_cast<long>(kept));
  if (in->type == ScalarType::kFloat) return Error::kOk;
  QuantLists q;
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
  RT_CHECK_OR_RETURN_ERROR(q.count == 3 && q.scale[0] > 0 && q.scale[2] > 0, kInvalidProgram,
                           "%s: quantization lists", op);
  if (!sum) {
    // TFLite Micro compares raw int8 values: one quantization for input and output.
    RT_CHECK_OR_RETURN_ERROR(q.scale[0] == q.scale[2] && q.zero_point[0] == q.zero_point[2],
                             kNotSupported, "%s: input and output quantization differ", op);
    return Error::kOk;
  }
  RT_CHECK_OR_RETURN_ERROR(
      in->type != ScalarType::kShort || (q.zero_point[0] == 0 && q.zero_point[2] == 0),
      kInvalidProgram, "%s: 16x8 zero points must be 0", op);
  d->sum.input_zero_point = q.zero_point[0];
  d->sum.output_zero_point = q.zero_point[2];
  QuantizeMultiplier(q.scale[0] / q.scale[2], &d->sum.multiplier, &d->sum.shift);
  return Error::kOk;
}

Error EvalMaxMin(KernelContext& ctx, Args args, bool max) {
  const auto* d = static_cast<const OpDataReduce*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *args[5]->tensor;
  if (in.type == ScalarType::kFloat) {
    return max ? reduce_max_f32(ToShape(in), d->reduced, in.As<const float>(), out.As<float>())
               : reduce_min_f32(ToShape(in), d->reduced, in.As<const float>(), out.As<float>());
  }
  return max ? reduce_max_s8(ToShape(in), d->reduced, in.As<const int8_t>(), out.As<int8_t>())
             : reduce_min_s8(ToShape(in), d->reduced, in.As<const int8_t>(), out.As<int8_t>());
}

// Args: in 0, axis 1, zero_points 2, scales 3, out 4 (int32 or int64).
Error PrepareArg(const char* op, KernelContext& ctx, Args args) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &in));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 4, &out));
  RT_CHECK_OR_RETURN_ERROR(IsReducible(in->type) &&
                               (out->type == ScalarType::kInt || out->type == ScalarType::kLong) &&
                               IsIndexTensor(args[1]) && args[1]->tensor->NumElements() == 1,
                           kInvalidProgram, "%s: types or axis", op);
  int64_t axis = IndexAt(*args[1]->tensor, 0);
  if (axis < 0) axis += in->rank;
  RT_CHECK_OR_RETURN_ERROR(
      axis >= 0 && axis < in->rank && out->NumElements() * in->dims[axis] == in->NumElements(),
      kInvalidProgram, "%s: axis %ld or output size", op, static_cast<long>(axis));
  static_cast<OpDataArg*>(ctx.op_data)->axis = static_cast<int32_t>(axis);
  return Error::kOk;
}

Error EvalArg(KernelContext& ctx, Args args, bool max) {
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *args[4]->tensor;
  const int32_t axis = static_cast<const OpDataArg*>(ctx.op_data)->axis;
  const ArgOutput result{out.data, out.type == ScalarType::kLong};
  if (in.type == ScalarType::kFloat) {
    return arg_min_max_f32(ToShape(in), in.As<const float>(), axis, max, result);
  }
  return arg_min_max_s8(ToShape(in), in.As<const int8_t>(), axis, max, result);
}

}  // namespace

Error ReduceMaxPrepare(KernelContext& ctx, Args args) {
  return PrepareReduce("reduce_max", ctx, args, /*sum=*/false);
}
Error ReduceMaxEval(KernelContext& ctx, Args args) { return EvalMaxMin(ctx, args, true); }
Error ReduceMinPrepare(KernelContext& ctx, Args args) {
  return PrepareReduce("reduce_min", ctx, args, /*sum=*/false);
}
Error ReduceMinEval(KernelContext& ctx, Args args) { return EvalMaxMin(ctx, args, false); }

Error SumPrepare(KernelContext& ctx, Args args) {
  return PrepareReduce("sum", ctx, args, /*sum=*/true);
}

// The int32 partial sums live in the kernel's temp memory.
Error SumEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataReduce*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *args[5]->tensor;
  if (in.type == ScalarType::kFloat) {
    return sum_f32(ToShape(in), d->reduced, in.As<const float>(), out.As<float>());
  }
  const int64_t bytes = sum_s8_get_buffer_size(ToShape(in), d->reduced);
  void* scratch = ctx.temp != nullptr ? ctx.temp->Allocate(static_cast<size_t>(bytes), 4) : nullptr;
  RT_CHECK_OR_RETURN_ERROR(scratch != nullptr, kMemoryAllocationFailed,
                           "sum: %ld bytes of temp memory for the partial sums",
                           static_cast<long>(bytes));
  if (in.type == ScalarType::kShort) {
    return sum_s16(d->sum, ToShape(in), d->reduced, in.As<const int16_t>(),
                   static_cast<int32_t*>(scratch), out.As<int16_t>());
  }
  return sum_s8(d->sum, ToShape(in), d->reduced, in.As<const int8_t>(),
                static_cast<int32_t*>(scratch), out.As<int8_t>());
}

Error ArgMaxPrepare(KernelContext& ctx, Args args) { return PrepareArg("arg_max", ctx, args); }
Error ArgMaxEval(KernelContext& ctx, Args args) { return EvalArg(ctx, args, true); }
Error ArgMinPrepare(KernelContext& ctx, Args args) { return PrepareArg("arg_min", ctx, args); }
Error ArgMinEval(KernelContext& ctx, Args args) { return EvalArg(ctx, args, false); }

}  // namespace boardlab::runtime::kernels
