#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/data_movement_s8.h"

namespace boardlab::runtime::kernels {

// TRANSPOSE of int8 or int16 (16x8) values. Args: in 0, perm 1 (constant int32/int64 [rank]),
// zero_points 2, scales 3, out 4.
Error TransposePrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "transpose";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *in, *out;
  const ScalarType type = QuantizedTypeOf(args, 0);
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 4, type, &out));
  RT_CHECK_OR_RETURN_ERROR(IsIndexTensor(args[1]) && args[1]->tensor->NumElements() == in->rank &&
                               in->rank == out->rank && in->rank <= kMaxDims,
                           kInvalidProgram, "%s: perm must be a constant [%d] index tensor", op,
                           static_cast<int>(in->rank));
  auto* d = static_cast<OpDataTranspose*>(ctx.op_data);
  bool seen[kMaxDims] = {};
  for (int32_t i = 0; i < in->rank; ++i) {
    int64_t p = IndexAt(*args[1]->tensor, i);
    if (p < 0) p += in->rank;
    RT_CHECK_OR_RETURN_ERROR(p >= 0 && p < in->rank && !seen[p] && out->dims[i] == in->dims[p],
                             kInvalidProgram, "%s: bad permutation entry %d", op,
                             static_cast<int>(i));
    seen[p] = true;
    d->perm[i] = static_cast<int32_t>(p);
  }
  return Error::kOk;
}

Error TransposeEval(KernelContext& ctx, Args args) {
  const TensorView& in = *args[0]->tensor;
  const int32_t* perm = static_cast<const OpDataTranspose*>(ctx.op_data)->perm;
  if (in.type == ScalarType::kShort) {
    return transpose_s16(ToShape(in), in.As<const int16_t>(), perm, args[4]->tensor->As<int16_t>());
  }
  return transpose_s8(ToShape(in), in.As<const int8_t>(), perm, args[4]->tensor->As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
