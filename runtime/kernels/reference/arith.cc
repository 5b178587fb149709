#include "runtime/kernels/reference/arith.h"

#include <cmath>
#include <limits>

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

int32_t MultiplyByQuantizedMultiplierSmallerThanOne(int32_t x, int32_t multiplier, int shift) {
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, multiplier), -shift);
}

// gemmlowp's RoundingDivideByPOT as TFLite Micro runs it on a Cortex-M for any exponent >= 0.
// Beyond 31 the C++ is undefined but its machine behaviour is fixed: the mask (1ll << e) - 1
// narrowed to int32 is all ones, so the remainder is x and the threshold -1 (0 for x < 0), and
// the M33's arithmetic shift by 32 or more fills with the sign. The result is 1 for x >= 0 and
// -1 for x < 0 (an x86 or WASM build agrees where x = 0, its shift counts modulo 32).
int32_t RoundingDivideByAnyPOT(int32_t x, int exponent) {
  if (exponent <= 31) return RoundingDivideByPOT(x, exponent);
  return x < 0 ? -1 : 1;
}

int32_t Clamp32(int32_t x, int32_t lo, int32_t hi) { return x < lo ? lo : (x > hi ? hi : x); }

int32_t WrappingSub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
int32_t WrappingMul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

// (q - zp) << left_shift, rescaled by the input multiplier (ADD_N, CUMSUM).
int32_t RescaledInput(const SumRescale& p, int32_t q) {
  return MultiplyByQuantizedMultiplierSmallerThanOne((p.input_offset + q) * (1 << p.left_shift),
                                                     p.input_multiplier, p.input_shift);
}

int8_t RescaledOutput(const SumRescale& p, int32_t sum) {
  const int32_t out =
      MultiplyByQuantizedMultiplierSmallerThanOne(sum, p.output_multiplier, p.output_shift) +
      p.output_offset;
  return ClampToInt8(out, -128, 127);
}

// output[o] = f(a[ia], b[ib]) over the broadcast; the element-wise bodies of the binary ops.
template <typename T, typename F>
Error MapBroadcast(const char* name, const BroadcastStrides& strides, const T* a, const T* b,
                   T* output, F f) {
  RT_CHECK_OR_RETURN_ERROR(a != nullptr && b != nullptr && output != nullptr, kInvalidArgument,
                           "%s: bad arguments", name);
  ForEachBroadcast(strides,
                   [&](int64_t ia, int64_t ib, int64_t o) { output[o] = f(a[ia], b[ib]); });
  return Error::kOk;
}

}  // namespace

Error div_s8(const DivParams& p, const BroadcastStrides& strides, const int8_t* a, const int8_t* b,
             int8_t* output) {
  bool divided_by_zero = false;
  RT_RETURN_IF_ERROR(MapBroadcast("div_s8", strides, a, b, output, [&](int8_t qa, int8_t qb) {
    int32_t v1 = p.input1_offset + qa;
    int32_t v2 = p.input2_offset + qb;
    if (v2 == 0) {
      divided_by_zero = true;
      return int8_t{0};
    }
    if (v2 < 0) {  // the reciprocal is taken of a positive divisor
      v1 = -v1;
      v2 = -v2;
    }
    int reciprocal_shift;
    const int32_t reciprocal = fixed_point::GetReciprocal(v2, 31, &reciprocal_shift);
    const int headroom = CountLeadingSignBits32(v1);
    // The M33 wraps: v1 = -1 has headroom 31, and -1 * 2^31 is INT32_MIN there, undefined in C++.
    const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(v1) << headroom);
    const int32_t quotient = SaturatingRoundingDoublingHighMul(shifted, reciprocal);
    const int exponent = headroom + reciprocal_shift - p.output_shift;
    const int32_t scaled = SaturatingRoundingDoublingHighMul(quotient, p.output_multiplier);
    const int32_t out = p.output_offset + (exponent >= 0 ? RoundingDivideByAnyPOT(scaled, exponent)
                                                         : SaturatingLeftShift(scaled, -exponent));
    return static_cast<int8_t>(Clamp32(out, p.act_min, p.act_max));
  }));
  RT_CHECK_OR_RETURN_ERROR(!divided_by_zero, kInvalidArgument,
                           "div: a divisor equals its zero point (division by zero)");
  return Error::kOk;
}

Error div_s32(const BroadcastStrides& strides, const int32_t* a, const int32_t* b, int32_t act_min,
              int32_t act_max, int32_t* output) {
  bool divided_by_zero = false;
  RT_RETURN_IF_ERROR(MapBroadcast("div_s32", strides, a, b, output, [&](int32_t x, int32_t y) {
    if (y == 0) {
      divided_by_zero = true;
      return int32_t{0};
    }
    // INT32_MIN / -1 wraps to INT32_MIN (the one quotient int32 cannot hold).
    const int32_t q = (y == -1) ? WrappingSub(0, x) : x / y;
    return Clamp32(q, act_min, act_max);
  }));
  RT_CHECK_OR_RETURN_ERROR(!divided_by_zero, kInvalidArgument, "div: int32 division by zero");
  return Error::kOk;
}

Error div_f32(const BroadcastStrides& strides, const float* a, const float* b, float act_min,
              float act_max, float* output) {
  return MapBroadcast("div_f32", strides, a, b, output, [&](float x, float y) {
    // TFLite's ActivationFunctionWithMinMax: min(max(x, lo), hi) with std::max/std::min.
    const float q = x / y;
    const float lower = q < act_min ? act_min : q;
    return act_max < lower ? act_max : lower;
  });
}

Error floor_div_f32(const BroadcastStrides& strides, int64_t divisor_count, const float* a,
                    const float* b, float* output) {
  RT_CHECK_OR_RETURN_ERROR(b != nullptr && divisor_count >= 0, kInvalidArgument,
                           "floor_div_f32: bad arguments");
  for (int64_t i = 0; i < divisor_count; ++i) {
    RT_CHECK_OR_RETURN_ERROR(b[i] != 0.0f, kInvalidArgument,
                             "floor_div: divisor element %ld is 0 (division by zero)",
                             static_cast<long>(i));
  }
  return MapBroadcast("floor_div_f32", strides, a, b, output, [](float x, float y) {
    return static_cast<float>(std::floor(static_cast<double>(x) / static_cast<double>(y)));
  });
}

Error floor_mod_f32(const BroadcastStrides& strides, const float* a, const float* b,
                    float* output) {
  return MapBroadcast("floor_mod_f32", strides, a, b, output, [](float x, float y) {
    const float r = std::fmod(x, y);
    return (r != 0.0f && ((y < 0.0f) != (r < 0.0f))) ? r + y : r;
  });
}

namespace {

// TFLite Micro's quantized SquaredDifference (int8 with left shift 7, int16 with 0).
template <typename T>
T SquaredDifferenceOf(const SquaredDifferenceParams& p, T qa, T qb) {
  const int32_t x = MultiplyByQuantizedMultiplierSmallerThanOne(
      (p.input1_offset + qa) * (1 << p.left_shift), p.input1_multiplier, p.input1_shift);
  const int32_t y = MultiplyByQuantizedMultiplierSmallerThanOne(
      (p.input2_offset + qb) * (1 << p.left_shift), p.input2_multiplier, p.input2_shift);
  const int32_t d = x - y;  // |d| <= 2^15: the square fits
  const int32_t out =
      MultiplyByQuantizedMultiplier(d * d, p.output_multiplier, p.output_shift) + p.output_offset;
  constexpr int32_t kLo = std::numeric_limits<T>::min(), kHi = std::numeric_limits<T>::max();
  return static_cast<T>(out < kLo ? kLo : (out > kHi ? kHi : out));
}

}  // namespace

Error squared_difference_s8(const SquaredDifferenceParams& p, const BroadcastStrides& strides,
                            const int8_t* a, const int8_t* b, int8_t* output) {
  return MapBroadcast("squared_difference_s8", strides, a, b, output,
                      [&](int8_t qa, int8_t qb) { return SquaredDifferenceOf(p, qa, qb); });
}

Error squared_difference_s16(const SquaredDifferenceParams& p, const BroadcastStrides& strides,
                             const int16_t* a, const int16_t* b, int16_t* output) {
  RT_CHECK_OR_RETURN_ERROR(
      p.left_shift == 0 && p.input1_offset == 0 && p.input2_offset == 0 && p.output_offset == 0,
      kInvalidArgument, "squared_difference_s16: 16x8 takes left shift 0 and zero points 0");
  return MapBroadcast("squared_difference_s16", strides, a, b, output,
                      [&](int16_t qa, int16_t qb) { return SquaredDifferenceOf(p, qa, qb); });
}

Error squared_difference_s32(const BroadcastStrides& strides, const int32_t* a, const int32_t* b,
                             int32_t* output) {
  return MapBroadcast("squared_difference_s32", strides, a, b, output, [](int32_t x, int32_t y) {
    const int32_t d = WrappingSub(x, y);
    return WrappingMul(d, d);
  });
}

Error squared_difference_f32(const BroadcastStrides& strides, const float* a, const float* b,
                             float* output) {
  return MapBroadcast("squared_difference_f32", strides, a, b, output, [](float x, float y) {
    const float d = x - y;
    return d * d;
  });
}

Error add_n_s8(const SumRescale& p, int64_t count, const int8_t* const* inputs, int32_t num_inputs,
               int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(inputs != nullptr && output != nullptr && num_inputs >= 1 && count >= 0,
                           kInvalidArgument, "add_n_s8: bad arguments");
  for (int64_t i = 0; i < count; ++i) {
    int32_t sum = RescaledInput(p, 0);  // TFLite Micro starts from the rescaled -zp
    for (int32_t k = 0; k < num_inputs; ++k) sum += RescaledInput(p, inputs[k][i]);
    output[i] = RescaledOutput(p, sum);
  }
  return Error::kOk;
}

Error add_n_f32(int64_t count, const float* const* inputs, int32_t num_inputs, float* output) {
  RT_CHECK_OR_RETURN_ERROR(inputs != nullptr && output != nullptr && num_inputs >= 1 && count >= 0,
                           kInvalidArgument, "add_n_f32: bad arguments");
  for (int64_t i = 0; i < count; ++i) {
    float sum = 0.0f;
    for (int32_t k = 0; k < num_inputs; ++k) sum += inputs[k][i];
    output[i] = sum;
  }
  return Error::kOk;
}

namespace {

// Visits every line along `spec.axis` in order, calling f(index) for its elements from the
// start (or from the end when reversed) and begin_line() before each line.
template <typename BeginLine, typename F>
void ForEachCumsumLine(const CumsumSpec& spec, BeginLine begin_line, F f) {
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < spec.axis; ++d) outer *= spec.shape.dims[d];
  for (int32_t d = spec.axis + 1; d < spec.shape.rank; ++d) inner *= spec.shape.dims[d];
  const int64_t depth = spec.shape.dims[spec.axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      begin_line();
      for (int64_t k = 0; k < depth; ++k) {
        const int64_t along = spec.reverse ? depth - 1 - k : k;
        f((o * depth + along) * inner + i);
      }
    }
  }
}

bool ValidSpec(const CumsumSpec& spec) {
  return spec.shape.rank >= 1 && spec.shape.rank <= kMaxDims && spec.axis >= 0 &&
         spec.axis < spec.shape.rank;
}

}  // namespace

Error cumsum_s8(const SumRescale& p, const CumsumSpec& spec, const int8_t* input, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && ValidSpec(spec),
                           kInvalidArgument, "cumsum_s8: bad arguments");
  int32_t sum = 0;
  ForEachCumsumLine(
      spec, [&] { sum = RescaledInput(p, 0); },
      [&](int64_t index) {
        const int32_t value = RescaledInput(p, input[index]);
        if (spec.exclusive) {
          output[index] = RescaledOutput(p, sum);
          sum += value;
        } else {
          sum += value;
          output[index] = RescaledOutput(p, sum);
        }
      });
  return Error::kOk;
}

Error cumsum_f32(const CumsumSpec& spec, const float* input, float* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && ValidSpec(spec),
                           kInvalidArgument, "cumsum_f32: bad arguments");
  float sum = 0.0f;
  ForEachCumsumLine(
      spec, [&] { sum = 0.0f; },
      [&](int64_t index) {
        const float value = input[index];
        if (spec.exclusive) {
          output[index] = sum;
          sum += value;
        } else {
          sum += value;
          output[index] = sum;
        }
      });
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
