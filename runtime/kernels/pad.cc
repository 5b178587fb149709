#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/data_movement_s8.h"

namespace boardlab::runtime::kernels {
namespace {

// PAD:   in 0, paddings 1, zero_points 2, scales 3, out 4 (pads with the output zero point).
// PADV2: in 0, paddings 1, constant_values 2 (scalar of the input's type), zero_points 3,
//        scales 4, out 5.
// The values are int8, or int16 in 16x8 models (TFLite Micro pads those with 0, their zero point).
Error PreparePad(const char* op, KernelContext& ctx, Args args, bool v2) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, v2 ? 6 : 5));
  TensorView *in, *out;
  const ScalarType type = QuantizedTypeOf(args, 0);
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, type, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, args.size() - 1, type, &out));
  RT_CHECK_OR_RETURN_ERROR(in->rank == out->rank && in->rank <= kMaxDims &&
                               IsIndexTensor(args[1]) &&
                               args[1]->tensor->NumElements() == 2 * in->rank,
                           kInvalidProgram, "%s: paddings must be a constant [%d, 2] tensor", op,
                           static_cast<int>(in->rank));
  QuantLists q;
  RT_RETURN_IF_ERROR(QuantListArgs(op, args, &q));
  auto* d = static_cast<OpDataPad*>(ctx.op_data);
  for (int32_t i = 0; i < in->rank; ++i) {
    const int64_t b = IndexAt(*args[1]->tensor, 2 * i);
    const int64_t a = IndexAt(*args[1]->tensor, 2 * i + 1);
    RT_CHECK_OR_RETURN_ERROR(b >= 0 && a >= 0 && in->dims[i] + b + a == out->dims[i],
                             kInvalidProgram, "%s: padding of dimension %d does not match output",
                             op, static_cast<int>(i));
    d->before[i] = static_cast<int32_t>(b);
    d->after[i] = static_cast<int32_t>(a);
  }
  if (v2) {
    RT_CHECK_OR_RETURN_ERROR(
        IsTensorOf(args[2], type) && args[2]->tensor->NumElements() == 1 &&
            args[2]->tensor->data != nullptr,
        kInvalidProgram, "%s: constant_values must be a constant scalar of the input's type", op);
    d->pad_value = type == ScalarType::kShort ? args[2]->tensor->As<const int16_t>()[0]
                                              : args[2]->tensor->As<const int8_t>()[0];
  } else {
    d->pad_value = type == ScalarType::kShort ? 0 : static_cast<int8_t>(q.zero_point[q.count - 1]);
  }
  return Error::kOk;
}

Error EvalPad(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataPad*>(ctx.op_data);
  const TensorView& in = *args[0]->tensor;
  TensorView& out = *args[args.size() - 1]->tensor;
  if (in.type == ScalarType::kShort) {
    return pad_s16(ToShape(in), in.As<const int16_t>(), d->before, d->after,
                   static_cast<int16_t>(d->pad_value), out.As<int16_t>());
  }
  return pad_s8(ToShape(in), in.As<const int8_t>(), d->before, d->after,
                static_cast<int8_t>(d->pad_value), out.As<int8_t>());
}

}  // namespace

Error PadPrepare(KernelContext& ctx, Args args) { return PreparePad("pad", ctx, args, false); }
Error PadEval(KernelContext& ctx, Args args) { return EvalPad(ctx, args); }
Error PadV2Prepare(KernelContext& ctx, Args args) { return PreparePad("padv2", ctx, args, true); }
Error PadV2Eval(KernelContext& ctx, Args args) { return EvalPad(ctx, args); }

}  // namespace boardlab::runtime::kernels
