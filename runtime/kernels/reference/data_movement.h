#pragma once

// Data movement on tensors of any element type (`element_size` bytes per element): the values
// are copied, never computed, so one implementation serves int8, int16, int32, int64, float32
// and bool and is exact by construction. Semantics are TFLite Micro's reference kernels':
// GATHER, GATHER_ND, REVERSE_V2, MIRROR_PAD, DEPTH_TO_SPACE, SPACE_TO_DEPTH,
// BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, BROADCAST_TO, PACK, UNPACK, SPLIT, SPLIT_V.
//
// Shapes are row-major (last dimension fastest) with at most kMaxDims dimensions; every pointer
// is owned by the caller. Arguments are checked first (kInvalidArgument); index values that come
// from a tensor at run time are checked where they are read.

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

/// Row-major element strides of `dims` (rank <= kMaxDims).
void RowMajorStrides(const int32_t* dims, int32_t rank, int64_t* strides);

/// The copy every rearrangement reduces to: output element (i_0 .. i_{rank-1}), in row-major
/// order of `out_dims`, is input element base + sum i_d * step[d] (steps in elements, of any
/// sign; 0 repeats). A unit step in the last dimension copies whole rows.
void CopyStrided(const void* input, int64_t base, const int64_t* step, const int32_t* out_dims,
                 int32_t rank, int32_t element_size, void* output);

/// Index values of a tensor: int32 (`wide` false) or int64.
struct IndexData {
  const void* data = nullptr;
  bool wide = false;
  int64_t At(int64_t i) const;
};

/// GATHER: output[batch, outer, coord, inner] = params[batch, outer, indices[batch, coord],
/// inner]. `axis` and `batch_dims` are non-negative with batch_dims <= axis; `indices_shape`'s
/// first batch_dims dimensions equal params'. kInvalidArgument for an index outside
/// [0, params_shape.dims[axis]).
[[nodiscard]] Error gather_elements(const ShapeN& params_shape, const void* params,
                                    const ShapeN& indices_shape, IndexData indices, int32_t axis,
                                    int32_t batch_dims, int32_t element_size, void* output);

/// GATHER_ND: indices [..., nd] address the first nd dimensions of params; each index tuple
/// copies the slice of the remaining dimensions. kInvalidArgument for an out-of-range tuple.
[[nodiscard]] Error gather_nd_elements(const ShapeN& params_shape, const void* params,
                                       const ShapeN& indices_shape, IndexData indices,
                                       int32_t element_size, void* output);

/// REVERSE_V2: reverses every dimension d with `reversed[d]` set.
[[nodiscard]] Error reverse_elements(const ShapeN& shape, const void* input, const bool* reversed,
                                     int32_t element_size, void* output);

/// MIRROR_PAD: before[d] / after[d] mirrored elements around dimension d; `symmetric` repeats
/// the border element (SYMMETRIC), otherwise it is the mirror's axis (REFLECT). Pads must be at
/// most size (SYMMETRIC) or size - 1 (REFLECT).
[[nodiscard]] Error mirror_pad_elements(const ShapeN& shape, const void* input,
                                        const int32_t* before, const int32_t* after, bool symmetric,
                                        int32_t element_size, void* output);

/// DEPTH_TO_SPACE on NHWC: output[n, h*b + by, w*b + bx, c] = input[n, h, w, (by*b + bx)*C' + c]
/// with C' = C / b^2.
[[nodiscard]] Error depth_to_space_elements(const Dims4& input_dims, const void* input,
                                            int32_t block_size, int32_t element_size, void* output);

/// SPACE_TO_DEPTH on NHWC, the inverse of depth_to_space_elements.
[[nodiscard]] Error space_to_depth_elements(const Dims4& input_dims, const void* input,
                                            int32_t block_size, int32_t element_size, void* output);

/// Block geometry of BATCH_TO_SPACE_ND / SPACE_TO_BATCH_ND on NHWC (3-D inputs use w = 1 and a
/// block width of 1): crops (to space) or paddings (to batch) before each spatial dimension.
struct BatchSpaceParams {
  int32_t block_h = 1, block_w = 1;
  int32_t top = 0, left = 0;
};

/// BATCH_TO_SPACE_ND: input batch (oy * block_w + ox) * N_out + n fills the output pixels
/// (h * block_h + oy - top, w * block_w + ox - left) that survive the crop.
[[nodiscard]] Error batch_to_space_nd_elements(const BatchSpaceParams& params,
                                               const Dims4& input_dims, const void* input,
                                               const Dims4& output_dims, int32_t element_size,
                                               void* output);

/// SPACE_TO_BATCH_ND: the inverse; output pixels that fall into the padding get `pad_value`
/// (element_size bytes).
[[nodiscard]] Error space_to_batch_nd_elements(const BatchSpaceParams& params,
                                               const Dims4& input_dims, const void* input,
                                               const Dims4& output_dims, const void* pad_value,
                                               int32_t element_size, void* output);

/// BROADCAST_TO: numpy broadcasting of `input` to `output_shape` (input rank <= output rank).
[[nodiscard]] Error broadcast_to_elements(const ShapeN& input_shape, const void* input,
                                          const ShapeN& output_shape, int32_t element_size,
                                          void* output);

/// Concatenates `count` tensors along `axis` of `output_shape` where input i contributes
/// `extents[i]` positions (PACK: extent 1 each, one new axis). `outer` is the product of the
/// output dimensions before `axis`, `inner` of those after it.
[[nodiscard]] Error join_elements(const void* const* inputs, const int64_t* extents, int32_t count,
                                  int64_t outer, int64_t inner, int32_t element_size, void* output);

/// The inverse of join_elements: SPLIT, SPLIT_V and UNPACK.
[[nodiscard]] Error split_elements(const void* input, const int64_t* extents, int32_t count,
                                   int64_t outer, int64_t inner, int32_t element_size,
                                   void* const* outputs);

}  // namespace boardlab::runtime::kernels
