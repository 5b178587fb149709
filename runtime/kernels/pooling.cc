#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/pooling_s8.h"

namespace boardlab::runtime::kernels {
namespace {

// Args: in 0, stride 1, padding 2, filter 3, act_min 4, act_max 5, then for L2_POOL_2D the
// activation code 6; the output last. `type` is the element type of input and output.
Error PreparePool(const char* op, Args args, PoolParams& p, ScalarType type, size_t count = 7) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, count));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, count - 1, type, &out));
  RT_CHECK_OR_RETURN_ERROR(
      in->rank == 4 && out->rank == 4 && in->dims[0] == out->dims[0] && in->dims[3] == out->dims[3],
      kInvalidProgram, "%s: input and output must be NHWC of equal N, C", op);
  int32_t v2[2], v4[4];
  RT_RETURN_IF_ERROR(IntListArg(op, args, 1, 2, v2, 2));
  p.stride_h = v2[0];
  p.stride_w = v2[1];
  RT_RETURN_IF_ERROR(IntListArg(op, args, 2, 4, v4, 4));
  p.pad_top = v4[0];
  p.pad_left = v4[1];
  RT_RETURN_IF_ERROR(IntListArg(op, args, 3, 2, v2, 2));
  p.filter_h = v2[0];
  p.filter_w = v2[1];
  RT_RETURN_IF_ERROR(IntArg(op, args, 4, &p.act_min));
  RT_RETURN_IF_ERROR(IntArg(op, args, 5, &p.act_max));
  RT_CHECK_OR_RETURN_ERROR(p.stride_h > 0 && p.stride_w > 0 && p.filter_h > 0 && p.filter_w > 0 &&
                               p.pad_top >= 0 && p.pad_left >= 0 && p.pad_top < p.filter_h &&
                               p.pad_left < p.filter_w,
                           kInvalidProgram, "%s: bad stride, filter or padding", op);
  RT_CHECK_OR_RETURN_ERROR(
      type == ScalarType::kFloat ||
          ActivationRangeFits(type == ScalarType::kShort, p.act_min, p.act_max),
      kInvalidProgram, "%s: bad activation range", op);
  return Error::kOk;
}

}  // namespace

// AVERAGE_POOL_2D and MAX_POOL_2D take int8, or int16 in 16x8 models.
Error AveragePool2DPrepare(KernelContext& ctx, Args args) {
  return PreparePool("average_pool_2d", args, static_cast<OpDataPool*>(ctx.op_data)->params,
                     QuantizedTypeOf(args, 0));
}

Error AveragePool2DEval(KernelContext& ctx, Args args) {
  const PoolParams& p = static_cast<const OpDataPool*>(ctx.op_data)->params;
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *args[6]->tensor;
  if (in.type == ScalarType::kShort) {
    return avgpool_s16(p, ToDims4(in), in.As<const int16_t>(), ToDims4(out), out.As<int16_t>());
  }
  return avgpool_s8(p, ToDims4(in), in.As<const int8_t>(), ToDims4(out), out.As<int8_t>());
}

Error MaxPool2DPrepare(KernelContext& ctx, Args args) {
  return PreparePool("max_pool_2d", args, static_cast<OpDataPool*>(ctx.op_data)->params,
                     QuantizedTypeOf(args, 0));
}

Error MaxPool2DEval(KernelContext& ctx, Args args) {
  const PoolParams& p = static_cast<const OpDataPool*>(ctx.op_data)->params;
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *args[6]->tensor;
  if (in.type == ScalarType::kShort) {
    return maxpool_s16(p, ToDims4(in), in.As<const int16_t>(), ToDims4(out), out.As<int16_t>());
  }
  return maxpool_s8(p, ToDims4(in), in.As<const int8_t>(), ToDims4(out), out.As<int8_t>());
}

// L2_POOL_2D is float32 in TFLite Micro: the int8 range (args 4, 5) is unused, the activation
// code (arg 6) gives the float clamp.
Error L2Pool2DPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "l2_pool_2d";
  auto* d = static_cast<OpDataL2Pool*>(ctx.op_data);
  RT_RETURN_IF_ERROR(PreparePool(op, args, d->geometry, ScalarType::kFloat, 8));
  int32_t activation = 0;
  RT_RETURN_IF_ERROR(IntArg(op, args, 6, &activation));
  ActivationRange(activation, &d->act_min, &d->act_max);
  return Error::kOk;
}

Error L2Pool2DEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataL2Pool*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  const TensorView& out = *args[7]->tensor;
  return l2pool_f32(d->geometry, d->act_min, d->act_max, ToDims4(in), in.As<const float>(),
                    ToDims4(out), out.As<float>());
}

}  // namespace boardlab::runtime::kernels
