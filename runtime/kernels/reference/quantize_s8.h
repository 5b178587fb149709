#pragma once

// QUANTIZE and DEQUANTIZE, bit-exact with TFLite Micro's reference kernels:
// - quantize_f32_s8: out = clamp(round_half_away(x / scale) + zp), the division in float.
// - requantize_s8 (int8 -> int8 QUANTIZE): out = clamp(MBQM(x - in_zp, m, s) + out_zp) with
//   m, s = QuantizeMultiplier(in_scale / out_scale).
// - dequantize_s8_f32: out = float(double(scale) * (x - zp)).

#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

[[nodiscard]] Error quantize_f32_s8(float scale, int32_t zero_point, int64_t size,
                                    const float* input, int8_t* output);

struct RequantizeParams {
  int32_t input_zero_point = 0, output_zero_point = 0;
  int32_t multiplier = 0, shift = 0;
};
[[nodiscard]] Error requantize_s8(const RequantizeParams& params, int64_t size, const int8_t* input,
                                  int8_t* output);

[[nodiscard]] Error dequantize_s8_f32(double scale, int32_t zero_point, int64_t size,
                                      const int8_t* input, float* output);

}  // namespace boardlab::runtime::kernels
