#pragma once

// ADD and SUB int8 with broadcasting (up to 6-D), bit-exact with TFLite Micro's reference
// kernels: each input is offset by -zp, scaled up by 2^left_shift (20) and rescaled to a shared
// scale with its own multiplier; the sum (or difference) is rescaled to the output:
//   a' = MBQM((a + a_off) << left_shift, a_mult, a_shift)   (likewise b')
//   out = clamp(MBQM(a' +/- b', out_mult, out_shift) + out_off)
// MBQM = MultiplyByQuantizedMultiplier (double rounding). SUB subtracts the rescaled values, as
// TFLite Micro does (TFLite's non-micro kernel negates the multiplier instead, which rounds ties
// differently).

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

struct AddParams {
  int32_t input1_offset = 0, input2_offset = 0;  // -zero points
  int32_t left_shift = 20;
  int32_t input1_multiplier = 0, input1_shift = 0;
  int32_t input2_multiplier = 0, input2_shift = 0;
  int32_t output_multiplier = 0, output_shift = 0;
  OutputStage out;
};

/// Shapes must broadcast to `out_shape`; kInvalidArgument otherwise.
[[nodiscard]] Error add_s8(const AddParams& params, const ShapeN& a_shape, const int8_t* a,
                           const ShapeN& b_shape, const int8_t* b, const ShapeN& out_shape,
                           int8_t* out);
[[nodiscard]] Error sub_s8(const AddParams& params, const ShapeN& a_shape, const int8_t* a,
                           const ShapeN& b_shape, const int8_t* b, const ShapeN& out_shape,
                           int8_t* out);

/// ADD / SUB 16x8: the same arithmetic on int16 values with left_shift 15 (TFLite Micro's
/// general int16 path) and an int16 clamp range.
[[nodiscard]] Error add_s16(const AddParams& params, const ShapeN& a_shape, const int16_t* a,
                            const ShapeN& b_shape, const int16_t* b, const ShapeN& out_shape,
                            int16_t* out);
[[nodiscard]] Error sub_s16(const AddParams& params, const ShapeN& a_shape, const int16_t* a,
                            const ShapeN& b_shape, const int16_t* b, const ShapeN& out_shape,
                            int16_t* out);

/// The element loop of add_s8 / sub_s8 for two same-shape tensors of n elements (no broadcast),
/// for callers that have checked p.left_shift (in [0, 24]). On x86-64 with AVX2 eight elements per
/// step when every multiplier is >= 0 and the output stage is int8 (the scalar loop otherwise).
void elementwise_add_s8(const AddParams& p, bool subtract, const int8_t* a, const int8_t* b,
                        int64_t n, int8_t* out);

}  // namespace boardlab::runtime::kernels
