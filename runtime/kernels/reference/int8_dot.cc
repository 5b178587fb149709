#include "runtime/kernels/reference/int8_dot.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>

#include <cstring>
#endif

namespace boardlab::runtime::kernels {
namespace {

// The k % 8 weights past the last whole chunk, for the kernels whose rows are not padded to 8.
template <int R, int P>
void AddTail(const int8_t* w, int64_t row_stride, int64_t chunk_stride, const int16_t* x,
             int64_t x_stride, int32_t k, int32_t* out) {
  const int32_t done = k / 8 * 8;
  if (done == k) return;
  const int64_t w_off = (k / 8) * chunk_stride;
  for (int p = 0; p < P; ++p) {
    for (int r = 0; r < R; ++r) {
      const int8_t* wr = w + r * row_stride + w_off;
      const int16_t* xp = x + p * x_stride + done;
      int32_t s = 0;
      for (int32_t i = 0; i < k - done; ++i) s += wr[i] * xp[i];
      out[p * R + r] += s;
    }
  }
}

#if defined(__SSE2__)

// Sums the four int32 lanes of each of a, b, c, d into the lanes of the result (a transpose
// folded into the adds: 4 unpacks and 3 adds instead of 12 scalar additions).
inline __m128i HorizontalSums4(__m128i a, __m128i b, __m128i c, __m128i d) {
  const __m128i ab = _mm_add_epi32(_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b));
  const __m128i cd = _mm_add_epi32(_mm_unpacklo_epi32(c, d), _mm_unpackhi_epi32(c, d));
  return _mm_add_epi32(_mm_unpacklo_epi64(ab, cd), _mm_unpackhi_epi64(ab, cd));
}

inline int32_t HorizontalSum(__m128i a) {
  int32_t lanes[4];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes), a);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

// pmaddwd multiplies 8 int16 pairs and adds adjacent products into 4 int32 lanes: with the
// weights sign-extended to int16, one instruction does 8 multiply-accumulates of one chunk.
template <int R, int P>
void DotTileImpl(const int8_t* w, int64_t row_stride, int64_t chunk_stride, const int16_t* x,
                 int64_t x_stride, int32_t k, int32_t* out) {
  __m128i acc[R * P];
  for (int i = 0; i < R * P; ++i) acc[i] = _mm_setzero_si128();
  const int32_t chunks = k / 8;
  for (int32_t j = 0; j < chunks; ++j) {
    __m128i xv[P];
    for (int p = 0; p < P; ++p) {
      xv[p] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + p * x_stride + j * 8));
    }
    for (int r = 0; r < R; ++r) {
      const __m128i b = _mm_loadl_epi64(
          reinterpret_cast<const __m128i*>(w + r * row_stride + int64_t{j} * chunk_stride));
      // Each byte into the high half of a 16-bit lane, then an arithmetic shift: sign extension.
      const __m128i wv = _mm_srai_epi16(_mm_unpacklo_epi8(b, b), 8);
      for (int p = 0; p < P; ++p) {
        acc[p * R + r] = _mm_add_epi32(acc[p * R + r], _mm_madd_epi16(wv, xv[p]));
      }
    }
  }
  int i = 0;
  for (; i + 4 <= R * P; i += 4) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     HorizontalSums4(acc[i], acc[i + 1], acc[i + 2], acc[i + 3]));
  }
  for (; i < R * P; ++i) out[i] = HorizontalSum(acc[i]);
  AddTail<R, P>(w, row_stride, chunk_stride, x, x_stride, k, out);
}

#elif defined(__ARM_FEATURE_DSP)

inline uint32_t Load32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // one LDR: Cortex-M33 allows unaligned word loads
  return v;
}

// SMLAD does two 16-bit multiply-accumulates: four weights (one word) become the pairs (w0, w2)
// and (w1, w3) through SXTB16 (and a ROR folded into it), so the inputs are paired the same way
// with PKHBT/PKHTB once per pixel and reused for every row of the tile.
template <int R, int P>
void DotTileImpl(const int8_t* w, int64_t row_stride, int64_t chunk_stride, const int16_t* x,
                 int64_t x_stride, int32_t k, int32_t* out) {
  int32_t acc[R * P] = {};
  const int32_t quads = k / 4;
  for (int32_t q = 0; q < quads; ++q) {
    const int64_t w_off = (q / 2) * chunk_stride + (q % 2) * 4;
    int32_t x02[P], x13[P];
    for (int p = 0; p < P; ++p) {
      const uint32_t lo = Load32(x + p * x_stride + q * 4);
      const uint32_t hi = Load32(x + p * x_stride + q * 4 + 2);
      x02[p] = static_cast<int32_t>((lo & 0xFFFFu) | (hi << 16));
      x13[p] = static_cast<int32_t>((lo >> 16) | (hi & 0xFFFF0000u));
    }
    for (int r = 0; r < R; ++r) {
      const uint32_t wv = Load32(w + r * row_stride + w_off);
      const int32_t w02 = __sxtb16(static_cast<int32_t>(wv));
      const int32_t w13 = __sxtb16(static_cast<int32_t>((wv >> 8) | (wv << 24)));
      for (int p = 0; p < P; ++p) {
        acc[p * R + r] = __smlad(w02, x02[p], acc[p * R + r]);
        acc[p * R + r] = __smlad(w13, x13[p], acc[p * R + r]);
      }
    }
  }
  // At most 3 weights past the last quad (only plain rows have them: NPU rows are padded to 8).
  for (int p = 0; p < P; ++p) {
    for (int r = 0; r < R; ++r) {
      const int8_t* wr = w + r * row_stride + (quads / 2) * chunk_stride + (quads % 2) * 4;
      const int16_t* xp = x + p * x_stride + quads * 4;
      for (int32_t i = 0; i < k - quads * 4; ++i) acc[p * R + r] += wr[i] * xp[i];
    }
  }
  for (int i = 0; i < R * P; ++i) out[i] = acc[i];
}

#else

template <int R, int P>
void DotTileImpl(const int8_t* w, int64_t row_stride, int64_t chunk_stride, const int16_t* x,
                 int64_t x_stride, int32_t k, int32_t* out) {
  int32_t acc[R * P] = {};
  const int32_t chunks = k / 8;
  for (int32_t j = 0; j < chunks; ++j) {
    for (int r = 0; r < R; ++r) {
      const int8_t* wr = w + r * row_stride + int64_t{j} * chunk_stride;
      for (int p = 0; p < P; ++p) {
        const int16_t* xp = x + p * x_stride + j * 8;
        int32_t s = 0;
        for (int i = 0; i < 8; ++i) s += wr[i] * xp[i];
        acc[p * R + r] += s;
      }
    }
  }
  for (int i = 0; i < R * P; ++i) out[i] = acc[i];
  AddTail<R, P>(w, row_stride, chunk_stride, x, x_stride, k, out);
}

#endif

template <int R>
void DotTileRows(const int8_t* w, int64_t row_stride, int64_t chunk_stride, const int16_t* x,
                 int64_t x_stride, int32_t pixels, int32_t k, int32_t* out) {
  switch (pixels) {
    case 1:
      return DotTileImpl<R, 1>(w, row_stride, chunk_stride, x, x_stride, k, out);
    case 2:
      return DotTileImpl<R, 2>(w, row_stride, chunk_stride, x, x_stride, k, out);
    case 3:
      return DotTileImpl<R, 3>(w, row_stride, chunk_stride, x, x_stride, k, out);
    default:
      return DotTileImpl<R, 4>(w, row_stride, chunk_stride, x, x_stride, k, out);
  }
}

}  // namespace

void DotTile(const int8_t* w, int64_t row_stride, int64_t chunk_stride, int32_t rows,
             const int16_t* x, int64_t x_stride, int32_t pixels, int32_t k, int32_t* out) {
  static_assert(kDotMaxRows == 4 && kDotMaxPixels == 4, "the switches below cover 1..4");
  switch (rows) {
    case 1:
      return DotTileRows<1>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out);
    case 2:
      return DotTileRows<2>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out);
    case 3:
      return DotTileRows<3>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out);
    default:
      return DotTileRows<4>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out);
  }
}

void DepthwiseDotTaps(const int8_t* const* x, const int8_t* const* w, int32_t taps,
                      int32_t channels, int32_t offset, int32_t* acc) {
  int32_t c0 = 0;
#if defined(__SSE2__)
  // 16 channels per pass in four int32 registers held across all taps. The products fit int16
  // (|w| <= 128, |x + offset| <= 255), so pmullw forms them exactly and only they are widened.
  const __m128i off = _mm_set1_epi16(static_cast<int16_t>(offset));
  for (; c0 + 16 <= channels; c0 += 16) {
    __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
    for (int32_t t = 0; t < taps; ++t) {
      const __m128i xb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[t] + c0));
      const __m128i wb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[t] + c0));
      const __m128i xl = _mm_add_epi16(_mm_srai_epi16(_mm_unpacklo_epi8(xb, xb), 8), off);
      const __m128i xh = _mm_add_epi16(_mm_srai_epi16(_mm_unpackhi_epi8(xb, xb), 8), off);
      const __m128i pl = _mm_mullo_epi16(_mm_srai_epi16(_mm_unpacklo_epi8(wb, wb), 8), xl);
      const __m128i ph = _mm_mullo_epi16(_mm_srai_epi16(_mm_unpackhi_epi8(wb, wb), 8), xh);
      a0 = _mm_add_epi32(a0, _mm_srai_epi32(_mm_unpacklo_epi16(pl, pl), 16));
      a1 = _mm_add_epi32(a1, _mm_srai_epi32(_mm_unpackhi_epi16(pl, pl), 16));
      a2 = _mm_add_epi32(a2, _mm_srai_epi32(_mm_unpacklo_epi16(ph, ph), 16));
      a3 = _mm_add_epi32(a3, _mm_srai_epi32(_mm_unpackhi_epi16(ph, ph), 16));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + c0), a0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + c0 + 4), a1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + c0 + 8), a2);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + c0 + 12), a3);
  }
#elif defined(__ARM_FEATURE_DSP)
  // Four channels per pass: SXTAB16 widens channels (0, 2) and (1, 3) of a word and adds the
  // offset to both halves at once; SMLABB / SMLATT multiply-accumulate one half each.
  const uint32_t off = static_cast<uint16_t>(offset);
  const int32_t off2 = static_cast<int32_t>(off | (off << 16));
  for (; c0 + 4 <= channels; c0 += 4) {
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (int32_t t = 0; t < taps; ++t) {
      const uint32_t xv = Load32(x[t] + c0), wv = Load32(w[t] + c0);
      const int32_t x02 = __sxtab16(off2, static_cast<int32_t>(xv));
      const int32_t x13 = __sxtab16(off2, static_cast<int32_t>((xv >> 8) | (xv << 24)));
      const int32_t w02 = __sxtb16(static_cast<int32_t>(wv));
      const int32_t w13 = __sxtb16(static_cast<int32_t>((wv >> 8) | (wv << 24)));
      a0 = __smlabb(w02, x02, a0);
      a2 = __smlatt(w02, x02, a2);
      a1 = __smlabb(w13, x13, a1);
      a3 = __smlatt(w13, x13, a3);
    }
    acc[c0] = a0;
    acc[c0 + 1] = a1;
    acc[c0 + 2] = a2;
    acc[c0 + 3] = a3;
  }
#endif
  for (; c0 < channels; ++c0) {
    int32_t a = 0;
    for (int32_t t = 0; t < taps; ++t) a += w[t][c0] * (x[t][c0] + offset);
    acc[c0] = a;
  }
}

void AccumulateBlocked8x8(const int8_t* w, int32_t n_blocks, const int16_t* x, int32_t* acc) {
  for (int32_t r = 0; r < 8; r += kDotMaxRows) {
    int32_t sums[kDotMaxRows];
    DotTile(w + r * 8, 8, 64, kDotMaxRows, x, 0, 1, n_blocks * 8, sums);
    for (int32_t i = 0; i < kDotMaxRows; ++i) acc[r + i] += sums[i];
  }
}

}  // namespace boardlab::runtime::kernels
