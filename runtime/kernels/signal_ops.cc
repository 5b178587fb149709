// TFLite Micro's signal library ops (reference/signal.h), custom ops of audio front ends.
// Args: SIGNAL_WINDOW input 0, weights 1, shift Int 2, zero_points 3, scales 4, output 5;
// SIGNAL_FFT_AUTO_SCALE input 0, zero_points 1, scales 2, output 3, scale_bits 4 (int32 scalar);
// SIGNAL_DELAY input 0, delay_length Int 1, zero_points 2, scales 3, output 4.
// The int16 tensors carry no quantization: their zero points and scales are unused.

#include <cstring>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/signal.h"

namespace boardlab::runtime::kernels {

Error SignalWindowPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "signal_window";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 6));
  TensorView *in, *weights, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kShort, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 1, ScalarType::kShort, &weights));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 5, ScalarType::kShort, &out));
  auto* d = static_cast<OpDataSignalWindow*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 2, &d->shift));
  RT_CHECK_OR_RETURN_ERROR(in->rank >= 1 && weights->rank == 1 && weights->dims[0] > 0 &&
                               in->Dim(-1) == weights->dims[0] && SameTypeAndShape(*in, *out),
                           kInvalidProgram, "%s: input [..., n], weights [n], output as input", op);
  RT_CHECK_OR_RETURN_ERROR(d->shift >= 0 && d->shift <= 31, kInvalidProgram,
                           "%s: shift %d is outside 0..31", op, static_cast<int>(d->shift));
  d->length = weights->dims[0];
  d->rows = in->NumElements() / d->length;
  return Error::kOk;
}

Error SignalWindowEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSignalWindow*>(ctx.op_data);
  return window_s16(args[0]->tensor->As<const int16_t>(), args[1]->tensor->As<const int16_t>(),
                    d->rows, d->length, d->shift, args[5]->tensor->As<int16_t>());
}

Error SignalDelayPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "signal_delay";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kShort, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 4, ScalarType::kShort, &out));
  auto* d = static_cast<OpDataSignalDelay*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &d->delay));
  RT_CHECK_OR_RETURN_ERROR(
      in->rank >= 1 && in->Dim(-1) > 0 && SameTypeAndShape(*in, *out) && d->delay >= 0,
      kInvalidProgram, "%s: input [..., n], output as input, delay >= 0", op);
  d->frame = in->Dim(-1);
  d->rows = in->NumElements() / d->frame;
  if (d->delay == 0) return Error::kOk;
  // The history starts as zeros at every load, as TFLite Micro primes its buffer in Prepare.
  const size_t bytes = static_cast<size_t>(d->rows) * static_cast<size_t>(d->delay) * 2;
  RT_CHECK_OR_RETURN_ERROR(ctx.persistent != nullptr, kMemoryAllocationFailed,
                           "%s: no persistent memory for the history", op);
  d->history = static_cast<int16_t*>(ctx.persistent->Allocate(bytes, alignof(int16_t)));
  RT_CHECK_OR_RETURN_ERROR(d->history != nullptr, kMemoryAllocationFailed,
                           "%s: %lu bytes for the history", op, static_cast<unsigned long>(bytes));
  std::memset(d->history, 0, bytes);
  return Error::kOk;
}

Error SignalDelayEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSignalDelay*>(ctx.op_data);
  return delay_s16(args[0]->tensor->As<const int16_t>(), d->rows, d->frame, d->delay, d->history,
                   args[4]->tensor->As<int16_t>());
}

Error SignalFftAutoScalePrepare(KernelContext&, Args args) {
  constexpr const char* op = "signal_fft_auto_scale";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *in, *out, *scale_bits;
  RT_RETURN_IF_ERROR(TensorArg(op, args, 0, ScalarType::kShort, &in));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 3, ScalarType::kShort, &out));
  RT_RETURN_IF_ERROR(TensorArg(op, args, 4, ScalarType::kInt, &scale_bits));
  RT_CHECK_OR_RETURN_ERROR(
      in->rank == 1 && SameTypeAndShape(*in, *out) && scale_bits->NumElements() == 1,
      kInvalidProgram, "%s: input [n], output [n], scale_bits a scalar", op);
  return Error::kOk;
}

Error SignalFftAutoScaleEval(KernelContext&, Args args) {
  const TensorView& in = *args[0]->tensor;
  return fft_auto_scale_s16(in.As<const int16_t>(), in.dims[0], args[3]->tensor->As<int16_t>(),
                            args[4]->tensor->As<int32_t>());
}

}  // namespace boardlab::runtime::kernels
