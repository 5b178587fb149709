#pragma once

// TFLite Micro's real FFTs (signal/src/rfft_*.cc, irfft_*.cc): kissfft v130's kiss_fftr and
// kiss_fftri, built there three times (FIXED_POINT 16, FIXED_POINT 32 and float), re-derived
// here so that the results are bit-exact with them:
// - a real FFT of fft_length points is a complex FFT of n = fft_length / 2 points on the
//   samples taken as (even, odd) pairs, then kiss_fftr's split into the n + 1 bins (kiss_fftri
//   merges the bins first and runs the inverse complex FFT after);
// - the complex FFT is kissfft's mixed radix recursion over kf_factor's stages: radix 4 while
//   4 divides what is left, then 2, then 3s and 5s (n = 12: 4, 3; n = 6: 2, 3; n = 15: 3, 5),
//   each stage a radix 2, 3, 4 or 5 butterfly (kf_bfly2..5);
// - fixed point: every butterfly divides its inputs by its radix first (x times SAMP_MAX / radix,
//   rounded: 32767 / 2 = 16383, not an exact halving), products are rounded by adding
//   2^(FRACBITS - 1) and shifting right by FRACBITS (15 or 31), sums wrap to the scalar's
//   width, the twiddles are floor(0.5 + SAMP_MAX x cos or sin of the phase in double);
// - float: the same expressions in float, each product rounded on its own (no fused
//   multiply-add), twiddles cos and sin in double rounded to float, the inverse divided by
//   fft_length at the end as TFLite Micro's IrfftFloatApply does (the fixed-point inverses are
//   not divided: their stages already scaled by 1 / n).

#include <cstddef>
#include <cstdint>

namespace boardlab::runtime::kernels {

/// The longest real FFT boardlab takes: its tables and buffers (RealFftPlanScalars plus a padded
/// row) stay within 64 KiB of persistent memory in every type.
constexpr int32_t kMaxRealFftLength = 4096;

/// Whether TFLite Micro's kissfft runs a real FFT of `fft_length` points and boardlab takes it:
/// kiss_fftr_alloc refuses an odd length; the half length's complex FFT needs stages of radix 2,
/// 3, 4 or 5 only, since TFLite Micro's kissfft build allocates nothing for the generic
/// butterfly of a larger prime factor (its KISS_FFT_TMP_ALLOC is patched to a null pointer,
/// which kf_bfly_generic writes through) nor for the radix 1 "stage" of fft_length 2.
constexpr bool IsRealFftLength(int32_t fft_length) {
  if (fft_length < 4 || fft_length > kMaxRealFftLength || fft_length % 2 != 0) return false;
  int32_t rest = fft_length / 2;
  for (int32_t prime = 2; prime <= 5; ++prime) {
    while (rest % prime == 0) rest /= prime;  // 4 never divides what 2 left
  }
  return rest == 1;
}

/// The tables and work buffer of one real FFT of `fft_length` points (IsRealFftLength),
/// in `T` (int16_t, int32_t or float), each complex value a (real, imaginary) pair.
template <typename T>
struct RealFftPlan {
  int32_t fft_length = 0;
  bool inverse = false;
  T* twiddles = nullptr;        // fft_length / 2 complex: the half-length complex FFT's
  T* super_twiddles = nullptr;  // fft_length / 4 complex: kiss_fftr's split or merge
  T* work = nullptr;            // fft_length / 2 complex: the complex FFT's output or input
};

/// The scalars RealFftPlan's three buffers take together for `fft_length`.
constexpr int64_t RealFftPlanScalars(int64_t fft_length) {
  return fft_length + fft_length / 2 + fft_length;
}

/// Fills the plan's twiddle tables (its buffers set, fft_length and inverse given).
template <typename T>
void real_fft_init(RealFftPlan<T>& plan);

/// Forward: `input` fft_length real samples to `output` fft_length / 2 + 1 complex bins.
template <typename T>
void rfft_apply(const RealFftPlan<T>& plan, const T* input, T* output);

/// Inverse: `input` fft_length / 2 + 1 complex bins to `output` fft_length real samples.
template <typename T>
void irfft_apply(const RealFftPlan<T>& plan, const T* input, T* output);

}  // namespace boardlab::runtime::kernels
