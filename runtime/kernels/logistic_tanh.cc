#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/activations_s8.h"

namespace boardlab::runtime::kernels {
namespace {

// Args: in 0, input_zp 1, input_multiplier 2, input_left_shift 3, input_range_radius 4, out 5.
Error PrepareSigmoid(const char* op, KernelContext& ctx, Args args) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kChar, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 5, ScalarType::kChar, &out));
  RT_CHECK_OR_RETURN_ERROR(in->NumElements() == out->NumElements(), kInvalidProgram,
                           "%s: input and output sizes differ", op);
  SigmoidParams& p = static_cast<OpDataSigmoid*>(ctx.op_data)->params;
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &p.input_zero_point));
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &p.input_multiplier));
  RT_RETURN_IF_ERROR(IntArg(op, args, 3, &p.input_left_shift));
  RT_RETURN_IF_ERROR(IntArg(op, args, 4, &p.input_range_radius));
  RT_CHECK_OR_RETURN_ERROR(p.input_left_shift <= 30 && p.input_left_shift >= -31, kInvalidProgram,
                           "%s: input_left_shift %d", op, static_cast<int>(p.input_left_shift));
  return Error::kOk;
}

}  // namespace

Error LogisticPrepare(KernelContext& ctx, Args args) {
  return PrepareSigmoid("logistic", ctx, args);
}

Error LogisticEval(KernelContext& ctx, Args args) {
  return logistic_s8(static_cast<const OpDataSigmoid*>(ctx.op_data)->params,
                     args[0]->tensor->NumElements(), args[0]->tensor->As<const int8_t>(),
                     args[5]->tensor->As<int8_t>());
}

Error TanhPrepare(KernelContext& ctx, Args args) { return PrepareSigmoid("tanh", ctx, args); }

Error TanhEval(KernelContext& ctx, Args args) {
  return tanh_s8(static_cast<const OpDataSigmoid*>(ctx.op_data)->params,
                 args[0]->tensor->NumElements(), args[0]->tensor->As<const int8_t>(),
                 args[5]->tensor->As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
