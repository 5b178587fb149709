#include "runtime/kernels/reference/compare.h"

#include <cstring>

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

// The comparison is chosen once per call so that the element loop is a plain loop.
template <typename T, typename Transform>
void CompareAll(Comparison op, const BroadcastStrides& s, const T* a, const T* b, bool* out,
                Transform transform) {
  auto run = [&](auto cmp) {
    ForEachBroadcast(s, [&](int64_t ia, int64_t ib, int64_t o) {
      out[o] = cmp(transform(a[ia], 0), transform(b[ib], 1));
    });
  };
  switch (op) {
    case Comparison::kEqual:
      return run([](auto x, auto y) { return x == y; });
    case Comparison::kNotEqual:
      return run([](auto x, auto y) { return x != y; });
    case Comparison::kGreater:
      return run([](auto x, auto y) { return x > y; });
    case Comparison::kGreaterEqual:
      return run([](auto x, auto y) { return x >= y; });
    case Comparison::kLess:
      return run([](auto x, auto y) { return x < y; });
    case Comparison::kLessEqual:
      return run([](auto x, auto y) { return x <= y; });
  }
}

template <typename T>
Error CompareRaw(const char* name, Comparison op, const BroadcastStrides& s, const T* a, const T* b,
                 bool* out) {
  RT_CHECK_OR_RETURN_ERROR(a != nullptr && b != nullptr && out != nullptr, kInvalidArgument,
                           "%s: null pointer", name);
  CompareAll(op, s, a, b, out, [](T v, int) { return v; });
  return Error::kOk;
}

// TFLite's ComparisonWithScaling (int8, and int16 for GREATER): each operand minus its zero
// point, shifted up by left_shift, scaled below one; the scaled values compared. For int16 the
// shifted value stays below 2^24, so the reference's int32 shift cannot overflow.
template <typename T>
Error CompareRescaled(const char* name, Comparison op, const ComparisonScaling& q,
                      const BroadcastStrides& s, const T* a, const T* b, bool* out) {
  RT_CHECK_OR_RETURN_ERROR(a != nullptr && b != nullptr && out != nullptr && q.shift[0] <= 0 &&
                               q.shift[1] <= 0 && q.left_shift >= 0 && q.left_shift <= 8,
                           kInvalidArgument, "%s: bad arguments", name);
  CompareAll(op, s, a, b, out, [&q](T v, int k) {
    const int32_t shifted = (q.offset[k] + v) * (1 << q.left_shift);
    return MultiplyByQuantizedMultiplier(shifted, q.multiplier[k], q.shift[k]);
  });
  return Error::kOk;
}

}  // namespace

Error compare_s8(Comparison op, const ComparisonScaling& q, const BroadcastStrides& s,
                 const int8_t* a, const int8_t* b, bool* out) {
  return CompareRescaled("compare_s8", op, q, s, a, b, out);
}

Error compare_s16(Comparison op, const ComparisonScaling& q, const BroadcastStrides& s,
                  const int16_t* a, const int16_t* b, bool* out) {
  return CompareRescaled("compare_s16", op, q, s, a, b, out);
}

Error compare_s32(Comparison op, const BroadcastStrides& s, const int32_t* a, const int32_t* b,
                  bool* out) {
  return CompareRaw("compare_s32", op, s, a, b, out);
}

Error compare_s64(Comparison op, const BroadcastStrides& s, const int64_t* a, const int64_t* b,
                  bool* out) {
  return CompareRaw("compare_s64", op, s, a, b, out);
}

Error compare_f32(Comparison op, const BroadcastStrides& s, const float* a, const float* b,
                  bool* out) {
  return CompareRaw("compare_f32", op, s, a, b, out);
}

Error compare_bool(Comparison op, const BroadcastStrides& s, const bool* a, const bool* b,
                   bool* out) {
  RT_CHECK_OR_RETURN_ERROR(op == Comparison::kEqual || op == Comparison::kNotEqual,
                           kInvalidArgument, "compare_bool: bools are only tested for equality");
  return CompareRaw("compare_bool", op, s, a, b, out);
}

Error logical_bool(LogicalOp op, const BroadcastStrides& s, const bool* a, const bool* b,
                   bool* out) {
  RT_CHECK_OR_RETURN_ERROR(a != nullptr && b != nullptr && out != nullptr, kInvalidArgument,
                           "logical_bool: null pointer");
  if (op == LogicalOp::kAnd) {
    ForEachBroadcast(s, [&](int64_t ia, int64_t ib, int64_t o) { out[o] = a[ia] && b[ib]; });
  } else {
    ForEachBroadcast(s, [&](int64_t ia, int64_t ib, int64_t o) { out[o] = a[ia] || b[ib]; });
  }
  return Error::kOk;
}

Error logical_not_bool(int64_t count, const bool* in, bool* out) {
  RT_CHECK_OR_RETURN_ERROR(in != nullptr && out != nullptr && count >= 0, kInvalidArgument,
                           "logical_not_bool: bad arguments");
  for (int64_t i = 0; i < count; ++i) out[i] = !in[i];
  return Error::kOk;
}

Error select_elements(const ShapeN& condition_shape, const bool* condition, const ShapeN& x_shape,
                      const void* x, const ShapeN& y_shape, const void* y, const ShapeN& out_shape,
                      int32_t element_size, void* out) {
  int64_t sc[kMaxDims], sx[kMaxDims], sy[kMaxDims];
  RT_CHECK_OR_RETURN_ERROR(
      condition != nullptr && x != nullptr && y != nullptr && out != nullptr && element_size > 0 &&
          element_size <= 8 && BroadcastStridesOf(condition_shape, out_shape, sc) &&
          BroadcastStridesOf(x_shape, out_shape, sx) && BroadcastStridesOf(y_shape, out_shape, sy),
      kInvalidArgument, "select_elements: shapes do not broadcast to the output");
  int32_t d[kMaxDims];
  PaddedDims(out_shape, d);
  const auto* xb = static_cast<const uint8_t*>(x);
  const auto* yb = static_cast<const uint8_t*>(y);
  auto* ob = static_cast<uint8_t*>(out);
  int32_t index[kMaxDims] = {};
  const int64_t total = out_shape.Size();
  for (int64_t o = 0; o < total; ++o) {
    int64_t ic = 0, ix = 0, iy = 0;
    for (int32_t k = 0; k < kMaxDims; ++k) {
      ic += index[k] * sc[k];
      ix += index[k] * sx[k];
      iy += index[k] * sy[k];
    }
    const uint8_t* src = condition[ic] ? xb + ix * element_size : yb + iy * element_size;
    std::memcpy(ob + o * element_size, src, static_cast<size_t>(element_size));
    for (int32_t k = kMaxDims - 1; k >= 0; --k) {
      if (++index[k] < d[k]) break;
      index[k] = 0;
    }
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
