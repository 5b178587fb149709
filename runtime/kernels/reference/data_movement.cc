#include "runtime/kernels/reference/data_movement.h"

#include <cstring>

namespace boardlab::runtime::kernels {
namespace {

int64_t Product(const int32_t* dims, int32_t begin, int32_t end) {
  int64_t n = 1;
  for (int32_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

// CopyStrided for one element type: dimensions padded in front to kMaxDims so that one loop
// nest serves every rank.
template <typename T>
void CopyStridedAs(const T* input, int64_t base, const int64_t* in_step, const int32_t* out_dims,
                   int32_t rank, T* output) {
  int64_t step[kMaxDims] = {};
  int32_t d[kMaxDims] = {1, 1, 1, 1, 1, 1};
  for (int32_t i = 0; i < rank; ++i) {
    step[kMaxDims - rank + i] = in_step[i];
    d[kMaxDims - rank + i] = out_dims[i];
  }
  for (int32_t i0 = 0; i0 < d[0]; ++i0) {
    for (int32_t i1 = 0; i1 < d[1]; ++i1) {
      for (int32_t i2 = 0; i2 < d[2]; ++i2) {
        for (int32_t i3 = 0; i3 < d[3]; ++i3) {
          for (int32_t i4 = 0; i4 < d[4]; ++i4) {
            const int64_t row =
                base + i0 * step[0] + i1 * step[1] + i2 * step[2] + i3 * step[3] + i4 * step[4];
            if (step[5] == 1) {
              std::memcpy(output, input + row, static_cast<size_t>(d[5]) * sizeof(T));
              output += d[5];
            } else {
              for (int32_t i5 = 0; i5 < d[5]; ++i5) *output++ = input[row + i5 * step[5]];
            }
          }
        }
      }
    }
  }
}

bool ValidShape(const ShapeN& s) {
  if (s.rank < 0 || s.rank > kMaxDims) return false;
  for (int32_t i = 0; i < s.rank; ++i) {
    if (s.dims[i] < 1) return false;
  }
  return true;
}

bool ValidElementSize(int32_t size) { return size == 1 || size == 2 || size == 4 || size == 8; }

const uint8_t* Bytes(const void* p) { return static_cast<const uint8_t*>(p); }
uint8_t* Bytes(void* p) { return static_cast<uint8_t*>(p); }

// The input index that output position `o` of a mirror-padded dimension reads (TFLite's rule;
// `offset` is 1 for REFLECT, 0 for SYMMETRIC).
int32_t MirrorSource(int32_t o, int32_t before, int32_t size, int32_t offset) {
  if (o < before) return before + offset - 1 - o;
  o -= before;
  if (o < size) return o;
  return size - 1 - offset - (o - size);
}

}  // namespace

void RowMajorStrides(const int32_t* dims, int32_t rank, int64_t* strides) {
  int64_t s = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= dims[i];
  }
}

void CopyStrided(const void* input, int64_t base, const int64_t* step, const int32_t* out_dims,
                 int32_t rank, int32_t element_size, void* output) {
  switch (element_size) {
    case 1:
      return CopyStridedAs(static_cast<const uint8_t*>(input), base, step, out_dims, rank,
                           static_cast<uint8_t*>(output));
    case 2:
      return CopyStridedAs(static_cast<const uint16_t*>(input), base, step, out_dims, rank,
                           static_cast<uint16_t*>(output));
    case 4:
      return CopyStridedAs(static_cast<const uint32_t*>(input), base, step, out_dims, rank,
                           static_cast<uint32_t*>(output));
    default:
      return CopyStridedAs(static_cast<const uint64_t*>(input), base, step, out_dims, rank,
                           static_cast<uint64_t*>(output));
  }
}

int64_t IndexData::At(int64_t i) const {
  if (wide) {
    int64_t v;
    std::memcpy(&v, Bytes(data) + i * 8, sizeof(v));
    return v;
  }
  int32_t v;
  std::memcpy(&v, Bytes(data) + i * 4, sizeof(v));
  return v;
}

Error gather_elements(const ShapeN& params_shape, const void* params, const ShapeN& indices_shape,
                      IndexData indices, int32_t axis, int32_t batch_dims, int32_t element_size,
                      void* output) {
  RT_CHECK_OR_RETURN_ERROR(params != nullptr && indices.data != nullptr && output != nullptr &&
                               ValidShape(params_shape) && ValidShape(indices_shape) &&
                               ValidElementSize(element_size) && batch_dims >= 0 &&
                               batch_dims <= axis && axis < params_shape.rank &&
                               batch_dims <= indices_shape.rank,
                           kInvalidArgument, "gather_elements: bad arguments");
  const int32_t* dims = params_shape.dims;
  const int64_t batches = Product(dims, 0, batch_dims);
  const int64_t outer = Product(dims, batch_dims, axis);
  const int64_t axis_size = dims[axis];
  const int64_t inner = Product(dims, axis + 1, params_shape.rank);
  const int64_t coords = Product(indices_shape.dims, batch_dims, indices_shape.rank);
  const size_t bytes = static_cast<size_t>(inner * element_size);
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < coords; ++k) {
        const int64_t index = indices.At(b * coords + k);
        RT_CHECK_OR_RETURN_ERROR(index >= 0 && index < axis_size, kInvalidArgument,
                                 "gather: index %ld outside [0, %ld)", static_cast<long>(index),
                                 static_cast<long>(axis_size));
        std::memcpy(Bytes(output) + ((b * outer + o) * coords + k) * bytes,
                    Bytes(params) + ((b * outer + o) * axis_size + index) * bytes, bytes);
      }
    }
  }
  return Error::kOk;
}

Error gather_nd_elements(const ShapeN& params_shape, const void* params,
                         const ShapeN& indices_shape, IndexData indices, int32_t element_size,
                         void* output) {
  RT_CHECK_OR_RETURN_ERROR(params != nullptr && indices.data != nullptr && output != nullptr &&
                               ValidShape(params_shape) && ValidShape(indices_shape) &&
                               indices_shape.rank >= 1 && ValidElementSize(element_size),
                           kInvalidArgument, "gather_nd_elements: bad arguments");
  const int32_t nd = indices_shape.dims[indices_shape.rank - 1];
  RT_CHECK_OR_RETURN_ERROR(nd >= 1 && nd <= params_shape.rank, kInvalidArgument,
                           "gather_nd_elements: index depth %d for params of rank %d",
                           static_cast<int>(nd), static_cast<int>(params_shape.rank));
  int64_t strides[kMaxDims];
  RowMajorStrides(params_shape.dims, params_shape.rank, strides);
  const int64_t slices = Product(indices_shape.dims, 0, indices_shape.rank - 1);
  const size_t bytes =
      static_cast<size_t>(Product(params_shape.dims, nd, params_shape.rank) * element_size);
  for (int64_t i = 0; i < slices; ++i) {
    int64_t from = 0;
    for (int32_t j = 0; j < nd; ++j) {
      const int64_t index = indices.At(i * nd + j);
      RT_CHECK_OR_RETURN_ERROR(index >= 0 && index < params_shape.dims[j], kInvalidArgument,
                               "gather_nd: index %ld outside [0, %d) in dimension %d",
                               static_cast<long>(index), static_cast<int>(params_shape.dims[j]),
                               static_cast<int>(j));
      from += index * strides[j];
    }
    std::memcpy(Bytes(output) + i * bytes, Bytes(params) + from * element_size, bytes);
  }
  return Error::kOk;
}

Error reverse_elements(const ShapeN& shape, const void* input, const bool* reversed,
                       int32_t element_size, void* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && reversed != nullptr &&
                               ValidShape(shape) && ValidElementSize(element_size),
                           kInvalidArgument, "reverse_elements: bad arguments");
  int64_t strides[kMaxDims];
  RowMajorStrides(shape.dims, shape.rank, strides);
  int64_t base = 0;
  int64_t step[kMaxDims];
  for (int32_t d = 0; d < shape.rank; ++d) {
    step[d] = reversed[d] ? -strides[d] : strides[d];
    if (reversed[d]) base += (shape.dims[d] - 1) * strides[d];
  }
  CopyStrided(input, base, step, shape.dims, shape.rank, element_size, output);
  return Error::kOk;
}

Error mirror_pad_elements(const ShapeN& shape, const void* input, const int32_t* before,
                          const int32_t* after, bool symmetric, int32_t element_size,
                          void* output) {
  RT_CHECK_OR_RETURN_ERROR(
      input != nullptr && output != nullptr && ValidShape(shape) && ValidElementSize(element_size),
      kInvalidArgument, "mirror_pad_elements: bad arguments");
  const int32_t offset = symmetric ? 0 : 1;
  int32_t out_dims[kMaxDims];
  for (int32_t d = 0; d < shape.rank; ++d) {
    const int32_t limit = shape.dims[d] - offset;
    RT_CHECK_OR_RETURN_ERROR(
        before[d] >= 0 && after[d] >= 0 && before[d] <= limit && after[d] <= limit,
        kInvalidArgument, "mirror_pad_elements: padding of dimension %d", static_cast<int>(d));
    out_dims[d] = shape.dims[d] + before[d] + after[d];
  }
  int64_t in_strides[kMaxDims];
  RowMajorStrides(shape.dims, shape.rank, in_strides);
  const int64_t total = Product(out_dims, 0, shape.rank);
  int32_t index[kMaxDims] = {};
  uint8_t* out = Bytes(output);
  for (int64_t i = 0; i < total; ++i) {
    int64_t from = 0;
    for (int32_t d = 0; d < shape.rank; ++d) {
      from += MirrorSource(index[d], before[d], shape.dims[d], offset) * in_strides[d];
    }
    std::memcpy(out + i * element_size, Bytes(input) + from * element_size,
                static_cast<size_t>(element_size));
    for (int32_t d = shape.rank - 1; d >= 0; --d) {
      if (++index[d] < out_dims[d]) break;
      index[d] = 0;
    }
  }
  return Error::kOk;
}

Error depth_to_space_elements(const Dims4& in, const void* input, int32_t block_size,
                              int32_t element_size, void* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && block_size >= 1 &&
                               in.c % (block_size * block_size) == 0 &&
                               ValidElementSize(element_size),
                           kInvalidArgument, "depth_to_space_elements: bad arguments");
  const int64_t b = block_size;
  const int32_t depth = in.c / (block_size * block_size);
  // The output seen as [N, H, b, W, b, C'] reads the input [N, H, W, b, b, C'].
  const int32_t dims[kMaxDims] = {in.n, in.h, block_size, in.w, block_size, depth};
  const int64_t step[kMaxDims] = {
      int64_t{in.h} * in.w * in.c, int64_t{in.w} * in.c, b * depth, in.c, depth, 1};
  CopyStrided(input, 0, step, dims, kMaxDims, element_size, output);
  return Error::kOk;
}

Error space_to_depth_elements(const Dims4& in, const void* input, int32_t block_size,
                              int32_t element_size, void* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && block_size >= 1 &&
                               in.h % block_size == 0 && in.w % block_size == 0 &&
                               ValidElementSize(element_size),
                           kInvalidArgument, "space_to_depth_elements: bad arguments");
  const int64_t b = block_size;
  // The output seen as [N, H/b, W/b, b, b, C] reads the input rows and columns it gathers.
  const int32_t dims[kMaxDims] = {in.n,       in.h / block_size, in.w / block_size,
                                  block_size, block_size,        in.c};
  const int64_t step[kMaxDims] = {
      int64_t{in.h} * in.w * in.c, b * in.w * in.c, b * in.c, int64_t{in.w} * in.c, in.c, 1};
  CopyStrided(input, 0, step, dims, kMaxDims, element_size, output);
  return Error::kOk;
}

namespace {

bool ValidBatchSpace(const BatchSpaceParams& p, const Dims4& batch_side, const Dims4& space_side) {
  return p.block_h >= 1 && p.block_w >= 1 && p.top >= 0 && p.left >= 0 &&
         batch_side.c == space_side.c &&
         batch_side.n == space_side.n * static_cast<int64_t>(p.block_h) * p.block_w;
}

}  // namespace

Error batch_to_space_nd_elements(const BatchSpaceParams& p, const Dims4& in, const void* input,
                                 const Dims4& out, int32_t element_size, void* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && ValidBatchSpace(p, in, out) &&
                               ValidElementSize(element_size),
                           kInvalidArgument, "batch_to_space_nd_elements: bad arguments");
  const size_t bytes = static_cast<size_t>(in.c) * element_size;
  for (int32_t ib = 0; ib < in.n; ++ib) {
    const int32_t ob = ib % out.n;
    const int32_t block = ib / out.n;
    for (int32_t ih = 0; ih < in.h; ++ih) {
      const int64_t oh = int64_t{ih} * p.block_h + block / p.block_w - p.top;
      if (oh < 0 || oh >= out.h) continue;
      for (int32_t iw = 0; iw < in.w; ++iw) {
        const int64_t ow = int64_t{iw} * p.block_w + block % p.block_w - p.left;
        if (ow < 0 || ow >= out.w) continue;
        std::memcpy(Bytes(output) + ((int64_t{ob} * out.h + oh) * out.w + ow) * bytes,
                    Bytes(input) + ((int64_t{ib} * in.h + ih) * in.w + iw) * bytes, bytes);
      }
    }
  }
  return Error::kOk;
}

Error space_to_batch_nd_elements(const BatchSpaceParams& p, const Dims4& in, const void* input,
                                 const Dims4& out, const void* pad_value, int32_t element_size,
                                 void* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && pad_value != nullptr &&
                               ValidBatchSpace(p, out, in) && ValidElementSize(element_size),
                           kInvalidArgument, "space_to_batch_nd_elements: bad arguments");
  const size_t bytes = static_cast<size_t>(in.c) * element_size;
  uint8_t* dst = Bytes(output);
  for (int32_t ob = 0; ob < out.n; ++ob) {
    const int32_t ib = ob % in.n;
    const int32_t block = ob / in.n;
    const int32_t shift_h = block / p.block_w, shift_w = block % p.block_w;
    for (int32_t oh = 0; oh < out.h; ++oh) {
      const int64_t ih = int64_t{oh} * p.block_h + shift_h - p.top;
      for (int32_t ow = 0; ow < out.w; ++ow, dst += bytes) {
        const int64_t iw = int64_t{ow} * p.block_w + shift_w - p.left;
        if (ih < 0 || ih >= in.h || iw < 0 || iw >= in.w) {
          for (int32_t c = 0; c < in.c; ++c) {
            std::memcpy(dst + c * element_size, pad_value, static_cast<size_t>(element_size));
          }
          continue;
        }
        std::memcpy(dst, Bytes(input) + ((int64_t{ib} * in.h + ih) * in.w + iw) * bytes, bytes);
      }
    }
  }
  return Error::kOk;
}

Error broadcast_to_elements(const ShapeN& in, const void* input, const ShapeN& out,
                            int32_t element_size, void* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && ValidShape(in) &&
                               ValidShape(out) && in.rank <= out.rank &&
                               ValidElementSize(element_size),
                           kInvalidArgument, "broadcast_to_elements: bad arguments");
  int64_t in_strides[kMaxDims];
  RowMajorStrides(in.dims, in.rank, in_strides);
  int64_t step[kMaxDims] = {};
  for (int32_t d = 0; d < out.rank; ++d) {
    const int32_t id = d - (out.rank - in.rank);
    if (id < 0) continue;
    RT_CHECK_OR_RETURN_ERROR(in.dims[id] == out.dims[d] || in.dims[id] == 1, kInvalidArgument,
                             "broadcast_to_elements: dimension %d does not broadcast",
                             static_cast<int>(d));
    step[d] = in.dims[id] == 1 ? 0 : in_strides[id];
  }
  CopyStrided(input, 0, step, out.dims, out.rank, element_size, output);
  return Error::kOk;
}

Error join_elements(const void* const* inputs, const int64_t* extents, int32_t count, int64_t outer,
                    int64_t inner, int32_t element_size, void* output) {
  RT_CHECK_OR_RETURN_ERROR(inputs != nullptr && extents != nullptr && output != nullptr &&
                               count > 0 && outer > 0 && inner > 0 &&
                               ValidElementSize(element_size),
                           kInvalidArgument, "join_elements: bad arguments");
  uint8_t* dst = Bytes(output);
  for (int64_t o = 0; o < outer; ++o) {
    for (int32_t i = 0; i < count; ++i) {
      const size_t bytes = static_cast<size_t>(extents[i] * inner * element_size);
      std::memcpy(dst, Bytes(inputs[i]) + o * bytes, bytes);
      dst += bytes;
    }
  }
  return Error::kOk;
}

Error split_elements(const void* input, const int64_t* extents, int32_t count, int64_t outer,
                     int64_t inner, int32_t element_size, void* const* outputs) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && extents != nullptr && outputs != nullptr &&
                               count > 0 && outer > 0 && inner > 0 &&
                               ValidElementSize(element_size),
                           kInvalidArgument, "split_elements: bad arguments");
  const uint8_t* src = Bytes(input);
  for (int64_t o = 0; o < outer; ++o) {
    for (int32_t i = 0; i < count; ++i) {
      const size_t bytes = static_cast<size_t>(extents[i] * inner * element_size);
      std::memcpy(Bytes(outputs[i]) + o * bytes, src, bytes);
      src += bytes;
    }
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
