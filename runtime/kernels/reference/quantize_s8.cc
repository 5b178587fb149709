#include "runtime/kernels/reference/quantize_s8.h"

#include <cmath>

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {

Error quantize_f32_s8(float scale, int32_t zero_point, int64_t size, const float* input,
                      int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && scale > 0.0f, kInvalidArgument,
                           "quantize_f32_s8: null tensor or scale <= 0");
  for (int64_t i = 0; i < size; ++i) {
    // roundf rounds half away from zero (TfLiteRound); clamp in float first so that huge values
    // and infinities cannot overflow the int conversion.
    float q = std::round(input[i] / scale);
    q = q < -1000.0f ? -1000.0f : (q > 1000.0f ? 1000.0f : q);
    const int32_t v = (q != q) ? 0 : static_cast<int32_t>(q);
    output[i] = ClampToInt8(v + zero_point, -128, 127);
  }
  return Error::kOk;
}

Error requantize_s8(const RequantizeParams& p, int64_t size, const int8_t* input, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr, kInvalidArgument,
                           "requantize_s8: null tensor");
  for (int64_t i = 0; i < size; ++i) {
    const int32_t r =
        MultiplyByQuantizedMultiplier(input[i] - p.input_zero_point, p.multiplier, p.shift);
    output[i] = ClampToInt8(r + p.output_zero_point, -128, 127);
  }
  return Error::kOk;
}

Error dequantize_s8_f32(double scale, int32_t zero_point, int64_t size, const int8_t* input,
                        float* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr, kInvalidArgument,
                           "dequantize_s8_f32: null tensor");
  for (int64_t i = 0; i < size; ++i) {
    output[i] = static_cast<float>(scale * static_cast<double>(input[i] - zero_point));
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
