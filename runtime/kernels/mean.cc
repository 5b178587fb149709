#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/mean_s8.h"

namespace boardlab::runtime::kernels {

// MEAN int8 or 16x8. Args: in 0, axes 1 (constant int32), keep_dims 2, zero_points 3, scales 4,
// out 5.
Error MeanPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "mean";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView *in, *out;
  const ScalarType type = QuantizedTypeOf(args, 0);
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 5, type, &out));
  RT_CHECK_OR_RETURN_ERROR(
      in->rank <= kMaxDims && IsIndexTensor(args[1]) && args[1]->tensor->NumElements() <= kMaxDims,
      kInvalidProgram, "%s: axes must be a constant index tensor", op);
  bool keep_dims;
  RT_RETURN_IF_ERROR(BoolArg(op, args, 2, &keep_dims));
  QuantLists q;
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
  RT_CHECK_OR_RETURN_ERROR(q.count == 3 && q.scale[0] > 0 && q.scale[2] > 0, kInvalidProgram,
                           "%s: input and output must be quantized", op);
  auto* d = static_cast<OpDataMean*>(ctx.op_data);
  d->num_axes = static_cast<int32_t>(args[1]->tensor->NumElements());
  int64_t kept = 1;
  bool reduced[kMaxDims] = {};
  for (int32_t i = 0; i < d->num_axes; ++i) {
    int64_t a = IndexAt(*args[1]->tensor, i);
    if (a < 0) a += in->rank;
    RT_CHECK_OR_RETURN_ERROR(a >= 0 && a < in->rank, kInvalidProgram, "%s: axis %lld", op,
                             static_cast<long long>(a));
    d->axes[i] = static_cast<int32_t>(a);
    reduced[a] = true;
  }
  for (int32_t i = 0; i < in->rank; ++i) {
    if (!reduced[i]) kept *= in->dims[i];
  }
  RT_CHECK_OR_RETURN_ERROR(
      out->NumElements() == kept, kInvalidProgram, "%s: output has %lld elements, expected %lld",
      op, static_cast<long long>(out->NumElements()), static_cast<long long>(kept));
  MeanParams& p = d->params;
  p.input_zero_point = q.zero_point[0];
  p.output_zero_point = q.zero_point[2];
  QuantizeMultiplier(q.scale[0] / q.scale[2], &p.multiplier, &p.shift);
  return Error::kOk;
}

Error MeanEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataMean*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  const TensorView& out = *args[5]->tensor;
  const size_t bytes = mean_s8_get_buffer_size(out.NumElements());
  void* scratch = ctx.temp != nullptr ? ctx.temp->Allocate(bytes, alignof(int32_t)) : nullptr;
  RT_CHECK_OR_RETURN_ERROR(scratch != nullptr, kMemoryAllocationFailed,
                           "mean: %lu bytes of temp memory unavailable",
                           static_cast<unsigned long>(bytes));
  if (in.type == ScalarType::kShort) {
    return mean_s16(d->params, ToShape(in), in.As<const int16_t>(), d->axes, d->num_axes,
                    out.As<int16_t>(), out.NumElements(), scratch, bytes);
  }
  return mean_s8(d->params, ToShape(in), in.As<const int8_t>(), d->axes, d->num_axes,
                 out.As<int8_t>(), out.NumElements(), scratch, bytes);
}

}  // namespace boardlab::runtime::kernels
