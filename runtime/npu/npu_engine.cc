#include "runtime/npu/npu_engine.h"

#include <cmath>
#include <cstring>

#include "runtime/kernels/reference/add_s8.h"
#include "runtime/kernels/reference/conv2d_s8.h"
#include "runtime/kernels/reference/data_movement_s8.h"
#include "runtime/kernels/reference/depthwise_conv2d_s8.h"
#include "runtime/kernels/reference/int8_dot.h"
#include "runtime/kernels/reference/mean_s8.h"
#include "runtime/kernels/reference/requantize_s8.h"
#include "runtime/kernels/reference/softmax_s8.h"
#include "runtime/npu/npu_fixed_point.h"

// Each kernel is written as the TFLite Micro int8 reference loop it must equal bit for bit; only
// the operand addressing differs (weights in the NPU block layout, tensors resolved from the
// payload). Index arithmetic is int64 because the verifier bounds tensor sizes but not products
// of arbitrary coordinates.

namespace boardlab::runtime::npu {
namespace {

namespace fb = ::boardlab::npu;

// A payload tensor resolved to memory for one kernel.
struct View {
  uint8_t* data = nullptr;
  int32_t rank = 0;
  int32_t dims[kMaxRank] = {};
  int64_t elements = 1;
  fb::ElementType type = fb::ElementType::Int8;
  float scale = 0;
  int32_t zero_point = 0;

  int8_t* s8() const { return reinterpret_cast<int8_t*>(data); }
  int32_t Dim(int i) const { return dims[i < 0 ? i + rank : i]; }
};

int32_t Clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Reads a little-endian integer constant element (int32 or int64 index tensors).
int64_t ReadIndex(const View& v, int64_t i) {
  if (v.type == fb::ElementType::Int64) {
    int64_t x;
    std::memcpy(&x, v.data + i * 8, 8);
    return x;
  }
  int32_t x;
  std::memcpy(&x, v.data + i * 4, 4);
  return x;
}

// The kernel being run, with its operands resolved.
struct Ctx {
  const NpuPayload& payload;
  const NpuExecEnv& env;
  const fb::NpuKernel& k;
  // Base of the kernel's constants: the weight section, or the slot shifted so that
  // weight-section offsets index it directly.
  const uint8_t* constants_base;

  View Tensor(int index) const {
    View v;
    if (index < 0) return v;
    const fb::Tensor& t = *payload.program->tensors()->Get(static_cast<uint32_t>(index));
    v.type = t.type();
    v.scale = t.scale();
    v.zero_point = t.zero_point();
    v.rank = static_cast<int32_t>(t.shape()->size());
    for (int32_t i = 0; i < v.rank; ++i) {
      v.dims[i] = t.shape()->Get(static_cast<uint32_t>(i));
      v.elements *= v.dims[i];
    }
    switch (t.kind()) {
      case fb::TensorKind::Input:
      case fb::TensorKind::Output:
        v.data = static_cast<uint8_t*>(env.args[static_cast<size_t>(t.arg_index())]->data);
        break;
      case fb::TensorKind::Intermediate:
        v.data = env.arena + t.arena_offset();
        break;
      case fb::TensorKind::Constant:
        v.data = const_cast<uint8_t*>(constants_base + t.weights_offset());
        break;
    }
    return v;
  }
  View In(uint32_t i) const { return i < k.inputs()->size() ? Tensor(k.inputs()->Get(i)) : View{}; }
  View Out() const { return Tensor(k.outputs()->Get(0)); }
  const int8_t* Weights() const {
    return reinterpret_cast<const int8_t*>(constants_base + k.weights()->offset());
  }
  int32_t Bias(int32_t c) const {
    int32_t b;
    std::memcpy(&b, constants_base + k.bias()->offset() + 4 * static_cast<size_t>(c), 4);
    return b;
  }
  // acc + bias, saturated: a hostile payload's bias must not overflow (TFLite Micro would).
  int32_t AddBias(int32_t acc, int32_t c) const {
    const int64_t sum = int64_t{acc} + Bias(c);
    return static_cast<int32_t>(sum < INT32_MIN ? INT32_MIN : sum > INT32_MAX ? INT32_MAX : sum);
  }
  int32_t Mult(uint32_t i) const { return k.output_multipliers()->Get(i); }
  int32_t Shift(uint32_t i) const { return k.output_shifts()->Get(i); }
  int32_t Requant(int32_t acc, uint32_t channel) const {
    const int32_t v = fp::MultiplyByQuantizedMultiplier(acc, Mult(channel), Shift(channel)) +
                      k.output_zero_point();
    return Clamp(v, k.activation_min(), k.activation_max());
  }
};

// ---- Conv-like ---------------------------------------------------------------------------------

// The fast paths below assume the documented 8x8 weight blocking (artifact-format.md 3.3); other
// blockings (the verifier allows 1..64) take the straightforward *Generic loops further down.
// Both compute the same int32 sums in the same order per output element up to reassociation of
// integer additions, which is exact.
constexpr int32_t kBlock = 8;
constexpr int32_t kBlockBytes = kBlock * kBlock;
// Output channels accumulated at once: the input block is widened once and used for all of them.
constexpr int32_t kChunkBlocks = 8;
constexpr int32_t kChunk = kChunkBlocks * kBlock;

// Input blocks of the widened patch kept on the stack at once (2 KB); longer patches are
// processed in segments.
constexpr int32_t kRowBlocks = 128;

// True when (x + offset) fits the int16 dot products for every int8 x (any int8 zero point).
bool SmallOffset(int32_t offset) { return offset >= -127 && offset <= 128; }

// Widens blocks [t0, t1) of one output pixel's input patch into row[0 .. (t1 - t0) * 8): block t
// is input block t % in_blocks of tap t / in_blocks (taps row-major over ky, kx), each value
// input + offset; taps outside the input and channels past in_c are zero, matching the zero
// weights of the padding and the skipped taps of the reference loop. The row is left in
// DotTile's input order (PairQuadsForDot).
void FillPatch(const int8_t* in_b, int32_t in_h, int32_t in_w, int32_t in_c, int32_t in_blocks,
               int32_t kw, int32_t y0, int32_t x0, int32_t dh, int32_t dw, int32_t offset,
               int32_t t0, int32_t t1, int16_t* row) {
  if (t0 == 0 && t1 % (in_blocks * kw) == 0) {
    // Whole kernel rows (every patch of the tiled conv): tap by tap, no index divisions.
    const int32_t width = in_blocks * kBlock;
    int16_t* r = row;
    for (int32_t ky = 0; ky < t1 / (in_blocks * kw); ++ky) {
      const int32_t y = y0 + ky * dh;
      for (int32_t kx = 0, x = x0; kx < kw; ++kx, x += dw, r += width) {
        int32_t valid = 0;
        if (y >= 0 && y < in_h && x >= 0 && x < in_w) {
          valid = in_c;
          kernels::WidenWithOffset(in_b + (int64_t{y} * in_w + x) * in_c, in_c, offset, r);
        }
        for (int32_t i = valid; i < width; ++i) r[i] = 0;
      }
    }
    kernels::PairQuadsForDot(row, t1 * kBlock);
    return;
  }
  int32_t t = t0;
  while (t < t1) {
    const int32_t tap = t / in_blocks, ib0 = t % in_blocks;
    const int32_t ib1 = in_blocks < ib0 + (t1 - t) ? in_blocks : ib0 + (t1 - t);
    const int32_t y = y0 + (tap / kw) * dh, x = x0 + (tap % kw) * dw;
    const int32_t c0 = ib0 * kBlock, c1 = ib1 * kBlock;
    int16_t* r = row + (t - t0) * kBlock;
    int32_t valid = 0;
    if (y >= 0 && y < in_h && x >= 0 && x < in_w && c0 < in_c) {
      valid = (in_c < c1 ? in_c : c1) - c0;
      kernels::WidenWithOffset(in_b + (int64_t{y} * in_w + x) * in_c + c0, valid, offset, r);
    }
    for (int32_t i = valid; i < c1 - c0; ++i) r[i] = 0;
    t += ib1 - ib0;
  }
  kernels::PairQuadsForDot(row, (t1 - t0) * kBlock);
}

// Per-output-channel epilogue parameters (bias, multiplier, shift) copied out of the payload into
// bounded stack arrays so the requantization loop does not go through the flatbuffers accessors
// per element. A kernel with at most kCachedChannels output channels loads them once per
// invocation; wider kernels reload a window of up to kCachedChannels whenever a stored chunk
// falls outside the current one.
constexpr int32_t kCachedChannels = 512;

class ChannelParams {
 public:
  ChannelParams(const Ctx& c, int32_t channels) : c_(c), channels_(channels) {}

  // Requantizes acc[0..n) for output channels oc0.. and stores them at out.
  void Store(const int32_t* acc, int32_t oc0, int32_t n, int8_t* out) {
    StorePixels(acc, 0, oc0, n, 1, out, 0);
  }

  // Store for `pixels` pixels, pixel p's accumulators at acc + p * acc_stride and its outputs at
  // out + p * out_stride.
  void StorePixels(const int32_t* acc, ptrdiff_t acc_stride, int32_t oc0, int32_t n, int32_t pixels,
                   int8_t* out, ptrdiff_t out_stride) {
    if (oc0 < base_ || oc0 + n > base_ + count_) {
      // Loaded lazily (nothing is read for a kernel that stores nothing), as wide as fits.
      const int32_t rest = channels_ - oc0 > n ? channels_ - oc0 : n;
      Load(oc0, rest < kCachedChannels ? rest : kCachedChannels);
    }
    const fb::NpuKernel& k = c_.k;
    kernels::OutputStage stage;
    stage.output_offset = k.output_zero_point();
    stage.act_min = k.activation_min();
    stage.act_max = k.activation_max();
    const int32_t i0 = oc0 - base_;
    // acc + bias saturates exactly as Ctx::AddBias.
    kernels::requantize_pixels_s8(acc, acc_stride, bias_ + i0, mult_ + i0, shift_ + i0, n, pixels,
                                  stage, /*saturate_bias=*/true, out, out_stride);
  }

 private:
  void Load(int32_t oc0, int32_t n) {
    const fb::NpuKernel& k = c_.k;
    const auto* mult = k.output_multipliers();
    const auto* shift = k.output_shifts();
    std::memcpy(bias_, c_.constants_base + k.bias()->offset() + 4 * static_cast<size_t>(oc0),
                4 * static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) {
      const uint32_t oc = static_cast<uint32_t>(oc0 + i);
      mult_[i] = mult->Get(oc);
      shift_[i] = shift->Get(oc);
    }
    base_ = oc0;
    count_ = n;
  }

  const Ctx& c_;
  const int32_t channels_;
  int32_t base_ = 0, count_ = 0;
  int32_t bias_[kCachedChannels];
  int32_t mult_[kCachedChannels];
  int32_t shift_[kCachedChannels];
};
static_assert(kChunk <= kCachedChannels, "a stored chunk must fit the parameter window");

void Conv2DGeneric(const Ctx& c) {
  const View in = c.In(0), out = c.Out();
  const fb::Geometry& g = *c.k.geometry();
  const int32_t batches = in.dims[0], in_h = in.dims[1], in_w = in.dims[2], in_c = in.dims[3];
  const int32_t out_h = out.dims[1], out_w = out.dims[2], out_c = out.dims[3];
  const int32_t bo = c.payload.program->weight_block_out();
  const int32_t bi = c.payload.program->weight_block_in();
  const int32_t in_blocks = (in_c + bi - 1) / bi;
  const int32_t input_offset = -c.k.input_zero_point();
  const int8_t* w = c.Weights();
  for (int32_t b = 0; b < batches; ++b) {
    for (int32_t oy = 0; oy < out_h; ++oy) {
      for (int32_t ox = 0; ox < out_w; ++ox) {
        for (int32_t oc = 0; oc < out_c; ++oc) {
          int32_t acc = 0;
          for (int32_t ky = 0; ky < g.kernel_h(); ++ky) {
            const int32_t y = oy * g.stride_h() - g.pad_top() + ky * g.dilation_h();
            if (y < 0 || y >= in_h) continue;
            for (int32_t kx = 0; kx < g.kernel_w(); ++kx) {
              const int32_t x = ox * g.stride_w() - g.pad_left() + kx * g.dilation_w();
              if (x < 0 || x >= in_w) continue;
              const int8_t* pixel = in.s8() + ((int64_t{b} * in_h + y) * in_w + x) * in_c;
              const int64_t tap = (int64_t{oc / bo} * g.kernel_h() + ky) * g.kernel_w() + kx;
              for (int32_t ic = 0; ic < in_c; ++ic) {
                const int64_t wi = (tap * in_blocks + ic / bi) * bo * bi + (oc % bo) * bi + ic % bi;
                acc += w[wi] * (pixel[ic] + input_offset);
              }
            }
          }
          acc = c.AddBias(acc, oc);
          out.s8()[((int64_t{b} * out_h + oy) * out_w + ox) * out_c + oc] =
              static_cast<int8_t>(c.Requant(acc, static_cast<uint32_t>(oc)));
        }
      }
    }
  }
}

void DepthwiseConv2DGeneric(const Ctx& c) {
  const View in = c.In(0), out = c.Out();
  const fb::Geometry& g = *c.k.geometry();
  const int32_t batches = in.dims[0], in_h = in.dims[1], in_w = in.dims[2], in_c = in.dims[3];
  const int32_t out_h = out.dims[1], out_w = out.dims[2], out_c = out.dims[3];
  const int32_t dm = g.depth_multiplier();
  const int32_t bo = c.payload.program->weight_block_out();
  const int32_t padded_c = (out_c + bo - 1) / bo * bo;
  const int32_t input_offset = -c.k.input_zero_point();
  const int8_t* w = c.Weights();
  for (int32_t b = 0; b < batches; ++b) {
    for (int32_t oy = 0; oy < out_h; ++oy) {
      for (int32_t ox = 0; ox < out_w; ++ox) {
        for (int32_t ic = 0; ic < in_c; ++ic) {
          for (int32_t m = 0; m < dm; ++m) {
            const int32_t oc = ic * dm + m;
            int32_t acc = 0;
            for (int32_t ky = 0; ky < g.kernel_h(); ++ky) {
              const int32_t y = oy * g.stride_h() - g.pad_top() + ky * g.dilation_h();
              if (y < 0 || y >= in_h) continue;
              for (int32_t kx = 0; kx < g.kernel_w(); ++kx) {
                const int32_t x = ox * g.stride_w() - g.pad_left() + kx * g.dilation_w();
                if (x < 0 || x >= in_w) continue;
                const int32_t v = in.s8()[((int64_t{b} * in_h + y) * in_w + x) * in_c + ic];
                const int32_t wv = w[(int64_t{ky} * g.kernel_w() + kx) * padded_c + oc];
                acc += wv * (v + input_offset);
              }
            }
            acc = c.AddBias(acc, oc);
            out.s8()[((int64_t{b} * out_h + oy) * out_w + ox) * out_c + oc] =
                static_cast<int8_t>(c.Requant(acc, static_cast<uint32_t>(oc)));
          }
        }
      }
    }
  }
}

void FullyConnectedGeneric(const Ctx& c) {
  const View in = c.In(0), out = c.Out();
  const int32_t units = out.Dim(-1);
  const int64_t batches = out.elements / units;
  const int64_t depth = in.elements / batches;
  const int32_t bo = c.payload.program->weight_block_out();
  const int32_t bi = c.payload.program->weight_block_in();
  const int64_t in_blocks = (depth + bi - 1) / bi;
  const int32_t input_offset = -c.k.input_zero_point();
  const int8_t* w = c.Weights();
  for (int64_t b = 0; b < batches; ++b) {
    const int8_t* x = in.s8() + b * depth;
    for (int32_t o = 0; o < units; ++o) {
      int32_t acc = 0;
      for (int64_t i = 0; i < depth; ++i) {
        const int64_t wi =
            (int64_t{o / bo} * in_blocks + i / bi) * bo * bi + (o % bo) * bi + i % bi;
        acc += w[wi] * (x[i] + input_offset);
      }
      acc = c.AddBias(acc, o);
      out.s8()[b * units + o] = static_cast<int8_t>(c.Requant(acc, static_cast<uint32_t>(o)));
    }
  }
}

bool Blocked8x8(const Ctx& c) {
  return c.payload.program->weight_block_out() == kBlock &&
         c.payload.program->weight_block_in() == kBlock;
}

// Shape and addressing of one blocked conv kernel, shared by its two loops below.
struct BlockedConv {
  View in, out;
  int32_t in_blocks = 0, out_blocks = 0, patch_blocks = 0;
  int64_t ob_stride = 0;  // bytes of one output block's weights
  int32_t kw = 0, sh = 0, sw = 0, dh = 0, dw = 0, pt = 0, pl = 0, input_offset = 0;

  // Widens blocks [t0, t1) of output pixel (b, oy, ox)'s patch into row.
  void Fill(int32_t b, int32_t oy, int32_t ox, int32_t t0, int32_t t1, int16_t* row) const {
    const int32_t in_h = in.dims[1], in_w = in.dims[2], in_c = in.dims[3];
    const int8_t* in_b = in.s8() + int64_t{b} * in_h * in_w * in_c;
    FillPatch(in_b, in_h, in_w, in_c, in_blocks, kw, oy * sh - pt, ox * sw - pl, dh, dw,
              input_offset, t0, t1, row);
  }
  int8_t* OutPixel(int32_t b, int64_t pixel) const {
    return out.s8() + (int64_t{b} * out.dims[1] * out.dims[2] + pixel) * out.dims[3];
  }
};

// The blocked weights widened into DotTilesPacked's layout in the temp pool, or null (no packed
// kernel on this machine, no temp pool, or not enough room).
const int16_t* PackWeights(const Ctx& c, const BlockedConv& v) {
  if (!kernels::HavePackedDot() || c.env.temp == nullptr) return nullptr;
  const int32_t rows = v.out_blocks * kBlock, k = v.patch_blocks * kBlock;
  auto* packed = static_cast<int16_t*>(
      c.env.temp->Allocate(kernels::PackedRowsElements(rows, k) * sizeof(int16_t), 32));
  if (packed != nullptr)
    kernels::PackRowsForDot(c.Weights(), v.ob_stride, kBlock, kBlockBytes, rows, k, packed);
  return packed;
}

// Patches of at most kRowBlocks blocks: kConvTilePixels output pixels are widened at once and
// one DotTiles call covers a chunk of output channels of all of them. (Where the packed kernel
// exists, Conv2DPackedAsCpuKernel runs instead.)
void Conv2DTiled(const Ctx& c, const BlockedConv& v, const int8_t* w) {
  constexpr int32_t kP = kernels::kConvTilePixels;
  const int32_t out_w = v.out.dims[2], out_c = v.out.dims[3];
  const int32_t pixels = v.out.dims[1] * out_w;
  const int32_t stride = v.patch_blocks * kBlock;
  int16_t rows[kP * kRowBlocks * kBlock];
  int32_t acc[kP][kChunk];
  ChannelParams params(c, out_c);
  for (int32_t b = 0; b < v.out.dims[0]; ++b) {
    for (int32_t px0 = 0; px0 < pixels; px0 += kP) {
      const int32_t np = pixels - px0 < kP ? pixels - px0 : kP;
      for (int32_t i = 0; i < np; ++i) {
        v.Fill(b, (px0 + i) / out_w, (px0 + i) % out_w, 0, v.patch_blocks, rows + i * stride);
      }
      for (int32_t ob0 = 0; ob0 < v.out_blocks; ob0 += kChunkBlocks) {
        const int32_t n_blocks =
            v.out_blocks - ob0 < kChunkBlocks ? v.out_blocks - ob0 : kChunkBlocks;
        kernels::DotTiles(w + ob0 * v.ob_stride, v.ob_stride, kBlock, kBlockBytes,
                          n_blocks * kBlock, rows, stride, np, stride, stride, &acc[0][0], kChunk);
        const int32_t oc0 = ob0 * kBlock;
        const int32_t n = out_c - oc0 < kChunk ? out_c - oc0 : kChunk;
        // The group's pixels are consecutive in the output: out_c apart.
        params.StorePixels(acc[0], kChunk, oc0, n, np, v.OutPixel(b, px0) + oc0, out_c);
      }
    }
  }
}

// Longer patches: one pixel at a time, the patch widened in segments of kRowBlocks blocks.
void Conv2DSegmented(const Ctx& c, const BlockedConv& v, const int8_t* w) {
  const int32_t out_w = v.out.dims[2], out_c = v.out.dims[3];
  int16_t row[kRowBlocks * kBlock];
  int32_t acc[kChunk];
  ChannelParams params(c, out_c);
  for (int32_t b = 0; b < v.out.dims[0]; ++b) {
    for (int64_t px = 0; px < int64_t{v.out.dims[1]} * out_w; ++px) {
      int8_t* out_px = v.OutPixel(b, px);
      for (int32_t ob0 = 0; ob0 < v.out_blocks; ob0 += kChunkBlocks) {
        const int32_t n_blocks =
            v.out_blocks - ob0 < kChunkBlocks ? v.out_blocks - ob0 : kChunkBlocks;
        for (int32_t i = 0; i < n_blocks * kBlock; ++i) acc[i] = 0;
        for (int32_t t0 = 0; t0 < v.patch_blocks; t0 += kRowBlocks) {
          const int32_t t1 = v.patch_blocks - t0 < kRowBlocks ? v.patch_blocks : t0 + kRowBlocks;
          v.Fill(b, static_cast<int32_t>(px / out_w), static_cast<int32_t>(px % out_w), t0, t1,
                 row);
          for (int32_t ob = 0; ob < n_blocks; ++ob) {
            kernels::AccumulateBlocked8x8(w + (ob0 + ob) * v.ob_stride + int64_t{t0} * kBlockBytes,
                                          t1 - t0, row, acc + ob * kBlock);
          }
        }
        const int32_t oc0 = ob0 * kBlock;
        const int32_t n = out_c - oc0 < kChunk ? out_c - oc0 : kChunk;
        params.Store(acc, oc0, n, out_px + oc0);
      }
    }
  }
}

// The blocked weights of output channels [0, out_c) back in TFLite's OHWI order (the padding
// channels and columns dropped).
void UnblockWeights(const BlockedConv& v, int32_t kh, const int8_t* w, int8_t* ohwi) {
  const int32_t in_c = v.in.dims[3], out_c = v.out.dims[3], taps = kh * v.kw;
  for (int32_t oc = 0; oc < out_c; ++oc) {
    const int8_t* w_oc = w + (oc / kBlock) * v.ob_stride + (oc % kBlock) * kBlock;
    for (int32_t t = 0; t < taps; ++t) {
      for (int32_t ic = 0; ic < in_c; ++ic) {
        *ohwi++ = w_oc[(int64_t{t} * v.in_blocks + ic / kBlock) * kBlockBytes + ic % kBlock];
      }
    }
  }
}

// The CPU conv kernel's parameters for this kernel (bias added with saturation, as
// Ctx::AddBias).
kernels::ConvParams CpuConvParams(const Ctx& c, const fb::Geometry& g) {
  kernels::ConvParams p;
  p.stride_h = g.stride_h();
  p.stride_w = g.stride_w();
  p.pad_top = g.pad_top();
  p.pad_left = g.pad_left();
  p.dilation_h = g.dilation_h();
  p.dilation_w = g.dilation_w();
  p.input_offset = -c.k.input_zero_point();
  p.out.output_offset = c.k.output_zero_point();
  p.out.act_min = c.k.activation_min();
  p.out.act_max = c.k.activation_max();
  p.saturate_bias = true;
  return p;
}

kernels::Dims4 ToDims4(const View& v) { return {v.dims[0], v.dims[1], v.dims[2], v.dims[3]}; }

// The kernel's per-channel requantization table as the CPU kernels take it.
kernels::ChannelQuant CpuQuant(const Ctx& c, int32_t channels) {
  return {c.k.output_multipliers()->data(), c.k.output_shifts()->data(), channels};
}

// The bias copied into the temp pool (the payload's need not be 4-byte aligned), or null.
const int32_t* BiasInTemp(const Ctx& c, int32_t out_c) {
  auto* bias = c.env.temp->AllocateArray<int32_t>(static_cast<size_t>(out_c));
  if (bias != nullptr) {
    std::memcpy(bias, c.constants_base + c.k.bias()->offset(), 4 * static_cast<size_t>(out_c));
  }
  return bias;
}

// Where the packed kernel exists (x86-64 hosts) and the input channels are not a multiple of 8:
// the conv run by the CPU kernel, conv2d_s8, on weights unblocked into the temp pool. Patches then
// hold only the real input channels (a 3-channel first layer multiplies 27 values per 3x3 patch,
// not 72) and are widened a kernel row at a time. False (nothing written) when not taken.
bool Conv2DAsCpuKernel(const Ctx& c, const BlockedConv& v, const fb::Geometry& g) {
  if (!kernels::HavePackedDot() || c.env.temp == nullptr || v.in.dims[3] % kBlock == 0) {
    return false;
  }
  const int32_t out_c = v.out.dims[3];
  const kernels::Dims4 in = ToDims4(v.in), out = ToDims4(v.out);
  const kernels::Dims4 f{out_c, g.kernel_h(), g.kernel_w(), in.c};
  const size_t scratch_bytes = kernels::conv2d_s8_get_buffer_size_packed(in, f);
  auto* filter = static_cast<int8_t*>(c.env.temp->Allocate(static_cast<size_t>(f.Size()), 16));
  const int32_t* bias = BiasInTemp(c, out_c);
  void* scratch = c.env.temp->Allocate(scratch_bytes, 16);
  if (scratch_bytes == 0 || filter == nullptr || bias == nullptr || scratch == nullptr) {
    return false;
  }
  UnblockWeights(v, g.kernel_h(), c.Weights(), filter);
  return kernels::conv2d_s8(CpuConvParams(c, g), CpuQuant(c, out_c), in, v.in.s8(), f, filter, bias,
                            out, v.out.s8(), scratch, scratch_bytes) == Error::kOk;
}

// Whole blocks of input channels: each output block's weights run over the patch in (ky, kx, ic)
// order, so PackWeights gives exactly the packed OHWI filter and the CPU kernel's packed path
// (all output channels of a pixel group per pass, one requantization call) runs on it. False
// (nothing written) when not taken.
bool Conv2DPackedAsCpuKernel(const Ctx& c, const BlockedConv& v, const fb::Geometry& g) {
  if (!kernels::HavePackedDot() || c.env.temp == nullptr || v.in.dims[3] % kBlock != 0) {
    return false;
  }
  const int32_t out_c = v.out.dims[3];
  const kernels::Dims4 in = ToDims4(v.in), out = ToDims4(v.out);
  const kernels::Dims4 f{out_c, g.kernel_h(), g.kernel_w(), in.c};
  const size_t scratch_bytes = kernels::conv2d_s8_get_buffer_size(in, f);
  const int32_t* bias = BiasInTemp(c, out_c);
  void* scratch = c.env.temp->Allocate(scratch_bytes, 16);
  // Packed last: no pass over the weights unless the kernel runs.
  const int16_t* packed =
      scratch_bytes == 0 || bias == nullptr || scratch == nullptr ? nullptr : PackWeights(c, v);
  if (packed == nullptr) return false;
  return kernels::conv2d_s8_prepacked(CpuConvParams(c, g), CpuQuant(c, out_c), in, v.in.s8(), f,
                                      packed, bias, out, v.out.s8(), scratch,
                                      scratch_bytes) == Error::kOk;
}

void Conv2D(const Ctx& c) {
  if (!Blocked8x8(c) || !SmallOffset(-c.k.input_zero_point())) return Conv2DGeneric(c);
  const fb::Geometry& g = *c.k.geometry();
  BlockedConv v;
  v.in = c.In(0);
  v.out = c.Out();
  v.in_blocks = (v.in.dims[3] + kBlock - 1) / kBlock;
  v.out_blocks = (v.out.dims[3] + kBlock - 1) / kBlock;
  // Weights of output block ob: the patch's blocks in (ky, kx, input block) order.
  v.patch_blocks = g.kernel_h() * g.kernel_w() * v.in_blocks;
  v.ob_stride = int64_t{v.patch_blocks} * kBlockBytes;
  v.kw = g.kernel_w();
  v.sh = g.stride_h();
  v.sw = g.stride_w();
  v.dh = g.dilation_h();
  v.dw = g.dilation_w();
  v.pt = g.pad_top();
  v.pl = g.pad_left();
  v.input_offset = -c.k.input_zero_point();
  if (Conv2DAsCpuKernel(c, v, g) || Conv2DPackedAsCpuKernel(c, v, g)) return;
  if (v.patch_blocks <= kRowBlocks) return Conv2DTiled(c, v, c.Weights());
  Conv2DSegmented(c, v, c.Weights());
}

// Taps gathered per output pixel by the depthwise fast path (kernels up to 8x8).
constexpr int32_t kMaxDepthwiseTaps = 64;

// With unpadded channels (a multiple of the weight block) the NPU's depthwise weights are
// TFLite's [1, KH, KW, C] already: the CPU kernel runs on them in place, its accumulators and the
// bias copy (the payload's bias need not be 4-byte aligned) in the temp pool. False (nothing
// written) when not taken.
bool DepthwiseAsCpuKernel(const Ctx& c, const fb::Geometry& g) {
  const View in = c.In(0), out = c.Out();
  const int32_t out_c = out.dims[3];
  if (c.env.temp == nullptr || g.depth_multiplier() != 1 ||
      out_c % c.payload.program->weight_block_out() != 0) {
    return false;
  }
  const kernels::Dims4 in_dims = ToDims4(in), out_dims = ToDims4(out);
  const kernels::Dims4 f{1, g.kernel_h(), g.kernel_w(), out_c};
  const size_t scratch_bytes = kernels::depthwise_conv2d_s8_get_buffer_size(out_dims);
  const int32_t* bias = BiasInTemp(c, out_c);
  void* scratch = c.env.temp->Allocate(scratch_bytes, 16);
  if (bias == nullptr || scratch == nullptr) return false;
  kernels::DepthwiseConvParams p;
  p.conv = CpuConvParams(c, g);
  return kernels::depthwise_conv2d_s8(p, CpuQuant(c, out_c), in_dims, in.s8(), f, c.Weights(), bias,
                                      out_dims, out.s8(), scratch, scratch_bytes) == Error::kOk;
}

void DepthwiseConv2D(const Ctx& c) {
  const fb::Geometry& g = *c.k.geometry();
  if (g.depth_multiplier() != 1) return DepthwiseConv2DGeneric(c);
  if (DepthwiseAsCpuKernel(c, g)) return;
  const View in = c.In(0), out = c.Out();
  const int32_t batches = in.dims[0], in_h = in.dims[1], in_w = in.dims[2], in_c = in.dims[3];
  const int32_t out_h = out.dims[1], out_w = out.dims[2], out_c = out.dims[3];
  const int32_t kh = g.kernel_h(), kw = g.kernel_w();
  const int32_t sh = g.stride_h(), sw = g.stride_w(), dh = g.dilation_h(), dw = g.dilation_w();
  const int32_t pt = g.pad_top(), pl = g.pad_left();
  const int32_t bo = c.payload.program->weight_block_out();
  const int32_t padded_c = (out_c + bo - 1) / bo * bo;
  const int32_t input_offset = -c.k.input_zero_point();
  const bool small_offset = SmallOffset(input_offset);
  const int8_t* w = c.Weights();
  int32_t acc[kChunk];
  ChannelParams params(c, out_c);
  for (int32_t b = 0; b < batches; ++b) {
    const int8_t* in_b = in.s8() + int64_t{b} * in_h * in_w * in_c;
    for (int32_t oy = 0; oy < out_h; ++oy) {
      for (int32_t ox = 0; ox < out_w; ++ox) {
        int8_t* out_px = out.s8() + ((int64_t{b} * out_h + oy) * out_w + ox) * out_c;
        for (int32_t c0 = 0; c0 < out_c; c0 += kChunk) {
          const int32_t n = out_c - c0 < kChunk ? out_c - c0 : kChunk;
          if (small_offset && kh * kw <= kMaxDepthwiseTaps) {
            // The valid taps first, then every channel of the chunk over all of them.
            const int8_t* xs[kMaxDepthwiseTaps];
            const int8_t* ws[kMaxDepthwiseTaps];
            int32_t taps = 0;
            for (int32_t ky = 0; ky < kh; ++ky) {
              const int32_t y = oy * sh - pt + ky * dh;
              if (y < 0 || y >= in_h) continue;
              for (int32_t kx = 0; kx < kw; ++kx) {
                const int32_t x = ox * sw - pl + kx * dw;
                if (x < 0 || x >= in_w) continue;
                xs[taps] = in_b + (int64_t{y} * in_w + x) * in_c + c0;
                ws[taps++] = w + (int64_t{ky} * kw + kx) * padded_c + c0;
              }
            }
            kernels::DepthwiseDotTaps(xs, ws, taps, n, input_offset, acc);
            params.Store(acc, c0, n, out_px + c0);
            continue;
          }
          for (int32_t i = 0; i < n; ++i) acc[i] = 0;
          for (int32_t ky = 0; ky < kh; ++ky) {
            const int32_t y = oy * sh - pt + ky * dh;
            if (y < 0 || y >= in_h) continue;
            for (int32_t kx = 0; kx < kw; ++kx) {
              const int32_t x = ox * sw - pl + kx * dw;
              if (x < 0 || x >= in_w) continue;
              const int8_t* px = in_b + (int64_t{y} * in_w + x) * in_c + c0;
              const int8_t* wt = w + (int64_t{ky} * kw + kx) * padded_c + c0;
              if (small_offset) {
                // |w * (x + offset)| <= 128 * 255: the products fit int16.
                const int16_t off = static_cast<int16_t>(input_offset);
                for (int32_t i = 0; i < n; ++i) {
                  const int16_t v = static_cast<int16_t>(static_cast<int16_t>(px[i]) + off);
                  acc[i] += static_cast<int16_t>(static_cast<int16_t>(wt[i]) * v);
                }
              } else {
                for (int32_t i = 0; i < n; ++i) {
                  acc[i] +=
                      static_cast<int32_t>(wt[i]) * (static_cast<int32_t>(px[i]) + input_offset);
                }
              }
            }
          }
          params.Store(acc, c0, n, out_px + c0);
        }
      }
    }
  }
}

void FullyConnected(const Ctx& c) {
  if (!Blocked8x8(c) || !SmallOffset(-c.k.input_zero_point())) return FullyConnectedGeneric(c);
  const View in = c.In(0), out = c.Out();
  const int32_t units = out.Dim(-1);
  const int64_t batches = out.elements / units;
  const int32_t depth = static_cast<int32_t>(in.elements / batches);
  const int32_t in_blocks = (depth + kBlock - 1) / kBlock;
  const int32_t out_blocks = (units + kBlock - 1) / kBlock;
  const int64_t ob_stride = int64_t{in_blocks} * kBlockBytes;
  const bool one_segment = in_blocks <= kRowBlocks;
  const int32_t input_offset = -c.k.input_zero_point();
  const int8_t* w = c.Weights();
  int16_t row[kRowBlocks * kBlock];
  int32_t acc[kChunk];
  ChannelParams params(c, units);
  for (int64_t b = 0; b < batches; ++b) {
    // The input row as a one-pixel, one-tap patch of `depth` channels.
    const int8_t* x = in.s8() + b * depth;
    if (one_segment) {
      FillPatch(x, 1, 1, depth, in_blocks, 1, 0, 0, 1, 1, input_offset, 0, in_blocks, row);
    }
    for (int32_t ob0 = 0; ob0 < out_blocks; ob0 += kChunkBlocks) {
      const int32_t n_blocks = out_blocks - ob0 < kChunkBlocks ? out_blocks - ob0 : kChunkBlocks;
      for (int32_t i = 0; i < n_blocks * kBlock; ++i) acc[i] = 0;
      for (int32_t t0 = 0; t0 < in_blocks; t0 += kRowBlocks) {
        const int32_t t1 = in_blocks - t0 < kRowBlocks ? in_blocks : t0 + kRowBlocks;
        if (!one_segment) {
          FillPatch(x, 1, 1, depth, in_blocks, 1, 0, 0, 1, 1, input_offset, t0, t1, row);
        }
        for (int32_t ob = 0; ob < n_blocks; ++ob) {
          kernels::AccumulateBlocked8x8(w + (ob0 + ob) * ob_stride + int64_t{t0} * kBlockBytes,
                                        t1 - t0, row, acc + ob * kBlock);
        }
      }
      const int32_t oc0 = ob0 * kBlock;
      const int32_t n = units - oc0 < kChunk ? units - oc0 : kChunk;
      params.Store(acc, oc0, n, out.s8() + b * units + oc0);
    }
  }
}

// ---- Pools -------------------------------------------------------------------------------------

void Pool(const Ctx& c, bool average) {
  const View in = c.In(0), out = c.Out();
  const fb::Geometry& g = *c.k.geometry();
  const int32_t batches = in.dims[0], in_h = in.dims[1], in_w = in.dims[2], depth = in.dims[3];
  const int32_t out_h = out.dims[1], out_w = out.dims[2];
  for (int32_t b = 0; b < batches; ++b) {
    for (int32_t oy = 0; oy < out_h; ++oy) {
      for (int32_t ox = 0; ox < out_w; ++ox) {
        const int32_t y0 = oy * g.stride_h() - g.pad_top();
        const int32_t x0 = ox * g.stride_w() - g.pad_left();
        const int32_t fy0 = y0 < 0 ? -y0 : 0;
        const int32_t fy1 = g.kernel_h() < in_h - y0 ? g.kernel_h() : in_h - y0;
        const int32_t fx0 = x0 < 0 ? -x0 : 0;
        const int32_t fx1 = g.kernel_w() < in_w - x0 ? g.kernel_w() : in_w - x0;
        for (int32_t ch = 0; ch < depth; ++ch) {
          int32_t acc = average ? 0 : -128;
          int32_t count = 0;
          for (int32_t fy = fy0; fy < fy1; ++fy) {
            for (int32_t fx = fx0; fx < fx1; ++fx) {
              const int32_t v =
                  in.s8()[((int64_t{b} * in_h + y0 + fy) * in_w + x0 + fx) * depth + ch];
              if (average) {
                acc += v;
              } else if (v > acc) {
                acc = v;
              }
              ++count;
            }
          }
          if (average) {
            // Windows clipped by padding divide by the taps inside the input (TFLite); round
            // half away from zero.
            if (count == 0) count = 1;
            acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
          }
          out.s8()[((int64_t{b} * out_h + oy) * out_w + ox) * depth + ch] =
              static_cast<int8_t>(Clamp(acc, c.k.activation_min(), c.k.activation_max()));
        }
      }
    }
  }
}

// ---- Broadcasting binary ops -------------------------------------------------------------------

// Element strides of `v` aligned to the output's rank, 0 along broadcast dimensions.
void BroadcastStrides(const View& v, const View& out, int64_t* strides) {
  int64_t stride = 1;
  for (int32_t i = out.rank - 1; i >= 0; --i) {
    const int32_t vi = i - (out.rank - v.rank);
    if (vi < 0) {
      strides[i] = 0;
      continue;
    }
    strides[i] = v.dims[vi] == 1 && out.dims[i] != 1 ? 0 : stride;
    stride *= v.dims[vi];
  }
}

template <typename Fn>
void ForEachBroadcast(const View& a, const View& b, const View& out, Fn fn) {
  int64_t sa[kMaxRank], sb[kMaxRank];
  BroadcastStrides(a, out, sa);
  BroadcastStrides(b, out, sb);
  int32_t index[kMaxRank] = {};
  for (int64_t o = 0; o < out.elements; ++o) {
    int64_t ia = 0, ib = 0;
    for (int32_t d = 0; d < out.rank; ++d) {
      ia += index[d] * sa[d];
      ib += index[d] * sb[d];
    }
    fn(o, ia, ib);
    for (int32_t d = out.rank - 1; d >= 0; --d) {
      if (++index[d] < out.dims[d]) break;
      index[d] = 0;
    }
  }
}

void AddSub(const Ctx& c, bool subtract) {
  const View a = c.In(0), b = c.In(1), out = c.Out();
  const fb::AddSubParams& p = *c.k.add_sub();
  // The parameters read once: the flatbuffer accessors are not free per element.
  const int32_t off1 = -c.k.input_zero_point(), off2 = -c.k.input2_zero_point();
  const int32_t scale = 1 << p.left_shift();
  const int32_t m1 = p.input1_multiplier(), sh1 = p.input1_shift();
  const int32_t m2 = p.input2_multiplier(), sh2 = p.input2_shift();
  const int32_t mo = p.output_multiplier(), sho = p.output_shift();
  const int32_t zp = c.k.output_zero_point(), lo = c.k.activation_min(), hi = c.k.activation_max();
  const int8_t* x = a.s8();
  const int8_t* y = b.s8();
  int8_t* z = out.s8();
  auto compute = [&](int64_t o, int64_t ia, int64_t ib) {
    const int32_t s1 = fp::MultiplyByQuantizedMultiplier((off1 + x[ia]) * scale, m1, sh1);
    const int32_t s2 = fp::MultiplyByQuantizedMultiplier((off2 + y[ib]) * scale, m2, sh2);
    const int32_t v = fp::MultiplyByQuantizedMultiplier(subtract ? s1 - s2 : s1 + s2, mo, sho) + zp;
    z[o] = static_cast<int8_t>(Clamp(v, lo, hi));
  };
  if (a.elements == out.elements && b.elements == out.elements) {
    // Same shapes (the residual adds): the CPU kernel's element loop (vectorised on x86-64),
    // whose scale-up is exact for left shifts up to 24 (real models use 20).
    if (p.left_shift() >= 0 && p.left_shift() <= 24) {
      kernels::AddParams ap;
      ap.input1_offset = off1;
      ap.input2_offset = off2;
      ap.left_shift = p.left_shift();
      ap.input1_multiplier = m1;
      ap.input1_shift = sh1;
      ap.input2_multiplier = m2;
      ap.input2_shift = sh2;
      ap.output_multiplier = mo;
      ap.output_shift = sho;
      ap.out.output_offset = zp;
      ap.out.act_min = lo;
      ap.out.act_max = hi;
      kernels::elementwise_add_s8(ap, subtract, x, y, out.elements, z);
      return;
    }
    for (int64_t o = 0; o < out.elements; ++o) compute(o, o, o);
    return;
  }
  ForEachBroadcast(a, b, out, compute);
}

void Mul(const Ctx& c) {
  const View a = c.In(0), b = c.In(1), out = c.Out();
  const int32_t off1 = -c.k.input_zero_point(), off2 = -c.k.input2_zero_point();
  ForEachBroadcast(a, b, out, [&](int64_t o, int64_t ia, int64_t ib) {
    out.s8()[o] = static_cast<int8_t>(c.Requant((off1 + a.s8()[ia]) * (off2 + b.s8()[ib]), 0));
  });
}

void MaxMin(const Ctx& c, bool maximum) {
  const View a = c.In(0), b = c.In(1), out = c.Out();
  ForEachBroadcast(a, b, out, [&](int64_t o, int64_t ia, int64_t ib) {
    const int8_t x = a.s8()[ia], y = b.s8()[ib];
    out.s8()[o] = maximum ? (x > y ? x : y) : (x < y ? x : y);
  });
}

// ---- Element-wise activations ------------------------------------------------------------------

void Rescale(const Ctx& c) {  // RELU, RELU6 (their own clamp range), int8 -> int8 QUANTIZE
  const View in = c.In(0), out = c.Out();
  for (int64_t i = 0; i < out.elements; ++i) {
    out.s8()[i] = static_cast<int8_t>(c.Requant(in.s8()[i] - c.k.input_zero_point(), 0));
  }
}

void LeakyRelu(const Ctx& c) {
  const View in = c.In(0), out = c.Out();
  for (int64_t i = 0; i < out.elements; ++i) {
    const int32_t v = in.s8()[i] - c.k.input_zero_point();
    const uint32_t branch = v >= 0 ? 0 : 1;
    const int32_t r = fp::MultiplyByQuantizedMultiplier(v, c.Mult(branch), c.Shift(branch)) +
                      c.k.output_zero_point();
    out.s8()[i] = static_cast<int8_t>(Clamp(r, -128, 127));
  }
}

void LogisticTanh(const Ctx& c, bool tanh) {
  const View in = c.In(0), out = c.Out();
  const fb::FixedPointParams& p = *c.k.fixed_point();
  for (int64_t i = 0; i < out.elements; ++i) {
    const int32_t v = in.s8()[i] - c.k.input_zero_point();
    int32_t r;
    if (v <= -p.input_range_radius()) {
      r = -128;
    } else if (v >= p.input_range_radius()) {
      r = 127;
    } else {
      const int32_t q4 =
          fp::MultiplyByQuantizedMultiplier(v, p.input_multiplier(), p.input_left_shift());
      if (tanh) {
        const int32_t q0 = fp::Tanh(fp::Q<4>::FromRaw(q4)).raw;
        r = Clamp(fp::RoundingDivideByPOT(q0, 31 - 7), -128, 127);  // output scale 1/128, zp 0
      } else {
        const int32_t q0 = fp::Logistic(fp::Q<4>::FromRaw(q4)).raw;
        r = Clamp(fp::RoundingDivideByPOT(q0, 31 - 8) - 128, -128, 127);  // 1/256, zp -128
      }
    }
    out.s8()[i] = static_cast<int8_t>(r);
  }
}

// The NPU's softmax numbers are TFLite Micro's; the CPU kernel's math is the one implementation.
void Softmax(const Ctx& c) {
  const View in = c.In(0), out = c.Out();
  const fb::FixedPointParams& p = *c.k.fixed_point();
  const int32_t depth = in.Dim(-1);
  const int64_t rows = depth > 0 ? in.elements / depth : 0;
  kernels::SoftmaxParams params;
  params.input_multiplier = p.input_multiplier();
  params.input_left_shift = p.input_left_shift();
  params.diff_min = p.diff_min();
  (void)kernels::softmax_s8(params, static_cast<int32_t>(rows), depth, in.s8(), out.s8());
}

void HardSwish(const Ctx& c) {
  const View in = c.In(0), out = c.Out();
  // TFLite's Prepare computes these in float; do the same so the multipliers round identically.
  const float hires_input_scale = (1.0f / 128.0f) * in.scale;
  const float reluish_scale = 3.0f / 32768.0f;
  auto to16 = [](int32_t m) -> int16_t {
    if (m >= INT32_MAX - (1 << 15)) return INT16_MAX;
    return static_cast<int16_t>((m + (1 << 15)) >> 16);
  };
  int32_t out_m32, out_exp, relu_m32, relu_exp;
  QuantizeMultiplier(hires_input_scale / out.scale, &out_m32, &out_exp);
  QuantizeMultiplier(hires_input_scale / reluish_scale, &relu_m32, &relu_exp);
  const int16_t out_m = to16(out_m32), relu_m = to16(relu_m32);
  for (int64_t i = 0; i < out.elements; ++i) {
    const int16_t v = static_cast<int16_t>(in.s8()[i] - in.zero_point);
    const int16_t hires = static_cast<int16_t>(v * (1 << 7));
    const int16_t preshift = fp::SaturatingRoundingDoublingHighMul16(hires, out_m);
    int16_t reluish = hires;
    if (relu_exp > 0) reluish = fp::SaturatingLeftShift16(reluish, relu_exp - 1);
    reluish = fp::SaturatingRoundingDoublingHighMul16(reluish, relu_m);
    if (relu_exp > 0) reluish = fp::SaturatingLeftShift16(reluish, 1);
    if (relu_exp < 0) reluish = fp::RoundingDivideByPOT16(reluish, -relu_exp);
    reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);
    const int16_t pre = fp::SaturatingDoublingHighMul16(reluish, preshift);
    int32_t r = fp::RoundingDivideByPOT16(pre, out_exp < 0 ? -out_exp : 0) + out.zero_point;
    out.s8()[i] = static_cast<int8_t>(Clamp(r, -128, 127));
  }
}

void Quantize(const Ctx& c) {
  const View in = c.In(0), out = c.Out();
  for (int64_t i = 0; i < out.elements; ++i) {
    int32_t r;
    if (in.type == fb::ElementType::Float32) {
      float f;
      std::memcpy(&f, in.data + i * 4, 4);
      r = static_cast<int32_t>(std::round(f / out.scale)) + out.zero_point;
    } else {
      const int32_t v = in.type == fb::ElementType::UInt8 ? in.data[i] : in.s8()[i];
      r = fp::MultiplyByQuantizedMultiplier(v - in.zero_point, c.Mult(0), c.Shift(0)) +
          out.zero_point;
    }
    if (out.type == fb::ElementType::UInt8) {
      out.data[i] = static_cast<uint8_t>(Clamp(r, 0, 255));
    } else if (out.type == fb::ElementType::Int16) {
      const int16_t s = static_cast<int16_t>(Clamp(r, INT16_MIN, INT16_MAX));
      std::memcpy(out.data + i * 2, &s, 2);
    } else {
      out.s8()[i] = static_cast<int8_t>(Clamp(r, -128, 127));
    }
  }
}

void Dequantize(const Ctx& c) {
  const View in = c.In(0), out = c.Out();
  for (int64_t i = 0; i < out.elements; ++i) {
    const int32_t v = in.type == fb::ElementType::UInt8 ? in.data[i] : in.s8()[i];
    const float f = static_cast<float>(static_cast<double>(in.scale) * (v - in.zero_point));
    std::memcpy(out.data + i * 4, &f, 4);
  }
}

// ---- Data movement -----------------------------------------------------------------------------

int ElementSize(const View& v) { return ElementBytes(v.type); }

void Copy(const Ctx& c) {  // RESHAPE, SQUEEZE
  const View in = c.In(0), out = c.Out();
  if (in.data != out.data) std::memmove(out.data, in.data, out.elements * ElementSize(out));
}

int32_t NormalizeAxis(int32_t axis, int32_t rank) { return axis < 0 ? axis + rank : axis; }

void Concatenation(const Ctx& c) {
  const View out = c.Out();
  const int32_t axis = NormalizeAxis(c.k.axis(), out.rank);
  const int es = ElementSize(out);
  int64_t outer = 1, inner = es;
  for (int32_t d = 0; d < axis; ++d) outer *= out.dims[d];
  for (int32_t d = axis + 1; d < out.rank; ++d) inner *= out.dims[d];
  const int64_t out_row = inner * out.dims[axis];
  int64_t column = 0;
  for (uint32_t i = 0; i < c.k.inputs()->size(); ++i) {
    const View in = c.In(i);
    const int64_t row = inner * in.dims[axis];
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(out.data + o * out_row + column, in.data + o * row, row);
    }
    column += row;
  }
}

// Calls fn(out_linear, in_linear) for a gather described per output dim by an input start and
// step (in elements of that input dim), over an input of `in_dims`.
template <typename Fn>
void Gather(const View& in, const View& out, const int64_t* start, const int64_t* step,
            const int32_t* in_dim_of, Fn fn) {
  int64_t in_strides[kMaxRank];
  int64_t s = 1;
  for (int32_t d = in.rank - 1; d >= 0; --d) {
    in_strides[d] = s;
    s *= in.dims[d];
  }
  int32_t index[kMaxRank] = {};
  for (int64_t o = 0; o < out.elements; ++o) {
    int64_t src = 0;
    for (int32_t d = 0; d < out.rank; ++d) {
      if (in_dim_of[d] >= 0) src += (start[d] + index[d] * step[d]) * in_strides[in_dim_of[d]];
    }
    fn(o, src);
    for (int32_t d = out.rank - 1; d >= 0; --d) {
      if (++index[d] < out.dims[d]) break;
      index[d] = 0;
    }
  }
}

// The view's shape for the CPU's layout kernels, when they can take it (rank <= 6).
bool ToShapeN(const View& v, kernels::ShapeN* shape) {
  if (v.rank > kernels::kMaxDims) return false;
  shape->rank = v.rank;
  for (int32_t d = 0; d < v.rank; ++d) shape->dims[d] = v.dims[d];
  return true;
}

void Transpose(const Ctx& c) {
  const View in = c.In(0), perm = c.In(1), out = c.Out();
  const int es = ElementSize(out);
  int64_t start[kMaxRank] = {}, step[kMaxRank];
  int32_t dim_of[kMaxRank];
  for (int32_t d = 0; d < out.rank; ++d) {
    dim_of[d] = static_cast<int32_t>(ReadIndex(perm, d));
    step[d] = 1;
  }
  kernels::ShapeN shape;
  // Bytes are bytes: the CPU kernel's row-wise gather serves every one-byte element type (the
  // format conversions around NPU partitions are int8).
  if (es == 1 && ToShapeN(in, &shape) &&
      kernels::transpose_s8(shape, in.s8(), dim_of, out.s8()) == Error::kOk) {
    return;
  }
  Gather(in, out, start, step, dim_of,
         [&](int64_t o, int64_t i) { std::memcpy(out.data + o * es, in.data + i * es, es); });
}

// Start of a (strided) slice along one input dim, as TFLite's StartForAxis resolves it.
int64_t SliceStart(const View& begin, int32_t d, int64_t stride, int32_t begin_mask,
                   int32_t dim_size) {
  if (begin_mask & (1 << d)) return stride > 0 ? 0 : dim_size - 1;
  int64_t b = ReadIndex(begin, d);
  if (b < 0) b += dim_size;
  const int64_t lo = stride > 0 ? 0 : -1;
  const int64_t hi = stride > 0 ? dim_size : dim_size - 1;
  return b < lo ? lo : (b > hi ? hi : b);
}

void Slice(const Ctx& c, bool strided) {  // SLICE, STRIDED_SLICE
  const View in = c.In(0), begin = c.In(1), out = c.Out();
  const View strides = strided ? c.In(3) : View{};
  const int32_t begin_mask = strided ? c.k.int_params()->Get(0) : 0;
  const int32_t shrink = strided ? c.k.int_params()->Get(4) : 0;
  const int es = ElementSize(out);
  int64_t start[kMaxRank] = {}, step[kMaxRank] = {};
  int32_t dim_of[kMaxRank];
  int64_t base = 0;  // offset of the shrunk dimensions, which have no output dim
  int64_t stride_of_dim = 1;
  int32_t od = 0;
  int64_t in_strides[kMaxRank];
  for (int32_t d = in.rank - 1; d >= 0; --d) {
    in_strides[d] = stride_of_dim;
    stride_of_dim *= in.dims[d];
  }
  for (int32_t d = 0; d < in.rank; ++d) {
    const int64_t st = strided ? ReadIndex(strides, d) : 1;
    const int64_t b =
        strided ? SliceStart(begin, d, st, begin_mask & ~shrink, in.dims[d]) : ReadIndex(begin, d);
    if (shrink & (1 << d)) {
      base += b * in_strides[d];
      continue;
    }
    start[od] = b;
    step[od] = st;
    dim_of[od] = d;
    ++od;
  }
  for (int32_t d = od; d < out.rank; ++d) dim_of[d] = -1;
  Gather(in, out, start, step, dim_of, [&](int64_t o, int64_t i) {
    std::memcpy(out.data + o * es, in.data + (base + i) * es, es);
  });
}

// n copies of the es-byte value `fill`.
void FillElements(uint8_t* dst, int64_t n, const uint8_t* fill, int es) {
  if (es == 1) {
    std::memset(dst, fill[0], static_cast<size_t>(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * es, fill, static_cast<size_t>(es));
}

// PAD element by element (any rank, any pads the verifier accepts).
void PadElementwise(const View& in, const View& out, const int64_t* before,
                    const int64_t* in_strides, const uint8_t* fill, int es) {
  int32_t index[kMaxRank] = {};
  for (int64_t o = 0; o < out.elements; ++o) {
    int64_t src = 0;
    bool inside = true;
    for (int32_t d = 0; d < out.rank; ++d) {
      const int64_t x = index[d] - before[d];
      if (x < 0 || x >= in.dims[d]) {
        inside = false;
        break;
      }
      src += x * in_strides[d];
    }
    std::memcpy(out.data + o * es, inside ? in.data + src * es : fill, es);
    for (int32_t d = out.rank - 1; d >= 0; --d) {
      if (++index[d] < out.dims[d]) break;
      index[d] = 0;
    }
  }
}

// One-byte elements with non-negative pads: the CPU's pad kernel (one fill, then row copies).
bool PadAsCpuKernel(const View& in, const View& out, const int64_t* before, const uint8_t* fill,
                    int es) {
  kernels::ShapeN shape;
  if (es != 1 || !ToShapeN(in, &shape)) return false;
  int32_t lo[kernels::kMaxDims], hi[kernels::kMaxDims];
  for (int32_t d = 0; d < in.rank; ++d) {
    const int64_t after = int64_t{out.dims[d]} - in.dims[d] - before[d];
    if (before[d] < 0 || after < 0 || before[d] > out.dims[d]) return false;
    lo[d] = static_cast<int32_t>(before[d]);
    hi[d] = static_cast<int32_t>(after);
  }
  return kernels::pad_s8(shape, in.s8(), lo, hi, static_cast<int8_t>(fill[0]), out.s8()) ==
         Error::kOk;
}

void Pad(const Ctx& c, bool v2) {
  const View in = c.In(0), pads = c.In(1), out = c.Out();
  const int es = ElementSize(out);
  // TFLite pads int8 with the output zero point unless PADV2 gives a constant value.
  uint8_t fill[8] = {};
  if (v2 && c.k.inputs()->size() > 2 && c.k.inputs()->Get(2) >= 0) {
    std::memcpy(fill, c.In(2).data, es);
  } else if (out.type == fb::ElementType::Int8 || out.type == fb::ElementType::UInt8) {
    fill[0] = static_cast<uint8_t>(out.zero_point);
  }
  int64_t before[kMaxRank];
  for (int32_t d = 0; d < in.rank; ++d) before[d] = ReadIndex(pads, 2 * d);
  int64_t in_strides[kMaxRank];
  int64_t s = 1;
  for (int32_t d = in.rank - 1; d >= 0; --d) {
    in_strides[d] = s;
    s *= in.dims[d];
  }
  if (PadAsCpuKernel(in, out, before, fill, es)) return;
  const int32_t last = out.rank - 1;
  const int64_t lead = last >= 0 ? before[last] : 0;
  if (last < 0 || out.dims[last] == 0 || lead < 0 || lead + in.dims[last] > out.dims[last]) {
    return PadElementwise(in, out, before, in_strides, fill, es);
  }
  // Row by row along the innermost dimension: fill, one copy of the input row, fill.
  const int64_t row_out = out.dims[last], row_in = in.dims[last];
  int32_t index[kMaxRank] = {};
  for (int64_t row = 0; row < out.elements / row_out; ++row) {
    int64_t src = 0;
    bool inside = true;
    for (int32_t d = 0; d < last && inside; ++d) {
      const int64_t x = index[d] - before[d];
      inside = x >= 0 && x < in.dims[d];
      src += x * in_strides[d];
    }
    uint8_t* dst = out.data + row * row_out * es;
    if (!inside) {
      FillElements(dst, row_out, fill, es);
    } else {
      FillElements(dst, lead, fill, es);
      std::memcpy(dst + lead * es, in.data + src * es, static_cast<size_t>(row_in * es));
      FillElements(dst + (lead + row_in) * es, row_out - lead - row_in, fill, es);
    }
    for (int32_t d = last - 1; d >= 0; --d) {
      if (++index[d] < out.dims[d]) break;
      index[d] = 0;
    }
  }
}

void Mean(const Ctx& c) {
  const View in = c.In(0), axes = c.In(1), out = c.Out();
  bool reduced[kMaxRank] = {};
  for (int64_t i = 0; i < axes.elements; ++i) {
    reduced[NormalizeAxis(static_cast<int32_t>(ReadIndex(axes, i)), in.rank)] = true;
  }
  int64_t count = 1;
  int32_t kept_dims[kMaxRank];
  int32_t kept = 0;
  for (int32_t d = 0; d < in.rank; ++d) {
    if (reduced[d]) {
      count *= in.dims[d];
    } else {
      kept_dims[kept++] = in.dims[d];
    }
  }
  // The arithmetic is the CPU kernel's (TFLite Micro folds 1/count into the multiplier).
  kernels::MeanParams params;
  params.input_zero_point = c.k.input_zero_point();
  params.output_zero_point = c.k.output_zero_point();
  params.multiplier = c.Mult(0);
  params.shift = c.Shift(0);
  const kernels::MeanRescale rescale = kernels::mean_s8_rescale(params, count);
  int32_t sums_index[kMaxRank] = {};
  for (int64_t o = 0; o < out.elements; ++o) {
    // Decompose o over the kept dims.
    int64_t rem = o;
    for (int32_t d = kept - 1; d >= 0; --d) {
      sums_index[d] = static_cast<int32_t>(rem % kept_dims[d]);
      rem /= kept_dims[d];
    }
    int32_t acc = 0;
    int32_t index[kMaxRank] = {};
    for (int64_t r = 0; r < count; ++r) {
      // Build the input index: kept dims from sums_index, reduced dims from the counter.
      int64_t rr = r, src = 0, stride = 1;
      int32_t k = kept - 1;
      for (int32_t d = in.rank - 1; d >= 0; --d) {
        if (reduced[d]) {
          index[d] = static_cast<int32_t>(rr % in.dims[d]);
          rr /= in.dims[d];
        } else {
          index[d] = sums_index[k--];
        }
        src += index[d] * stride;
        stride *= in.dims[d];
      }
      acc += in.s8()[src];
    }
    out.s8()[o] = kernels::mean_s8_output(acc, count, params, rescale);
  }
}

int32_t NearestNeighbor(int32_t value, int32_t in_size, int32_t out_size, bool align_corners,
                        bool half_pixel_centers) {
  const float scale = (align_corners && out_size > 1)
                          ? static_cast<float>(in_size - 1) / static_cast<float>(out_size - 1)
                          : static_cast<float>(in_size) / static_cast<float>(out_size);
  const float offset = half_pixel_centers ? 0.5f : 0.0f;
  const float pos = (static_cast<float>(value) + offset) * scale;
  int32_t r =
      align_corners ? static_cast<int32_t>(std::round(pos)) : static_cast<int32_t>(std::floor(pos));
  if (r > in_size - 1) r = in_size - 1;
  if (half_pixel_centers && r < 0) r = 0;
  return r;
}

void ResizeNearestNeighbor(const Ctx& c) {
  const View in = c.In(0), out = c.Out();
  const bool align = c.k.int_params()->Get(0) != 0;
  const bool half = c.k.int_params()->Get(1) != 0;
  const int es = ElementSize(out);
  const int32_t batches = in.dims[0], in_h = in.dims[1], in_w = in.dims[2], depth = in.dims[3];
  const int32_t out_h = out.dims[1], out_w = out.dims[2];
  for (int32_t b = 0; b < batches; ++b) {
    for (int32_t y = 0; y < out_h; ++y) {
      const int32_t iy = NearestNeighbor(y, in_h, out_h, align, half);
      for (int32_t x = 0; x < out_w; ++x) {
        const int32_t ix = NearestNeighbor(x, in_w, out_w, align, half);
        std::memcpy(out.data + ((int64_t{b} * out_h + y) * out_w + x) * depth * es,
                    in.data + ((int64_t{b} * in_h + iy) * in_w + ix) * depth * es,
                    static_cast<size_t>(depth) * es);
      }
    }
  }
}

void BatchMatMul(const Ctx& c) {
  const View a = c.In(0), b = c.In(1), out = c.Out();
  const bool adj_x = c.k.int_params()->Get(0) != 0, adj_y = c.k.int_params()->Get(1) != 0;
  const int32_t rows = out.dims[1], cols = out.dims[2];
  const int32_t depth = adj_x ? a.dims[1] : a.dims[2];
  const int32_t off1 = -c.k.input_zero_point(), off2 = -c.k.input2_zero_point();
  for (int32_t n = 0; n < out.dims[0]; ++n) {
    const int8_t* pa = a.s8() + int64_t{a.dims[0] == 1 ? 0 : n} * a.dims[1] * a.dims[2];
    const int8_t* pb = b.s8() + int64_t{b.dims[0] == 1 ? 0 : n} * b.dims[1] * b.dims[2];
    for (int32_t i = 0; i < rows; ++i) {
      for (int32_t j = 0; j < cols; ++j) {
        int32_t acc = 0;
        for (int32_t k = 0; k < depth; ++k) {
          const int32_t x = adj_x ? pa[int64_t{k} * a.dims[2] + i] : pa[int64_t{i} * depth + k];
          const int32_t y = adj_y ? pb[int64_t{j} * b.dims[2] + k] : pb[int64_t{k} * cols + j];
          acc += (x + off1) * (y + off2);
        }
        out.s8()[(int64_t{n} * rows + i) * cols + j] = static_cast<int8_t>(c.Requant(acc, 0));
      }
    }
  }
}

}  // namespace

void QuantizeMultiplier(double real_multiplier, int32_t* multiplier, int32_t* shift) {
  if (real_multiplier <= 0) {
    *multiplier = 0;
    *shift = 0;
    return;
  }
  int exponent = 0;
  const double q = std::frexp(real_multiplier, &exponent);
  int64_t q_fixed = static_cast<int64_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
  if (q_fixed == (int64_t{1} << 31)) {
    q_fixed /= 2;
    ++exponent;
  }
  if (exponent < -31) {
    q_fixed = 0;
    exponent = 0;
  }
  *multiplier = static_cast<int32_t>(q_fixed);
  *shift = exponent;
}

Error BindingsFit(const NpuPayload& payload, const NpuExecEnv& env, bool check_args) {
  const fb::NpuProgram& program = *payload.program;
  RT_CHECK_OR_RETURN_ERROR(
      !check_args || env.args.size() == payload.num_inputs + payload.num_outputs, kInvalidArgument,
      "NPU delegate: %lu arguments, payload expects %u",
      static_cast<unsigned long>(env.args.size()),
      static_cast<unsigned>(payload.num_inputs + payload.num_outputs));
  for (const fb::Tensor* t : *program.tensors()) {
    if (t->kind() == fb::TensorKind::Input || t->kind() == fb::TensorKind::Output) {
      if (!check_args) continue;
      const TensorView* arg = env.args[static_cast<size_t>(t->arg_index())];
      RT_CHECK_OR_RETURN_ERROR(arg != nullptr && arg->data != nullptr, kInvalidArgument,
                               "NPU delegate: argument %d has no data",
                               static_cast<int>(t->arg_index()));
      RT_CHECK_OR_RETURN_ERROR(
          arg->NumBytes() == TensorBytes(*t), kInvalidArgument,
          "NPU delegate: argument %d has %lld bytes, payload tensor '%s' %lld",
          static_cast<int>(t->arg_index()), static_cast<long long>(arg->NumBytes()),
          t->name() ? t->name()->c_str() : "", static_cast<long long>(TensorBytes(*t)));
    } else if (t->kind() == fb::TensorKind::Intermediate) {
      RT_CHECK_OR_RETURN_ERROR(
          env.arena != nullptr &&
              static_cast<uint64_t>(t->arena_offset() + TensorBytes(*t)) <= env.arena_size,
          kInvalidArgument, "NPU delegate: intermediate '%s' ends past the arena (%lu bytes)",
          t->name() ? t->name()->c_str() : "", static_cast<unsigned long>(env.arena_size));
    }
  }
  RT_CHECK_OR_RETURN_ERROR(program.sram_weight_scratch_size() == 0 ||
                               (env.weight_scratch != nullptr &&
                                env.weight_scratch_size >= program.sram_weight_scratch_size()),
                           kInvalidArgument,
                           "NPU delegate: weight scratch %lu bytes, payload needs %llu",
                           static_cast<unsigned long>(env.weight_scratch_size),
                           static_cast<unsigned long long>(program.sram_weight_scratch_size()));
  return Error::kOk;
}

void ExecutePrefetch(const NpuPayload& payload, const fb::Prefetch& prefetch,
                     const NpuExecEnv& env) {
  std::memcpy(env.weight_scratch + prefetch.slot() * payload.program->slot_size(),
              payload.weights.data() + prefetch.weights_offset(), prefetch.size());
}

Error ExecuteKernel(const NpuPayload& payload, uint32_t kernel_index, const NpuExecEnv& env) {
  const fb::NpuKernel& k = *payload.program->kernels()->Get(kernel_index);
  const uint8_t* constants_base = payload.weights.data();
  if (k.weight_slot() >= 0) {
    constants_base = env.weight_scratch +
                     static_cast<uint64_t>(k.weight_slot()) * payload.program->slot_size() -
                     k.constants()->offset();
  }
  const Ctx c{payload, env, k, constants_base};
  switch (k.kind()) {
    case fb::KernelKind::Conv2D:
      Conv2D(c);
      break;
    case fb::KernelKind::DepthwiseConv2D:
      DepthwiseConv2D(c);
      break;
    case fb::KernelKind::FullyConnected:
      FullyConnected(c);
      break;
    case fb::KernelKind::AveragePool2D:
      Pool(c, true);
      break;
    case fb::KernelKind::MaxPool2D:
      Pool(c, false);
      break;
    case fb::KernelKind::Add:
      AddSub(c, false);
      break;
    case fb::KernelKind::Sub:
      AddSub(c, true);
      break;
    case fb::KernelKind::Mul:
      Mul(c);
      break;
    case fb::KernelKind::Softmax:
      Softmax(c);
      break;
    case fb::KernelKind::Logistic:
      LogisticTanh(c, false);
      break;
    case fb::KernelKind::Tanh:
      LogisticTanh(c, true);
      break;
    case fb::KernelKind::Relu:
    case fb::KernelKind::Relu6:
      Rescale(c);
      break;
    case fb::KernelKind::LeakyRelu:
      LeakyRelu(c);
      break;
    case fb::KernelKind::HardSwish:
      HardSwish(c);
      break;
    case fb::KernelKind::Concatenation:
      Concatenation(c);
      break;
    case fb::KernelKind::Reshape:
    case fb::KernelKind::Squeeze:
      Copy(c);
      break;
    case fb::KernelKind::Pad:
      Pad(c, false);
      break;
    case fb::KernelKind::PadV2:
      Pad(c, true);
      break;
    case fb::KernelKind::Transpose:
      Transpose(c);
      break;
    case fb::KernelKind::Mean:
      Mean(c);
      break;
    case fb::KernelKind::Maximum:
      MaxMin(c, true);
      break;
    case fb::KernelKind::Minimum:
      MaxMin(c, false);
      break;
    case fb::KernelKind::Slice:
      Slice(c, false);
      break;
    case fb::KernelKind::StridedSlice:
      Slice(c, true);
      break;
    case fb::KernelKind::ResizeNearestNeighbor:
      ResizeNearestNeighbor(c);
      break;
    case fb::KernelKind::Quantize:
      Quantize(c);
      break;
    case fb::KernelKind::Dequantize:
      Dequantize(c);
      break;
    case fb::KernelKind::BatchMatMul:
      BatchMatMul(c);
      break;
    default:
      return Error::kNotSupported;
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::npu
