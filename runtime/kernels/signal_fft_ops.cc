// TFLite Micro's real FFTs SignalRfft and SignalIrfft in int16, int32 or float32
// (reference/signal_fft.h: kissfft's arithmetic). Args (tensors without quantization: their zero
// points and scales are unused):
//   SIGNAL_RFFT   input [..., <= fft_length] 0, fft_length Int 1, zp 2, scales 3,
//                 output [..., fft_length + 2] 4 (fft_length / 2 + 1 (real, imaginary) pairs)
//   SIGNAL_IRFFT  input [..., fft_length + 2] 0, fft_length Int 1, zp 2, scales 3,
//                 output [..., fft_length] 4

#include <cstring>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/signal_fft.h"

namespace boardlab::runtime::kernels {
namespace {

bool SameLeadingDims(const TensorView& a, const TensorView& b) {
  if (a.rank < 1 || a.rank != b.rank) return false;
  for (int32_t i = 0; i + 1 < a.rank; ++i) {
    if (a.dims[i] != b.dims[i]) return false;
  }
  return true;
}

// Calls `f` with a zero of the scalar type `type` names (int16, int32 or float32).
template <typename F>
Error WithScalar(ScalarType type, F&& f) {
  switch (type) {
    case ScalarType::kShort:
      return f(int16_t{0});
    case ScalarType::kInt:
      return f(int32_t{0});
    default:
      return f(0.0f);
  }
}

template <typename T>
RealFftPlan<T> PlanOf(const OpDataSignalFft& d, bool inverse) {
  RealFftPlan<T> plan;
  plan.fft_length = d.fft_length;
  plan.inverse = inverse;
  plan.twiddles = static_cast<T*>(d.twiddles);
  plan.super_twiddles = static_cast<T*>(d.super_twiddles);
  plan.work = static_cast<T*>(d.work);
  return plan;
}

// The tables (and SIGNAL_RFFT's padded row) in persistent memory, the twiddles computed once.
template <typename T>
Error AllocatePlan(KernelContext& ctx, const char* op, bool inverse, OpDataSignalFft& d) {
  const int64_t n = d.fft_length;
  const bool pad = !inverse && d.input_length < d.fft_length;
  const size_t bytes = static_cast<size_t>(RealFftPlanScalars(n) + (pad ? n : 0)) * sizeof(T);
  RT_CHECK_OR_RETURN_ERROR(ctx.persistent != nullptr, kMemoryAllocationFailed,
                           "%s: no persistent memory for its tables", op);
  T* base = static_cast<T*>(ctx.persistent->Allocate(bytes, alignof(T)));
  RT_CHECK_OR_RETURN_ERROR(base != nullptr, kMemoryAllocationFailed, "%s: %lu bytes of tables", op,
                           static_cast<unsigned long>(bytes));
  std::memset(base, 0, bytes);
  d.twiddles = base;
  d.super_twiddles = base + n;
  d.work = base + n + n / 2;
  d.padded = pad ? base + RealFftPlanScalars(n) : nullptr;
  RealFftPlan<T> plan = PlanOf<T>(d, inverse);
  real_fft_init(plan);
  return Error::kOk;
}

Error FftPrepare(KernelContext& ctx, Args args, const char* op, bool inverse) {
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, 5));
  TensorView *in, *out;
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 0, &in));
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, 4, &out));
  auto* d = static_cast<OpDataSignalFft*>(ctx.op_data);
  RT_RETURN_IF_ERROR(IntArg(op, args, 1, &d->fft_length));
  d->type = in->type;
  RT_CHECK_OR_RETURN_ERROR((in->type == ScalarType::kShort || in->type == ScalarType::kInt ||
                            in->type == ScalarType::kFloat) &&
                               out->type == in->type,
                           kInvalidProgram, "%s: int16, int32 or float32 in and out", op);
  RT_CHECK_OR_RETURN_ERROR(IsRealFftLength(d->fft_length), kInvalidProgram,
                           "%s: fft_length %d is not an even 4..%d whose half has only the "
                           "prime factors 2, 3 and 5",
                           op, static_cast<int>(d->fft_length),
                           static_cast<int>(kMaxRealFftLength));
  const int32_t bins = d->fft_length + 2;  // fft_length / 2 + 1 complex values
  const int32_t in_last = inverse ? bins : d->fft_length;
  const int32_t out_last = inverse ? d->fft_length : bins;
  RT_CHECK_OR_RETURN_ERROR(
      SameLeadingDims(*in, *out) && in->Dim(-1) > 0 &&
          (inverse ? in->Dim(-1) == in_last : in->Dim(-1) <= in_last) && out->Dim(-1) == out_last,
      kInvalidProgram, "%s: input [..., %s%d], output [..., %d]", op,
      inverse ? "" : "<= ", static_cast<int>(in_last), static_cast<int>(out_last));
  d->input_length = in->Dim(-1);
  d->rows = in->NumElements() / d->input_length;
  return WithScalar(d->type,
                    [&](auto zero) { return AllocatePlan<decltype(zero)>(ctx, op, inverse, *d); });
}

// Each row's transform, zero padding SIGNAL_RFFT's short rows first as TFLite Micro's Eval does.
template <typename T>
Error TransformRows(const OpDataSignalFft& d, bool inverse, const TensorView& in, TensorView& out) {
  const RealFftPlan<T> plan = PlanOf<T>(d, inverse);
  const T* input = in.As<const T>();
  T* output = out.As<T>();
  const int64_t bins = d.fft_length + 2;
  auto* padded = static_cast<T*>(d.padded);
  for (int64_t row = 0; row < d.rows; ++row) {
    if (inverse) {
      irfft_apply(plan, input + row * bins, output + row * d.fft_length);
      continue;
    }
    const T* samples = input + row * d.input_length;
    if (padded != nullptr) {
      std::memcpy(padded, samples, sizeof(T) * static_cast<size_t>(d.input_length));
      std::memset(padded + d.input_length, 0,
                  sizeof(T) * static_cast<size_t>(d.fft_length - d.input_length));
      samples = padded;
    }
    rfft_apply(plan, samples, output + row * bins);
  }
  return Error::kOk;
}

Error FftEval(KernelContext& ctx, Args args, bool inverse) {
  const auto* d = static_cast<const OpDataSignalFft*>(ctx.op_data);
  return WithScalar(d->type, [&](auto zero) {
    return TransformRows<decltype(zero)>(*d, inverse, *args[0]->tensor, *args[4]->tensor);
  });
}

}  // namespace

Error SignalRfftPrepare(KernelContext& ctx, Args args) {
  return FftPrepare(ctx, args, "signal_rfft", false);
}

Error SignalRfftEval(KernelContext& ctx, Args args) { return FftEval(ctx, args, false); }

Error SignalIrfftPrepare(KernelContext& ctx, Args args) {
  return FftPrepare(ctx, args, "signal_irfft", true);
}

Error SignalIrfftEval(KernelContext& ctx, Args args) { return FftEval(ctx, args, true); }

}  // namespace boardlab::runtime::kernels
