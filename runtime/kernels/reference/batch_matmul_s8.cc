#include "runtime/kernels/reference/batch_matmul_s8.h"

#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {

Error batch_matmul_s8(const BatchMatMulParams& p, const ShapeN& ls, const int8_t* lhs,
                      const ShapeN& rs, const int8_t* rhs, const ShapeN& os, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(lhs != nullptr && rhs != nullptr && output != nullptr && ls.rank >= 2 &&
                               rs.rank >= 2 && os.rank >= 2,
                           kInvalidArgument, "batch_matmul_s8: bad arguments");
  const int32_t rows = p.adj_x ? ls.dims[ls.rank - 1] : ls.dims[ls.rank - 2];
  const int32_t depth = p.adj_x ? ls.dims[ls.rank - 2] : ls.dims[ls.rank - 1];
  const int32_t rdepth = p.adj_y ? rs.dims[rs.rank - 1] : rs.dims[rs.rank - 2];
  const int32_t cols = p.adj_y ? rs.dims[rs.rank - 2] : rs.dims[rs.rank - 1];
  RT_CHECK_OR_RETURN_ERROR(
      depth == rdepth && os.dims[os.rank - 2] == rows && os.dims[os.rank - 1] == cols,
      kInvalidArgument, "batch_matmul_s8: inner dimensions differ");
  // Broadcast over the batch dimensions (all but the last two).
  ShapeN lb, rb, ob;
  lb.rank = ls.rank - 2;
  rb.rank = rs.rank - 2;
  ob.rank = os.rank - 2;
  for (int32_t i = 0; i < lb.rank; ++i) lb.dims[i] = ls.dims[i];
  for (int32_t i = 0; i < rb.rank; ++i) rb.dims[i] = rs.dims[i];
  for (int32_t i = 0; i < ob.rank; ++i) ob.dims[i] = os.dims[i];
  BroadcastStrides s;
  RT_CHECK_OR_RETURN_ERROR(ComputeBroadcast(lb, rb, ob, &s), kInvalidArgument,
                           "batch_matmul_s8: batch dimensions do not broadcast");
  const int64_t lhs_mat = static_cast<int64_t>(rows) * depth;
  const int64_t rhs_mat = static_cast<int64_t>(depth) * cols;
  const int64_t out_mat = static_cast<int64_t>(rows) * cols;
  // Element strides of (row i, depth k) in lhs and (depth k, column j) in rhs.
  const int64_t l_i = p.adj_x ? 1 : depth, l_k = p.adj_x ? rows : 1;
  const int64_t r_k = p.adj_y ? 1 : cols, r_j = p.adj_y ? depth : 1;
  ForEachBroadcast(s, [&](int64_t bl, int64_t br, int64_t bo) {
    const int8_t* L = lhs + bl * lhs_mat;
    const int8_t* R = rhs + br * rhs_mat;
    int8_t* O = output + bo * out_mat;
    for (int32_t i = 0; i < rows; ++i) {
      for (int32_t j = 0; j < cols; ++j) {
        int32_t acc = 0;
        for (int32_t k = 0; k < depth; ++k) {
          acc +=
              (L[i * l_i + k * l_k] - p.lhs_zero_point) * (R[k * r_k + j * r_j] - p.rhs_zero_point);
        }
        const int32_t r = MultiplyByQuantizedMultiplier(acc, p.multiplier, p.shift);
        O[static_cast<int64_t>(i) * cols + j] = ClampToInt8(r + p.output_zero_point, -128, 127);
      }
    }
  });
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
