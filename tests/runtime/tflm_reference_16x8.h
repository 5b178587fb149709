#pragma once

// TFLite Micro's 16x8 arithmetic for the generated int16 cases (tests/support/int16_cases.cc),
// written out from its reference kernels (reference_integer_ops ConvPerChannel for int16 input,
// Requantize, the int16 Logistic / Tanh; ADD and SUB are in tflm_reference_arith.h) in their
// loop order, independently of the runtime's kernels: the expected outputs of the cases the
// TFLite interpreter cannot check (`no_oracle`).
// Multipliers come from the compiler's QuantizeMultiplier, as TFLite's Prepare computes them.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <variant>
#include <vector>

#include "compiler/quantization.h"
#include "runtime/kernels/reference/activations_s16.h"
#include "runtime/kernels/reference/quantized_math.h"
#include "tests/runtime/tflm_reference_arith.h"
#include "tests/support/op_cases.h"
#include "tests/support/test_models.h"

namespace boardlab::tflm_reference {

using Bytes16 = std::vector<uint8_t>;

template <typename T>
std::vector<T> ValuesOf(const std::vector<uint8_t>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}

template <typename T>
Bytes16 BytesOf(const std::vector<T>& v) {
  Bytes16 bytes(v.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

// CalculateActivationRangeQuantized for an int16 output (zero point 0).
inline compiler::ActivationRange Int16Range(compiler::Activation act, float scale) {
  return compiler::ComputeActivationRange(act, scale, 0, std::numeric_limits<int16_t>::min(),
                                          std::numeric_limits<int16_t>::max());
}

// ConvPerChannel for int16 input, int8 filter and an int32 accumulator: what TFLite Micro runs
// for a 16x8 CONV_2D with an int32 bias or none (no zero points in 16x8).
inline Bytes16 Conv16x8Acc32Reference(const CaseModel& m) {
  const testing::TfliteBuilder& b = m.builder;
  const testing::TfliteBuilder::OperatorSpec& op = b.operator_spec(0);
  const auto& o = std::get<testing::Conv2DOpts>(op.options);
  const auto& in_t = b.tensor(op.inputs[0]);
  const auto& w_t = b.tensor(op.inputs[1]);
  const auto& out_t = b.tensor(op.outputs[0]);
  const std::vector<int16_t> input = ValuesOf<int16_t>(m.inputs[0]);
  const std::vector<int8_t> filter = ValuesOf<int8_t>(b.buffer(w_t.buffer));
  std::vector<int32_t> bias;
  if (op.inputs[2] >= 0) bias = ValuesOf<int32_t>(b.buffer(b.tensor(op.inputs[2]).buffer));
  const int batches = in_t.shape[0], in_h = in_t.shape[1], in_w = in_t.shape[2];
  const int in_depth = in_t.shape[3];
  const int out_depth = w_t.shape[0], f_h = w_t.shape[1], f_w = w_t.shape[2];
  const int f_depth = w_t.shape[3];
  const int out_h = out_t.shape[1], out_w = out_t.shape[2];
  const int per_group = out_depth / (in_depth / f_depth);
  auto pad = [&](int in, int out, int k, int stride, int dilation) {
    if (o.padding != compiler::Padding::kSame) return 0;
    const int effective = (k - 1) * dilation + 1;
    return std::max(0, (out - 1) * stride + effective - in) / 2;
  };
  const int pad_h = pad(in_h, out_h, f_h, o.stride_h, o.dilation_h);
  const int pad_w = pad(in_w, out_w, f_w, o.stride_w, o.dilation_w);
  const compiler::ActivationRange range = Int16Range(o.activation, out_t.quant.scales[0]);
  std::vector<int16_t> out;
  for (int n = 0; n < batches; ++n) {
    for (int oy = 0; oy < out_h; ++oy) {
      for (int ox = 0; ox < out_w; ++ox) {
        for (int oc = 0; oc < out_depth; ++oc) {
          const int group = oc / per_group;
          int32_t acc = 0;
          for (int ky = 0; ky < f_h; ++ky) {
            const int y = oy * o.stride_h - pad_h + o.dilation_h * ky;
            for (int kx = 0; kx < f_w; ++kx) {
              const int x = ox * o.stride_w - pad_w + o.dilation_w * kx;
              if (x < 0 || x >= in_w || y < 0 || y >= in_h) continue;
              for (int ic = 0; ic < f_depth; ++ic) {
                const int32_t v =
                    input[((n * in_h + y) * in_w + x) * in_depth + ic + group * f_depth];
                const int32_t f = filter[((oc * f_h + ky) * f_w + kx) * f_depth + ic];
                acc += f * v;
              }
            }
          }
          if (!bias.empty()) acc += bias[oc];
          const float w_scale = w_t.quant.scales[w_t.quant.scales.size() == 1 ? 0 : oc];
          const compiler::QuantizedMultiplier qm = compiler::QuantizeMultiplier(
              static_cast<double>(in_t.quant.scales[0]) * w_scale / out_t.quant.scales[0]);
          int32_t scaled =
              runtime::kernels::MultiplyByQuantizedMultiplier(acc, qm.multiplier, qm.shift);
          scaled = std::min(std::max(scaled, range.min), range.max);
          out.push_back(static_cast<int16_t>(scaled));
        }
      }
    }
  }
  return BytesOf(out);
}

// reference_ops::Requantize from int8 to int16: MultiplyByQuantizedMultiplier(x - in_zp) with
// QuantizeMultiplier(in_scale / out_scale), plus the output zero point, clamped to int16.
inline Bytes16 Requantize8To16Reference(const CaseModel& m) {
  const testing::TfliteBuilder& b = m.builder;
  const testing::TfliteBuilder::OperatorSpec& op = b.operator_spec(0);
  const testing::QuantParams& in = b.tensor(op.inputs[0]).quant;
  const testing::QuantParams& out = b.tensor(op.outputs[0]).quant;
  const compiler::QuantizedMultiplier qm = compiler::QuantizeMultiplier(
      static_cast<double>(in.scales[0]) / static_cast<double>(out.scales[0]));
  std::vector<int16_t> result;
  for (int8_t x : ValuesOf<int8_t>(m.inputs[0])) {
    const int32_t v = runtime::kernels::MultiplyByQuantizedMultiplier(
                          x - static_cast<int32_t>(in.zero_points[0]), qm.multiplier, qm.shift) +
                      static_cast<int32_t>(out.zero_points[0]);
    result.push_back(static_cast<int16_t>(std::min(32767, std::max(-32768, v))));
  }
  return BytesOf(result);
}

// reference_integer_ops Logistic / Tanh for int16 with a power-of-two input scale 2^(s - 12)
// (s = 0, or 0 or 1 for TANH): the input is multiplied by 3 << s, then read from the sigmoid
// table (the runtime's, Sigmoid16Table, which the general-scale cases check against the
// interpreter) with linear interpolation on the low 9 (LOGISTIC) or 8 (TANH) bits.
inline Bytes16 Sigmoid16PowerOfTwoReference(const CaseModel& m, bool tanh) {
  const testing::TfliteBuilder& b = m.builder;
  const float scale = b.tensor(b.operator_spec(0).inputs[0]).quant.scales[0];
  const int s = static_cast<int>(std::lround(std::log2(scale))) + 12;
  const uint16_t* table = runtime::kernels::Sigmoid16Table();
  std::vector<int16_t> out;
  for (int16_t x : ValuesOf<int16_t>(m.inputs[0])) {
    const int32_t v = x * (3 << s);
    const uint32_t magnitude = static_cast<uint32_t>(std::abs(v));
    const int bits = tanh ? 8 : 9;
    const uint32_t index = magnitude >> bits;
    const uint32_t fraction = magnitude & ((1u << bits) - 1);
    if (tanh) {
      int32_t r = static_cast<int32_t>(0xFFFFu << 8);
      if (index < 255) {
        r = static_cast<int32_t>((uint32_t{table[index]} << 8) +
                                 fraction * (table[index + 1] - table[index]));
      }
      r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
      out.push_back(static_cast<int16_t>(r >> 8));
    } else {
      uint32_t r = 0x7FFFu << 10;
      if (index < 255) {
        r = (uint32_t{table[index]} << 9) + fraction * (table[index + 1] - table[index]);
      }
      r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
      out.push_back(static_cast<int16_t>(r >> 10));
    }
  }
  return BytesOf(out);
}

// reference_ops::QuantizedMeanOrSumExtraArgs as TFLite Micro runs it for int16 MEAN: int32 sums
// of the raw values over the axes; QuantizeMultiplier(in_scale / out_scale) with 1/count folded
// in (shifted left by s = min(floor(log2 count), 32, 31 + shift) and divided by count, the
// shift lowered by s); then MultiplyByQuantizedMultiplier of (sum - in_zp * count) plus the
// output zero point, clamped to int16.
inline Bytes16 Mean16x8Reference(const CaseModel& m) {
  const testing::TfliteBuilder& b = m.builder;
  const testing::TfliteBuilder::OperatorSpec& op = b.operator_spec(0);
  const AxisSums a = SumOverAxes(m);
  const float so = b.tensor(op.outputs[0]).quant.scales[0];
  const compiler::QuantizedMultiplier qm = compiler::QuantizeMultiplier(
      static_cast<double>(b.tensor(op.inputs[0]).quant.scales[0]) / static_cast<double>(so));
  int s = 0;
  while ((int64_t{2} << s) <= a.count) ++s;  // floor(log2 count)
  s = std::min({s, 32, 31 + qm.shift});
  const auto multiplier =
      static_cast<int32_t>((static_cast<int64_t>(qm.multiplier) << s) / a.count);
  std::vector<int16_t> result;
  for (int32_t sum : a.sums) {
    const int32_t v =
        runtime::kernels::MultiplyByQuantizedMultiplier(sum, multiplier, qm.shift - s);
    result.push_back(static_cast<int16_t>(std::min(32767, std::max(-32768, v))));
  }
  return BytesOf(result);
}

}  // namespace boardlab::tflm_reference
