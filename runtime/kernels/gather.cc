// GATHER and GATHER_ND. The indices may be a run-time input, so their values are checked where
// Eval reads them (an index out of range fails the run, as in TFLite Micro).

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/data_movement.h"

namespace boardlab::runtime::kernels {
namespace {

bool IsIndexType(const TensorView& t) {
  return t.type == ScalarType::kInt || t.type == ScalarType::kLong;
}

IndexData Indices(const TensorView& t) { return IndexData{t.data, t.type == ScalarType::kLong}; }

// The dimensions of `t` from `begin` to `end`, appended to `shape` at `*at`.
bool Append(const TensorView& t, int32_t begin, int32_t end, int32_t* shape, int32_t* at) {
  for (int32_t d = begin; d < end; ++d) {
    if (*at >= kMaxDims) return false;
    shape[(*at)++] = t.dims[d];
  }
  return true;
}

bool ShapeIs(const TensorView& t, const int32_t* shape, int32_t rank) {
  if (t.rank != rank) return false;
  for (int32_t d = 0; d < rank; ++d) {
    if (t.dims[d] != shape[d]) return false;
  }
  return true;
}

// Params (argument 0), indices (1, int32 or int64) and the output (the last of `count`), with
// the output of the params' type.
Error GatherArgs(const char* op, Args args, size_t count, TensorView** params, TensorView** indices,
                 TensorView** out) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, count));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, params));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 1, indices));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, count - 1, out));
  RT_CHECK_OR_RETURN_ERROR(IsIndexType(**indices) && (*params)->type == (*out)->type,
                           kInvalidProgram, "%s: integer indices and an output of the params' type",
                           op);
  return Error::kOk;
}

}  // namespace

// Args: params 0, indices 1, axis 2, batch_dims 3, zero_points 4, scales 5, out 6.
Error GatherPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "gather";
  TensorView *params, *indices, *out;
  RT_RETURN_IF_ERROR(GatherArgs(op, args, 7, &params, &indices, &out));
  auto* d = static_cast<OpDataGather*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &d->axis));
  RT_RETURN_IF_ERROR(IntArg(op, args, 3, &d->batch_dims));
  if (d->axis < 0) d->axis += params->rank;
  if (d->batch_dims < 0) d->batch_dims += indices->rank;
  RT_CHECK_OR_RETURN_ERROR(d->axis >= 0 && d->axis < params->rank && d->batch_dims >= 0 &&
                               d->batch_dims <= d->axis && d->batch_dims <= indices->rank,
                           kInvalidProgram, "%s: axis or batch_dims out of range", op);
  int32_t shape[kMaxDims];
  int32_t rank = 0;
  RT_CHECK_OR_RETURN_ERROR(Append(*params, 0, d->axis, shape, &rank) &&
                               Append(*indices, d->batch_dims, indices->rank, shape, &rank) &&
                               Append(*params, d->axis + 1, params->rank, shape, &rank) &&
                               ShapeIs(*out, shape, rank),
                           kInvalidProgram, "%s: output shape does not follow the inputs", op);
  for (int32_t i = 0; i < d->batch_dims; ++i) {
    RT_CHECK_OR_RETURN_ERROR(params->dims[i] == indices->dims[i], kInvalidProgram,
                             "%s: batch dimension %d differs", op, static_cast<int>(i));
  }
  return Error::kOk;
}

Error GatherEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataGather*>(ctx.op_data);
  const TensorView& params = *args[0]->tensor;
  const TensorView& indices = *args[1]->tensor;
  return gather_elements(ToShape(params), params.data, ToShape(indices), Indices(indices), d->axis,
                         d->batch_dims, ElementSize(params.type), args[6]->tensor->data);
}

// Args: params 0, indices 1, zero_points 2, scales 3, out 4.
Error GatherNdPrepare(KernelContext&, Args args) {
  constexpr const char* op = "gather_nd";
  TensorView *params, *indices, *out;
  RT_RETURN_IF_ERROR(GatherArgs(op, args, 5, &params, &indices, &out));
  RT_CHECK_OR_RETURN_ERROR(indices->rank >= 1, kInvalidProgram, "%s: scalar indices", op);
  const int32_t nd = indices->dims[indices->rank - 1];
  RT_CHECK_OR_RETURN_ERROR(nd >= 1 && nd <= params->rank, kInvalidProgram,
                           "%s: index depth %d for params of rank %d", op, static_cast<int>(nd),
                           static_cast<int>(params->rank));
  int32_t shape[kMaxDims];
  int32_t rank = 0;
  RT_CHECK_OR_RETURN_ERROR(Append(*indices, 0, indices->rank - 1, shape, &rank) &&
                               Append(*params, nd, params->rank, shape, &rank) &&
                               ShapeIs(*out, shape, rank),
                           kInvalidProgram, "%s: output shape does not follow the inputs", op);
  return Error::kOk;
}

Error GatherNdEval(KernelContext&, Args args) {
  const TensorView& params = *args[0]->tensor;
  const TensorView& indices = *args[1]->tensor;
  return gather_nd_elements(ToShape(params), params.data, ToShape(indices), Indices(indices),
                            ElementSize(params.type), args[4]->tensor->data);
}

}  // namespace boardlab::runtime::kernels
