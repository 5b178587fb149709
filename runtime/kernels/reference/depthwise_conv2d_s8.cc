#include "runtime/kernels/reference/depthwise_conv2d_s8.h"

#include "runtime/kernels/reference/int8_dot.h"
#include "runtime/kernels/reference/quantized_math.h"
#include "runtime/kernels/reference/requantize_s8.h"

namespace boardlab::runtime::kernels {
namespace {

// Filter taps gathered per output pixel for the register-blocked path (8x8 kernels and below).
constexpr int32_t kMaxTaps = 64;

int32_t SaturatingAdd(int32_t a, int32_t b) {
  const int64_t sum = int64_t{a} + b;
  return static_cast<int32_t>(sum < kInt32Min ? kInt32Min : sum > kInt32Max ? kInt32Max : sum);
}

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
  for (int32_t b = 0; b < out.n; ++b) {
    const int8_t* in_b = input + static_cast<int64_t>(b) * in.h * in.w * in.c;
    for (int32_t oy = 0; oy < out.h; ++oy) {
      const int32_t y0 = oy * p.stride_h - p.pad_top;
      for (int32_t ox = 0; ox < out.w; ++ox) {
        const int32_t x0 = ox * p.stride_w - p.pad_left;
        if (m == 1 && small_offset && f.h * f.w <= kMaxTaps) {
          // Register-blocked path: collect the pixel's valid taps, then all channels at once.
          const int8_t* xs[kMaxTaps];
          const int8_t* ws[kMaxTaps];
          int32_t taps = 0;
          for (int32_t ky = 0; ky < f.h; ++ky) {
            const int32_t y = y0 + ky * p.dilation_h;
            if (y < 0 || y >= in.h) continue;
            for (int32_t kx = 0; kx < f.w; ++kx) {
              const int32_t x = x0 + kx * p.dilation_w;
              if (x < 0 || x >= in.w) continue;
              xs[taps] = in_b + (static_cast<int64_t>(y) * in.w + x) * in.c;
              ws[taps++] = filter + static_cast<int64_t>(ky * f.w + kx) * f.c;
            }
          }
          DepthwiseDotTaps(xs, ws, taps, out_c, input_offset, acc);
          if (bias != nullptr && !p.saturate_bias) {
            for (int32_t oc = 0; oc < out_c; ++oc) acc[oc] += bias[oc];
          }
        } else {
          for (int32_t oc = 0; oc < out_c; ++oc) {
            acc[oc] = bias != nullptr && !p.saturate_bias ? bias[oc] : 0;
          }
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
        // A saturating bias is added by the requantization (the plain one is in acc already).
        const int32_t* late_bias = p.saturate_bias ? bias : nullptr;
        if (per_channel) {
          requantize_channels_s8(acc, late_bias, q.multiplier, q.shift, out_c, p.out,
                                 p.saturate_bias, out_px);
          continue;
        }
        for (int32_t oc = 0; oc < out_c; ++oc) {
          const int32_t qi = oc * per_channel;
          const int32_t a = late_bias != nullptr ? SaturatingAdd(acc[oc], late_bias[oc]) : acc[oc];
          const int32_t r = MultiplyByQuantizedMultiplier(a, q.multiplier[qi], q.shift[qi]);
          out_px[oc] = ClampToInt8(r + p.out.output_offset, p.out.act_min, p.out.act_max);
        }
      }
    }
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
