#include "runtime/kernels/reference/normalization.h"

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

constexpr int kLogSoftmaxInputIntegerBits = 5;   // d in Q5.26: exp(-32) is negligible
constexpr int kLogSoftmaxSumIntegerBits = 12;    // the sum of up to 2^12 exps
constexpr int kLogSoftmaxOutputIntegerBits = 4;  // outputs in [-16, 0)
constexpr int32_t kLogSoftmaxOutputZeroPoint = 127;

int32_t MaxOfRow(const int8_t* x, int32_t depth) {
  int32_t m = -128;
  for (int32_t c = 0; c < depth; ++c) m = Max32(m, x[c]);
  return m;
}

void LogSoftmaxRow(const LogSoftmaxParams& p, const int8_t* x, int32_t depth, int8_t* y) {
  const int32_t max_value = MaxOfRow(x, depth);
  auto diff_in_q5 = [&p](int32_t diff) {
    return MultiplyByQuantizedMultiplier(diff, p.input_multiplier, p.input_left_shift);
  };
  int32_t sum_of_exps = 0;  // Q12.19
  for (int32_t c = 0; c < depth; ++c) {
    const int32_t diff = x[c] - max_value;
    if (diff < p.diff_min) continue;
    const int32_t e =
        fixed_point::ExpOnNegativeValues(diff_in_q5(diff), kLogSoftmaxInputIntegerBits);
    sum_of_exps = fixed_point::WrappingAdd(sum_of_exps,
                                           fixed_point::Rescale(e, 0, kLogSoftmaxSumIntegerBits));
  }
  const int32_t log_sum = fixed_point::LogXForXGreaterThanOrEqualTo1(
      sum_of_exps, kLogSoftmaxSumIntegerBits, kLogSoftmaxInputIntegerBits);
  // Differences at or below this give the lowest output: their log-probability is below the
  // smallest Q5.26 value once log(sum) is taken off.
  const int32_t adjusted_diff_min = Max32(
      p.diff_min - 1, MultiplyByQuantizedMultiplier(fixed_point::WrappingAdd(log_sum, kInt32Min),
                                                    p.reverse_multiplier, p.reverse_shift));
  for (int32_t c = 0; c < depth; ++c) {
    const int32_t diff = x[c] - max_value;
    if (diff <= adjusted_diff_min) {
      y[c] = -128;
      continue;
    }
    const int32_t out_q =
        RoundingDivideByPOT(fixed_point::WrappingAdd(diff_in_q5(diff), -log_sum),
                            31 - kLogSoftmaxInputIntegerBits - kLogSoftmaxOutputIntegerBits);
    y[c] = ClampToInt8(out_q + kLogSoftmaxOutputZeroPoint, -128, 127);
  }
}

// The source coordinate of output index `i` in 1/1024 steps and its two neighbours.
struct Interpolation {
  int32_t scaled, lower, upper;
};

Interpolation InterpolationAt(int32_t i, int32_t scale_10, bool half_pixel_centers,
                              int32_t input_size) {
  Interpolation v;
  v.scaled = half_pixel_centers ? i * scale_10 + scale_10 / 2 - (1 << 9) : i * scale_10;
  // C division truncates toward zero, as the reference's does.
  v.lower = Max32(v.scaled / (1 << 10), 0);
  v.upper = Min32((v.scaled + (1 << 10) - 1) / (1 << 10), input_size - 1);
  return v;
}

int32_t ResizeScale10(int32_t in, int32_t out, bool align_corners) {
  if (align_corners && out > 1) return ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
  return ((1 << 10) * in + out / 2) / out;
}

}  // namespace

Error log_softmax_s8(const LogSoftmaxParams& p, int64_t rows, int32_t depth, const int8_t* input,
                     int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr, kInvalidArgument,
                           "log_softmax_s8: null tensor");
  RT_CHECK_OR_RETURN_ERROR(rows >= 0 && depth > 0, kInvalidArgument, "log_softmax_s8: bad sizes");
  RT_CHECK_OR_RETURN_ERROR(p.input_left_shift >= 0 && p.input_left_shift < 31 &&
                               p.reverse_shift <= 0 && p.reverse_shift > -32,
                           kInvalidArgument, "log_softmax_s8: bad shifts");
  for (int64_t r = 0; r < rows; ++r) {
    LogSoftmaxRow(p, input + r * depth, depth, output + r * depth);
  }
  return Error::kOk;
}

Error l2_normalization_s8(int32_t input_zero_point, int64_t rows, int32_t depth,
                          const int8_t* input, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr, kInvalidArgument,
                           "l2_normalization_s8: null tensor");
  RT_CHECK_OR_RETURN_ERROR(rows >= 0 && depth > 0, kInvalidArgument,
                           "l2_normalization_s8: bad sizes");
  constexpr int kOutputShift = 7;  // output scale 1/128
  for (int64_t r = 0; r < rows; ++r) {
    const int8_t* x = input + r * depth;
    int8_t* y = output + r * depth;
    // Each square is at most 255^2, so 2^15 of them fit int32; wider rows wrap as in the
    // reference.
    int32_t sum_squares = 0;
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t v = x[c] - input_zero_point;
      sum_squares = fixed_point::WrappingAdd(sum_squares, v * v);
    }
    int32_t multiplier = 0;
    int shift = 0;
    fixed_point::InvSqrtQuantizedMultiplier(sum_squares, -1, &multiplier, &shift);
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t v = x[c] - input_zero_point;
      y[c] = ClampToInt8(MultiplyByQuantizedMultiplier(v, multiplier, shift + kOutputShift), -128,
                         127);
    }
  }
  return Error::kOk;
}

Error resize_bilinear_s8(const Dims4& in, const int8_t* input, const Dims4& out, bool align_corners,
                         bool half_pixel_centers, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr, kInvalidArgument,
                           "resize_bilinear_s8: null tensor");
  RT_CHECK_OR_RETURN_ERROR(in.n == out.n && in.c == out.c && in.h > 0 && in.w > 0 && out.h > 0 &&
                               out.w > 0 && !(align_corners && half_pixel_centers),
                           kInvalidArgument, "resize_bilinear_s8: bad shapes or options");
  const int32_t scale_h = ResizeScale10(in.h, out.h, align_corners);
  const int32_t scale_w = ResizeScale10(in.w, out.w, align_corners);
  auto at = [&](int32_t b, int32_t y, int32_t x) {
    return input + ((static_cast<int64_t>(b) * in.h + y) * in.w + x) * in.c;
  };
  int8_t* dst = output;
  for (int32_t b = 0; b < out.n; ++b) {
    for (int32_t oy = 0; oy < out.h; ++oy) {
      const Interpolation y = InterpolationAt(oy, scale_h, half_pixel_centers, in.h);
      const int64_t wy1 = y.scaled - (1 << 10) * y.lower, wy0 = (1 << 10) - wy1;
      for (int32_t ox = 0; ox < out.w; ++ox) {
        const Interpolation x = InterpolationAt(ox, scale_w, half_pixel_centers, in.w);
        const int64_t wx1 = x.scaled - (1 << 10) * x.lower, wx0 = (1 << 10) - wx1;
        const int8_t *p00 = at(b, y.lower, x.lower), *p10 = at(b, y.upper, x.lower);
        const int8_t *p01 = at(b, y.lower, x.upper), *p11 = at(b, y.upper, x.upper);
        for (int32_t c = 0; c < in.c; ++c) {
          const int64_t sum =
              p00[c] * wy0 * wx0 + p10[c] * wy1 * wx0 + p01[c] * wy0 * wx1 + p11[c] * wy1 * wx1;
          // Half away from zero (TFLite Micro is built without TFLITE_SINGLE_ROUNDING).
          const int64_t round = sum > 0 ? (1 << 19) : -(1 << 19);
          *dst++ = static_cast<int8_t>((sum + round) / (1 << 20));
        }
      }
    }
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
