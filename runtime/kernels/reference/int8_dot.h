#pragma once

// Inner loops shared by the int8 CONV_2D / FULLY_CONNECTED kernels (CPU and emulated NPU). The
// input side is widened once to int16 with the input offset already added ((x + offset) lies in
// [-255, 255]); the dot products then multiply int8 weights by those int16 values and accumulate
// in int32. Every sum is exact integer arithmetic, so the order of accumulation does not matter
// for bit-exactness. The loops are written so that GCC vectorises them (int16 x int16 -> int32
// pairwise multiply-add on x86 and Arm); they need no intrinsics and no heap.

#include <cstdint>

namespace boardlab::runtime::kernels {

/// out[i] = x[i] + offset for i < n.
inline void WidenWithOffset(const int8_t* x, int32_t n, int32_t offset, int16_t* out) {
  const int16_t off = static_cast<int16_t>(offset);
  for (int32_t i = 0; i < n; ++i) {
    out[i] = static_cast<int16_t>(static_cast<int16_t>(x[i]) + off);
  }
}

/// Dot products of 4 contiguous int8 rows (w, w + stride, w + 2 * stride, w + 3 * stride) with
/// the int16 vector x of length n; written to out[0..3].
inline void DotRows4(const int8_t* w, int64_t stride, const int16_t* x, int32_t n, int32_t* out) {
  const int8_t* w0 = w;
  const int8_t* w1 = w + stride;
  const int8_t* w2 = w + 2 * stride;
  const int8_t* w3 = w + 3 * stride;
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (int32_t k = 0; k < n; ++k) {
    const int16_t v = x[k];
    a0 += static_cast<int16_t>(w0[k]) * v;
    a1 += static_cast<int16_t>(w1[k]) * v;
    a2 += static_cast<int16_t>(w2[k]) * v;
    a3 += static_cast<int16_t>(w3[k]) * v;
  }
  out[0] = a0;
  out[1] = a1;
  out[2] = a2;
  out[3] = a3;
}

/// Dot product of one int8 row with the int16 vector x of length n.
inline int32_t DotRow(const int8_t* w, const int16_t* x, int32_t n) {
  int32_t a = 0;
  for (int32_t k = 0; k < n; ++k) a += static_cast<int16_t>(w[k]) * x[k];
  return a;
}

/// The same on the NPU's 8x8 weight blocking: `w` holds n_blocks consecutive 64-byte blocks of
/// 8 rows (output channels) x 8 columns (inputs); x holds the matching 8 inputs per block.
/// Adds the 8 row sums to acc[0..7]. Out of line (int8_dot.cc) so that its vectorisation does
/// not depend on the caller's context.
void AccumulateBlocked8x8(const int8_t* w, int32_t n_blocks, const int16_t* x, int32_t* acc);

}  // namespace boardlab::runtime::kernels
