#include "runtime/kernels/reference/conv_s16.h"

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

// The accumulator types of the two conv flavours and their requantization.
int32_t Requantize(int64_t acc, int32_t multiplier, int32_t shift) {
  return MultiplyByQuantizedMultiplier64(acc, multiplier, shift);
}
int32_t Requantize(int32_t acc, int32_t multiplier, int32_t shift) {
  return MultiplyByQuantizedMultiplier(acc, multiplier, shift);
}

// acc + v with the reference's two's-complement wrap-around (signed overflow is undefined in
// C++, so the sum is formed unsigned).
int64_t WrapAdd(int64_t acc, int64_t v) {
  return static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
}
int32_t WrapAdd(int32_t acc, int32_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(v));
}

// Requantizes and clamps one output of channel `c`.
template <typename Acc>
int16_t Output(Acc acc, const ChannelQuant& q, int32_t c, const OutputStage& out) {
  const int32_t k = q.count == 1 ? 0 : c;
  return ClampToInt16(Requantize(acc, q.multiplier[k], q.shift[k]), out.act_min, out.act_max);
}

bool ValidStage(const OutputStage& out) {
  return out.output_offset == 0 && -32768 <= out.act_min && out.act_min <= out.act_max &&
         out.act_max <= 32767;
}

bool ValidQuant(const ChannelQuant& q, int32_t channels) {
  return q.multiplier != nullptr && q.shift != nullptr && (q.count == 1 || q.count == channels);
}

// Calls body(b, oy, ox, oc, index) for every output element in row-major (NHWC) order.
template <typename F>
void ForEachOutput(const Dims4& out, F&& body) {
  int64_t index = 0;
  for (int32_t b = 0; b < out.n; ++b) {
    for (int32_t oy = 0; oy < out.h; ++oy) {
      for (int32_t ox = 0; ox < out.w; ++ox) {
        for (int32_t oc = 0; oc < out.c; ++oc) body(b, oy, ox, oc, index++);
      }
    }
  }
}

// Calls tap(y, x, ky, kx) for every filter tap of output (oy, ox) that lands inside the input;
// taps outside are skipped, which is TFLite's zero padding (16x8 has no zero point).
template <typename F>
void ForEachTap(const ConvParams& p, const Dims4& in, const Dims4& f, int32_t oy, int32_t ox,
                F&& tap) {
  for (int32_t ky = 0; ky < f.h; ++ky) {
    const int32_t y = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
    if (y < 0 || y >= in.h) continue;
    for (int32_t kx = 0; kx < f.w; ++kx) {
      const int32_t x = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
      if (x >= 0 && x < in.w) tap(y, x, ky, kx);
    }
  }
}

template <typename Acc, typename Bias>
Error Conv(const char* name, const ConvParams& p, const ChannelQuant& q, const Dims4& in_dims,
           const int16_t* in, const Dims4& f_dims, const int8_t* filter, const Bias* bias,
           const Dims4& out_dims, int16_t* out) {
  RT_CHECK_OR_RETURN_ERROR(in != nullptr && filter != nullptr && out != nullptr, kInvalidArgument,
                           "%s: null tensor", name);
  RT_CHECK_OR_RETURN_ERROR(p.stride_h > 0 && p.stride_w > 0 && p.dilation_h > 0 &&
                               p.dilation_w > 0 && p.input_offset == 0 && ValidStage(p.out),
                           kInvalidArgument, "%s: bad geometry or output stage", name);
  const int32_t depth = f_dims.c;
  RT_CHECK_OR_RETURN_ERROR(depth > 0 && in_dims.c % depth == 0 && f_dims.n == out_dims.c &&
                               in_dims.n == out_dims.n && ValidQuant(q, out_dims.c) &&
                               out_dims.c % (in_dims.c / depth) == 0,
                           kInvalidArgument, "%s: shapes do not match", name);
  const int32_t per_group = out_dims.c / (in_dims.c / depth);
  ForEachOutput(out_dims, [&](int32_t b, int32_t oy, int32_t ox, int32_t oc, int64_t index) {
    const int32_t first_in_c = (oc / per_group) * depth;
    Acc acc = 0;
    ForEachTap(p, in_dims, f_dims, oy, ox, [&](int32_t y, int32_t x, int32_t ky, int32_t kx) {
      const int16_t* pixel = in + ((int64_t{b} * in_dims.h + y) * in_dims.w + x) * in_dims.c;
      const int8_t* taps = filter + ((int64_t{oc} * f_dims.h + ky) * f_dims.w + kx) * depth;
      for (int32_t ic = 0; ic < depth; ++ic) {
        acc = WrapAdd(acc, static_cast<Acc>(int32_t{taps[ic]} * pixel[first_in_c + ic]));
      }
    });
    if (bias != nullptr) acc = WrapAdd(acc, static_cast<Acc>(bias[oc]));
    out[index] = Output(acc, q, oc, p.out);
  });
  return Error::kOk;
}

}  // namespace

bool ShiftsFitRequantize64(const ChannelQuant& quant) {
  for (int32_t i = 0; i < quant.count; ++i) {
    if (quant.shift[i] < -31 || quant.shift[i] > 7) return false;
  }
  return true;
}

Error conv2d_s16(const ConvParams& p, const ChannelQuant& q, const Dims4& in_dims,
                 const int16_t* in, const Dims4& f_dims, const int8_t* filter, const int64_t* bias,
                 const Dims4& out_dims, int16_t* out) {
  RT_CHECK_OR_RETURN_ERROR(ShiftsFitRequantize64(q), kInvalidArgument,
                           "conv2d_s16: shift outside [-31, 7]");
  return Conv<int64_t>("conv2d_s16", p, q, in_dims, in, f_dims, filter, bias, out_dims, out);
}

Error conv2d_s16_acc32(const ConvParams& p, const ChannelQuant& q, const Dims4& in_dims,
                       const int16_t* in, const Dims4& f_dims, const int8_t* filter,
                       const int32_t* bias, const Dims4& out_dims, int16_t* out) {
  return Conv<int32_t>("conv2d_s16_acc32", p, q, in_dims, in, f_dims, filter, bias, out_dims, out);
}

Error depthwise_conv2d_s16(const DepthwiseConvParams& dp, const ChannelQuant& q,
                           const Dims4& in_dims, const int16_t* in, const Dims4& f_dims,
                           const int8_t* filter, const int64_t* bias, const Dims4& out_dims,
                           int16_t* out) {
  const ConvParams& p = dp.conv;
  const int32_t m = dp.depth_multiplier;
  RT_CHECK_OR_RETURN_ERROR(in != nullptr && filter != nullptr && out != nullptr, kInvalidArgument,
                           "depthwise_conv2d_s16: null tensor");
  RT_CHECK_OR_RETURN_ERROR(p.stride_h > 0 && p.stride_w > 0 && p.dilation_h > 0 &&
                               p.dilation_w > 0 && m > 0 && p.input_offset == 0 &&
                               ValidStage(p.out) && ShiftsFitRequantize64(q),
                           kInvalidArgument, "depthwise_conv2d_s16: bad geometry or output stage");
  RT_CHECK_OR_RETURN_ERROR(f_dims.n == 1 && f_dims.c == out_dims.c && out_dims.c == in_dims.c * m &&
                               in_dims.n == out_dims.n && ValidQuant(q, out_dims.c),
                           kInvalidArgument, "depthwise_conv2d_s16: shapes do not match");
  ForEachOutput(out_dims, [&](int32_t b, int32_t oy, int32_t ox, int32_t oc, int64_t index) {
    const int32_t ic = oc / m;
    int64_t acc = 0;
    ForEachTap(p, in_dims, f_dims, oy, ox, [&](int32_t y, int32_t x, int32_t ky, int32_t kx) {
      const int16_t v = in[((int64_t{b} * in_dims.h + y) * in_dims.w + x) * in_dims.c + ic];
      acc += int64_t{filter[(int64_t{ky} * f_dims.w + kx) * f_dims.c + oc]} * v;
    });
    if (bias != nullptr) acc = WrapAdd(acc, bias[oc]);
    out[index] = Output(acc, q, oc, p.out);
  });
  return Error::kOk;
}

Error fully_connected_s16(const OutputStage& stage, const ChannelQuant& q, int32_t batches,
                          int32_t depth, int32_t units, const int16_t* in, const int8_t* weights,
                          const int64_t* bias, int16_t* out) {
  RT_CHECK_OR_RETURN_ERROR(in != nullptr && weights != nullptr && out != nullptr, kInvalidArgument,
                           "fully_connected_s16: null tensor");
  RT_CHECK_OR_RETURN_ERROR(batches >= 0 && depth > 0 && units > 0 && ValidStage(stage) &&
                               ValidQuant(q, units) && ShiftsFitRequantize64(q),
                           kInvalidArgument, "fully_connected_s16: bad shapes or output stage");
  for (int32_t b = 0; b < batches; ++b) {
    const int16_t* row = in + int64_t{b} * depth;
    for (int32_t u = 0; u < units; ++u) {
      const int8_t* w = weights + int64_t{u} * depth;
      int64_t acc = 0;
      for (int32_t d = 0; d < depth; ++d) acc += int32_t{w[d]} * row[d];
      if (bias != nullptr) acc = WrapAdd(acc, bias[u]);
      out[int64_t{b} * units + u] = Output(acc, q, u, stage);
    }
  }
  return Error::kOk;
}

Error transpose_conv_s16(const ConvParams& p, const ChannelQuant& q, const Dims4& in_dims,
                         const int16_t* in, const Dims4& f_dims, const int8_t* filter,
                         const int64_t* bias, const Dims4& out_dims, int16_t* out) {
  RT_CHECK_OR_RETURN_ERROR(in != nullptr && filter != nullptr && out != nullptr, kInvalidArgument,
                           "transpose_conv_s16: null tensor");
  RT_CHECK_OR_RETURN_ERROR(p.stride_h > 0 && p.stride_w > 0 && p.pad_top >= 0 && p.pad_left >= 0 &&
                               p.input_offset == 0 && ValidStage(p.out) && ShiftsFitRequantize64(q),
                           kInvalidArgument, "transpose_conv_s16: bad geometry or output stage");
  RT_CHECK_OR_RETURN_ERROR(in_dims.c == f_dims.c && f_dims.n == out_dims.c &&
                               in_dims.n == out_dims.n && ValidQuant(q, out_dims.c),
                           kInvalidArgument, "transpose_conv_s16: shapes do not match");
  ForEachOutput(out_dims, [&](int32_t b, int32_t oy, int32_t ox, int32_t oc, int64_t index) {
    // Input (y, x) reaches output y * stride - pad + tap: gather the taps that land here.
    int64_t acc = 0;
    for (int32_t ky = 0; ky < f_dims.h; ++ky) {
      const int32_t ty = oy + p.pad_top - ky;
      if (ty < 0 || ty % p.stride_h != 0 || ty / p.stride_h >= in_dims.h) continue;
      for (int32_t kx = 0; kx < f_dims.w; ++kx) {
        const int32_t tx = ox + p.pad_left - kx;
        if (tx < 0 || tx % p.stride_w != 0 || tx / p.stride_w >= in_dims.w) continue;
        const int16_t* pixel =
            in +
            ((int64_t{b} * in_dims.h + ty / p.stride_h) * in_dims.w + tx / p.stride_w) * in_dims.c;
        const int8_t* taps = filter + ((int64_t{oc} * f_dims.h + ky) * f_dims.w + kx) * f_dims.c;
        for (int32_t ic = 0; ic < in_dims.c; ++ic) acc += int32_t{taps[ic]} * pixel[ic];
      }
    }
    if (bias != nullptr) acc = WrapAdd(acc, bias[oc]);
    out[index] = Output(acc, q, oc, p.out);
  });
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
