// SLICE and STRIDED_SLICE: begin/size/end/strides are constant index tensors resolved once at
// Prepare into (start, stride, count) per dimension, with TFLite's rules for masks, negative
// indices and clamping. The values are int8, or int16 in 16x8 models.

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/data_movement_s8.h"

namespace boardlab::runtime::kernels {
namespace {

int64_t Clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Checks that `out` has `count` elements once size-1 (shrunk) dimensions are ignored.
bool SameElementCount(const int32_t* dims, int32_t rank, const TensorView& out) {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) n *= dims[i];
  return n == out.NumElements();
}

}  // namespace

// Args: in 0, begin 1, size 2, zero_points 3, scales 4, out 5.
Error SlicePrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "slice";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView *in, *out;
  const ScalarType type = QuantizedTypeOf(args, 0);
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 5, type, &out));
  RT_CHECK_OR_RETURN_ERROR(
      in->rank <= kMaxDims && IsIndexTensor(args[1]) && IsIndexTensor(args[2]) &&
          args[1]->tensor->NumElements() == in->rank && args[2]->tensor->NumElements() == in->rank,
      kInvalidProgram, "%s: begin and size must be constant [%d] tensors", op,
      static_cast<int>(in->rank));
  auto* d = static_cast<OpDataSlice*>(ctx.op_data);
  for (int32_t i = 0; i < in->rank; ++i) {
    const int64_t b = IndexAt(*args[1]->tensor, i);
    int64_t s = IndexAt(*args[2]->tensor, i);
    if (s == -1) s = in->dims[i] - b;  // -1: to the end
    RT_CHECK_OR_RETURN_ERROR(b >= 0 && s >= 0 && b + s <= in->dims[i], kInvalidProgram,
                             "%s: slice of dimension %d out of range", op, static_cast<int>(i));
    d->start[i] = static_cast<int32_t>(b);
    d->stride[i] = 1;
    d->out_dims[i] = static_cast<int32_t>(s);
  }
  RT_CHECK_OR_RETURN_ERROR(SameElementCount(d->out_dims, in->rank, *out), kInvalidProgram,
                           "%s: output size does not match the slice", op);
  return Error::kOk;
}

// Args: in 0, begin 1, end 2, strides 3, begin_mask 4, end_mask 5, ellipsis_mask 6,
// new_axis_mask 7, shrink_axis_mask 8, offset 9, zero_points 10, scales 11, out 12.
Error StridedSlicePrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "strided_slice";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 13));
  TensorView *in, *out;
  const ScalarType type = QuantizedTypeOf(args, 0);
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 12, type, &out));
  const int32_t rank = in->rank;
  for (size_t i = 1; i <= 3; ++i) {
    RT_CHECK_OR_RETURN_ERROR(IsIndexTensor(args[i]) && args[i]->tensor->NumElements() == rank,
                             kInvalidProgram, "%s: argument %lu must be a constant [%d] tensor", op,
                             static_cast<unsigned long>(i), static_cast<int>(rank));
  }
  int32_t begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask;
  bool offset;
  RT_RETURN_IF_ERROR(IntArg(op, args, 4, &begin_mask));
  RT_RETURN_IF_ERROR(IntArg(op, args, 5, &end_mask));
  RT_RETURN_IF_ERROR(IntArg(op, args, 6, &ellipsis_mask));
  RT_RETURN_IF_ERROR(IntArg(op, args, 7, &new_axis_mask));
  RT_RETURN_IF_ERROR(IntArg(op, args, 8, &shrink_mask));
  RT_RETURN_IF_ERROR(BoolArg(op, args, 9, &offset));
  // TFLite Micro does not implement these two masks either.
  RT_CHECK_OR_RETURN_ERROR(ellipsis_mask == 0 && new_axis_mask == 0, kNotSupported,
                           "%s: ellipsis_mask and new_axis_mask are not supported", op);
  RT_CHECK_OR_RETURN_ERROR(rank <= kMaxDims, kNotSupported, "%s: rank %d", op,
                           static_cast<int>(rank));
  auto* d = static_cast<OpDataSlice*>(ctx.op_data);
  for (int32_t i = 0; i < rank; ++i) {
    const int64_t size = in->dims[i];
    const int64_t stride = IndexAt(*args[3]->tensor, i);
    RT_CHECK_OR_RETURN_ERROR(stride != 0, kInvalidProgram, "%s: stride 0 in dimension %d", op,
                             static_cast<int>(i));
    int64_t start = IndexAt(*args[1]->tensor, i);
    int64_t stop = IndexAt(*args[2]->tensor, i);
    if (offset) stop += start;  // `offset`: end is relative to begin
    if (begin_mask & (1 << i)) start = stride > 0 ? INT32_MIN : INT32_MAX;
    if (start < 0) start += size;
    start = stride > 0 ? Clamp64(start, 0, size) : Clamp64(start, -1, size - 1);
    if (shrink_mask & (1 << i)) {
      // A shrunk axis takes exactly the element at `start` whatever `end` says.
      stop = start + 1;
      RT_CHECK_OR_RETURN_ERROR(start >= 0 && start < size, kInvalidProgram,
                               "%s: shrink index out of range in dimension %d", op,
                               static_cast<int>(i));
      d->start[i] = static_cast<int32_t>(start);
      d->stride[i] = 1;
      d->out_dims[i] = 1;
      continue;
    }
    if (end_mask & (1 << i)) stop = stride > 0 ? INT32_MAX : INT32_MIN;
    if (stop < 0) stop += size;
    stop = stride > 0 ? Clamp64(stop, 0, size) : Clamp64(stop, -1, size - 1);
    int64_t count = stride > 0 ? (stop - start + stride - 1) / stride
                               : (start - stop + (-stride) - 1) / (-stride);
    if (count < 0) count = 0;
    d->start[i] = static_cast<int32_t>(count == 0 ? 0 : start);
    d->stride[i] = static_cast<int32_t>(stride);
    d->out_dims[i] = static_cast<int32_t>(count);
  }
  RT_CHECK_OR_RETURN_ERROR(SameElementCount(d->out_dims, rank, *out), kInvalidProgram,
                           "%s: output size does not match the slice", op);
  return Error::kOk;
}

namespace {
Error EvalSlice(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSlice*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *args[args.size() - 1]->tensor;
  if (in.type == ScalarType::kShort) {
    return strided_slice_s16(ToShape(in), in.As<const int16_t>(), d->start, d->stride, d->out_dims,
                             out.As<int16_t>());
  }
  return strided_slice_s8(ToShape(in), in.As<const int8_t>(), d->start, d->stride, d->out_dims,
                          out.As<int8_t>());
}
}  // namespace

Error SliceEval(KernelContext& ctx, Args args) { return EvalSlice(ctx, args); }
Error StridedSliceEval(KernelContext& ctx, Args args) { return EvalSlice(ctx, args); }

}  // namespace boardlab::runtime::kernels
