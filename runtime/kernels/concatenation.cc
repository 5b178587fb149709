#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/data_movement_s8.h"

namespace boardlab::runtime::kernels {
namespace {
constexpr size_t kMaxConcatInputs = 32;
}  // namespace

// Args: inputs 0 (TensorList), axis 1, act_min 2, act_max 3, out 4. The compiler passes no
// per-input quantization, so inputs are copied raw (TFLite Micro does the same for int8).
Error ConcatenationPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "concatenation";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView* out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 4, ScalarType::kChar, &out));
  RT_CHECK_OR_RETURN_ERROR(args[0] != nullptr && args[0]->tag == ValueTag::kTensorList &&
                               args[0]->tensor_list.size > 0 &&
                               args[0]->tensor_list.size <= kMaxConcatInputs,
                           kInvalidProgram, "%s: inputs must be a TensorList of 1..%lu", op,
                           static_cast<unsigned long>(kMaxConcatInputs));
  auto* d = static_cast<OpDataConcat*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &d->axis));
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &d->act_min));
  RT_RETURN_IF_ERROR(IntArg(op, args, 3, &d->act_max));
  if (d->axis < 0) d->axis += out->rank;
  RT_CHECK_OR_RETURN_ERROR(d->axis >= 0 && d->axis < out->rank, kInvalidProgram, "%s: axis", op);
  int64_t axis_sum = 0;
  for (size_t i = 0; i < args[0]->tensor_list.size; ++i) {
    const TensorView* t = args[0]->tensor_list.At(i);
    RT_CHECK_OR_RETURN_ERROR(t != nullptr && t->type == ScalarType::kChar && t->rank == out->rank,
                             kInvalidProgram, "%s: input %lu must be int8 of rank %d", op,
                             static_cast<unsigned long>(i), static_cast<int>(out->rank));
    for (int32_t k = 0; k < out->rank; ++k) {
      RT_CHECK_OR_RETURN_ERROR(k == d->axis || t->dims[k] == out->dims[k], kInvalidProgram,
                               "%s: input %lu dimension %d", op, static_cast<unsigned long>(i),
                               static_cast<int>(k));
    }
    axis_sum += t->dims[d->axis];
  }
  RT_CHECK_OR_RETURN_ERROR(axis_sum == out->dims[d->axis], kInvalidProgram,
                           "%s: inputs do not add up to the output along the axis", op);
  return Error::kOk;
}

Error ConcatenationEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataConcat*>(ctx.op_data);
  const ListView<TensorView*>& list = args[0]->tensor_list;
  const int8_t* inputs[kMaxConcatInputs];
  ShapeN shapes[kMaxConcatInputs];
  for (size_t i = 0; i < list.size; ++i) {
    const TensorView* t = list.At(i);
    inputs[i] = t->As<const int8_t>();
    shapes[i] = ToShape(*t);
  }
  return concatenation_s8(inputs, shapes, static_cast<int32_t>(list.size), d->axis, d->act_min,
                          d->act_max, args[4]->tensor->As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
