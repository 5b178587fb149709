#include "runtime/kernels/reference/depthwise_conv2d_s8.h"

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

}  // namespace

size_t depthwise_conv2d_s8_get_buffer_size(const Dims4& output_dims) {
  return static_cast<size_t>(output_dims.c) * sizeof(int32_t);
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
