#include "runtime/kernels/reference/pooling_s8.h"

#include <cmath>
#include <limits>

#include "runtime/kernels/reference/quantized_math.h"

namespace boardlab::runtime::kernels {
namespace {

Error CheckPool(const char* name, const PoolParams& p, const Dims4& in, const void* input,
                const Dims4& out, const void* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr, kInvalidArgument,
                           "%s: null tensor", name);
  RT_CHECK_OR_RETURN_ERROR(p.stride_h > 0 && p.stride_w > 0 && p.filter_h > 0 && p.filter_w > 0,
                           kInvalidArgument, "%s: stride and filter must be positive", name);
  RT_CHECK_OR_RETURN_ERROR(in.n == out.n && in.c == out.c, kInvalidArgument,
                           "%s: batch/channel mismatch", name);
  return Error::kOk;
}

// Calls body(y_begin, y_end, x_begin, x_end, out_pixel) for every output pixel, with the window
// already cut to the input.
template <typename F>
Error ForEachWindow(const PoolParams& p, const Dims4& in, const Dims4& out, F&& body) {
  for (int32_t b = 0; b < out.n; ++b) {
    for (int32_t oy = 0; oy < out.h; ++oy) {
      const int32_t y0 = oy * p.stride_h - p.pad_top;
      const int32_t ys = Max32(0, y0), ye = Min32(in.h, y0 + p.filter_h);
      for (int32_t ox = 0; ox < out.w; ++ox) {
        const int32_t x0 = ox * p.stride_w - p.pad_left;
        const int32_t xs = Max32(0, x0), xe = Min32(in.w, x0 + p.filter_w);
        RT_CHECK_OR_RETURN_ERROR(ys < ye && xs < xe, kInvalidArgument,
                                 "pool: window at (%d, %d) holds no input", static_cast<int>(oy),
                                 static_cast<int>(ox));
        body(b, ys, ye, xs, xe, ((static_cast<int64_t>(b) * out.h + oy) * out.w + ox) * out.c);
      }
    }
  }
  return Error::kOk;
}

template <typename T>
Error AvgPool(const char* name, const PoolParams& p, const Dims4& in, const T* input,
              const Dims4& out, T* output) {
  RT_RETURN_IF_ERROR(CheckPool(name, p, in, input, out, output));
  return ForEachWindow(
      p, in, out, [&](int32_t b, int32_t ys, int32_t ye, int32_t xs, int32_t xe, int64_t o) {
        const int32_t count = (ye - ys) * (xe - xs);
        for (int32_t c = 0; c < in.c; ++c) {
          int32_t sum = 0;
          for (int32_t y = ys; y < ye; ++y) {
            const T* row = input + ((static_cast<int64_t>(b) * in.h + y) * in.w) * in.c + c;
            for (int32_t x = xs; x < xe; ++x) sum += row[x * in.c];
          }
          // Round half away from zero; C division truncates toward zero.
          const int32_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
          output[o + c] = static_cast<T>(Min32(Max32(avg, p.act_min), p.act_max));
        }
      });
}

template <typename T>
Error MaxPool(const char* name, const PoolParams& p, const Dims4& in, const T* input,
              const Dims4& out, T* output) {
  RT_RETURN_IF_ERROR(CheckPool(name, p, in, input, out, output));
  return ForEachWindow(
      p, in, out, [&](int32_t b, int32_t ys, int32_t ye, int32_t xs, int32_t xe, int64_t o) {
        T* dst = output + o;
        for (int32_t c = 0; c < in.c; ++c) dst[c] = std::numeric_limits<T>::lowest();
        for (int32_t y = ys; y < ye; ++y) {
          for (int32_t x = xs; x < xe; ++x) {
            const T* px = input + ((static_cast<int64_t>(b) * in.h + y) * in.w + x) * in.c;
            for (int32_t c = 0; c < in.c; ++c) {
              if (px[c] > dst[c]) dst[c] = px[c];
            }
          }
        }
        for (int32_t c = 0; c < in.c; ++c) {
          dst[c] = static_cast<T>(Min32(Max32(dst[c], p.act_min), p.act_max));
        }
      });
}

}  // namespace

Error avgpool_s8(const PoolParams& p, const Dims4& in, const int8_t* input, const Dims4& out,
                 int8_t* output) {
  return AvgPool("avgpool_s8", p, in, input, out, output);
}

Error avgpool_s16(const PoolParams& p, const Dims4& in, const int16_t* input, const Dims4& out,
                  int16_t* output) {
  return AvgPool("avgpool_s16", p, in, input, out, output);
}

Error maxpool_s8(const PoolParams& p, const Dims4& in, const int8_t* input, const Dims4& out,
                 int8_t* output) {
  return MaxPool("maxpool_s8", p, in, input, out, output);
}

Error maxpool_s16(const PoolParams& p, const Dims4& in, const int16_t* input, const Dims4& out,
                  int16_t* output) {
  return MaxPool("maxpool_s16", p, in, input, out, output);
}

Error l2pool_f32(const PoolParams& p, float act_min, float act_max, const Dims4& in,
                 const float* input, const Dims4& out, float* output) {
  RT_RETURN_IF_ERROR(CheckPool("l2pool_f32", p, in, input, out, output));
  return ForEachWindow(
      p, in, out, [&](int32_t b, int32_t ys, int32_t ye, int32_t xs, int32_t xe, int64_t o) {
        const int32_t count = (ye - ys) * (xe - xs);
        for (int32_t c = 0; c < in.c; ++c) {
          float sum_squares = 0.0f;
          for (int32_t y = ys; y < ye; ++y) {
            const float* row = input + ((static_cast<int64_t>(b) * in.h + y) * in.w) * in.c + c;
            for (int32_t x = xs; x < xe; ++x) sum_squares += row[x * in.c] * row[x * in.c];
          }
          const float v = std::sqrt(sum_squares / static_cast<float>(count));
          output[o + c] = v < act_min ? act_min : (v > act_max ? act_max : v);
        }
      });
}

}  // namespace boardlab::runtime::kernels
