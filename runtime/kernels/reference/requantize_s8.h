#pragma once

// The requantization epilogue shared by the conv-like kernels (CPU and emulated NPU), for a run of
// consecutive output channels of one output pixel:
//   y[c] = clamp(MultiplyByQuantizedMultiplier(acc[c] + bias[c], mult[c], shift[c]) + zp)
// bit-exact with the scalar quantized_math.h functions (TFLite Micro's double rounding). On x86-64
// eight channels are done per SSE2 pass: the 32x32 -> 64-bit products are formed on magnitudes
// with pmuludq (SSE2 has no signed form), the per-lane shifts as multiplications by powers of two.
//
// Usage:
//   requantize_channels_s8(acc, bias, mult, shift, n, output_stage, /*saturate_bias=*/false, y);

#include <cstddef>
#include <cstdint>

#include "runtime/kernels/reference/quantized_math.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

/// One channel's requantization folded into a 64-bit rounding constant, for 32-bit cores without
/// a rounding shift: for a multiplier >= 0 and a right shift r in [1, 23] (shift in [-23, -1]),
///   MultiplyByQuantizedMultiplier(acc, mult, shift) + output_offset
///     = floor((acc * mult + 2^30 + 2^(30 + r) - [acc < 0] * 2^31 + zp * 2^(31 + r)) / 2^(31 + r))
/// exactly. The two roundings (the doubling high multiply's half up, the shift's half away from
/// zero) compose because nested floors of divisions by powers of two are one floor; the shift's
/// correction for negative values uses the accumulator's sign, which differs from the high
/// product's only where both give 0. On Cortex-M33: ASR, ADDS, ADC, SMLAL and one ASR of the high
/// word per output.
struct RightShiftRequant {
  int32_t multiplier = 0;
  uint32_t round_lo = 0;  // the constant's low word
  int32_t round_hi = 0;   // its high word (output offset included)
  int32_t shift = 0;      // r - 1: the shift applied to the high word
};

/// Fills `q` and returns true when mult >= 0, shift in [-23, -1] and output_offset in
/// [-128, 127] (most convs of the shared models); false leaves the reference path to the caller.
/// With fold_offset false the constant leaves the offset out (the caller adds it to the result)
/// and shifts down to -31 fit: the offset's term is what limits the 64-bit sum.
bool MakeRightShiftRequant(int32_t mult, int32_t shift, int32_t output_offset, RightShiftRequant* q,
                           bool fold_offset = true);

/// MultiplyByQuantizedMultiplier(acc, mult, shift) + output_offset for q made from them.
inline int32_t ApplyRightShiftRequant(int32_t acc, const RightShiftRequant& q) {
#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
  // Written out: GCC builds the 64-bit constant with five instructions instead of ADDS / ADC
  // with the sign word shifted in place.
  int32_t lo, hi, sign;
  __asm__(
      "asr %[sign], %[acc], #31\n\t"
      "adds %[lo], %[rlo], %[sign], lsl #31\n\t"
      "adc %[hi], %[rhi], %[sign]\n\t"
      "smlal %[lo], %[hi], %[acc], %[m]"
      : [lo] "=&r"(lo), [hi] "=&r"(hi), [sign] "=&r"(sign)
      : [acc] "r"(acc), [m] "r"(q.multiplier), [rlo] "r"(q.round_lo), [rhi] "r"(q.round_hi)
      : "cc");
  return hi >> q.shift;
#else
  const int64_t negative = acc >> 31;  // -1 or 0
  const uint64_t round = ((uint64_t{static_cast<uint32_t>(q.round_hi)} << 32) | q.round_lo) +
                         (static_cast<uint64_t>(negative) << 31);
  const int64_t s = static_cast<int64_t>(round) + int64_t{acc} * q.multiplier;
  return static_cast<int32_t>(s >> 32) >> q.shift;
#endif
}

/// ClampToInt8(v, -128, 127) in one SSAT on Cortex-M.
inline int8_t SaturateToInt8(int32_t v) {
#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
  int32_t r;
  __asm__("ssat %0, #8, %1" : "=r"(r) : "r"(v));
  return static_cast<int8_t>(r);
#else
  return ClampToInt8(v, -128, 127);
#endif
}

/// Requantizes acc[0..n) into y[0..n). bias may be null (no bias). mult, shift: n entries each
/// (one per channel; requantize_quant_s8 takes a per-tensor table too). With
/// `saturate_bias` acc + bias saturates to int32 (the NPU engine's rule for hostile payloads);
/// otherwise it wraps. Channels with a negative multiplier take the scalar path.
void requantize_channels_s8(const int32_t* acc, const int32_t* bias, const int32_t* mult,
                            const int32_t* shift, int32_t n, const OutputStage& out,
                            bool saturate_bias, int8_t* y);

/// requantize_channels_s8 for channels [first, first + n) of a ChannelQuant that is per-channel or
/// per-tensor (q.count == 1: every channel takes multiplier[0] and shift[0]). bias (may be null)
/// and y start at channel `first`.
void requantize_quant_s8(const int32_t* acc, const int32_t* bias, const ChannelQuant& q,
                         int32_t first, int32_t n, const OutputStage& out, bool saturate_bias,
                         int8_t* y);

/// requantize_channels_s8 on `pixels` output pixels at once: pixel p's accumulators at
/// acc + p * acc_stride, its outputs at y + p * y_stride, all with the same n channels' bias,
/// multipliers and shifts. One call per pixel group: the kernel choice and the vector constants
/// are paid once, which matters for layers with few channels.
void requantize_pixels_s8(const int32_t* acc, ptrdiff_t acc_stride, const int32_t* bias,
                          const int32_t* mult, const int32_t* shift, int32_t n, int32_t pixels,
                          const OutputStage& out, bool saturate_bias, int8_t* y,
                          ptrdiff_t y_stride);

}  // namespace boardlab::runtime::kernels
