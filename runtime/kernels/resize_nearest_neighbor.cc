#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/data_movement_s8.h"
#include "runtime/kernels/reference/normalization.h"

namespace boardlab::runtime::kernels {

namespace {

// Args of both resizes: in 0, size 1 (int32 [2]), align_corners 2, half_pixel_centers 3,
// zero_points 4, scales 5, out 6. The output size is the output tensor's (the compiler resolved
// `size`). The values are int8, or int16 for RESIZE_NEAREST_NEIGHBOR in 16x8 models (`type`).
Error PrepareResize(const char* op, KernelContext& ctx, Args args,
                    ScalarType type = ScalarType::kChar) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 7));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 6, type, &out));
  RT_CHECK_OR_RETURN_ERROR(in->rank == 4 && out->rank == 4 && in->dims[0] == out->dims[0] &&
                               in->dims[3] == out->dims[3] && out->dims[1] > 0 && out->dims[2] > 0,
                           kInvalidProgram, "%s: input and output must be NHWC of equal N, C", op);
  auto* d = static_cast<OpDataResize*>(ctx.op_data);
  RT_RETURN_IF_ERROR(BoolArg(op, args, 2, &d->align_corners));
  RT_RETURN_IF_ERROR(BoolArg(op, args, 3, &d->half_pixel_centers));
  return Error::kOk;
}

}  // namespace

Error ResizeNearestNeighborPrepare(KernelContext& ctx, Args args) {
  return PrepareResize("resize_nearest_neighbor", ctx, args, QuantizedTypeOf(args, 0));
}

Error ResizeNearestNeighborEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataResize*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  const TensorView& out = *args[6]->tensor;
  if (in.type == ScalarType::kShort) {
    return resize_nearest_neighbor_s16(ToDims4(in), in.As<const int16_t>(), ToDims4(out),
                                       d->align_corners, d->half_pixel_centers, out.As<int16_t>());
  }
  return resize_nearest_neighbor_s8(ToDims4(in), in.As<const int8_t>(), ToDims4(out),
                                    d->align_corners, d->half_pixel_centers, out.As<int8_t>());
}

// RESIZE_BILINEAR (TFLite Micro refuses align_corners with half_pixel_centers).
Error ResizeBilinearPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "resize_bilinear";
  RT_RETURN_IF_ERROR(PrepareResize(op, ctx, args));
  const auto* d = static_cast<const OpDataResize*>(ctx.op_data);
  RT_CHECK_OR_RETURN_ERROR(!(d->align_corners && d->half_pixel_centers), kInvalidProgram,
                           "%s: align_corners and half_pixel_centers together", op);
  return Error::kOk;
}

Error ResizeBilinearEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataResize*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  const TensorView& out = *args[6]->tensor;
  return resize_bilinear_s8(ToDims4(in), in.As<const int8_t>(), ToDims4(out), d->align_corners,
                            d->half_pixel_centers, out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
