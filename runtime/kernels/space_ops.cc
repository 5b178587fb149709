// REVERSE_V2, MIRROR_PAD, DEPTH_TO_SPACE, SPACE_TO_DEPTH, BATCH_TO_SPACE_ND and
// SPACE_TO_BATCH_ND: element rearrangements whose geometry comes from constant operands, resolved
// once at Prepare.

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/data_movement.h"

namespace boardlab::runtime::kernels {
namespace {

TensorView* Last(Args args) { return args[args.size() - 1]->tensor; }

// NHWC view of a 3-D (N, H, C) or 4-D tensor.
Dims4 Nhwc(const TensorView& t) {
  if (t.rank == 3) return Dims4{t.dims[0], t.dims[1], 1, t.dims[2]};
  return ToDims4(t);
}

}  // namespace

// Args: in 0, axes 1, zero_points 2, scales 3, out 4.
Error ReverseV2Prepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "reverse_v2";
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, 5, &in, &out));
  RT_CHECK_OR_RETURN_ERROR(SameTypeAndShape(*in, *out) && IsIndexTensor(args[1]) &&
                               args[1]->tensor->NumElements() <= in->rank,
                           kInvalidProgram, "%s: shapes or axes", op);
  auto* d = static_cast<OpDataReverse*>(ctx.op_data);
  for (int64_t i = 0; i < args[1]->tensor->NumElements(); ++i) {
    int64_t axis = IndexAt(*args[1]->tensor, i);
    if (axis < 0) axis += in->rank;
    RT_CHECK_OR_RETURN_ERROR(axis >= 0 && axis < in->rank && !d->reversed[axis], kInvalidProgram,
                             "%s: axis %ld out of range or repeated", op, static_cast<long>(axis));
    d->reversed[axis] = true;
  }
  return Error::kOk;
}

Error ReverseV2Eval(KernelContext& ctx, Args args) {
  const TensorView& in = *args[0]->tensor;
  return reverse_elements(ToShape(in), in.data,
                          static_cast<const OpDataReverse*>(ctx.op_data)->reversed,
                          ElementSize(in.type), Last(args)->data);
}

// Args: in 0, paddings 1 ([rank, 2]), mode 2 (0 REFLECT, 1 SYMMETRIC), zero_points 3, scales 4,
// out 5.
Error MirrorPadPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "mirror_pad";
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, 6, &in, &out));
  int32_t mode;
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &mode));
  RT_CHECK_OR_RETURN_ERROR((mode == 0 || mode == 1) && IsIndexTensor(args[1]) &&
                               args[1]->tensor->NumElements() == 2 * in->rank &&
                               out->rank == in->rank,
                           kInvalidProgram, "%s: paddings must be a constant [%d, 2] tensor", op,
                           static_cast<int>(in->rank));
  auto* d = static_cast<OpDataMirrorPad*>(ctx.op_data);
  d->symmetric = mode == 1;
  for (int32_t i = 0; i < in->rank; ++i) {
    const int64_t before = IndexAt(*args[1]->tensor, 2 * i);
    const int64_t after = IndexAt(*args[1]->tensor, 2 * i + 1);
    const int64_t limit = in->dims[i] - (d->symmetric ? 0 : 1);
    RT_CHECK_OR_RETURN_ERROR(before >= 0 && after >= 0 && before <= limit && after <= limit &&
                                 out->dims[i] == in->dims[i] + before + after,
                             kInvalidProgram, "%s: padding of dimension %d", op,
                             static_cast<int>(i));
    d->before[i] = static_cast<int32_t>(before);
    d->after[i] = static_cast<int32_t>(after);
  }
  return Error::kOk;
}

Error MirrorPadEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataMirrorPad*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  return mirror_pad_elements(ToShape(in), in.data, d->before, d->after, d->symmetric,
                             ElementSize(in.type), Last(args)->data);
}

namespace {

// Args: in 0, block_size 1, zero_points 2, scales 3, out 4.
Error PrepareDepthSpace(const char* op, KernelContext& ctx, Args args, bool to_space) {
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, 5, &in, &out));
  auto* d = static_cast<OpDataBlock*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &d->block_size));
  const int32_t b = d->block_size;
  RT_CHECK_OR_RETURN_ERROR(in->rank == 4 && out->rank == 4 && b >= 1 && b <= 65535, kInvalidProgram,
                           "%s: 4-D tensors and a positive block size", op);
  const Dims4 i = ToDims4(*in), o = ToDims4(*out);
  const bool fits = to_space ? (i.c % (b * b) == 0 && o.n == i.n && o.h == i.h * b &&
                                o.w == i.w * b && o.c == i.c / (b * b))
                             : (i.h % b == 0 && i.w % b == 0 && o.n == i.n && o.h == i.h / b &&
                                o.w == i.w / b && o.c == i.c * b * b);
  RT_CHECK_OR_RETURN_ERROR(fits, kInvalidProgram, "%s: output shape does not follow the input", op);
  return Error::kOk;
}

}  // namespace

Error DepthToSpacePrepare(KernelContext& ctx, Args args) {
  return PrepareDepthSpace("depth_to_space", ctx, args, /*to_space=*/true);
}

Error DepthToSpaceEval(KernelContext& ctx, Args args) {
  const TensorView& in = *args[0]->tensor;
  return depth_to_space_elements(ToDims4(in), in.data,
                                 static_cast<const OpDataBlock*>(ctx.op_data)->block_size,
                                 ElementSize(in.type), Last(args)->data);
}

Error SpaceToDepthPrepare(KernelContext& ctx, Args args) {
  return PrepareDepthSpace("space_to_depth", ctx, args, /*to_space=*/false);
}

Error SpaceToDepthEval(KernelContext& ctx, Args args) {
  const TensorView& in = *args[0]->tensor;
  return space_to_depth_elements(ToDims4(in), in.data,
                                 static_cast<const OpDataBlock*>(ctx.op_data)->block_size,
                                 ElementSize(in.type), Last(args)->data);
}

namespace {

// Args: in 0, block_shape 1, crops/paddings 2, zero_points 3, scales 4, out 5. 3-D tensors have
// one spatial dimension (block and pair for H only).
Error PrepareBatchSpace(const char* op, KernelContext& ctx, Args args, bool to_space) {
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, 6, &in, &out));
  RT_CHECK_OR_RETURN_ERROR((in->rank == 3 || in->rank == 4) && out->rank == in->rank,
                           kInvalidProgram, "%s: 3-D or 4-D tensors", op);
  const int32_t spatial = in->rank - 2;
  RT_CHECK_OR_RETURN_ERROR(IsIndexTensor(args[1]) && IsIndexTensor(args[2]) &&
                               args[1]->tensor->NumElements() == spatial &&
                               args[2]->tensor->NumElements() == 2 * spatial,
                           kInvalidProgram, "%s: block_shape [%d] and crops/paddings [%d, 2]", op,
                           static_cast<int>(spatial), static_cast<int>(spatial));
  int64_t block[2] = {1, 1}, before[2] = {0, 0}, after[2] = {0, 0};
  for (int32_t s = 0; s < spatial; ++s) {
    block[s] = IndexAt(*args[1]->tensor, s);
    before[s] = IndexAt(*args[2]->tensor, 2 * s);
    after[s] = IndexAt(*args[2]->tensor, 2 * s + 1);
    RT_CHECK_OR_RETURN_ERROR(block[s] >= 1 && block[s] <= 65535 && before[s] >= 0 &&
                                 after[s] >= 0 && before[s] <= INT32_MAX && after[s] <= INT32_MAX,
                             kInvalidProgram, "%s: block or crop/padding of dimension %d", op,
                             static_cast<int>(s));
  }
  const Dims4 i = Nhwc(*in), o = Nhwc(*out);
  const Dims4& batch = to_space ? i : o;
  const Dims4& space = to_space ? o : i;
  const int64_t hs[2] = {space.h, space.w}, hb[2] = {batch.h, batch.w};
  bool fits = batch.n == space.n * block[0] * block[1] && batch.c == space.c;
  for (int32_t s = 0; s < 2; ++s) {
    // to space: space = batch * block - crops; to batch: batch * block = space + paddings.
    fits = fits && hb[s] * block[s] == hs[s] + before[s] + after[s];
  }
  RT_CHECK_OR_RETURN_ERROR(fits, kInvalidProgram, "%s: output shape does not follow the input", op);
  auto* d = static_cast<OpDataBatchSpace*>(ctx.op_data);
  d->params = BatchSpaceParams{static_cast<int32_t>(block[0]), static_cast<int32_t>(block[1]),
                               static_cast<int32_t>(before[0]), static_cast<int32_t>(before[1])};
  return Error::kOk;
}

}  // namespace

Error BatchToSpaceNdPrepare(KernelContext& ctx, Args args) {
  return PrepareBatchSpace("batch_to_space_nd", ctx, args, /*to_space=*/true);
}

Error BatchToSpaceNdEval(KernelContext& ctx, Args args) {
  const TensorView& in = *args[0]->tensor;
  const TensorView& out = *Last(args);
  return batch_to_space_nd_elements(static_cast<const OpDataBatchSpace*>(ctx.op_data)->params,
                                    Nhwc(in), in.data, Nhwc(out), ElementSize(in.type), out.data);
}

Error SpaceToBatchNdPrepare(KernelContext& ctx, Args args) {
  return PrepareBatchSpace("space_to_batch_nd", ctx, args, /*to_space=*/false);
}

// Padding positions get raw zero bytes: TFLite Micro pads with its params' output_offset, which
// its Prepare never sets (0 in a zero-initialised arena), not with the output zero point.
Error SpaceToBatchNdEval(KernelContext& ctx, Args args) {
  const TensorView& in = *args[0]->tensor;
  const TensorView& out = *Last(args);
  const int64_t zero = 0;
  return space_to_batch_nd_elements(static_cast<const OpDataBatchSpace*>(ctx.op_data)->params,
                                    Nhwc(in), in.data, Nhwc(out), &zero, ElementSize(in.type),
                                    out.data);
}

}  // namespace boardlab::runtime::kernels
