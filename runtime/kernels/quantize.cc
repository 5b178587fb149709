#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/quantize_s8.h"

namespace boardlab::runtime::kernels {

// Args: in 0 (float or int8), zero_points 1, scales 2, out 3 (int8).
Error QuantizePrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "quantize";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 4));
  TensorView* out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 3, ScalarType::kChar, &out));
  auto* d = static_cast<OpDataQuantize*>(ctx.op_data);
  d->from_float = IsTensorOf(args[0], ScalarType::kFloat);
  RT_CHECK_OR_RETURN_ERROR(d->from_float || IsTensorOf(args[0], ScalarType::kChar), kNotSupported,
                           "%s: input must be float32 or int8", op);
  RT_CHECK_OR_RETURN_ERROR(args[0]->tensor->NumElements() == out->NumElements(), kInvalidProgram,
                           "%s: input and output sizes differ", op);
  QuantLists q;
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
  RT_CHECK_OR_RETURN_ERROR(q.count == 2 && q.scale[1] > 0, kInvalidProgram,
                           "%s: output must be quantized", op);
  d->scale = static_cast<float>(q.scale[1]);
  d->requantize.output_zero_point = q.zero_point[1];
  if (!d->from_float) {
    RT_CHECK_OR_RETURN_ERROR(q.scale[0] > 0, kInvalidProgram, "%s: input must be quantized", op);
    d->requantize.input_zero_point = q.zero_point[0];
    QuantizeMultiplier(q.scale[0] / q.scale[1], &d->requantize.multiplier, &d->requantize.shift);
  }
  return Error::kOk;
}

Error QuantizeEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataQuantize*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  int8_t* out = args[3]->tensor->As<int8_t>();
  if (d->from_float) {
    return quantize_f32_s8(d->scale, d->requantize.output_zero_point, in.NumElements(),
                           in.As<const float>(), out);
  }
  return requantize_s8(d->requantize, in.NumElements(), in.As<const int8_t>(), out);
}

// Args: in 0 (int8), zero_points 1, scales 2, out 3 (float).
Error DequantizePrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "dequantize";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 4));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kChar, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 3, ScalarType::kFloat, &out));
  RT_CHECK_OR_RETURN_ERROR(in->NumElements() == out->NumElements(), kInvalidProgram,
                           "%s: input and output sizes differ", op);
  QuantLists q;
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
  RT_CHECK_OR_RETURN_ERROR(q.count == 2, kInvalidProgram, "%s: quantization lists", op);
  auto* d = static_cast<OpDataDequantize*>(ctx.op_data);
  d->scale = q.scale[0];
  d->zero_point = q.zero_point[0];
  return Error::kOk;
}

Error DequantizeEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataDequantize*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  return dequantize_s8_f32(d->scale, d->zero_point, in.NumElements(), in.As<const int8_t>(),
                           args[3]->tensor->As<float>());
}

}  // namespace boardlab::runtime::kernels
