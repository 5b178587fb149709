#pragma once

// Element-wise ABS, NEG and CAST, bit-exact with TFLite Micro's reference kernels
// (elementwise.cc, neg.cc, cast.cc):
// - ABS int8: v = |q - input_zp|; out = clamp(v + output_zp) when the scales are equal, else
//   clamp(MultiplyByQuantizedMultiplier(v, multiplier, shift) + output_zp).
// - ABS / NEG float32: fabs and negation.
// - CAST: static_cast between element types, quantization ignored. Integer narrowing keeps the
//   low bits; float to integer truncates toward zero and saturates at the int32 range first
//   (NaN gives 0), which is what the Cortex-M33's VCVT does for TFLite Micro's static_cast.

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/tensor_view.h"

namespace boardlab::runtime::kernels {

struct AbsParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  bool rescale = false;  // input and output scales differ
  int32_t multiplier = 0, shift = 0;
  bool quantized = true;  // int16 only: false for an unquantized input (plain integer ABS)
};

[[nodiscard]] Error abs_s8(const AbsParams& params, int64_t count, const int8_t* input,
                           int8_t* output);
/// ABS int16: quantized (16x8, zero points 0) like abs_s8 clamped to int16, or on plain int16
/// values when the input carries no quantization, as TFLite Micro does (|-32768| wraps).
[[nodiscard]] Error abs_s16(const AbsParams& params, int64_t count, const int16_t* input,
                            int16_t* output);
[[nodiscard]] Error abs_f32(int64_t count, const float* input, float* output);
[[nodiscard]] Error neg_f32(int64_t count, const float* input, float* output);

/// True for the conversions cast_elements implements: from int8, int16, int32, float32 or bool to
/// int8, int16, int32 or float32.
bool CastSupported(ScalarType from, ScalarType to);

[[nodiscard]] Error cast_elements(ScalarType from, const void* input, ScalarType to, int64_t count,
                                  void* output);

}  // namespace boardlab::runtime::kernels
