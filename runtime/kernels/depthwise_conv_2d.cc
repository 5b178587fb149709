#include "runtime/kernels/conv_common.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/conv_s16.h"
#include "runtime/kernels/reference/depthwise_conv2d_s8.h"

namespace boardlab::runtime::kernels {

Error DepthwiseConv2DPrepare(KernelContext& ctx, Args args) {
  return PrepareConvLike("depthwise_conv_2d", ctx, args, /*depthwise=*/true);
}

Error DepthwiseConv2DEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataConv*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  const TensorView& w = *args[1]->tensor;
  if (d->int16) {
    const int64_t* bias64 = args[2]->is_tensor() ? args[2]->tensor->As<const int64_t>() : nullptr;
    return depthwise_conv2d_s16(d->params, d->quant, ToDims4(in), in.As<const int16_t>(),
                                ToDims4(w), w.As<const int8_t>(), bias64,
                                ToDims4(*args[13]->tensor), args[13]->tensor->As<int16_t>());
  }
  const int32_t* bias = args[2]->is_tensor() ? args[2]->tensor->As<const int32_t>() : nullptr;
  const TensorView& out = *args[13]->tensor;
  const Dims4 out_dims = ToDims4(out);
  // One int32 accumulator per output channel, from the per-kernel temp arena; on Cortex-M the
  // paired path's widened rows instead when the arena has room for them.
  const Dims4 w_dims = ToDims4(w);
  size_t bytes = depthwise_conv2d_s8_get_buffer_size_paired(d->params, w_dims, out_dims);
  void* scratch = bytes > 0 && ctx.temp != nullptr ? ctx.temp->Allocate(bytes, 8) : nullptr;
  if (scratch == nullptr) {
    bytes = depthwise_conv2d_s8_get_buffer_size(out_dims);
    scratch = ctx.temp != nullptr ? ctx.temp->Allocate(bytes, alignof(int32_t)) : nullptr;
  }
  RT_CHECK_OR_RETURN_ERROR(scratch != nullptr, kMemoryAllocationFailed,
                           "depthwise_conv_2d: %lu bytes of temp memory unavailable",
                           static_cast<unsigned long>(bytes));
  return depthwise_conv2d_s8(d->params, d->quant, ToDims4(in), in.As<const int8_t>(), w_dims,
                             w.As<const int8_t>(), bias, out_dims, out.As<int8_t>(), scratch,
                             bytes);
}

}  // namespace boardlab::runtime::kernels
