#include "runtime/kernels/conv_common.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/conv_s16.h"
#include "runtime/kernels/reference/fully_connected_s8.h"

namespace boardlab::runtime::kernels {

// FULLY_CONNECTED int8 and 16x8 (int16 in and out, int64 bias). Args: in 0, weights 1, bias 2,
// input_zp 3, output_zp 4, multipliers 5, shifts 6, act_min 7,
// act_max 8, keep_num_dims 9, output 10.
Error FullyConnectedPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "fully_connected";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 11));
  TensorView *in, *w, *bias, *mult, *shift, *out;
  auto* d = static_cast<OpDataFullyConnected*>(ctx.op_data);
  bool bias64 = false;
  RT_RETURN_IF_ERROR(ConvActivationArgs(op, args, 0, 10, &in, &out, &d->int16));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, ScalarType::kChar, &w));
  RT_RETURN_IF_ERROR(ConvBiasArg(op, args, 2, d->int16, /*int32_in_16x8=*/false, &bias, &bias64));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 5, ScalarType::kInt, &mult));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 6, ScalarType::kInt, &shift));
  int32_t in_zp, out_zp;
  bool keep_num_dims;
  RT_RETURN_IF_ERROR(IntArg(op, args, 3, &in_zp));
  RT_RETURN_IF_ERROR(IntArg(op, args, 4, &out_zp));
  RT_RETURN_IF_ERROR(IntArg(op, args, 7, &d->params.out.act_min));
  RT_RETURN_IF_ERROR(IntArg(op, args, 8, &d->params.out.act_max));
  RT_RETURN_IF_ERROR(BoolArg(op, args, 9, &keep_num_dims));
  d->params.input_offset = -in_zp;
  d->params.out.output_offset = out_zp;
  RT_CHECK_OR_RETURN_ERROR(w->rank == 2 && w->dims[0] > 0 && w->dims[1] > 0, kInvalidProgram,
                           "%s: weights must be [units, depth]", op);
  d->units = w->dims[0];
  d->depth = w->dims[1];
  const int64_t in_size = in->NumElements();
  RT_CHECK_OR_RETURN_ERROR(in_size % d->depth == 0, kInvalidProgram,
                           "%s: input size %lld not a multiple of depth %d", op,
                           static_cast<long long>(in_size), static_cast<int>(d->depth));
  d->batches = static_cast<int32_t>(in_size / d->depth);
  RT_CHECK_OR_RETURN_ERROR(
      out->NumElements() == static_cast<int64_t>(d->batches) * d->units && out->Dim(-1) == d->units,
      kInvalidProgram, "%s: output must hold %d x %d", op, static_cast<int>(d->batches),
      static_cast<int>(d->units));
  RT_CHECK_OR_RETURN_ERROR(!keep_num_dims || out->rank == in->rank, kInvalidProgram,
                           "%s: keep_num_dims output rank %d, input rank %d", op,
                           static_cast<int>(out->rank), static_cast<int>(in->rank));
  RT_CHECK_OR_RETURN_ERROR(mult->rank == 1 && shift->rank == 1 && mult->dims[0] == shift->dims[0] &&
                               (mult->dims[0] == 1 || mult->dims[0] == d->units) &&
                               mult->data != nullptr && shift->data != nullptr,
                           kInvalidProgram, "%s: multiplier table size", op);
  RT_CHECK_OR_RETURN_ERROR(bias == nullptr || bias->NumElements() == d->units, kInvalidProgram,
                           "%s: bias must have %d entries", op, static_cast<int>(d->units));
  const int32_t lo = d->int16 ? -32768 : -128, hi = d->int16 ? 32767 : 127;
  RT_CHECK_OR_RETURN_ERROR(lo <= d->params.out.act_min &&
                               d->params.out.act_min <= d->params.out.act_max &&
                               d->params.out.act_max <= hi,
                           kInvalidProgram, "%s: bad activation range", op);
  d->quant = ChannelQuant{mult->As<const int32_t>(), shift->As<const int32_t>(), mult->dims[0]};
  // 16x8 (TFLite Micro): no zero points, an int64 accumulator and its requantization.
  RT_CHECK_OR_RETURN_ERROR(!d->int16 || (in_zp == 0 && out_zp == 0), kInvalidProgram,
                           "%s: 16x8 zero points must be 0", op);
  RT_CHECK_OR_RETURN_ERROR(!d->int16 || ShiftsFitRequantize64(d->quant), kInvalidProgram,
                           "%s: a shift is outside [-31, 7], the int64 requantization's range", op);
  return Error::kOk;
}

Error FullyConnectedEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataFullyConnected*>(ctx.op_data);
  if (d->int16) {
    const int64_t* bias64 = args[2]->is_tensor() ? args[2]->tensor->As<const int64_t>() : nullptr;
    return fully_connected_s16(d->params.out, d->quant, d->batches, d->depth, d->units,
                               args[0]->tensor->As<const int16_t>(),
                               args[1]->tensor->As<const int8_t>(), bias64,
                               args[10]->tensor->As<int16_t>());
  }
  const int32_t* bias = args[2]->is_tensor() ? args[2]->tensor->As<const int32_t>() : nullptr;
  // The widened input row of the fast path, from the temp arena (plain loop without it).
  const size_t bytes = fully_connected_s8_get_buffer_size(d->depth);
  void* scratch = ctx.temp != nullptr ? ctx.temp->Allocate(bytes, 16) : nullptr;
  return fully_connected_s8(
      d->params, d->quant, d->batches, d->depth, d->units, args[0]->tensor->As<const int8_t>(),
      args[1]->tensor->As<const int8_t>(), bias, args[10]->tensor->As<int8_t>(), scratch,
      scratch != nullptr ? bytes : 0);
}

}  // namespace boardlab::runtime::kernels
