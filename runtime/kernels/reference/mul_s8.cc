#include "runtime/kernels/reference/mul_s8.h"

#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

template <typename T, typename F>
Error Binary(const char* name, const ShapeN& as, const T* a, const ShapeN& bs, const T* b,
             const ShapeN& os, T* out, F&& op) {
  RT_CHECK_OR_RETURN_ERROR(a != nullptr && b != nullptr && out != nullptr, kInvalidArgument,
                           "%s: null tensor", name);
  BroadcastStrides s;
  RT_CHECK_OR_RETURN_ERROR(ComputeBroadcast(as, bs, os, &s), kInvalidArgument,
                           "%s: shapes do not broadcast", name);
  if (SameShape(as, os) && SameShape(bs, os)) {
    const int64_t n = os.Size();
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
  } else {
    ForEachBroadcast(s, [&](int64_t ia, int64_t ib, int64_t io) { out[io] = op(a[ia], b[ib]); });
  }
  return Error::kOk;
}

// The product of two quantized values requantized, before the clamp (int8 and int16 alike; the
// int16 product fits int32).
template <typename T>
Error Maximum(const char* name, const ShapeN& as, const T* a, const ShapeN& bs, const T* b,
              const ShapeN& os, T* out) {
  return Binary(name, as, a, bs, b, os, out, [](T x, T y) { return x > y ? x : y; });
}

template <typename T>
Error Minimum(const char* name, const ShapeN& as, const T* a, const ShapeN& bs, const T* b,
              const ShapeN& os, T* out) {
  return Binary(name, as, a, bs, b, os, out, [](T x, T y) { return x < y ? x : y; });
}

int32_t MulUnclamped(const MulParams& p, int32_t x, int32_t y) {
  const int32_t prod = (x + p.input1_offset) * (y + p.input2_offset);
  return MultiplyByQuantizedMultiplier(prod, p.output_multiplier, p.output_shift) +
         p.out.output_offset;
}

}  // namespace

Error mul_s16(const MulParams& p, const ShapeN& as, const int16_t* a, const ShapeN& bs,
              const int16_t* b, const ShapeN& os, int16_t* out) {
  return Binary("mul_s16", as, a, bs, b, os, out, [&p](int16_t x, int16_t y) {
    return ClampToInt16(MulUnclamped(p, x, y), p.out.act_min, p.out.act_max);
  });
}

Error mul_s8(const MulParams& p, const ShapeN& as, const int8_t* a, const ShapeN& bs,
             const int8_t* b, const ShapeN& os, int8_t* out) {
  return Binary("mul_s8", as, a, bs, b, os, out, [&p](int8_t x, int8_t y) {
    return ClampToInt8(MulUnclamped(p, x, y), p.out.act_min, p.out.act_max);
  });
}

Error maximum_s8(const ShapeN& as, const int8_t* a, const ShapeN& bs, const int8_t* b,
                 const ShapeN& os, int8_t* out) {
  return Maximum("maximum_s8", as, a, bs, b, os, out);
}

Error minimum_s8(const ShapeN& as, const int8_t* a, const ShapeN& bs, const int8_t* b,
                 const ShapeN& os, int8_t* out) {
  return Minimum("minimum_s8", as, a, bs, b, os, out);
}

Error maximum_s16(const ShapeN& as, const int16_t* a, const ShapeN& bs, const int16_t* b,
                  const ShapeN& os, int16_t* out) {
  return Maximum("maximum_s16", as, a, bs, b, os, out);
}

Error minimum_s16(const ShapeN& as, const int16_t* a, const ShapeN& bs, const int16_t* b,
                  const ShapeN& os, int16_t* out) {
  return Minimum("minimum_s16", as, a, bs, b, os, out);
}

}  // namespace boardlab::runtime::kernels
