// PACK, UNPACK, SPLIT and SPLIT_V: one tensor joined from, or cut into, parts along an axis.
// The parts travel as one TensorList (PACK's inputs, the others' outputs). Prepare resolves the
// axis and each part's extent; Eval only copies.

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/data_movement.h"

namespace boardlab::runtime::kernels {
namespace {

constexpr size_t kMaxParts = OpDataSplit::kMaxParts;

// Fills d's outer/inner sizes for cutting `whole` along `axis`.
void SetOuterInner(const TensorView& whole, int32_t axis, OpDataSplit* d) {
  d->outer = 1;
  d->inner = 1;
  for (int32_t i = 0; i < axis; ++i) d->outer *= whole.dims[i];
  for (int32_t i = axis + 1; i < whole.rank; ++i) d->inner *= whole.dims[i];
}

// Checks that `part` is `whole` with `extent` along `axis` (kept) or without the axis (dropped).
bool IsPart(const TensorView& whole, const TensorView& part, int32_t axis, int64_t extent,
            bool keep_axis) {
  if (part.type != whole.type || part.rank != whole.rank - (keep_axis ? 0 : 1)) return false;
  for (int32_t d = 0, p = 0; d < whole.rank; ++d) {
    if (d == axis) {
      if (keep_axis && part.dims[p++] != extent) return false;
      continue;
    }
    if (part.dims[p++] != whole.dims[d]) return false;
  }
  return true;
}

// Checks every part against `whole` and records the extents.
Error PrepareParts(const char* op, const TensorView& whole, const ListView<TensorView*>& parts,
                   int32_t axis, bool keep_axis, const int64_t* extents, OpDataSplit* d) {
  RT_CHECK_OR_RETURN_ERROR(axis >= 0 && axis < whole.rank, kInvalidProgram, "%s: axis %d", op,
                           static_cast<int>(axis));
  int64_t total = 0;
  d->count = static_cast<int32_t>(parts.size);
  for (size_t i = 0; i < parts.size; ++i) {
    const int64_t extent = keep_axis ? extents[i] : 1;
    RT_CHECK_OR_RETURN_ERROR(extent > 0 && IsPart(whole, *parts.At(i), axis, extent, keep_axis),
                             kInvalidProgram, "%s: part %lu does not fit the axis", op,
                             static_cast<unsigned long>(i));
    d->extents[i] = extent;
    total += extent;
  }
  RT_CHECK_OR_RETURN_ERROR(total == whole.dims[axis], kInvalidProgram,
                           "%s: parts add up to %ld of %d", op, static_cast<long>(total),
                           static_cast<int>(whole.dims[axis]));
  SetOuterInner(whole, axis, d);
  return Error::kOk;
}

Error EvalSplit(const KernelContext& ctx, const TensorView& whole,
                const ListView<TensorView*>& parts) {
  const auto* d = static_cast<const OpDataSplit*>(ctx.op_data);
  void* outputs[kMaxParts];
  for (size_t i = 0; i < parts.size; ++i) outputs[i] = parts.At(i)->data;
  return split_elements(whole.data, d->extents, d->count, d->outer, d->inner,
                        ElementSize(whole.type), outputs);
}

Error AxisArg(const char* op, Args args, size_t i, int32_t rank, int32_t* axis) {
  RT_RETURN_IF_ERROR(IntArg(op, args, i, axis));
  if (*axis < 0) *axis += rank;
  return Error::kOk;
}

// A constant axis operand (one int32/int64 value), made non-negative for `rank`.
Error AxisTensorArg(const char* op, Args args, size_t i, int32_t rank, int32_t* axis) {
  RT_CHECK_OR_RETURN_ERROR(IsIndexTensor(args[i]) && args[i]->tensor->NumElements() == 1,
                           kInvalidProgram, "%s: axis must be one constant index", op);
  const int64_t a = IndexAt(*args[i]->tensor, 0);
  RT_CHECK_OR_RETURN_ERROR(a >= -rank && a < rank, kInvalidProgram, "%s: axis %ld", op,
                           static_cast<long>(a));
  *axis = static_cast<int32_t>(a < 0 ? a + rank : a);
  return Error::kOk;
}

}  // namespace

// Args: inputs 0 (TensorList), values_count 1, axis 2, zero_points 3, scales 4, out 5.
Error PackPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "pack";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  ListView<TensorView*> inputs;
  RT_RETURN_IF_ERROR(TensorListArg(op, args, 0, kMaxParts, &inputs));
  TensorView* out;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 5, &out));
  int32_t count, axis;
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &count));
  RT_RETURN_IF_ERROR(AxisArg(op, args, 2, out->rank, &axis));
  RT_CHECK_OR_RETURN_ERROR(count == static_cast<int32_t>(inputs.size), kInvalidProgram,
                           "%s: values_count %d for %lu inputs", op, static_cast<int>(count),
                           static_cast<unsigned long>(inputs.size));
  return PrepareParts(op, *out, inputs, axis, /*keep_axis=*/false, nullptr,
                      static_cast<OpDataSplit*>(ctx.op_data));
}

Error PackEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSplit*>(ctx.op_data);
  const ListView<TensorView*>& list = args[0]->tensor_list;
  const void* inputs[kMaxParts];
  for (size_t i = 0; i < list.size; ++i) inputs[i] = list.At(i)->data;
  const TensorView& out = *args[5]->tensor;
  return join_elements(inputs, d->extents, d->count, d->outer, d->inner, ElementSize(out.type),
                       out.data);
}

// Args: in 0, num 1, axis 2, zero_points 3, scales 4, outputs 5 (TensorList).
Error UnpackPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "unpack";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView* in;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &in));
  ListView<TensorView*> outputs;
  RT_RETURN_IF_ERROR(TensorListArg(op, args, 5, kMaxParts, &outputs));
  int32_t count, axis;
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &count));
  RT_RETURN_IF_ERROR(AxisArg(op, args, 2, in->rank, &axis));
  RT_CHECK_OR_RETURN_ERROR(count == static_cast<int32_t>(outputs.size), kInvalidProgram,
                           "%s: num %d for %lu outputs", op, static_cast<int>(count),
                           static_cast<unsigned long>(outputs.size));
  return PrepareParts(op, *in, outputs, axis, /*keep_axis=*/false, nullptr,
                      static_cast<OpDataSplit*>(ctx.op_data));
}

Error UnpackEval(KernelContext& ctx, Args args) {
  return EvalSplit(ctx, *args[0]->tensor, args[5]->tensor_list);
}

// Args: axis 0, in 1, num_splits 2, zero_points 3, scales 4, outputs 5 (TensorList).
Error SplitPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "split";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView* in;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 1, &in));
  ListView<TensorView*> outputs;
  RT_RETURN_IF_ERROR(TensorListArg(op, args, 5, kMaxParts, &outputs));
  int32_t axis;
  RT_RETURN_IF_ERROR(AxisTensorArg(op, args, 0, in->rank, &axis));
  const int64_t n = static_cast<int64_t>(outputs.size);
  RT_CHECK_OR_RETURN_ERROR(in->dims[axis] % n == 0, kInvalidProgram,
                           "%s: %d elements do not split into %ld parts", op,
                           static_cast<int>(in->dims[axis]), static_cast<long>(n));
  int64_t extents[kMaxParts];
  for (int64_t i = 0; i < n; ++i) extents[i] = in->dims[axis] / n;
  return PrepareParts(op, *in, outputs, axis, /*keep_axis=*/true, extents,
                      static_cast<OpDataSplit*>(ctx.op_data));
}

Error SplitEval(KernelContext& ctx, Args args) {
  return EvalSplit(ctx, *args[1]->tensor, args[5]->tensor_list);
}

// Args: in 0, size_splits 1, axis 2, num_splits 3, zero_points 4, scales 5, outputs 6.
Error SplitVPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "split_v";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 7));
  TensorView* in;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &in));
  ListView<TensorView*> outputs;
  RT_RETURN_IF_ERROR(TensorListArg(op, args, 6, kMaxParts, &outputs));
  int32_t axis;
  RT_RETURN_IF_ERROR(AxisTensorArg(op, args, 2, in->rank, &axis));
  // The output shapes carry the sizes (the compiler resolved a -1 entry).
  int64_t extents[kMaxParts];
  for (size_t i = 0; i < outputs.size; ++i) {
    const TensorView& part = *outputs.At(i);
    RT_CHECK_OR_RETURN_ERROR(part.rank == in->rank, kInvalidProgram, "%s: output %lu rank", op,
                             static_cast<unsigned long>(i));
    extents[i] = part.dims[axis];
  }
  return PrepareParts(op, *in, outputs, axis, /*keep_axis=*/true, extents,
                      static_cast<OpDataSplit*>(ctx.op_data));
}

Error SplitVEval(KernelContext& ctx, Args args) {
  return EvalSplit(ctx, *args[0]->tensor, args[6]->tensor_list);
}

}  // namespace boardlab::runtime::kernels
