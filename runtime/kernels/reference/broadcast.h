#pragma once

// Numpy-style broadcasting of two operands to an output shape, up to kMaxDims dimensions.
// Shapes are aligned on their last dimension; an operand dimension of 1 repeats.

#include <cstdint>

#include "runtime/kernels/reference/types.h"

namespace boardlab::runtime::kernels {

/// Element strides of `s` seen through the output's rank (0 where `s` broadcasts).
struct BroadcastStrides {
  int64_t a[kMaxDims] = {};
  int64_t b[kMaxDims] = {};
  int32_t out_dims[kMaxDims] = {};
};

/// Element strides of `in` seen through `out`'s dimensions, right-aligned and padded in front to
/// kMaxDims (0 where `in` broadcasts). False when `in` does not broadcast to `out`.
inline bool BroadcastStridesOf(const ShapeN& in, const ShapeN& out, int64_t* strides) {
  if (out.rank > kMaxDims || in.rank > out.rank) return false;
  int64_t s = 1;
  for (int32_t i = kMaxDims - 1; i >= 0; --i) {
    const int32_t ii = i - (kMaxDims - in.rank);
    const int32_t oi = i - (kMaxDims - out.rank);
    const int32_t id = ii >= 0 ? in.dims[ii] : 1;
    const int32_t od = oi >= 0 ? out.dims[oi] : 1;
    if (id != od && id != 1) return false;
    strides[i] = id == 1 ? 0 : s;
    s *= id;
  }
  return true;
}

/// Output dimensions padded in front to kMaxDims with 1.
inline void PaddedDims(const ShapeN& out, int32_t* dims) {
  for (int32_t i = 0; i < kMaxDims; ++i) {
    const int32_t oi = i - (kMaxDims - out.rank);
    dims[i] = oi >= 0 ? out.dims[oi] : 1;
  }
}

/// True when `a` and `b` broadcast to `out` (out = elementwise max where they differ from 1).
inline bool ComputeBroadcast(const ShapeN& a, const ShapeN& b, const ShapeN& out,
                             BroadcastStrides* s) {
  if (out.rank > kMaxDims || a.rank > out.rank || b.rank > out.rank) return false;
  int64_t sa = 1, sb = 1;
  for (int32_t i = kMaxDims - 1; i >= 0; --i) {
    const int32_t oi = i - (kMaxDims - out.rank);
    const int32_t ai = i - (kMaxDims - a.rank);
    const int32_t bi = i - (kMaxDims - b.rank);
    const int32_t od = oi >= 0 ? out.dims[oi] : 1;
    const int32_t ad = ai >= 0 ? a.dims[ai] : 1;
    const int32_t bd = bi >= 0 ? b.dims[bi] : 1;
    if ((ad != od && ad != 1) || (bd != od && bd != 1)) return false;
    s->out_dims[i] = od;
    s->a[i] = ad == 1 ? 0 : sa;
    s->b[i] = bd == 1 ? 0 : sb;
    sa *= ad;
    sb *= bd;
  }
  return true;
}

/// Calls f(index_a, index_b, index_out) for every output element in row-major order. The
/// innermost dimension is a plain loop so `f` inlines into it.
template <typename F>
inline void ForEachBroadcast(const BroadcastStrides& s, F&& f) {
  const int32_t* d = s.out_dims;
  int64_t o = 0;
  for (int32_t i0 = 0; i0 < d[0]; ++i0) {
    for (int32_t i1 = 0; i1 < d[1]; ++i1) {
      for (int32_t i2 = 0; i2 < d[2]; ++i2) {
        for (int32_t i3 = 0; i3 < d[3]; ++i3) {
          for (int32_t i4 = 0; i4 < d[4]; ++i4) {
            int64_t ia = i0 * s.a[0] + i1 * s.a[1] + i2 * s.a[2] + i3 * s.a[3] + i4 * s.a[4];
            int64_t ib = i0 * s.b[0] + i1 * s.b[1] + i2 * s.b[2] + i3 * s.b[3] + i4 * s.b[4];
            for (int32_t i5 = 0; i5 < d[5]; ++i5) {
              f(ia, ib, o++);
              ia += s.a[5];
              ib += s.b[5];
            }
          }
        }
      }
    }
  }
}

/// True when a and b have exactly the output's shape (no broadcasting needed).
inline bool SameShape(const ShapeN& a, const ShapeN& b) {
  if (a.rank != b.rank) return false;
  for (int32_t i = 0; i < a.rank; ++i) {
    if (a.dims[i] != b.dims[i]) return false;
  }
  return true;
}

}  // namespace boardlab::runtime::kernels
