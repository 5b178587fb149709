#include "runtime/kernels/reference/reduce.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

bool ValidShape(const ShapeN& s) {
  if (s.rank < 0 || s.rank > kMaxDims) return false;
  for (int32_t i = 0; i < s.rank; ++i) {
    if (s.dims[i] < 1) return false;
  }
  return true;
}

int64_t OutputCount(const ShapeN& shape, const bool* reduced) {
  int64_t n = 1;
  for (int32_t d = 0; d < shape.rank; ++d) {
    if (!reduced[d]) n *= shape.dims[d];
  }
  return n;
}

// Calls f(input_index, output_index) for every input element in row-major order, where the
// output index drops the reduced dimensions. The same visiting order as TFLite's Reduce, which
// matters for float sums.
template <typename F>
void ForEachReduced(const ShapeN& shape, const bool* reduced, F&& f) {
  int32_t d[kMaxDims] = {1, 1, 1, 1, 1, 1};
  int64_t out_step[kMaxDims] = {};
  int64_t s = 1;
  for (int32_t i = shape.rank - 1; i >= 0; --i) {
    const int32_t k = kMaxDims - shape.rank + i;
    d[k] = shape.dims[i];
    out_step[k] = reduced[i] ? 0 : s;
    if (!reduced[i]) s *= shape.dims[i];
  }
  int64_t in = 0;
  for (int32_t i0 = 0; i0 < d[0]; ++i0) {
    for (int32_t i1 = 0; i1 < d[1]; ++i1) {
      for (int32_t i2 = 0; i2 < d[2]; ++i2) {
        for (int32_t i3 = 0; i3 < d[3]; ++i3) {
          for (int32_t i4 = 0; i4 < d[4]; ++i4) {
            int64_t out = i0 * out_step[0] + i1 * out_step[1] + i2 * out_step[2] +
                          i3 * out_step[3] + i4 * out_step[4];
            for (int32_t i5 = 0; i5 < d[5]; ++i5, out += out_step[5]) f(in++, out);
          }
        }
      }
    }
  }
}

template <typename T, typename Pick>
Error ReduceWith(const char* name, const ShapeN& shape, const bool* reduced, const T* input, T init,
                 Pick pick, T* output) {
  RT_CHECK_OR_RETURN_ERROR(
      input != nullptr && output != nullptr && reduced != nullptr && ValidShape(shape),
      kInvalidArgument, "%s: bad arguments", name);
  const int64_t count = OutputCount(shape, reduced);
  for (int64_t i = 0; i < count; ++i) output[i] = init;
  ForEachReduced(shape, reduced,
                 [&](int64_t i, int64_t o) { output[o] = pick(output[o], input[i]); });
  return Error::kOk;
}

// TFLite's reducers: `(in > current) ? in : current` and the mirror for min, so a NaN input never
// replaces the running value.
template <typename T>
T PickMax(T current, T in) {
  return in > current ? in : current;
}
template <typename T>
T PickMin(T current, T in) {
  return in < current ? in : current;
}

template <typename T>
Error ArgMinMax(const char* name, const ShapeN& shape, const T* input, int32_t axis, bool max,
                ArgOutput output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output.data != nullptr && ValidShape(shape) &&
                               axis >= 0 && axis < shape.rank,
                           kInvalidArgument, "%s: bad arguments", name);
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= shape.dims[d];
  for (int32_t d = axis + 1; d < shape.rank; ++d) inner *= shape.dims[d];
  const int32_t size = shape.dims[axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      const T* row = input + o * size * inner + k;
      T best = row[0];
      int64_t best_index = 0;
      for (int32_t i = 1; i < size; ++i) {
        const T v = row[i * inner];
        if (max ? v > best : v < best) {
          best = v;
          best_index = i;
        }
      }
      if (output.wide) {
        static_cast<int64_t*>(output.data)[o * inner + k] = best_index;
      } else {
        static_cast<int32_t*>(output.data)[o * inner + k] = static_cast<int32_t>(best_index);
      }
    }
  }
  return Error::kOk;
}

// TFLite Micro's QuantizedMeanOrSum with compute_sum (one template for int8 and int16): int32
// sums of the raw values, the input zero point taken out once per summed element, then the
// output rescale QuantizeMultiplier(in_scale / out_scale) and a clamp to the output type.
template <typename T>
Error QuantizedSum(const char* name, const SumParams& p, const ShapeN& shape, const bool* reduced,
                   const T* input, int32_t* scratch, T* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && scratch != nullptr &&
                               reduced != nullptr && ValidShape(shape),
                           kInvalidArgument, "%s: bad arguments", name);
  const int64_t count = OutputCount(shape, reduced);
  const int64_t per_output = shape.Size() / count;
  std::memset(scratch, 0, static_cast<size_t>(count) * sizeof(int32_t));
  ForEachReduced(shape, reduced, [&](int64_t i, int64_t o) { scratch[o] += input[i]; });
  constexpr int32_t kLo = std::numeric_limits<T>::min(), kHi = std::numeric_limits<T>::max();
  for (int64_t o = 0; o < count; ++o) {
    // int32, as TFLite Micro's accumulator type (it wraps where TFLite Micro does).
    const int32_t shifted = static_cast<int32_t>(
        static_cast<uint32_t>(scratch[o]) - static_cast<uint32_t>(p.input_zero_point * per_output));
    const int32_t value =
        MultiplyByQuantizedMultiplier(shifted, p.multiplier, p.shift) + p.output_zero_point;
    output[o] = static_cast<T>(value < kLo ? kLo : (value > kHi ? kHi : value));
  }
  return Error::kOk;
}

}  // namespace

Error reduce_max_s8(const ShapeN& shape, const bool* reduced, const int8_t* input, int8_t* output) {
  return ReduceWith<int8_t>("reduce_max_s8", shape, reduced, input, int8_t{-128}, PickMax<int8_t>,
                            output);
}

Error reduce_min_s8(const ShapeN& shape, const bool* reduced, const int8_t* input, int8_t* output) {
  return ReduceWith<int8_t>("reduce_min_s8", shape, reduced, input, int8_t{127}, PickMin<int8_t>,
                            output);
}

Error reduce_max_f32(const ShapeN& shape, const bool* reduced, const float* input, float* output) {
  return ReduceWith<float>("reduce_max_f32", shape, reduced, input,
                           std::numeric_limits<float>::lowest(), PickMax<float>, output);
}

Error reduce_min_f32(const ShapeN& shape, const bool* reduced, const float* input, float* output) {
  return ReduceWith<float>("reduce_min_f32", shape, reduced, input,
                           std::numeric_limits<float>::max(), PickMin<float>, output);
}

int64_t sum_s8_get_buffer_size(const ShapeN& shape, const bool* reduced) {
  return OutputCount(shape, reduced) * static_cast<int64_t>(sizeof(int32_t));
}

Error sum_s8(const SumParams& p, const ShapeN& shape, const bool* reduced, const int8_t* input,
             int32_t* scratch, int8_t* output) {
  return QuantizedSum("sum_s8", p, shape, reduced, input, scratch, output);
}

Error sum_s16(const SumParams& p, const ShapeN& shape, const bool* reduced, const int16_t* input,
              int32_t* scratch, int16_t* output) {
  return QuantizedSum("sum_s16", p, shape, reduced, input, scratch, output);
}

Error sum_f32(const ShapeN& shape, const bool* reduced, const float* input, float* output) {
  return ReduceWith<float>(
      "sum_f32", shape, reduced, input, 0.0f, [](float current, float in) { return in + current; },
      output);
}

Error arg_min_max_s8(const ShapeN& shape, const int8_t* input, int32_t axis, bool max,
                     ArgOutput output) {
  return ArgMinMax("arg_min_max_s8", shape, input, axis, max, output);
}

Error arg_min_max_f32(const ShapeN& shape, const float* input, int32_t axis, bool max,
                      ArgOutput output) {
  return ArgMinMax("arg_min_max_f32", shape, input, axis, max, output);
}

}  // namespace boardlab::runtime::kernels
