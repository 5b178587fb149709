#include "runtime/kernels/reference/data_movement_s8.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/kernels/reference/data_movement.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {

namespace {

// The element-type independent bodies of the int8 and int16 (16x8) layout ops.
Error Transpose(const ShapeN& in, const void* input, const int32_t* perm, int32_t element_size,
                void* output) {
  RT_CHECK_OR_RETURN_ERROR(
      input != nullptr && output != nullptr && perm != nullptr && in.rank <= kMaxDims,
      kInvalidArgument, "transpose: bad arguments");
  int64_t in_strides[kMaxDims];
  RowMajorStrides(in.dims, in.rank, in_strides);
  int64_t step[kMaxDims];
  int32_t out_dims[kMaxDims];
  bool seen[kMaxDims] = {};
  for (int32_t d = 0; d < in.rank; ++d) {
    RT_CHECK_OR_RETURN_ERROR(perm[d] >= 0 && perm[d] < in.rank && !seen[perm[d]], kInvalidArgument,
                             "transpose: bad permutation");
    seen[perm[d]] = true;
    step[d] = in_strides[perm[d]];
    out_dims[d] = in.dims[perm[d]];
  }
  CopyStrided(input, 0, step, out_dims, in.rank, element_size, output);
  return Error::kOk;
}

template <typename T>
Error Pad(const ShapeN& in, const T* input, const int32_t* before, const int32_t* after,
          T pad_value, T* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && in.rank <= kMaxDims,
                           kInvalidArgument, "pad: bad arguments");
  int32_t out_dims[kMaxDims];
  for (int32_t d = 0; d < in.rank; ++d) {
    RT_CHECK_OR_RETURN_ERROR(before[d] >= 0 && after[d] >= 0, kInvalidArgument,
                             "pad: negative padding");
    out_dims[d] = in.dims[d] + before[d] + after[d];
  }
  int64_t out_strides[kMaxDims];
  RowMajorStrides(out_dims, in.rank, out_strides);
  int64_t total = 1;
  for (int32_t d = 0; d < in.rank; ++d) total *= out_dims[d];
  for (int64_t i = 0; i < total; ++i) output[i] = pad_value;
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
    std::memcpy(output + o, input + r * inner, static_cast<size_t>(inner) * sizeof(T));
    for (int32_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < in.dims[d]) break;
      idx[d] = 0;
    }
  }
  return Error::kOk;
}

template <typename T>
Error Concatenation(const T* const* inputs, const ShapeN* shapes, int32_t count, int32_t axis,
                    int32_t act_min, int32_t act_max, T* output) {
  RT_CHECK_OR_RETURN_ERROR(inputs != nullptr && shapes != nullptr && output != nullptr &&
                               count > 0 && axis >= 0 && axis < shapes[0].rank,
                           kInvalidArgument, "concatenation: bad arguments");
  int64_t outer = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= shapes[0].dims[d];
  int64_t out_row = 0;
  for (int32_t i = 0; i < count; ++i) {
    RT_CHECK_OR_RETURN_ERROR(inputs[i] != nullptr && shapes[i].rank == shapes[0].rank,
                             kInvalidArgument, "concatenation: input %d rank", static_cast<int>(i));
    int64_t inner = 1;
    for (int32_t d = axis; d < shapes[i].rank; ++d) inner *= shapes[i].dims[d];
    out_row += inner;
  }
  const bool clamp =
      act_min > std::numeric_limits<T>::min() || act_max < std::numeric_limits<T>::max();
  int64_t offset = 0;
  for (int32_t i = 0; i < count; ++i) {
    int64_t inner = 1;
    for (int32_t d = axis; d < shapes[i].rank; ++d) inner *= shapes[i].dims[d];
    for (int64_t o = 0; o < outer; ++o) {
      T* dst = output + o * out_row + offset;
      const T* src = inputs[i] + o * inner;
      if (clamp) {
        for (int64_t k = 0; k < inner; ++k) {
          dst[k] =
              static_cast<T>(src[k] < act_min ? act_min : (src[k] > act_max ? act_max : src[k]));
        }
      } else {
        std::memcpy(dst, src, static_cast<size_t>(inner) * sizeof(T));
      }
    }
    offset += inner;
  }
  return Error::kOk;
}

Error StridedSlice(const ShapeN& in, const void* input, const int32_t* start, const int32_t* stride,
                   const int32_t* out_dims, int32_t element_size, void* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && in.rank <= kMaxDims,
                           kInvalidArgument, "strided_slice: bad arguments");
  int64_t in_strides[kMaxDims];
  RowMajorStrides(in.dims, in.rank, in_strides);
  int64_t base = 0;
  int64_t step[kMaxDims];
  for (int32_t d = 0; d < in.rank; ++d) {
    if (out_dims[d] == 0) return Error::kOk;
    const int64_t last = start[d] + static_cast<int64_t>(out_dims[d] - 1) * stride[d];
    RT_CHECK_OR_RETURN_ERROR(out_dims[d] >= 0 && start[d] >= 0 && start[d] < in.dims[d] &&
                                 last >= 0 && last < in.dims[d],
                             kInvalidArgument, "strided_slice: dimension %d out of range",
                             static_cast<int>(d));
    base += start[d] * in_strides[d];
    step[d] = stride[d] * in_strides[d];
  }
  CopyStrided(input, base, step, out_dims, in.rank, element_size, output);
  return Error::kOk;
}

}  // namespace

Error transpose_s8(const ShapeN& in, const int8_t* input, const int32_t* perm, int8_t* output) {
  return Transpose(in, input, perm, 1, output);
}

Error transpose_s16(const ShapeN& in, const int16_t* input, const int32_t* perm, int16_t* output) {
  return Transpose(in, input, perm, 2, output);
}

Error pad_s8(const ShapeN& in, const int8_t* input, const int32_t* before, const int32_t* after,
             int8_t pad_value, int8_t* output) {
  return Pad(in, input, before, after, pad_value, output);
}

Error pad_s16(const ShapeN& in, const int16_t* input, const int32_t* before, const int32_t* after,
              int16_t pad_value, int16_t* output) {
  return Pad(in, input, before, after, pad_value, output);
}

Error concatenation_s8(const int8_t* const* inputs, const ShapeN* shapes, int32_t count,
                       int32_t axis, int32_t act_min, int32_t act_max, int8_t* output) {
  return Concatenation(inputs, shapes, count, axis, act_min, act_max, output);
}

Error concatenation_s16(const int16_t* const* inputs, const ShapeN* shapes, int32_t count,
                        int32_t axis, int32_t act_min, int32_t act_max, int16_t* output) {
  return Concatenation(inputs, shapes, count, axis, act_min, act_max, output);
}

Error strided_slice_s8(const ShapeN& in, const int8_t* input, const int32_t* start,
                       const int32_t* stride, const int32_t* out_dims, int8_t* output) {
  return StridedSlice(in, input, start, stride, out_dims, 1, output);
}

Error strided_slice_s16(const ShapeN& in, const int16_t* input, const int32_t* start,
                        const int32_t* stride, const int32_t* out_dims, int16_t* output) {
  return StridedSlice(in, input, start, stride, out_dims, 2, output);
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

namespace {

template <typename T>
Error ResizeNearest(const char* name, const Dims4& in, const T* input, const Dims4& out,
                    bool align_corners, bool half_pixel_centers, T* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && in.n == out.n &&
                               in.c == out.c && out.h > 0 && out.w > 0,
                           kInvalidArgument, "%s: bad arguments", name);
  for (int32_t b = 0; b < out.n; ++b) {
    for (int32_t y = 0; y < out.h; ++y) {
      const int32_t iy = NearestIndex(y, in.h, out.h, align_corners, half_pixel_centers);
      for (int32_t x = 0; x < out.w; ++x) {
        const int32_t ix = NearestIndex(x, in.w, out.w, align_corners, half_pixel_centers);
        std::memcpy(output + ((static_cast<int64_t>(b) * out.h + y) * out.w + x) * out.c,
                    input + ((static_cast<int64_t>(b) * in.h + iy) * in.w + ix) * in.c,
                    static_cast<size_t>(in.c) * sizeof(T));
      }
    }
  }
  return Error::kOk;
}

}  // namespace

Error resize_nearest_neighbor_s8(const Dims4& in, const int8_t* input, const Dims4& out,
                                 bool align_corners, bool half_pixel_centers, int8_t* output) {
  return ResizeNearest("resize_nearest_neighbor_s8", in, input, out, align_corners,
                       half_pixel_centers, output);
}

Error resize_nearest_neighbor_s16(const Dims4& in, const int16_t* input, const Dims4& out,
                                  bool align_corners, bool half_pixel_centers, int16_t* output) {
  return ResizeNearest("resize_nearest_neighbor_s16", in, input, out, align_corners,
                       half_pixel_centers, output);
}

}  // namespace boardlab::runtime::kernels
