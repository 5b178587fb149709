#pragma once

// TFLite Micro's signal library ops (signal/src, the arithmetic of the audio front-end custom
// ops), bit-exact with its portable C++:
// - window_s16: out = saturate_int16((int32(in) * weight) >> shift), arithmetic shift, the
//   weights repeating every `length` elements (window.cc).
// - fft_auto_scale_s16: m = the largest |in| held in int16 (|-32768| wraps to -32768, as TFLite
//   Micro's MaxAbs16 stores it); bits = max(0, 15 - msb(m)) with msb(x) the 1-based index of the
//   highest set bit of x as uint32 and msb(0) = 32 (GCC's __builtin_clz form TFLite Micro builds
//   with on the host and the Cortex-M); out = in * 2^bits kept to int16 (fft_auto_scale.cc).
// - delay_s16: each row is a stream delayed by `delay` samples: out = (history ++ in)[0, frame),
//   and the history becomes (history ++ in)[frame, frame + delay) (delay.cc's circular buffer,
//   primed with `delay` zeros).

#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

/// Applies an int16 window of `length` weights to each of `rows` rows of `length` inputs.
/// `shift` in 0..31.
[[nodiscard]] Error window_s16(const int16_t* input, const int16_t* weights, int64_t rows,
                               int32_t length, int32_t shift, int16_t* output);

/// Shifts `count` int16 values left by the largest amount their largest magnitude allows and
/// writes the amount to `*scale_bits`.
[[nodiscard]] Error fft_auto_scale_s16(const int16_t* input, int32_t count, int16_t* output,
                                       int32_t* scale_bits);

/// Delays each of `rows` rows of `frame` samples by `delay` samples. `history` holds rows x
/// `delay` samples, the last ones of the stream so far (zeros before the first call); it is
/// updated in place.
[[nodiscard]] Error delay_s16(const int16_t* input, int64_t rows, int32_t frame, int32_t delay,
                              int16_t* history, int16_t* output);

}  // namespace boardlab::runtime::kernels
