#pragma once

// TFLite Micro's filter bank spectral subtraction (signal/src/filter_bank_spectral_subtraction),
// bit-exact with its portable C++ on GCC (host and Cortex-M). Per channel i, with the even
// channels' coefficients (smoothing, one_minus_smoothing) and the odd channels' alternates:
//   scaled   = in[i] << smoothing_bits                                   (32 bits, wraps)
//   noise[i] = (scaled x smoothing + noise[i] x one_minus_smoothing)
//              >> spectral_subtraction_bits                 (64-bit sum wraps, kept to 32 bits)
//   estimate = min(noise[i], scaled); with clamping noise[i] = estimate too
//   floor    = (in[i] x min_signal_remaining) >> spectral_subtraction_bits (kept to 32 bits)
//   out[i]   = max((scaled - estimate) >> smoothing_bits, floor)
// The noise estimate is the op's state: it carries from one call to the next.

#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

/// The options of SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION. The coefficients are the flexbuffer's
/// int32 values as TFLite Micro keeps them: as uint32.
struct SpectralSubtractionParams {
  int32_t channels = 0;
  uint32_t smoothing = 0;
  uint32_t one_minus_smoothing = 0;
  uint32_t alternate_smoothing = 0;
  uint32_t alternate_one_minus_smoothing = 0;
  uint32_t min_signal_remaining = 0;
  int32_t smoothing_bits = 0;             // 0..31
  int32_t spectral_subtraction_bits = 0;  // 0..63
  bool clamping = false;
};

/// Updates `noise_estimate` (p.channels entries, the state) from `input` and writes `output`.
/// kInvalidArgument when a shift is outside its range.
[[nodiscard]] Error spectral_subtraction_u32(const SpectralSubtractionParams& p,
                                             const uint32_t* input, uint32_t* noise_estimate,
                                             uint32_t* output);

}  // namespace boardlab::runtime::kernels
