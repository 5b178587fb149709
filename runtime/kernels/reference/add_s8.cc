#include "runtime/kernels/reference/add_s8.h"

#include "runtime/kernels/reference/broadcast.h"
#include "runtime/kernels/reference/cpu_features.h"
#include "runtime/kernels/reference/fixed_point_avx2.h"
#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

// The sum (or difference) of two quantized values before the clamp, on int32 like the
// reference (int8 and int16 alike).
int32_t AddUnclamped(const AddParams& p, bool subtract, int32_t a, int32_t b) {
  const int32_t scale_up = int32_t{1} << p.left_shift;
  const int32_t x = (a + p.input1_offset) * scale_up;
  const int32_t y = (b + p.input2_offset) * scale_up;
  const int32_t sx = MultiplyByQuantizedMultiplier(x, p.input1_multiplier, p.input1_shift);
  const int32_t sy = MultiplyByQuantizedMultiplier(y, p.input2_multiplier, p.input2_shift);
  const int32_t raw = subtract ? sx - sy : sx + sy;
  const int32_t r = MultiplyByQuantizedMultiplier(raw, p.output_multiplier, p.output_shift);
  return r + p.out.output_offset;
}

int8_t AddOne(const AddParams& p, bool subtract, int8_t a, int8_t b) {
  return ClampToInt8(AddUnclamped(p, subtract, a, b), p.out.act_min, p.out.act_max);
}

#if BOARDLAB_HAVE_AVX2_PATHS

// Eight elements of one input, offset and scaled up (exact in int32 for left_shift <= 24), then
// rescaled to the shared scale.
BOARDLAB_TARGET_AVX2 inline __m256i Rescaled8(const int8_t* x, __m256i offset, __m256i left,
                                              __m256i mult, __m256i shift) {
  const __m256i v = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x)));
  return MultiplyByQuantizedMultiplier8(_mm256_sllv_epi32(_mm256_add_epi32(v, offset), left), mult,
                                        shift);
}

// Returns the number of elements done (a multiple of 8).
BOARDLAB_TARGET_AVX2 int64_t ElementwiseAddAvx2(const AddParams& p, bool subtract, const int8_t* a,
                                                const int8_t* b, int64_t n, int8_t* out) {
  const __m256i off1 = _mm256_set1_epi32(p.input1_offset);
  const __m256i off2 = _mm256_set1_epi32(p.input2_offset);
  const __m256i left = _mm256_set1_epi32(p.left_shift);
  const __m256i m1 = _mm256_set1_epi32(p.input1_multiplier);
  const __m256i s1 = _mm256_set1_epi32(p.input1_shift);
  const __m256i m2 = _mm256_set1_epi32(p.input2_multiplier);
  const __m256i s2 = _mm256_set1_epi32(p.input2_shift);
  const __m256i mo = _mm256_set1_epi32(p.output_multiplier);
  const __m256i so = _mm256_set1_epi32(p.output_shift);
  const __m128i zp = _mm_set1_epi16(static_cast<int16_t>(p.out.output_offset));
  const __m128i lo = _mm_set1_epi16(static_cast<int16_t>(p.out.act_min));
  const __m128i hi = _mm_set1_epi16(static_cast<int16_t>(p.out.act_max));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i sx = Rescaled8(a + i, off1, left, m1, s1);
    const __m256i sy = Rescaled8(b + i, off2, left, m2, s2);
    const __m256i raw = subtract ? _mm256_sub_epi32(sx, sy) : _mm256_add_epi32(sx, sy);
    const __m256i r = MultiplyByQuantizedMultiplier8(raw, mo, so);
    // Saturating packs keep the int16 offset add and clamp exact (as in requantize_s8.cc).
    __m128i v = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    v = _mm_min_epi16(_mm_max_epi16(_mm_adds_epi16(v, zp), lo), hi);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm_packs_epi16(v, v));
  }
  return i;
}

#endif  // BOARDLAB_HAVE_AVX2_PATHS

// ADD or SUB on int8 (left_shift up to 24, vector paths for same-shape operands) or int16 (16x8:
// TFLite Micro's general int16 path with left_shift 15, whatever the model's pot_scale_int16
// option says).
template <typename T, bool kSubtract>
Error AddOrSub(const char* name, const AddParams& p, const ShapeN& as, const T* a, const ShapeN& bs,
               const T* b, const ShapeN& os, T* out) {
  constexpr bool kInt8 = sizeof(T) == 1;
  RT_CHECK_OR_RETURN_ERROR(a != nullptr && b != nullptr && out != nullptr, kInvalidArgument,
                           "%s: null tensor", name);
  RT_CHECK_OR_RETURN_ERROR(p.left_shift >= 0 && p.left_shift <= (kInt8 ? 24 : 15), kInvalidArgument,
                           "%s: left_shift %d out of range", name, static_cast<int>(p.left_shift));
  BroadcastStrides s;
  RT_CHECK_OR_RETURN_ERROR(ComputeBroadcast(as, bs, os, &s), kInvalidArgument,
                           "%s: shapes do not broadcast", name);
  if constexpr (kInt8) {
    if (SameShape(as, os) && SameShape(bs, os)) {
      elementwise_add_s8(p, kSubtract, a, b, os.Size(), out);
      return Error::kOk;
    }
  }
  ForEachBroadcast(s, [&](int64_t ia, int64_t ib, int64_t io) {
    out[io] = static_cast<T>(
        Min32(Max32(AddUnclamped(p, kSubtract, a[ia], b[ib]), p.out.act_min), p.out.act_max));
  });
  return Error::kOk;
}

}  // namespace

Error add_s16(const AddParams& p, const ShapeN& as, const int16_t* a, const ShapeN& bs,
              const int16_t* b, const ShapeN& os, int16_t* out) {
  return AddOrSub<int16_t, false>("add_s16", p, as, a, bs, b, os, out);
}

Error sub_s16(const AddParams& p, const ShapeN& as, const int16_t* a, const ShapeN& bs,
              const int16_t* b, const ShapeN& os, int16_t* out) {
  return AddOrSub<int16_t, true>("sub_s16", p, as, a, bs, b, os, out);
}

void elementwise_add_s8(const AddParams& p, bool subtract, const int8_t* a, const int8_t* b,
                        int64_t n, int8_t* out) {
  int64_t i = 0;
#if BOARDLAB_HAVE_AVX2_PATHS
  // The vector MultiplyByQuantizedMultiplier8 needs multipliers >= 0, and the int16 output stage
  // an int8 offset and range (all true for valid models).
  const OutputStage& o = p.out;
  if (UseAvx2() && p.input1_multiplier >= 0 && p.input2_multiplier >= 0 &&
      p.output_multiplier >= 0 && o.output_offset >= -128 && o.output_offset <= 127 &&
      o.act_min >= -128 && o.act_max <= 127) {
    i = ElementwiseAddAvx2(p, subtract, a, b, n, out);
  }
#endif
  for (; i < n; ++i) out[i] = AddOne(p, subtract, a[i], b[i]);
}

Error add_s8(const AddParams& p, const ShapeN& as, const int8_t* a, const ShapeN& bs,
             const int8_t* b, const ShapeN& os, int8_t* out) {
  return AddOrSub<int8_t, false>("add_s8", p, as, a, bs, b, os, out);
}

Error sub_s8(const AddParams& p, const ShapeN& as, const int8_t* a, const ShapeN& bs,
             const int8_t* b, const ShapeN& os, int8_t* out) {
  return AddOrSub<int8_t, true>("sub_s8", p, as, a, bs, b, os, out);
}

}  // namespace boardlab::runtime::kernels
