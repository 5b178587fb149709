#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/mul_s8.h"

namespace boardlab::runtime::kernels {

// MUL, int8 or 16x8 (all three tensors int16). Args: a 0, b 1, input1_offset, input2_offset,
// output_offset, output_multiplier, output_shift, act_min, act_max (2..8), output 9.
Error MulPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "mul";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 10));
  TensorView *a, *b, *out;
  auto* d = static_cast<OpDataMul*>(ctx.op_data);
  RT_RETURN_IF_ERROR(QuantizedBinaryArgs(op, args, 9, &a, &b, &out, &d->int16));
  MulParams& p = d->params;
  int32_t* fields[] = {&p.input1_offset,     &p.input2_offset, &p.out.output_offset,
                       &p.output_multiplier, &p.output_shift,  &p.out.act_min,
                       &p.out.act_max};
  for (size_t i = 0; i < 7; ++i) RT_RETURN_IF_ERROR(IntArg(op, args, 2 + i, fields[i]));
  RT_CHECK_OR_RETURN_ERROR(ActivationRangeFits(d->int16, p.out.act_min, p.out.act_max),
                           kInvalidProgram, "%s: bad activation range", op);
  // TFLite Micro's int16 MUL refuses zero points other than 0.
  RT_CHECK_OR_RETURN_ERROR(
      !d->int16 || (p.input1_offset == 0 && p.input2_offset == 0 && p.out.output_offset == 0),
      kInvalidProgram, "%s: 16x8 zero points must be 0", op);
  BroadcastStrides s;
  RT_CHECK_OR_RETURN_ERROR(ComputeBroadcast(ToShape(*a), ToShape(*b), ToShape(*out), &s),
                           kInvalidProgram, "%s: input shapes do not broadcast to the output", op);
  return Error::kOk;
}

Error MulEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataMul*>(ctx.op_data);
  const TensorView &a = *args[0]->tensor, &b = *args[1]->tensor, &out = *args[9]->tensor;
  if (d->int16) {
    return mul_s16(d->params, ToShape(a), a.As<const int16_t>(), ToShape(b), b.As<const int16_t>(),
                   ToShape(out), out.As<int16_t>());
  }
  return mul_s8(d->params, ToShape(a), a.As<const int8_t>(), ToShape(b), b.As<const int8_t>(),
                ToShape(out), out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
