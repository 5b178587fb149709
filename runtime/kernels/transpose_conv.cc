// TRANSPOSE_CONV int8 (reference/transpose_conv_s8.h). Args: output_shape 0 (int32 [4]),
// weights 1, input 2, bias 3 (int32 [O] or Null), stride 4 IntList[h,w], padding 5
// IntList[t,l,b,r], input_zp 6, output_zp 7, multipliers 8, shifts 9 (int32 [O or 1]),
// act_min 10, act_max 11, output 12.

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/transpose_conv_s8.h"

namespace boardlab::runtime::kernels {
namespace {

Error ReadGeometry(const char* op, Args args, ConvParams& p) {
  int32_t v2[2], v4[4];
  RT_RETURN_IF_ERROR(IntListArg(op, args, 4, 2, v2, 2));
  p.stride_h = v2[0];
  p.stride_w = v2[1];
  RT_RETURN_IF_ERROR(IntListArg(op, args, 5, 4, v4, 4));
  p.pad_top = v4[0];
  p.pad_left = v4[1];
  RT_CHECK_OR_RETURN_ERROR(p.stride_h > 0 && p.stride_w > 0 && p.pad_top >= 0 && p.pad_left >= 0,
                           kInvalidProgram, "%s: bad stride or padding", op);
  int32_t in_zp, out_zp;
  RT_RETURN_IF_ERROR(IntArg(op, args, 6, &in_zp));
  RT_RETURN_IF_ERROR(IntArg(op, args, 7, &out_zp));
  p.input_offset = -in_zp;
  p.out.output_offset = out_zp;
  RT_RETURN_IF_ERROR(IntArg(op, args, 10, &p.out.act_min));
  RT_RETURN_IF_ERROR(IntArg(op, args, 11, &p.out.act_max));
  RT_CHECK_OR_RETURN_ERROR(
      -128 <= p.out.act_min && p.out.act_min <= p.out.act_max && p.out.act_max <= 127,
      kInvalidProgram, "%s: bad activation range", op);
  return Error::kOk;
}

}  // namespace

Error TransposeConvPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "transpose_conv";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 13));
  TensorView *w, *in, *bias, *mult, *shift, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, ScalarType::kChar, &w));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 2, ScalarType::kChar, &in));
  RT_RETURN_IF_ERROR(OptionalTensorArg(op, args, 3, ScalarType::kInt, &bias));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 8, ScalarType::kInt, &mult));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 9, ScalarType::kInt, &shift));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 12, ScalarType::kChar, &out));
  RT_CHECK_OR_RETURN_ERROR(in->rank == 4 && w->rank == 4 && out->rank == 4 &&
                               in->dims[0] == out->dims[0] && in->dims[3] == w->dims[3] &&
                               w->dims[0] == out->dims[3],
                           kInvalidProgram, "%s: input, weights and output do not match", op);
  auto* d = static_cast<OpDataConv*>(ctx.op_data);
  RT_RETURN_IF_ERROR(ReadGeometry(op, args, d->params.conv));
  const int32_t channels = out->dims[3];
  RT_CHECK_OR_RETURN_ERROR(mult->rank == 1 && shift->rank == 1 && mult->dims[0] == shift->dims[0] &&
                               (mult->dims[0] == 1 || mult->dims[0] == channels) &&
                               mult->data != nullptr && shift->data != nullptr,
                           kInvalidProgram, "%s: %d multipliers for %d output channels", op,
                           static_cast<int>(mult->dims[0]), static_cast<int>(channels));
  d->quant = ChannelQuant{mult->As<const int32_t>(), shift->As<const int32_t>(), mult->dims[0]};
  RT_CHECK_OR_RETURN_ERROR(bias == nullptr || (bias->rank == 1 && bias->dims[0] == channels),
                           kInvalidProgram, "%s: bias must be [%d]", op,
                           static_cast<int>(channels));
  return Error::kOk;
}

Error TransposeConvEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataConv*>(ctx.op_data);
  const TensorView& w = *args[1]->tensor;
  const TensorView& in = *args[2]->tensor;
  const int32_t* bias = args[3]->is_tensor() ? args[3]->tensor->As<const int32_t>() : nullptr;
  TensorView& out = *args[12]->tensor;
  return transpose_conv_s8(d->params.conv, d->quant, ToDims4(in), in.As<const int8_t>(), ToDims4(w),
                           w.As<const int8_t>(), bias, ToDims4(out), out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
