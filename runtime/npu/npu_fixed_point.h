#pragma once

// Bit-exact TFLite / TFLite Micro integer arithmetic for the NPU engine (tflite-int8.md section
// 9): requantization with the double-rounding MultiplyByQuantizedMultiplier, and the gemmlowp
// fixed-point exp / logistic / tanh / reciprocal that the int8 SOFTMAX, LOGISTIC and TANH
// reference kernels evaluate per element. The Neutron hardware computes the same numbers; the
// software engine must match them bit for bit so a model gives identical outputs on the
// simulator, on QEMU and on the board.
//
// Usage:
//   int32_t y = fp::MultiplyByQuantizedMultiplier(acc, multiplier, shift) + output_zp;
//   fp::Q<0> e = fp::ExpOnNegativeValues<5>(fp::Q<5>::FromRaw(x));
//
// Every function is total: arithmetic that would overflow in C++ is done in 64 bits or unsigned
// and wraps exactly like the reference's two's-complement behaviour.

#include <cstdint>

namespace boardlab::runtime::npu::fp {

/// round(a * b / 2^31), ties toward +infinity; INT32_MIN * INT32_MIN saturates.
inline int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  const int64_t ab = static_cast<int64_t>(a) * b;
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

/// x / 2^exponent rounded half away from zero; `exponent` in [0, 31].
inline int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/// The reference requantization (tflite-micro default, double rounding). shift in [-31, 31].
inline int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  // x * 2^left wraps like the reference's int32 multiply (its callers keep it in range).
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(shifted, multiplier), right);
}

inline int32_t WrapAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t WrapSub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}

/// gemmlowp SaturatingRoundingMultiplyByPOT<exponent>.
inline int32_t SaturatingRoundingMultiplyByPOT(int32_t x, int exponent) {
  if (exponent == 0) return x;
  if (exponent < 0) return RoundingDivideByPOT(x, -exponent);
  const int32_t threshold = static_cast<int32_t>((int64_t{1} << (31 - exponent)) - 1);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

/// A gemmlowp FixedPoint<int32_t, kIntegerBits>: raw / 2^(31 - kIntegerBits).
template <int kIntegerBits>
struct Q {
  static constexpr int kFractionalBits = 31 - kIntegerBits;
  int32_t raw = 0;
  static Q FromRaw(int32_t r) { return Q{r}; }
  static Q Zero() { return Q{0}; }
  static Q One() { return Q{kIntegerBits == 0 ? INT32_MAX : int32_t{1} << kFractionalBits}; }
  template <int kExponent>
  static Q ConstantPOT() {
    return Q{int32_t{1} << (kFractionalBits + kExponent)};
  }
};

template <int B>
Q<B> operator+(Q<B> a, Q<B> b) {
  return Q<B>::FromRaw(WrapAdd(a.raw, b.raw));
}
template <int B>
Q<B> operator-(Q<B> a, Q<B> b) {
  return Q<B>::FromRaw(WrapSub(a.raw, b.raw));
}
template <int B>
Q<B> operator-(Q<B> a) {
  return Q<B>::FromRaw(WrapSub(0, a.raw));
}
template <int A, int B>
Q<A + B> operator*(Q<A> a, Q<B> b) {
  return Q<A + B>::FromRaw(SaturatingRoundingDoublingHighMul(a.raw, b.raw));
}

/// gemmlowp Rescale<kDst>: changes the integer bits, saturating.
template <int kDst, int kSrc>
Q<kDst> Rescale(Q<kSrc> x) {
  return Q<kDst>::FromRaw(SaturatingRoundingMultiplyByPOT(x.raw, kSrc - kDst));
}

/// gemmlowp ExactMulByPot<kExponent> (no rounding, no saturation).
template <int kExponent, int B>
Q<B> ExactMulByPot(Q<B> x) {
  if constexpr (kExponent >= 0) {
    return Q<B>::FromRaw(static_cast<int32_t>(static_cast<uint32_t>(x.raw) << kExponent));
  } else {
    return Q<B>::FromRaw(x.raw >> -kExponent);
  }
}

/// gemmlowp RoundingHalfSum.
template <int B>
Q<B> RoundingHalfSum(Q<B> a, Q<B> b) {
  const int64_t sum = static_cast<int64_t>(a.raw) + b.raw;
  const int64_t sign = sum >= 0 ? 1 : -1;
  return Q<B>::FromRaw(static_cast<int32_t>((sum + sign) / 2));
}

/// exp(a) for a in [-1/4, 0).
inline Q<0> ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(Q<0> a) {
  const Q<0> constant_term = Q<0>::FromRaw(1895147668);     // exp(-1/8)
  const Q<0> constant_1_over_3 = Q<0>::FromRaw(715827883);  // 1/3
  const Q<0> x = a + Q<0>::ConstantPOT<-3>();
  const Q<0> x2 = x * x;
  const Q<0> x3 = x2 * x;
  const Q<0> x4 = x2 * x2;
  const Q<0> x4_over_4 = Q<0>::FromRaw(SaturatingRoundingMultiplyByPOT(x4.raw, -2));
  const Q<0> poly = Q<0>::FromRaw(
      SaturatingRoundingMultiplyByPOT((((x4_over_4 + x3) * constant_1_over_3) + x2).raw, -1));
  return constant_term + constant_term * poly;
}

/// exp(a) for a <= 0 (gemmlowp exp_on_negative_values).
template <int kIntegerBits>
Q<0> ExpOnNegativeValues(Q<kIntegerBits> a) {
  using InputQ = Q<kIntegerBits>;
  constexpr int kFractionalBits = InputQ::kFractionalBits;
  const InputQ one_quarter = InputQ::template ConstantPOT<-2>();
  const InputQ mask = InputQ::FromRaw(one_quarter.raw - 1);
  const InputQ a_mod_quarter_minus_one_quarter = InputQ::FromRaw(a.raw & mask.raw) - one_quarter;
  Q<0> result =
      ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(Rescale<0>(a_mod_quarter_minus_one_quarter));
  const int32_t remainder = (a_mod_quarter_minus_one_quarter - a).raw;
  // Barrel shifter: multiply by exp(-2^e) for every set bit of the remainder.
  constexpr int32_t kMultipliers[7] = {1672461947, 1302514674, 790015084, 290630308,
                                       39332535,   720401,     242};
  for (int i = 0; i < 7; ++i) {
    const int exponent = i - 2;
    if (kIntegerBits > exponent) {
      const int shift = kFractionalBits + exponent;
      if (shift >= 0 && shift < 32 && (remainder & static_cast<int32_t>(uint32_t{1} << shift))) {
        result = result * Q<0>::FromRaw(kMultipliers[i]);
      }
    }
  }
  if constexpr (kIntegerBits > 5) {
    constexpr int b = 36 - kIntegerBits;
    if (a.raw < -(int32_t{1} << b)) result = Q<0>::Zero();
  }
  if (a.raw == 0) result = Q<0>::One();
  return result;
}

/// Newton-Raphson 1 / half_denominator in Q2 (shared by the two functions below).
inline Q<2> ReciprocalOfHalfDenominator(Q<0> half_denominator) {
  const Q<2> constant_48_over_17 = Q<2>::FromRaw(1515870810);
  const Q<2> constant_neg_32_over_17 = Q<2>::FromRaw(-1010580540);
  Q<2> x = constant_48_over_17 + half_denominator * constant_neg_32_over_17;
  for (int i = 0; i < 3; ++i) {
    const Q<2> half_denominator_times_x = half_denominator * x;
    const Q<2> one_minus = Q<2>::One() - half_denominator_times_x;
    x = x + Rescale<2>(x * one_minus);
  }
  return x;
}

/// 1 / (1 + a) for a in [0, 1).
inline Q<0> OneOverOnePlusXForXIn01(Q<0> a) {
  const Q<0> half_denominator = RoundingHalfSum(a, Q<0>::One());
  return Rescale<0>(ExactMulByPot<-1>(ReciprocalOfHalfDenominator(half_denominator)));
}

/// (1 - a) / (1 + a) for a in [0, 1).
inline Q<0> OneMinusXOverOnePlusXForXIn01(Q<0> a) {
  const Q<0> half_denominator = RoundingHalfSum(a, Q<0>::One());
  return Rescale<0>(ReciprocalOfHalfDenominator(half_denominator) - Q<2>::One());
}

/// gemmlowp logistic.
template <int kIntegerBits>
Q<0> Logistic(Q<kIntegerBits> a) {
  if (a.raw == 0) return Q<0>::FromRaw(int32_t{1} << 30);
  const bool positive = a.raw > 0;
  const Q<kIntegerBits> abs_input = positive ? a : -a;
  const Q<0> result_if_positive = OneOverOnePlusXForXIn01(ExpOnNegativeValues(-abs_input));
  return positive ? result_if_positive : Q<0>::One() - result_if_positive;
}

/// gemmlowp tanh.
template <int kIntegerBits>
Q<0> Tanh(Q<kIntegerBits> a) {
  if (a.raw == 0) return Q<0>::Zero();
  const bool negative = a.raw < 0;
  const Q<kIntegerBits> n = negative ? a : -a;
  const Q<0> t = OneMinusXOverOnePlusXForXIn01(ExpOnNegativeValues(ExactMulByPot<1>(n)));
  return negative ? -t : t;
}

/// TFLite GetReciprocal: 1 / x for x in Q(x_integer_digits), as a Q0 scale and a shift.
inline int32_t GetReciprocal(int32_t x, int x_integer_digits, int* num_bits_over_unit) {
  const uint32_t ux = static_cast<uint32_t>(x);
  const int headroom_plus_one = ux == 0 ? 32 : __builtin_clz(ux);
  *num_bits_over_unit = x_integer_digits - headroom_plus_one;
  const int32_t shifted_sum_minus_one = static_cast<int32_t>(
      (headroom_plus_one >= 32 ? 0u : (ux << headroom_plus_one)) - (uint32_t{1} << 31));
  return OneOverOnePlusXForXIn01(Q<0>::FromRaw(shifted_sum_minus_one)).raw;
}

// ---- int16 primitives (HARD_SWISH) ------------------------------------------------------------

inline int16_t Saturate16(int32_t v) {
  return static_cast<int16_t>(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v));
}

inline int16_t SaturatingRoundingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  const int32_t ab = static_cast<int32_t>(a) * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

/// TFLite's hard_swish.h SaturatingDoublingHighMul: truncating, not rounding.
inline int16_t SaturatingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  return static_cast<int16_t>((static_cast<int32_t>(a) * b) / (1 << 15));
}

inline int16_t RoundingDivideByPOT16(int16_t x, int exponent) {
  const int16_t mask = static_cast<int16_t>((1 << exponent) - 1);
  const int16_t remainder = static_cast<int16_t>(x & mask);
  const int16_t threshold = static_cast<int16_t>((mask >> 1) + (x < 0 ? 1 : 0));
  return static_cast<int16_t>((x >> exponent) + (remainder > threshold ? 1 : 0));
}

inline int16_t SaturatingLeftShift16(int16_t value, int amount) {
  return Saturate16(static_cast<int32_t>(value) * (1 << amount));
}

}  // namespace boardlab::runtime::npu::fp
