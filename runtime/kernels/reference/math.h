#pragma once

// Element-wise math ops, bit-exact with TFLite Micro's reference kernels (elementwise.cc,
// exp.cc, floor.cc, round.cc, elu.cc, prelu.cc):
// - float32 EXP, LOG, SQRT, RSQRT (1 / sqrt), SQUARE (x * x), ROUND (half to even, as
//   reference_ops::Round), FLOOR and ELU (x < 0 ? expm1(x) : x), with ExpF / LogF / Expm1F of
//   float_math.h for the transcendental ones.
// - RSQRT int8: v = q - input_zp; v = 0 gives 127; else (m, s) = InvSqrtQuantizedMultiplier(v),
//   d = MBQM(1, m, s + 20) and out = clamp(MBQM(d, multiplier, shift - 20) + output_zp) with
//   (multiplier, shift) = QuantizeMultiplier(1 / (sqrt(in_scale) * out_scale)); an input below
//   the zero point is an error, as in TFLite Micro.
// - ELU int8: a 256-entry table, entry q = clamp(round(f(in_scale * (q - in_zp)) / out_scale)
//   + out_zp) with f(x) = x < 0 ? exp(x) - 1 : x, all in float as TFLite Micro builds it.
// - PRELU: v = q - input_zp; v >= 0 gives MBQM(v, m1, s1), else MBQM(v * (a - alpha_zp), m2,
//   s2); plus output_zp, clamped. m1 = in_scale / out_scale, m2 = in_scale * alpha_scale /
//   out_scale. float32: x >= 0 ? x : x * alpha.

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/broadcast.h"

namespace boardlab::runtime::kernels {

enum class FloatUnary : uint8_t { kExp, kLog, kSqrt, kRsqrt, kSquare, kRound, kFloor, kElu };

[[nodiscard]] Error float_unary_f32(FloatUnary op, int64_t count, const float* input,
                                    float* output);

struct RsqrtParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t multiplier = 0, shift = 0;  // QuantizeMultiplier(1 / (sqrt(in_scale) * out_scale))
};

[[nodiscard]] Error rsqrt_s8(const RsqrtParams& params, int64_t count, const int8_t* input,
                             int8_t* output);

/// TFLite Micro's ELU table: entry static_cast<uint8_t>(q) holds the output for input q.
void BuildEluTable(float input_scale, int32_t input_zero_point, float output_scale,
                   int32_t output_zero_point, int8_t table[256]);

[[nodiscard]] Error lookup_s8(const int8_t table[256], int64_t count, const int8_t* input,
                              int8_t* output);

struct PreluParams {
  int32_t input_offset = 0;  // -input zero point
  int32_t alpha_offset = 0;  // -alpha zero point
  int32_t output_offset = 0;
  int32_t multiplier_1 = 0, shift_1 = 0;  // in_scale / out_scale
  int32_t multiplier_2 = 0, shift_2 = 0;  // in_scale * alpha_scale / out_scale
};

[[nodiscard]] Error prelu_s8(const PreluParams& params, const BroadcastStrides& strides,
                             const int8_t* input, const int8_t* alpha, int8_t* output);
/// PRELU 16x8: int16 input and output, int8 alpha (TFLite Micro's only int16 combination).
[[nodiscard]] Error prelu_s16(const PreluParams& params, const BroadcastStrides& strides,
                              const int16_t* input, const int8_t* alpha, int16_t* output);
[[nodiscard]] Error prelu_f32(const BroadcastStrides& strides, const float* input,
                              const float* alpha, float* output);

}  // namespace boardlab::runtime::kernels
