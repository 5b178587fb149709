#pragma once

// TFLite Micro's arithmetic for the generated op cases (tests/support/op_cases.h), written out
// from its reference kernels independently of the runtime's code: the expected outputs of the
// cases the TFLite interpreter cannot check (op_cases.h `no_oracle`) and of the elements where
// the interpreter's XNNPACK delegate computes differently from TFLite's own kernels. The
// fixed-point primitives come from quantized_math.h, whose results kernel_math_test.cc checks
// on worked numbers; the multipliers from the compiler's QuantizeMultiplier.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "compiler/quantization.h"
#include "runtime/kernels/reference/quantized_math.h"
#include "tests/support/op_cases.h"
#include "tests/support/test_models.h"

namespace boardlab::tflm_reference {

using Bytes = std::vector<uint8_t>;
using testing::CaseModel;
using testing::TflType;

inline std::vector<int8_t> Int8s(const Bytes& b) { return {b.begin(), b.end()}; }
inline Bytes FromInt8s(const std::vector<int8_t>& v) { return {v.begin(), v.end()}; }

inline int64_t ElementCount(const std::vector<int32_t>& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

// Index into a tensor of `in_shape` of the output element `flat` of `out_shape` under numpy
// broadcasting (right-aligned, size-1 dimensions repeat).
inline int64_t BroadcastSource(const std::vector<int32_t>& out_shape,
                               const std::vector<int32_t>& in_shape, int64_t flat) {
  int64_t src = 0, stride = 1;
  for (int d = static_cast<int>(out_shape.size()) - 1; d >= 0; --d) {
    const int64_t index = flat % out_shape[d];
    flat /= out_shape[d];
    const int id = d - static_cast<int>(out_shape.size() - in_shape.size());
    if (id < 0) continue;
    src += (in_shape[id] == 1 ? 0 : index) * stride;
    stride *= in_shape[id];
  }
  return src;
}

// BROADCAST_TO: output element (i_0..i_r) reads input element (j_k = 1 ? 0 : i_k), right-aligned.
inline Bytes BroadcastTo(const testing::TfliteBuilder& b, const CaseModel& m, int in, int out) {
  const std::vector<int32_t>& is = b.tensor(in).shape;
  const std::vector<int32_t>& os = b.tensor(out).shape;
  const int size = testing::TflTypeSize(b.tensor(in).type);
  Bytes result;
  for (int64_t flat = 0; flat < ElementCount(os); ++flat) {
    const int64_t src = BroadcastSource(os, is, flat);
    result.insert(result.end(), m.inputs[0].begin() + src * size,
                  m.inputs[0].begin() + (src + 1) * size);
  }
  return result;
}

// SPACE_TO_BATCH_ND [1,3,2,1] with block (2, 1) and one row of padding on top: output batch
// b, row y, column x reads input row 2y + b - 1; the padded row is raw 0 in TFLite Micro.
inline Bytes SpaceToBatchPaddedRow(const Bytes& input) {
  std::vector<int8_t> in = Int8s(input), out;
  for (int b = 0; b < 2; ++b) {
    for (int y = 0; y < 2; ++y) {
      for (int x = 0; x < 2; ++x) {
        const int row = 2 * y + b - 1;
        out.push_back(row < 0 ? int8_t{0} : in[row * 2 + x]);
      }
    }
  }
  return FromInt8s(out);
}

inline float FloatAt(const Bytes& b, size_t i) {
  float v;
  std::memcpy(&v, b.data() + 4 * i, 4);
  return v;
}

// TFLite's reference_ops::Round (RoundToNearest): ties to even, a negative input that rounds to
// zero gives floor + 1 = +0.
inline float TfliteRoundToNearest(float v) {
  const float floor_v = std::floor(v);
  const float diff = v - floor_v;
  if (diff < 0.5f || (diff == 0.5f && static_cast<int>(floor_v) % 2 == 0)) return floor_v;
  return floor_v + 1.0f;
}

inline Bytes RoundReference(const Bytes& in) {
  Bytes out(in.size());
  for (size_t i = 0; i < in.size() / 4; ++i) {
    const float r = TfliteRoundToNearest(FloatAt(in, i));
    std::memcpy(out.data() + 4 * i, &r, 4);
  }
  return out;
}

// TFLite Micro's ELU table entry for input q (elu.cc PopulateLookupTable): dequantize, x < 0 ?
// exp(x) - 1 : x, times 1 / out_scale, TfLiteRound (half away from zero), + zero point, all in
// float. `ties_to_even` rounds exact ties to even instead, as XNNPACK does.
inline int8_t EluEntry(int8_t q, const testing::QuantParams& in, const testing::QuantParams& out,
                       bool ties_to_even) {
  const float x = in.scales[0] * static_cast<float>(q - in.zero_points[0]);
  const float y = x < 0.0f ? std::exp(x) - 1.0f : x;
  const float t = y * (1 / out.scales[0]);
  const float rounded = ties_to_even ? std::nearbyint(t) : std::round(t);
  const int32_t v = static_cast<int32_t>(rounded + static_cast<float>(out.zero_points[0]));
  return static_cast<int8_t>(std::clamp(v, -128, 127));
}

inline Bytes EluReference(const testing::TfliteBuilder& b, const CaseModel& m) {
  const testing::QuantParams& in = b.tensor(m.input_tensors[0]).quant;
  const testing::QuantParams& out = b.tensor(m.output_tensors[0]).quant;
  std::vector<int8_t> values;
  for (int8_t q : Int8s(m.inputs[0])) values.push_back(EluEntry(q, in, out, false));
  return FromInt8s(values);
}

inline bool IsInt8Case(const CaseModel& m) {
  return m.builder.tensor(m.input_tensors[0]).type == static_cast<int8_t>(TflType::kInt8);
}

// ADD_N's and CUMSUM's int8 rescaling (add_n.cc, cumsum.cc): each (q - zp) << 20 times
// m_in = QuantizeMultiplier(s / 2s), a sum times m_out = QuantizeMultiplier(2s / (2^20 s_out)),
// both with shifts <= 0 (MultiplyByQuantizedMultiplierSmallerThanOneExp).
struct SumRescale {
  compiler::QuantizedMultiplier in, out;
  int32_t zp_in = 0, zp_out = 0;

  SumRescale(const testing::QuantParams& input, const testing::QuantParams& output) {
    const double twice = 2 * static_cast<double>(input.scales[0]);
    in = compiler::QuantizeMultiplier(static_cast<double>(input.scales[0]) / twice);
    out = compiler::QuantizeMultiplier(twice / ((1 << 20) * static_cast<double>(output.scales[0])));
    zp_in = static_cast<int32_t>(input.zero_points[0]);
    zp_out = static_cast<int32_t>(output.zero_points[0]);
  }
  static int32_t Scale(const compiler::QuantizedMultiplier& m, int32_t x) {
    using runtime::kernels::RoundingDivideByPOT;
    using runtime::kernels::SaturatingRoundingDoublingHighMul;
    return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, m.multiplier), -m.shift);
  }
  int32_t Input(int32_t q) const { return Scale(in, (q - zp_in) * (1 << 20)); }
  uint8_t Output(int32_t sum) const {
    return static_cast<uint8_t>(
        static_cast<int8_t>(std::clamp(Scale(out, sum) + zp_out, -128, 127)));
  }
};

// ADD_N int8: TFLite Micro's loop starts each sum at the rescaled -zp (reference add_n.h:
// "x = input1_offset"), then adds every input.
inline Bytes AddNReference(const CaseModel& m) {
  const testing::TfliteBuilder& b = m.builder;
  const SumRescale r(b.tensor(m.input_tensors[0]).quant, b.tensor(m.output_tensors[0]).quant);
  Bytes out(m.inputs[0].size());
  for (size_t i = 0; i < out.size(); ++i) {
    int32_t sum = r.Input(0);
    for (const Bytes& in : m.inputs) sum += r.Input(static_cast<int8_t>(in[i]));
    out[i] = r.Output(sum);
  }
  return out;
}

// CUMSUM int8 (reference cumsum.h): along `axis`, from the end when `reverse`; each running sum
// starts at the rescaled -zp; `exclusive` writes the sum before adding the element.
inline Bytes CumsumReference(const CaseModel& m, int axis, bool exclusive, bool reverse) {
  const testing::TfliteBuilder& b = m.builder;
  const std::vector<int32_t>& shape = b.tensor(m.input_tensors[0]).shape;
  const SumRescale r(b.tensor(m.input_tensors[0]).quant, b.tensor(m.output_tensors[0]).quant);
  if (axis < 0) axis += static_cast<int>(shape.size());
  int64_t before = 1, after = 1;
  for (int d = 0; d < axis; ++d) before *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) after *= shape[d];
  const int64_t depth = shape[axis];
  const Bytes& in = m.inputs[0];
  Bytes out(in.size());
  for (int64_t o = 0; o < before; ++o) {
    for (int64_t i = 0; i < after; ++i) {
      int32_t sum = r.Input(0);
      for (int64_t k = 0; k < depth; ++k) {
        const int64_t at = (o * depth + (reverse ? depth - 1 - k : k)) * after + i;
        const int32_t value = r.Input(static_cast<int8_t>(in[at]));
        if (!exclusive) sum += value;
        out[at] = r.Output(sum);
        if (exclusive) sum += value;
      }
    }
  }
  return out;
}

// RESIZE_BILINEAR int8 (reference_ops::ResizeBilinearInteger): for output index i the source
// sits at i * scale (1/1024 steps; half_pixel_centers adds scale/2 - 512) with scale =
// round(1024 * in / out), or 1024 * (in - 1) / (out - 1) with align_corners. The neighbours
// floor and ceil of it (cut to the input) get weights 1024 - f and f, f = source - 1024 * floor;
// the int64 sum of the four products is divided by 2^20 with the half rounded away from zero.
inline int32_t ResizeSource(int32_t i, int32_t in, int32_t out, bool align, bool half) {
  const int32_t scale = (align && out > 1) ? ((in - 1) * 1024 + (out - 1) / 2) / (out - 1)
                                           : (in * 1024 + out / 2) / out;
  return half ? i * scale + scale / 2 - 512 : i * scale;
}

inline Bytes ResizeBilinearReference(const CaseModel& m, bool align, bool half) {
  const std::vector<int32_t>& is = m.builder.tensor(m.input_tensors[0]).shape;
  const std::vector<int32_t>& os = m.builder.tensor(m.output_tensors[0]).shape;
  const std::vector<int8_t> in = Int8s(m.inputs[0]);
  auto pixel = [&](int b, int y, int x, int c) {
    return int64_t{in[((static_cast<size_t>(b) * is[1] + y) * is[2] + x) * is[3] + c]};
  };
  std::vector<int8_t> out;
  for (int b = 0; b < os[0]; ++b) {
    for (int y = 0; y < os[1]; ++y) {
      const int32_t sy = ResizeSource(y, is[1], os[1], align, half);
      const int32_t y0 = std::max(sy / 1024, 0), y1 = std::min((sy + 1023) / 1024, is[1] - 1);
      for (int x = 0; x < os[2]; ++x) {
        const int32_t sx = ResizeSource(x, is[2], os[2], align, half);
        const int32_t x0 = std::max(sx / 1024, 0), x1 = std::min((sx + 1023) / 1024, is[2] - 1);
        const int64_t fy = sy - 1024 * y0, fx = sx - 1024 * x0;
        for (int c = 0; c < os[3]; ++c) {
          const int64_t sum = pixel(b, y0, x0, c) * (1024 - fy) * (1024 - fx) +
                              pixel(b, y1, x0, c) * fy * (1024 - fx) +
                              pixel(b, y0, x1, c) * (1024 - fy) * fx +
                              pixel(b, y1, x1, c) * fy * fx;
          const int64_t half_step = int64_t{1} << 19;
          out.push_back(
              static_cast<int8_t>((sum + (sum > 0 ? half_step : -half_step)) / (int64_t{1} << 20)));
        }
      }
    }
  }
  return FromInt8s(out);
}

// L2_POOL_2D float32 (reference_ops::L2Pool): per output, the squares of the window's in-bounds
// inputs summed in float (rows outer, columns inner), sqrt(sum / count), then clamped.
inline Bytes L2PoolReference(const CaseModel& m, const testing::Pool2DOpts& o) {
  const std::vector<int32_t>& is = m.builder.tensor(m.input_tensors[0]).shape;
  const std::vector<int32_t>& os = m.builder.tensor(m.output_tensors[0]).shape;
  auto pad = [&](int32_t in, int32_t out, int32_t filter, int32_t stride) {
    if (o.padding == compiler::Padding::kValid) return 0;
    return std::max(0, ((out - 1) * stride + filter - in) / 2);
  };
  const int32_t pad_h = pad(is[1], os[1], o.filter_h, o.stride_h);
  const int32_t pad_w = pad(is[2], os[2], o.filter_w, o.stride_w);
  float lo = -INFINITY, hi = INFINITY;
  if (o.activation == compiler::Activation::kRelu) lo = 0;
  if (o.activation == compiler::Activation::kRelu6) lo = 0, hi = 6;
  if (o.activation == compiler::Activation::kReluN1To1) lo = -1, hi = 1;
  Bytes out;
  for (int b = 0; b < os[0]; ++b) {
    for (int y = 0; y < os[1]; ++y) {
      for (int x = 0; x < os[2]; ++x) {
        for (int c = 0; c < os[3]; ++c) {
          float sum = 0.0f;
          int count = 0;
          for (int fy = 0; fy < o.filter_h; ++fy) {
            for (int fx = 0; fx < o.filter_w; ++fx) {
              const int iy = y * o.stride_h - pad_h + fy, ix = x * o.stride_w - pad_w + fx;
              if (iy < 0 || iy >= is[1] || ix < 0 || ix >= is[2]) continue;
              const float v = FloatAt(
                  m.inputs[0], ((static_cast<size_t>(b) * is[1] + iy) * is[2] + ix) * is[3] + c);
              sum += v * v;
              ++count;
            }
          }
          const float r = std::min(std::max(std::sqrt(sum / static_cast<float>(count)), lo), hi);
          const auto* p = reinterpret_cast<const uint8_t*>(&r);
          out.insert(out.end(), p, p + 4);
        }
      }
    }
  }
  return out;
}

}  // namespace boardlab::tflm_reference
