#pragma once

// Bit-exact integer arithmetic shared by the int8 reference kernels: the fixed-point primitives
// of shared/reference/tflite-int8.md section 9 (double-rounding requantization, as TFLite Micro
// and CMSIS-NN do it) and the Q-format exp / logistic / tanh / reciprocal that TFLite Micro's
// SOFTMAX, LOGISTIC and TANH int8 kernels evaluate with gemmlowp's fixed-point scheme.
//
// Usage:
//   int32_t acc = ...;  // int32 accumulator
//   acc = MultiplyByQuantizedMultiplier(acc, multiplier, shift) + output_zp;
//   int8_t y = ClampToInt8(acc, act_min, act_max);
//
// Everything here is header-only, constexpr-free inline integer code: no floating point, no
// allocation, usable on Cortex-M and on the host.

#include <cstdint>

namespace boardlab::runtime::kernels {

inline constexpr int32_t kInt32Min = -2147483647 - 1;
inline constexpr int32_t kInt32Max = 2147483647;

inline int32_t Min32(int32_t a, int32_t b) { return a < b ? a : b; }
inline int32_t Max32(int32_t a, int32_t b) { return a > b ? a : b; }

/// Clamps `x` into [lo, hi] and narrows to int8; lo/hi must lie in [-128, 127].
inline int8_t ClampToInt8(int32_t x, int32_t lo, int32_t hi) {
  return static_cast<int8_t>(x < lo ? lo : (x > hi ? hi : x));
}

/// Clamps `x` into [lo, hi] and narrows to int16; lo/hi must lie in [-32768, 32767].
inline int16_t ClampToInt16(int32_t x, int32_t lo, int32_t hi) {
  return static_cast<int16_t>(x < lo ? lo : (x > hi ? hi : x));
}

/// round(a * b / 2^31), ties toward +infinity; INT32_MIN * INT32_MIN saturates to INT32_MAX.
inline int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == kInt32Min && b == kInt32Min) return kInt32Max;
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  // Division (not a shift) on purpose: it truncates toward zero, which is what makes the nudge
  // give ties toward +infinity for negative products too.
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

/// x / 2^exponent, rounded half away from zero; exponent in [0, 31].
inline int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/// x * 2^exponent saturated to int32, exponent >= 0.
inline int32_t SaturatingLeftShift(int32_t x, int exponent) {
  const int64_t r = static_cast<int64_t>(x) * (int64_t{1} << exponent);
  return r > kInt32Max ? kInt32Max : (r < kInt32Min ? kInt32Min : static_cast<int32_t>(r));
}

/// x * 2^exponent for any sign of exponent: a saturating left shift or a rounding right shift
/// (gemmlowp's SaturatingRoundingMultiplyByPOT).
inline int32_t SaturatingRoundingMultiplyByPOT(int32_t x, int exponent) {
  return exponent >= 0 ? SaturatingLeftShift(x, exponent) : RoundingDivideByPOT(x, -exponent);
}

/// The reference requantization: x * multiplier * 2^(shift - 31), rounded twice (first the
/// doubling high multiply, then the right shift), exactly like TFLite Micro without
/// TFLITE_SINGLE_ROUNDING. The left shift happens in int32 as in the reference; callers keep
/// x * 2^shift in range (true for every accumulator the kernels produce).
inline int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  return RoundingDivideByPOT(
      SaturatingRoundingDoublingHighMul(static_cast<int32_t>(static_cast<uint32_t>(x) << left),
                                        multiplier),
      right);
}

/// The requantization of a 64-bit accumulator (the 16x8 kernels with an int64 bias), as TFLite
/// Micro's int64 MultiplyByQuantizedMultiplier computes it in both rounding modes: the multiplier
/// is first rounded to 16 bits (capped at 0x7FFF), then one rounding shift by 15 - shift.
/// `shift` must lie in [-31, 7] (Prepare checks it); the products wrap like the reference's
/// int64 arithmetic for accumulators beyond its assumed |x| < 2^47.
inline int32_t MultiplyByQuantizedMultiplier64(int64_t x, int32_t multiplier, int shift) {
  const int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - shift;
  const uint64_t product = static_cast<uint64_t>(x) * static_cast<uint64_t>(int64_t{reduced}) +
                           (uint64_t{1} << (total_shift - 1));
  return static_cast<int32_t>(static_cast<int64_t>(product) >> total_shift);
}

// acc + bias as the conv-like kernels add it: wrapping like TFLite Micro's int32 addition, or
// saturated (ConvParams::saturate_bias, the NPU engine's rule for hostile payloads); the two
// differ only where the sum overflows.
inline int32_t AddBias(int32_t acc, int32_t bias, bool saturate) {
  if (!saturate) {
    return static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(bias));
  }
  const int64_t sum = int64_t{acc} + bias;
  return static_cast<int32_t>(sum < kInt32Min ? kInt32Min : sum > kInt32Max ? kInt32Max : sum);
}

/// Number of leading zero bits of a 32-bit value (32 for 0).
inline int CountLeadingZeros32(uint32_t x) {
  if (x == 0) return 32;
  return __builtin_clz(x);
}

/// Number of bits after the sign bit that equal it (31 for 0 and -1), TFLite's
/// CountLeadingSignBits: the left shift a value takes without overflowing.
inline int CountLeadingSignBits32(int32_t x) {
  const uint32_t u = static_cast<uint32_t>(x);
  return CountLeadingZeros32(x < 0 ? ~u : u) - 1;
}

// ---------------------------------------------------------------------------------------------
// Fixed-point transcendental functions. A value "in Qi" is a raw int32 with i integer bits and
// 31 - i fractional bits. The constants are the rounded Q-format encodings of the named reals
// (e.g. exp(-1/8) in Q0.31); the polynomial, barrel shifter and Newton-Raphson steps are the
// published gemmlowp algorithms that TFLite's int8 SOFTMAX/LOGISTIC/TANH are defined by, so the
// raw results match bit for bit.
// ---------------------------------------------------------------------------------------------

namespace fixed_point {

/// Product of a Qi and a Qj value, as a Q(i+j) value.
inline int32_t Mul(int32_t a, int32_t b) { return SaturatingRoundingDoublingHighMul(a, b); }

/// Re-expresses a Q`from` value in Q`to` (saturating when the range shrinks).
inline int32_t Rescale(int32_t x, int from_integer_bits, int to_integer_bits) {
  return SaturatingRoundingMultiplyByPOT(x, from_integer_bits - to_integer_bits);
}

/// 1.0 in Qi (the largest value for Q0, where 1.0 itself is not representable).
inline int32_t One(int integer_bits) {
  return integer_bits == 0 ? kInt32Max : static_cast<int32_t>(int64_t{1} << (31 - integer_bits));
}

/// (a + b) / 2 rounded half away from zero, without overflow.
inline int32_t RoundingHalfSum(int32_t a, int32_t b) {
  const int64_t sum = static_cast<int64_t>(a) + b;
  return static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
}

/// exp(a) for a in [-1/4, 0), a and result in Q0: 4th-order Taylor expansion around -1/8.
inline int32_t ExpOnIntervalNegativeQuarterToZero(int32_t a) {
  constexpr int32_t kExpMinusOneEighth = 1895147668;  // exp(-1/8) in Q0.31
  constexpr int32_t kOneThird = 715827883;            // 1/3 in Q0.31
  const int32_t x = a + (1 << 28);                    // a + 1/8
  const int32_t x2 = Mul(x, x);
  const int32_t x3 = Mul(x2, x);
  const int32_t x4 = Mul(x2, x2);
  const int32_t x4_over_4 = RoundingDivideByPOT(x4, 2);
  const int32_t poly = RoundingDivideByPOT(Mul(x4_over_4 + x3, kOneThird) + x2, 1);
  return kExpMinusOneEighth + Mul(kExpMinusOneEighth, x + poly);
}

/// exp(a) for a <= 0 given in Q`integer_bits`; result in Q0. The argument is split into a
/// multiple of 1/4 (applied as a product of precomputed exp(-2^k) factors) and a remainder in
/// [-1/4, 0) evaluated by the polynomial above.
inline int32_t ExpOnNegativeValues(int32_t a, int integer_bits) {
  const int fractional_bits = 31 - integer_bits;
  const int32_t one_quarter = static_cast<int32_t>(int32_t{1} << (fractional_bits - 2));
  const int32_t mask = one_quarter - 1;
  const int32_t a_mod_quarter_minus_one_quarter = (a & mask) - one_quarter;
  int32_t result =
      ExpOnIntervalNegativeQuarterToZero(Rescale(a_mod_quarter_minus_one_quarter, integer_bits, 0));
  const int32_t remainder = a_mod_quarter_minus_one_quarter - a;
  // exp(-2^k) in Q0.31 for k = -2 .. 4.
  constexpr int32_t kFactors[7] = {1672461947, 1302514674, 790015084, 290630308,
                                   39332535,   720401,     242};
  for (int k = -2; k <= 4; ++k) {
    if (integer_bits > k) {
      const int bit = fractional_bits + k;
      if (remainder & static_cast<int32_t>(uint32_t{1} << bit)) {
        result = Mul(result, kFactors[k + 2]);
      }
    }
  }
  if (integer_bits > 5) {
    // Below -32 the result underflows to zero.
    const int32_t clamp = -static_cast<int32_t>(int32_t{1} << (36 - integer_bits));
    if (a < clamp) result = 0;
  }
  if (a == 0) result = One(0);
  return result;
}

/// Newton-Raphson estimate of 2 / (1 + a) in Q2 for a in [0, 1] given in Q0; shared by the
/// reciprocal and tanh helpers below.
inline int32_t TwoOverOnePlusXQ2(int32_t a) {
  const int32_t half_denominator = RoundingHalfSum(a, One(0));  // Q0
  constexpr int32_t k48Over17 = 1515870810;                     // Q2
  constexpr int32_t kNeg32Over17 = -1010580540;                 // Q2
  int32_t x = k48Over17 + Mul(half_denominator, kNeg32Over17);  // Q2
  for (int i = 0; i < 3; ++i) {
    const int32_t half_denominator_times_x = Mul(half_denominator, x);  // Q2
    const int32_t one_minus = One(2) - half_denominator_times_x;        // Q2
    x = x + Rescale(Mul(x, one_minus), 4, 2);                           // Q4 -> Q2
  }
  return x;
}

/// 1 / (1 + a) for a in [0, 1], a and result in Q0.
inline int32_t OneOverOnePlusX(int32_t a) {
  // x approximates 1 / half_denominator in Q2; halving it (reinterpreting as Q1) and rescaling
  // to Q0 gives 1 / (1 + a).
  return Rescale(TwoOverOnePlusXQ2(a), 1, 0);
}

/// (1 - a) / (1 + a) for a in [0, 1], a and result in Q0.
inline int32_t OneMinusXOverOnePlusX(int32_t a) {
  return Rescale(TwoOverOnePlusXQ2(a) - One(2), 2, 0);
}

/// logistic(a) with a in Q`integer_bits`, result in Q0.
inline int32_t Logistic(int32_t a, int integer_bits) {
  if (a == 0) return 1 << 30;  // exactly 0.5
  const int32_t abs_a = a > 0 ? a : -a;
  const int32_t positive = OneOverOnePlusX(ExpOnNegativeValues(-abs_a, integer_bits));
  return a > 0 ? positive : One(0) - positive;
}

/// tanh(a) with a in Q`integer_bits`, result in Q0.
inline int32_t Tanh(int32_t a, int integer_bits) {
  if (a == 0) return 0;
  const int32_t neg_abs = a < 0 ? a : -a;
  // exp(2 * neg_abs): the same raw value read with one more integer bit is doubled.
  const int32_t t = OneMinusXOverOnePlusX(ExpOnNegativeValues(neg_abs, integer_bits + 1));
  return a < 0 ? -t : t;
}

/// 1 / x for a positive Q`x_integer_bits` value: returns the reciprocal of x normalised into
/// [1, 2) as a Q0 value and sets `*num_bits_over_unit` to the normalisation exponent.
inline int32_t GetReciprocal(int32_t x, int x_integer_bits, int* num_bits_over_unit) {
  const int headroom_plus_one = CountLeadingZeros32(static_cast<uint32_t>(x));
  *num_bits_over_unit = x_integer_bits - headroom_plus_one;
  const int32_t shifted_minus_one = static_cast<int32_t>(
      (static_cast<uint32_t>(x) << headroom_plus_one) - (static_cast<uint32_t>(1) << 31));
  return OneOverOnePlusX(shifted_minus_one);
}

/// 1 / sqrt(input) for an integer input >= 0 as a multiplier and shift (TFLite's
/// GetInvSqrtQuantizedMultiplierExp): `input` is normalised by pairs of bits into [2^27, 2^29),
/// five Newton-Raphson steps x <- 1.5 x - (input / 2) x^3 run in Q3, and the result is scaled by
/// sqrt(2) / 2. Inputs 0 and 1 give (INT32_MAX, 0). `reverse_shift` is -1 for TFLite's
/// "left shift is positive" convention.
inline void InvSqrtQuantizedMultiplier(int32_t input, int reverse_shift, int32_t* multiplier,
                                       int* shift) {
  if (input <= 1) {
    *multiplier = kInt32Max;
    *shift = 0;
    return;
  }
  *shift = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++*shift;
  }
  const int bit_pairs = (CountLeadingZeros32(static_cast<uint32_t>(input)) - 1) / 2 - 1;
  *shift -= bit_pairs;
  input <<= 2 * bit_pairs;
  const int32_t half_input = RoundingDivideByPOT(input >> 1, 1);  // Q3
  const int32_t half_three = (1 << 28) + (1 << 27);               // 1.5 in Q3
  int32_t x = One(3);
  for (int i = 0; i < 5; ++i) {
    const int32_t x3 = Rescale(Mul(Mul(x, x), x), 9, 3);
    // The difference of two Q6 products wraps as gemmlowp's raw subtraction does.
    const int32_t diff = static_cast<int32_t>(static_cast<uint32_t>(Mul(half_three, x)) -
                                              static_cast<uint32_t>(Mul(half_input, x3)));
    x = Rescale(diff, 6, 3);
  }
  constexpr int32_t kHalfSqrt2 = 1518500250;  // sqrt(2) / 2 in Q0
  *multiplier = Mul(x, kHalfSqrt2);
  if (*shift < 0) {
    *multiplier = static_cast<int32_t>(static_cast<uint32_t>(*multiplier) << -*shift);
    *shift = 0;
  }
  *shift *= reverse_shift;
}

/// a + b and a - b saturated to int32 (the log below accumulates with them).
inline int32_t SaturatingAdd(int32_t a, int32_t b) {
  const int64_t s = int64_t{a} + b;
  return static_cast<int32_t>(s > kInt32Max ? kInt32Max : (s < kInt32Min ? kInt32Min : s));
}
inline int32_t SaturatingSub(int32_t a, int32_t b) {
  const int64_t s = int64_t{a} - b;
  return static_cast<int32_t>(s > kInt32Max ? kInt32Max : (s < kInt32Min ? kInt32Min : s));
}

/// Raw int32 addition that wraps, as gemmlowp's FixedPoint operator+ does.
inline int32_t WrappingAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

/// log(x) for x >= 1 given in Q`input_integer_bits`, result in Q`output_integer_bits` (TFLite's
/// log_x_for_x_greater_than_or_equal_to_1, which LOG_SOFTMAX int8 is defined by). x is written
/// as 2^k * r with r in [sqrt(1/2), 1) in two ways (r_a from the raw headroom, r_b after a
/// pre-multiplication by sqrt(1/2)); the smaller r and the matching exponent, shifted by a
/// quarter, feed log(r) = a rational approximation around 2^(-1/4): num / (1 + denom - 1).
/// The sum is accumulated with one extra integer bit so that k * log(2) cannot saturate.
inline int32_t LogXForXGreaterThanOrEqualTo1(int32_t x, int input_integer_bits,
                                             int output_integer_bits) {
  const int accum_bits = output_integer_bits + 1;
  constexpr int32_t kLog2 = 1488522236;          // log(2) in Q0
  constexpr int32_t kSqrtSqrtHalf = 1805811301;  // 0.5^(1/4)
  constexpr int32_t kSqrtHalf = 1518500250;      // 0.5^(1/2)
  constexpr int32_t kOneQuarter = 536870912;     // 1/4
  constexpr int32_t kAlphaN = 117049297;         // 11/240 * 2^(1/4)
  constexpr int32_t kAlphaD = 127690142;         // 1/20 * 2^(1/4)
  constexpr int32_t kAlphaI = 1057819769;        // 2 / 2^(1/4) - 2^(1/4)
  constexpr int32_t kAlphaF = 638450708;         // 1/4 * 2^(1/4)
  const int32_t shifted_quarter = Rescale(kOneQuarter, 0, accum_bits);

  // x's raw bits read as Q0: the exponent is worked out from the headroom here.
  const int z_a_headroom_plus_1 = CountLeadingZeros32(static_cast<uint32_t>(x));
  const int32_t r_a_tmp = SaturatingRoundingMultiplyByPOT(x, z_a_headroom_plus_1 - 1);
  const int32_t r_a = SaturatingRoundingMultiplyByPOT(Mul(r_a_tmp, kSqrtHalf), 1);
  const int32_t z_a_pow_2_adj = SaturatingAdd(
      SaturatingRoundingMultiplyByPOT(input_integer_bits - z_a_headroom_plus_1, 31 - accum_bits),
      shifted_quarter);

  const int32_t z_b = Mul(x, kSqrtHalf);
  const int z_b_headroom = CountLeadingZeros32(static_cast<uint32_t>(z_b)) - 1;
  const int32_t r_b = SaturatingRoundingMultiplyByPOT(x, z_b_headroom);
  const int32_t z_b_pow_2_adj = SaturatingSub(
      SaturatingRoundingMultiplyByPOT(input_integer_bits - z_b_headroom, 31 - accum_bits),
      shifted_quarter);

  const int32_t r = Min32(r_a, r_b);
  const int32_t z_pow_2_adj = Max32(z_a_pow_2_adj, z_b_pow_2_adj);

  const int32_t p = RoundingHalfSum(r, kSqrtSqrtHalf);
  int32_t q = WrappingAdd(r, -kSqrtSqrtHalf);
  q = WrappingAdd(q, q);
  const int32_t common_sq = Mul(q, q);
  const int32_t num = WrappingAdd(Mul(q, r), Mul(Mul(q, common_sq), kAlphaN));
  const int32_t denom_minus_one = WrappingAdd(
      Mul(p, WrappingAdd(WrappingAdd(kAlphaI, q), Mul(kAlphaD, common_sq))), Mul(kAlphaF, q));
  const int32_t recip_denom = OneOverOnePlusX(denom_minus_one);
  const int32_t num_scaled = Rescale(num, 0, accum_bits);
  return Rescale(WrappingAdd(Mul(z_pow_2_adj, kLog2), Mul(num_scaled, recip_denom)), accum_bits,
                 output_integer_bits);
}

}  // namespace fixed_point

}  // namespace boardlab::runtime::kernels
