#include "runtime/kernels/reference/math.h"

#include <limits>

#include <cmath>

#include "runtime/kernels/reference/float_math.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

// reference_ops::Round: ties go to the even neighbour. A tie has |value| < 2^23, so the int
// conversion of its floor is exact.
float RoundHalfToEven(float value) {
  const float floor_value = std::floor(value);
  const float diff = value - floor_value;
  if (diff < 0.5f || (diff == 0.5f && static_cast<int32_t>(floor_value) % 2 == 0)) {
    return floor_value;
  }
  return floor_value + 1.0f;
}

template <typename F>
void Apply(int64_t count, const float* input, float* output, F f) {
  for (int64_t i = 0; i < count; ++i) output[i] = f(input[i]);
}

}  // namespace

Error float_unary_f32(FloatUnary op, int64_t count, const float* input, float* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && count >= 0, kInvalidArgument,
                           "float_unary_f32: bad arguments");
  switch (op) {
    case FloatUnary::kExp:
      Apply(count, input, output, ExpF);
      break;
    case FloatUnary::kLog:
      Apply(count, input, output, LogF);
      break;
    case FloatUnary::kSqrt:
      Apply(count, input, output, [](float x) { return std::sqrt(x); });
      break;
    case FloatUnary::kRsqrt:
      Apply(count, input, output, [](float x) { return 1.0f / std::sqrt(x); });
      break;
    case FloatUnary::kSquare:
      Apply(count, input, output, [](float x) { return x * x; });
      break;
    case FloatUnary::kRound:
      Apply(count, input, output, RoundHalfToEven);
      break;
    case FloatUnary::kFloor:
      Apply(count, input, output, [](float x) { return std::floor(x); });
      break;
    case FloatUnary::kElu:
      Apply(count, input, output, [](float x) { return x < 0.0f ? Expm1F(x) : x; });
      break;
  }
  return Error::kOk;
}

Error rsqrt_s8(const RsqrtParams& p, int64_t count, const int8_t* input, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && count >= 0, kInvalidArgument,
                           "rsqrt_s8: bad arguments");
  constexpr int kShift = 20;  // keeps 1 / sqrt(v) an integer between the two multiplications
  for (int64_t i = 0; i < count; ++i) {
    const int32_t v = input[i] - p.input_zero_point;
    RT_CHECK_OR_RETURN_ERROR(v >= 0, kInvalidArgument,
                             "rsqrt: input %d at element %ld is below the zero point %d: RSQRT is "
                             "only defined for positive values",
                             static_cast<int>(input[i]), static_cast<long>(i),
                             static_cast<int>(p.input_zero_point));
    if (v == 0) {
      output[i] = 127;  // TFLite Micro takes a value near 0 as the largest output
      continue;
    }
    int32_t inv_multiplier;
    int inv_shift;
    fixed_point::InvSqrtQuantizedMultiplier(v, -1, &inv_multiplier, &inv_shift);
    const int32_t d = MultiplyByQuantizedMultiplier(1, inv_multiplier, inv_shift + kShift);
    const int32_t out =
        MultiplyByQuantizedMultiplier(d, p.multiplier, p.shift - kShift) + p.output_zero_point;
    output[i] = ClampToInt8(out, -128, 127);
  }
  return Error::kOk;
}

void BuildEluTable(float input_scale, int32_t input_zero_point, float output_scale,
                   int32_t output_zero_point, int8_t table[256]) {
  const float inverse_scale = 1 / output_scale;
  for (int32_t q = -128; q <= 127; ++q) {
    const float x = input_scale * static_cast<float>(q - input_zero_point);
    const float y = x < 0.0f ? ExpF(x) - 1.0f : x;
    const float rescaled = RoundHalfAwayF(y * inverse_scale);
    // The zero point is added in float, as TFLite Micro's table builder does; the float is
    // clamped before the conversion, which only changes values outside int32 (where the
    // conversion would be undefined).
    const float shifted = rescaled + static_cast<float>(output_zero_point);
    const float clamped = shifted < -128.0f ? -128.0f : (shifted > 127.0f ? 127.0f : shifted);
    table[static_cast<uint8_t>(static_cast<int8_t>(q))] = static_cast<int8_t>(clamped);
  }
}

Error lookup_s8(const int8_t table[256], int64_t count, const int8_t* input, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(table != nullptr && input != nullptr && output != nullptr && count >= 0,
                           kInvalidArgument, "lookup_s8: bad arguments");
  for (int64_t i = 0; i < count; ++i) output[i] = table[static_cast<uint8_t>(input[i])];
  return Error::kOk;
}

namespace {

// TFLite Micro's BroadcastPrelu4DSlow<T, int8_t>: the identity rescale for x >= 0, the alpha
// product rescale below, clamped to the input type.
template <typename T>
Error QuantizedPrelu(const char* name, const PreluParams& p, const BroadcastStrides& strides,
                     const T* input, const int8_t* alpha, T* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && alpha != nullptr && output != nullptr,
                           kInvalidArgument, "%s: bad arguments", name);
  constexpr int32_t kLo = std::numeric_limits<T>::min(), kHi = std::numeric_limits<T>::max();
  ForEachBroadcast(strides, [&](int64_t ia, int64_t ib, int64_t o) {
    const int32_t v = p.input_offset + input[ia];
    int32_t out;
    if (v >= 0) {
      out = MultiplyByQuantizedMultiplier(v, p.multiplier_1, p.shift_1);
    } else {
      const int32_t a = p.alpha_offset + alpha[ib];
      out = MultiplyByQuantizedMultiplier(v * a, p.multiplier_2, p.shift_2);
    }
    out += p.output_offset;
    output[o] = static_cast<T>(out < kLo ? kLo : (out > kHi ? kHi : out));
  });
  return Error::kOk;
}

}  // namespace

Error prelu_s8(const PreluParams& p, const BroadcastStrides& strides, const int8_t* input,
               const int8_t* alpha, int8_t* output) {
  return QuantizedPrelu("prelu_s8", p, strides, input, alpha, output);
}

Error prelu_s16(const PreluParams& p, const BroadcastStrides& strides, const int16_t* input,
                const int8_t* alpha, int16_t* output) {
  return QuantizedPrelu("prelu_s16", p, strides, input, alpha, output);
}

Error prelu_f32(const BroadcastStrides& strides, const float* input, const float* alpha,
                float* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && alpha != nullptr && output != nullptr,
                           kInvalidArgument, "prelu_f32: bad arguments");
  ForEachBroadcast(strides, [&](int64_t ia, int64_t ib, int64_t o) {
    const float x = input[ia];
    output[o] = x >= 0.0f ? x : x * alpha[ib];
  });
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
