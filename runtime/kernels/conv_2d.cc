#include "runtime/kernels/conv_common.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/conv2d_s8.h"
#include "runtime/kernels/reference/conv_s16.h"

namespace boardlab::runtime::kernels {

Error ReadStrideAndPadding(const char* op, Args args, size_t first, ConvParams& p) {
  int32_t stride[2], padding[4];
  RT_RETURN_IF_ERROR(IntListArg(op, args, first, 2, stride, 2));
  p.stride_h = stride[0];
  p.stride_w = stride[1];
  RT_RETURN_IF_ERROR(IntListArg(op, args, first + 1, 4, padding, 4));
  p.pad_top = padding[0];
  p.pad_left = padding[1];
  return Error::kOk;
}

Error ConvActivationArgs(const char* op, Args args, size_t in_index, size_t out_index,
                         TensorView** in, TensorView** out, bool* int16) {
  *int16 = IsTensorOf(args[in_index], ScalarType::kShort);
  const ScalarType type = *int16 ? ScalarType::kShort : ScalarType::kChar;
  RT_RETURN_IF_ERROR(TensorArg(op, args, in_index, type, in));
  return TensorArg(op, args, out_index, type, out);
}

Error ConvBiasArg(const char* op, Args args, size_t i, bool int16, bool int32_in_16x8,
                  TensorView** bias, bool* bias64) {
  *bias64 = int16 && IsTensorOf(args[i], ScalarType::kLong);
  if (*bias64) return TensorArg(op, args, i, ScalarType::kLong, bias);
  RT_CHECK_OR_RETURN_ERROR(!int16 || int32_in_16x8 || args[i]->tag == ValueTag::kNone,
                           kInvalidProgram, "%s: a 16x8 bias must be int64", op);
  return OptionalTensorArg(op, args, i, ScalarType::kInt, bias);
}

Error PrepareConvOutputStage(const char* op, Args args, size_t first, int32_t channels,
                             const TensorView* bias, OpDataConv& d) {
  ConvParams& p = d.params.conv;
  int32_t in_zp, out_zp;
  RT_RETURN_IF_ERROR(IntArg(op, args, first, &in_zp));
  RT_RETURN_IF_ERROR(IntArg(op, args, first + 1, &out_zp));
  p.input_offset = -in_zp;
  p.out.output_offset = out_zp;
  TensorView *mult, *shift;
  RT_RETURN_IF_ERROR(TensorArg(op, args, first + 2, ScalarType::kInt, &mult));
  RT_RETURN_IF_ERROR(TensorArg(op, args, first + 3, ScalarType::kInt, &shift));
  RT_RETURN_IF_ERROR(IntArg(op, args, first + 4, &p.out.act_min));
  RT_RETURN_IF_ERROR(IntArg(op, args, first + 5, &p.out.act_max));
  const int32_t lo = d.int16 ? -32768 : -128, hi = d.int16 ? 32767 : 127;
  RT_CHECK_OR_RETURN_ERROR(
      lo <= p.out.act_min && p.out.act_min <= p.out.act_max && p.out.act_max <= hi, kInvalidProgram,
      "%s: bad activation range", op);
  RT_CHECK_OR_RETURN_ERROR(!d.int16 || (in_zp == 0 && out_zp == 0), kInvalidProgram,
                           "%s: 16x8 zero points must be 0", op);
  RT_CHECK_OR_RETURN_ERROR(mult->rank == 1 && shift->rank == 1 && mult->dims[0] == shift->dims[0] &&
                               (mult->dims[0] == 1 || mult->dims[0] == channels) &&
                               mult->data != nullptr && shift->data != nullptr,
                           kInvalidProgram, "%s: %d multipliers for %d output channels", op,
                           static_cast<int>(mult->dims[0]), static_cast<int>(channels));
  d.quant = ChannelQuant{mult->As<const int32_t>(), shift->As<const int32_t>(), mult->dims[0]};
  RT_CHECK_OR_RETURN_ERROR(!d.acc64 || ShiftsFitRequantize64(d.quant), kInvalidProgram,
                           "%s: a shift is outside [-31, 7], the int64 requantization's range", op);
  RT_CHECK_OR_RETURN_ERROR(bias == nullptr || (bias->rank == 1 && bias->dims[0] == channels),
                           kInvalidProgram, "%s: bias must be [%d]", op,
                           static_cast<int>(channels));
  return Error::kOk;
}

Error PrepareConvLike(const char* op, KernelContext& ctx, Args args, bool depthwise) {
  const size_t extra = depthwise ? 1 : 0;
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 13 + extra));
  TensorView *in, *w, *bias, *out;
  auto* d = static_cast<OpDataConv*>(ctx.op_data);
  RT_RETURN_IF_ERROR(ConvActivationArgs(op, args, 0, 12 + extra, &in, &out, &d->int16));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, ScalarType::kChar, &w));
  RT_RETURN_IF_ERROR(
      ConvBiasArg(op, args, 2, d->int16, /*int32_in_16x8=*/!depthwise, &bias, &d->acc64));
  // TFLite Micro's 16x8 depthwise accumulates in int64 with or without a bias.
  if (depthwise) d->acc64 = d->int16;
  RT_CHECK_OR_RETURN_ERROR(in->rank == 4 && w->rank == 4 && out->rank == 4, kInvalidProgram,
                           "%s: input, weights and output must be 4-D", op);
  ConvParams& p = d->params.conv;
  RT_RETURN_IF_ERROR(ReadStrideAndPadding(op, args, 3, p));
  int32_t dilation[2];
  RT_RETURN_IF_ERROR(IntListArg(op, args, 5, 2, dilation, 2));
  p.dilation_h = dilation[0];
  p.dilation_w = dilation[1];
  RT_CHECK_OR_RETURN_ERROR(p.stride_h > 0 && p.stride_w > 0 && p.dilation_h > 0 &&
                               p.dilation_w > 0 && p.pad_top >= 0 && p.pad_left >= 0,
                           kInvalidProgram, "%s: bad stride, dilation or padding", op);
  d->params.depth_multiplier = 1;
  if (depthwise) RT_RETURN_IF_ERROR(IntArg(op, args, 6, &d->params.depth_multiplier));
  const int32_t channels = out->dims[3];
  RT_RETURN_IF_ERROR(PrepareConvOutputStage(op, args, 6 + extra, channels, bias, *d));
  RT_CHECK_OR_RETURN_ERROR(in->dims[0] == out->dims[0], kInvalidProgram, "%s: batch mismatch", op);
  if (depthwise) {
    RT_CHECK_OR_RETURN_ERROR(w->dims[0] == 1 && w->dims[3] == channels &&
                                 channels == in->dims[3] * d->params.depth_multiplier,
                             kInvalidProgram,
                             "%s: weights [1,H,W,%d] for %d input channels x multiplier %d", op,
                             static_cast<int>(channels), static_cast<int>(in->dims[3]),
                             static_cast<int>(d->params.depth_multiplier));
  } else {
    RT_CHECK_OR_RETURN_ERROR(
        w->dims[0] == channels && w->dims[3] > 0 && in->dims[3] % w->dims[3] == 0 &&
            channels % (in->dims[3] / w->dims[3]) == 0,
        kInvalidProgram, "%s: weights [%d,H,W,%d] do not fit input channels %d", op,
        static_cast<int>(w->dims[0]), static_cast<int>(w->dims[3]), static_cast<int>(in->dims[3]));
  }
  return Error::kOk;
}

Error Conv2DPrepare(KernelContext& ctx, Args args) {
  return PrepareConvLike("conv_2d", ctx, args, /*depthwise=*/false);
}

namespace {

// CONV_2D 16x8: int64 accumulator with an int64 bias, int32 with an int32 bias or none (as
// TFLite Micro chooses).
Error Conv2DEval16x8(const OpDataConv& d, Args args) {
  const TensorView& in = *args[0]->tensor;
  const TensorView& w = *args[1]->tensor;
  TensorView& out = *args[12]->tensor;
  const bool has_bias = args[2]->is_tensor();
  if (d.acc64) {
    return conv2d_s16(d.params.conv, d.quant, ToDims4(in), in.As<const int16_t>(), ToDims4(w),
                      w.As<const int8_t>(), args[2]->tensor->As<const int64_t>(), ToDims4(out),
                      out.As<int16_t>());
  }
  return conv2d_s16_acc32(
      d.params.conv, d.quant, ToDims4(in), in.As<const int16_t>(), ToDims4(w), w.As<const int8_t>(),
      has_bias ? args[2]->tensor->As<const int32_t>() : nullptr, ToDims4(out), out.As<int16_t>());
}

}  // namespace

Error Conv2DEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataConv*>(ctx.op_data);
  if (d->int16) return Conv2DEval16x8(*d, args);
  const TensorView& in = *args[0]->tensor;
  const TensorView& w = *args[1]->tensor;
  const int32_t* bias = args[2]->is_tensor() ? args[2]->tensor->As<const int32_t>() : nullptr;
  const TensorView& out = *args[12]->tensor;
  const Dims4 in_dims = ToDims4(in), w_dims = ToDims4(w);
  // The widened input patch of the fast path (and, where it exists and the temp arena has room,
  // the widened filter of the packed path), from the per-kernel temp arena; without it (a small
  // temp arena) the kernel runs its plain loop.
  size_t bytes = conv2d_s8_get_buffer_size_packed(in_dims, w_dims);
  void* scratch = bytes > 0 && ctx.temp != nullptr ? ctx.temp->Allocate(bytes, 16) : nullptr;
  if (scratch == nullptr) {
    bytes = conv2d_s8_get_buffer_size(in_dims, w_dims);
    scratch = bytes > 0 && ctx.temp != nullptr ? ctx.temp->Allocate(bytes, 16) : nullptr;
  }
  return conv2d_s8(d->params.conv, d->quant, in_dims, in.As<const int8_t>(), w_dims,
                   w.As<const int8_t>(), bias, ToDims4(out), out.As<int8_t>(), scratch,
                   scratch != nullptr ? bytes : 0);
}

}  // namespace boardlab::runtime::kernels
