// EXP, LOG, SQRT, SQUARE, ROUND, FLOOR (float32), RSQRT and ELU (int8, float32) and PRELU
// (int8, float32). Args of the unary ops: in 0, zero_points 1, scales 2, out 3; of PRELU: in 0,
// alpha 1, zero_points 2, scales 3, out 4. int8 kernels derive TFLite Micro's multipliers and
// tables from the quantization at Prepare (reference/math.h).

#include <cmath>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/math.h"

namespace boardlab::runtime::kernels {
namespace {

// Input and output of one shape and type (float32, or int8 where `int8_too`).
Error PrepareUnary(const char* op, Args args, bool int8_too, TensorView** in, TensorView** out) {
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, 4, in, out));
  const ScalarType t = (*in)->type;
  RT_CHECK_OR_RETURN_ERROR(t == ScalarType::kFloat || (int8_too && t == ScalarType::kChar),
                           kInvalidProgram, "%s: %s", op, int8_too ? "int8 or float32" : "float32");
  RT_CHECK_OR_RETURN_ERROR(SameTypeAndShape(**in, **out), kInvalidProgram,
                           "%s: input and output shapes differ", op);
  return Error::kOk;
}

Error PrepareFloatUnary(const char* op, Args args) {
  TensorView *in, *out;
  return PrepareUnary(op, args, /*int8_too=*/false, &in, &out);
}

Error EvalFloatUnary(FloatUnary fn, Args args) {
  const TensorView& in = *args[0]->tensor;
  return float_unary_f32(fn, in.NumElements(), in.As<const float>(), args[3]->tensor->As<float>());
}

}  // namespace

#define BOARDLAB_FLOAT_UNARY_KERNEL(Fn, name, fn)                                        \
  Error Fn##Prepare(KernelContext&, Args args) { return PrepareFloatUnary(name, args); } \
  Error Fn##Eval(KernelContext&, Args args) { return EvalFloatUnary(fn, args); }
BOARDLAB_FLOAT_UNARY_KERNEL(Exp, "exp", FloatUnary::kExp)
BOARDLAB_FLOAT_UNARY_KERNEL(Log, "log", FloatUnary::kLog)
BOARDLAB_FLOAT_UNARY_KERNEL(Sqrt, "sqrt", FloatUnary::kSqrt)
BOARDLAB_FLOAT_UNARY_KERNEL(Square, "square", FloatUnary::kSquare)
BOARDLAB_FLOAT_UNARY_KERNEL(Round, "round", FloatUnary::kRound)
BOARDLAB_FLOAT_UNARY_KERNEL(Floor, "floor", FloatUnary::kFloor)
#undef BOARDLAB_FLOAT_UNARY_KERNEL

Error RsqrtPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "rsqrt";
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(PrepareUnary(op, args, /*int8_too=*/true, &in, &out));
  if (in->type != ScalarType::kChar) return Error::kOk;
  QuantLists q;
  RT_RETURN_IF_ERROR(Int8Quantization(op, args, 2, &q));
  RsqrtParams& p = static_cast<OpDataRsqrt*>(ctx.op_data)->params;
  p.input_zero_point = q.zero_point[0];
  p.output_zero_point = q.zero_point[1];
  // TFLite Micro widens the float32 scales to double before taking the square root.
  const double in_scale = static_cast<float>(q.scale[0]);
  const double out_scale = static_cast<float>(q.scale[1]);
  QuantizeMultiplier(1.0 / (std::sqrt(in_scale) * out_scale), &p.multiplier, &p.shift);
  return Error::kOk;
}

Error RsqrtEval(KernelContext& ctx, Args args) {
  const TensorView& in = *args[0]->tensor;
  if (in.type == ScalarType::kFloat) return EvalFloatUnary(FloatUnary::kRsqrt, args);
  return rsqrt_s8(static_cast<const OpDataRsqrt*>(ctx.op_data)->params, in.NumElements(),
                  in.As<const int8_t>(), args[3]->tensor->As<int8_t>());
}

Error EluPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "elu";
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(PrepareUnary(op, args, /*int8_too=*/true, &in, &out));
  if (in->type != ScalarType::kChar) return Error::kOk;
  QuantLists q;
  RT_RETURN_IF_ERROR(Int8Quantization(op, args, 2, &q));
  BuildEluTable(static_cast<float>(q.scale[0]), q.zero_point[0], static_cast<float>(q.scale[1]),
                q.zero_point[1], static_cast<OpDataElu*>(ctx.op_data)->table);
  return Error::kOk;
}

Error EluEval(KernelContext& ctx, Args args) {
  const TensorView& in = *args[0]->tensor;
  if (in.type == ScalarType::kFloat) return EvalFloatUnary(FloatUnary::kElu, args);
  return lookup_s8(static_cast<const OpDataElu*>(ctx.op_data)->table, in.NumElements(),
                   in.As<const int8_t>(), args[3]->tensor->As<int8_t>());
}

Error PreluPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "prelu";
  TensorView *in, *alpha, *out;
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, 5, &in, &out));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 1, &alpha));
  const bool int16 = in->type == ScalarType::kShort;
  RT_CHECK_OR_RETURN_ERROR(
      (in->type == ScalarType::kChar || in->type == ScalarType::kFloat)
          ? alpha->type == in->type
          : int16 && alpha->type == ScalarType::kChar,
      kInvalidProgram, "%s: input and alpha both int8 or both float32, or int16 with int8 alpha",
      op);
  auto* d = static_cast<OpDataPrelu*>(ctx.op_data);
  RT_CHECK_OR_RETURN_ERROR(
      ComputeBroadcast(ToShape(*in), ToShape(*alpha), ToShape(*out), &d->strides), kInvalidProgram,
      "%s: input and alpha do not broadcast to the output", op);
  if (in->type == ScalarType::kFloat) return Error::kOk;
  QuantLists q;
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
  RT_CHECK_OR_RETURN_ERROR(q.count == 3 && q.scale[0] > 0 && q.scale[1] > 0 && q.scale[2] > 0,
                           kInvalidProgram, "%s: quantization lists", op);
  RT_CHECK_OR_RETURN_ERROR(!int16 || (q.zero_point[0] == 0 && q.zero_point[2] == 0),
                           kInvalidProgram, "%s: 16x8 zero points must be 0", op);
  PreluParams& p = d->params;
  p.input_offset = -q.zero_point[0];
  p.alpha_offset = -q.zero_point[1];
  p.output_offset = q.zero_point[2];
  // TFLite Micro's CalculatePreluParams: float32 scales widened to double.
  const double in_scale = static_cast<float>(q.scale[0]);
  const double alpha_scale = static_cast<float>(q.scale[1]);
  const double out_scale = static_cast<float>(q.scale[2]);
  QuantizeMultiplier(in_scale / out_scale, &p.multiplier_1, &p.shift_1);
  QuantizeMultiplier(in_scale * alpha_scale / out_scale, &p.multiplier_2, &p.shift_2);
  return Error::kOk;
}

Error PreluEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataPrelu*>(ctx.op_data);
  const TensorView &in = *args[0]->tensor, &alpha = *args[1]->tensor;
  TensorView& out = *args[4]->tensor;
  if (in.type == ScalarType::kFloat) {
    return prelu_f32(d->strides, in.As<const float>(), alpha.As<const float>(), out.As<float>());
  }
  if (in.type == ScalarType::kShort) {
    return prelu_s16(d->params, d->strides, in.As<const int16_t>(), alpha.As<const int8_t>(),
                     out.As<int16_t>());
  }
  return prelu_s8(d->params, d->strides, in.As<const int8_t>(), alpha.As<const int8_t>(),
                  out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
