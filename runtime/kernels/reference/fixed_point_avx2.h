#pragma once

// AVX2 forms of quantized_math.h's fixed-point functions, shared by the kernels that vectorise
// them on x86-64 (compiled with the avx2 target attribute, called only when UseAvx2()).
//
// Usage (inside a BOARDLAB_TARGET_AVX2 function):
//   const __m256i v = MultiplyByQuantizedMultiplier8(acc, mult, shift);

#include "runtime/kernels/reference/cpu_features.h"

#if BOARDLAB_HAVE_AVX2_PATHS
#include <immintrin.h>

#include <cstdint>

namespace boardlab::runtime::kernels {

// MultiplyByQuantizedMultiplier on eight lanes (multipliers >= 0). AVX2 has the signed 32x32 ->
// 64-bit multiply and per-lane shifts SSE2 lacks, so the scalar formulas map directly:
// SaturatingRoundingDoublingHighMul's nudge-and-truncate equals floor((a * m + 2^30) / 2^31)
// for either sign of a * m, and a 64-bit logical shift gives the low 32 bits of that floor. The
// odd lanes' quotients are shifted up into place instead of down.
BOARDLAB_TARGET_AVX2 inline __m256i MultiplyByQuantizedMultiplier8(__m256i x, __m256i m,
                                                                   __m256i shift) {
  const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
  const __m256i left = _mm256_max_epi32(shift, zero);
  const __m256i right = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);
  const __m256i a = _mm256_sllv_epi32(x, left);
  const __m256i nudge = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i even = _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(a, m), nudge), 31);
  const __m256i odd = _mm256_slli_epi64(
      _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), _mm256_srli_epi64(m, 32)), nudge),
      1);
  const __m256i h = _mm256_blend_epi32(even, odd, 0xAA);
  // RoundingDivideByPOT(h, right).
  const __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
  const __m256i threshold = _mm256_sub_epi32(_mm256_srai_epi32(mask, 1), _mm256_srai_epi32(h, 31));
  const __m256i round = _mm256_cmpgt_epi32(_mm256_and_si256(h, mask), threshold);
  return _mm256_sub_epi32(_mm256_srav_epi32(h, right), round);
}

}  // namespace boardlab::runtime::kernels

#endif  // BOARDLAB_HAVE_AVX2_PATHS
