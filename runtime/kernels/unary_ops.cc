// ABS (int8, int16, float32), NEG (float32) and CAST. Args of each: in 0, zero_points 1, scales 2,
// out 3.

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/unary.h"

namespace boardlab::runtime::kernels {
namespace {

// Input 0 and the output (argument 3), with one element count; their types may differ (CAST).
Error InOut(const char* op, Args args, TensorView** in, TensorView** out) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 4));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, in));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 3, out));
  RT_CHECK_OR_RETURN_ERROR((*in)->NumElements() == (*out)->NumElements(), kInvalidProgram,
                           "%s: input and output sizes differ", op);
  return Error::kOk;
}

}  // namespace

Error AbsPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "abs";
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(InOut(op, args, &in, &out));
  RT_CHECK_OR_RETURN_ERROR((in->type == ScalarType::kChar || in->type == ScalarType::kShort ||
                            in->type == ScalarType::kFloat) &&
                               out->type == in->type,
                           kInvalidProgram, "%s: int8, int16 or float32", op);
  if (in->type == ScalarType::kFloat) return Error::kOk;
  QuantLists q;
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
  RT_CHECK_OR_RETURN_ERROR(q.count == 2, kInvalidProgram, "%s: quantization lists", op);
  AbsParams& p = static_cast<OpDataAbs*>(ctx.op_data)->params;
  // An unquantized int16 input (scale 0) takes TFLite Micro's plain integer ABS.
  p.quantized = q.scale[0] > 0;
  if (!p.quantized) {
    RT_CHECK_OR_RETURN_ERROR(in->type == ScalarType::kShort, kInvalidProgram,
                             "%s: int8 input without quantization", op);
    return Error::kOk;
  }
  RT_CHECK_OR_RETURN_ERROR(q.scale[1] > 0, kInvalidProgram, "%s: output without quantization", op);
  RT_CHECK_OR_RETURN_ERROR(
      in->type == ScalarType::kChar || (q.zero_point[0] == 0 && q.zero_point[1] == 0),
      kInvalidProgram, "%s: 16x8 zero points must be 0", op);
  p.input_zero_point = q.zero_point[0];
  p.output_zero_point = q.zero_point[1];
  // TFLite Micro compares the float32 scales.
  p.rescale = static_cast<float>(q.scale[0]) != static_cast<float>(q.scale[1]);
  if (p.rescale) QuantizeMultiplier(q.scale[0] / q.scale[1], &p.multiplier, &p.shift);
  return Error::kOk;
}

Error AbsEval(KernelContext& ctx, Args args) {
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *args[3]->tensor;
  const AbsParams& p = static_cast<const OpDataAbs*>(ctx.op_data)->params;
  if (in.type == ScalarType::kFloat) {
    return abs_f32(in.NumElements(), in.As<const float>(), out.As<float>());
  }
  if (in.type == ScalarType::kShort) {
    return abs_s16(p, in.NumElements(), in.As<const int16_t>(), out.As<int16_t>());
  }
  return abs_s8(p, in.NumElements(), in.As<const int8_t>(), out.As<int8_t>());
}

Error NegPrepare(KernelContext&, Args args) {
  constexpr const char* op = "neg";
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(InOut(op, args, &in, &out));
  RT_CHECK_OR_RETURN_ERROR(in->type == ScalarType::kFloat && out->type == ScalarType::kFloat,
                           kInvalidProgram, "%s: float32 only", op);
  return Error::kOk;
}

Error NegEval(KernelContext&, Args args) {
  return neg_f32(args[0]->tensor->NumElements(), args[0]->tensor->As<const float>(),
                 args[3]->tensor->As<float>());
}

Error CastPrepare(KernelContext&, Args args) {
  constexpr const char* op = "cast";
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(InOut(op, args, &in, &out));
  RT_CHECK_OR_RETURN_ERROR(CastSupported(in->type, out->type), kInvalidProgram,
                           "%s: no conversion from type %d to %d", op, static_cast<int>(in->type),
                           static_cast<int>(out->type));
  return Error::kOk;
}

Error CastEval(KernelContext&, Args args) {
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *args[3]->tensor;
  return cast_elements(in.type, in.data, out.type, in.NumElements(), out.data);
}

}  // namespace boardlab::runtime::kernels
