#pragma once

// BATCH_MATMUL int8 with broadcast batch dimensions, bit-exact with TFLite Micro's reference:
//   out[..., i, j] = clamp(MBQM(sum_k (lhs[..., i, k] - lhs_zp) * (rhs[..., k, j] - rhs_zp),
//                               m, s) + out_zp)
// with m, s = QuantizeMultiplier(lhs_scale * rhs_scale / out_scale). adj_x / adj_y read lhs /
// rhs transposed in their last two dimensions.

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

}  // namespace boardlab::runtime::kernels
