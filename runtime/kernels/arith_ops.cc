// DIV, SQUARED_DIFFERENCE, ADD_N and CUMSUM (reference/arith.h). int8 (and SQUARED_DIFFERENCE's
// 16x8) kernels derive TFLite Micro's multipliers from the float32 scales at Prepare, the way its
// Prepare does.
//   DIV: a 0, b 1, activation code 2, int8 act_min 3, act_max 4, zero_points 5, scales 6, out 7.
//   SQUARED_DIFFERENCE: a 0, b 1, zero_points 2, scales 3, out 4.
//   ADD_N: inputs 0 (TensorList), zero_points 1, scales 2, out 3.
//   CUMSUM: in 0, axis 1 (int32), exclusive 2, reverse 3, zero_points 4, scales 5, out 6.

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/arith.h"

namespace boardlab::runtime::kernels {
namespace {

// Two operands of one type (int8, int32 or float32; int16 where `allow_int16`) broadcast to the
// output.
Error PrepareBroadcastBinary(const char* op, Args args, size_t count, BroadcastStrides* strides,
                             bool allow_int16 = false) {
  TensorView *a, *b, *out;
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, count, &a, &out));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 1, &b));
  const ScalarType t = a->type;
  RT_CHECK_OR_RETURN_ERROR((t == ScalarType::kChar || t == ScalarType::kInt ||
                            t == ScalarType::kFloat || (allow_int16 && t == ScalarType::kShort)) &&
                               b->type == t,
                           kInvalidProgram, "%s: operands of one supported type", op);
  RT_CHECK_OR_RETURN_ERROR(ComputeBroadcast(ToShape(*a), ToShape(*b), ToShape(*out), strides),
                           kInvalidProgram, "%s: input shapes do not broadcast to the output", op);
  return Error::kOk;
}

// ADD_N's and CUMSUM's rescaling (add_n.cc / cumsum.cc CalculateOpData): inputs times
// s_in / (2 s_in), the sum times 2 s_in / (2^20 s_out).
SumRescale ComputeSumRescale(const QuantLists& q, int32_t out_index) {
  SumRescale p;
  p.input_offset = -q.zero_point[0];
  p.output_offset = q.zero_point[out_index];
  const double twice_max_input_scale = 2 * q.scale[0];
  QuantizeMultiplier(q.scale[0] / twice_max_input_scale, &p.input_multiplier, &p.input_shift);
  QuantizeMultiplier(twice_max_input_scale / ((1 << p.left_shift) * q.scale[out_index]),
                     &p.output_multiplier, &p.output_shift);
  return p;
}

}  // namespace

Error DivPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "div";
  auto* d = static_cast<OpDataDiv*>(ctx.op_data);
  RT_RETURN_IF_ERROR(PrepareBroadcastBinary(op, args, 8, &d->strides));
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &d->activation));
  ActivationRange(d->activation, &d->float_min, &d->float_max);
  ActivationRange(d->activation, &d->int_min, &d->int_max);
  if (args[0]->tensor->type != ScalarType::kChar) return Error::kOk;
  DivParams& p = d->params;
  RT_RETURN_IF_ERROR(IntArg(op, args, 3, &p.act_min));
  RT_RETURN_IF_ERROR(IntArg(op, args, 4, &p.act_max));
  QuantLists q;
  RT_RETURN_IF_ERROR(Int8Quantization(op, args, 3, &q));
  p.input1_offset = -q.zero_point[0];
  p.input2_offset = -q.zero_point[1];
  p.output_offset = q.zero_point[2];
  // div.cc: s1 / (s2 * s_out) evaluated in float32, then widened.
  const float s1 = static_cast<float>(q.scale[0]), s2 = static_cast<float>(q.scale[1]);
  const float so = static_cast<float>(q.scale[2]);
  QuantizeMultiplier(static_cast<double>(s1 / (s2 * so)), &p.output_multiplier, &p.output_shift);
  return Error::kOk;
}

Error DivEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataDiv*>(ctx.op_data);
  const TensorView &a = *args[0]->tensor, &b = *args[1]->tensor;
  TensorView& out = *args[7]->tensor;
  switch (a.type) {
    case ScalarType::kChar:
      return div_s8(d->params, d->strides, a.As<const int8_t>(), b.As<const int8_t>(),
                    out.As<int8_t>());
    case ScalarType::kInt:
      return div_s32(d->strides, a.As<const int32_t>(), b.As<const int32_t>(), d->int_min,
                     d->int_max, out.As<int32_t>());
    default:
      return div_f32(d->strides, a.As<const float>(), b.As<const float>(), d->float_min,
                     d->float_max, out.As<float>());
  }
}

Error SquaredDifferencePrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "squared_difference";
  auto* d = static_cast<OpDataSquaredDifference*>(ctx.op_data);
  RT_RETURN_IF_ERROR(PrepareBroadcastBinary(op, args, 5, &d->strides, /*allow_int16=*/true));
  const ScalarType type = args[0]->tensor->type;
  if (type != ScalarType::kChar && type != ScalarType::kShort) return Error::kOk;
  QuantLists q;
  RT_RETURN_IF_ERROR(Int8Quantization(op, args, 3, &q));
  SquaredDifferenceParams p;  // op_data is zeroed memory: start from the defaults
  if (type == ScalarType::kShort) {
    // 16x8: symmetric operands that need no extra headroom (left shift 0).
    RT_CHECK_OR_RETURN_ERROR(q.zero_point[0] == 0 && q.zero_point[1] == 0 && q.zero_point[2] == 0,
                             kInvalidProgram, "%s: 16x8 zero points must be 0", op);
    p.left_shift = 0;
  }
  p.input1_offset = -q.zero_point[0];
  p.input2_offset = -q.zero_point[1];
  p.output_offset = q.zero_point[2];
  const double twice_max = 2.0 * (q.scale[0] > q.scale[1] ? q.scale[0] : q.scale[1]);
  QuantizeMultiplier(q.scale[0] / twice_max, &p.input1_multiplier, &p.input1_shift);
  QuantizeMultiplier(q.scale[1] / twice_max, &p.input2_multiplier, &p.input2_shift);
  // squared_difference.cc: (1 << 2 * left_shift) * s_out is a float32 product.
  const float shifted_out_scale =
      static_cast<float>(1 << (2 * p.left_shift)) * static_cast<float>(q.scale[2]);
  QuantizeMultiplier(twice_max * twice_max / static_cast<double>(shifted_out_scale),
                     &p.output_multiplier, &p.output_shift);
  d->params = p;
  return Error::kOk;
}

Error SquaredDifferenceEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSquaredDifference*>(ctx.op_data);
  const TensorView &a = *args[0]->tensor, &b = *args[1]->tensor;
  TensorView& out = *args[4]->tensor;
  switch (a.type) {
    case ScalarType::kChar:
      return squared_difference_s8(d->params, d->strides, a.As<const int8_t>(),
                                   b.As<const int8_t>(), out.As<int8_t>());
    case ScalarType::kShort:
      return squared_difference_s16(d->params, d->strides, a.As<const int16_t>(),
                                    b.As<const int16_t>(), out.As<int16_t>());
    case ScalarType::kInt:
      return squared_difference_s32(d->strides, a.As<const int32_t>(), b.As<const int32_t>(),
                                    out.As<int32_t>());
    default:
      return squared_difference_f32(d->strides, a.As<const float>(), b.As<const float>(),
                                    out.As<float>());
  }
}

Error AddNPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "add_n";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 4));
  ListView<TensorView*> inputs;
  RT_RETURN_IF_ERROR(TensorListArg(op, args, 0, OpDataAddN::kMaxInputs, &inputs));
  TensorView* out;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 3, &out));
  RT_CHECK_OR_RETURN_ERROR(out->type == ScalarType::kChar || out->type == ScalarType::kFloat,
                           kInvalidProgram, "%s: int8 or float32", op);
  for (size_t k = 0; k < inputs.size; ++k) {
    RT_CHECK_OR_RETURN_ERROR(SameTypeAndShape(*inputs.At(k), *out), kInvalidProgram,
                             "%s: input %lu differs from the output in type or shape", op,
                             static_cast<unsigned long>(k));
  }
  if (out->type != ScalarType::kChar) return Error::kOk;
  QuantLists q;
  const int32_t n = static_cast<int32_t>(inputs.size);
  RT_RETURN_IF_ERROR(Int8Quantization(op, args, n + 1, &q));
  for (int32_t k = 1; k < n; ++k) {
    RT_CHECK_OR_RETURN_ERROR(q.zero_point[k] == q.zero_point[0] && q.scale[k] == q.scale[0],
                             kInvalidProgram, "%s: input %d is quantized differently", op,
                             static_cast<int>(k));
  }
  static_cast<OpDataAddN*>(ctx.op_data)->params = ComputeSumRescale(q, n);
  return Error::kOk;
}

Error AddNEval(KernelContext& ctx, Args args) {
  const ListView<TensorView*>& list = args[0]->tensor_list;
  TensorView& out = *args[3]->tensor;
  const int32_t n = static_cast<int32_t>(list.size);
  if (out.type == ScalarType::kFloat) {
    const float* inputs[OpDataAddN::kMaxInputs];
    for (int32_t k = 0; k < n; ++k) inputs[k] = list.At(k)->As<const float>();
    return add_n_f32(out.NumElements(), inputs, n, out.As<float>());
  }
  const int8_t* inputs[OpDataAddN::kMaxInputs];
  for (int32_t k = 0; k < n; ++k) inputs[k] = list.At(k)->As<const int8_t>();
  return add_n_s8(static_cast<const OpDataAddN*>(ctx.op_data)->params, out.NumElements(), inputs, n,
                  out.As<int8_t>());
}

Error CumsumPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "cumsum";
  TensorView *in, *out, *axis;
  RT_RETURN_IF_ERROR(InputOutputArgs(op, args, 7, &in, &out));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, ScalarType::kInt, &axis));
  RT_CHECK_OR_RETURN_ERROR(
      (in->type == ScalarType::kChar || in->type == ScalarType::kFloat) &&
          SameTypeAndShape(*in, *out) && in->rank >= 1 && axis->NumElements() == 1,
      kInvalidProgram, "%s: an int8 or float32 input of rank >= 1, its shape out, one axis", op);
  auto* d = static_cast<OpDataCumsum*>(ctx.op_data);
  RT_RETURN_IF_ERROR(BoolArg(op, args, 2, &d->exclusive));
  RT_RETURN_IF_ERROR(BoolArg(op, args, 3, &d->reverse));
  if (in->type != ScalarType::kChar) return Error::kOk;
  QuantLists q;
  RT_RETURN_IF_ERROR(Int8Quantization(op, args, 3, &q, /*unquantized=*/1));
  d->params = ComputeSumRescale(q, 2);
  return Error::kOk;
}

// The axis is read when the op runs: TFLite Micro allows a run-time axis tensor.
Error CumsumEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataCumsum*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  CumsumSpec spec;
  spec.shape = ToShape(in);
  spec.exclusive = d->exclusive;
  spec.reverse = d->reverse;
  spec.axis = args[1]->tensor->As<const int32_t>()[0];
  if (spec.axis < 0) spec.axis += in.rank;
  RT_CHECK_OR_RETURN_ERROR(
      spec.axis >= 0 && spec.axis < in.rank, kInvalidArgument, "cumsum: axis %d is outside rank %d",
      static_cast<int>(args[1]->tensor->As<const int32_t>()[0]), static_cast<int>(in.rank));
  TensorView& out = *args[6]->tensor;
  if (in.type == ScalarType::kFloat) {
    return cumsum_f32(spec, in.As<const float>(), out.As<float>());
  }
  return cumsum_s8(d->params, spec, in.As<const int8_t>(), out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
