#pragma once

// BATCH_MATMUL int8 and 16x8 (int16 operands, zero points 0) with broadcast batch dimensions,
// bit-exact with TFLite Micro's reference:
//   out[..., i, j] = clamp(MBQM(sum_k (lhs[..., i, k] - lhs_zp) * (rhs[..., k, j] - rhs_zp),
//                               m, s) + out_zp)
// with m, s = QuantizeMultiplier(double(float(lhs_scale * rhs_scale)) / out_scale) (TFLite's
// GetQuantizedConvolutionMultipler multiplies the two scales in float). int8 sums in int32; int16
// sums in int64 and requantizes with the int64 MultiplyByQuantizedMultiplier (multiplier rounded
// to 16 bits, shift in [-31, 7]). adj_x / adj_y read lhs / rhs transposed in their last two
// dimensions.

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

struct BatchMatMulParams {
  int32_t lhs_zero_point = 0, rhs_zero_point = 0, output_zero_point = 0;
  int32_t multiplier = 0, shift = 0;
  bool adj_x = false, adj_y = false;
};

[[nodiscard]] Error batch_matmul_s8(const BatchMatMulParams& params, const ShapeN& lhs_shape,
                                    const int8_t* lhs, const ShapeN& rhs_shape, const int8_t* rhs,
                                    const ShapeN& out_shape, int8_t* output);
[[nodiscard]] Error batch_matmul_s16(const BatchMatMulParams& params, const ShapeN& lhs_shape,
                                     const int16_t* lhs, const ShapeN& rhs_shape,
                                     const int16_t* rhs, const ShapeN& out_shape, int16_t* output);

}  // namespace boardlab::runtime::kernels
