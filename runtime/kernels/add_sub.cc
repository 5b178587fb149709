#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/add_s8.h"
#include "runtime/kernels/reference/broadcast.h"

namespace boardlab::runtime::kernels {
namespace {

// ADD and SUB, int8 or 16x8 (all three tensors int16). Args: a 0, b 1, input1_offset,
// input2_offset, output_offset, left_shift, input1_multiplier, input1_shift, input2_multiplier,
// input2_shift, output_multiplier, output_shift, act_min, act_max (2..13), output 14.
Error PrepareAddSub(const char* op, KernelContext& ctx, Args args) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 15));
  TensorView *a, *b, *out;
  auto* d = static_cast<OpDataAdd*>(ctx.op_data);
  RT_RETURN_IF_ERROR(QuantizedBinaryArgs(op, args, 14, &a, &b, &out, &d->int16));
  AddParams& p = d->params;
  int32_t* fields[] = {&p.input1_offset,     &p.input2_offset,     &p.out.output_offset,
                       &p.left_shift,        &p.input1_multiplier, &p.input1_shift,
                       &p.input2_multiplier, &p.input2_shift,      &p.output_multiplier,
                       &p.output_shift,      &p.out.act_min,       &p.out.act_max};
  for (size_t i = 0; i < 12; ++i) RT_RETURN_IF_ERROR(IntArg(op, args, 2 + i, fields[i]));
  // int16 values scaled up by 2^15 stay inside int32 (TFLite Micro's 16x8 shift); int8 by 2^24.
  RT_CHECK_OR_RETURN_ERROR(p.left_shift >= 0 && p.left_shift <= (d->int16 ? 15 : 24),
                           kInvalidProgram, "%s: left_shift %d", op,
                           static_cast<int>(p.left_shift));
  RT_CHECK_OR_RETURN_ERROR(ActivationRangeFits(d->int16, p.out.act_min, p.out.act_max),
                           kInvalidProgram, "%s: bad activation range", op);
  BroadcastStrides s;
  RT_CHECK_OR_RETURN_ERROR(ComputeBroadcast(ToShape(*a), ToShape(*b), ToShape(*out), &s),
                           kInvalidProgram, "%s: input shapes do not broadcast to the output", op);
  return Error::kOk;
}

}  // namespace

Error AddPrepare(KernelContext& ctx, Args args) { return PrepareAddSub("add", ctx, args); }

Error AddEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataAdd*>(ctx.op_data);
  const TensorView &a = *args[0]->tensor, &b = *args[1]->tensor, &out = *args[14]->tensor;
  if (d->int16) {
    return add_s16(d->params, ToShape(a), a.As<const int16_t>(), ToShape(b), b.As<const int16_t>(),
                   ToShape(out), out.As<int16_t>());
  }
  return add_s8(d->params, ToShape(a), a.As<const int8_t>(), ToShape(b), b.As<const int8_t>(),
                ToShape(out), out.As<int8_t>());
}

Error SubPrepare(KernelContext& ctx, Args args) { return PrepareAddSub("sub", ctx, args); }

Error SubEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataAdd*>(ctx.op_data);
  const TensorView &a = *args[0]->tensor, &b = *args[1]->tensor, &out = *args[14]->tensor;
  if (d->int16) {
    return sub_s16(d->params, ToShape(a), a.As<const int16_t>(), ToShape(b), b.As<const int16_t>(),
                   ToShape(out), out.As<int16_t>());
  }
  return sub_s8(d->params, ToShape(a), a.As<const int8_t>(), ToShape(b), b.As<const int8_t>(),
                ToShape(out), out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
