#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/softmax_s8.h"

namespace boardlab::runtime::kernels {

// Args: in 0, beta 1 (Double; already folded into the multiplier), input_multiplier 2,
// input_left_shift 3, diff_min 4, output 5.
Error SoftmaxPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "softmax";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kChar, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 5, ScalarType::kChar, &out));
  auto* d = static_cast<OpDataSoftmax*>(ctx.op_data);
  double beta;
  RT_RETURN_IF_ERROR(DoubleArg(op, args, 1, &beta));
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &d->params.input_multiplier));
  RT_RETURN_IF_ERROR(IntArg(op, args, 3, &d->params.input_left_shift));
  RT_RETURN_IF_ERROR(IntArg(op, args, 4, &d->params.diff_min));
  RT_CHECK_OR_RETURN_ERROR(d->params.input_left_shift >= 0 && d->params.input_left_shift < 31,
                           kInvalidProgram, "%s: input_left_shift %d", op,
                           static_cast<int>(d->params.input_left_shift));
  RT_CHECK_OR_RETURN_ERROR(
      in->rank >= 1 && in->NumElements() == out->NumElements() && in->Dim(-1) > 0, kInvalidProgram,
      "%s: input and output sizes differ", op);
  d->depth = in->Dim(-1);
  d->rows = static_cast<int32_t>(in->NumElements() / d->depth);
  return Error::kOk;
}

Error SoftmaxEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSoftmax*>(ctx.op_data);
  return softmax_s8(d->params, d->rows, d->depth, args[0]->tensor->As<const int8_t>(),
                    args[5]->tensor->As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
