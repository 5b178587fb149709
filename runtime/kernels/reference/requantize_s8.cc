#include "runtime/kernels/reference/requantize_s8.h"

#include "runtime/kernels/reference/cpu_features.h"
#include "runtime/kernels/reference/fixed_point_avx2.h"
#include "runtime/kernels/reference/quantized_math.h"

#if BOARDLAB_HAVE_AVX2_PATHS
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace boardlab::runtime::kernels {
namespace {

int8_t RequantizeOne(int32_t acc, int32_t bias, int32_t mult, int32_t shift, const OutputStage& o,
                     bool saturate) {
  const int32_t v = MultiplyByQuantizedMultiplier(AddBias(acc, bias, saturate), mult, shift);
  return ClampToInt8(v + o.output_offset, o.act_min, o.act_max);
}

#if defined(__SSE2__)

// 2^e per lane for e in [-1, 31] (2^-1 -> 0, 2^31 -> 0x80000000 = 2^31 unsigned), through the
// float exponent field: SSE2 has no per-lane variable shift.
inline __m128i PowerOfTwo(__m128i e) {
  const __m128i bits = _mm_slli_epi32(_mm_add_epi32(e, _mm_set1_epi32(127)), 23);
  return _mm_cvttps_epi32(_mm_castsi128_ps(bits));
}

// Low 32 bits of a * b per lane (pmulld is SSE4.1).
inline __m128i MulLo32(__m128i a, __m128i b) {
  const __m128i even = _mm_mul_epu32(a, b);
  const __m128i odd = _mm_mul_epu32(_mm_srli_epi64(a, 32), _mm_srli_epi64(b, 32));
  return _mm_unpacklo_epi32(_mm_shuffle_epi32(even, _MM_SHUFFLE(0, 0, 2, 0)),
                            _mm_shuffle_epi32(odd, _MM_SHUFFLE(0, 0, 2, 0)));
}

// acc + bias saturated to int32: an overflow has both operands' sign differ from the sum's.
inline __m128i SaturatingAdd32(__m128i a, __m128i b) {
  const __m128i sum = _mm_add_epi32(a, b);
  const __m128i overflow =
      _mm_srai_epi32(_mm_and_si128(_mm_xor_si128(a, sum), _mm_xor_si128(b, sum)), 31);
  const __m128i limit = _mm_xor_si128(_mm_srai_epi32(a, 31), _mm_set1_epi32(kInt32Max));
  return _mm_or_si128(_mm_andnot_si128(overflow, sum), _mm_and_si128(overflow, limit));
}

// The two roundings on 64-bit lanes (the even or the odd lanes of the 32-bit vectors, moved to
// the low halves): h = (|a| * m + 2^30 - neg) >> 31 is SaturatingRoundingDoublingHighMul's
// magnitude (ties toward +infinity become toward zero for negative products), then
// (h + 2^(right-1)) * 2^(31-right) >> 31 is RoundingDivideByPOT's (half away from zero).
inline __m128i RoundMagnitudes(__m128i abs_a, __m128i m, __m128i neg, __m128i half, __m128i pw) {
  const __m128i low = _mm_set_epi32(0, -1, 0, -1);
  __m128i h = _mm_add_epi64(_mm_mul_epu32(abs_a, m), _mm_set_epi32(0, 1 << 30, 0, 1 << 30));
  h = _mm_srli_epi64(_mm_sub_epi64(h, _mm_and_si128(neg, _mm_set_epi32(0, 1, 0, 1))), 31);
  h = _mm_add_epi64(h, _mm_and_si128(half, low));
  return _mm_srli_epi64(_mm_mul_epu32(h, pw), 31);
}

// MultiplyByQuantizedMultiplier on four lanes (multipliers >= 0).
inline __m128i MultiplyByQuantizedMultiplier4(__m128i x, __m128i m, __m128i shift) {
  const __m128i zero = _mm_setzero_si128();
  const __m128i left = _mm_andnot_si128(_mm_srai_epi32(shift, 31), shift);
  const __m128i neg_shift = _mm_sub_epi32(zero, shift);
  const __m128i right = _mm_andnot_si128(_mm_srai_epi32(neg_shift, 31), neg_shift);
  const __m128i a = MulLo32(x, PowerOfTwo(left));
  const __m128i sign = _mm_srai_epi32(a, 31);
  const __m128i abs_a = _mm_sub_epi32(_mm_xor_si128(a, sign), sign);
  const __m128i half = PowerOfTwo(_mm_sub_epi32(right, _mm_set1_epi32(1)));
  const __m128i pw = PowerOfTwo(_mm_sub_epi32(_mm_set1_epi32(31), right));
  const __m128i even = RoundMagnitudes(abs_a, m, sign, half, pw);
  const __m128i odd =
      RoundMagnitudes(_mm_srli_epi64(abs_a, 32), _mm_srli_epi64(m, 32), _mm_srli_epi64(sign, 32),
                      _mm_srli_epi64(half, 32), _mm_srli_epi64(pw, 32));
  const __m128i r = _mm_unpacklo_epi32(_mm_shuffle_epi32(even, _MM_SHUFFLE(0, 0, 2, 0)),
                                       _mm_shuffle_epi32(odd, _MM_SHUFFLE(0, 0, 2, 0)));
  return _mm_sub_epi32(_mm_xor_si128(r, sign), sign);
}

inline __m128i Load4(const int32_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

inline __m128i Biased4(const int32_t* acc, const int32_t* bias, bool saturate) {
  if (bias == nullptr) return Load4(acc);
  return saturate ? SaturatingAdd32(Load4(acc), Load4(bias))
                  : _mm_add_epi32(Load4(acc), Load4(bias));
}

#endif

#if !defined(__SSE2__)

// RequantizeOne for multipliers >= 0 in CMSIS-NN's arm_nn_requantize form, for 32-bit cores:
// the nudge-and-truncate of SaturatingRoundingDoublingHighMul equals floor((a * m + 2^30) / 2^31)
// for either sign of a * m (one SMLAL and a funnel shift, no 64-bit compare or division), and
// the saturating case a = m = INT32_MIN cannot occur with m >= 0.
inline int8_t RequantizeOneNonNegative(int32_t acc, int32_t bias, int32_t mult, int32_t shift,
                                       const OutputStage& o, bool saturate) {
  const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const int32_t a =
      static_cast<int32_t>(static_cast<uint32_t>(AddBias(acc, bias, saturate)) << left);
  const int32_t h = static_cast<int32_t>((int64_t{a} * mult + (int64_t{1} << 30)) >> 31);
  const int32_t mask = static_cast<int32_t>((uint32_t{1} << right) - 1u);
  const int32_t threshold = (mask >> 1) + (h < 0 ? 1 : 0);
  const int32_t v = (h >> right) + ((h & mask) > threshold ? 1 : 0);
  return ClampToInt8(v + o.output_offset, o.act_min, o.act_max);
}

#endif

#if BOARDLAB_HAVE_AVX2_PATHS

BOARDLAB_TARGET_AVX2 inline __m256i Load8(const int32_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// acc + bias saturated to int32: an overflow has both operands' sign differ from the sum's.
BOARDLAB_TARGET_AVX2 inline __m256i SaturatingAdd8(__m256i a, __m256i b) {
  const __m256i sum = _mm256_add_epi32(a, b);
  const __m256i overflow =
      _mm256_srai_epi32(_mm256_and_si256(_mm256_xor_si256(a, sum), _mm256_xor_si256(b, sum)), 31);
  const __m256i limit = _mm256_xor_si256(_mm256_srai_epi32(a, 31), _mm256_set1_epi32(kInt32Max));
  return _mm256_blendv_epi8(sum, limit, overflow);
}

// The output stage's offset and clamp bounds as int16 lanes.
struct StageLanes {
  __m128i zp, lo, hi;
  explicit StageLanes(const OutputStage& o)
      : zp(_mm_set1_epi16(static_cast<int16_t>(o.output_offset))),
        lo(_mm_set1_epi16(static_cast<int16_t>(o.act_min))),
        hi(_mm_set1_epi16(static_cast<int16_t>(o.act_max))) {}
};

// Eight channels (one QuantizedMultiplier8) at a time over every pixel, then the channels past
// the last whole group and any group with a negative multiplier (the vector form needs m >= 0)
// one by one.
BOARDLAB_TARGET_AVX2 void RequantizePixelsAvx2(const int32_t* acc, ptrdiff_t acc_stride,
                                               const int32_t* bias, const int32_t* mult,
                                               const int32_t* shift, int32_t n, int32_t pixels,
                                               const OutputStage& o, bool saturate_bias, int8_t* y,
                                               ptrdiff_t y_stride) {
  const StageLanes s(o);
  int32_t c = 0;
  for (; c + 8 <= n; c += 8) {
    const __m256i m = Load8(mult + c);
    if (_mm256_movemask_ps(_mm256_castsi256_ps(m)) != 0) break;
    const QuantizedMultiplier8 q(m, Load8(shift + c));
    const __m256i b = bias != nullptr ? Load8(bias + c) : _mm256_setzero_si256();
    for (int32_t p = 0; p < pixels; ++p) {
      const __m256i x = Load8(acc + p * acc_stride + c);
      const __m256i v32 = q.Apply(saturate_bias ? SaturatingAdd8(x, b) : _mm256_add_epi32(x, b));
      // Saturating packs keep the int16 offset add and clamp exact (see the SSE2 loop).
      __m128i v = _mm_packs_epi32(_mm256_castsi256_si128(v32), _mm256_extracti128_si256(v32, 1));
      v = _mm_min_epi16(_mm_max_epi16(_mm_adds_epi16(v, s.zp), s.lo), s.hi);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(y + p * y_stride + c), _mm_packs_epi16(v, v));
    }
  }
  for (int32_t p = 0; p < pixels; ++p) {
    for (int32_t r = c; r < n; ++r) {
      y[p * y_stride + r] = RequantizeOne(acc[p * acc_stride + r], bias != nullptr ? bias[r] : 0,
                                          mult[r], shift[r], o, saturate_bias);
    }
  }
}

#endif  // BOARDLAB_HAVE_AVX2_PATHS

}  // namespace

bool MakeRightShiftRequant(int32_t mult, int32_t shift, int32_t output_offset, RightShiftRequant* q,
                           bool fold_offset) {
  if (mult < 0 || shift > -1 || shift < (fold_offset ? -23 : -31) || output_offset < -128 ||
      output_offset > 127) {
    return false;
  }
  const int32_t r = -shift;
  // |acc * mult| < 2^62 and |constant| < 2^62: the 64-bit sum cannot overflow.
  const int64_t offset = fold_offset ? output_offset : 0;
  const int64_t c =
      (int64_t{1} << 30) + (int64_t{1} << (30 + r)) + offset * (int64_t{1} << (31 + r));
  q->multiplier = mult;
  q->round_lo = static_cast<uint32_t>(static_cast<uint64_t>(c));
  q->round_hi = static_cast<int32_t>(c >> 32);
  q->shift = r - 1;
  return true;
}

void requantize_pixels_s8(const int32_t* acc, ptrdiff_t acc_stride, const int32_t* bias,
                          const int32_t* mult, const int32_t* shift, int32_t n, int32_t pixels,
                          const OutputStage& o, bool saturate_bias, int8_t* y, ptrdiff_t y_stride) {
#if BOARDLAB_HAVE_AVX2_PATHS
  if (UseAvx2()) {
    return RequantizePixelsAvx2(acc, acc_stride, bias, mult, shift, n, pixels, o, saturate_bias, y,
                                y_stride);
  }
#endif
  for (int32_t p = 0; p < pixels; ++p) {
    requantize_channels_s8(acc + p * acc_stride, bias, mult, shift, n, o, saturate_bias,
                           y + p * y_stride);
  }
}

void requantize_channels_s8(const int32_t* acc, const int32_t* bias, const int32_t* mult,
                            const int32_t* shift, int32_t n, const OutputStage& o,
                            bool saturate_bias, int8_t* y) {
#if BOARDLAB_HAVE_AVX2_PATHS
  if (UseAvx2()) {
    return RequantizePixelsAvx2(acc, 0, bias, mult, shift, n, 1, o, saturate_bias, y, 0);
  }
#endif
  int32_t c = 0;
#if defined(__SSE2__)
  // Saturating packs make the int16 offset add and clamp exact: any value outside int16 is far
  // outside [act_min, act_max] either way.
  const __m128i zp = _mm_set1_epi16(static_cast<int16_t>(o.output_offset));
  const __m128i lo = _mm_set1_epi16(static_cast<int16_t>(o.act_min));
  const __m128i hi = _mm_set1_epi16(static_cast<int16_t>(o.act_max));
  for (; c + 8 <= n; c += 8) {
    const __m128i m0 = Load4(mult + c), m1 = Load4(mult + c + 4);
    if (_mm_movemask_ps(_mm_castsi128_ps(_mm_or_si128(m0, m1))) != 0) break;
    const __m128i v0 = MultiplyByQuantizedMultiplier4(
        Biased4(acc + c, bias != nullptr ? bias + c : nullptr, saturate_bias), m0,
        Load4(shift + c));
    const __m128i v1 = MultiplyByQuantizedMultiplier4(
        Biased4(acc + c + 4, bias != nullptr ? bias + c + 4 : nullptr, saturate_bias), m1,
        Load4(shift + c + 4));
    __m128i v = _mm_adds_epi16(_mm_packs_epi32(v0, v1), zp);
    v = _mm_min_epi16(_mm_max_epi16(v, lo), hi);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + c), _mm_packs_epi16(v, v));
  }
#endif
#if !defined(__SSE2__)
  for (; c < n; ++c) {
    const int32_t b = bias != nullptr ? bias[c] : 0;
    y[c] = mult[c] >= 0 ? RequantizeOneNonNegative(acc[c], b, mult[c], shift[c], o, saturate_bias)
                        : RequantizeOne(acc[c], b, mult[c], shift[c], o, saturate_bias);
  }
#endif
  for (; c < n; ++c) {
    y[c] =
        RequantizeOne(acc[c], bias != nullptr ? bias[c] : 0, mult[c], shift[c], o, saturate_bias);
  }
}

void requantize_quant_s8(const int32_t* acc, const int32_t* bias, const ChannelQuant& q,
                         int32_t first, int32_t n, const OutputStage& o, bool saturate_bias,
                         int8_t* y) {
  if (q.count != 1) {
    requantize_channels_s8(acc, bias, q.multiplier + first, q.shift + first, n, o, saturate_bias,
                           y);
    return;
  }
  for (int32_t c = 0; c < n; ++c) {
    y[c] = RequantizeOne(acc[c], bias != nullptr ? bias[c] : 0, q.multiplier[0], q.shift[0], o,
                         saturate_bias);
  }
}

}  // namespace boardlab::runtime::kernels
