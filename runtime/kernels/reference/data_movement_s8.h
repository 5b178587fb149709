#pragma once

// Layout ops on int8 tensors, and on int16 ones for 16x8 models (no arithmetic on values, so
// exact by construction): TRANSPOSE, PAD/PADV2, CONCATENATION, SLICE/STRIDED_SLICE,
// RESIZE_NEAREST_NEIGHBOR. Each copies raw values; input and output share one quantization
// (TFLite Micro copies raw values too).

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

/// out[i_perm[0], ...] layout: output dim d is input dim perm[d].
[[nodiscard]] Error transpose_s8(const ShapeN& input_shape, const int8_t* input,
                                 const int32_t* perm, int8_t* output);

/// before[d] / after[d] elements of `pad_value` around each dimension d.
[[nodiscard]] Error pad_s8(const ShapeN& input_shape, const int8_t* input, const int32_t* before,
                           const int32_t* after, int8_t pad_value, int8_t* output);

/// Concatenates `count` inputs of shapes `shapes[i]` along `axis` (non-negative), clamping each
/// value to [act_min, act_max] (a no-op without a fused activation).
[[nodiscard]] Error concatenation_s8(const int8_t* const* inputs, const ShapeN* shapes,
                                     int32_t count, int32_t axis, int32_t act_min, int32_t act_max,
                                     int8_t* output);

/// Generic strided slice: output dim d takes input indices start[d] + k*stride[d] for
/// k < out_dims[d] (stride may be negative). SLICE is the stride-1 case.
[[nodiscard]] Error strided_slice_s8(const ShapeN& input_shape, const int8_t* input,
                                     const int32_t* start, const int32_t* stride,
                                     const int32_t* out_dims, int8_t* output);

/// The same ops on int16 values (16x8 models); concatenation_s16 clamps to an int16 range.
[[nodiscard]] Error transpose_s16(const ShapeN& input_shape, const int16_t* input,
                                  const int32_t* perm, int16_t* output);
[[nodiscard]] Error pad_s16(const ShapeN& input_shape, const int16_t* input, const int32_t* before,
                            const int32_t* after, int16_t pad_value, int16_t* output);
[[nodiscard]] Error concatenation_s16(const int16_t* const* inputs, const ShapeN* shapes,
                                      int32_t count, int32_t axis, int32_t act_min, int32_t act_max,
                                      int16_t* output);
[[nodiscard]] Error strided_slice_s16(const ShapeN& input_shape, const int16_t* input,
                                      const int32_t* start, const int32_t* stride,
                                      const int32_t* out_dims, int16_t* output);

/// NHWC nearest-neighbour resize with TFLite's index rule (align_corners, half_pixel_centers).
[[nodiscard]] Error resize_nearest_neighbor_s8(const Dims4& input_dims, const int8_t* input,
                                               const Dims4& output_dims, bool align_corners,
                                               bool half_pixel_centers, int8_t* output);
[[nodiscard]] Error resize_nearest_neighbor_s16(const Dims4& input_dims, const int16_t* input,
                                                const Dims4& output_dims, bool align_corners,
                                                bool half_pixel_centers, int16_t* output);

}  // namespace boardlab::runtime::kernels
