// GATHER, GATHER_ND and EMBEDDING_LOOKUP. The indices may be a run-time input, so their values
// are checked where Eval reads them (an index out of range fails the run, as in TFLite Micro).

#include <cstring>

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

// Args: ids 0 (int32, rank 1), table 1 (rank >= 2), zero_points 2, scales 3, out 4.
Error EmbeddingLookupPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "embedding_lookup";
  TensorView *ids, *table, *out;
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &ids));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 1, &table));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 4, &out));
  RT_CHECK_OR_RETURN_ERROR(ids->type == ScalarType::kInt && ids->rank == 1 && table->rank >= 2,
                           kInvalidProgram, "%s: int32 ids of rank 1 and a table of rank >= 2", op);
  const bool dequantize = table->type == ScalarType::kChar && out->type == ScalarType::kFloat;
  RT_CHECK_OR_RETURN_ERROR(
      (table->type == ScalarType::kFloat || table->type == ScalarType::kChar) &&
          (table->type == out->type || dequantize),
      kInvalidProgram, "%s: float32 or int8 rows, the output of their type or float32", op);
  int32_t shape[kMaxDims];
  int32_t rank = 0;
  shape[rank++] = ids->dims[0];
  RT_CHECK_OR_RETURN_ERROR(
      Append(*table, 1, table->rank, shape, &rank) && ShapeIs(*out, shape, rank), kInvalidProgram,
      "%s: output shape does not follow the ids and the table", op);
  auto* d = static_cast<OpDataEmbeddingLookup*>(ctx.op_data);
  d->row_elements = table->NumElements() / table->dims[0];
  if (dequantize) {
    QuantLists q;  // ids, table, output
    RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
    RT_CHECK_OR_RETURN_ERROR(q.count == 3 && q.scale[1] > 0 && q.zero_point[1] == 0,
                             kInvalidProgram,
                             "%s: int8 rows dequantize with a positive scale and zero point 0", op);
    d->scale = static_cast<float>(q.scale[1]);  // TFLite keeps float32 scales
  }
  return Error::kOk;
}

Error EmbeddingLookupEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataEmbeddingLookup*>(ctx.op_data);
  const TensorView& ids = *args[0]->tensor;
  const TensorView& table = *args[1]->tensor;
  TensorView& out = *args[4]->tensor;
  const int32_t rows = table.dims[0];
  const int64_t n = d->row_elements;
  const size_t row_bytes = static_cast<size_t>(n) * ElementSize(table.type);
  for (int32_t i = 0; i < ids.dims[0]; ++i) {
    const int32_t id = ids.As<const int32_t>()[i];
    RT_CHECK_OR_RETURN_ERROR(id >= 0 && id < rows, kInvalidArgument,
                             "embedding_lookup: id %d at %d is outside the table's rows [0, %d)",
                             static_cast<int>(id), static_cast<int>(i), static_cast<int>(rows));
    if (out.type == table.type) {
      std::memcpy(static_cast<uint8_t*>(out.data) + i * row_bytes,
                  static_cast<const uint8_t*>(table.data) + id * row_bytes, row_bytes);
      continue;
    }
    const int8_t* row = table.As<const int8_t>() + int64_t{id} * n;
    float* dst = out.As<float>() + int64_t{i} * n;
    for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<float>(row[k]) * d->scale;
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
