#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/data_movement_s8.h"

namespace boardlab::runtime::kernels {
namespace {
constexpr size_t kMaxConcatInputs = 32;
}  // namespace

// Args: inputs 0 (TensorList), axis 1, act_min 2, act_max 3, out 4; int8, or int16 in 16x8
// models. The compiler passes no per-input quantization, so inputs are copied raw (TFLite Micro
// does the same for int8 and int16).
Error ConcatenationPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "concatenation";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView* out;
  const ScalarType type = QuantizedTypeOf(args, 4);
  RT_RETURN_IF_ERROR(TensorArg(op, args, 4, type, &out));
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
    RT_CHECK_OR_RETURN_ERROR(t != nullptr && t->type == type && t->rank == out->rank,
                             kInvalidProgram,
                             "%s: input %lu must be of the output's type and rank %d", op,
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
  RT_CHECK_OR_RETURN_ERROR(ActivationRangeFits(type == ScalarType::kShort, d->act_min, d->act_max),
                           kInvalidProgram, "%s: bad activation range", op);
  return Error::kOk;
}

namespace {

template <typename T>
void ListData(const ListView<TensorView*>& list, const T** inputs, ShapeN* shapes) {
  for (size_t i = 0; i < list.size; ++i) {
    inputs[i] = list.At(i)->As<const T>();
    shapes[i] = ToShape(*list.At(i));
  }
}

}  // namespace

Error ConcatenationEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataConcat*>(ctx.op_data);
  const ListView<TensorView*>& list = args[0]->tensor_list;
  const auto count = static_cast<int32_t>(list.size);
  ShapeN shapes[kMaxConcatInputs];
  TensorView& out = *args[4]->tensor;
  if (out.type == ScalarType::kShort) {
    const int16_t* inputs[kMaxConcatInputs];
    ListData(list, inputs, shapes);
    return concatenation_s16(inputs, shapes, count, d->axis, d->act_min, d->act_max,
                             out.As<int16_t>());
  }
  const int8_t* inputs[kMaxConcatInputs];
  ListData(list, inputs, shapes);
  return concatenation_s8(inputs, shapes, count, d->axis, d->act_min, d->act_max, out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
