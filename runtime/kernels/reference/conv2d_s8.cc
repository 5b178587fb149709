#include "runtime/kernels/reference/conv2d_s8.h"

#include "runtime/kernels/reference/int8_dot.h"
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

// Ungrouped convolution through a widened im2col row per output pixel (`row` holds
// KH * KW * Cin int16): out[oc] = requant(bias[oc] + dot(filter[oc], row)), 4 channels per pass.
void Conv2DIm2Row(const ConvParams& p, const ChannelQuant& q, const Dims4& in, const int8_t* input,
                  const Dims4& f, const int8_t* filter, const int32_t* bias, const Dims4& out,
                  int8_t* output, int16_t* row) {
  const int32_t kc = f.c;
  const int32_t k_len = f.h * f.w * kc;
  const int32_t input_offset = p.input_offset;
  const int32_t per_channel = q.count == 1 ? 0 : 1;
  const int32_t out_offset = p.out.output_offset, act_min = p.out.act_min;
  const int32_t act_max = p.out.act_max;
  const bool pointwise = f.h == 1 && f.w == 1;
  for (int32_t b = 0; b < out.n; ++b) {
    const int8_t* in_b = input + static_cast<int64_t>(b) * in.h * in.w * in.c;
    for (int32_t oy = 0; oy < out.h; ++oy) {
      const int32_t y0 = oy * p.stride_h - p.pad_top;
      for (int32_t ox = 0; ox < out.w; ++ox) {
        const int32_t x0 = ox * p.stride_w - p.pad_left;
        if (pointwise && y0 >= 0 && y0 < in.h && x0 >= 0 && x0 < in.w) {
          WidenWithOffset(in_b + (static_cast<int64_t>(y0) * in.w + x0) * in.c, kc, input_offset,
                          row);
        } else {
          int16_t* r = row;
          for (int32_t ky = 0; ky < f.h; ++ky) {
            const int32_t y = y0 + ky * p.dilation_h;
            for (int32_t kx = 0; kx < f.w; ++kx, r += kc) {
              const int32_t x = x0 + kx * p.dilation_w;
              if (y < 0 || y >= in.h || x < 0 || x >= in.w) {
                for (int32_t ic = 0; ic < kc; ++ic) r[ic] = 0;
              } else {
                WidenWithOffset(in_b + (static_cast<int64_t>(y) * in.w + x) * in.c, kc,
                                input_offset, r);
              }
            }
          }
        }
        int8_t* out_px = output + ((static_cast<int64_t>(b) * out.h + oy) * out.w + ox) * out.c;
        int32_t acc[4];
        int32_t oc = 0;
        for (; oc < out.c; oc += 4) {
          const int8_t* f_oc = filter + static_cast<int64_t>(oc) * k_len;
          const int32_t n = out.c - oc < 4 ? out.c - oc : 4;
          if (n == 4) {
            DotRows4(f_oc, k_len, row, k_len, acc);
          } else {
            for (int32_t i = 0; i < n; ++i) acc[i] = DotRow(f_oc + int64_t{i} * k_len, row, k_len);
          }
          for (int32_t i = 0; i < n; ++i) {
            int32_t a = acc[i] + (bias != nullptr ? bias[oc + i] : 0);
            const int32_t qi = (oc + i) * per_channel;
            a = MultiplyByQuantizedMultiplier(a, q.multiplier[qi], q.shift[qi]);
            out_px[oc + i] = ClampToInt8(a + out_offset, act_min, act_max);
          }
        }
      }
    }
  }
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
  const size_t row_bytes = conv2d_s8_get_buffer_size(in, f);
  // Any int8 zero point keeps input + offset within [-255, 255] (int16).
  const bool small_offset = p.input_offset >= -127 && p.input_offset <= 128;
  if (row_bytes > 0 && small_offset && scratch != nullptr && scratch_bytes >= row_bytes) {
    Conv2DIm2Row(p, q, in, input, f, filter, bias, out, output, static_cast<int16_t*>(scratch));
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

size_t conv2d_s8_get_buffer_size(const Dims4& input_dims, const Dims4& filter_dims) {
  if (filter_dims.c <= 0 || input_dims.c != filter_dims.c) return 0;
  return static_cast<size_t>(filter_dims.h) * filter_dims.w * filter_dims.c * sizeof(int16_t);
}

}  // namespace boardlab::runtime::kernels
