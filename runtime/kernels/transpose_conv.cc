// TRANSPOSE_CONV int8 (reference/transpose_conv_s8.h) and 16x8 (reference/conv_s16.h). Args:
// output_shape 0 (int32 [4]), weights 1, input 2, bias 3 (int32 [O], int64 in 16x8, or Null),
// stride 4 IntList[h,w], padding 5 IntList[t,l,b,r], input_zp 6, output_zp 7, multipliers 8, shifts
// 9 (int32 [O or 1]), act_min 10, act_max 11, output 12.

#include "runtime/kernels/conv_common.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/conv_s16.h"
#include "runtime/kernels/reference/transpose_conv_s8.h"

namespace boardlab::runtime::kernels {

Error TransposeConvPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "transpose_conv";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 13));
  TensorView *w, *in, *bias, *out;
  auto* d = static_cast<OpDataConv*>(ctx.op_data);
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, ScalarType::kChar, &w));
  RT_RETURN_IF_ERROR(ConvActivationArgs(op, args, 2, 12, &in, &out, &d->int16));
  RT_RETURN_IF_ERROR(ConvBiasArg(op, args, 3, d->int16, /*int32_in_16x8=*/false, &bias, &d->acc64));
  RT_CHECK_OR_RETURN_ERROR(in->rank == 4 && w->rank == 4 && out->rank == 4 &&
                               in->dims[0] == out->dims[0] && in->dims[3] == w->dims[3] &&
                               w->dims[0] == out->dims[3],
                           kInvalidProgram, "%s: input, weights and output do not match", op);
  // 16x8 always accumulates in int64 (TFLite Micro's int64 scratch), with or without a bias.
  d->acc64 = d->int16;
  ConvParams& p = d->params.conv;
  RT_RETURN_IF_ERROR(ReadStrideAndPadding(op, args, 4, p));
  RT_CHECK_OR_RETURN_ERROR(p.stride_h > 0 && p.stride_w > 0 && p.pad_top >= 0 && p.pad_left >= 0,
                           kInvalidProgram, "%s: bad stride or padding", op);
  return PrepareConvOutputStage(op, args, 6, out->dims[3], bias, *d);
}

Error TransposeConvEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataConv*>(ctx.op_data);
  const TensorView& w = *args[1]->tensor;
  const TensorView& in = *args[2]->tensor;
  TensorView& out = *args[12]->tensor;
  if (d->int16) {
    const int64_t* bias64 = args[3]->is_tensor() ? args[3]->tensor->As<const int64_t>() : nullptr;
    return transpose_conv_s16(d->params.conv, d->quant, ToDims4(in), in.As<const int16_t>(),
                              ToDims4(w), w.As<const int8_t>(), bias64, ToDims4(out),
                              out.As<int16_t>());
  }
  const int32_t* bias = args[3]->is_tensor() ? args[3]->tensor->As<const int32_t>() : nullptr;
  return transpose_conv_s8(d->params.conv, d->quant, ToDims4(in), in.As<const int8_t>(), ToDims4(w),
                           w.As<const int8_t>(), bias, ToDims4(out), out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
