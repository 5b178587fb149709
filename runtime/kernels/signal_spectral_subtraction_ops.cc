// TFLite Micro's SignalFilterBankSpectralSubtraction (reference/signal_spectral_subtraction.h):
// its noise estimate is state, kept in persistent memory allocated and zeroed in Prepare, so it
// carries over between Executes and a new load starts it over as TFLite Micro's Reset does.
// Args: input 0, num_channels 1, smoothing 2, one_minus_smoothing 3, alternate_smoothing 4,
// alternate_one_minus_smoothing 5, min_signal_remaining 6, smoothing_bits 7,
// spectral_subtraction_bits 8 (Ints), clamping Bool 9, zero_points 10, scales 11 (unused),
// output 12, noise_estimate 13.

#include <cstring>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"
#include "runtime/kernels/reference/signal_spectral_subtraction.h"

namespace boardlab::runtime::kernels {
namespace {

constexpr const char* kOp = "signal_filter_bank_spectral_subtraction";

// The five coefficients, int32 in the program, uint32 in the arithmetic as in TFLite Micro.
Error ReadCoefficients(Args args, SpectralSubtractionParams& p) {
  uint32_t* fields[] = {&p.smoothing, &p.one_minus_smoothing, &p.alternate_smoothing,
                        &p.alternate_one_minus_smoothing, &p.min_signal_remaining};
  for (size_t i = 0; i < 5; ++i) {
    int32_t v = 0;
    RT_RETURN_IF_ERROR(IntArg(kOp, args, 2 + i, &v));
    *fields[i] = static_cast<uint32_t>(v);
  }
  return Error::kOk;
}

Error ReadParams(Args args, SpectralSubtractionParams& p) {
  RT_RETURN_IF_ERROR(IntArg(kOp, args, 1, &p.channels));
  RT_RETURN_IF_ERROR(ReadCoefficients(args, p));
  RT_RETURN_IF_ERROR(IntArg(kOp, args, 7, &p.smoothing_bits));
  RT_RETURN_IF_ERROR(IntArg(kOp, args, 8, &p.spectral_subtraction_bits));
  RT_RETURN_IF_ERROR(BoolArg(kOp, args, 9, &p.clamping));
  RT_CHECK_OR_RETURN_ERROR(
      p.smoothing_bits >= 0 && p.smoothing_bits <= 31 && p.spectral_subtraction_bits >= 0 &&
          p.spectral_subtraction_bits <= 63,
      kInvalidProgram,
      "%s: smoothing_bits %d outside 0..31 or spectral_subtraction_bits %d "
      "outside 0..63",
      kOp, static_cast<int>(p.smoothing_bits), static_cast<int>(p.spectral_subtraction_bits));
  return Error::kOk;
}

bool HoldsChannels(const TensorView& t, int32_t channels) {
  return t.rank == 1 && t.dims[0] == channels;
}

}  // namespace

Error SignalSpectralSubtractionPrepare(KernelContext& ctx, Args args) {
  RT_RETURN_IF_ERROR(CheckArgCount(kOp, args, 14));
  TensorView *in, *out, *noise;
  RT_RETURN_IF_ERROR(TensorArg(kOp, args, 0, ScalarType::kUInt32, &in));
  RT_RETURN_IF_ERROR(TensorArg(kOp, args, 12, ScalarType::kUInt32, &out));
  RT_RETURN_IF_ERROR(TensorArg(kOp, args, 13, ScalarType::kUInt32, &noise));
  auto* d = static_cast<OpDataSignalSpectralSubtraction*>(ctx.op_data);
  RT_RETURN_IF_ERROR(ReadParams(args, d->params));
  const int32_t channels = d->params.channels;
  RT_CHECK_OR_RETURN_ERROR(channels > 0 && HoldsChannels(*in, channels) &&
                               HoldsChannels(*out, channels) && HoldsChannels(*noise, channels),
                           kInvalidProgram,
                           "%s: input, output and noise_estimate uint32 [num_channels %d]", kOp,
                           static_cast<int>(channels));
  const size_t bytes = static_cast<size_t>(channels) * sizeof(uint32_t);
  RT_CHECK_OR_RETURN_ERROR(ctx.persistent != nullptr, kMemoryAllocationFailed,
                           "%s: no persistent memory for the noise estimate", kOp);
  d->noise_estimate = static_cast<uint32_t*>(ctx.persistent->Allocate(bytes, alignof(uint32_t)));
  RT_CHECK_OR_RETURN_ERROR(d->noise_estimate != nullptr, kMemoryAllocationFailed,
                           "%s: %lu bytes for the noise estimate", kOp,
                           static_cast<unsigned long>(bytes));
  std::memset(d->noise_estimate, 0, bytes);  // every load starts from silence
  return Error::kOk;
}

Error SignalSpectralSubtractionEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataSignalSpectralSubtraction*>(ctx.op_data);
  RT_RETURN_IF_ERROR(spectral_subtraction_u32(d->params, args[0]->tensor->As<const uint32_t>(),
                                              d->noise_estimate, args[12]->tensor->As<uint32_t>()));
  std::memcpy(args[13]->tensor->As<uint32_t>(), d->noise_estimate,
              static_cast<size_t>(d->params.channels) * sizeof(uint32_t));
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
