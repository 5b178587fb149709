#pragma once

// QUANTIZE and DEQUANTIZE, bit-exact with TFLite Micro's reference kernels (int8, and int16 for
// 16x8 models):
// - quantize_f32_s8 / _s16: out = clamp(round_half_away(x / scale) + zp), the division in float.
// - requantize_* (int8 or int16 -> int8 or int16 QUANTIZE): out = clamp(MBQM(x - in_zp, m, s) +
//   out_zp) with m, s = QuantizeMultiplier(in_scale / out_scale), clamped to the output type.
// - dequantize_s8_f32 / _s16_f32: out = float(double(scale) * (x - zp)).

#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

[[nodiscard]] Error quantize_f32_s8(float scale, int32_t zero_point, int64_t size,
                                    const float* input, int8_t* output);

[[nodiscard]] Error quantize_f32_s16(float scale, int32_t zero_point, int64_t size,
                                     const float* input, int16_t* output);

struct RequantizeParams {
  int32_t input_zero_point = 0, output_zero_point = 0;
  int32_t multiplier = 0, shift = 0;
};
[[nodiscard]] Error requantize_s8(const RequantizeParams& params, int64_t size, const int8_t* input,
                                  int8_t* output);
[[nodiscard]] Error requantize_s8_s16(const RequantizeParams& params, int64_t size,
                                      const int8_t* input, int16_t* output);
[[nodiscard]] Error requantize_s16_s8(const RequantizeParams& params, int64_t size,
                                      const int16_t* input, int8_t* output);
[[nodiscard]] Error requantize_s16(const RequantizeParams& params, int64_t size,
                                   const int16_t* input, int16_t* output);

[[nodiscard]] Error dequantize_s8_f32(double scale, int32_t zero_point, int64_t size,
                                      const int8_t* input, float* output);
[[nodiscard]] Error dequantize_s16_f32(double scale, int32_t zero_point, int64_t size,
                                       const int16_t* input, float* output);

}  // namespace boardlab::runtime::kernels
