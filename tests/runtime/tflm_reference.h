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
#include <variant>
#include <vector>

#include "compiler/quantization.h"
#include "runtime/kernels/reference/lstm.h"
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

// TFLite Micro's integer SVDF (svdf_common.cc EvalIntegerSvdfReference) over consecutive
// inferences of one interpreter, for the single-SVDF case model `m`: `inferences[i]` is the
// input of inference i; returns each inference's output. Written after TFLite Micro's loop
// structure (a state buffer reset like ResetVariableTensors, shifted as one flat array, scratch
// arrays of filter sums, the bias copied into the output sums before the reduction), not the
// runtime's.
inline std::vector<Bytes> SvdfInferences(const CaseModel& m, const std::vector<Bytes>& inferences) {
  const testing::TfliteBuilder& b = m.builder;
  const testing::TfliteBuilder::OperatorSpec& op = b.operator_spec(0);
  const auto& in = b.tensor(op.inputs[0]);
  const auto& feature = b.tensor(op.inputs[1]);
  const auto& time = b.tensor(op.inputs[2]);
  const auto& state_spec = b.tensor(op.inputs[4]);
  const auto& out = b.tensor(op.outputs[0]);
  const int rank = std::get<testing::SvdfOpts>(op.options).rank;
  const int n_batch = in.shape[0], n_input = in.shape[1], n_filter = feature.shape[0];
  const int n_memory = time.shape[1], n_unit = n_filter / rank;
  const bool int16 = time.type == static_cast<int8_t>(TflType::kInt16);
  auto weight_time = [&](int i) -> int32_t {
    const Bytes& raw = b.buffer(time.buffer);
    if (!int16) return static_cast<int8_t>(raw[i]);
    int16_t v;
    std::memcpy(&v, raw.data() + 2 * i, 2);
    return v;
  };
  const Bytes& wf = b.buffer(feature.buffer);
  std::vector<int32_t> bias(n_unit, 0);
  const bool has_bias = op.inputs[3] >= 0;
  if (has_bias)
    std::memcpy(bias.data(), b.buffer(b.tensor(op.inputs[3]).buffer).data(), 4 * n_unit);
  // The effective scales of PrepareSvdf, formed in float.
  const float s_in = in.quant.scales[0], s_feature = feature.quant.scales[0];
  const float s_time = time.quant.scales[0], s_state = state_spec.quant.scales[0];
  const compiler::QuantizedMultiplier scale1 =
      compiler::QuantizeMultiplier(static_cast<double>(s_in * s_feature / s_state));
  const compiler::QuantizedMultiplier scale2 =
      compiler::QuantizeMultiplier(static_cast<double>(s_state * s_time / out.quant.scales[0]));
  const int32_t in_zp = static_cast<int32_t>(in.quant.zero_points[0]);
  const int32_t state_zp = static_cast<int32_t>(state_spec.quant.zero_points[0]);
  const int32_t out_zp = static_cast<int32_t>(out.quant.zero_points[0]);
  const int32_t state_min = int16 ? -32768 : -128, state_max = int16 ? 32767 : 127;
  // ResetVariableTensors: int8 variables hold their zero point, others 0.
  std::vector<int32_t> state(static_cast<size_t>(n_batch) * n_filter * n_memory,
                             int16 ? 0 : state_zp);
  std::vector<Bytes> results;
  for (const Bytes& input_bytes : inferences) {
    const std::vector<int8_t> input = Int8s(input_bytes);
    for (size_t i = 0; i + 1 < state.size(); ++i) state[i] = state[i + 1];
    for (int bt = 0; bt < n_batch; ++bt) {
      for (int r = 0; r < n_filter; ++r) {
        int32_t dot = 0;
        for (int c = 0; c < n_input; ++c) {
          dot += static_cast<int8_t>(wf[r * n_input + c]) * (input[bt * n_input + c] - in_zp);
        }
        dot = runtime::kernels::MultiplyByQuantizedMultiplier(dot, scale1.multiplier, scale1.shift);
        dot = std::min(std::max(state_min, state_zp + dot), state_max);
        state[(static_cast<size_t>(bt) * n_filter + r) * n_memory + n_memory - 1] = dot;
      }
    }
    // TFLite Micro's int32 sums wrap on the boards it runs on; uint32 gives the same bits
    // without undefined behaviour.
    std::vector<uint32_t> scratch(static_cast<size_t>(n_batch) * n_filter, 0);
    for (int bt = 0; bt < n_batch; ++bt) {
      for (int i = 0; i < n_filter; ++i) {
        for (int j = 0; j < n_memory; ++j) {
          const int64_t s =
              state[(static_cast<size_t>(bt) * n_filter + i) * n_memory + j] - state_zp;
          scratch[bt * n_filter + i] +=
              static_cast<uint32_t>(int64_t{weight_time(i * n_memory + j)} * s);
        }
      }
    }
    std::vector<int8_t> output;
    for (int bt = 0; bt < n_batch; ++bt) {
      for (int u = 0; u < n_unit; ++u) {
        uint32_t sum = has_bias ? static_cast<uint32_t>(bias[u]) : 0u;
        for (int j = 0; j < rank; ++j) sum += scratch[bt * n_filter + u * rank + j];
        const int32_t x = runtime::kernels::MultiplyByQuantizedMultiplier(
                              static_cast<int32_t>(sum), scale2.multiplier, scale2.shift) +
                          out_zp;
        output.push_back(static_cast<int8_t>(std::min(std::max(x, -128), 127)));
      }
    }
    results.push_back(FromInt8s(output));
  }
  return results;
}

// The values of little-endian int8 or int16 bytes, and back.
inline std::vector<int32_t> ActivationValues(const Bytes& bytes, bool int16) {
  std::vector<int32_t> v(bytes.size() / (int16 ? 2 : 1));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = int16 ? static_cast<int16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8))
                 : static_cast<int8_t>(bytes[i]);
  }
  return v;
}
inline Bytes ActivationBytes(const std::vector<int32_t>& v, bool int16) {
  Bytes bytes;
  for (int32_t x : v) {
    bytes.push_back(static_cast<uint8_t>(x & 0xff));
    if (int16) bytes.push_back(static_cast<uint8_t>((x >> 8) & 0xff));
  }
  return bytes;
}

// TFLite Micro's integer LSTM (lstm_eval.h EvalLstm<int8_t, int8_t, int16_t, int32_t>, and in
// 16x8 EvalLstm<int16_t, int8_t, int16_t, int64_t>, with the parameters of lstm_eval_common.cc)
// over consecutive inferences of one interpreter, for the single-LSTM case model `m`:
// `inferences[i]` is the input of inference i; returns each inference's output. Written after
// TFLite Micro's structure: the gate parameters as its Prepare derives them (FC outputs in Q3.12,
// products in Q0.15), time-major steps over every batch row at once, the four gate buffers, the
// forget gate computed before the input and cell gates and the output gate after the cell
// update. The int8 FCs are reference_integer_ops::FullyConnected (int32 sums, both offsets); the
// 16x8 ones its int16 overload (int64 sums, the weight offset only, TFLite's int64
// MultiplyByQuantizedMultiplier). The int16 sigmoid and tanh are the runtime's Sigmoid16 /
// Tanh16, checked on their own in lstm_kernel_test.cc.
inline std::vector<Bytes> LstmInferences(const CaseModel& m, const std::vector<Bytes>& inferences) {
  using compiler::QuantizedMultiplier;
  using compiler::QuantizeMultiplier;
  const testing::TfliteBuilder& b = m.builder;
  const testing::TfliteBuilder::OperatorSpec& op = b.operator_spec(0);
  const auto& o = std::get<testing::UnidirectionalSequenceLstmOpts>(op.options);
  const auto& in = b.tensor(op.inputs[0]);
  const bool int16 = in.type == static_cast<int8_t>(TflType::kInt16);
  const auto& hidden_spec = b.tensor(op.inputs[18]);
  const auto& cell_spec = b.tensor(op.inputs[19]);
  const int n_batch = o.time_major ? in.shape[1] : in.shape[0];
  const int n_time = o.time_major ? in.shape[0] : in.shape[1];
  const int n_input = in.shape[2];
  const int n_state = b.tensor(op.inputs[2]).shape[0];
  const float in_scale = in.quant.scales[0], hidden_scale = hidden_spec.quant.scales[0];
  const float cell_scale = cell_spec.quant.scales[0];
  // The int16 FC adds no input offset (16x8 activations have zero point 0).
  const int32_t in_zp = int16 ? 0 : static_cast<int32_t>(in.quant.zero_points[0]);
  const int32_t hidden_zp = static_cast<int32_t>(hidden_spec.quant.zero_points[0]);
  const int32_t recurrent_zp = int16 ? 0 : hidden_zp;
  const int32_t lo = int16 ? -32768 : -128, hi = int16 ? 32767 : 127;
  struct Gate {
    std::vector<int8_t> w, r;
    std::vector<int64_t> bias;
    int32_t w_zp, r_zp;
    QuantizedMultiplier fc_in, fc_rec;
  };
  // Gates in TFLite's input order: input 1/5/12, forget 2/6/13, cell 3/7/14, output 4/8/15.
  Gate gates[4];
  for (int k = 0; k < 4; ++k) {
    const auto& w = b.tensor(op.inputs[1 + k]);
    const auto& r = b.tensor(op.inputs[5 + k]);
    gates[k].w = Int8s(b.buffer(w.buffer));
    gates[k].r = Int8s(b.buffer(r.buffer));
    const Bytes& bias = b.buffer(b.tensor(op.inputs[12 + k]).buffer);
    for (int c = 0; c < n_state; ++c) {
      int32_t v32 = 0;
      int64_t v64 = 0;
      if (int16) std::memcpy(&v64, bias.data() + 8 * c, 8);
      if (!int16) std::memcpy(&v32, bias.data() + 4 * c, 4);
      gates[k].bias.push_back(int16 ? v64 : v32);
    }
    gates[k].w_zp = static_cast<int32_t>(w.quant.zero_points[0]);
    gates[k].r_zp = static_cast<int32_t>(r.quant.zero_points[0]);
    // GetQuantizedConvolutionMultipler: the scale product in float, divided in double by the
    // output scale, the FC output being Q3.12.
    const double q12 = 0.000244140625;
    gates[k].fc_in = QuantizeMultiplier(static_cast<double>(in_scale * w.quant.scales[0]) / q12);
    gates[k].fc_rec =
        QuantizeMultiplier(static_cast<double>(hidden_scale * r.quant.scales[0]) / q12);
  }
  const double q15 = 0.000030517578125f;
  const QuantizedMultiplier forget_mul =
      QuantizeMultiplier(q15 * static_cast<double>(cell_scale) / static_cast<double>(cell_scale));
  const QuantizedMultiplier input_mul = QuantizeMultiplier(q15 * q15 / cell_scale);
  const QuantizedMultiplier hidden_mul = QuantizeMultiplier(q15 * q15 / hidden_scale);
  const int cell_power = static_cast<int>(std::lround(std::log2(cell_scale)));
  const int16_t clip = static_cast<int16_t>(std::min(
      std::max(static_cast<double>(o.cell_clip) / static_cast<double>(cell_scale), -32768.0),
      32767.0));
  auto sat16 = [](int32_t v) { return static_cast<int16_t>(std::min(std::max(v, -32768), 32767)); };
  auto mbqm = [](int32_t x, const QuantizedMultiplier& q) {
    return runtime::kernels::MultiplyByQuantizedMultiplier(x, q.multiplier, q.shift);
  };
  // The FC requantization: the int32 sum's, or the int64 one's in 16x8.
  auto requantize = [&](int64_t acc, const QuantizedMultiplier& q) {
    return int16 ? runtime::kernels::MultiplyByQuantizedMultiplier64(acc, q.multiplier, q.shift)
                 : mbqm(static_cast<int32_t>(acc), q);
  };
  // ResetVariableTensors: an int8 hidden state at its zero point, int16 ones (and the cell) at 0.
  std::vector<int32_t> hidden(static_cast<size_t>(n_batch) * n_state, int16 ? 0 : hidden_zp);
  std::vector<int16_t> cell(static_cast<size_t>(n_batch) * n_state, 0);
  std::vector<Bytes> results;
  for (const Bytes& input_bytes : inferences) {
    const std::vector<int32_t> input = ActivationValues(input_bytes, int16);
    std::vector<int32_t> output(static_cast<size_t>(n_batch) * n_time * n_state);
    // One LSTM step over `rows` batch rows starting at `row0`, reading input row `x_row` and
    // writing output row `out_row` for each (consecutive rows in both).
    auto step = [&](int row0, int rows, size_t x_row, size_t out_row) {
      auto gate = [&](const Gate& g, bool tanh) {
        std::vector<int16_t> sum(static_cast<size_t>(rows) * n_state);
        for (int r = 0; r < rows; ++r) {
          for (int c = 0; c < n_state; ++c) {
            int64_t acc = 0;
            for (int d = 0; d < n_input; ++d) {
              acc += (g.w[c * n_input + d] - g.w_zp) * (input[(x_row + r) * n_input + d] - in_zp);
            }
            acc += g.bias[c];
            const int16_t fc1 = sat16(requantize(acc, g.fc_in));
            int64_t acc2 = 0;
            for (int d = 0; d < n_state; ++d) {
              acc2 += (g.r[c * n_state + d] - g.r_zp) *
                      (hidden[(row0 + r) * n_state + d] - recurrent_zp);
            }
            const int16_t fc2 = sat16(requantize(acc2, g.fc_rec));
            const int16_t pre = sat16(int32_t{fc1} + fc2);
            sum[r * n_state + c] =
                tanh ? runtime::kernels::Tanh16(pre, 0, 0) : runtime::kernels::Sigmoid16(pre);
          }
        }
        return sum;
      };
      const std::vector<int16_t> forget = gate(gates[1], false);
      const std::vector<int16_t> input_gate = gate(gates[0], false);
      const std::vector<int16_t> cell_gate = gate(gates[2], true);
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < n_state; ++c) {
          int16_t& s = cell[(row0 + r) * n_state + c];
          const int16_t kept = sat16(mbqm(int32_t{forget[r * n_state + c]} * s, forget_mul));
          const int16_t added = sat16(
              mbqm(int32_t{input_gate[r * n_state + c]} * cell_gate[r * n_state + c], input_mul));
          s = sat16(int32_t{kept} + added);
          if (o.cell_clip > 0) s = std::max(std::min(clip, s), static_cast<int16_t>(-clip));
        }
      }
      const std::vector<int16_t> output_gate = gate(gates[3], false);
      int32_t shift = 15 + cell_power - 3, multiplier = 0;
      if (shift < 0) shift = -shift, multiplier = 3;
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < n_state; ++c) {
          const int16_t t =
              runtime::kernels::Tanh16(cell[(row0 + r) * n_state + c], multiplier, shift);
          const int32_t h = hidden_zp + mbqm(int32_t{t} * output_gate[r * n_state + c], hidden_mul);
          hidden[(row0 + r) * n_state + c] = std::min(std::max(h, lo), hi);
          output[(out_row + r) * n_state + c] = hidden[(row0 + r) * n_state + c];
        }
      }
    };
    if (o.time_major) {
      for (int t = 0; t < n_time; ++t) step(0, n_batch, t * n_batch, t * n_batch);
    } else {
      for (int bt = 0; bt < n_batch; ++bt) {
        for (int t = 0; t < n_time; ++t) step(bt, 1, bt * n_time + t, bt * n_time + t);
      }
    }
    results.push_back(ActivationBytes(output, int16));
  }
  return results;
}

}  // namespace boardlab::tflm_reference
