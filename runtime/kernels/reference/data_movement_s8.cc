#include "runtime/kernels/reference/data_movement_s8.h"

#include <cmath>
#include <cstring>

#include "runtime/kernels/reference/data_movement.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {

Error transpose_s8(const ShapeN& in, const int8_t* input, const int32_t* perm, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(
      input != nullptr && output != nullptr && perm != nullptr && in.rank <= kMaxDims,
      kInvalidArgument, "transpose_s8: bad arguments");
  int64_t in_strides[kMaxDims];
  RowMajorStrides(in.dims, in.rank, in_strides);
  int64_t step[kMaxDims];
  int32_t out_dims[kMaxDims];
  bool seen[kMaxDims] = {};
  for (int32_t d = 0; d < in.rank; ++d) {
    RT_CHECK_OR_RETURN_ERROR(perm[d] >= 0 && perm[d] < in.rank && !seen[perm[d]], kInvalidArgument,
                             "transpose_s8: bad permutation");
    seen[perm[d]] = true;
    step[d] = in_strides[perm[d]];
    out_dims[d] = in.dims[perm[d]];
  }
  CopyStrided(input, 0, step, out_dims, in.rank, 1, output);
  return Error::kOk;
}

Error pad_s8(const ShapeN& in, const int8_t* input, const int32_t* before, const int32_t* after,
             int8_t pad_value, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && in.rank <= kMaxDims,
                           kInvalidArgument, "pad_s8: bad arguments");
  int32_t out_dims[kMaxDims];
  for (int32_t d = 0; d < in.rank; ++d) {
    RT_CHECK_OR_RETURN_ERROR(before[d] >= 0 && after[d] >= 0, kInvalidArgument,
                             "pad_s8: negative padding");
    out_dims[d] = in.dims[d] + before[d] + after[d];
  }
  int64_t out_strides[kMaxDims];
  RowMajorStrides(out_dims, in.rank, out_strides);
  int64_t total = 1;
  for (int32_t d = 0; d < in.rank; ++d) total *= out_dims[d];
  std::memset(output, pad_value, static_cast<size_t>(total));
  // Copy the input block row by row (innermost dimension contiguous) into its window.
  const int32_t rank = in.rank;
  if (rank == 0) {
    output[0] = input[0];
    return Error::kOk;
  }
  const int32_t inner = in.dims[rank - 1];
  int64_t rows = 1;
  for (int32_t d = 0; d + 1 < rank; ++d) rows *= in.dims[d];
  int32_t idx[kMaxDims] = {};
  for (int64_t r = 0; r < rows; ++r) {
    int64_t o = before[rank - 1];
    for (int32_t d = 0; d + 1 < rank; ++d) o += (idx[d] + before[d]) * out_strides[d];
    std::memcpy(output + o, input + r * inner, static_cast<size_t>(inner));
    for (int32_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < in.dims[d]) break;
      idx[d] = 0;
    }
  }
  return Error::kOk;
}

Error concatenation_s8(const int8_t* const* inputs, const ShapeN* shapes, int32_t count,
                       int32_t axis, int32_t act_min, int32_t act_max, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(inputs != nullptr && shapes != nullptr && output != nullptr &&
                               count > 0 && axis >= 0 && axis < shapes[0].rank,
                           kInvalidArgument, "concatenation_s8: bad arguments");
  int64_t outer = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= shapes[0].dims[d];
  int64_t out_row = 0;
  for (int32_t i = 0; i < count; ++i) {
    RT_CHECK_OR_RETURN_ERROR(inputs[i] != nullptr && shapes[i].rank == shapes[0].rank,
                             kInvalidArgument, "concatenation_s8: input %d rank",
                             static_cast<int>(i));
    int64_t inner = 1;
    for (int32_t d = axis; d < shapes[i].rank; ++d) inner *= shapes[i].dims[d];
    out_row += inner;
  }
  const bool clamp = act_min > -128 || act_max < 127;
  int64_t offset = 0;
  for (int32_t i = 0; i < count; ++i) {
    int64_t inner = 1;
    for (int32_t d = axis; d < shapes[i].rank; ++d) inner *= shapes[i].dims[d];
    for (int64_t o = 0; o < outer; ++o) {
      int8_t* dst = output + o * out_row + offset;
      const int8_t* src = inputs[i] + o * inner;
      if (clamp) {
        for (int64_t k = 0; k < inner; ++k) dst[k] = ClampToInt8(src[k], act_min, act_max);
      } else {
        std::memcpy(dst, src, static_cast<size_t>(inner));
      }
    }
    offset += inner;
  }
  return Error::kOk;
}

Error strided_slice_s8(const ShapeN& in, const int8_t* input, const int32_t* start,
                       const int32_t* stride, const int32_t* out_dims, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && in.rank <= kMaxDims,
                           kInvalidArgument, "strided_slice_s8: bad arguments");
  int64_t in_strides[kMaxDims];
  RowMajorStrides(in.dims, in.rank, in_strides);
  int64_t base = 0;
  int64_t step[kMaxDims];
  for (int32_t d = 0; d < in.rank; ++d) {
    if (out_dims[d] == 0) return Error::kOk;
    const int64_t last = start[d] + static_cast<int64_t>(out_dims[d] - 1) * stride[d];
    RT_CHECK_OR_RETURN_ERROR(out_dims[d] >= 0 && start[d] >= 0 && start[d] < in.dims[d] &&
                                 last >= 0 && last < in.dims[d],
                             kInvalidArgument, "strided_slice_s8: dimension %d out of range",
                             static_cast<int>(d));
    base += start[d] * in_strides[d];
    step[d] = stride[d] * in_strides[d];
  }
  CopyStrided(input, base, step, out_dims, in.rank, 1, output);
  return Error::kOk;
}

namespace {

// TFLite's nearest-neighbour source index (the float arithmetic is part of the definition).
int32_t NearestIndex(int32_t out_index, int32_t in_size, int32_t out_size, bool align_corners,
                     bool half_pixel_centers) {
  const float scale = (align_corners && out_size > 1)
                          ? static_cast<float>(in_size - 1) / static_cast<float>(out_size - 1)
                          : static_cast<float>(in_size) / static_cast<float>(out_size);
  const float offset = half_pixel_centers ? 0.5f : 0.0f;
  const float pos = (static_cast<float>(out_index) + offset) * scale;
  int32_t v =
      align_corners ? static_cast<int32_t>(std::round(pos)) : static_cast<int32_t>(std::floor(pos));
  v = Min32(v, in_size - 1);
  if (half_pixel_centers) v = Max32(0, v);
  return v;
}

}  // namespace

Error resize_nearest_neighbor_s8(const Dims4& in, const int8_t* input, const Dims4& out,
                                 bool align_corners, bool half_pixel_centers, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && in.n == out.n &&
                               in.c == out.c && out.h > 0 && out.w > 0,
                           kInvalidArgument, "resize_nearest_neighbor_s8: bad arguments");
  for (int32_t b = 0; b < out.n; ++b) {
    for (int32_t y = 0; y < out.h; ++y) {
      const int32_t iy = NearestIndex(y, in.h, out.h, align_corners, half_pixel_centers);
      for (int32_t x = 0; x < out.w; ++x) {
        const int32_t ix = NearestIndex(x, in.w, out.w, align_corners, half_pixel_centers);
        std::memcpy(output + ((static_cast<int64_t>(b) * out.h + y) * out.w + x) * out.c,
                    input + ((static_cast<int64_t>(b) * in.h + iy) * in.w + ix) * in.c,
                    static_cast<size_t>(in.c));
      }
    }
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
