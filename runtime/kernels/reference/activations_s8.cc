#include "runtime/kernels/reference/activations_s8.h"

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

constexpr int kInputIntegerBits = 4;

Error CheckUnary(const char* name, const void* input, const void* output, int64_t size) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && size >= 0, kInvalidArgument,
                           "%s: null tensor", name);
  return Error::kOk;
}

// 16-bit gemmlowp primitives used by HARD_SWISH.
int16_t SaturatingRoundingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == -32768 && b == -32768) return 32767;
  const int32_t ab = static_cast<int32_t>(a) * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

// Without rounding: truncates toward zero (cancels the bias of the rounding multiply above).
int16_t SaturatingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == -32768 && b == -32768) return 32767;
  return static_cast<int16_t>((static_cast<int32_t>(a) * b) / (1 << 15));
}

int16_t RoundingDivideByPOT16(int16_t x, int exponent) {
  const int16_t mask = static_cast<int16_t>((1 << exponent) - 1);
  const int16_t remainder = static_cast<int16_t>(x & mask);
  const int16_t threshold = static_cast<int16_t>((mask >> 1) + (x < 0 ? 1 : 0));
  return static_cast<int16_t>((x >> exponent) + (remainder > threshold ? 1 : 0));
}

int16_t SaturatingLeftShift16(int16_t x, int exponent) {
  const int32_t r = static_cast<int32_t>(x) * (1 << exponent);
  return static_cast<int16_t>(r > 32767 ? 32767 : (r < -32768 ? -32768 : r));
}

}  // namespace

Error logistic_s8(const SigmoidParams& p, int64_t size, const int8_t* input, int8_t* output) {
  RT_RETURN_IF_ERROR(CheckUnary("logistic_s8", input, output, size));
  for (int64_t i = 0; i < size; ++i) {
    const int32_t x = input[i] - p.input_zero_point;
    if (x <= -p.input_range_radius) {
      output[i] = -128;
    } else if (x >= p.input_range_radius) {
      output[i] = 127;
    } else {
      const int32_t x_q4 = MultiplyByQuantizedMultiplier(x, p.input_multiplier, p.input_left_shift);
      const int32_t y_q0 = fixed_point::Logistic(x_q4, kInputIntegerBits);
      // Q0.31 -> 1/256 steps.
      output[i] = ClampToInt8(RoundingDivideByPOT(y_q0, 23) - 128, -128, 127);
    }
  }
  return Error::kOk;
}

Error tanh_s8(const SigmoidParams& p, int64_t size, const int8_t* input, int8_t* output) {
  RT_RETURN_IF_ERROR(CheckUnary("tanh_s8", input, output, size));
  for (int64_t i = 0; i < size; ++i) {
    const int32_t x = input[i] - p.input_zero_point;
    if (x <= -p.input_range_radius) {
      output[i] = -128;
    } else if (x >= p.input_range_radius) {
      output[i] = 127;
    } else {
      const int32_t x_q4 = MultiplyByQuantizedMultiplier(x, p.input_multiplier, p.input_left_shift);
      const int32_t y_q0 = fixed_point::Tanh(x_q4, kInputIntegerBits);
      // Q0.31 -> 1/128 steps.
      output[i] = ClampToInt8(RoundingDivideByPOT(y_q0, 24), -128, 127);
    }
  }
  return Error::kOk;
}

namespace {

// TFLite Micro's ReluQuantized: rescale to the output quantization, clamp to [act_min, act_max].
template <typename T>
void Relu(const ReluParams& p, int64_t size, const T* input, T* output) {
  for (int64_t i = 0; i < size; ++i) {
    // Scale 1 requantization is exact: out = x - in_zp + out_zp = x.
    const int32_t r = p.identity ? input[i]
                                 : MultiplyByQuantizedMultiplier(input[i] - p.input_zero_point,
                                                                 p.multiplier, p.shift) +
                                       p.output_zero_point;
    output[i] = static_cast<T>(r < p.act_min ? p.act_min : (r > p.act_max ? p.act_max : r));
  }
}

template <typename T>
void Clamp(int32_t lower, int32_t upper, int64_t size, const T* input, T* output) {
  for (int64_t i = 0; i < size; ++i) {
    const int32_t x = input[i];
    output[i] = static_cast<T>(x > upper ? upper : (x < lower ? lower : x));
  }
}

Error CheckRange(const char* name, int32_t lo, int32_t hi, int32_t type_min, int32_t type_max) {
  RT_CHECK_OR_RETURN_ERROR(type_min <= lo && lo <= hi && hi <= type_max, kInvalidArgument,
                           "%s: clamp range [%d, %d] outside the element type", name,
                           static_cast<int>(lo), static_cast<int>(hi));
  return Error::kOk;
}

}  // namespace

Error relu_s8(const ReluParams& p, int64_t size, const int8_t* input, int8_t* output) {
  RT_RETURN_IF_ERROR(CheckUnary("relu_s8", input, output, size));
  RT_RETURN_IF_ERROR(CheckRange("relu_s8", p.act_min, p.act_max, -128, 127));
  Relu(p, size, input, output);
  return Error::kOk;
}

Error relu_s16(const ReluParams& p, int64_t size, const int16_t* input, int16_t* output) {
  RT_RETURN_IF_ERROR(CheckUnary("relu_s16", input, output, size));
  RT_RETURN_IF_ERROR(CheckRange("relu_s16", p.act_min, p.act_max, -32768, 32767));
  Relu(p, size, input, output);
  return Error::kOk;
}

Error relu6_s8(int32_t lower, int32_t upper, int64_t size, const int8_t* input, int8_t* output) {
  RT_RETURN_IF_ERROR(CheckUnary("relu6_s8", input, output, size));
  RT_RETURN_IF_ERROR(CheckRange("relu6_s8", lower, upper, -128, 127));
  Clamp(lower, upper, size, input, output);
  return Error::kOk;
}

Error relu6_s16(int32_t lower, int32_t upper, int64_t size, const int16_t* input, int16_t* output) {
  RT_RETURN_IF_ERROR(CheckUnary("relu6_s16", input, output, size));
  RT_RETURN_IF_ERROR(CheckRange("relu6_s16", lower, upper, -32768, 32767));
  Clamp(lower, upper, size, input, output);
  return Error::kOk;
}

namespace {

// TFLite's QuantizeLeakyRelu before the clamp to the output type (int8 and int16 alike).
int32_t LeakyReluUnclamped(const LeakyReluParams& p, int32_t value) {
  const int32_t x = value - p.input_zero_point;
  const int32_t r = x >= 0
                        ? MultiplyByQuantizedMultiplier(x, p.identity_multiplier, p.identity_shift)
                        : MultiplyByQuantizedMultiplier(x, p.alpha_multiplier, p.alpha_shift);
  return r + p.output_zero_point;
}

}  // namespace

Error leaky_relu_s8(const LeakyReluParams& p, int64_t size, const int8_t* input, int8_t* output) {
  RT_RETURN_IF_ERROR(CheckUnary("leaky_relu_s8", input, output, size));
  for (int64_t i = 0; i < size; ++i) {
    output[i] = ClampToInt8(LeakyReluUnclamped(p, input[i]), -128, 127);
  }
  return Error::kOk;
}

Error leaky_relu_s16(const LeakyReluParams& p, int64_t size, const int16_t* input,
                     int16_t* output) {
  RT_RETURN_IF_ERROR(CheckUnary("leaky_relu_s16", input, output, size));
  for (int64_t i = 0; i < size; ++i) {
    output[i] = ClampToInt16(LeakyReluUnclamped(p, input[i]), -32768, 32767);
  }
  return Error::kOk;
}

int16_t DownScaleInt32ToInt16Multiplier(int32_t multiplier) {
  constexpr int32_t kRoundingOffset = 1 << 15;
  if (multiplier >= kInt32Max - kRoundingOffset) return 32767;
  return static_cast<int16_t>((multiplier + kRoundingOffset) >> 16);
}

Error hard_swish_s8(const HardSwishParams& p, int64_t size, const int8_t* input, int8_t* output) {
  RT_RETURN_IF_ERROR(CheckUnary("hard_swish_s8", input, output, size));
  RT_CHECK_OR_RETURN_ERROR(
      p.output_multiplier_exponent <= 0 && p.output_multiplier_exponent > -16 &&
          p.reluish_multiplier_exponent > -16 && p.reluish_multiplier_exponent < 16,
      kInvalidArgument, "hard_swish_s8: multiplier exponent out of range");
  for (int64_t i = 0; i < size; ++i) {
    const int16_t x = static_cast<int16_t>(input[i] - p.input_zero_point);
    // x with 7 more fractional bits (|x| <= 255 so x * 128 fits int16).
    const int16_t x_hires = static_cast<int16_t>(x * (1 << 7));
    const int16_t x_preshift_out =
        SaturatingRoundingDoublingHighMul16(x_hires, p.output_multiplier_fixedpoint_int16);
    // relu6(x + 3) / 6 as a 16-bit fraction: rescale x so that 3.0 maps to 32768 (saturating),
    // keeping one bit of the left shift for after the multiply so that saturation there wins.
    int16_t reluish = x_hires;
    if (p.reluish_multiplier_exponent > 0) {
      reluish = SaturatingLeftShift16(reluish, p.reluish_multiplier_exponent - 1);
    }
    reluish = SaturatingRoundingDoublingHighMul16(reluish, p.reluish_multiplier_fixedpoint_int16);
    if (p.reluish_multiplier_exponent > 0) reluish = SaturatingLeftShift16(reluish, 1);
    if (p.reluish_multiplier_exponent < 0) {
      reluish = RoundingDivideByPOT16(reluish, -p.reluish_multiplier_exponent);
    }
    // [-1, 1] -> [0, 1].
    reluish = static_cast<int16_t>((static_cast<int32_t>(reluish) + (1 << 15)) >> 1);
    const int16_t preshift = SaturatingDoublingHighMul16(reluish, x_preshift_out);
    int32_t y = RoundingDivideByPOT16(preshift, -p.output_multiplier_exponent);
    y += p.output_zero_point;
    output[i] = ClampToInt8(y, -128, 127);
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
