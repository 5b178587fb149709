#include "runtime/kernels/reference/batch_matmul_s8.h"

#include <limits>

#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

int32_t Requantize(int32_t acc, const BatchMatMulParams& p) {
  return MultiplyByQuantizedMultiplier(acc, p.multiplier, p.shift);
}
int32_t Requantize(int64_t acc, const BatchMatMulParams& p) {
  return MultiplyByQuantizedMultiplier64(acc, p.multiplier, p.shift);
}

// TFLite Micro's quantized BatchMatMul<T, AccT> (int8 with int32 sums, int16 with int64 sums and
// the int64 requantization), with the batch dimensions broadcast.
template <typename T, typename Acc>
Error BatchMatMul(const char* name, const BatchMatMulParams& p, const ShapeN& ls, const T* lhs,
                  const ShapeN& rs, const T* rhs, const ShapeN& os, T* output) {
  RT_CHECK_OR_RETURN_ERROR(lhs != nullptr && rhs != nullptr && output != nullptr && ls.rank >= 2 &&
                               rs.rank >= 2 && os.rank >= 2,
                           kInvalidArgument, "%s: bad arguments", name);
  const int32_t rows = p.adj_x ? ls.dims[ls.rank - 1] : ls.dims[ls.rank - 2];
  const int32_t depth = p.adj_x ? ls.dims[ls.rank - 2] : ls.dims[ls.rank - 1];
  const int32_t rdepth = p.adj_y ? rs.dims[rs.rank - 1] : rs.dims[rs.rank - 2];
  const int32_t cols = p.adj_y ? rs.dims[rs.rank - 2] : rs.dims[rs.rank - 1];
  RT_CHECK_OR_RETURN_ERROR(
      depth == rdepth && os.dims[os.rank - 2] == rows && os.dims[os.rank - 1] == cols,
      kInvalidArgument, "%s: inner dimensions differ", name);
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
                           "%s: batch dimensions do not broadcast", name);
  const int64_t lhs_mat = static_cast<int64_t>(rows) * depth;
  const int64_t rhs_mat = static_cast<int64_t>(depth) * cols;
  const int64_t out_mat = static_cast<int64_t>(rows) * cols;
  // Element strides of (row i, depth k) in lhs and (depth k, column j) in rhs.
  const int64_t l_i = p.adj_x ? 1 : depth, l_k = p.adj_x ? rows : 1;
  const int64_t r_k = p.adj_y ? 1 : cols, r_j = p.adj_y ? depth : 1;
  constexpr int32_t kLo = std::numeric_limits<T>::min(), kHi = std::numeric_limits<T>::max();
  ForEachBroadcast(s, [&](int64_t bl, int64_t br, int64_t bo) {
    const T* L = lhs + bl * lhs_mat;
    const T* R = rhs + br * rhs_mat;
    T* O = output + bo * out_mat;
    for (int32_t i = 0; i < rows; ++i) {
      for (int32_t j = 0; j < cols; ++j) {
        Acc acc = 0;
        for (int32_t k = 0; k < depth; ++k) {
          acc += static_cast<Acc>(L[i * l_i + k * l_k] - p.lhs_zero_point) *
                 static_cast<Acc>(R[k * r_k + j * r_j] - p.rhs_zero_point);
        }
        const int32_t r = Requantize(acc, p) + p.output_zero_point;
        O[static_cast<int64_t>(i) * cols + j] = static_cast<T>(r < kLo ? kLo : (r > kHi ? kHi : r));
      }
    }
  });
  return Error::kOk;
}

}  // namespace

Error batch_matmul_s8(const BatchMatMulParams& p, const ShapeN& ls, const int8_t* lhs,
                      const ShapeN& rs, const int8_t* rhs, const ShapeN& os, int8_t* output) {
  return BatchMatMul<int8_t, int32_t>("batch_matmul_s8", p, ls, lhs, rs, rhs, os, output);
}

Error batch_matmul_s16(const BatchMatMulParams& p, const ShapeN& ls, const int16_t* lhs,
                       const ShapeN& rs, const int16_t* rhs, const ShapeN& os, int16_t* output) {
  RT_CHECK_OR_RETURN_ERROR(p.shift >= -31 && p.shift <= 7, kInvalidArgument,
                           "batch_matmul_s16: shift %d outside [-31, 7]",
                           static_cast<int>(p.shift));
  RT_CHECK_OR_RETURN_ERROR(
      p.lhs_zero_point == 0 && p.rhs_zero_point == 0 && p.output_zero_point == 0, kInvalidArgument,
      "batch_matmul_s16: zero points must be 0");
  return BatchMatMul<int16_t, int64_t>("batch_matmul_s16", p, ls, lhs, rs, rhs, os, output);
}

}  // namespace boardlab::runtime::kernels
