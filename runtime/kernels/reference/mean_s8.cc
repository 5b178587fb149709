#include "runtime/kernels/reference/mean_s8.h"

#include <limits>

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {

size_t mean_s8_get_buffer_size(int64_t output_size) {
  return static_cast<size_t>(output_size) * sizeof(int32_t);
}

namespace {

int32_t MeanUnclamped(int32_t sum, int64_t count, const MeanParams& p, const MeanRescale& r) {
  const int32_t shifted = static_cast<int32_t>(sum - p.input_zero_point * count);
  return MultiplyByQuantizedMultiplier(shifted, r.multiplier, r.shift) + p.output_zero_point;
}

// TFLite Micro's QuantizedMeanOrSum for int8 and int16 (one template there too): int32 sums of
// the raw values, then the rescale with 1/count folded in, clamped to the output type.
template <typename T>
Error Mean(const char* name, const MeanParams& p, const ShapeN& in, const T* input,
           const int32_t* axes, int32_t num_axes, T* output, int64_t output_size, void* scratch,
           size_t scratch_bytes) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && in.rank <= kMaxDims,
                           kInvalidArgument, "%s: null tensor or rank > 6", name);
  RT_CHECK_OR_RETURN_ERROR(
      scratch != nullptr && scratch_bytes >= mean_s8_get_buffer_size(output_size), kInvalidArgument,
      "%s: scratch too small", name);
  bool reduced[kMaxDims] = {};
  for (int32_t i = 0; i < num_axes; ++i) {
    const int32_t a = axes[i] < 0 ? axes[i] + in.rank : axes[i];
    RT_CHECK_OR_RETURN_ERROR(a >= 0 && a < in.rank, kInvalidArgument, "%s: axis %d", name,
                             static_cast<int>(axes[i]));
    reduced[a] = true;
  }
  // Output index strides over the kept dimensions, in the input's dimension order.
  int64_t out_stride[kMaxDims] = {};
  int64_t kept = 1;
  int64_t count = 1;
  for (int32_t i = in.rank - 1; i >= 0; --i) {
    if (reduced[i]) {
      count *= in.dims[i];
    } else {
      out_stride[i] = kept;
      kept *= in.dims[i];
    }
  }
  RT_CHECK_OR_RETURN_ERROR(kept == output_size, kInvalidArgument,
                           "%s: output has %lld elements, expected %lld", name,
                           static_cast<long long>(output_size), static_cast<long long>(kept));
  int32_t* sum = static_cast<int32_t*>(scratch);
  for (int64_t i = 0; i < output_size; ++i) sum[i] = 0;
  // Row-major walk of the input with an odometer; the output index follows the kept dims.
  int32_t idx[kMaxDims] = {};
  const int64_t total = in.Size();
  int64_t o = 0;
  for (int64_t i = 0; i < total; ++i) {
    sum[o] += input[i];
    for (int32_t d = in.rank - 1; d >= 0; --d) {
      ++idx[d];
      o += out_stride[d];
      if (idx[d] < in.dims[d]) break;
      o -= out_stride[d] * idx[d];
      idx[d] = 0;
    }
  }
  if (count == 0) return Error::kOk;
  const MeanRescale rescale = mean_s8_rescale(p, count);
  constexpr int32_t kLo = std::numeric_limits<T>::min(), kHi = std::numeric_limits<T>::max();
  for (int64_t i = 0; i < output_size; ++i) {
    output[i] = static_cast<T>(Min32(Max32(MeanUnclamped(sum[i], count, p, rescale), kLo), kHi));
  }
  return Error::kOk;
}

}  // namespace

Error mean_s8(const MeanParams& p, const ShapeN& in, const int8_t* input, const int32_t* axes,
              int32_t num_axes, int8_t* output, int64_t output_size, void* scratch,
              size_t scratch_bytes) {
  return Mean("mean_s8", p, in, input, axes, num_axes, output, output_size, scratch, scratch_bytes);
}

Error mean_s16(const MeanParams& p, const ShapeN& in, const int16_t* input, const int32_t* axes,
               int32_t num_axes, int16_t* output, int64_t output_size, void* scratch,
               size_t scratch_bytes) {
  return Mean("mean_s16", p, in, input, axes, num_axes, output, output_size, scratch,
              scratch_bytes);
}

MeanRescale mean_s8_rescale(const MeanParams& p, int64_t count) {
  // Fold 1/count into the multiplier with as many bits of precision as fit.
  int32_t s = 63 - __builtin_clzll(static_cast<unsigned long long>(count));
  s = Min32(s, 32);
  s = Min32(s, 31 + p.shift);
  MeanRescale r;
  r.multiplier = static_cast<int32_t>((static_cast<int64_t>(p.multiplier) << s) / count);
  r.shift = p.shift - s;
  return r;
}

int8_t mean_s8_output(int32_t sum, int64_t count, const MeanParams& p, const MeanRescale& r) {
  return ClampToInt8(MeanUnclamped(sum, count, p, r), -128, 127);
}

}  // namespace boardlab::runtime::kernels
