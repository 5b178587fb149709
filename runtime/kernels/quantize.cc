#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/quantize_s8.h"

namespace boardlab::runtime::kernels {

// Args: in 0 (float32, int8 or int16), zero_points 1, scales 2, out 3 (int8 or int16).
Error QuantizePrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "quantize";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 4));
  auto* d = static_cast<OpDataQuantize*>(ctx.op_data);
  d->from_float = IsTensorOf(args[0], ScalarType::kFloat);
  d->input_int16 = IsTensorOf(args[0], ScalarType::kShort);
  RT_CHECK_OR_RETURN_ERROR(
      d->from_float || d->input_int16 || IsTensorOf(args[0], ScalarType::kChar), kNotSupported,
      "%s: input must be float32, int8 or int16", op);
  TensorView* out;
  const ScalarType out_type = QuantizedTypeOf(args, 3);
  d->output_int16 = out_type == ScalarType::kShort;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 3, out_type, &out));
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

namespace {

Error QuantizeFromFloat(const OpDataQuantize& d, const TensorView& in, TensorView& out) {
  if (d.output_int16) {
    return quantize_f32_s16(d.scale, d.requantize.output_zero_point, in.NumElements(),
                            in.As<const float>(), out.As<int16_t>());
  }
  return quantize_f32_s8(d.scale, d.requantize.output_zero_point, in.NumElements(),
                         in.As<const float>(), out.As<int8_t>());
}

}  // namespace

Error QuantizeEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataQuantize*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *args[3]->tensor;
  const int64_t n = in.NumElements();
  if (d->from_float) return QuantizeFromFloat(*d, in, out);
  if (d->input_int16) {
    return d->output_int16
               ? requantize_s16(d->requantize, n, in.As<const int16_t>(), out.As<int16_t>())
               : requantize_s16_s8(d->requantize, n, in.As<const int16_t>(), out.As<int8_t>());
  }
  return d->output_int16
             ? requantize_s8_s16(d->requantize, n, in.As<const int8_t>(), out.As<int16_t>())
             : requantize_s8(d->requantize, n, in.As<const int8_t>(), out.As<int8_t>());
}

// Args: in 0 (int8 or int16), zero_points 1, scales 2, out 3 (float).
Error DequantizePrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "dequantize";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 4));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, QuantizedTypeOf(args, 0), &in));
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
  float* out = args[3]->tensor->As<float>();
  if (in.type == ScalarType::kShort) {
    return dequantize_s16_f32(d->scale, d->zero_point, in.NumElements(), in.As<const int16_t>(),
                              out);
  }
  return dequantize_s8_f32(d->scale, d->zero_point, in.NumElements(), in.As<const int8_t>(), out);
}

}  // namespace boardlab::runtime::kernels
