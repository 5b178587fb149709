#include "runtime/kernels/reference/depthwise_conv2d_s8.h"

#include "runtime/kernels/reference/dsp_ops.h"

#include "runtime/kernels/reference/int8_dot.h"
#include "runtime/kernels/reference/quantized_math.h"
#include "runtime/kernels/reference/requantize_s8.h"

namespace boardlab::runtime::kernels {
namespace {

// Filter taps gathered per output pixel for the register-blocked path (8x8 kernels and below).
constexpr int32_t kMaxTaps = 64;

// The valid taps of one output pixel for the register-blocked path: pointers to their input
// pixels and filter taps. Interior pixels (every tap inside the input; most of them) share one
// table of input offsets and the full filter, so gathering costs one add per tap instead of
// bounds checks and an address computation.
class TapGatherer {
 public:
  TapGatherer(const ConvParams& p, const Dims4& in, const Dims4& f, const int8_t* filter)
      : p_(p), in_(in), f_(f), filter_(filter) {
    if (static_cast<int64_t>(f.h) * f.w > kMaxTaps) return;  // not the register-blocked path
    for (int32_t ky = 0; ky < f.h; ++ky) {
      for (int32_t kx = 0; kx < f.w; ++kx, ++all_) {
        offset_[all_] = (static_cast<int64_t>(ky) * p.dilation_h * in.w + kx * p.dilation_w) * in.c;
        all_w_[all_] = filter + static_cast<int64_t>(all_) * f.c;
      }
    }
  }

  // Fills xs with the taps of the pixel whose first tap is (y0, x0) in batch in_b; *ws is set
  // to the matching filter taps. Returns their count.
  int32_t Gather(const int8_t* in_b, int32_t y0, int32_t x0, const int8_t** xs,
                 const int8_t* const** ws) {
    if (y0 >= 0 && x0 >= 0 && y0 + (f_.h - 1) * p_.dilation_h < in_.h &&
        x0 + (f_.w - 1) * p_.dilation_w < in_.w) {
      const int8_t* base = in_b + (static_cast<int64_t>(y0) * in_.w + x0) * in_.c;
      for (int32_t t = 0; t < all_; ++t) xs[t] = base + offset_[t];
      *ws = all_w_;
      return all_;
    }
    int32_t taps = 0;
    for (int32_t ky = 0; ky < f_.h; ++ky) {
      const int32_t y = y0 + ky * p_.dilation_h;
      if (y < 0 || y >= in_.h) continue;
      for (int32_t kx = 0; kx < f_.w; ++kx) {
        const int32_t x = x0 + kx * p_.dilation_w;
        if (x < 0 || x >= in_.w) continue;
        xs[taps] = in_b + (static_cast<int64_t>(y) * in_.w + x) * in_.c;
        border_w_[taps++] = filter_ + static_cast<int64_t>(ky * f_.w + kx) * f_.c;
      }
    }
    *ws = border_w_;
    return taps;
  }

 private:
  const ConvParams& p_;
  const Dims4& in_;
  const Dims4& f_;
  const int8_t* filter_;
  int32_t all_ = 0;
  int64_t offset_[kMaxTaps];
  const int8_t* all_w_[kMaxTaps];
  const int8_t* border_w_[kMaxTaps];
};

// The paired path (Cortex-M): SMLAD multiplies two horizontally adjacent taps of one channel at
// once. Each input row the outputs need is widened once into "pair rows" of one int32 word per
// (column, channel): (x[col][c] + offset, x[col + 1][c] + offset), zero outside the input; the
// filter into words (w[ky][2j][c], w[ky][2j + 1][c]) (zero past the kernel's width). An output's
// taps (ky, 2j) and (ky, 2j + 1) of four channels are then four words of a pair row times four
// filter words: four SMLADs, no repacking per output. The last KH pair rows are kept in a ring,
// so each input row is widened once (stride 1) however many output rows read it.
struct PairedScratch {
  int32_t pairs = 0;      // filter pairs per kernel row: ceil(KW / 2)
  int32_t row_words = 0;  // words per pair row: columns * channels
  // Byte offsets (the filter words at 0): RightShiftRequant per channel, QuadConstants per group
  // of four channels, one pair row of one group that stays zero (rows outside the input), the
  // ring of KH pair rows.
  size_t requant = 0, quads = 0, zero = 0, rows = 0, total = 0;
};

// A group of four channels' biases and RightShiftRequant constants as the 3x3 kernel loads them
// (one LDM for the biases, one per channel for multiplier, constant words and shift).
struct QuadConstants {
  int32_t bias[4];
  struct {
    int32_t multiplier;
    uint32_t round_lo;
    int32_t round_hi;
    int32_t shift;
  } ch[4];
};

PairedScratch LayoutPaired(const ConvParams& p, const Dims4& f, const Dims4& out) {
  PairedScratch l;
  l.pairs = (f.w + 1) / 2;
  // Columns from the leftmost tap of output 0 to the last pair's start of the last output.
  const int32_t columns = (out.w - 1) * p.stride_w + 2 * l.pairs - 1;
  l.row_words = columns * out.c;
  const size_t c = static_cast<size_t>(out.c);
  l.requant = static_cast<size_t>(f.h) * static_cast<size_t>(l.pairs) * c * 4;
  l.quads = l.requant + c * sizeof(RightShiftRequant);
  l.zero = l.quads + c / 4 * sizeof(QuadConstants);
  l.rows = l.zero + static_cast<size_t>(columns) * 16;
  l.total = l.rows + static_cast<size_t>(f.h) * static_cast<size_t>(l.row_words) * 4;
  return l;
}

bool PairedApplies(const DepthwiseConvParams& dp, const Dims4& f, const Dims4& out) {
  const ConvParams& p = dp.conv;
  return dp.depth_multiplier == 1 && out.c % 4 == 0 && p.dilation_w == 1 && p.dilation_h == 1 &&
         p.input_offset >= -127 && p.input_offset <= 128 && !p.saturate_bias && f.h <= 8 &&
         f.w <= 8;
}

void PairFilter(const Dims4& f, int32_t pairs, const int8_t* filter, int32_t* words) {
  const int32_t c = f.c;
  for (int32_t ky = 0; ky < f.h; ++ky) {
    for (int32_t j = 0; j < pairs; ++j) {
      const int8_t* w0 = filter + (ky * f.w + 2 * j) * c;
      for (int32_t i = 0; i < c; ++i) {
        const int32_t w1 = 2 * j + 1 < f.w ? w0[c + i] : 0;
        words[((i / 4 * f.h + ky) * pairs + j) * 4 + i % 4] = static_cast<int32_t>(
            (static_cast<uint32_t>(w0[i]) & 0xffffu) | (static_cast<uint32_t>(w1) << 16));
      }
    }
  }
}

// Writes one pair-row column of four channels from the widened (0, 2) / (1, 3) halves of a
// column and of the next.
inline void PutPairs(int32_t a02, int32_t a13, int32_t b02, int32_t b13, int32_t* o) {
  o[0] = dsp::PackLowHalves(a02, b02);
  o[1] = dsp::PackLowHalves(a13, b13);
  o[2] = dsp::PackHighHalves(a02, b02);
  o[3] = dsp::PackHighHalves(a13, b13);
}

// Widens input row `in_row` (w pixels of c channels) into a pair row of `columns` columns, column
// 0 being input column -pad_left. Channels four at a time: SXTAB16 widens and offsets a word's
// channels (0, 2) and (1, 3), PKHBT / PKHTB pair each with the next column's.
void PairRow(const int8_t* in_row, int32_t w, int32_t c, int32_t pad_left, int32_t columns,
             int32_t offset, int32_t* out) {
  const uint32_t off = static_cast<uint16_t>(offset);
  const int32_t off2 = static_cast<int32_t>(off | (off << 16));
  // Column col holds input columns x = col - pad_left and x + 1. For col in [begin, end) the
  // next one, x + 1, lies inside the input; elsewhere it pairs with zeros. The interior loop then
  // runs without bounds checks.
  const int32_t begin = Min32(Max32(pad_left - 1, 0), columns);
  const int32_t end = Max32(Min32(w + pad_left - 1, columns), begin);
  for (int32_t g = 0; g < c; g += 4) {
    int32_t* o = out + g * columns;
    int32_t a02 = 0, a13 = 0;  // column -pad_left's widened channels (zero outside the input)
    if (-pad_left >= 0 && -pad_left < w) {
      const uint32_t v = dsp::Load32(in_row + g);
      a02 = dsp::Sxtab16(off2, v);
      a13 = dsp::Sxtab16Ror8(off2, v);
    }
    int32_t col = 0;
    for (; col < begin; ++col, o += 4) {
      PutPairs(a02, a13, 0, 0, o);
      a02 = a13 = 0;
    }
    const int8_t* next = in_row + (col - pad_left + 1) * c + g;
    for (; col < end; ++col, o += 4, next += c) {
      const uint32_t v = dsp::Load32(next);
      const int32_t b02 = dsp::Sxtab16(off2, v), b13 = dsp::Sxtab16Ror8(off2, v);
      PutPairs(a02, a13, b02, b13, o);
      a02 = b02;
      a13 = b13;
    }
    for (; col < columns; ++col, o += 4) {
      PutPairs(a02, a13, 0, 0, o);
      a02 = a13 = 0;
    }
  }
}

// One output row of one group of four channels: rows[ky] is kernel row ky's pair row at the
// group's first column (null outside the input), wq the group's filter words, y the output row at
// the group's first channel. kRows / kPairs: the kernel's shape when known at compile time. The
// group's bias and requantization constants are loaded once per row, not once per pixel.
// A channel whose table entry has shift -1 (outside RightShiftRequant's range) is requantized by
// the reference function from `q` (kMixed: the group has one; `g` is its first channel).
template <int32_t kRows, int32_t kPairs, bool kFullRange, bool kMixed>
void PairedQuadRow(const int32_t* const* rows, const int32_t* wq, int32_t n_rows, int32_t n_pairs,
                   int32_t ow, int32_t stride, const int32_t* bias, const RightShiftRequant* table,
                   const ChannelQuant& q, int32_t g, const OutputStage& o, int32_t c, int8_t* y) {
  const int32_t kh = kRows > 0 ? kRows : n_rows, pairs = kPairs > 0 ? kPairs : n_pairs;
  const int32_t b0 = bias[0], b1 = bias[1], b2 = bias[2], b3 = bias[3];
  for (int32_t ox = 0; ox < ow; ++ox, y += c) {
    // Starting from the bias: the same int32 sum as adding it last (wrapping either way).
    int32_t a0 = b0, a1 = b1, a2 = b2, a3 = b3;
    const int32_t* w = wq;
    for (int32_t ky = 0; ky < kh; ++ky, w += 4 * pairs) {
      if (rows[ky] == nullptr) continue;
      const int32_t* x = rows[ky] + ox * stride * 4;
      for (int32_t j = 0; j < pairs; ++j) {
        a0 = dsp::Smlad(x[8 * j], w[4 * j], a0);
        a1 = dsp::Smlad(x[8 * j + 1], w[4 * j + 1], a1);
        a2 = dsp::Smlad(x[8 * j + 2], w[4 * j + 2], a2);
        a3 = dsp::Smlad(x[8 * j + 3], w[4 * j + 3], a3);
      }
    }
    const int32_t acc[4] = {a0, a1, a2, a3};
    for (int32_t i = 0; i < 4; ++i) {
      if (kMixed && table[i].shift < 0) {
        const int32_t k = q.count == 1 ? 0 : g + i;
        const int32_t v = MultiplyByQuantizedMultiplier(acc[i], q.multiplier[k], q.shift[k]);
        y[i] = ClampToInt8(v + o.output_offset, o.act_min, o.act_max);
        continue;
      }
      const int32_t v = ApplyRightShiftRequant(acc[i], table[i]);
      y[i] = kFullRange ? SaturateToInt8(v) : ClampToInt8(v, o.act_min, o.act_max);
    }
  }
}

#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)

// QuadRow3x3's loop, one output pixel per iteration (boardlab_dw_taps: four channels' two taps
// from the input words in r8-r11 and the next four filter words). Registers: lr, r2, r3 the three
// pair rows at the pixel's column, r12 the filter words (ascending through all 24), r4-r7 the sums
// (from the biases), r8-r11 a row's input words, r0-r1 two filter words; then, per channel, r1 and
// r8-r10 its constants, r11 the sign word, r0 the constants' pointer, r12 the output. Stack:
// [sp] the constants, [sp, #4] the filter, [sp, #8] the output pixel, [sp, #12] the output
// stride, [sp, #16] the column stride, [sp, #20] pixels left; arguments from [sp, #60].
extern "C" void boardlab_dw3x3_quad_row_m33(const int32_t* const* rows, const int32_t* wq,
                                            int32_t ow, int32_t column_stride_bytes,
                                            const QuadConstants* k, int8_t* y, int32_t y_stride);
__asm__(R"(
  .syntax unified
  .macro boardlab_dw_taps
  ldrd r0, r1, [r12], #8
  smlad r4, r8, r0, r4
  smlad r5, r9, r1, r5
  ldrd r0, r1, [r12], #8
  smlad r6, r10, r0, r6
  smlad r7, r11, r1, r7
  .endm
  .macro boardlab_dw_row ptr
  ldm \ptr, {r8-r11}
  boardlab_dw_taps
  ldrd r8, r9, [\ptr, #32]
  ldrd r10, r11, [\ptr, #40]
  boardlab_dw_taps
  .endm
  .macro boardlab_dw_requant acc, offset
  ldmia r0!, {r1, r8, r9, r10}
  asr r11, \acc, #31
  adds r8, r8, r11, lsl #31
  adc r9, r9, r11
  smlal r8, r9, \acc, r1
  asr r9, r9, r10
  ssat r9, #8, r9
  strb r9, [r12, #\offset]
  .endm

  .section .text.boardlab_dw3x3_quad_row_m33,"ax",%progbits
  .global boardlab_dw3x3_quad_row_m33
  .type boardlab_dw3x3_quad_row_m33, %function
  .thumb
  .thumb_func
  .p2align 2
boardlab_dw3x3_quad_row_m33:
  push {r4-r11, lr}
  sub sp, #24
  str r1, [sp, #4]
  str r2, [sp, #20]
  str r3, [sp, #16]
  ldr lr, [r0]
  ldr r2, [r0, #4]
  ldr r3, [r0, #8]
  ldr r0, [sp, #60]
  str r0, [sp]
  ldr r0, [sp, #64]
  str r0, [sp, #8]
  ldr r0, [sp, #68]
  str r0, [sp, #12]
.Lboardlab_dw_pixel:
  ldr r0, [sp]
  ldm r0, {r4-r7}
  ldr r12, [sp, #4]
  boardlab_dw_row lr
  boardlab_dw_row r2
  boardlab_dw_row r3
  ldr r0, [sp]
  adds r0, #16
  ldr r12, [sp, #8]
  boardlab_dw_requant r4, 0
  boardlab_dw_requant r5, 1
  boardlab_dw_requant r6, 2
  boardlab_dw_requant r7, 3
  ldr r1, [sp, #12]
  add r12, r1
  str r12, [sp, #8]
  ldr r1, [sp, #16]
  add lr, r1
  add r2, r1
  add r3, r1
  ldr r1, [sp, #20]
  subs r1, #1
  str r1, [sp, #20]
  bne .Lboardlab_dw_pixel
  add sp, #24
  pop {r4-r11, pc}
  .size boardlab_dw3x3_quad_row_m33, .-boardlab_dw3x3_quad_row_m33
)");

#endif

// One output row of a group of four channels for 3x3 kernels with int8's full activation range
// and every channel in RightShiftRequant's range: the 36 multiply-accumulates of a pixel as 18
// SMLADs with all operands loaded in pairs, the requantization with the constants in registers
// (assembly on Cortex-M; the same arithmetic in C++ elsewhere). rows: three pair rows (the zero
// row for rows outside the input) at the group's column 0.
void QuadRow3x3(const int32_t* const* rows, const int32_t* wq, int32_t ow, int32_t stride,
                const QuadConstants& k, int8_t* y, int32_t y_stride) {
#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
  boardlab_dw3x3_quad_row_m33(rows, wq, ow, stride * 16, &k, y, y_stride);
#else
  for (int32_t ox = 0; ox < ow; ++ox, y += y_stride) {
    for (int32_t i = 0; i < 4; ++i) {
      int32_t a = k.bias[i];
      for (int32_t ky = 0; ky < 3; ++ky) {
        const int32_t* x = rows[ky] + ox * stride * 4;
        a = dsp::Smlad(x[i], wq[ky * 8 + i], a);
        a = dsp::Smlad(x[8 + i], wq[ky * 8 + 4 + i], a);
      }
      RightShiftRequant q;
      q.multiplier = k.ch[i].multiplier;
      q.round_lo = k.ch[i].round_lo;
      q.round_hi = k.ch[i].round_hi;
      q.shift = k.ch[i].shift;
      y[i] = SaturateToInt8(ApplyRightShiftRequant(a, q));
    }
  }
#endif
}

template <bool kFullRange>
void PairedQuadRowAnyShape(const int32_t* const* rows, const int32_t* wq, int32_t kh, int32_t pairs,
                           int32_t ow, int32_t stride, const int32_t* bias,
                           const RightShiftRequant* table, const ChannelQuant& q, int32_t g,
                           const OutputStage& o, int32_t c, int8_t* y) {
  if (table[0].shift < 0 || table[1].shift < 0 || table[2].shift < 0 || table[3].shift < 0) {
    return PairedQuadRow<0, 0, kFullRange, true>(rows, wq, kh, pairs, ow, stride, bias, table, q, g,
                                                 o, c, y);
  }
  if (kh == 3 && pairs == 2) {
    return PairedQuadRow<3, 2, kFullRange, false>(rows, wq, kh, pairs, ow, stride, bias, table, q,
                                                  g, o, c, y);
  }
  PairedQuadRow<0, 0, kFullRange, false>(rows, wq, kh, pairs, ow, stride, bias, table, q, g, o, c,
                                         y);
}

// The paired path (returns true: channels outside RightShiftRequant's range take the reference
// requantization).
bool DepthwisePaired(const ConvParams& p, const ChannelQuant& q, const Dims4& in,
                     const int8_t* input, const Dims4& f, const int8_t* filter, const int32_t* bias,
                     const Dims4& out, int8_t* output, uint8_t* scratch) {
  const PairedScratch l = LayoutPaired(p, f, out);
  auto* table = reinterpret_cast<RightShiftRequant*>(scratch + l.requant);
  const int32_t per_channel = q.count == 1 ? 0 : 1;
  for (int32_t c = 0; c < out.c; ++c) {
    const int32_t i = c * per_channel;
    if (!MakeRightShiftRequant(q.multiplier[i], q.shift[i], p.out.output_offset, &table[c])) {
      table[c].shift = -1;  // the reference function for this channel
    }
  }
  auto* wp = reinterpret_cast<int32_t*>(scratch);
  PairFilter(f, l.pairs, filter, wp);
  auto* ring = reinterpret_cast<int32_t*>(scratch + l.rows);
  auto* zero = reinterpret_cast<int32_t*>(scratch + l.zero);
  auto* quads = reinterpret_cast<QuadConstants*>(scratch + l.quads);
  for (size_t i = 0; i < (l.rows - l.zero) / 4; ++i) zero[i] = 0;
  for (int32_t c = 0; c < out.c; ++c) {
    QuadConstants& k = quads[c / 4];
    k.bias[c % 4] = bias != nullptr ? bias[c] : 0;
    k.ch[c % 4] = {table[c].multiplier, table[c].round_lo, table[c].round_hi, table[c].shift};
  }
  const bool kernel3x3 = f.h == 3 && l.pairs == 2;
  const int32_t kh = f.h, c = out.c, columns = l.row_words / c;
  const bool full_range = p.out.act_min == -128 && p.out.act_max == 127;
  for (int32_t b = 0; b < out.n; ++b) {
    const int8_t* in_b = input + static_cast<int64_t>(b) * in.h * in.w * in.c;
    int32_t ring_row[8];  // the input row each ring slot holds (-1: none)
    for (int32_t i = 0; i < kh; ++i) ring_row[i] = -1;
    for (int32_t oy = 0; oy < out.h; ++oy) {
      const int32_t y0 = oy * p.stride_h - p.pad_top;
      const int32_t* rows[8];
      for (int32_t ky = 0; ky < kh; ++ky) {
        const int32_t y = y0 + ky;
        rows[ky] = nullptr;
        if (y < 0 || y >= in.h) continue;
        // kh consecutive rows fall in distinct slots.
        int32_t* slot = ring + static_cast<int64_t>(y % kh) * l.row_words;
        if (ring_row[y % kh] != y) {
          PairRow(in_b + static_cast<int64_t>(y) * in.w * c, in.w, c, p.pad_left, columns,
                  p.input_offset, slot);
          ring_row[y % kh] = y;
        }
        rows[ky] = slot;
      }
      int8_t* y_row = output + ((static_cast<int64_t>(b) * out.h + oy) * out.w) * c;
      for (int32_t g = 0; g < c; g += 4) {
        const int32_t* quad_rows[8];
        for (int32_t ky = 0; ky < kh; ++ky) {
          quad_rows[ky] = rows[ky] != nullptr ? rows[ky] + g * columns : nullptr;
        }
        const int32_t quad_bias[4] = {
            bias != nullptr ? bias[g] : 0, bias != nullptr ? bias[g + 1] : 0,
            bias != nullptr ? bias[g + 2] : 0, bias != nullptr ? bias[g + 3] : 0};
        const int32_t* wq = wp + g * kh * l.pairs;
        const RightShiftRequant* t = table + g;
        if (kernel3x3 && full_range && t[0].shift >= 0 && t[1].shift >= 0 && t[2].shift >= 0 &&
            t[3].shift >= 0) {
          for (int32_t ky = 0; ky < kh; ++ky) {
            if (quad_rows[ky] == nullptr) quad_rows[ky] = zero;
          }
          QuadRow3x3(quad_rows, wq, out.w, p.stride_w, quads[g / 4], y_row + g, c);
        } else if (full_range) {
          PairedQuadRowAnyShape<true>(quad_rows, wq, kh, l.pairs, out.w, p.stride_w, quad_bias,
                                      table + g, q, g, p.out, c, y_row + g);
        } else {
          PairedQuadRowAnyShape<false>(quad_rows, wq, kh, l.pairs, out.w, p.stride_w, quad_bias,
                                       table + g, q, g, p.out, c, y_row + g);
        }
      }
    }
  }
  return true;
}

}  // namespace

size_t depthwise_conv2d_s8_get_buffer_size(const Dims4& output_dims) {
  return static_cast<size_t>(output_dims.c) * sizeof(int32_t);
}

size_t depthwise_conv2d_s8_get_buffer_size_paired(const DepthwiseConvParams& params,
                                                  const Dims4& filter_dims,
                                                  const Dims4& output_dims) {
  if (!kDepthwisePaired || !PairedApplies(params, filter_dims, output_dims)) return 0;
  return LayoutPaired(params.conv, filter_dims, output_dims).total;
}

Error DepthwiseConv2DPairedForTest(const DepthwiseConvParams& params, const ChannelQuant& quant,
                                   const Dims4& input_dims, const int8_t* input,
                                   const Dims4& filter_dims, const int8_t* filter,
                                   const int32_t* bias, const Dims4& output_dims, int8_t* output,
                                   void* scratch, size_t scratch_bytes) {
  RT_CHECK_OR_RETURN_ERROR(
      PairedApplies(params, filter_dims, output_dims) && scratch != nullptr &&
          scratch_bytes >= LayoutPaired(params.conv, filter_dims, output_dims).total,
      kInvalidArgument, "depthwise paired path: not applicable or scratch too small");
  RT_CHECK_OR_RETURN_ERROR(
      DepthwisePaired(params.conv, quant, input_dims, input, filter_dims, filter, bias, output_dims,
                      output, static_cast<uint8_t*>(scratch)),
      kInvalidArgument, "depthwise paired path: requantization unsupported");
  return Error::kOk;
}

Error depthwise_conv2d_s8(const DepthwiseConvParams& dp, const ChannelQuant& q, const Dims4& in,
                          const int8_t* input, const Dims4& f, const int8_t* filter,
                          const int32_t* bias, const Dims4& out, int8_t* output, void* scratch,
                          size_t scratch_bytes) {
  const ConvParams& p = dp.conv;
  const int32_t m = dp.depth_multiplier;
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && filter != nullptr && output != nullptr,
                           kInvalidArgument, "depthwise_conv2d_s8: null tensor");
  RT_CHECK_OR_RETURN_ERROR(
      p.stride_h > 0 && p.stride_w > 0 && p.dilation_h > 0 && p.dilation_w > 0 && m > 0,
      kInvalidArgument, "depthwise_conv2d_s8: stride, dilation and multiplier must be > 0");
  RT_CHECK_OR_RETURN_ERROR(
      f.n == 1 && f.c == out.c && out.c == in.c * m && in.n == out.n, kInvalidArgument,
      "depthwise_conv2d_s8: channels in %d x %d, filter %d, out %d", static_cast<int>(in.c),
      static_cast<int>(m), static_cast<int>(f.c), static_cast<int>(out.c));
  RT_CHECK_OR_RETURN_ERROR(
      q.multiplier != nullptr && q.shift != nullptr && (q.count == 1 || q.count == out.c),
      kInvalidArgument, "depthwise_conv2d_s8: %d multipliers for %d channels",
      static_cast<int>(q.count), static_cast<int>(out.c));
  RT_CHECK_OR_RETURN_ERROR(
      scratch != nullptr && scratch_bytes >= depthwise_conv2d_s8_get_buffer_size(out),
      kInvalidArgument, "depthwise_conv2d_s8: scratch too small");
  if (kDepthwisePaired && PairedApplies(dp, f, out) &&
      scratch_bytes >= LayoutPaired(p, f, out).total &&
      DepthwisePaired(p, q, in, input, f, filter, bias, out, output,
                      static_cast<uint8_t*>(scratch))) {
    return Error::kOk;
  }
  int32_t* acc = static_cast<int32_t*>(scratch);
  const int32_t input_offset = p.input_offset;
  const int32_t per_channel = q.count == 1 ? 0 : 1;
  // True for every int8 zero point: input + offset then lies in [-255, 255].
  const bool small_offset = input_offset >= -127 && input_offset <= 128;
  // Local copies: the accumulator stores could otherwise alias the dimension structs, which
  // would keep the compiler from vectorising the channel loops.
  const int32_t out_c = out.c, in_c = in.c;
  TapGatherer gatherer(p, in, f, filter);
  for (int32_t b = 0; b < out.n; ++b) {
    const int8_t* in_b = input + static_cast<int64_t>(b) * in.h * in.w * in.c;
    for (int32_t oy = 0; oy < out.h; ++oy) {
      const int32_t y0 = oy * p.stride_h - p.pad_top;
      for (int32_t ox = 0; ox < out.w; ++ox) {
        const int32_t x0 = ox * p.stride_w - p.pad_left;
        if (m == 1 && small_offset && f.h * f.w <= kMaxTaps) {
          // Register-blocked path: collect the pixel's valid taps, then all channels at once
          // (the bias is added by the requantization below).
          const int8_t* xs[kMaxTaps];
          const int8_t* const* ws;
          const int32_t taps = gatherer.Gather(in_b, y0, x0, xs, &ws);
          DepthwiseDotTaps(xs, ws, taps, out_c, input_offset, acc);
        } else {
          for (int32_t oc = 0; oc < out_c; ++oc) acc[oc] = 0;
          for (int32_t ky = 0; ky < f.h; ++ky) {
            const int32_t y = y0 + ky * p.dilation_h;
            if (y < 0 || y >= in.h) continue;
            for (int32_t kx = 0; kx < f.w; ++kx) {
              const int32_t x = x0 + kx * p.dilation_w;
              if (x < 0 || x >= in.w) continue;
              const int8_t* in_px = in_b + (static_cast<int64_t>(y) * in.w + x) * in.c;
              const int8_t* f_px = filter + static_cast<int64_t>(ky * f.w + kx) * f.c;
              if (m == 1 && small_offset) {
                // |filter * (input + offset)| <= 128 * 255 fits int16: the products are formed
                // in 16 bits (twice the vector lanes) and only the sums widened to int32.
                const int16_t off = static_cast<int16_t>(input_offset);
                for (int32_t c = 0; c < out_c; ++c) {
                  const int16_t v = static_cast<int16_t>(static_cast<int16_t>(in_px[c]) + off);
                  acc[c] += static_cast<int16_t>(static_cast<int16_t>(f_px[c]) * v);
                }
              } else if (m == 1) {
                for (int32_t c = 0; c < out_c; ++c) {
                  acc[c] += static_cast<int32_t>(f_px[c]) *
                            (static_cast<int32_t>(in_px[c]) + input_offset);
                }
              } else {
                for (int32_t ic = 0; ic < in_c; ++ic) {
                  const int32_t v = static_cast<int32_t>(in_px[ic]) + input_offset;
                  const int8_t* f_ic = f_px + ic * m;
                  int32_t* acc_ic = acc + ic * m;
                  for (int32_t j = 0; j < m; ++j) acc_ic[j] += static_cast<int32_t>(f_ic[j]) * v;
                }
              }
            }
          }
        }
        int8_t* out_px = output + ((static_cast<int64_t>(b) * out.h + oy) * out.w + ox) * out.c;
        if (per_channel) {
          requantize_channels_s8(acc, bias, q.multiplier, q.shift, out_c, p.out, p.saturate_bias,
                                 out_px);
          continue;
        }
        for (int32_t oc = 0; oc < out_c; ++oc) {
          const int32_t qi = oc * per_channel;
          const int32_t a = bias == nullptr ? acc[oc] : AddBias(acc[oc], bias[oc], p.saturate_bias);
          const int32_t r = MultiplyByQuantizedMultiplier(a, q.multiplier[qi], q.shift[qi]);
          out_px[oc] = ClampToInt8(r + p.out.output_offset, p.out.act_min, p.out.act_max);
        }
      }
    }
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
