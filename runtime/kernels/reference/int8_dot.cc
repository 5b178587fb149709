#include "runtime/kernels/reference/int8_dot.h"

#include "runtime/kernels/reference/cpu_features.h"

#if BOARDLAB_HAVE_AVX2_PATHS
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>

#include <cstring>
#endif

namespace boardlab::runtime::kernels {
namespace {

// The k % 8 weights past the last whole chunk, for the kernels whose rows are not padded to 8.
template <int R, int P>
void AddTail(const int8_t* w, ptrdiff_t row_stride, ptrdiff_t chunk_stride, const int16_t* x,
             ptrdiff_t x_stride, int32_t k, int32_t* out, ptrdiff_t out_stride) {
  const int32_t done = k / 8 * 8;
  if (done == k) return;
  const ptrdiff_t w_off = (k / 8) * chunk_stride;
  for (int p = 0; p < P; ++p) {
    for (int r = 0; r < R; ++r) {
      const int8_t* wr = w + r * row_stride + w_off;
      const int16_t* xp = x + p * x_stride + done;
      int32_t s = 0;
      for (int32_t i = 0; i < k - done; ++i) s += wr[i] * xp[i];
      out[p * out_stride + r] += s;
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

// Stores the lane sums of acc[p * R + r] to out[p * out_stride + r]: whole rows of four, or
// pairs of pixels' two rows, with one transpose-and-add each.
template <int R, int P>
inline void StoreSums(const __m128i* acc, int32_t* out, ptrdiff_t out_stride) {
  int p = 0;
  if (R == 4) {
    for (; p < P; ++p) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + p * out_stride),
                       HorizontalSums4(acc[p * R], acc[p * R + 1], acc[p * R + 2], acc[p * R + 3]));
    }
  } else if (R == 2) {
    for (; p + 2 <= P; p += 2) {
      const __m128i v = HorizontalSums4(acc[p * R], acc[p * R + 1], acc[p * R + 2], acc[p * R + 3]);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + p * out_stride), v);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + (p + 1) * out_stride),
                       _mm_unpackhi_epi64(v, v));
    }
  }
  for (; p < P; ++p) {
    for (int r = 0; r < R; ++r) out[p * out_stride + r] = HorizontalSum(acc[p * R + r]);
  }
}

// pmaddwd multiplies 8 int16 pairs and adds adjacent products into 4 int32 lanes: with the
// weights sign-extended to int16, one instruction does 8 multiply-accumulates of one chunk.
template <int R, int P>
void DotTileImpl(const int8_t* w, ptrdiff_t row_stride, ptrdiff_t chunk_stride, const int16_t* x,
                 ptrdiff_t x_stride, int32_t k, int32_t* out, ptrdiff_t out_stride) {
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
          reinterpret_cast<const __m128i*>(w + r * row_stride + ptrdiff_t{j} * chunk_stride));
      // Each byte into the high half of a 16-bit lane, then an arithmetic shift: sign extension.
      const __m128i wv = _mm_srai_epi16(_mm_unpacklo_epi8(b, b), 8);
      for (int p = 0; p < P; ++p) {
        acc[p * R + r] = _mm_add_epi32(acc[p * R + r], _mm_madd_epi16(wv, xv[p]));
      }
    }
  }
  StoreSums<R, P>(acc, out, out_stride);
  AddTail<R, P>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
}

#endif  // __SSE2__

#if BOARDLAB_HAVE_AVX2_PATHS

// 16 weights of one row (two 8-byte chunks) sign-extended to int16: VPMOVSXBW does in one
// instruction what costs SSE2 an unpack and a shift per 8 weights. Plain rows have their chunks
// adjacent (one 16-byte load); the NPU's blocked rows have them 64 bytes apart.
template <bool kAdjacent>
BOARDLAB_TARGET_AVX2 inline __m256i LoadWeights16(const int8_t* w, ptrdiff_t chunk_stride) {
  if (kAdjacent) return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  const __m128i lo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w));
  const __m128i hi = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w + chunk_stride));
  return _mm256_cvtepi8_epi16(_mm_unpacklo_epi64(lo, hi));
}

// The SSE2 tile on 256-bit registers: each VPMADDWD does 16 multiply-accumulates (two chunks);
// an odd last chunk runs at 128 bits after the accumulators are folded to 4 lanes.
template <int R, int P, bool kAdjacent>
BOARDLAB_TARGET_AVX2 void DotTileAvx2Impl(const int8_t* w, ptrdiff_t row_stride,
                                          ptrdiff_t chunk_stride, const int16_t* x,
                                          ptrdiff_t x_stride, int32_t k, int32_t* out,
                                          ptrdiff_t out_stride) {
  __m256i acc[R * P];
  for (int i = 0; i < R * P; ++i) acc[i] = _mm256_setzero_si256();
  const int32_t pairs = k / 16;
  for (int32_t j = 0; j < pairs; ++j) {
    __m256i xv[P];
    for (int p = 0; p < P; ++p) {
      xv[p] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + p * x_stride + j * 16));
    }
    for (int r = 0; r < R; ++r) {
      const __m256i wv =
          LoadWeights16<kAdjacent>(w + r * row_stride + 2 * j * chunk_stride, chunk_stride);
      for (int p = 0; p < P; ++p) {
        acc[p * R + r] = _mm256_add_epi32(acc[p * R + r], _mm256_madd_epi16(wv, xv[p]));
      }
    }
  }
  __m128i acc4[R * P];
  for (int i = 0; i < R * P; ++i) {
    acc4[i] = _mm_add_epi32(_mm256_castsi256_si128(acc[i]), _mm256_extracti128_si256(acc[i], 1));
  }
  if ((k / 8) % 2 != 0) {
    const int32_t j = pairs * 2;
    for (int r = 0; r < R; ++r) {
      const __m128i wv = _mm_cvtepi8_epi16(
          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w + r * row_stride + j * chunk_stride)));
      for (int p = 0; p < P; ++p) {
        const __m128i xv =
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + p * x_stride + j * 8));
        acc4[p * R + r] = _mm_add_epi32(acc4[p * R + r], _mm_madd_epi16(wv, xv));
      }
    }
  }
  StoreSums<R, P>(acc4, out, out_stride);
  AddTail<R, P>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
}

template <int R, int P>
BOARDLAB_TARGET_AVX2 void DotTileAvx2Layout(const int8_t* w, ptrdiff_t row_stride,
                                            ptrdiff_t chunk_stride, const int16_t* x,
                                            ptrdiff_t x_stride, int32_t k, int32_t* out,
                                            ptrdiff_t out_stride) {
  if (chunk_stride == 8) {
    return DotTileAvx2Impl<R, P, true>(w, row_stride, chunk_stride, x, x_stride, k, out,
                                       out_stride);
  }
  DotTileAvx2Impl<R, P, false>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
}

template <int R>
BOARDLAB_TARGET_AVX2 void DotTileAvx2Rows(const int8_t* w, ptrdiff_t row_stride,
                                          ptrdiff_t chunk_stride, const int16_t* x,
                                          ptrdiff_t x_stride, int32_t pixels, int32_t k,
                                          int32_t* out, ptrdiff_t out_stride) {
  switch (pixels) {
    case 1:
      return DotTileAvx2Layout<R, 1>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
    case 2:
      return DotTileAvx2Layout<R, 2>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
    case 3:
      return DotTileAvx2Layout<R, 3>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
    default:
      return DotTileAvx2Layout<R, 4>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
  }
}

BOARDLAB_TARGET_AVX2 void DotTileAvx2(const int8_t* w, ptrdiff_t row_stride, ptrdiff_t chunk_stride,
                                      int32_t rows, const int16_t* x, ptrdiff_t x_stride,
                                      int32_t pixels, int32_t k, int32_t* out,
                                      ptrdiff_t out_stride) {
  switch (rows) {
    case 1:
      return DotTileAvx2Rows<1>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out,
                                out_stride);
    case 2:
      return DotTileAvx2Rows<2>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out,
                                out_stride);
    case 3:
      return DotTileAvx2Rows<3>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out,
                                out_stride);
    default:
      return DotTileAvx2Rows<4>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out,
                                out_stride);
  }
}

// n channels (a multiple of 8) of x[t] + offset sign-extended to int16, times the weights, with
// the products (exact in int16, see the header) widened into int32 accumulators.
BOARDLAB_TARGET_AVX2 inline __m256i WidenedProducts16(const int8_t* x, const int8_t* w,
                                                      __m256i off) {
  const __m256i xv = _mm256_add_epi16(
      _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x))), off);
  const __m256i wv = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  return _mm256_mullo_epi16(wv, xv);
}

// Depthwise taps, 32 channels per pass in four int32 registers, then 8 at a time; returns the
// number of channels done (a multiple of 8), the caller finishes the rest.
BOARDLAB_TARGET_AVX2 int32_t DepthwiseDotTapsAvx2(const int8_t* const* x, const int8_t* const* w,
                                                  int32_t taps, int32_t channels, int32_t offset,
                                                  int32_t* acc) {
  const __m256i off = _mm256_set1_epi16(static_cast<int16_t>(offset));
  int32_t c0 = 0;
  for (; c0 + 32 <= channels; c0 += 32) {
    __m256i a[4];
    for (int i = 0; i < 4; ++i) a[i] = _mm256_setzero_si256();
    for (int32_t t = 0; t < taps; ++t) {
      for (int h = 0; h < 2; ++h) {
        const __m256i pr = WidenedProducts16(x[t] + c0 + 16 * h, w[t] + c0 + 16 * h, off);
        const __m128i lo = _mm256_castsi256_si128(pr), hi = _mm256_extracti128_si256(pr, 1);
        a[2 * h] = _mm256_add_epi32(a[2 * h], _mm256_cvtepi16_epi32(lo));
        a[2 * h + 1] = _mm256_add_epi32(a[2 * h + 1], _mm256_cvtepi16_epi32(hi));
      }
    }
    for (int i = 0; i < 4; ++i) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + c0 + 8 * i), a[i]);
    }
  }
  const __m128i off8 = _mm_set1_epi16(static_cast<int16_t>(offset));
  for (; c0 + 8 <= channels; c0 += 8) {
    __m256i a = _mm256_setzero_si256();
    for (int32_t t = 0; t < taps; ++t) {
      const __m128i xv = _mm_add_epi16(
          _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x[t] + c0))), off8);
      const __m128i wv =
          _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w[t] + c0)));
      a = _mm256_add_epi32(a, _mm256_cvtepi16_epi32(_mm_mullo_epi16(wv, xv)));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + c0), a);
  }
  return c0;
}

#endif  // BOARDLAB_HAVE_AVX2_PATHS

#if defined(__ARM_FEATURE_DSP)

inline uint32_t Load32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // one LDR: Cortex-M33 allows unaligned word loads
  return v;
}

// SMLAD does two 16-bit multiply-accumulates: four weights (one word) become the pairs (w0, w2)
// and (w1, w3) through SXTB16 (and a ROR folded into it), so the inputs are paired the same way
// with PKHBT/PKHTB once per pixel and reused for every row of the tile.
template <int R, int P>
void DotTileImpl(const int8_t* w, ptrdiff_t row_stride, ptrdiff_t chunk_stride, const int16_t* x,
                 ptrdiff_t x_stride, int32_t k, int32_t* out, ptrdiff_t out_stride) {
  int32_t acc[R * P] = {};
  const int32_t quads = k / 4;
  for (int32_t q = 0; q < quads; ++q) {
    const ptrdiff_t w_off = (q / 2) * chunk_stride + (q % 2) * 4;
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
  for (int p = 0; p < P; ++p) {
    for (int r = 0; r < R; ++r) out[p * out_stride + r] = acc[p * R + r];
  }
}

#elif !defined(__SSE2__)

template <int R, int P>
void DotTileImpl(const int8_t* w, ptrdiff_t row_stride, ptrdiff_t chunk_stride, const int16_t* x,
                 ptrdiff_t x_stride, int32_t k, int32_t* out, ptrdiff_t out_stride) {
  int32_t acc[R * P] = {};
  const int32_t chunks = k / 8;
  for (int32_t j = 0; j < chunks; ++j) {
    for (int r = 0; r < R; ++r) {
      const int8_t* wr = w + r * row_stride + ptrdiff_t{j} * chunk_stride;
      for (int p = 0; p < P; ++p) {
        const int16_t* xp = x + p * x_stride + j * 8;
        int32_t s = 0;
        for (int i = 0; i < 8; ++i) s += wr[i] * xp[i];
        acc[p * R + r] += s;
      }
    }
  }
  for (int p = 0; p < P; ++p) {
    for (int r = 0; r < R; ++r) out[p * out_stride + r] = acc[p * R + r];
  }
  AddTail<R, P>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
}

#endif

template <int R>
void DotTileRows(const int8_t* w, ptrdiff_t row_stride, ptrdiff_t chunk_stride, const int16_t* x,
                 ptrdiff_t x_stride, int32_t pixels, int32_t k, int32_t* out,
                 ptrdiff_t out_stride) {
  switch (pixels) {
    case 1:
      return DotTileImpl<R, 1>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
    case 2:
      return DotTileImpl<R, 2>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
    case 3:
      return DotTileImpl<R, 3>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
    default:
      return DotTileImpl<R, 4>(w, row_stride, chunk_stride, x, x_stride, k, out, out_stride);
  }
}

}  // namespace

void DotTile(const int8_t* w, ptrdiff_t row_stride, ptrdiff_t chunk_stride, int32_t rows,
             const int16_t* x, ptrdiff_t x_stride, int32_t pixels, int32_t k, int32_t* out,
             ptrdiff_t out_stride) {
  static_assert(kDotMaxRows == 4 && kDotMaxPixels == 4, "the switches below cover 1..4");
#if BOARDLAB_HAVE_AVX2_PATHS
  if (UseAvx2()) {
    return DotTileAvx2(w, row_stride, chunk_stride, rows, x, x_stride, pixels, k, out, out_stride);
  }
#endif
  switch (rows) {
    case 1:
      return DotTileRows<1>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out, out_stride);
    case 2:
      return DotTileRows<2>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out, out_stride);
    case 3:
      return DotTileRows<3>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out, out_stride);
    default:
      return DotTileRows<4>(w, row_stride, chunk_stride, x, x_stride, pixels, k, out, out_stride);
  }
}

void DepthwiseDotTaps(const int8_t* const* x, const int8_t* const* w, int32_t taps,
                      int32_t channels, int32_t offset, int32_t* acc) {
  int32_t c0 = 0;
#if BOARDLAB_HAVE_AVX2_PATHS
  if (UseAvx2()) c0 = DepthwiseDotTapsAvx2(x, w, taps, channels, offset, acc);
#endif
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
    DotTile(w + r * 8, 8, 64, kDotMaxRows, x, 0, 1, n_blocks * 8, sums, kDotMaxRows);
    for (int32_t i = 0; i < kDotMaxRows; ++i) acc[r + i] += sums[i];
  }
}

}  // namespace boardlab::runtime::kernels
