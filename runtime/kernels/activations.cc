// RELU, RELU6, LEAKY_RELU and HARD_SWISH glue. Their multipliers are derived here at Prepare
// from the scales the compiler passes, with the same float/double arithmetic as TFLite Micro's
// Prepare functions (the multiplier must be bit-identical, not merely close).

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/activations_s8.h"

namespace boardlab::runtime::kernels {
namespace {

// Common checks: one input and one output of equal size and one type (int8; int16 where
// `allow_int16`, for 16x8), quant lists for both.
Error PrepareUnaryGeneric(const char* op, Args args, size_t num_options, QuantLists* q,
                          bool allow_int16 = false) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 4 + num_options));
  TensorView *in, *out;
  const ScalarType type = allow_int16 ? QuantizedTypeOf(args, 0) : ScalarType::kChar;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, args.size() - 1, type, &out));
  RT_CHECK_OR_RETURN_ERROR(in->NumElements() == out->NumElements(), kInvalidProgram,
                           "%s: input and output sizes differ", op);
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, q));
  RT_CHECK_OR_RETURN_ERROR(q->count == 2 && q->scale[0] > 0 && q->scale[1] > 0, kInvalidProgram,
                           "%s: input and output must be quantized", op);
  return Error::kOk;
}

// Args: in 0, act_min 1, act_max 2, zero_points 3, scales 4, out 5 (int8, or int16 for 16x8).
Error PrepareReluLike(const char* op, KernelContext& ctx, Args args) {
  QuantLists q;
  RT_RETURN_IF_ERROR(PrepareUnaryGeneric(op, args, 2, &q, /*allow_int16=*/true));
  ReluParams& p = static_cast<OpDataRelu*>(ctx.op_data)->params;
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &p.act_min));
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &p.act_max));
  const bool int16 = args[0]->tensor->type == ScalarType::kShort;
  RT_CHECK_OR_RETURN_ERROR(ActivationRangeFits(int16, p.act_min, p.act_max), kInvalidProgram,
                           "%s: bad activation range", op);
  RT_CHECK_OR_RETURN_ERROR(!int16 || (q.zero_point[0] == 0 && q.zero_point[1] == 0),
                           kInvalidProgram, "%s: 16x8 zero points must be 0", op);
  p.input_zero_point = q.zero_point[0];
  p.output_zero_point = q.zero_point[1];
  p.identity = q.zero_point[0] == q.zero_point[1] && q.scale[0] == q.scale[1];
  QuantizeMultiplier(q.scale[0] / q.scale[1], &p.multiplier, &p.shift);
  return Error::kOk;
}

}  // namespace

Error ReluPrepare(KernelContext& ctx, Args args) { return PrepareReluLike("relu", ctx, args); }

Error ReluEval(KernelContext& ctx, Args args) {
  const ReluParams& p = static_cast<const OpDataRelu*>(ctx.op_data)->params;
  const TensorView& in = *args[0]->tensor;
  if (in.type == ScalarType::kShort) {
    return relu_s16(p, in.NumElements(), in.As<const int16_t>(), args[5]->tensor->As<int16_t>());
  }
  return relu_s8(p, in.NumElements(), in.As<const int8_t>(), args[5]->tensor->As<int8_t>());
}

// RELU6 reads only its clamp range (the input's quantized 0 and 6, which the compiler computes
// from the input quantization); the rescale Prepare derives goes unused.
Error Relu6Prepare(KernelContext& ctx, Args args) { return PrepareReluLike("relu6", ctx, args); }

Error Relu6Eval(KernelContext& ctx, Args args) {
  const ReluParams& p = static_cast<const OpDataRelu*>(ctx.op_data)->params;
  const TensorView& in = *args[0]->tensor;
  if (in.type == ScalarType::kShort) {
    return relu6_s16(p.act_min, p.act_max, in.NumElements(), in.As<const int16_t>(),
                     args[5]->tensor->As<int16_t>());
  }
  return relu6_s8(p.act_min, p.act_max, in.NumElements(), in.As<const int8_t>(),
                  args[5]->tensor->As<int8_t>());
}

// LEAKY_RELU int8 or 16x8. Args: in 0, alpha 1, zero_points 2, scales 3, out 4.
Error LeakyReluPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "leaky_relu";
  QuantLists q;
  RT_RETURN_IF_ERROR(PrepareUnaryGeneric(op, args, 1, &q, /*allow_int16=*/true));
  double alpha;
  RT_RETURN_IF_ERROR(DoubleArg(op, args, 1, &alpha));
  LeakyReluParams& p = static_cast<OpDataLeakyRelu*>(ctx.op_data)->params;
  p.input_zero_point = q.zero_point[0];
  p.output_zero_point = q.zero_point[1];
  // TFLite Micro computes both ratios in float before widening to double.
  const float in_scale = static_cast<float>(q.scale[0]);
  const float out_scale = static_cast<float>(q.scale[1]);
  const float alpha_f = static_cast<float>(alpha);
  QuantizeMultiplier(static_cast<double>(in_scale * alpha_f / out_scale), &p.alpha_multiplier,
                     &p.alpha_shift);
  QuantizeMultiplier(static_cast<double>(in_scale / out_scale), &p.identity_multiplier,
                     &p.identity_shift);
  return Error::kOk;
}

Error LeakyReluEval(KernelContext& ctx, Args args) {
  const LeakyReluParams& p = static_cast<const OpDataLeakyRelu*>(ctx.op_data)->params;
  const TensorView& in = *args[0]->tensor;
  if (in.type == ScalarType::kShort) {
    return leaky_relu_s16(p, in.NumElements(), in.As<const int16_t>(),
                          args[4]->tensor->As<int16_t>());
  }
  return leaky_relu_s8(p, in.NumElements(), in.As<const int8_t>(), args[4]->tensor->As<int8_t>());
}

// Args: in 0, zero_points 1, scales 2, out 3.
Error HardSwishPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "hard_swish";
  QuantLists q;
  RT_RETURN_IF_ERROR(PrepareUnaryGeneric(op, args, 0, &q));
  HardSwishParams& p = static_cast<OpDataHardSwish*>(ctx.op_data)->params;
  p.input_zero_point = q.zero_point[0];
  p.output_zero_point = q.zero_point[1];
  // Float arithmetic as in TFLite Micro's Prepare: the input on a 7-bit finer scale, and the
  // "relu-ish" scale on which 3.0 is 32768.
  const float input_scale = static_cast<float>(q.scale[0]);
  const float hires_input_scale = (1.0f / 128.0f) * input_scale;
  const float reluish_scale = 3.0f / 32768.0f;
  const float output_scale = static_cast<float>(q.scale[1]);
  int32_t m32 = 0;
  QuantizeMultiplier(static_cast<double>(hires_input_scale / output_scale), &m32,
                     &p.output_multiplier_exponent);
  p.output_multiplier_fixedpoint_int16 = DownScaleInt32ToInt16Multiplier(m32);
  RT_CHECK_OR_RETURN_ERROR(p.output_multiplier_exponent <= 0, kInvalidProgram,
                           "%s: output scale too small for the input scale", op);
  QuantizeMultiplier(static_cast<double>(hires_input_scale / reluish_scale), &m32,
                     &p.reluish_multiplier_exponent);
  p.reluish_multiplier_fixedpoint_int16 = DownScaleInt32ToInt16Multiplier(m32);
  return Error::kOk;
}

Error HardSwishEval(KernelContext& ctx, Args args) {
  return hard_swish_s8(static_cast<const OpDataHardSwish*>(ctx.op_data)->params,
                       args[0]->tensor->NumElements(), args[0]->tensor->As<const int8_t>(),
                       args[3]->tensor->As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
