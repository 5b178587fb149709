#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/activations_s16.h"
#include "runtime/kernels/reference/activations_s8.h"

namespace boardlab::runtime::kernels {
namespace {

// Args: in 0, input_zp 1, input_multiplier 2, input_left_shift 3, input_range_radius 4, out 5.
// int8, or int16 in 16x8 models: then args 1 and 4 are 0 and args 2 and 3 hold TFLite Micro's
// int16 rescale (reference/activations_s16.h).
Error PrepareSigmoid(const char* op, KernelContext& ctx, Args args) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView *in, *out;
  auto* d = static_cast<OpDataSigmoid*>(ctx.op_data);
  const ScalarType type = QuantizedTypeOf(args, 0);
  d->int16 = type == ScalarType::kShort;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 5, type, &out));
  RT_CHECK_OR_RETURN_ERROR(in->NumElements() == out->NumElements(), kInvalidProgram,
                           "%s: input and output sizes differ", op);
  SigmoidParams& p = d->params;
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &p.input_zero_point));
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &p.input_multiplier));
  RT_RETURN_IF_ERROR(IntArg(op, args, 3, &p.input_left_shift));
  RT_RETURN_IF_ERROR(IntArg(op, args, 4, &p.input_range_radius));
  if (d->int16) {
    // The int16 rescale multiplies an int16 by at most 2^15 and shifts right by [0, 31].
    RT_CHECK_OR_RETURN_ERROR(p.input_zero_point == 0 && p.input_multiplier >= 0 &&
                                 p.input_multiplier <= 32767 && p.input_left_shift >= 0 &&
                                 p.input_left_shift <= 31,
                             kInvalidProgram, "%s: bad int16 input rescale", op);
    return Error::kOk;
  }
  RT_CHECK_OR_RETURN_ERROR(p.input_left_shift <= 30 && p.input_left_shift >= -31, kInvalidProgram,
                           "%s: input_left_shift %d", op, static_cast<int>(p.input_left_shift));
  return Error::kOk;
}

Sigmoid16Params Params16(const SigmoidParams& p) {
  return {p.input_multiplier, p.input_left_shift};
}

}  // namespace

Error LogisticPrepare(KernelContext& ctx, Args args) {
  return PrepareSigmoid("logistic", ctx, args);
}

Error LogisticEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSigmoid*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  if (d->int16) {
    return logistic_s16(Params16(d->params), in.NumElements(), in.As<const int16_t>(),
                        args[5]->tensor->As<int16_t>());
  }
  return logistic_s8(d->params, in.NumElements(), in.As<const int8_t>(),
                     args[5]->tensor->As<int8_t>());
}

Error TanhPrepare(KernelContext& ctx, Args args) { return PrepareSigmoid("tanh", ctx, args); }

Error TanhEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSigmoid*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  if (d->int16) {
    return tanh_s16(Params16(d->params), in.NumElements(), in.As<const int16_t>(),
                    args[5]->tensor->As<int16_t>());
  }
  return tanh_s8(d->params, in.NumElements(), in.As<const int8_t>(), args[5]->tensor->As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
