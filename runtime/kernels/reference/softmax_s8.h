#pragma once

// SOFTMAX int8 -> int8 (output scale 1/256, zero point -128) over the last dimension, bit-exact
// with TFLite Micro's reference kernel. Per row: d = x - max(row); rows entries with
// d < diff_min contribute 0. Otherwise d is rescaled to Q5.26 by (input_multiplier,
// input_left_shift) = beta * input_scale, exp(d) is evaluated in fixed point, the sum of exps is
// accumulated in Q12.19, and each output is exp * (1 / sum) rounded to 8 bits, minus 128.

#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

struct SoftmaxParams {
  int32_t input_multiplier = 0;
  int32_t input_left_shift = 0;
  int32_t diff_min = 0;
};

[[nodiscard]] Error softmax_s8(const SoftmaxParams& params, int32_t rows, int32_t depth,
                               const int8_t* input, int8_t* output);

}  // namespace boardlab::runtime::kernels
