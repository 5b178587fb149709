#include "runtime/kernels/reference/add_s8.h"

#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

template <bool kSubtract>
Error AddOrSub(const AddParams& p, const ShapeN& as, const int8_t* a, const ShapeN& bs,
               const int8_t* b, const ShapeN& os, int8_t* out) {
  RT_CHECK_OR_RETURN_ERROR(a != nullptr && b != nullptr && out != nullptr, kInvalidArgument,
                           "add_s8: null tensor");
  RT_CHECK_OR_RETURN_ERROR(p.left_shift >= 0 && p.left_shift <= 24, kInvalidArgument,
                           "add_s8: left_shift %d out of range", static_cast<int>(p.left_shift));
  BroadcastStrides s;
  RT_CHECK_OR_RETURN_ERROR(ComputeBroadcast(as, bs, os, &s), kInvalidArgument,
                           "add_s8: shapes do not broadcast");
  const int32_t scale_up = int32_t{1} << p.left_shift;
  auto op = [&](int64_t ia, int64_t ib, int64_t io) {
    const int32_t x = (a[ia] + p.input1_offset) * scale_up;
    const int32_t y = (b[ib] + p.input2_offset) * scale_up;
    const int32_t sx = MultiplyByQuantizedMultiplier(x, p.input1_multiplier, p.input1_shift);
    const int32_t sy = MultiplyByQuantizedMultiplier(y, p.input2_multiplier, p.input2_shift);
    const int32_t raw = kSubtract ? sx - sy : sx + sy;
    const int32_t r = MultiplyByQuantizedMultiplier(raw, p.output_multiplier, p.output_shift);
    out[io] = ClampToInt8(r + p.out.output_offset, p.out.act_min, p.out.act_max);
  };
  if (SameShape(as, os) && SameShape(bs, os)) {
    const int64_t n = os.Size();
    for (int64_t i = 0; i < n; ++i) op(i, i, i);
  } else {
    ForEachBroadcast(s, op);
  }
  return Error::kOk;
}

}  // namespace

Error add_s8(const AddParams& p, const ShapeN& as, const int8_t* a, const ShapeN& bs,
             const int8_t* b, const ShapeN& os, int8_t* out) {
  return AddOrSub<false>(p, as, a, bs, b, os, out);
}

Error sub_s8(const AddParams& p, const ShapeN& as, const int8_t* a, const ShapeN& bs,
             const int8_t* b, const ShapeN& os, int8_t* out) {
  return AddOrSub<true>(p, as, a, bs, b, os, out);
}

}  // namespace boardlab::runtime::kernels
