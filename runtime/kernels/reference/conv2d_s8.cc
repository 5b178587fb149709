#include "runtime/kernels/reference/conv2d_s8.h"

#include "runtime/kernels/reference/quantized_math.h"

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

}  // namespace

Error conv2d_s8(const ConvParams& p, const ChannelQuant& q, const Dims4& in, const int8_t* input,
                const Dims4& f, const int8_t* filter, const int32_t* bias, const Dims4& out,
                int8_t* output) {
  RT_RETURN_IF_ERROR(CheckConv(p, q, in, input, f, filter, out, output));
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
          if (bias != nullptr) acc += bias[oc];
          const int32_t qi = oc * per_channel;
          acc = MultiplyByQuantizedMultiplier(acc, q.multiplier[qi], q.shift[qi]);
          out_px[oc] = ClampToInt8(acc + p.out.output_offset, p.out.act_min, p.out.act_max);
        }
      }
    }
  }
  return Error::kOk;
}

size_t conv2d_s8_get_buffer_size(const Dims4& /*input_dims*/, const Dims4& /*filter_dims*/) {
  return 0;
}

}  // namespace boardlab::runtime::kernels
