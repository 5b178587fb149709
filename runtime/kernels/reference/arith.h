#pragma once

// DIV, SQUARED_DIFFERENCE, ADD_N and CUMSUM, bit-exact with TFLite Micro's reference kernels
// (div.cc, squared_difference.cc, add_n.cc, cumsum.cc). MBQM = MultiplyByQuantizedMultiplier,
// MBQM< = MultiplyByQuantizedMultiplierSmallerThanOneExp (the same with shift <= 0).
// - DIV int8: v1 = q1 - zp1, v2 = q2 - zp2 (signs moved so that v2 > 0); r, rs =
//   reciprocal of v2 normalised into [1, 2) (GetReciprocal); h = leading sign bits of v1;
//   u = SRDHM(v1 << h, r); out = clamp(zp_out + RDBPOT(SRDHM(u, m), h + rs - shift)) with
//   (m, shift) = QuantizeMultiplier(s1 / (s2 * s_out)) in float32. A divisor equal to its zero
//   point fails the run (TFLite Micro's arithmetic is undefined there). Where h + rs - shift
//   exceeds 31 (a small numerator over a large divisor with a small rescale) TFLite's rounding
//   shift leaves its defined range; boardlab reproduces what TFLite Micro computes on a
//   Cortex-M there: 1 for a numerator >= 0, -1 below (see RoundingDivideByAnyPOT in arith.cc),
//   plus the output zero point. Where the exponent is negative (a rescale above 2^23) it shifts
//   left, saturating.
// - DIV float32 / int32: a / b clamped to the fused activation; int32 division by zero fails.
// - SQUARED_DIFFERENCE int8: left shift 7; each operand MBQM<(v << 7, m_i, s_i) with m_i =
//   s_i / (2 max(s1, s2)); d = difference; out = clamp(MBQM(d * d, m, s) + zp_out), m =
//   (2 max)^2 / (2^14 s_out). float32 / int32: (a - b)^2 (int32 wrapping).
// - ADD_N int8: left shift 20; each input MBQM<((q - zp) << 20, m_in, s_in), m_in = 1 / 2; the
//   sum starts from the rescaled -zp, exactly as TFLite Micro's loop does (its comment says 0,
//   the code adds the offset once more); out = clamp(MBQM<(sum, m_out, s_out) + zp_out), m_out
//   = 2 s_in / (2^20 s_out). float32: sum in input order from 0.
// - CUMSUM: the same int8 arithmetic along one axis (the running sum starts from the rescaled
//   -zp too), exclusive (element i sums the elements before it) and reverse variants; float32
//   sums in order.

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

struct DivParams {
  int32_t input1_offset = 0, input2_offset = 0;  // -zero points
  int32_t output_offset = 0;
  int32_t output_multiplier = 0, output_shift = 0;
  int32_t act_min = -128, act_max = 127;
};

[[nodiscard]] Error div_s8(const DivParams& params, const BroadcastStrides& strides,
                           const int8_t* a, const int8_t* b, int8_t* output);
[[nodiscard]] Error div_s32(const BroadcastStrides& strides, const int32_t* a, const int32_t* b,
                            int32_t act_min, int32_t act_max, int32_t* output);
[[nodiscard]] Error div_f32(const BroadcastStrides& strides, const float* a, const float* b,
                            float act_min, float act_max, float* output);

struct SquaredDifferenceParams {
  int32_t input1_offset = 0, input2_offset = 0, output_offset = 0;
  int32_t left_shift = 7;
  int32_t input1_multiplier = 0, input1_shift = 0;
  int32_t input2_multiplier = 0, input2_shift = 0;
  int32_t output_multiplier = 0, output_shift = 0;
};

[[nodiscard]] Error squared_difference_s8(const SquaredDifferenceParams& params,
                                          const BroadcastStrides& strides, const int8_t* a,
                                          const int8_t* b, int8_t* output);
/// SQUARED_DIFFERENCE 16x8: left shift 0, zero points 0, clamped to int16.
[[nodiscard]] Error squared_difference_s16(const SquaredDifferenceParams& params,
                                           const BroadcastStrides& strides, const int16_t* a,
                                           const int16_t* b, int16_t* output);
[[nodiscard]] Error squared_difference_s32(const BroadcastStrides& strides, const int32_t* a,
                                           const int32_t* b, int32_t* output);
[[nodiscard]] Error squared_difference_f32(const BroadcastStrides& strides, const float* a,
                                           const float* b, float* output);

/// ADD_N and CUMSUM's int8 rescaling: each value (q - zp) << left_shift times the input
/// multiplier, the sum times the output multiplier.
struct SumRescale {
  int32_t input_offset = 0;  // -zero point
  int32_t output_offset = 0;
  int32_t left_shift = 20;
  int32_t input_multiplier = 0, input_shift = 0;
  int32_t output_multiplier = 0, output_shift = 0;
};

[[nodiscard]] Error add_n_s8(const SumRescale& params, int64_t count, const int8_t* const* inputs,
                             int32_t num_inputs, int8_t* output);
[[nodiscard]] Error add_n_f32(int64_t count, const float* const* inputs, int32_t num_inputs,
                              float* output);

struct CumsumSpec {
  ShapeN shape;
  int32_t axis = 0;  // in [0, rank)
  bool exclusive = false, reverse = false;
};

[[nodiscard]] Error cumsum_s8(const SumRescale& params, const CumsumSpec& spec, const int8_t* input,
                              int8_t* output);
[[nodiscard]] Error cumsum_f32(const CumsumSpec& spec, const float* input, float* output);

}  // namespace boardlab::runtime::kernels
