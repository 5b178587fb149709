#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/add_s8.h"
#include "runtime/kernels/reference/broadcast.h"

namespace boardlab::runtime::kernels {
namespace {

// Args: a 0, b 1, input1_offset, input2_offset, output_offset, left_shift, input1_multiplier,
// input1_shift, input2_multiplier, input2_shift, output_multiplier, output_shift, act_min,
// act_max (2..13), output 14.
Error PrepareAddSub(const char* op, KernelContext& ctx, Args args) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 15));
  TensorView *a, *b, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kChar, &a));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, ScalarType::kChar, &b));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 14, ScalarType::kChar, &out));
  AddParams& p = static_cast<OpDataAdd*>(ctx.op_data)->params;
  int32_t* fields[] = {&p.input1_offset,     &p.input2_offset,     &p.out.output_offset,
                       &p.left_shift,        &p.input1_multiplier, &p.input1_shift,
                       &p.input2_multiplier, &p.input2_shift,      &p.output_multiplier,
                       &p.output_shift,      &p.out.act_min,       &p.out.act_max};
  for (size_t i = 0; i < 12; ++i) RT_RETURN_IF_ERROR(IntArg(op, args, 2 + i, fields[i]));
  RT_CHECK_OR_RETURN_ERROR(p.left_shift >= 0 && p.left_shift <= 24, kInvalidProgram,
                           "%s: left_shift %d", op, static_cast<int>(p.left_shift));
  RT_CHECK_OR_RETURN_ERROR(
      -128 <= p.out.act_min && p.out.act_min <= p.out.act_max && p.out.act_max <= 127,
      kInvalidProgram, "%s: bad activation range", op);
  BroadcastStrides s;
  RT_CHECK_OR_RETURN_ERROR(ComputeBroadcast(ToShape(*a), ToShape(*b), ToShape(*out), &s),
                           kInvalidProgram, "%s: input shapes do not broadcast to the output", op);
  return Error::kOk;
}

}  // namespace

Error AddPrepare(KernelContext& ctx, Args args) { return PrepareAddSub("add", ctx, args); }

Error AddEval(KernelContext& ctx, Args args) {
  const TensorView &a = *args[0]->tensor, &b = *args[1]->tensor, &out = *args[14]->tensor;
  return add_s8(static_cast<const OpDataAdd*>(ctx.op_data)->params, ToShape(a),
                a.As<const int8_t>(), ToShape(b), b.As<const int8_t>(), ToShape(out),
                out.As<int8_t>());
}

Error SubPrepare(KernelContext& ctx, Args args) { return PrepareAddSub("sub", ctx, args); }

Error SubEval(KernelContext& ctx, Args args) {
  const TensorView &a = *args[0]->tensor, &b = *args[1]->tensor, &out = *args[14]->tensor;
  return sub_s8(static_cast<const OpDataAdd*>(ctx.op_data)->params, ToShape(a),
                a.As<const int8_t>(), ToShape(b), b.As<const int8_t>(), ToShape(out),
                out.As<int8_t>());
}

}  // namespace boardlab::runtime::kernels
