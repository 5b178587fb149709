#include "runtime/kernels/reference/mul_s8.h"

#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

template <typename F>
Error Binary(const char* name, const ShapeN& as, const int8_t* a, const ShapeN& bs, const int8_t* b,
             const ShapeN& os, int8_t* out, F&& op) {
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

}  // namespace

Error mul_s8(const MulParams& p, const ShapeN& as, const int8_t* a, const ShapeN& bs,
             const int8_t* b, const ShapeN& os, int8_t* out) {
  return Binary("mul_s8", as, a, bs, b, os, out, [&p](int8_t x, int8_t y) {
    const int32_t prod = (x + p.input1_offset) * (y + p.input2_offset);
    const int32_t r = MultiplyByQuantizedMultiplier(prod, p.output_multiplier, p.output_shift);
    return ClampToInt8(r + p.out.output_offset, p.out.act_min, p.out.act_max);
  });
}

Error maximum_s8(const ShapeN& as, const int8_t* a, const ShapeN& bs, const int8_t* b,
                 const ShapeN& os, int8_t* out) {
  return Binary("maximum_s8", as, a, bs, b, os, out,
                [](int8_t x, int8_t y) { return x > y ? x : y; });
}

Error minimum_s8(const ShapeN& as, const int8_t* a, const ShapeN& bs, const int8_t* b,
                 const ShapeN& os, int8_t* out) {
  return Binary("minimum_s8", as, a, bs, b, os, out,
                [](int8_t x, int8_t y) { return x < y ? x : y; });
}

}  // namespace boardlab::runtime::kernels
