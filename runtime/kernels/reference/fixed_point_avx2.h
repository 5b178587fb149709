#pragma once

// AVX2 forms of quantized_math.h's fixed-point functions, shared by the kernels that vectorise
// them on x86-64 (compiled with the avx2 target attribute, called only when UseAvx2()).
//
// Usage (inside a BOARDLAB_TARGET_AVX2 function):
//   const __m256i v = MultiplyByQuantizedMultiplier8(acc, mult, shift);
//   const QuantizedMultiplier8 q(mult, shift);  // the same, prepared for many vectors
//   for (...) v = q.Apply(acc);

#include "runtime/kernels/reference/cpu_features.h"

#if BOARDLAB_HAVE_AVX2_PATHS
#include <immintrin.h>

#include <cstdint>

namespace boardlab::runtime::kernels {

// MultiplyByQuantizedMultiplier on eight lanes (multipliers >= 0), its per-lane parameters
// prepared once: loops that apply the same eight multipliers and shifts to many vectors (one
// group of output channels over many pixels) pay for the shift decoding once. AVX2 has the
// signed 32x32 -> 64-bit multiply and per-lane shifts SSE2 lacks, so the scalar formulas map
// directly: SaturatingRoundingDoublingHighMul's nudge-and-truncate equals
// floor((a * m + 2^30) / 2^31) for either sign of a * m, and a 64-bit logical shift gives the low
// 32 bits of that floor. The odd lanes' quotients are shifted up into place instead of down.
struct QuantizedMultiplier8 {
  __m256i m, m_odd, left, right, mask, half_mask;
  bool shifts_left;

  BOARDLAB_TARGET_AVX2 QuantizedMultiplier8(__m256i mult, __m256i shift) {
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
    m = mult;
    m_odd = _mm256_srli_epi64(mult, 32);
    left = _mm256_max_epi32(shift, zero);
    right = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);
    mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
    half_mask = _mm256_srai_epi32(mask, 1);
    shifts_left = !_mm256_testz_si256(left, left);
  }

  BOARDLAB_TARGET_AVX2 __m256i Apply(__m256i x) const {
    const __m256i a = shifts_left ? _mm256_sllv_epi32(x, left) : x;
    const __m256i nudge = _mm256_set1_epi64x(int64_t{1} << 30);
    const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(a, m), nudge), 31);
    const __m256i odd = _mm256_slli_epi64(
        _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), m_odd), nudge), 1);
    const __m256i h = _mm256_blend_epi32(even, odd, 0xAA);
    // RoundingDivideByPOT(h, right): up where the remainder exceeds half (half - 1 for h < 0).
    const __m256i threshold = _mm256_sub_epi32(half_mask, _mm256_srai_epi32(h, 31));
    const __m256i round = _mm256_cmpgt_epi32(_mm256_and_si256(h, mask), threshold);
    return _mm256_sub_epi32(_mm256_srav_epi32(h, right), round);
  }
};

BOARDLAB_TARGET_AVX2 inline __m256i MultiplyByQuantizedMultiplier8(__m256i x, __m256i m,
                                                                   __m256i shift) {
  return QuantizedMultiplier8(m, shift).Apply(x);
}

}  // namespace boardlab::runtime::kernels

#endif  // BOARDLAB_HAVE_AVX2_PATHS
