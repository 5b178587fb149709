#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/batch_matmul_s8.h"

namespace boardlab::runtime::kernels {

// Args: lhs 0, rhs 1, adj_x 2, adj_y 3, zero_points 4, scales 5, out 6 (int8, or int16 for 16x8).
Error BatchMatMulPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "batch_matmul";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 7));
  TensorView *lhs, *rhs, *out;
  bool int16 = false;
  RT_RETURN_IF_ERROR(QuantizedBinaryArgs(op, args, 6, &lhs, &rhs, &out, &int16));
  BatchMatMulParams& p = static_cast<OpDataBatchMatMul*>(ctx.op_data)->params;
  RT_RETURN_IF_ERROR(BoolArg(op, args, 2, &p.adj_x));
  RT_RETURN_IF_ERROR(BoolArg(op, args, 3, &p.adj_y));
  QuantLists q;
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
  RT_CHECK_OR_RETURN_ERROR(q.count == 3 && q.scale[2] > 0, kInvalidProgram,
                           "%s: quantization lists", op);
  p.lhs_zero_point = q.zero_point[0];
  p.rhs_zero_point = q.zero_point[1];
  p.output_zero_point = q.zero_point[2];
  // TFLite's GetQuantizedConvolutionMultipler: the product of the two float scales in float.
  const float product = static_cast<float>(q.scale[0]) * static_cast<float>(q.scale[1]);
  QuantizeMultiplier(static_cast<double>(product) / q.scale[2], &p.multiplier, &p.shift);
  RT_CHECK_OR_RETURN_ERROR(!int16 || (p.shift >= -31 && p.shift <= 7), kNotSupported,
                           "%s: 16x8 multiplier shift %d outside [-31, 7]", op,
                           static_cast<int>(p.shift));
  RT_CHECK_OR_RETURN_ERROR(
      lhs->rank >= 2 && rhs->rank >= 2 && out->rank >= 2 && out->rank <= kMaxDims, kInvalidProgram,
      "%s: operands must have rank 2..6", op);
  const int32_t depth_l = p.adj_x ? lhs->Dim(-2) : lhs->Dim(-1);
  const int32_t depth_r = p.adj_y ? rhs->Dim(-1) : rhs->Dim(-2);
  RT_CHECK_OR_RETURN_ERROR(depth_l == depth_r, kInvalidProgram, "%s: inner dimensions %d vs %d", op,
                           static_cast<int>(depth_l), static_cast<int>(depth_r));
  return Error::kOk;
}

Error BatchMatMulEval(KernelContext& ctx, Args args) {
  const TensorView &lhs = *args[0]->tensor, &rhs = *args[1]->tensor, &out = *args[6]->tensor;
  const BatchMatMulParams& p = static_cast<const OpDataBatchMatMul*>(ctx.op_data)->params;
  if (lhs.type == ScalarType::kShort) {
    return batch_matmul_s16(p, ToShape(lhs), lhs.As<const int16_t>(), ToShape(rhs),
                            rhs.As<const int16_t>(), ToShape(out), out.As<int16_t>());
  }
  return batch_matmul_s8(p, ToShape(lhs), lhs.As<const int8_t>(), ToShape(rhs),
                         rhs.As<const int8_t>(), ToShape(out), out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
