#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/pooling_s8.h"

namespace boardlab::runtime::kernels {
namespace {

// Args: in 0, stride 1, padding 2, filter 3, act_min 4, act_max 5, output 6.
Error PreparePool(const char* op, KernelContext& ctx, Args args) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 7));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kChar, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 6, ScalarType::kChar, &out));
  RT_CHECK_OR_RETURN_ERROR(
      in->rank == 4 && out->rank == 4 && in->dims[0] == out->dims[0] && in->dims[3] == out->dims[3],
      kInvalidProgram, "%s: input and output must be NHWC of equal N, C", op);
  PoolParams& p = static_cast<OpDataPool*>(ctx.op_data)->params;
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
  RT_CHECK_OR_RETURN_ERROR(-128 <= p.act_min && p.act_min <= p.act_max && p.act_max <= 127,
                           kInvalidProgram, "%s: bad activation range", op);
  return Error::kOk;
}

}  // namespace

Error AveragePool2DPrepare(KernelContext& ctx, Args args) {
  return PreparePool("average_pool_2d", ctx, args);
}

Error AveragePool2DEval(KernelContext& ctx, Args args) {
  const TensorView& in = *args[0]->tensor;
  const TensorView& out = *args[6]->tensor;
  return avgpool_s8(static_cast<const OpDataPool*>(ctx.op_data)->params, ToDims4(in),
                    in.As<const int8_t>(), ToDims4(out), out.As<int8_t>());
}

Error MaxPool2DPrepare(KernelContext& ctx, Args args) {
  return PreparePool("max_pool_2d", ctx, args);
}

Error MaxPool2DEval(KernelContext& ctx, Args args) {
  const TensorView& in = *args[0]->tensor;
  const TensorView& out = *args[6]->tensor;
  return maxpool_s8(static_cast<const OpDataPool*>(ctx.op_data)->params, ToDims4(in),
                    in.As<const int8_t>(), ToDims4(out), out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
