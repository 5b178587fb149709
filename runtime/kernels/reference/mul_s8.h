#pragma once

// MUL int8 with broadcasting (up to 6-D), bit-exact with TFLite Micro's reference kernel:
//   out = clamp(MBQM((a + a_off) * (b + b_off), out_mult, out_shift) + out_off)
// Also MAXIMUM / MINIMUM int8, which TFLite Micro evaluates on the raw int8 values (both inputs
// and the output share one quantization).

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

struct MulParams {
  int32_t input1_offset = 0, input2_offset = 0;
  int32_t output_multiplier = 0, output_shift = 0;
  OutputStage out;
};

[[nodiscard]] Error mul_s8(const MulParams& params, const ShapeN& a_shape, const int8_t* a,
                           const ShapeN& b_shape, const int8_t* b, const ShapeN& out_shape,
                           int8_t* out);

/// MUL 16x8: the same arithmetic on int16 values (zero points 0) with an int16 clamp range.
[[nodiscard]] Error mul_s16(const MulParams& params, const ShapeN& a_shape, const int16_t* a,
                            const ShapeN& b_shape, const int16_t* b, const ShapeN& out_shape,
                            int16_t* out);

[[nodiscard]] Error maximum_s8(const ShapeN& a_shape, const int8_t* a, const ShapeN& b_shape,
                               const int8_t* b, const ShapeN& out_shape, int8_t* out);
[[nodiscard]] Error minimum_s8(const ShapeN& a_shape, const int8_t* a, const ShapeN& b_shape,
                               const int8_t* b, const ShapeN& out_shape, int8_t* out);
/// MAXIMUM / MINIMUM on raw int16 values (16x8 models).
[[nodiscard]] Error maximum_s16(const ShapeN& a_shape, const int16_t* a, const ShapeN& b_shape,
                                const int16_t* b, const ShapeN& out_shape, int16_t* out);
[[nodiscard]] Error minimum_s16(const ShapeN& a_shape, const int16_t* a, const ShapeN& b_shape,
                                const int16_t* b, const ShapeN& out_shape, int16_t* out);

}  // namespace boardlab::runtime::kernels
