#pragma once

// Elementwise int8 activations, bit-exact with TFLite Micro's reference kernels.
// - logistic_s8 / tanh_s8: x - zp is rescaled to Q4.27 by (input_multiplier,
//   input_left_shift); |x - zp| >= input_range_radius saturates; otherwise the fixed-point
//   logistic (output 1/256, zp -128) or tanh (output 1/128, zp 0) is rounded to 8 bits.
// - relu_s8 / relu_s16 (RELU): out = clamp(MBQM(x - in_zp, m, s) + out_zp, act_min, act_max)
//   with m, s = QuantizeMultiplier(in_scale / out_scale); identity scaling is exact.
// - relu6_s8 / relu6_s16 (RELU6): TFLite Micro clamps the raw input between the input's
//   quantized 0 and 6 and ignores the output quantization (unlike RELU and unlike TFLite, which
//   rescales): out = clamp(x, lower, upper).
// - leaky_relu_s8: x - in_zp >= 0 uses the identity multiplier, else the alpha multiplier.
// - hard_swish_s8: TFLite's 16-bit fixed-point x * relu6(x + 3) / 6 scheme.

#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

struct SigmoidParams {
  int32_t input_zero_point = 0;
  int32_t input_multiplier = 0;
  int32_t input_left_shift = 0;
  int32_t input_range_radius = 0;
};
[[nodiscard]] Error logistic_s8(const SigmoidParams& params, int64_t size, const int8_t* input,
                                int8_t* output);
[[nodiscard]] Error tanh_s8(const SigmoidParams& params, int64_t size, const int8_t* input,
                            int8_t* output);

struct ReluParams {
  int32_t input_zero_point = 0, output_zero_point = 0;
  int32_t multiplier = 0, shift = 0;
  bool identity = false;  // input and output quantization equal: no rescale needed
  int32_t act_min = -128, act_max = 127;
};
[[nodiscard]] Error relu_s8(const ReluParams& params, int64_t size, const int8_t* input,
                            int8_t* output);
/// RELU 16x8: the same on int16 values (zero points 0), act range inside int16.
[[nodiscard]] Error relu_s16(const ReluParams& params, int64_t size, const int16_t* input,
                             int16_t* output);

/// RELU6: `lower` and `upper` are the input's zero point and quantized 6 (inside the type).
[[nodiscard]] Error relu6_s8(int32_t lower, int32_t upper, int64_t size, const int8_t* input,
                             int8_t* output);
[[nodiscard]] Error relu6_s16(int32_t lower, int32_t upper, int64_t size, const int16_t* input,
                              int16_t* output);

struct LeakyReluParams {
  int32_t input_zero_point = 0, output_zero_point = 0;
  int32_t identity_multiplier = 0, identity_shift = 0;
  int32_t alpha_multiplier = 0, alpha_shift = 0;
};
[[nodiscard]] Error leaky_relu_s8(const LeakyReluParams& params, int64_t size, const int8_t* input,
                                  int8_t* output);
/// LEAKY_RELU 16x8: the same on int16 values, clamped to int16.
[[nodiscard]] Error leaky_relu_s16(const LeakyReluParams& params, int64_t size,
                                   const int16_t* input, int16_t* output);

struct HardSwishParams {
  int32_t input_zero_point = 0, output_zero_point = 0;
  int16_t output_multiplier_fixedpoint_int16 = 0;
  int32_t output_multiplier_exponent = 0;  // <= 0
  int16_t reluish_multiplier_fixedpoint_int16 = 0;
  int32_t reluish_multiplier_exponent = 0;
};
[[nodiscard]] Error hard_swish_s8(const HardSwishParams& params, int64_t size, const int8_t* input,
                                  int8_t* output);

/// TFLite's int32 -> int16 multiplier reduction: (m + 2^15) >> 16, capped at INT16_MAX.
int16_t DownScaleInt32ToInt16Multiplier(int32_t multiplier);

}  // namespace boardlab::runtime::kernels
