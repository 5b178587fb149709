#pragma once

// MEAN int8 over any set of axes, bit-exact with TFLite Micro's reduce kernel at the golden
// commit, which takes one path for every int8 mean, equal quantization included (confirmed by
// MobileNetV2's MEAN, in/out quantization equal, matching the goldens byte for byte):
//   shifted = sum - in_zp * count; the multiplier QuantizeMultiplier(in_scale / out_scale)
//   absorbs 1/count: s = min(floor(log2 count), 32, 31 + shift),
//   m' = (m << s) / count (int64, truncating), shift' = shift - s;
//   out = clamp(MBQM(shifted, m', shift') + out_zp).
// Both keep_dims forms reduce the same way (the output shape only differs by 1-sized dims).

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

struct MeanParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t multiplier = 0, shift = 0;  // QuantizeMultiplier(in_scale / out_scale)
};

/// `axes` lists the reduced dimensions (negative = from the end; duplicates allowed).
/// `scratch` holds mean_s8_get_buffer_size() bytes (one int32 sum per output element).
[[nodiscard]] Error mean_s8(const MeanParams& params, const ShapeN& input_shape,
                            const int8_t* input, const int32_t* axes, int32_t num_axes,
                            int8_t* output, int64_t output_size, void* scratch,
                            size_t scratch_bytes);

/// MEAN 16x8: the same on int16 values, clamped to int16 (TFLite Micro's one integer template).
[[nodiscard]] Error mean_s16(const MeanParams& params, const ShapeN& input_shape,
                             const int16_t* input, const int32_t* axes, int32_t num_axes,
                             int16_t* output, int64_t output_size, void* scratch,
                             size_t scratch_bytes);

size_t mean_s8_get_buffer_size(int64_t output_size);

/// The requantization with 1/count folded into the multiplier, computed once per op.
struct MeanRescale {
  int32_t multiplier = 0, shift = 0;
};
MeanRescale mean_s8_rescale(const MeanParams& params, int64_t count);

/// One output element from the raw int8 sum of its `count` inputs (shared with the NPU engine).
int8_t mean_s8_output(int32_t sum, int64_t count, const MeanParams& params,
                      const MeanRescale& rescale);

}  // namespace boardlab::runtime::kernels
