#pragma once

// TFLite Micro's arithmetic for the RELU6, SUM, ADD/SUB, BATCH_MATMUL, PRELU, SQUARED_DIFFERENCE
// and GREATER cases the TFLite interpreter cannot check (int8 and 16x8), written out from its
// reference kernels (activations.h Relu6Quantized, reduce.h QuantizedMeanOrSum, add_common.cc /
// sub_common.cc with reference_ops Add / Sub, batch_matmul.h, prelu.h, squared_difference.cc,
// comparisons.h ComparisonWithScaling) in their loop order, independently of the runtime's
// kernels. Each takes the case's first operator. The quantized multipliers come from the
// compiler's QuantizeMultiplier and MultiplyByQuantizedMultiplier, whose worked numbers
// quantization_test.cc checks; the int64 requantization is written out here.
//
// Variants that TFLite Micro does *not* compute (`float_ratios` = false for SUB,
// `float_product` = false for BATCH_MATMUL) exist so that tests can show a case tells the two
// apart.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <variant>
#include <vector>

#include "compiler/quantization.h"
#include "tests/runtime/tflm_reference.h"
#include "tests/support/op_cases.h"
#include "tests/support/test_models.h"

namespace boardlab::tflm_reference {

using ArithBytes = std::vector<uint8_t>;

// The values of an int8 or int16 tensor's bytes, widened.
inline std::vector<int32_t> QuantizedValues(const ArithBytes& bytes, int8_t type) {
  std::vector<int32_t> v;
  if (type == static_cast<int8_t>(testing::TflType::kInt16)) {
    for (size_t i = 0; i + 2 <= bytes.size(); i += 2) {
      int16_t x;
      std::memcpy(&x, bytes.data() + i, 2);
      v.push_back(x);
    }
  } else {
    for (uint8_t b : bytes) v.push_back(static_cast<int8_t>(b));
  }
  return v;
}

// `v` clamped to the type's range and stored as its bytes.
inline ArithBytes ClampedBytes(const std::vector<int32_t>& v, int8_t type) {
  ArithBytes out;
  const bool int16 = type == static_cast<int8_t>(testing::TflType::kInt16);
  const int32_t lo = int16 ? -32768 : -128, hi = int16 ? 32767 : 127;
  for (int32_t x : v) {
    const int32_t c = std::min(hi, std::max(lo, x));
    if (int16) {
      const auto s = static_cast<int16_t>(c);
      const auto* p = reinterpret_cast<const uint8_t*>(&s);
      out.insert(out.end(), p, p + 2);
    } else {
      out.push_back(static_cast<uint8_t>(static_cast<int8_t>(c)));
    }
  }
  return out;
}

// The constant int32 values of tensor `t`.
inline std::vector<int32_t> ConstInts(const testing::TfliteBuilder& b, int t) {
  const std::vector<uint8_t>& bytes = b.buffer(b.tensor(t).buffer);
  std::vector<int32_t> v(bytes.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

// The tensors of a case's first operator and the values of its graph inputs: `in[k]` and
// `values[k]` for input k (only the graph inputs have values), `out` for output 0.
struct Operands {
  std::vector<const testing::TfliteBuilder::TensorSpec*> in;
  std::vector<std::vector<int32_t>> values;
  const testing::TfliteBuilder::TensorSpec* out = nullptr;
  int32_t zp(size_t k) const { return static_cast<int32_t>(in[k]->quant.zero_points[0]); }
  float scale(size_t k) const { return in[k]->quant.scales[0]; }
  int32_t out_zp() const { return static_cast<int32_t>(out->quant.zero_points[0]); }
};

inline Operands OperandsOf(const CaseModel& m) {
  const testing::TfliteBuilder& b = m.builder;
  const testing::TfliteBuilder::OperatorSpec& op = b.operator_spec(0);
  Operands o;
  for (int t : op.inputs) o.in.push_back(t >= 0 ? &b.tensor(t) : nullptr);
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    o.values.push_back(QuantizedValues(m.inputs[k], b.tensor(m.input_tensors[k]).type));
  }
  o.out = &b.tensor(op.outputs[0]);
  return o;
}

// The int32 sums of a reduction's input over its constant axes (operator 0: input, axes), one
// per output element in row-major order of the kept dimensions, and the count summed into each.
struct AxisSums {
  std::vector<int32_t> sums;
  int64_t count = 1;
};

inline AxisSums SumOverAxes(const CaseModel& m) {
  const testing::TfliteBuilder& b = m.builder;
  const testing::TfliteBuilder::OperatorSpec& op = b.operator_spec(0);
  const auto& in_t = b.tensor(op.inputs[0]);
  const int rank = static_cast<int>(in_t.shape.size());
  std::vector<bool> reduced(rank, false);
  for (int32_t a : ConstInts(b, op.inputs[1])) reduced[(a + rank) % rank] = true;
  AxisSums r;
  int64_t kept = 1;
  for (int d = 0; d < rank; ++d) (reduced[d] ? r.count : kept) *= in_t.shape[d];
  r.sums.assign(kept, 0);
  const std::vector<int32_t> input = QuantizedValues(m.inputs[0], in_t.type);
  for (size_t i = 0; i < input.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), out = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t coord = rest % in_t.shape[d];
      rest /= in_t.shape[d];
      if (reduced[d]) continue;
      out += coord * stride;
      stride *= in_t.shape[d];
    }
    r.sums[out] += input[i];
  }
  return r;
}

// TFLite Micro's int64 MultiplyByQuantizedMultiplier: the multiplier rounded to 16 bits (capped
// at 0x7FFF), one rounding right shift by 15 - shift.
inline int32_t MultiplyByQuantizedMultiplierInt64(int64_t x, int32_t multiplier, int shift) {
  const int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int total_shift = 15 - shift;
  return static_cast<int32_t>((x * reduced + (int64_t{1} << (total_shift - 1))) >> total_shift);
}

// RELU6 (activations.h Relu6Quantized): the raw input clamped between the input's zero point
// and its quantized 6, round(6.0f / scale) + zero point in float, limited to the type.
inline ArithBytes Relu6Reference(const CaseModel& m) {
  const Operands o = OperandsOf(m);
  const bool int16 = o.in[0]->type == static_cast<int8_t>(testing::TflType::kInt16);
  const int32_t six = std::min<int32_t>(
      int16 ? 32767 : 127, static_cast<int32_t>(std::round(6.0f / o.scale(0))) + o.zp(0));
  std::vector<int32_t> out;
  for (int32_t x : o.values[0]) out.push_back(std::clamp(x, o.zp(0), six));
  return ClampedBytes(out, o.in[0]->type);
}

// SUM (reduce.h QuantizedMeanOrSum with compute_sum): int32 sums of the raw values over the
// axes, minus the input zero point once per summed element, times QuantizeMultiplier(in_scale /
// out_scale), plus the output zero point, clamped to the type.
inline ArithBytes SumReference(const CaseModel& m) {
  const Operands o = OperandsOf(m);
  const AxisSums a = SumOverAxes(m);
  const compiler::QuantizedMultiplier qm = compiler::QuantizeMultiplier(
      static_cast<double>(o.scale(0)) / static_cast<double>(o.out->quant.scales[0]));
  std::vector<int32_t> out;
  for (int32_t sum : a.sums) {
    const auto shifted = static_cast<int32_t>(sum - o.zp(0) * a.count);
    out.push_back(compiler::MultiplyByQuantizedMultiplier(shifted, qm.multiplier, qm.shift) +
                  o.out_zp());
  }
  return ClampedBytes(out, o.out->type);
}

// ADD / SUB (reference_ops Add / Sub, general path) for same-shape operands: each operand minus
// its zero point, shifted up by 20 (int8) or 15 (int16), scaled to twice the larger input scale;
// the sum or difference rescaled to the output, plus its zero point, clamped to the fused
// activation's range. `float_ratios`: the scale ratios in float32 (sub_common.cc) rather than
// double (add_common.cc).
inline ArithBytes AddSubReference(const CaseModel& m, bool subtract, bool float_ratios) {
  const Operands o = OperandsOf(m);
  const float s1 = o.scale(0), s2 = o.scale(1), so = o.out->quant.scales[0];
  const bool int16 = o.out->type == static_cast<int8_t>(testing::TflType::kInt16);
  const int left_shift = int16 ? 15 : 20;
  compiler::QuantizedMultiplier m1, m2, mo;
  if (float_ratios) {
    const float twice_max = 2.0f * std::max(s1, s2);
    m1 = compiler::QuantizeMultiplier(s1 / twice_max);
    m2 = compiler::QuantizeMultiplier(s2 / twice_max);
    mo = compiler::QuantizeMultiplier(twice_max / (static_cast<float>(1 << left_shift) * so));
  } else {
    const double twice_max = 2.0 * std::max(s1, s2);
    m1 = compiler::QuantizeMultiplier(s1 / twice_max);
    m2 = compiler::QuantizeMultiplier(s2 / twice_max);
    mo = compiler::QuantizeMultiplier(twice_max / (std::ldexp(1.0, left_shift) * so));
  }
  const auto& options = std::get<testing::ElementwiseOpts>(m.builder.operator_spec(0).options);
  const compiler::ActivationRange range = compiler::ComputeActivationRange(
      options.activation, so, o.out_zp(), int16 ? -32768 : -128, int16 ? 32767 : 127);
  std::vector<int32_t> out;
  for (size_t i = 0; i < o.values[0].size(); ++i) {
    const int32_t x = compiler::MultiplyByQuantizedMultiplier(
        (o.values[0][i] - o.zp(0)) * (1 << left_shift), m1.multiplier, m1.shift);
    const int32_t y = compiler::MultiplyByQuantizedMultiplier(
        (o.values[1][i] - o.zp(1)) * (1 << left_shift), m2.multiplier, m2.shift);
    const int32_t r =
        compiler::MultiplyByQuantizedMultiplier(subtract ? x - y : x + y, mo.multiplier, mo.shift);
    out.push_back(std::clamp(r + o.out_zp(), range.min, range.max));
  }
  return ClampedBytes(out, o.out->type);
}

// BATCH_MATMUL (batch_matmul.h, quantized): per output element the sum over the depth of
// (lhs - lhs_zp) * (rhs - rhs_zp), in int32 for int8 and int64 for int16, requantized with
// QuantizeMultiplier(double(float(lhs_scale * rhs_scale)) / out_scale) (`float_product`; the
// double product otherwise) by the int32 or the int64 MultiplyByQuantizedMultiplier, plus the
// output zero point, clamped. adj_x / adj_y read the operands transposed; batch dimensions
// broadcast.
inline ArithBytes BatchMatMulReference(const CaseModel& m, bool float_product) {
  const Operands o = OperandsOf(m);
  const auto& options = std::get<testing::BatchMatMulOpts>(m.builder.operator_spec(0).options);
  const std::vector<int32_t>& ls = o.in[0]->shape;
  const std::vector<int32_t>& rs = o.in[1]->shape;
  const std::vector<int32_t>& os = o.out->shape;
  const int32_t rows = options.adj_x ? ls.back() : ls[ls.size() - 2];
  const int32_t depth = options.adj_x ? ls[ls.size() - 2] : ls.back();
  const int32_t cols = options.adj_y ? rs[rs.size() - 2] : rs.back();
  const std::vector<int32_t> lb(ls.begin(), ls.end() - 2), rb(rs.begin(), rs.end() - 2);
  const std::vector<int32_t> ob(os.begin(), os.end() - 2);
  const double product = float_product
                             ? static_cast<double>(o.scale(0) * o.scale(1))
                             : static_cast<double>(o.scale(0)) * static_cast<double>(o.scale(1));
  const compiler::QuantizedMultiplier qm =
      compiler::QuantizeMultiplier(product / static_cast<double>(o.out->quant.scales[0]));
  const bool int16 = o.out->type == static_cast<int8_t>(testing::TflType::kInt16);
  std::vector<int32_t> out;
  for (int64_t batch = 0; batch < ElementCount(ob); ++batch) {
    const int64_t lbatch = BroadcastSource(ob, lb, batch) * rows * depth;
    const int64_t rbatch = BroadcastSource(ob, rb, batch) * depth * cols;
    for (int32_t i = 0; i < rows; ++i) {
      for (int32_t j = 0; j < cols; ++j) {
        int64_t acc = 0;
        for (int32_t k = 0; k < depth; ++k) {
          const int32_t x =
              o.values[0][lbatch + (options.adj_x ? k * rows + i : i * depth + k)] - o.zp(0);
          const int32_t y =
              o.values[1][rbatch + (options.adj_y ? j * depth + k : k * cols + j)] - o.zp(1);
          acc += int64_t{x} * y;
        }
        const int32_t r = int16 ? MultiplyByQuantizedMultiplierInt64(acc, qm.multiplier, qm.shift)
                                : compiler::MultiplyByQuantizedMultiplier(static_cast<int32_t>(acc),
                                                                          qm.multiplier, qm.shift);
        out.push_back(r + o.out_zp());
      }
    }
  }
  return ClampedBytes(out, o.out->type);
}

// Value of input `k` for output element `i` (numpy broadcasting), its zero point taken out.
inline int32_t Centered(const Operands& o, size_t k, int64_t i) {
  return o.values[k][BroadcastSource(o.out->shape, o.in[k]->shape, i)] - o.zp(k);
}

// PRELU 16x8 (prelu.h BroadcastPrelu4DSlow<int16_t, int8_t>): x >= 0 rescaled by in / out,
// below by in * alpha / out times (alpha - alpha_zp), clamped to int16; alpha broadcasts.
inline ArithBytes Prelu16x8Reference(const CaseModel& m) {
  const Operands o = OperandsOf(m);
  const double si = o.scale(0), sa = o.scale(1), so = o.out->quant.scales[0];
  const compiler::QuantizedMultiplier identity = compiler::QuantizeMultiplier(si / so);
  const compiler::QuantizedMultiplier negative = compiler::QuantizeMultiplier(si * sa / so);
  std::vector<int32_t> out;
  for (int64_t i = 0; i < ElementCount(o.out->shape); ++i) {
    const int32_t x = Centered(o, 0, i), a = Centered(o, 1, i);
    out.push_back(
        x >= 0
            ? compiler::MultiplyByQuantizedMultiplier(x, identity.multiplier, identity.shift)
            : compiler::MultiplyByQuantizedMultiplier(x * a, negative.multiplier, negative.shift));
  }
  return ClampedBytes(out, o.out->type);
}

// QuantizeMultiplierSmallerThanOneExp's application: one rounding doubling high multiply, one
// rounding right shift.
inline int32_t ScaleBelowOne(int32_t x, const compiler::QuantizedMultiplier& q) {
  return compiler::RoundingDivideByPOT(compiler::SaturatingRoundingDoublingHighMul(x, q.multiplier),
                                       -q.shift);
}

// SQUARED_DIFFERENCE 16x8 (squared_difference.cc, left shift 0): each operand scaled by its
// scale over twice the larger one, the difference squared, rescaled by (2 max)^2 / out, clamped.
inline ArithBytes SquaredDifference16x8Reference(const CaseModel& m) {
  const Operands o = OperandsOf(m);
  const double twice_max = 2.0 * std::max(o.scale(0), o.scale(1));
  const compiler::QuantizedMultiplier m1 = compiler::QuantizeMultiplier(o.scale(0) / twice_max);
  const compiler::QuantizedMultiplier m2 = compiler::QuantizeMultiplier(o.scale(1) / twice_max);
  const compiler::QuantizedMultiplier mo =
      compiler::QuantizeMultiplier(twice_max * twice_max / o.out->quant.scales[0]);
  std::vector<int32_t> out;
  for (int64_t i = 0; i < ElementCount(o.out->shape); ++i) {
    const int32_t d = ScaleBelowOne(Centered(o, 0, i), m1) - ScaleBelowOne(Centered(o, 1, i), m2);
    out.push_back(compiler::MultiplyByQuantizedMultiplier(d * d, mo.multiplier, mo.shift));
  }
  return ClampedBytes(out, o.out->type);
}

// GREATER on int16 (comparisons.h ComparisonWithScaling, left shift 8): each operand minus its
// zero point, shifted up by 8, scaled by QuantizeMultiplierSmallerThanOneExp(scale), compared.
inline ArithBytes Greater16Reference(const CaseModel& m) {
  const Operands o = OperandsOf(m);
  const compiler::QuantizedMultiplier ma = compiler::QuantizeMultiplier(o.scale(0));
  const compiler::QuantizedMultiplier mb = compiler::QuantizeMultiplier(o.scale(1));
  ArithBytes out;
  for (int64_t i = 0; i < ElementCount(o.out->shape); ++i) {
    const bool greater =
        ScaleBelowOne(Centered(o, 0, i) * 256, ma) > ScaleBelowOne(Centered(o, 1, i) * 256, mb);
    out.push_back(greater ? 1 : 0);
  }
  return out;
}

}  // namespace boardlab::tflm_reference
