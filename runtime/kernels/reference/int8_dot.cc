#include "runtime/kernels/reference/int8_dot.h"

namespace boardlab::runtime::kernels {
namespace {

// Rows r .. r + 3 of every block (`w` already offset to row r).
inline void AccumulateBlockRows4(const int8_t* w, int32_t n_blocks, const int16_t* x,
                                 int32_t* acc) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int32_t b = 0; b < n_blocks; ++b) {
    const int8_t* wb = w + int64_t{b} * 64;
    const int16_t* xb = x + int64_t{b} * 8;
    for (int32_t i = 0; i < 8; ++i) {
      const int16_t v = xb[i];
      s0 += static_cast<int16_t>(wb[i]) * v;
      s1 += static_cast<int16_t>(wb[8 + i]) * v;
      s2 += static_cast<int16_t>(wb[16 + i]) * v;
      s3 += static_cast<int16_t>(wb[24 + i]) * v;
    }
  }
  acc[0] += s0;
  acc[1] += s1;
  acc[2] += s2;
  acc[3] += s3;
}

}  // namespace

void AccumulateBlocked8x8(const int8_t* w, int32_t n_blocks, const int16_t* x, int32_t* acc) {
  AccumulateBlockRows4(w, n_blocks, x, acc);
  AccumulateBlockRows4(w + 32, n_blocks, x, acc + 4);
}

}  // namespace boardlab::runtime::kernels
