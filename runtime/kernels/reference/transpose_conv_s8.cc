#include "runtime/kernels/reference/transpose_conv_s8.h"

#include "runtime/kernels/reference/requantize_s8.h"

namespace boardlab::runtime::kernels {
namespace {

// Output channels accumulated together (256 bytes of int32 sums).
constexpr int32_t kChannelBlock = 64;

// The input row (or column) that tap `k` of output position `o` reads, or -1 where none does.
int32_t SourceIndex(int32_t o, int32_t k, int32_t pad, int32_t stride, int32_t size) {
  const int32_t t = o + pad - k;
  if (t < 0 || t % stride != 0) return -1;
  const int32_t i = t / stride;
  return i < size ? i : -1;
}

// Sums the products of output pixel (b, y, x) for output channels [oc0, oc0 + n) into acc. The
// tap's source pixel is found once for all n channels.
void AccumulateChannels(const ConvParams& p, const Dims4& in, const int8_t* input, const Dims4& f,
                        const int8_t* filter, int32_t b, int32_t y, int32_t x, int32_t oc0,
                        int32_t n, int32_t* acc) {
  for (int32_t k = 0; k < n; ++k) acc[k] = 0;
  const int64_t filter_stride = static_cast<int64_t>(f.h) * f.w * f.c;  // one output channel's
  for (int32_t fy = 0; fy < f.h; ++fy) {
    const int32_t iy = SourceIndex(y, fy, p.pad_top, p.stride_h, in.h);
    if (iy < 0) continue;
    for (int32_t fx = 0; fx < f.w; ++fx) {
      const int32_t ix = SourceIndex(x, fx, p.pad_left, p.stride_w, in.w);
      if (ix < 0) continue;
      const int8_t* px = input + ((static_cast<int64_t>(b) * in.h + iy) * in.w + ix) * in.c;
      const int8_t* w = filter + oc0 * filter_stride + (static_cast<int64_t>(fy) * f.w + fx) * f.c;
      for (int32_t k = 0; k < n; ++k, w += filter_stride) {
        uint32_t sum = static_cast<uint32_t>(acc[k]);  // wraps like the reference's int32 sums
        for (int32_t ic = 0; ic < in.c; ++ic) {
          sum += static_cast<uint32_t>((px[ic] + p.input_offset) * w[ic]);
        }
        acc[k] = static_cast<int32_t>(sum);
      }
    }
  }
}

}  // namespace

Error transpose_conv_s8(const ConvParams& p, const ChannelQuant& q, const Dims4& in,
                        const int8_t* input, const Dims4& f, const int8_t* filter,
                        const int32_t* bias, const Dims4& out, int8_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && filter != nullptr && output != nullptr,
                           kInvalidArgument, "transpose_conv_s8: null tensor");
  RT_CHECK_OR_RETURN_ERROR(p.stride_h > 0 && p.stride_w > 0 && in.n == out.n && in.c == f.c &&
                               f.n == out.c && (q.count == 1 || q.count == out.c),
                           kInvalidArgument, "transpose_conv_s8: shapes do not match");
  // The sums of a block of output channels live on the stack: the firmware has no heap, and a
  // block keeps the tap arithmetic per (pixel, tap) rather than per (pixel, tap, channel).
  int32_t acc[kChannelBlock];
  int8_t* dst = output;
  for (int32_t b = 0; b < out.n; ++b) {
    for (int32_t y = 0; y < out.h; ++y) {
      for (int32_t x = 0; x < out.w; ++x) {
        for (int32_t oc0 = 0; oc0 < out.c; oc0 += kChannelBlock) {
          const int32_t n = out.c - oc0 < kChannelBlock ? out.c - oc0 : kChannelBlock;
          AccumulateChannels(p, in, input, f, filter, b, y, x, oc0, n, acc);
          requantize_quant_s8(acc, bias != nullptr ? bias + oc0 : nullptr, q, oc0, n, p.out,
                              /*saturate_bias=*/false, dst);
          dst += n;
        }
      }
    }
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
