#pragma once

// LOGISTIC, TANH and SOFTMAX in 16x8 quantization (int16 in and out, zero points 0), bit-exact
// with TFLite Micro's reference kernels:
// - logistic_s16 / tanh_s16 (reference_integer_ops Logistic / Tanh for int16): the input is
//   rescaled by `multiplier` and a rounding right shift to the table's 1/(3 * 4096) steps (a
//   multiplier of 0 means a power-of-two input scale: 3 << shift, shift 0), then sigmoid is read
//   from a 256-entry table of sigmoid(i / 24) in Q0.16 with linear interpolation on its low bits
//   (tanh(x) = 2 sigmoid(2x) - 1 reads the same table at twice the resolution). Outputs are Q0.15.
// - softmax_s16 (reference_ops SoftmaxInt16): per row, exp(x - max) is read from a 513-entry
//   table of exp over [-10, 0] (the difference rescaled so that -65535 is -10), summed in Q16.15,
//   and 1 / sum from a table of 1 / (1 + x) over [0, 1]; both tables interpolate on the low 7 bits.
//   Softmax16Tables builds them exactly as TFLite Micro's gen_lut does, in float.

#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

/// The LOGISTIC / TANH int16 input rescale as TFLite Micro's Prepare computes it.
struct Sigmoid16Params {
  int32_t multiplier = 0;  // 0: power-of-two input scale
  int32_t left_shift = 0;  // in [0, 31] (a right shift despite the name, as in TFLite)
};

/// TFLite's 256-entry table of sigmoid(i / 24) in Q0.16 that logistic_s16 and tanh_s16 read.
const uint16_t* Sigmoid16Table();

[[nodiscard]] Error logistic_s16(const Sigmoid16Params& params, int64_t size, const int16_t* input,
                                 int16_t* output);
[[nodiscard]] Error tanh_s16(const Sigmoid16Params& params, int64_t size, const int16_t* input,
                             int16_t* output);

/// The two SOFTMAX int16 lookup tables.
struct Softmax16Tables {
  static constexpr int kSize = 513;
  int16_t exp[kSize];                  // exp(x), x in [-10, 0], Q0.15
  int16_t one_over_one_plus_x[kSize];  // 1 / (1 + x), x in [0, 1], Q0.15
};

/// Fills both tables (TFLite Micro's gen_lut<float, int16_t, int16_t>).
void BuildSoftmax16Tables(Softmax16Tables* tables);

struct Softmax16Params {
  int32_t input_multiplier = 0;  // QuantizeMultiplier(in_scale * beta / (10 / 65535))
  int32_t input_shift = 0;
  const Softmax16Tables* tables = nullptr;
};

/// `rows` rows of `depth` values. kInvalidArgument for null pointers or missing tables.
[[nodiscard]] Error softmax_s16(const Softmax16Params& params, int32_t rows, int32_t depth,
                                const int16_t* input, int16_t* output);

}  // namespace boardlab::runtime::kernels
