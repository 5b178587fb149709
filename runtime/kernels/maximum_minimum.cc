#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/mul_s8.h"

namespace boardlab::runtime::kernels {
namespace {

// Args: a 0, b 1, zero_points 2, scales 3, out 4. TFLite compares the raw int8 (or, in 16x8
// models, int16) values, which is only meaningful when all three tensors share one quantization;
// anything else is rejected.
Error PrepareMaxMin(const char* op, Args args) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *a, *b, *out;
  bool int16;
  RT_RETURN_IF_ERROR(QuantizedBinaryArgs(op, args, 4, &a, &b, &out, &int16));
  QuantLists q;
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
  RT_CHECK_OR_RETURN_ERROR(q.count == 3 && q.zero_point[0] == q.zero_point[2] &&
                               q.zero_point[1] == q.zero_point[2] && q.scale[0] == q.scale[2] &&
                               q.scale[1] == q.scale[2],
                           kNotSupported, "%s: inputs and output must share one quantization", op);
  BroadcastStrides s;
  RT_CHECK_OR_RETURN_ERROR(ComputeBroadcast(ToShape(*a), ToShape(*b), ToShape(*out), &s),
                           kInvalidProgram, "%s: input shapes do not broadcast to the output", op);
  return Error::kOk;
}

}  // namespace

Error MaximumPrepare(KernelContext&, Args args) { return PrepareMaxMin("maximum", args); }

Error MaximumEval(KernelContext&, Args args) {
  const TensorView &a = *args[0]->tensor, &b = *args[1]->tensor, &out = *args[4]->tensor;
  if (a.type == ScalarType::kShort) {
    return maximum_s16(ToShape(a), a.As<const int16_t>(), ToShape(b), b.As<const int16_t>(),
                       ToShape(out), out.As<int16_t>());
  }
  return maximum_s8(ToShape(a), a.As<const int8_t>(), ToShape(b), b.As<const int8_t>(),
                    ToShape(out), out.As<int8_t>());
}

Error MinimumPrepare(KernelContext&, Args args) { return PrepareMaxMin("minimum", args); }

Error MinimumEval(KernelContext&, Args args) {
  const TensorView &a = *args[0]->tensor, &b = *args[1]->tensor, &out = *args[4]->tensor;
  if (a.type == ScalarType::kShort) {
    return minimum_s16(ToShape(a), a.As<const int16_t>(), ToShape(b), b.As<const int16_t>(),
                       ToShape(out), out.As<int16_t>());
  }
  return minimum_s8(ToShape(a), a.As<const int8_t>(), ToShape(b), b.As<const int8_t>(),
                    ToShape(out), out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
