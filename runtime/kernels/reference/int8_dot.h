#pragma once

// Inner loops shared by the int8 CONV_2D / FULLY_CONNECTED kernels (CPU and emulated NPU). The
// input side is widened once to int16 with the input offset already added ((x + offset) lies in
// [-255, 255]); the dot products then multiply int8 weights by those int16 values and accumulate
// in int32. Every sum is exact integer arithmetic, so the order of accumulation does not matter
// for bit-exactness.
//
// DotTile is the register-blocked micro-kernel: a tile of up to kDotMaxRows weight rows (output
// channels) times kDotMaxPixels input vectors (output pixels) is accumulated in registers, so
// each weight load serves several pixels and each input load several channels. The inner
// product is chosen at compile time: SSE2 pmaddwd on x86-64 (the baseline ISA, no -march
// needed), with AVX2 variants picked at run time (cpu_features.h), SMLAD/SXTB16 on Cortex-M
// with the DSP extension, plain C++ elsewhere. No heap.
//
// Usage (one output pixel group of `pixels` widened patches of k values, x_stride apart):
//   int32_t acc[kDotMaxPixels][kOutChannels];  // one output pixel's channels per row
//   DotTile(filter + oc * k, /*row_stride=*/k, /*chunk_stride=*/8, rows, x, x_stride, pixels,
//           k, &acc[0][oc], kOutChannels);  // acc[p][oc + r] = dot(filter row oc + r, x + p *
//           x_stride)

#include <cstddef>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace boardlab::runtime::kernels {

/// Largest tile DotTile computes at once.
inline constexpr int32_t kDotMaxRows = 4;
inline constexpr int32_t kDotMaxPixels = 4;

/// The tile shape the conv kernels use: balances weight and input loads per multiply on the
/// target (x86 has 16 vector registers; Cortex-M33 13 general-purpose ones).
#if defined(__ARM_FEATURE_DSP)
inline constexpr int32_t kConvTileRows = 2;
inline constexpr int32_t kConvTilePixels = 2;
#else
inline constexpr int32_t kConvTileRows = 2;
inline constexpr int32_t kConvTilePixels = 4;
#endif

/// out[i] = x[i] + offset for i < n (offset in int16; any int8 zero point).
inline void WidenWithOffset(const int8_t* x, int32_t n, int32_t offset, int16_t* out) {
  const int16_t off = static_cast<int16_t>(offset);
  int32_t i = 0;
#if defined(__SSE2__)
  // Written out: the patches are short (often 8 or 16 values), below the compiler's vector loop.
  // Each byte into the high half of a 16-bit lane, then an arithmetic shift: sign extension.
  const __m128i off8 = _mm_set1_epi16(off);
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm_add_epi16(_mm_srai_epi16(_mm_unpacklo_epi8(b, b), 8), off8));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 8),
                     _mm_add_epi16(_mm_srai_epi16(_mm_unpackhi_epi8(b, b), 8), off8));
  }
  if (i + 8 <= n) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm_add_epi16(_mm_srai_epi16(_mm_unpacklo_epi8(b, b), 8), off8));
    i += 8;
  }
#endif
  for (; i < n; ++i) out[i] = static_cast<int16_t>(static_cast<int16_t>(x[i]) + off);
}

/// True where DotTile reads its inputs in pairs (Cortex-M with the DSP extension).
#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
inline constexpr bool kDotPairsQuads = true;
#else
inline constexpr bool kDotPairsQuads = false;
#endif

/// Puts widened inputs into the order DotTile reads. With kDotPairsQuads every whole group of
/// four x[4q .. 4q + 3] becomes (x0, x2, x1, x3): SMLAD then multiplies them with the weight pairs
/// SXTB16 extracts, without repacking the inputs for every tile of output channels. The n % 4
/// values past the last group stay as they are. Elsewhere a no-op. Call it once on every widened
/// row, with n the k later passed to DotTile (or the whole padded row for blocked rows), before
/// DotTile reads the row. No alignment needed.
#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
void PairQuadsForDot(int16_t* x, int32_t n);
#else
inline void PairQuadsForDot(int16_t*, int32_t) {}
#endif

/// WidenWithOffset and PairQuadsForDot in one pass (SXTAB16 on Cortex-M: four values widened,
/// offset and put in pair order by two instructions), for n a multiple of 4. A row built from such
/// runs, each starting at a multiple of 4 in the row, equals the widened row after
/// PairQuadsForDot. Elsewhere the same as WidenWithOffset.
#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
void WidenPairedForDot(const int8_t* x, int32_t n, int32_t offset, int16_t* out);
#else
inline void WidenPairedForDot(const int8_t* x, int32_t n, int32_t offset, int16_t* out) {
  WidenWithOffset(x, n, offset, out);
}
#endif

/// Dot products of `rows` int8 weight rows with `pixels` int16 input vectors of length k:
///   out[p * out_stride + r] = sum_{i < k} W(r, i) * x[p * x_stride + i]
/// where W(r, i) = w[r * row_stride + (i / 8) * chunk_stride + i % 8], i.e. each row is read in
/// chunks of 8 consecutive weights, chunk_stride bytes apart (8 for a plain row-major matrix, 64
/// for the NPU's 8x8 blocks). rows in [1, kDotMaxRows], pixels in [1, kDotMaxPixels], k >= 0.
/// The chunks need no alignment. Each input vector must have gone through PairQuadsForDot.
void DotTile(const int8_t* w, ptrdiff_t row_stride, ptrdiff_t chunk_stride, int32_t rows,
             const int16_t* x, ptrdiff_t x_stride, int32_t pixels, int32_t k, int32_t* out,
             ptrdiff_t out_stride);

/// Every output channel of `pixels` input vectors, in tiles of kConvTileRows channels: one call
/// per pixel group, so the kernel choice and the call are paid once, not once per tile.
///   out[p * out_stride + r] = sum_{i < k_r} W(r, i) * x[p * x_stride + i]   for r < rows
/// where rows come in groups of 8, W(r, i) = w[(r / 8) * block_stride + (r % 8) * row_stride +
/// (i / 8) * chunk_stride + i % 8] (block_stride = 8 * row_stride for a plain matrix, the output
/// block's bytes for the NPU's 8x8 blocks), and k_r = k except in the tile holding the last row,
/// which uses k_last <= k. (Plain rows whose inputs are zero-padded up to k may let the dot
/// products run over the padding into the next row's weights, times zero; the last row has no
/// next row.) rows >= 1, pixels in [1, kDotMaxPixels]. Inputs as for DotTile.
void DotTiles(const int8_t* w, ptrdiff_t block_stride, ptrdiff_t row_stride, ptrdiff_t chunk_stride,
              int32_t rows, const int16_t* x, ptrdiff_t x_stride, int32_t pixels, int32_t k,
              int32_t k_last, int32_t* out, ptrdiff_t out_stride);

/// Pixels DotRowsX4 computes at once.
inline constexpr int32_t kDotX4Pixels = 4;

/// Every weight row times four input vectors, for the Cortex-M conv path. The rows hold 4 * quads
/// int8 weights each, one after the other; the four vectors are interleaved by quads:
/// x[(q * 4 + p) * 4 + j] is pixel p's value 4q + j, each quad in PairQuadsForDot's order.
///   acc[r * 4 + p] = sum_{i < 4 * quads} w[r * 4 * quads + i] * X(p, i)
/// rows >= 1, quads >= 1, no alignment needed. On Cortex-M with the DSP extension a hand-scheduled
/// loop: per quad one weight word (two SXTB16) serves four pixels, whose eight input words come in
/// two LDMs, so 16 multiply-accumulates cost 15 instructions. Elsewhere plain C++ (for tests).
void DotRowsX4(const int8_t* w, const int16_t* x, int32_t quads, int32_t rows, int32_t* acc);

/// One output channel's bias and RightShiftRequant constants (requantize_s8.h), as
/// DotRowsX4Requant reads them (one LDR and one LDM per channel).
struct X4RowRequant {
  int32_t bias = 0;
  int32_t multiplier = 0;
  uint32_t round_lo = 0;
  int32_t round_hi = 0;
  int32_t shift = 0;
};

/// DotRowsX4 with the requantization fused in, for outputs whose activation range is all of int8:
///   y[p * y_stride + r] = saturate_int8(ApplyRightShiftRequant(acc(r, p) + table[r].bias, ...))
/// for r < rows and all four pixels p. Saves storing and reloading the sums and keeps the
/// constants in registers for a channel's four outputs (small patches, e.g. 8 input channels,
/// spend as much on requantizing as on multiplying). Inputs as for DotRowsX4. With
/// `late_offset` the constants do not include the output offset (MakeRightShiftRequant with
/// fold_offset false) and `offset` is added after the shift, one instruction more per output.
void DotRowsX4Requant(const int8_t* w, const int16_t* x, int32_t quads, int32_t rows,
                      const X4RowRequant* table, int8_t* y, int32_t y_stride,
                      bool late_offset = false, int32_t offset = 0);

/// True where DotTilesPacked has a fast kernel (x86-64 with AVX2 at run time); elsewhere the
/// packed functions below are plain loops, there for tests, and callers keep DotTiles.
bool HavePackedDot();

/// int16 elements PackRowsForDot writes: rows rounded up to 8 times k rounded up to 2.
size_t PackedRowsElements(int32_t rows, int32_t k);

/// Widens `rows` int8 rows of k weights, addressed as in DotTiles (W(r, i) = w[(r / 8) *
/// block_stride + (r % 8) * row_stride + (i / 8) * chunk_stride + i % 8]), into DotTilesPacked's
/// layout: groups of 8 rows, each group ceil(k / 2) column pairs, each pair the 8 rows' two
/// weights as int16 (32 bytes), so that one multiply-add of a broadcast input pair gives partial
/// sums of 8 output channels at once (no horizontal sums). Rows past `rows` and the column past
/// an odd k are zero. No alignment needed.
void PackRowsForDot(const int8_t* w, ptrdiff_t block_stride, ptrdiff_t row_stride,
                    ptrdiff_t chunk_stride, int32_t rows, int32_t k, int16_t* packed);

/// DotTiles on packed rows: out[p * out_stride + r] = sum_{i < k} W(r, i) * x[p * x_stride + i]
/// for r < rows, p < pixels (pixels in [1, kDotMaxPixels]). x[p * x_stride + k] must be readable
/// when k is odd (it meets a zero weight).
void DotTilesPacked(const int16_t* packed, int32_t rows, int32_t k, const int16_t* x,
                    ptrdiff_t x_stride, int32_t pixels, int32_t* out, ptrdiff_t out_stride);

/// Depthwise taps of one output pixel, channel-innermost: for c < channels,
///   acc[c] = sum_{t < taps} w[t][c] * (x[t][c] + offset)
/// with offset in [-127, 128] (so every product fits int16; any int8 zero point qualifies).
/// Channels are processed in register-resident chunks, all taps per chunk, so the accumulators
/// are stored once per pixel instead of once per tap.
void DepthwiseDotTaps(const int8_t* const* x, const int8_t* const* w, int32_t taps,
                      int32_t channels, int32_t offset, int32_t* acc);

/// The NPU's 8x8 weight blocking: `w` holds n_blocks consecutive 64-byte blocks of 8 rows
/// (output channels) x 8 columns (inputs); x holds the matching 8 inputs per block. Adds the 8
/// row sums to acc[0..7] (used for patches too long for one DotTile segment).
void AccumulateBlocked8x8(const int8_t* w, int32_t n_blocks, const int16_t* x, int32_t* acc);

}  // namespace boardlab::runtime::kernels
