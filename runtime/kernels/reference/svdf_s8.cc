#include "runtime/kernels/reference/svdf_s8.h"

#include <limits>

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

template <typename State>
void ShiftMemory(const SvdfDims& d, State* state) {
  // One step left over the whole buffer, as TFLite Micro does: each row's last element is
  // overwritten by the feature matmul right after, so rows do not leak into each other.
  const int64_t count = int64_t{d.batch} * d.filters * d.memory;
  for (int64_t i = 0; i + 1 < count; ++i) state[i] = state[i + 1];
}

template <typename State>
void FeatureMatmul(const SvdfParams& p, const SvdfDims& d, const int8_t* input,
                   const int8_t* feature, State* state) {
  constexpr int32_t kMin = std::numeric_limits<State>::min();
  constexpr int32_t kMax = std::numeric_limits<State>::max();
  for (int32_t b = 0; b < d.batch; ++b) {
    const int8_t* x = input + static_cast<int64_t>(b) * d.input_size;
    State* row = state + static_cast<int64_t>(b) * d.filters * d.memory;
    for (int32_t f = 0; f < d.filters; ++f) {
      const int8_t* w = feature + static_cast<int64_t>(f) * d.input_size;
      uint32_t dot = 0;  // wraps like the reference's int32 sum
      for (int32_t c = 0; c < d.input_size; ++c) {
        dot += static_cast<uint32_t>(w[c] * (x[c] - p.input_zero_point));
      }
      int32_t a = MultiplyByQuantizedMultiplier(static_cast<int32_t>(dot), p.feature_multiplier,
                                                p.feature_shift);
      a = p.state_zero_point + a;
      row[static_cast<int64_t>(f) * d.memory + d.memory - 1] =
          static_cast<State>(a < kMin ? kMin : (a > kMax ? kMax : a));
    }
  }
}

template <typename State>
void TimeMatmul(const SvdfParams& p, const SvdfDims& d, const State* time, const int32_t* bias,
                const State* state, int8_t* output) {
  const int32_t units = d.filters / p.rank;
  for (int32_t b = 0; b < d.batch; ++b) {
    const State* rows = state + static_cast<int64_t>(b) * d.filters * d.memory;
    for (int32_t u = 0; u < units; ++u) {
      uint32_t acc = bias != nullptr ? static_cast<uint32_t>(bias[u]) : 0u;
      for (int32_t r = 0; r < p.rank; ++r) {
        const int64_t f = static_cast<int64_t>(u) * p.rank + r;
        const State* s = rows + f * d.memory;
        const State* w = time + f * d.memory;
        for (int32_t j = 0; j < d.memory; ++j) {
          // int64: an int16 weight times a state value off a large zero point can pass int32;
          // the low 32 bits are what TFLite Micro's wrapping int32 arithmetic keeps.
          acc += static_cast<uint32_t>(int64_t{w[j]} * (s[j] - p.state_zero_point));
        }
      }
      const int32_t y = MultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), p.time_multiplier,
                                                      p.time_shift) +
                        p.output_zero_point;
      output[static_cast<int64_t>(b) * units + u] = ClampToInt8(y, -128, 127);
    }
  }
}

template <typename State>
Error Svdf(const SvdfParams& p, const SvdfDims& d, const int8_t* input, const int8_t* feature,
           const State* time, const int32_t* bias, State* state, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && feature != nullptr && time != nullptr &&
                               state != nullptr && output != nullptr,
                           kInvalidArgument, "svdf: null tensor");
  RT_CHECK_OR_RETURN_ERROR(d.batch > 0 && d.input_size > 0 && d.memory > 0 && p.rank > 0 &&
                               d.filters > 0 && d.filters % p.rank == 0,
                           kInvalidArgument, "svdf: shapes do not match");
  ShiftMemory(d, state);
  FeatureMatmul(p, d, input, feature, state);
  TimeMatmul(p, d, time, bias, state, output);
  return Error::kOk;
}

}  // namespace

Error svdf_s8_s16(const SvdfParams& params, const SvdfDims& dims, const int8_t* input,
                  const int8_t* feature_weights, const int16_t* time_weights, const int32_t* bias,
                  int16_t* state, int8_t* output) {
  return Svdf(params, dims, input, feature_weights, time_weights, bias, state, output);
}

Error svdf_s8_s8(const SvdfParams& params, const SvdfDims& dims, const int8_t* input,
                 const int8_t* feature_weights, const int8_t* time_weights, const int32_t* bias,
                 int8_t* state, int8_t* output) {
  return Svdf(params, dims, input, feature_weights, time_weights, bias, state, output);
}

}  // namespace boardlab::runtime::kernels
