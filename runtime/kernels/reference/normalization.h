#pragma once

// LOG_SOFTMAX, L2_NORMALIZATION and RESIZE_BILINEAR, bit-exact with TFLite Micro's reference
// kernels (log_softmax.cc, l2norm.cc, resize_bilinear.cc):
// - LOG_SOFTMAX int8 over the last dimension, output scale 16/256 and zero point 127. Per row:
//   d = x - max(row); the exps of d >= diff_min (d rescaled to Q5.26 by (input_multiplier,
//   input_left_shift)) are summed in Q12.19, L = log(sum) in Q5.26; an entry whose d exceeds
//   max(diff_min - 1, MBQM(L + INT32_MIN, reverse_multiplier, reverse_shift)) gives
//   clamp(RoundingDivideByPOT(d_q5 - L, 22) + 127), the others -128.
// - L2_NORMALIZATION int8 over the last dimension, output scale 1/128 and zero point 0:
//   v = q - input_zp; (m, s) = InvSqrtQuantizedMultiplier(sum of v^2) and each output is
//   clamp(MBQM(v, m, s + 7)).
// - RESIZE_BILINEAR int8 on the raw values (input and output share one quantization): the
//   source position in 1/1024 steps, the four neighbours weighted in int64 and rounded half
//   away from zero by 2^20.

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

struct LogSoftmaxParams {
  int32_t input_multiplier = 0, input_left_shift = 0;  // input_scale * 2^26, >= 1
  int32_t reverse_multiplier = 0, reverse_shift = 0;   // 2^(31 - left_shift) / multiplier
  int32_t diff_min = 0;
};

[[nodiscard]] Error log_softmax_s8(const LogSoftmaxParams& params, int64_t rows, int32_t depth,
                                   const int8_t* input, int8_t* output);

[[nodiscard]] Error l2_normalization_s8(int32_t input_zero_point, int64_t rows, int32_t depth,
                                        const int8_t* input, int8_t* output);

[[nodiscard]] Error resize_bilinear_s8(const Dims4& input_dims, const int8_t* input,
                                       const Dims4& output_dims, bool align_corners,
                                       bool half_pixel_centers, int8_t* output);

}  // namespace boardlab::runtime::kernels
