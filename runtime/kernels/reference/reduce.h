#pragma once

// Reductions over a set of axes and ARG_MAX / ARG_MIN, bit-exact with TFLite Micro's reference
// kernels (reduce.h, arg_min_max.h):
// - REDUCE_MAX / REDUCE_MIN on raw values (int8 input and output share one quantization).
// - SUM int8 and int16 (16x8) accumulate int32 sums of the raw values and requantize them in
//   integers as TFLite Micro's QuantizedMeanOrSum does (its reduce.h has no float path left):
//     out = clamp(MBQM(sum - input_zp * n, m, s) + output_zp)
//   with (m, s) = QuantizeMultiplier(in_scale / out_scale), n the number of reduced elements per
//   output. (Older TFLite, the interpreter build the oracle uses among them, requantized in
//   float and wrapped instead of clamping.) float32 sums accumulate in input order.
// - ARG_MAX / ARG_MIN: the first index of the extreme value along one axis.
//
// `reduced[d]` marks the reduced dimensions of `shape`; outputs are laid out in row-major order
// of the kept dimensions (keep_dims does not change the layout).

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

[[nodiscard]] Error reduce_max_s8(const ShapeN& shape, const bool* reduced, const int8_t* input,
                                  int8_t* output);
[[nodiscard]] Error reduce_min_s8(const ShapeN& shape, const bool* reduced, const int8_t* input,
                                  int8_t* output);
[[nodiscard]] Error reduce_max_f32(const ShapeN& shape, const bool* reduced, const float* input,
                                   float* output);
[[nodiscard]] Error reduce_min_f32(const ShapeN& shape, const bool* reduced, const float* input,
                                   float* output);

struct SumParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t multiplier = 0, shift = 0;  // QuantizeMultiplier(in_scale / out_scale)
};

/// `scratch` holds one int32 per output element.
[[nodiscard]] Error sum_s8(const SumParams& params, const ShapeN& shape, const bool* reduced,
                           const int8_t* input, int32_t* scratch, int8_t* output);
/// SUM 16x8: the same on int16 values (zero points 0), clamped to int16.
[[nodiscard]] Error sum_s16(const SumParams& params, const ShapeN& shape, const bool* reduced,
                            const int16_t* input, int32_t* scratch, int16_t* output);
[[nodiscard]] Error sum_f32(const ShapeN& shape, const bool* reduced, const float* input,
                            float* output);

/// Bytes of scratch sum_s8 and sum_s16 need for `shape` reduced over `reduced`.
int64_t sum_s8_get_buffer_size(const ShapeN& shape, const bool* reduced);

/// Index output of ARG_MAX (`max` true) or ARG_MIN along `axis`: int32 or int64 (`wide`).
struct ArgOutput {
  void* data = nullptr;
  bool wide = false;
};

[[nodiscard]] Error arg_min_max_s8(const ShapeN& shape, const int8_t* input, int32_t axis, bool max,
                                   ArgOutput output);
[[nodiscard]] Error arg_min_max_f32(const ShapeN& shape, const float* input, int32_t axis, bool max,
                                    ArgOutput output);

}  // namespace boardlab::runtime::kernels
