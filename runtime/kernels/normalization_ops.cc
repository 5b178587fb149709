// LOG_SOFTMAX and L2_NORMALIZATION (int8, reference/normalization.h). The kernels derive TFLite
// Micro's multipliers from the float32 scales at Prepare, the way its Prepare does.
//   LOG_SOFTMAX: in 0, zero_points 1, scales 2, out 3.
//   L2_NORMALIZATION: in 0, activation code 1, act_min 2, act_max 3, zero_points 4, scales 5,
//     out 6 (TFLite Micro runs it without an activation only).

#include <cmath>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/normalization.h"

namespace boardlab::runtime::kernels {
namespace {

// int8 input and output of one shape, rank >= 1, with `count` arguments; `rows` of `depth` (the
// last dimension) elements each.
Error PrepareRowOp(const char* op, Args args, size_t count, QuantLists* q, RowShape* rows) {
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, count, &in, &out));
  RT_CHECK_OR_RETURN_ERROR(in->type == ScalarType::kChar && SameTypeAndShape(*in, *out) &&
                               in->rank >= 1 && in->dims[in->rank - 1] > 0,
                           kInvalidProgram, "%s: int8 input and output of one shape, rank >= 1",
                           op);
  rows->depth = in->Dim(-1);
  rows->rows = in->NumElements() / rows->depth;
  return Int8Quantization(op, args, 2, q);
}

}  // namespace

Error LogSoftmaxPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "log_softmax";
  auto* d = static_cast<OpDataLogSoftmax*>(ctx.op_data);
  QuantLists q;
  RT_RETURN_IF_ERROR(PrepareRowOp(op, args, 4, &q, &d->rows));
  RT_CHECK_OR_RETURN_ERROR(q.zero_point[1] == 127 && static_cast<float>(q.scale[1]) == 16.0f / 256,
                           kInvalidProgram, "%s: output quantization must be (16/256, 127)", op);
  // log_softmax.cc: PreprocessLogSoftmaxScalingExp with beta 1 and 5 integer bits.
  constexpr int kInputIntegerBits = 5;
  LogSoftmaxParams& p = d->params;
  const double input_scale = static_cast<float>(q.scale[0]);
  const double real =
      std::fmin(input_scale * std::ldexp(1.0, 31 - kInputIntegerBits), std::ldexp(1.0, 31) - 1.0);
  QuantizeMultiplier(real, &p.input_multiplier, &p.input_left_shift);
  RT_CHECK_OR_RETURN_ERROR(p.input_left_shift >= 1 && p.input_left_shift < 31, kInvalidProgram,
                           "%s: input scale %g is below 2^-26", op, input_scale);
  const double reverse =
      std::ldexp(1.0, 31 - p.input_left_shift) / static_cast<double>(p.input_multiplier);
  QuantizeMultiplier(reverse, &p.reverse_multiplier, &p.reverse_shift);
  // CalculateInputRadius: the largest difference whose rescaled value fits Q5.26.
  p.diff_min = -static_cast<int32_t>(
      std::floor(((1 << kInputIntegerBits) - 1) * std::ldexp(1.0, 31 - kInputIntegerBits) /
                 std::ldexp(1.0, p.input_left_shift)));
  return Error::kOk;
}

Error LogSoftmaxEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataLogSoftmax*>(ctx.op_data);
  return log_softmax_s8(d->params, d->rows.rows, d->rows.depth, args[0]->tensor->As<const int8_t>(),
                        args[3]->tensor->As<int8_t>());
}

Error L2NormalizationPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "l2_normalization";
  auto* d = static_cast<OpDataL2Normalization*>(ctx.op_data);
  QuantLists q;
  RT_RETURN_IF_ERROR(PrepareRowOp(op, args, 7, &q, &d->rows));
  int32_t activation = 0;
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &activation));
  RT_CHECK_OR_RETURN_ERROR(activation == 0, kInvalidProgram, "%s: fused activation %d", op,
                           static_cast<int>(activation));
  d->input_zero_point = q.zero_point[0];
  return Error::kOk;
}

Error L2NormalizationEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataL2Normalization*>(ctx.op_data);
  return l2_normalization_s8(d->input_zero_point, d->rows.rows, d->rows.depth,
                             args[0]->tensor->As<const int8_t>(), args[6]->tensor->As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
