// EXPAND_DIMS, SHAPE, FILL, ZEROS_LIKE, BROADCAST_TO and BROADCAST_ARGS: ops whose output
// follows from shapes and at most one value. Operands that give shapes or axes were constant
// when compiling (BROADCAST_ARGS's may be run-time values); the compiler resolved the output
// shapes, and Prepare checks that they fit the inputs.

#include <cstring>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/data_movement.h"

namespace boardlab::runtime::kernels {
namespace {

TensorView* Last(Args args) { return args[args.size() - 1]->tensor; }

}  // namespace

// Args: in 0, axis 1, zero_points 2, scales 3, out 4. The bytes do not change.
Error ExpandDimsPrepare(KernelContext&, Args args) {
  constexpr const char* op = "expand_dims";
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, 5, &in, &out));
  RT_CHECK_OR_RETURN_ERROR(out->rank == in->rank + 1 && in->NumElements() == out->NumElements(),
                           kInvalidProgram, "%s: output must add one dimension of size 1", op);
  return Error::kOk;
}

Error ExpandDimsEval(KernelContext&, Args args) {
  const TensorView& in = *args[0]->tensor;
  if (in.data != Last(args)->data) {
    std::memmove(Last(args)->data, in.data, static_cast<size_t>(in.NumBytes()));
  }
  return Error::kOk;
}

// Args: in 0, zero_points 1, scales 2, out 3 (int32 or int64 [rank]).
Error ShapePrepare(KernelContext&, Args args) {
  constexpr const char* op = "shape";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 4));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &in));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 3, &out));
  RT_CHECK_OR_RETURN_ERROR((out->type == ScalarType::kInt || out->type == ScalarType::kLong) &&
                               out->rank == 1 && out->dims[0] == in->rank,
                           kInvalidProgram, "%s: output must be int32 or int64 [%d]", op,
                           static_cast<int>(in->rank));
  return Error::kOk;
}

Error ShapeEval(KernelContext&, Args args) {
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *Last(args);
  for (int32_t d = 0; d < in.rank; ++d) {
    if (out.type == ScalarType::kLong) {
      out.As<int64_t>()[d] = in.dims[d];
    } else {
      out.As<int32_t>()[d] = in.dims[d];
    }
  }
  return Error::kOk;
}

// Args: shape a 0, shape b 1 (int32 or int64 vectors), zero_points 2, scales 3, out 4 (their type,
// as long as the longer).
Error BroadcastArgsPrepare(KernelContext&, Args args) {
  constexpr const char* op = "broadcast_args";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *a, *b, *out;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &a));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 1, &b));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 4, &out));
  const bool index_type = a->type == ScalarType::kInt || a->type == ScalarType::kLong;
  RT_CHECK_OR_RETURN_ERROR(
      index_type && b->type == a->type && out->type == a->type && a->rank == 1 && b->rank == 1 &&
          out->rank == 1 && out->dims[0] == (a->dims[0] > b->dims[0] ? a->dims[0] : b->dims[0]),
      kInvalidProgram, "%s: two int32 or int64 shapes and an output of their type and length", op);
  return Error::kOk;
}

Error BroadcastArgsEval(KernelContext&, Args args) {
  const TensorView& a = *args[0]->tensor;
  const TensorView& b = *args[1]->tensor;
  TensorView& out = *args[4]->tensor;
  const int32_t n = out.dims[0];
  // Right-aligned: dimension i of the output meets a's and b's dimensions counted from the end.
  for (int32_t i = 0; i < n; ++i) {
    const int32_t ia = i - (n - a.dims[0]), ib = i - (n - b.dims[0]);
    const int64_t da = ia >= 0 ? IndexAt(a, ia) : 1, db = ib >= 0 ? IndexAt(b, ib) : 1;
    RT_CHECK_OR_RETURN_ERROR(da == db || da == 1 || db == 1, kInvalidArgument,
                             "broadcast_args: dimension %d of the output meets sizes %ld and %ld",
                             static_cast<int>(i), static_cast<long>(da), static_cast<long>(db));
    const int64_t d = da == 1 ? db : da;
    if (out.type == ScalarType::kLong) {
      out.As<int64_t>()[i] = d;
    } else {
      out.As<int32_t>()[i] = static_cast<int32_t>(d);
    }
  }
  return Error::kOk;
}

// Args: dims 0, value 1 (scalar of the output's type), zero_points 2, scales 3, out 4.
Error FillPrepare(KernelContext&, Args args) {
  constexpr const char* op = "fill";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *dims, *value, *out;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &dims));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 1, &value));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 4, &out));
  RT_CHECK_OR_RETURN_ERROR(value->type == out->type && value->NumElements() == 1, kInvalidProgram,
                           "%s: value must be one element of the output's type", op);
  return Error::kOk;
}

Error FillEval(KernelContext&, Args args) {
  const TensorView& value = *args[1]->tensor;
  TensorView& out = *Last(args);
  const size_t size = static_cast<size_t>(ElementSize(out.type));
  auto* dst = out.As<uint8_t>();
  for (int64_t i = 0; i < out.NumElements(); ++i) std::memcpy(dst + i * size, value.data, size);
  return Error::kOk;
}

// Args: in 0, zero_points 1, scales 2, out 3. Writes zeros of the element type (0, not the zero
// point, as TFLite Micro does).
Error ZerosLikePrepare(KernelContext&, Args args) {
  constexpr const char* op = "zeros_like";
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, 4, &in, &out));
  RT_CHECK_OR_RETURN_ERROR(SameTypeAndShape(*in, *out), kInvalidProgram,
                           "%s: output must have the input's shape", op);
  return Error::kOk;
}

Error ZerosLikeEval(KernelContext&, Args args) {
  // All-zero bytes are 0 and 0.0f alike.
  std::memset(Last(args)->data, 0, static_cast<size_t>(Last(args)->NumBytes()));
  return Error::kOk;
}

// Args: in 0, shape 1, zero_points 2, scales 3, out 4.
Error BroadcastToPrepare(KernelContext&, Args args) {
  constexpr const char* op = "broadcast_to";
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, 5, &in, &out));
  RT_CHECK_OR_RETURN_ERROR(in->rank <= out->rank && out->rank <= kMaxDims, kInvalidProgram,
                           "%s: output rank", op);
  for (int32_t d = 0; d < in->rank; ++d) {
    const int32_t od = out->dims[out->rank - in->rank + d];
    RT_CHECK_OR_RETURN_ERROR(in->dims[d] == od || in->dims[d] == 1, kInvalidProgram,
                             "%s: input dimension %d does not broadcast", op, static_cast<int>(d));
  }
  return Error::kOk;
}

Error BroadcastToEval(KernelContext&, Args args) {
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *Last(args);
  return broadcast_to_elements(ToShape(in), in.data, ToShape(out), ElementSize(in.type), out.data);
}

}  // namespace boardlab::runtime::kernels
