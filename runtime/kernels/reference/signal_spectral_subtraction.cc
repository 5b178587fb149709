#include "runtime/kernels/reference/signal_spectral_subtraction.h"

namespace boardlab::runtime::kernels {
namespace {

// One channel's step: updates `noise` and returns the output.
uint32_t SubtractChannel(const SpectralSubtractionParams& p, uint32_t in, uint32_t smoothing,
                         uint32_t one_minus_smoothing, uint32_t& noise) {
  const uint32_t scaled = in << p.smoothing_bits;
  // The two products fit 64 bits each; their sum may not, and wraps as in TFLite Micro.
  const uint64_t filtered = static_cast<uint64_t>(scaled) * smoothing +
                            static_cast<uint64_t>(noise) * one_minus_smoothing;
  noise = static_cast<uint32_t>(filtered >> p.spectral_subtraction_bits);
  uint32_t estimate = noise;
  if (estimate > scaled) {
    estimate = scaled;  // the output never goes below 0
    if (p.clamping) noise = scaled;
  }
  const auto floor = static_cast<uint32_t>((static_cast<uint64_t>(in) * p.min_signal_remaining) >>
                                           p.spectral_subtraction_bits);
  const uint32_t subtracted = (scaled - estimate) >> p.smoothing_bits;
  return subtracted > floor ? subtracted : floor;
}

}  // namespace

Error spectral_subtraction_u32(const SpectralSubtractionParams& p, const uint32_t* input,
                               uint32_t* noise_estimate, uint32_t* output) {
  if (p.smoothing_bits < 0 || p.smoothing_bits > 31 || p.spectral_subtraction_bits < 0 ||
      p.spectral_subtraction_bits > 63) {
    return Error::kInvalidArgument;
  }
  for (int32_t i = 0; i < p.channels; ++i) {
    const bool odd = (i & 1) != 0;  // odd channels take the alternate coefficients
    output[i] = SubtractChannel(p, input[i], odd ? p.alternate_smoothing : p.smoothing,
                                odd ? p.alternate_one_minus_smoothing : p.one_minus_smoothing,
                                noise_estimate[i]);
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
