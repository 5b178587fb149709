#include "runtime/kernels/reference/int8_dot.h"

#include "runtime/kernels/reference/cpu_features.h"
#include "runtime/kernels/reference/requantize_s8.h"

#include <cstring>

#if BOARDLAB_HAVE_AVX2_PATHS
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>
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
  // GCC emits no VZEROUPPER before the tail call into AddTail's SSE code (compiled without
  // AVX); the dirty upper halves then slowed every SSE instruction after the tile.
  _mm256_zeroupper();
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

// Row r's weights in DotTiles' addressing (tiles never cross a group of 8 rows: 8 % R == 0).
inline const int8_t* RowAt(const int8_t* w, ptrdiff_t block_stride, ptrdiff_t row_stride,
                           int32_t r) {
  return w + (r / 8) * block_stride + (r % 8) * row_stride;
}

template <int P, bool kAdjacent>
BOARDLAB_TARGET_AVX2 void DotTilesAvx2Impl(const int8_t* w, ptrdiff_t block_stride,
                                           ptrdiff_t row_stride, ptrdiff_t chunk_stride,
                                           int32_t rows, const int16_t* x, ptrdiff_t x_stride,
                                           int32_t k, int32_t k_last, int32_t* out,
                                           ptrdiff_t out_stride) {
  int32_t r = 0;
  for (; r + 2 <= rows; r += 2) {
    DotTileAvx2Impl<2, P, kAdjacent>(RowAt(w, block_stride, row_stride, r), row_stride,
                                     chunk_stride, x, x_stride, r + 2 == rows ? k_last : k, out + r,
                                     out_stride);
  }
  if (r < rows) {
    DotTileAvx2Impl<1, P, kAdjacent>(RowAt(w, block_stride, row_stride, r), row_stride,
                                     chunk_stride, x, x_stride, k_last, out + r, out_stride);
  }
}

template <int P>
BOARDLAB_TARGET_AVX2 void DotTilesAvx2Layout(const int8_t* w, ptrdiff_t block_stride,
                                             ptrdiff_t row_stride, ptrdiff_t chunk_stride,
                                             int32_t rows, const int16_t* x, ptrdiff_t x_stride,
                                             int32_t k, int32_t k_last, int32_t* out,
                                             ptrdiff_t out_stride) {
  if (chunk_stride == 8) {
    return DotTilesAvx2Impl<P, true>(w, block_stride, row_stride, chunk_stride, rows, x, x_stride,
                                     k, k_last, out, out_stride);
  }
  DotTilesAvx2Impl<P, false>(w, block_stride, row_stride, chunk_stride, rows, x, x_stride, k,
                             k_last, out, out_stride);
}

BOARDLAB_TARGET_AVX2 void DotTilesAvx2(const int8_t* w, ptrdiff_t block_stride,
                                       ptrdiff_t row_stride, ptrdiff_t chunk_stride, int32_t rows,
                                       const int16_t* x, ptrdiff_t x_stride, int32_t pixels,
                                       int32_t k, int32_t k_last, int32_t* out,
                                       ptrdiff_t out_stride) {
  switch (pixels) {
    case 1:
      return DotTilesAvx2Layout<1>(w, block_stride, row_stride, chunk_stride, rows, x, x_stride, k,
                                   k_last, out, out_stride);
    case 2:
      return DotTilesAvx2Layout<2>(w, block_stride, row_stride, chunk_stride, rows, x, x_stride, k,
                                   k_last, out, out_stride);
    case 3:
      return DotTilesAvx2Layout<3>(w, block_stride, row_stride, chunk_stride, rows, x, x_stride, k,
                                   k_last, out, out_stride);
    default:
      return DotTilesAvx2Layout<4>(w, block_stride, row_stride, chunk_stride, rows, x, x_stride, k,
                                   k_last, out, out_stride);
  }
}

// DotTilesPacked's tile: P pixels x G groups of 8 channels. Per column pair, G weight loads and
// one broadcast per pixel feed P * G multiply-adds into accumulators that already hold whole
// channel sums.
template <int P, int G>
BOARDLAB_TARGET_AVX2 void PackedTileAvx2(const int16_t* wp, ptrdiff_t group_stride, int32_t pairs,
                                         const int16_t* x, ptrdiff_t x_stride, int32_t rows_left,
                                         int32_t* out, ptrdiff_t out_stride) {
  __m256i acc[P * G];
  for (int i = 0; i < P * G; ++i) acc[i] = _mm256_setzero_si256();
  for (int32_t j = 0; j < pairs; ++j) {
    __m256i wv[G];
    for (int g = 0; g < G; ++g) {
      wv[g] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wp + g * group_stride + j * 16));
    }
    for (int p = 0; p < P; ++p) {
      int32_t pair;
      std::memcpy(&pair, x + p * x_stride + 2 * j, 4);
      const __m256i xb = _mm256_set1_epi32(pair);
      for (int g = 0; g < G; ++g) {
        acc[p * G + g] = _mm256_add_epi32(acc[p * G + g], _mm256_madd_epi16(xb, wv[g]));
      }
    }
  }
  for (int g = 0; g < G; ++g) {
    const int32_t n = rows_left - 8 * g;
    for (int p = 0; p < P; ++p) {
      int32_t* o = out + p * out_stride + 8 * g;
      if (n >= 8) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(o), acc[p * G + g]);
      } else {
        int32_t lanes[8];
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), acc[p * G + g]);
        for (int32_t i = 0; i < n; ++i) o[i] = lanes[i];
      }
    }
  }
}

template <int P>
BOARDLAB_TARGET_AVX2 void DotTilesPackedAvx2Impl(const int16_t* packed, int32_t rows, int32_t k,
                                                 const int16_t* x, ptrdiff_t x_stride, int32_t* out,
                                                 ptrdiff_t out_stride) {
  const int32_t pairs = (k + 1) / 2;
  const ptrdiff_t group_stride = ptrdiff_t{pairs} * 16;
  int32_t r = 0;
  for (; r + 8 < rows; r += 16) {
    PackedTileAvx2<P, 2>(packed + (r / 8) * group_stride, group_stride, pairs, x, x_stride,
                         rows - r, out + r, out_stride);
  }
  if (r < rows) {
    PackedTileAvx2<P, 1>(packed + (r / 8) * group_stride, group_stride, pairs, x, x_stride,
                         rows - r, out + r, out_stride);
  }
}

BOARDLAB_TARGET_AVX2 void DotTilesPackedAvx2(const int16_t* packed, int32_t rows, int32_t k,
                                             const int16_t* x, ptrdiff_t x_stride, int32_t pixels,
                                             int32_t* out, ptrdiff_t out_stride) {
  switch (pixels) {
    case 1:
      return DotTilesPackedAvx2Impl<1>(packed, rows, k, x, x_stride, out, out_stride);
    case 2:
      return DotTilesPackedAvx2Impl<2>(packed, rows, k, x, x_stride, out, out_stride);
    case 3:
      return DotTilesPackedAvx2Impl<3>(packed, rows, k, x, x_stride, out, out_stride);
    default:
      return DotTilesPackedAvx2Impl<4>(packed, rows, k, x, x_stride, out, out_stride);
  }
}

// Eight whole rows by eight columns of PackRowsForDot: widened, then the rows' column pairs
// (int32 lanes) transposed 4x4 twice, so each pair's 8 rows land in one 32-byte run.
inline void PackBlock8x8(const int8_t* w, ptrdiff_t row_stride, int16_t* dst, ptrdiff_t pair_step) {
  __m128i v[8];
  for (int r = 0; r < 8; ++r) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(w + r * row_stride));
    v[r] = _mm_srai_epi16(_mm_unpacklo_epi8(b, b), 8);
  }
  for (int h = 0; h < 2; ++h) {
    const __m128i* q = v + 4 * h;
    const __m128i a = _mm_unpacklo_epi32(q[0], q[1]), b = _mm_unpackhi_epi32(q[0], q[1]);
    const __m128i c = _mm_unpacklo_epi32(q[2], q[3]), d = _mm_unpackhi_epi32(q[2], q[3]);
    const __m128i t[4] = {_mm_unpacklo_epi64(a, c), _mm_unpackhi_epi64(a, c),
                          _mm_unpacklo_epi64(b, d), _mm_unpackhi_epi64(b, d)};
    for (int j = 0; j < 4; ++j) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j * pair_step + 8 * h), t[j]);
    }
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

// SXTB16 with its operand rotated by 8: bytes 1 and 3 sign-extended into the two halves. Written
// out because GCC does not fold the rotate into the instruction (a separate ROR per word).
inline int32_t Sxtb16Ror8(uint32_t v) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
}

inline int32_t Sxtab16Ror8(int32_t acc, uint32_t v) {
  int32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(v));
  return r;
}

// SMLAD does two 16-bit multiply-accumulates: four weights (one word) become the pairs (w0, w2)
// and (w1, w3) through SXTB16, and the inputs already come in those pairs (PairQuadsForDot), so
// one chunk of 8 costs a row 2 loads and 4 extends and each pixel 2 double-word loads.
template <int R, int P>
void DotTileImpl(const int8_t* w, ptrdiff_t row_stride, ptrdiff_t chunk_stride, const int16_t* x,
                 ptrdiff_t x_stride, int32_t k, int32_t* out, ptrdiff_t out_stride) {
  int32_t acc[R * P] = {};
  const int32_t chunks = k / 8;
  const int8_t* wc = w;
  const int16_t* xc = x;
  for (int32_t j = 0; j < chunks; ++j, wc += chunk_stride, xc += 8) {
    for (int h = 0; h < 2; ++h) {
      int32_t x02[P], x13[P];
      for (int p = 0; p < P; ++p) {
        x02[p] = static_cast<int32_t>(Load32(xc + p * x_stride + 4 * h));
        x13[p] = static_cast<int32_t>(Load32(xc + p * x_stride + 4 * h + 2));
      }
      for (int r = 0; r < R; ++r) {
        const uint32_t wv = Load32(wc + r * row_stride + 4 * h);
        const int32_t w02 = __sxtb16(static_cast<int32_t>(wv)), w13 = Sxtb16Ror8(wv);
        for (int p = 0; p < P; ++p) {
          acc[p * R + r] = __smlad(w02, x02[p], acc[p * R + r]);
          acc[p * R + r] = __smlad(w13, x13[p], acc[p * R + r]);
        }
      }
    }
  }
  // The k % 8 rest: a paired quad if there is one, then at most 3 plain values (only plain
  // rows have them: NPU rows are padded to 8).
  int32_t done = chunks * 8;
  if (k - done >= 4) {
    for (int r = 0; r < R; ++r) {
      const uint32_t wv = Load32(wc + r * row_stride);
      const int32_t w02 = __sxtb16(static_cast<int32_t>(wv)), w13 = Sxtb16Ror8(wv);
      for (int p = 0; p < P; ++p) {
        const int16_t* xp = xc + p * x_stride;
        acc[p * R + r] = __smlad(w02, static_cast<int32_t>(Load32(xp)), acc[p * R + r]);
        acc[p * R + r] = __smlad(w13, static_cast<int32_t>(Load32(xp + 2)), acc[p * R + r]);
      }
    }
    done += 4;
    wc += 4;
    xc += 4;
  }
  for (int p = 0; p < P; ++p) {
    for (int r = 0; r < R; ++r) {
      for (int32_t i = 0; i < k - done; ++i) {
        acc[p * R + r] += wc[r * row_stride + i] * xc[p * x_stride + i];
      }
      out[p * out_stride + r] = acc[p * R + r];
    }
  }
}

// The CPU conv's tile (kConvTileRows x kConvTilePixels = 2 x 2, plain rows) written out in the
// shape of CMSIS-NN's arm_nn_mat_mult_kernel_s8_s16: four accumulators, four pointers that step
// with post-increment loads, and per group of four inputs two weight words, four SXTB16, four
// input words and eight SMLAD, all in registers (the generic template spills on a 32-bit core).
void DotTile2x2Plain(const int8_t* w, ptrdiff_t row_stride, const int16_t* x, ptrdiff_t x_stride,
                     int32_t k, int32_t* out, ptrdiff_t out_stride) {
  const int8_t* w0 = w;
  const int8_t* w1 = w + row_stride;
  const int16_t* x0 = x;
  const int16_t* x1 = x + x_stride;
  const int16_t* const x0_end = x + (k & ~3);
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;  // a<pixel><row>
  while (x0 != x0_end) {
    const uint32_t u0 = Load32(w0), u1 = Load32(w1);
    const int32_t p02 = static_cast<int32_t>(Load32(x0)),
                  p13 = static_cast<int32_t>(Load32(x0 + 2));
    const int32_t q02 = static_cast<int32_t>(Load32(x1)),
                  q13 = static_cast<int32_t>(Load32(x1 + 2));
    w0 += 4;
    w1 += 4;
    x0 += 4;
    x1 += 4;
    int32_t v = __sxtb16(static_cast<int32_t>(u0));
    a00 = __smlad(v, p02, a00);
    a10 = __smlad(v, q02, a10);
    v = Sxtb16Ror8(u0);
    a00 = __smlad(v, p13, a00);
    a10 = __smlad(v, q13, a10);
    v = __sxtb16(static_cast<int32_t>(u1));
    a01 = __smlad(v, p02, a01);
    a11 = __smlad(v, q02, a11);
    v = Sxtb16Ror8(u1);
    a01 = __smlad(v, p13, a01);
    a11 = __smlad(v, q13, a11);
  }
  for (int32_t i = 0; i < (k & 3); ++i) {
    a00 += w0[i] * x0[i];
    a01 += w1[i] * x0[i];
    a10 += w0[i] * x1[i];
    a11 += w1[i] * x1[i];
  }
  out[0] = a00;
  out[1] = a01;
  out[out_stride] = a10;
  out[out_stride + 1] = a11;
}

// The quad loop of both DotRowsX4 kernels (an assembler macro): four pixels' sums in r4-r7 over
// the weights at r0 (advanced) and the interleaved inputs from lr up to r2. With unroll 2 two
// quads per iteration (an even number of quads): one compare and branch less per two quads.
__asm__(R"(
  .syntax unified
  .macro boardlab_x4_quad_loop unroll=1
1:
  boardlab_x4_quad
  .if \unroll == 2
  boardlab_x4_quad
  .endif
  cmp lr, r2
  bne 1b
  .endm
  .macro boardlab_x4_quad
  ldr r3, [r0], #4
  ldmia lr!, {r8-r11}
  sxtb16 r12, r3
  sxtb16 r3, r3, ror #8
  smlad r4, r12, r8, r4
  smlad r4, r3, r9, r4
  smlad r5, r12, r10, r5
  smlad r5, r3, r11, r5
  ldmia lr!, {r8-r11}
  smlad r6, r12, r8, r6
  smlad r6, r3, r9, r6
  smlad r7, r12, r10, r7
  smlad r7, r3, r11, r7
  .endm
)");

// DotRowsX4's loop. Registers: r0 weights, r1 the inputs' start, r2 their end, r3 the weight word
// and its odd pair, r12 its even pair, r4-r7 the four pixels' sums, r8-r11 two pixels' input
// words, lr the input pointer; the row count and the output pointer live on the stack (touched
// once per row). 14 registers: no compiler keeps this without spilling, hence assembly.
extern "C" void boardlab_dot_rows_x4_m33(const int8_t* w, const int16_t* x, int32_t quads,
                                         int32_t rows, int32_t* acc);
__asm__(R"(
  .section .text.boardlab_dot_rows_x4_m33,"ax",%progbits
  .global boardlab_dot_rows_x4_m33
  .type boardlab_dot_rows_x4_m33, %function
  .syntax unified
  .thumb
  .thumb_func
  .p2align 2
boardlab_dot_rows_x4_m33:
  push {r4-r11, lr}
  ldr r12, [sp, #36]
  add r2, r1, r2, lsl #5
  push {r3, r12}
.Lboardlab_x4_row:
  movs r4, #0
  movs r5, #0
  movs r6, #0
  movs r7, #0
  mov lr, r1
  boardlab_x4_quad_loop
  ldr r3, [sp, #4]
  stmia r3!, {r4-r7}
  str r3, [sp, #4]
  ldr r3, [sp]
  subs r3, #1
  str r3, [sp]
  bne .Lboardlab_x4_row
  add sp, #8
  pop {r4-r11, pc}
  .size boardlab_dot_rows_x4_m33, .-boardlab_dot_rows_x4_m33
)");

// One sum (the macro's argument) requantized into r12: ApplyRightShiftRequant with the channel's
// multiplier, constant words and shift in r8-r11, plus r1 when `late` (an output offset not
// folded into the constant), then SSAT to int8. Clobbers r2, r3.
__asm__(R"(
  .macro boardlab_x4_requant acc, late
  asr r2, \acc, #31
  adds r3, r9, r2, lsl #31
  adc r12, r10, r2
  smlal r3, r12, \acc, r8
  asr r12, r12, r11
  .if \late
  add r12, r12, r1
  .endif
  ssat r12, #8, r12
  .endm
)");

// DotRowsX4Requant's loop, as a macro instantiated with and without the late offset: DotRowsX4's
// quad loop with the sums starting from the bias, then per channel the constants in r8-r11
// (multiplier, constant low / high word, shift) and the four outputs. Stack: [sp] the inputs'
// start, [sp, #4] their end, [sp, #8] rows left, [sp, #12] the output of the current channel,
// pixel 0, [sp, #16] the output stride, [sp, #20] the weights while r0 holds the stride,
// [sp, #24] the constants while r1 holds the late offset; arguments from [sp, #68].
extern "C" void boardlab_dot_rows_x4_requant_m33(const int8_t* w, const int16_t* x, int32_t quads,
                                                 int32_t rows, const X4RowRequant* table, int8_t* y,
                                                 int32_t y_stride, int32_t offset);
extern "C" void boardlab_dot_rows_x4_requant_late_m33(const int8_t* w, const int16_t* x,
                                                      int32_t quads, int32_t rows,
                                                      const X4RowRequant* table, int8_t* y,
                                                      int32_t y_stride, int32_t offset);
// The same two for an even number of quads, two per loop iteration.
extern "C" void boardlab_dot_rows_x4_requant_even_m33(const int8_t* w, const int16_t* x,
                                                      int32_t quads, int32_t rows,
                                                      const X4RowRequant* table, int8_t* y,
                                                      int32_t y_stride, int32_t offset);
extern "C" void boardlab_dot_rows_x4_requant_late_even_m33(const int8_t* w, const int16_t* x,
                                                           int32_t quads, int32_t rows,
                                                           const X4RowRequant* table, int8_t* y,
                                                           int32_t y_stride, int32_t offset);
__asm__(R"(
  .macro boardlab_x4_fused name, late, unroll
  .section .text.\name,"ax",%progbits
  .global \name
  .type \name, %function
  .syntax unified
  .thumb
  .thumb_func
  .p2align 2
\name:
  push {r4-r11, lr}
  sub sp, #32
  str r1, [sp]
  add r2, r1, r2, lsl #5
  str r2, [sp, #4]
  str r3, [sp, #8]
  ldr r1, [sp, #68]
  ldr r3, [sp, #72]
  str r3, [sp, #12]
  ldr r3, [sp, #76]
  str r3, [sp, #16]
  str r1, [sp, #24]
2:
  .if \late
  ldr r1, [sp, #24]
  .endif
  ldr r4, [r1], #4
  mov r5, r4
  mov r6, r4
  mov r7, r4
  ldr lr, [sp]
  ldr r2, [sp, #4]
  boardlab_x4_quad_loop \unroll
  str r0, [sp, #20]
  ldmia r1!, {r8-r11}
  .if \late
  str r1, [sp, #24]
  ldr r1, [sp, #80]
  .endif
  ldr r0, [sp, #16]
  ldr lr, [sp, #12]
  boardlab_x4_requant r4, \late
  strb r12, [lr]
  boardlab_x4_requant r5, \late
  strb r12, [lr, r0]
  add r4, lr, r0, lsl #1
  boardlab_x4_requant r6, \late
  strb r12, [r4]
  boardlab_x4_requant r7, \late
  strb r12, [r4, r0]
  add lr, lr, #1
  str lr, [sp, #12]
  ldr r0, [sp, #20]
  ldr r2, [sp, #8]
  subs r2, #1
  str r2, [sp, #8]
  bne 2b
  add sp, #32
  pop {r4-r11, pc}
  .size \name, .-\name
  .endm

  boardlab_x4_fused boardlab_dot_rows_x4_requant_m33, 0, 1
  boardlab_x4_fused boardlab_dot_rows_x4_requant_late_m33, 1, 1
  boardlab_x4_fused boardlab_dot_rows_x4_requant_even_m33, 0, 2
  boardlab_x4_fused boardlab_dot_rows_x4_requant_late_even_m33, 1, 2
)");

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
#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
  if (rows == 2 && pixels == 2 && chunk_stride == 8) {
    return DotTile2x2Plain(w, row_stride, x, x_stride, k, out, out_stride);
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

void DotRowsX4(const int8_t* w, const int16_t* x, int32_t quads, int32_t rows, int32_t* acc) {
#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
  boardlab_dot_rows_x4_m33(w, x, quads, rows, acc);
#else
  // Where quads are paired, value 4q + j sits at position kAt[j] of its quad.
  static constexpr int32_t kPaired[4] = {0, 2, 1, 3}, kPlain[4] = {0, 1, 2, 3};
  const int32_t* at = kDotPairsQuads ? kPaired : kPlain;
  for (int32_t r = 0; r < rows; ++r, w += 4 * quads) {
    for (int32_t p = 0; p < kDotX4Pixels; ++p) {
      int32_t s = 0;
      for (int32_t q = 0; q < quads; ++q) {
        for (int32_t j = 0; j < 4; ++j) s += w[4 * q + j] * x[(q * kDotX4Pixels + p) * 4 + at[j]];
      }
      acc[r * kDotX4Pixels + p] = s;
    }
  }
#endif
}

void DotRowsX4Requant(const int8_t* w, const int16_t* x, int32_t quads, int32_t rows,
                      const X4RowRequant* table, int8_t* y, int32_t y_stride, bool late_offset,
                      int32_t offset) {
#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
  using Kernel = void (*)(const int8_t*, const int16_t*, int32_t, int32_t, const X4RowRequant*,
                          int8_t*, int32_t, int32_t);
  static constexpr Kernel kKernels[2][2] = {
      {boardlab_dot_rows_x4_requant_m33, boardlab_dot_rows_x4_requant_late_m33},
      {boardlab_dot_rows_x4_requant_even_m33, boardlab_dot_rows_x4_requant_late_even_m33}};
  kKernels[quads % 2 == 0 ? 1 : 0][late_offset ? 1 : 0](w, x, quads, rows, table, y, y_stride,
                                                        offset);
#else
  for (int32_t r = 0; r < rows; ++r, w += 4 * quads) {
    int32_t acc[kDotX4Pixels];
    DotRowsX4(w, x, quads, 1, acc);
    const X4RowRequant& t = table[r];
    RightShiftRequant q;
    q.multiplier = t.multiplier;
    q.round_lo = t.round_lo;
    q.round_hi = t.round_hi;
    q.shift = t.shift;
    for (int32_t p = 0; p < kDotX4Pixels; ++p) {
      const int32_t a =
          static_cast<int32_t>(static_cast<uint32_t>(acc[p]) + static_cast<uint32_t>(t.bias));
      const int32_t v = ApplyRightShiftRequant(a, q);
      y[p * y_stride + r] = SaturateToInt8(late_offset ? v + offset : v);
    }
  }
#endif
}

bool HavePackedDot() {
#if BOARDLAB_HAVE_AVX2_PATHS
  return UseAvx2();
#else
  return false;
#endif
}

size_t PackedRowsElements(int32_t rows, int32_t k) {
  return static_cast<size_t>((rows + 7) / 8 * 8) * static_cast<size_t>((k + 1) / 2 * 2);
}

void PackRowsForDot(const int8_t* w, ptrdiff_t block_stride, ptrdiff_t row_stride,
                    ptrdiff_t chunk_stride, int32_t rows, int32_t k, int16_t* packed) {
  const int32_t pairs = (k + 1) / 2;
  const ptrdiff_t group_stride = ptrdiff_t{pairs} * 16;
  for (int32_t r0 = 0; r0 < rows; r0 += 8) {
    const int8_t* wg = w + (r0 / 8) * block_stride;
    int16_t* g = packed + (r0 / 8) * group_stride;
    int32_t c0 = 0;
#if BOARDLAB_HAVE_AVX2_PATHS
    if (r0 + 8 <= rows) {
      for (; c0 + 8 <= k; c0 += 8) {
        PackBlock8x8(wg + (c0 / 8) * chunk_stride, row_stride, g + c0 * 8, 16);
      }
    }
#endif
    for (int32_t i = c0; i < pairs * 2; ++i) {
      for (int32_t r = 0; r < 8; ++r) {
        const bool inside = r0 + r < rows && i < k;
        g[(i / 2) * 16 + r * 2 + i % 2] =
            inside ? wg[r * row_stride + (i / 8) * chunk_stride + i % 8] : 0;
      }
    }
  }
}

void DotTilesPacked(const int16_t* packed, int32_t rows, int32_t k, const int16_t* x,
                    ptrdiff_t x_stride, int32_t pixels, int32_t* out, ptrdiff_t out_stride) {
#if BOARDLAB_HAVE_AVX2_PATHS
  if (UseAvx2()) return DotTilesPackedAvx2(packed, rows, k, x, x_stride, pixels, out, out_stride);
#endif
  const int32_t pairs = (k + 1) / 2;
  for (int32_t p = 0; p < pixels; ++p) {
    for (int32_t r = 0; r < rows; ++r) {
      const int16_t* g = packed + (r / 8) * ptrdiff_t{pairs} * 16 + (r % 8) * 2;
      int32_t s = 0;
      for (int32_t i = 0; i < k; ++i) s += g[(i / 2) * 16 + i % 2] * x[p * x_stride + i];
      out[p * out_stride + r] = s;
    }
  }
}

void DotTiles(const int8_t* w, ptrdiff_t block_stride, ptrdiff_t row_stride, ptrdiff_t chunk_stride,
              int32_t rows, const int16_t* x, ptrdiff_t x_stride, int32_t pixels, int32_t k,
              int32_t k_last, int32_t* out, ptrdiff_t out_stride) {
  static_assert(8 % kConvTileRows == 0, "a tile must not cross a group of 8 rows");
#if BOARDLAB_HAVE_AVX2_PATHS
  if (UseAvx2()) {
    return DotTilesAvx2(w, block_stride, row_stride, chunk_stride, rows, x, x_stride, pixels, k,
                        k_last, out, out_stride);
  }
#endif
  for (int32_t r = 0; r < rows; r += kConvTileRows) {
    const int32_t n = rows - r < kConvTileRows ? rows - r : kConvTileRows;
    DotTile(w + (r / 8) * block_stride + (r % 8) * row_stride, row_stride, chunk_stride, n, x,
            x_stride, pixels, r + n == rows ? k_last : k, out + r, out_stride);
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
      const int32_t x13 = Sxtab16Ror8(off2, xv);
      const int32_t w02 = __sxtb16(static_cast<int32_t>(wv));
      const int32_t w13 = Sxtb16Ror8(wv);
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

#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
void WidenPairedForDot(const int8_t* x, int32_t n, int32_t offset, int16_t* out) {
  const uint32_t off = static_cast<uint16_t>(offset);
  const int32_t off2 = static_cast<int32_t>(off | (off << 16));
  for (int32_t i = 0; i < n; i += 4) {
    const uint32_t v = Load32(x + i);
    // (x0 + off, x2 + off) and (x1 + off, x3 + off): PairQuadsForDot's order.
    const int32_t x02 = __sxtab16(off2, static_cast<int32_t>(v));
    const int32_t x13 = Sxtab16Ror8(off2, v);
    std::memcpy(out + i, &x02, 4);
    std::memcpy(out + i + 2, &x13, 4);
  }
}

void PairQuadsForDot(int16_t* x, int32_t n) {
  for (int32_t i = 0; i + 4 <= n; i += 4) {
    const uint32_t x01 = Load32(x + i), x23 = Load32(x + i + 2);
    uint32_t x02, x13;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(x02) : "r"(x01), "r"(x23));
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(x13) : "r"(x23), "r"(x01));
    std::memcpy(x + i, &x02, 4);
    std::memcpy(x + i + 2, &x13, 4);
  }
}
#endif

void AccumulateBlocked8x8(const int8_t* w, int32_t n_blocks, const int16_t* x, int32_t* acc) {
  for (int32_t r = 0; r < 8; r += kDotMaxRows) {
    int32_t sums[kDotMaxRows];
    DotTile(w + r * 8, 8, 64, kDotMaxRows, x, 0, 1, n_blocks * 8, sums, kDotMaxRows);
    for (int32_t i = 0; i < kDotMaxRows; ++i) acc[r + i] += sums[i];
  }
}

}  // namespace boardlab::runtime::kernels
