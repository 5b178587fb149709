#include "runtime/kernels/reference/mean_s8.h"

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {

size_t mean_s8_get_buffer_size(int64_t output_size) {
  return static_cast<size_t>(output_size) * sizeof(int32_t);
}

Error mean_s8(const MeanParams& p, const ShapeN& in, const int8_t* input, const int32_t* axes,
              int32_t num_axes, int8_t* output, int64_t output_size, void* scratch,
              size_t scratch_bytes) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && in.rank <= kMaxDims,
                           kInvalidArgument, "mean_s8: null tensor or rank > 6");
  RT_CHECK_OR_RETURN_ERROR(
      scratch != nullptr && scratch_bytes >= mean_s8_get_buffer_size(output_size), kInvalidArgument,
      "mean_s8: scratch too small");
  bool reduced[kMaxDims] = {};
  for (int32_t i = 0; i < num_axes; ++i) {
    const int32_t a = axes[i] < 0 ? axes[i] + in.rank : axes[i];
    RT_CHECK_OR_RETURN_ERROR(a >= 0 && a < in.rank, kInvalidArgument, "mean_s8: axis %d",
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
                           "mean_s8: output has %lld elements, expected %lld",
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
  for (int64_t i = 0; i < output_size; ++i) output[i] = mean_s8_output(sum[i], count, p, rescale);
  return Error::kOk;
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
  const int32_t shifted = static_cast<int32_t>(sum - p.input_zero_point * count);
  const int32_t v = MultiplyByQuantizedMultiplier(shifted, r.multiplier, r.shift);
  return ClampToInt8(v + p.output_zero_point, -128, 127);
}

}  // namespace boardlab::runtime::kernels
