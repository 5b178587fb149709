#pragma once

// AVERAGE_POOL_2D and MAX_POOL_2D int8 (NHWC), bit-exact with TFLite Micro's reference kernels.
// The window of output (oy, ox) starts at (oy*stride_h - pad_top, ox*stride_w - pad_left) and is
// cut to the input (padding never counts). Average: sum / count rounded half away from zero,
// (sum +/- count/2) / count with C truncation; max: the largest input. Both are then clamped to
// the activation range. Input and output share one quantization.

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

struct PoolParams {
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_top = 0, pad_left = 0;
  int32_t filter_h = 1, filter_w = 1;
  int32_t act_min = -128, act_max = 127;
};

/// kInvalidArgument when a window holds no input element (TFLite Micro fails there too).
[[nodiscard]] Error avgpool_s8(const PoolParams& params, const Dims4& input_dims,
                               const int8_t* input, const Dims4& output_dims, int8_t* output);
[[nodiscard]] Error maxpool_s8(const PoolParams& params, const Dims4& input_dims,
                               const int8_t* input, const Dims4& output_dims, int8_t* output);

/// The same on int16 values (16x8 models; TFLite Micro's int16 pooling is the int8 arithmetic).
[[nodiscard]] Error avgpool_s16(const PoolParams& params, const Dims4& input_dims,
                                const int16_t* input, const Dims4& output_dims, int16_t* output);
[[nodiscard]] Error maxpool_s16(const PoolParams& params, const Dims4& input_dims,
                                const int16_t* input, const Dims4& output_dims, int16_t* output);

/// L2_POOL_2D float32 (TFLite Micro has no int8 kernel): sqrt(sum of squares / count) over the
/// window's in-bounds elements (rows outer, columns inner, summed in float), clamped to
/// [act_min, act_max]. `params` gives the window geometry; its int8 range is not used.
[[nodiscard]] Error l2pool_f32(const PoolParams& params, float act_min, float act_max,
                               const Dims4& input_dims, const float* input,
                               const Dims4& output_dims, float* output);

}  // namespace boardlab::runtime::kernels
