#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/activations_s16.h"
#include "runtime/kernels/reference/softmax_s8.h"

namespace boardlab::runtime::kernels {

// Args: in 0, beta 1 (Double; already folded into the multiplier), input_multiplier 2,
// input_left_shift 3, diff_min 4, output 5. int8, or int16 in 16x8 models: then the multiplier
// and shift rescale the difference to the exp table's steps (reference/activations_s16.h),
// diff_min is unused, and the two lookup tables are built here into persistent memory.
Error SoftmaxPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "softmax";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView *in, *out;
  const ScalarType type = QuantizedTypeOf(args, 0);
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 5, type, &out));
  auto* d = static_cast<OpDataSoftmax*>(ctx.op_data);
  double beta;
  RT_RETURN_IF_ERROR(DoubleArg(op, args, 1, &beta));
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &d->params.input_multiplier));
  RT_RETURN_IF_ERROR(IntArg(op, args, 3, &d->params.input_left_shift));
  RT_RETURN_IF_ERROR(IntArg(op, args, 4, &d->params.diff_min));
  RT_CHECK_OR_RETURN_ERROR(
      in->rank >= 1 && in->NumElements() == out->NumElements() && in->Dim(-1) > 0, kInvalidProgram,
      "%s: input and output sizes differ", op);
  d->depth = in->Dim(-1);
  d->rows = static_cast<int32_t>(in->NumElements() / d->depth);
  if (type == ScalarType::kShort) {
    // MultiplyByQuantizedMultiplier's shift range (a left shift up to 30).
    RT_CHECK_OR_RETURN_ERROR(d->params.input_left_shift >= -31 && d->params.input_left_shift <= 30,
                             kInvalidProgram, "%s: input_left_shift %d", op,
                             static_cast<int>(d->params.input_left_shift));
    RT_CHECK_OR_RETURN_ERROR(ctx.persistent != nullptr, kMemoryAllocationFailed,
                             "%s: no persistent memory for the int16 tables", op);
    auto* tables = static_cast<Softmax16Tables*>(
        ctx.persistent->Allocate(sizeof(Softmax16Tables), alignof(Softmax16Tables)));
    RT_CHECK_OR_RETURN_ERROR(tables != nullptr, kMemoryAllocationFailed,
                             "%s: %lu bytes for the int16 tables", op,
                             static_cast<unsigned long>(sizeof(Softmax16Tables)));
    BuildSoftmax16Tables(tables);
    d->tables = tables;
    return Error::kOk;
  }
  RT_CHECK_OR_RETURN_ERROR(d->params.input_left_shift >= 0 && d->params.input_left_shift < 31,
                           kInvalidProgram, "%s: input_left_shift %d", op,
                           static_cast<int>(d->params.input_left_shift));
  return Error::kOk;
}

Error SoftmaxEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSoftmax*>(ctx.op_data);
  if (d->tables != nullptr) {
    const Softmax16Params p{d->params.input_multiplier, d->params.input_left_shift, d->tables};
    return softmax_s16(p, d->rows, d->depth, args[0]->tensor->As<const int16_t>(),
                       args[5]->tensor->As<int16_t>());
  }
  return softmax_s8(d->params, d->rows, d->depth, args[0]->tensor->As<const int8_t>(),
                    args[5]->tensor->As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
