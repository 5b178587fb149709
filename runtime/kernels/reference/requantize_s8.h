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

#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

/// Requantizes acc[0..n) into y[0..n). bias may be null (no bias). mult, shift: n entries each
/// (one per channel; callers with a per-tensor table use the scalar functions). With
/// `saturate_bias` acc + bias saturates to int32 (the NPU engine's rule for hostile payloads);
/// otherwise it wraps. Channels with a negative multiplier take the scalar path.
void requantize_channels_s8(const int32_t* acc, const int32_t* bias, const int32_t* mult,
                            const int32_t* shift, int32_t n, const OutputStage& out,
                            bool saturate_bias, int8_t* y);

/// requantize_channels_s8 on `pixels` output pixels at once: pixel p's accumulators at
/// acc + p * acc_stride, its outputs at y + p * y_stride, all with the same n channels' bias,
/// multipliers and shifts. One call per pixel group: the kernel choice and the vector constants
/// are paid once, which matters for layers with few channels.
void requantize_pixels_s8(const int32_t* acc, ptrdiff_t acc_stride, const int32_t* bias,
                          const int32_t* mult, const int32_t* shift, int32_t n, int32_t pixels,
                          const OutputStage& out, bool saturate_bias, int8_t* y,
                          ptrdiff_t y_stride);

}  // namespace boardlab::runtime::kernels
