#include "runtime/kernels/reference/quantize_s8.h"

#include <cmath>
#include <limits>

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

template <typename Out>
Out ClampTo(int32_t v) {
  constexpr int32_t kLo = std::numeric_limits<Out>::min(), kHi = std::numeric_limits<Out>::max();
  return static_cast<Out>(v < kLo ? kLo : (v > kHi ? kHi : v));
}

template <typename Out>
Error QuantizeFloat(const char* name, float scale, int32_t zero_point, int64_t size,
                    const float* input, Out* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && scale > 0.0f, kInvalidArgument,
                           "%s: null tensor or scale <= 0", name);
  // Beyond this the clamp decides anyway; bounding in float first keeps huge values and
  // infinities from overflowing the int conversion.
  constexpr float kBound = 2.0f * static_cast<float>(std::numeric_limits<Out>::max()) + 2.0f;
  for (int64_t i = 0; i < size; ++i) {
    // roundf rounds half away from zero (TfLiteRound); the division is in float as in TFLite.
    float q = std::round(input[i] / scale);
    q = q < -kBound ? -kBound : (q > kBound ? kBound : q);
    const int32_t v = (q != q) ? 0 : static_cast<int32_t>(q);
    output[i] = ClampTo<Out>(v + zero_point);
  }
  return Error::kOk;
}

template <typename In, typename Out>
Error Requantize(const char* name, const RequantizeParams& p, int64_t size, const In* input,
                 Out* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr, kInvalidArgument,
                           "%s: null tensor", name);
  for (int64_t i = 0; i < size; ++i) {
    const int32_t r =
        MultiplyByQuantizedMultiplier(input[i] - p.input_zero_point, p.multiplier, p.shift);
    output[i] = ClampTo<Out>(r + p.output_zero_point);
  }
  return Error::kOk;
}

template <typename In>
Error Dequantize(const char* name, double scale, int32_t zero_point, int64_t size, const In* input,
                 float* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr, kInvalidArgument,
                           "%s: null tensor", name);
  for (int64_t i = 0; i < size; ++i) {
    output[i] = static_cast<float>(scale * static_cast<double>(input[i] - zero_point));
  }
  return Error::kOk;
}

}  // namespace

Error quantize_f32_s8(float scale, int32_t zero_point, int64_t size, const float* input,
                      int8_t* output) {
  return QuantizeFloat("quantize_f32_s8", scale, zero_point, size, input, output);
}

Error quantize_f32_s16(float scale, int32_t zero_point, int64_t size, const float* input,
                       int16_t* output) {
  return QuantizeFloat("quantize_f32_s16", scale, zero_point, size, input, output);
}

Error requantize_s8(const RequantizeParams& p, int64_t size, const int8_t* input, int8_t* output) {
  return Requantize("requantize_s8", p, size, input, output);
}

Error requantize_s8_s16(const RequantizeParams& p, int64_t size, const int8_t* input,
                        int16_t* output) {
  return Requantize("requantize_s8_s16", p, size, input, output);
}

Error requantize_s16_s8(const RequantizeParams& p, int64_t size, const int16_t* input,
                        int8_t* output) {
  return Requantize("requantize_s16_s8", p, size, input, output);
}

Error requantize_s16(const RequantizeParams& p, int64_t size, const int16_t* input,
                     int16_t* output) {
  return Requantize("requantize_s16", p, size, input, output);
}

Error dequantize_s8_f32(double scale, int32_t zero_point, int64_t size, const int8_t* input,
                        float* output) {
  return Dequantize("dequantize_s8_f32", scale, zero_point, size, input, output);
}

Error dequantize_s16_f32(double scale, int32_t zero_point, int64_t size, const int16_t* input,
                         float* output) {
  return Dequantize("dequantize_s16_f32", scale, zero_point, size, input, output);
}

}  // namespace boardlab::runtime::kernels
