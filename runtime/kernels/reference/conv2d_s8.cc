#include "runtime/kernels/reference/conv2d_s8.h"

#include <cstring>

#include "runtime/kernels/reference/dsp_ops.h"

#include "runtime/kernels/reference/int8_dot.h"
#include "runtime/kernels/reference/quantized_math.h"
#include "runtime/kernels/reference/requantize_s8.h"

namespace boardlab::runtime::kernels {
namespace {

Error CheckConv(const ConvParams& p, const ChannelQuant& q, const Dims4& in, const int8_t* input,
                const Dims4& f, const int8_t* filter, const Dims4& out, const int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && filter != nullptr && output != nullptr,
                           kInvalidArgument, "conv2d_s8: null tensor");
  RT_CHECK_OR_RETURN_ERROR(p.stride_h > 0 && p.stride_w > 0 && p.dilation_h > 0 && p.dilation_w > 0,
                           kInvalidArgument, "conv2d_s8: stride and dilation must be positive");
  RT_CHECK_OR_RETURN_ERROR(f.c > 0 && in.c % f.c == 0, kInvalidArgument,
                           "conv2d_s8: input channels %d not a multiple of filter channels %d",
                           static_cast<int>(in.c), static_cast<int>(f.c));
  const int32_t groups = in.c / f.c;
  RT_CHECK_OR_RETURN_ERROR(f.n == out.c && out.c % groups == 0 && in.n == out.n, kInvalidArgument,
                           "conv2d_s8: output channels %d vs filters %d", static_cast<int>(out.c),
                           static_cast<int>(f.n));
  RT_CHECK_OR_RETURN_ERROR(
      q.multiplier != nullptr && q.shift != nullptr && (q.count == 1 || q.count == out.c),
      kInvalidArgument, "conv2d_s8: %d multipliers for %d channels", static_cast<int>(q.count),
      static_cast<int>(out.c));
  RT_CHECK_OR_RETURN_ERROR(
      p.out.act_min <= p.out.act_max && p.out.act_min >= -128 && p.out.act_max <= 127,
      kInvalidArgument, "conv2d_s8: bad activation range");
  return Error::kOk;
}

// Patch length padded so that every pixel's widened patch starts 16-byte aligned.
int32_t PatchStride(const Dims4& f) { return (f.h * f.w * f.c + 7) / 8 * 8; }

// Scratch of Conv2DIm2Row: the widened patches, then one int32 accumulator per output channel
// and pixel (the patch stride is a multiple of 8, so the accumulators are 16-byte aligned).
size_t Im2RowBytes(const Dims4& input_dims, const Dims4& filter_dims) {
  if (filter_dims.c <= 0 || input_dims.c != filter_dims.c) return 0;
  return static_cast<size_t>(kConvTilePixels) *
         (static_cast<size_t>(PatchStride(filter_dims)) * sizeof(int16_t) +
          static_cast<size_t>(filter_dims.n) * sizeof(int32_t));
}

// The taps kx in [lo, hi) of a kernel row starting at input column x0 that fall inside the
// input's `width` columns.
struct TapRange {
  int32_t lo, hi;
};
inline TapRange TapsInside(int32_t x0, int32_t dilation, int32_t taps, int32_t width) {
  TapRange r{0, taps};
  while (r.lo < r.hi && x0 + r.lo * dilation < 0) ++r.lo;
  while (r.hi > r.lo && x0 + (r.hi - 1) * dilation >= width) --r.hi;
  return r;
}

// Widens output pixel (oy, ox)'s input patch into `row` (KH * KW * Cin int16, input offset
// added, zero for taps outside the input). The patch's channels are all the input's (ungrouped),
// so with dilation 1 a kernel row's taps inside the input are one contiguous run of the input:
// one widening pass per kernel row instead of one per tap (a few channels each in first layers).
template <void (*Widen)(const int8_t*, int32_t, int32_t, int16_t*)>
void FillRow(const ConvParams& p, const Dims4& in, const int8_t* in_b, const Dims4& f, int32_t oy,
             int32_t ox, int16_t* row) {
  const int32_t kc = f.c, span = f.w * kc, dw = p.dilation_w;
  const int32_t y0 = oy * p.stride_h - p.pad_top, x0 = ox * p.stride_w - p.pad_left;
  if (f.h == 1 && f.w == 1 && y0 >= 0 && y0 < in.h && x0 >= 0 && x0 < in.w) {
    Widen(in_b + (static_cast<int64_t>(y0) * in.w + x0) * in.c, kc, p.input_offset, row);
    return;
  }
  const TapRange inside = TapsInside(x0, dw, f.w, in.w);
  const int32_t kx0 = inside.lo, kx1 = inside.hi;
  for (int32_t ky = 0; ky < f.h; ++ky, row += span) {
    const int32_t y = y0 + ky * p.dilation_h;
    if (y < 0 || y >= in.h || kx0 == kx1) {
      for (int32_t i = 0; i < span; ++i) row[i] = 0;
      continue;
    }
    for (int32_t i = 0; i < kx0 * kc; ++i) row[i] = 0;
    const int8_t* src = in_b + (static_cast<int64_t>(y) * in.w + x0 + kx0 * dw) * in.c;
    if (dw == 1) {
      Widen(src, (kx1 - kx0) * kc, p.input_offset, row + kx0 * kc);
    } else {
      for (int32_t kx = kx0; kx < kx1; ++kx) {
        Widen(src + static_cast<int64_t>(kx - kx0) * dw * in.c, kc, p.input_offset, row + kx * kc);
      }
    }
    for (int32_t i = kx1 * kc; i < span; ++i) row[i] = 0;
  }
}

// Requantizes `pixels` consecutive output pixels' accumulators (bias not yet added); both the
// accumulators and the outputs are `channels` apart per pixel.
void RequantizePixels(const ConvParams& p, const ChannelQuant& q, const int32_t* bias,
                      const int32_t* acc, int32_t channels, int32_t pixels, int8_t* y) {
  const OutputStage& o = p.out;
  if (q.count == channels) {
    requantize_pixels_s8(acc, channels, bias, q.multiplier, q.shift, channels, pixels, o,
                         p.saturate_bias, y, channels);
    return;
  }
  for (int32_t c = 0; c < channels * pixels; ++c) {
    const int32_t b = bias != nullptr ? bias[c % channels] : 0;
    const int32_t a = MultiplyByQuantizedMultiplier(AddBias(acc[c], b, p.saturate_bias),
                                                    q.multiplier[0], q.shift[0]);
    y[c] = ClampToInt8(a + o.output_offset, o.act_min, o.act_max);
  }
}

// Ungrouped convolution as a GEMM over widened im2col rows: kConvTilePixels output pixels are
// widened into `rows` (PatchStride int16 each) and DotTiles computes every output channel of all
// of them in tiles of kConvTileRows channels, straight into the accumulators, so weights and
// inputs are each loaded once per tile.
void Conv2DIm2Row(const ConvParams& p, const ChannelQuant& q, const Dims4& in, const int8_t* input,
                  const Dims4& f, const int8_t* filter, const int32_t* bias, const Dims4& out,
                  int8_t* output, int16_t* rows, int32_t* acc, const int16_t* packed) {
  const int32_t k_len = f.h * f.w * f.c;
  const int32_t stride = PatchStride(f);
  const int32_t out_c = out.c, pixels = out.h * out.w;
  // With whole quads of channels every run FillRow widens starts at a multiple of 4 in the row
  // and spans whole quads, so widening and pairing take one pass.
  const bool paired_runs = kDotPairsQuads && f.c % 4 == 0;
  // The rows' padding up to the stride stays zero, so a tile may run the dot products over the
  // whole stride (no scalar tail): the weights read past a filter row's end are the next row's,
  // times zero. Only the last tile, whose next row does not exist, stops at k_len (and every
  // tile where DotTile pairs inputs: the quad across k_len is paired only up to k_len).
  for (int32_t i = 0; i < kConvTilePixels; ++i) {
    for (int32_t j = k_len; j < stride; ++j) rows[i * stride + j] = 0;
  }
  for (int32_t b = 0; b < out.n; ++b) {
    const int8_t* in_b = input + static_cast<int64_t>(b) * in.h * in.w * in.c;
    int8_t* out_b = output + static_cast<int64_t>(b) * pixels * out_c;
    for (int32_t px0 = 0; px0 < pixels; px0 += kConvTilePixels) {
      const int32_t np = pixels - px0 < kConvTilePixels ? pixels - px0 : kConvTilePixels;
      for (int32_t i = 0; i < np; ++i) {
        int16_t* row = rows + i * stride;
        if (paired_runs) {
          FillRow<WidenPairedForDot>(p, in, in_b, f, (px0 + i) / out.w, (px0 + i) % out.w, row);
        } else {
          FillRow<WidenWithOffset>(p, in, in_b, f, (px0 + i) / out.w, (px0 + i) % out.w, row);
          PairQuadsForDot(row, k_len);
        }
      }
      int8_t* out_px = out_b + static_cast<int64_t>(px0) * out_c;
      if (packed != nullptr) {
        DotTilesPacked(packed, out_c, k_len, rows, stride, np, acc, out_c);
      } else {
        DotTiles(filter, ptrdiff_t{8} * k_len, k_len, 8, out_c, rows, stride, np,
                 kDotPairsQuads ? k_len : stride, k_len, acc, out_c);
      }
      RequantizePixels(p, q, bias, acc, out_c, np, out_px);
    }
  }
}

// n bytes from src to dst, words first (unaligned word access is fine on Cortex-M33).
void CopyBytes(const int8_t* src, int32_t n, int8_t* dst) {
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) dsp::Store32(dst + i, static_cast<int32_t>(dsp::Load32(src + i)));
  for (; i < n; ++i) dst[i] = src[i];
}

void FillBytes(int8_t* dst, int32_t n, int8_t v) {
  for (int32_t i = 0; i < n; ++i) dst[i] = v;
}

// Output pixel (oy, ox)'s input patch as int8 (KH * KW * Cin, ungrouped), taps outside the input
// holding the input zero point `zp`. With dilation 1 a kernel row's taps inside the input are one
// contiguous run of the input (one copy per kernel row, as in FillRow).
void GatherPatch(const ConvParams& p, const Dims4& in, const int8_t* in_b, const Dims4& f,
                 int32_t oy, int32_t ox, int8_t zp, int8_t* patch) {
  const int32_t kc = f.c, span = f.w * kc, dw = p.dilation_w;
  const int32_t y0 = oy * p.stride_h - p.pad_top, x0 = ox * p.stride_w - p.pad_left;
  const TapRange inside = TapsInside(x0, dw, f.w, in.w);
  const int32_t kx0 = inside.lo, kx1 = inside.hi;
  for (int32_t ky = 0; ky < f.h; ++ky, patch += span) {
    const int32_t y = y0 + ky * p.dilation_h;
    if (y < 0 || y >= in.h || kx0 == kx1) {
      FillBytes(patch, span, zp);
      continue;
    }
    FillBytes(patch, kx0 * kc, zp);
    const int8_t* src = in_b + (static_cast<int64_t>(y) * in.w + x0 + kx0 * dw) * in.c;
    if (dw == 1) {
      CopyBytes(src, (kx1 - kx0) * kc, patch + kx0 * kc);
    } else {
      for (int32_t kx = kx0; kx < kx1; ++kx) {
        CopyBytes(src + static_cast<int64_t>(kx - kx0) * dw * in.c, kc, patch + kx * kc);
      }
    }
    FillBytes(patch + kx1 * kc, span - kx1 * kc, zp);
  }
}

// Widens a patch of `quads` int8 quads (input offset added, PairQuadsForDot's order) into one
// pixel's slots of DotRowsX4's interleaved inputs (quad q at out + 16q): SXTAB16 twice per quad.
void WidenInterleaved(const int8_t* patch, int32_t quads, int32_t offset, int16_t* out) {
  const uint32_t off = static_cast<uint16_t>(offset);
  const int32_t off2 = static_cast<int32_t>(off | (off << 16));
  for (int32_t q = 0; q < quads; ++q, patch += 4, out += 4 * kDotX4Pixels) {
    const uint32_t v = dsp::Load32(patch);
    dsp::Store32(out, dsp::Sxtab16(off2, v));
    dsp::Store32(out + 2, dsp::Sxtab16Ror8(off2, v));
  }
}

// Scratch of the four-pixel path (Cortex-M): byte offsets of its parts, all 8-byte aligned.
struct X4Scratch {
  int32_t quads = 0;   // patch length in quads, rounded up
  size_t row = 0;      // one int8 patch, padded to whole quads (int16[4 * quads] of room)
  size_t inputs = 0;   // four patches interleaved by quads, int16[16 * quads]
  size_t acc = 0;      // int32[Cout * 4]
  size_t requant = 0;  // RightShiftRequant[Cout]
  size_t fused = 0;    // X4RowRequant[Cout]
  size_t weights = 0;  // rows padded to whole quads (patch length not a multiple of 4)
  size_t total = 0;
};

X4Scratch LayoutX4(const Dims4& f) {
  X4Scratch l;
  const int32_t k_len = f.h * f.w * f.c;
  l.quads = (k_len + 3) / 4;
  const size_t quads = static_cast<size_t>(l.quads), rows = static_cast<size_t>(f.n);
  l.inputs = quads * 8;
  l.acc = l.inputs + quads * 32;
  l.requant = l.acc + rows * 16;
  l.fused = l.requant + rows * sizeof(RightShiftRequant);
  l.weights = l.fused + (rows * sizeof(X4RowRequant) + 7) / 8 * 8;
  l.total = l.weights + (k_len % 4 != 0 ? (rows * quads * 4 + 7) / 8 * 8 : 0);
  return l;
}

// The per-channel constants of the four-pixel path. A channel whose requantization does not fit
// RightShiftRequant (a tiny scale, shift below -23: vww has such channels) gets shift -1 and is
// requantized by the reference function. Returns whether every channel fits.
bool MakeRequantTable(const ChannelQuant& q, const OutputStage& o, int32_t channels,
                      RightShiftRequant* table) {
  const int32_t per_channel = q.count == 1 ? 0 : 1;
  bool all = true;
  for (int32_t c = 0; c < channels; ++c) {
    const int32_t i = c * per_channel;
    if (!MakeRightShiftRequant(q.multiplier[i], q.shift[i], o.output_offset, &table[c])) {
      table[c].shift = -1;
      all = false;
    }
  }
  return all;
}

// DotRowsX4Requant's per-channel constants; false if a channel does not fit.
bool MakeFusedTable(const ChannelQuant& q, const int32_t* bias, int32_t output_offset,
                    int32_t channels, bool fold_offset, X4RowRequant* fused) {
  for (int32_t c = 0; c < channels; ++c) {
    const int32_t i = q.count == 1 ? 0 : c;
    RightShiftRequant t;
    if (!MakeRightShiftRequant(q.multiplier[i], q.shift[i], output_offset, &t, fold_offset)) {
      return false;
    }
    fused[c] = {bias != nullptr ? bias[c] : 0, t.multiplier, t.round_lo, t.round_hi, t.shift};
  }
  return true;
}

// Requantizes DotRowsX4's sums (row r's four pixels at acc + 4r) into `np` output pixels,
// `y_stride` bytes apart. kFullRange: the activation range is all of int8 (one saturation).
// kMixed: some channels are marked for the reference function (checked once per channel).
template <bool kFullRange, bool kMixed, int32_t kPixels>
void RequantizeX4(const int32_t* acc, const int32_t* bias, const RightShiftRequant* table,
                  const ChannelQuant& q, int32_t rows, int32_t np, const OutputStage& o, int8_t* y,
                  int32_t y_stride) {
  const int32_t n = kPixels > 0 ? kPixels : np;
  const int32_t lo = kFullRange ? -128 : o.act_min, hi = kFullRange ? 127 : o.act_max;
  for (int32_t r = 0; r < rows; ++r, acc += kDotX4Pixels) {
    const uint32_t b = bias != nullptr ? static_cast<uint32_t>(bias[r]) : 0u;
    const RightShiftRequant t = table[r];
    if (kMixed && t.shift < 0) {
      const int32_t i = q.count == 1 ? 0 : r;
      for (int32_t p = 0; p < n; ++p) {
        const int32_t a = static_cast<int32_t>(static_cast<uint32_t>(acc[p]) + b);
        const int32_t v = MultiplyByQuantizedMultiplier(a, q.multiplier[i], q.shift[i]);
        y[p * y_stride + r] = ClampToInt8(v + o.output_offset, lo, hi);
      }
      continue;
    }
    for (int32_t i = 0; i < n; ++i) {
      const int32_t a = static_cast<int32_t>(static_cast<uint32_t>(acc[i]) + b);  // wraps
      const int32_t v = ApplyRightShiftRequant(a, t);
      y[i * y_stride + r] = kFullRange ? SaturateToInt8(v) : ClampToInt8(v, lo, hi);
    }
  }
}

template <bool kFullRange, bool kMixed>
void RequantizeX4Pixels(const int32_t* acc, const int32_t* bias, const RightShiftRequant* table,
                        const ChannelQuant& q, int32_t rows, int32_t np, const OutputStage& o,
                        int8_t* y) {
  if (np == kDotX4Pixels) {
    return RequantizeX4<kFullRange, kMixed, kDotX4Pixels>(acc, bias, table, q, rows, np, o, y,
                                                          rows);
  }
  RequantizeX4<kFullRange, kMixed, 0>(acc, bias, table, q, rows, np, o, y, rows);
}

// The four requantization variants, chosen once per call.
void RequantizeX4Any(bool full_range, bool mixed, const int32_t* acc, const int32_t* bias,
                     const RightShiftRequant* table, const ChannelQuant& q, int32_t rows,
                     int32_t np, const OutputStage& o, int8_t* y) {
  if (mixed) {
    return full_range ? RequantizeX4Pixels<true, true>(acc, bias, table, q, rows, np, o, y)
                      : RequantizeX4Pixels<false, true>(acc, bias, table, q, rows, np, o, y);
  }
  return full_range ? RequantizeX4Pixels<true, false>(acc, bias, table, q, rows, np, o, y)
                    : RequantizeX4Pixels<false, false>(acc, bias, table, q, rows, np, o, y);
}

// Ungrouped convolution on Cortex-M, four output pixels at a time: their patches are widened
// (input offset added, pair order) and interleaved by quads, DotRowsX4 sums every output channel
// of all four, and the sums are requantized with the folded constants of RightShiftRequant. The
// patch length is rounded up to whole quads: the inputs' padding is zero, the weights' comes from
// a padded copy when needed. Returns false (nothing written) where it does not apply.
bool Conv2DX4(const ConvParams& p, const ChannelQuant& q, const Dims4& in, const int8_t* input,
              const Dims4& f, const int8_t* filter, const int32_t* bias, const Dims4& out,
              int8_t* output, uint8_t* scratch) {
  const X4Scratch l = LayoutX4(f);
  auto* table = reinterpret_cast<RightShiftRequant*>(scratch + l.requant);
  if (p.saturate_bias) return false;
  const bool mixed = !MakeRequantTable(q, p.out, out.c, table);
  const int32_t k_len = f.h * f.w * f.c, k4 = l.quads * 4;
  const int8_t* w = filter;
  if (k_len != k4) {
    auto* padded = reinterpret_cast<int8_t*>(scratch + l.weights);
    for (int32_t r = 0; r < f.n; ++r) {
      for (int32_t i = 0; i < k4; ++i) padded[r * k4 + i] = i < k_len ? filter[r * k_len + i] : 0;
    }
    w = padded;
  }
  auto* patch = reinterpret_cast<int8_t*>(scratch + l.row);
  auto* x4 = reinterpret_cast<int16_t*>(scratch + l.inputs);
  auto* acc = reinterpret_cast<int32_t*>(scratch + l.acc);
  // The patch as int8, padded with the input zero point, which the widening turns into 0.
  const int8_t zp = static_cast<int8_t>(-p.input_offset);
  for (int32_t i = k_len; i < k4; ++i) patch[i] = zp;
  const bool full_range = p.out.act_min == -128 && p.out.act_max == 127;
  // Full groups of four pixels with no clamp besides int8's: the requantization runs inside the
  // dot-product kernel, with the output offset folded into the constants or, where a channel's
  // tiny scale does not allow that (vww), added to every result.
  auto* fused = reinterpret_cast<X4RowRequant*>(scratch + l.fused);
  const bool late_offset = mixed;
  const bool use_fused =
      full_range && MakeFusedTable(q, bias, p.out.output_offset, out.c, !late_offset, fused);
  const int32_t pixels = out.h * out.w;
  for (int32_t b = 0; b < out.n; ++b) {
    const int8_t* in_b = input + static_cast<int64_t>(b) * in.h * in.w * in.c;
    int8_t* out_b = output + static_cast<int64_t>(b) * pixels * out.c;
    for (int32_t px0 = 0; px0 < pixels; px0 += kDotX4Pixels) {
      const int32_t np = Min32(pixels - px0, kDotX4Pixels);
      for (int32_t i = 0; i < kDotX4Pixels; ++i) {
        if (i >= np) {
          for (int32_t j = 0; j < l.quads; ++j) {  // a last, partial group's unused slots
            std::memset(x4 + (j * kDotX4Pixels + i) * 4, 0, 4 * sizeof(int16_t));
          }
        } else {
          GatherPatch(p, in, in_b, f, (px0 + i) / out.w, (px0 + i) % out.w, zp, patch);
          WidenInterleaved(patch, l.quads, p.input_offset, x4 + i * 4);
        }
      }
      int8_t* y = out_b + static_cast<int64_t>(px0) * out.c;
      if (use_fused && np == kDotX4Pixels) {
        DotRowsX4Requant(w, x4, l.quads, out.c, fused, y, out.c, late_offset, p.out.output_offset);
        continue;
      }
      DotRowsX4(w, x4, l.quads, out.c, acc);
      RequantizeX4Any(full_range, mixed, acc, bias, table, q, out.c, np, p.out, y);
    }
  }
  return true;
}

}  // namespace

Error conv2d_s8(const ConvParams& p, const ChannelQuant& q, const Dims4& in, const int8_t* input,
                const Dims4& f, const int8_t* filter, const int32_t* bias, const Dims4& out,
                int8_t* output) {
  return conv2d_s8(p, q, in, input, f, filter, bias, out, output, nullptr, 0);
}

Error conv2d_s8(const ConvParams& p, const ChannelQuant& q, const Dims4& in, const int8_t* input,
                const Dims4& f, const int8_t* filter, const int32_t* bias, const Dims4& out,
                int8_t* output, void* scratch, size_t scratch_bytes) {
  RT_RETURN_IF_ERROR(CheckConv(p, q, in, input, f, filter, out, output));
  const size_t bytes = Im2RowBytes(in, f);
  // Any int8 zero point keeps input + offset within [-255, 255] (int16).
  const bool small_offset = p.input_offset >= -127 && p.input_offset <= 128;
  if (kDotPairsQuads && bytes > 0 && small_offset && scratch != nullptr &&
      scratch_bytes >= LayoutX4(f).total &&
      Conv2DX4(p, q, in, input, f, filter, bias, out, output, static_cast<uint8_t*>(scratch))) {
    return Error::kOk;
  }
  if (bytes > 0 && small_offset && scratch != nullptr && scratch_bytes >= bytes) {
    int16_t* rows = static_cast<int16_t*>(scratch);
    int32_t* acc = reinterpret_cast<int32_t*>(rows + kConvTilePixels * PatchStride(f));
    int16_t* packed = nullptr;
    const size_t packed_bytes = conv2d_s8_get_buffer_size_packed(in, f);
    if (packed_bytes > 0 && scratch_bytes >= packed_bytes) {
      packed = reinterpret_cast<int16_t*>(static_cast<uint8_t*>(scratch) + bytes);
      const int32_t k_len = f.h * f.w * f.c;
      PackRowsForDot(filter, ptrdiff_t{8} * k_len, k_len, 8, f.n, k_len, packed);
    }
    Conv2DIm2Row(p, q, in, input, f, filter, bias, out, output, rows, acc, packed);
    return Error::kOk;
  }
  const int32_t groups = in.c / f.c;
  const int32_t filters_per_group = out.c / groups;
  const int32_t kc = f.c;
  const int32_t input_offset = p.input_offset;
  const int32_t per_channel = q.count == 1 ? 0 : 1;
  for (int32_t b = 0; b < out.n; ++b) {
    const int8_t* in_b = input + static_cast<int64_t>(b) * in.h * in.w * in.c;
    for (int32_t oy = 0; oy < out.h; ++oy) {
      const int32_t y0 = oy * p.stride_h - p.pad_top;
      for (int32_t ox = 0; ox < out.w; ++ox) {
        const int32_t x0 = ox * p.stride_w - p.pad_left;
        int8_t* out_px = output + ((static_cast<int64_t>(b) * out.h + oy) * out.w + ox) * out.c;
        for (int32_t oc = 0; oc < out.c; ++oc) {
          const int32_t ic0 = (oc / filters_per_group) * kc;
          const int8_t* f_oc = filter + static_cast<int64_t>(oc) * f.h * f.w * kc;
          int32_t acc = 0;
          for (int32_t ky = 0; ky < f.h; ++ky) {
            const int32_t y = y0 + ky * p.dilation_h;
            if (y < 0 || y >= in.h) continue;
            for (int32_t kx = 0; kx < f.w; ++kx) {
              const int32_t x = x0 + kx * p.dilation_w;
              if (x < 0 || x >= in.w) continue;
              const int8_t* in_px = in_b + (static_cast<int64_t>(y) * in.w + x) * in.c + ic0;
              const int8_t* f_px = f_oc + (ky * f.w + kx) * kc;
              // Contiguous int32 dot product: the compiler vectorises this loop.
              for (int32_t ic = 0; ic < kc; ++ic) {
                acc += static_cast<int32_t>(f_px[ic]) *
                       (static_cast<int32_t>(in_px[ic]) + input_offset);
              }
            }
          }
          if (bias != nullptr) acc = AddBias(acc, bias[oc], p.saturate_bias);
          const int32_t qi = oc * per_channel;
          acc = MultiplyByQuantizedMultiplier(acc, q.multiplier[qi], q.shift[qi]);
          out_px[oc] = ClampToInt8(acc + p.out.output_offset, p.out.act_min, p.out.act_max);
        }
      }
    }
  }
  return Error::kOk;
}

Error conv2d_s8_prepacked(const ConvParams& p, const ChannelQuant& q, const Dims4& in,
                          const int8_t* input, const Dims4& f, const int16_t* packed,
                          const int32_t* bias, const Dims4& out, int8_t* output, void* scratch,
                          size_t scratch_bytes) {
  // CheckConv only tests the filter pointer for null: the packed rows stand in for it.
  RT_RETURN_IF_ERROR(
      CheckConv(p, q, in, input, f, reinterpret_cast<const int8_t*>(packed), out, output));
  const size_t bytes = conv2d_s8_get_buffer_size(in, f);
  RT_CHECK_OR_RETURN_ERROR(HavePackedDot() && bytes > 0 && scratch != nullptr &&
                               scratch_bytes >= bytes && p.input_offset >= -127 &&
                               p.input_offset <= 128,
                           kInvalidArgument, "conv2d_s8_prepacked: path not available");
  int16_t* rows = static_cast<int16_t*>(scratch);
  int32_t* acc = reinterpret_cast<int32_t*>(rows + kConvTilePixels * PatchStride(f));
  Conv2DIm2Row(p, q, in, input, f, nullptr, bias, out, output, rows, acc, packed);
  return Error::kOk;
}

size_t conv2d_s8_get_buffer_size(const Dims4& input_dims, const Dims4& filter_dims) {
  const size_t bytes = Im2RowBytes(input_dims, filter_dims);
  if (!kDotPairsQuads || bytes == 0) return bytes;
  const size_t x4 = LayoutX4(filter_dims).total;
  return x4 > bytes ? x4 : bytes;
}

size_t conv2d_s8_get_buffer_size_packed(const Dims4& input_dims, const Dims4& filter_dims) {
  const size_t bytes = Im2RowBytes(input_dims, filter_dims);
  if (bytes == 0 || !HavePackedDot()) return 0;
  return bytes + PackedRowsElements(filter_dims.n, filter_dims.h * filter_dims.w * filter_dims.c) *
                     sizeof(int16_t);
}

}  // namespace boardlab::runtime::kernels
