#include "compiler/quantization.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace boardlab::compiler {
namespace {

constexpr int64_t kOne31 = int64_t{1} << 31;

int32_t SaturateToInt32(int64_t x) {
  return static_cast<int32_t>(std::clamp<int64_t>(x, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

// frexp-based encoding shared by QuantizeMultiplier and the LOGISTIC/TANH input rescale. The
// 2^31 carry keeps the mantissa representable in int32.
QuantizedMultiplier EncodeMantissa(double real) {
  if (real == 0.0) return {};
  int shift = 0;
  const double q = std::frexp(real, &shift);
  int64_t q_fixed = static_cast<int64_t>(std::round(q * static_cast<double>(kOne31)));
  if (q_fixed == kOne31) {
    q_fixed /= 2;
    ++shift;
  }
  return {static_cast<int32_t>(q_fixed), shift};
}

// TFLite CalculateInputRadius: the largest input distance (in quantized steps) that the
// fixed-point rescale by 2^left_shift does not saturate.
int32_t InputRadius(int integer_bits, int left_shift) {
  const double max_rescaled = static_cast<double>((1 << integer_bits) - 1) *
                              std::ldexp(1.0, 31 - integer_bits) / std::ldexp(1.0, left_shift);
  return static_cast<int32_t>(std::floor(max_rescaled));
}

}  // namespace

QuantizedMultiplier QuantizeMultiplier(double real_multiplier) {
  QuantizedMultiplier qm = EncodeMantissa(real_multiplier);
  // Below 2^-32 the multiplier cannot be represented; the reference flushes it to zero.
  if (qm.shift < -31) return {};
  return qm;
}

int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) {
    return std::numeric_limits<int32_t>::max();
  }
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  // C++ division truncates toward zero, which together with the nudge is what gemmlowp does.
  return static_cast<int32_t>((ab + nudge) / kOne31);
}

int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  const int64_t mask = (int64_t{1} << exponent) - 1;
  const int64_t remainder = static_cast<int64_t>(x) & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return static_cast<int32_t>((static_cast<int64_t>(x) >> exponent) +
                              (remainder > threshold ? 1 : 0));
}

int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift) {
  const int left = std::max(shift, 0);
  const int right = std::max(-shift, 0);
  // The reference shifts in int32; saturating here only differs where the reference overflows.
  const int32_t scaled = SaturateToInt32(static_cast<int64_t>(x) * (int64_t{1} << left));
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(scaled, multiplier), right);
}

int32_t MultiplyByQuantizedMultiplierSingleRounding(int32_t x, int32_t multiplier, int shift) {
  const int clamped = std::clamp(shift, -31, 30);
  const int64_t round = int64_t{1} << (30 - clamped);
  const int64_t product = static_cast<int64_t>(x) * multiplier + round;
  return SaturateToInt32(product >> (31 - clamped));
}

int32_t QuantizeValue(double value, double scale, int64_t zero_point) {
  return static_cast<int32_t>(zero_point + static_cast<int64_t>(std::round(value / scale)));
}

ActivationRange ComputeActivationRange(Activation activation, double scale, int64_t zero_point,
                                       int32_t qmin, int32_t qmax) {
  // TFLite quantizes the bounds in float (f / scale with both float32). The double quotient
  // rounds differently where it lies within a float rounding step of a half: 6 / 0.0493827164 is
  // 121.4999991, 122 in float.
  const float float_scale = static_cast<float>(scale);
  auto q = [&](float v) {
    return static_cast<int32_t>(zero_point + static_cast<int64_t>(std::round(v / float_scale)));
  };
  switch (activation) {
    case Activation::kRelu:
      return {std::max(qmin, q(0.0f)), qmax};
    case Activation::kRelu6:
      return {std::max(qmin, q(0.0f)), std::min(qmax, q(6.0f))};
    case Activation::kReluN1To1:
      return {std::max(qmin, q(-1.0f)), std::min(qmax, q(1.0f))};
    case Activation::kNone:
    case Activation::kTanh:
    case Activation::kSignBit:
      break;
  }
  return {qmin, qmax};
}

namespace {

AddSubParams AddSubOffsets(int64_t input1_zp, int64_t input2_zp, int64_t output_zp,
                           int32_t left_shift) {
  AddSubParams p;
  p.left_shift = left_shift;
  p.input1_offset = static_cast<int32_t>(-input1_zp);
  p.input2_offset = static_cast<int32_t>(-input2_zp);
  p.output_offset = static_cast<int32_t>(output_zp);
  return p;
}

}  // namespace

AddSubParams ComputeAddSubParams(double input1_scale, int64_t input1_zp, double input2_scale,
                                 int64_t input2_zp, double output_scale, int64_t output_zp,
                                 int32_t left_shift) {
  AddSubParams p = AddSubOffsets(input1_zp, input2_zp, output_zp, left_shift);
  const double twice_max_input_scale = 2.0 * std::max(input1_scale, input2_scale);
  p.input1 = QuantizeMultiplier(input1_scale / twice_max_input_scale);
  p.input2 = QuantizeMultiplier(input2_scale / twice_max_input_scale);
  p.output =
      QuantizeMultiplier(twice_max_input_scale / (std::ldexp(1.0, p.left_shift) * output_scale));
  return p;
}

AddSubParams ComputeSubParams(float input1_scale, int64_t input1_zp, float input2_scale,
                              int64_t input2_zp, float output_scale, int64_t output_zp,
                              int32_t left_shift) {
  AddSubParams p = AddSubOffsets(input1_zp, input2_zp, output_zp, left_shift);
  // Every quotient in float32, widened afterwards (TFLite Micro's sub_common.cc): the multipliers
  // keep 24 significant bits where ADD's double quotients keep 31.
  const float twice_max_input_scale = 2.0f * std::max(input1_scale, input2_scale);
  const float output_divisor = std::ldexp(output_scale, p.left_shift);  // exact: a power of two
  p.input1 = QuantizeMultiplier(static_cast<double>(input1_scale / twice_max_input_scale));
  p.input2 = QuantizeMultiplier(static_cast<double>(input2_scale / twice_max_input_scale));
  p.output = QuantizeMultiplier(static_cast<double>(twice_max_input_scale / output_divisor));
  return p;
}

AddSubParams ComputeElementwiseAddSubParams(OpType type, const Quantization& a,
                                            const Quantization& b, const Quantization& out,
                                            int32_t left_shift) {
  if (type == OpType::kSub) {
    return ComputeSubParams(a.scale[0], a.zp(), b.scale[0], b.zp(), out.scale[0], out.zp(),
                            left_shift);
  }
  return ComputeAddSubParams(a.scale[0], a.zp(), b.scale[0], b.zp(), out.scale[0], out.zp(),
                             left_shift);
}

MulParams ComputeMulParams(double input1_scale, int64_t input1_zp, double input2_scale,
                           int64_t input2_zp, double output_scale, int64_t output_zp) {
  MulParams p;
  p.output = QuantizeMultiplier(input1_scale * input2_scale / output_scale);
  p.input1_offset = static_cast<int32_t>(-input1_zp);
  p.input2_offset = static_cast<int32_t>(-input2_zp);
  p.output_offset = static_cast<int32_t>(output_zp);
  return p;
}

QuantizedMultiplier ComputeBatchMatMulMultiplier(float lhs_scale, float rhs_scale,
                                                 double output_scale) {
  const float product = lhs_scale * rhs_scale;  // in float, as TFLite does
  return QuantizeMultiplier(static_cast<double>(product) / output_scale);
}

SigmoidParams ComputeSigmoidParams(double input_scale, int64_t input_zp) {
  constexpr int kInputIntegerBits = 4;
  const QuantizedMultiplier qm =
      EncodeMantissa(input_scale * std::ldexp(1.0, 31 - kInputIntegerBits));
  SigmoidParams p;
  p.input_zero_point = static_cast<int32_t>(input_zp);
  p.input_multiplier = qm.multiplier;
  p.input_left_shift = qm.shift;
  p.input_range_radius = InputRadius(kInputIntegerBits, qm.shift);
  return p;
}

SoftmaxParams ComputeSoftmaxParams(double beta, double input_scale) {
  constexpr int kScaledDiffIntegerBits = 5;
  const double real = std::min(beta * input_scale * std::ldexp(1.0, 31 - kScaledDiffIntegerBits),
                               static_cast<double>(kOne31) - 1.0);
  const QuantizedMultiplier qm = QuantizeMultiplier(real);
  SoftmaxParams p;
  p.input_multiplier = qm.multiplier;
  p.input_left_shift = qm.shift;
  p.diff_min = -InputRadius(kScaledDiffIntegerBits, qm.shift);
  return p;
}

bool CheckedLog2(float x, int* log2) {
  const float value = std::log(x) * (1.0f / std::log(2.0f));
  const float rounded = std::round(value);
  *log2 = static_cast<int>(rounded);
  return std::fabs(value - rounded) < 1e-3f;
}

Sigmoid16Params ComputeSigmoid16Params(float input_scale, bool tanh) {
  constexpr int kInputIntegerBits = 3;
  int log2 = 0;
  const bool pot = CheckedLog2(input_scale, &log2);
  const int shift = (15 - kInputIntegerBits) + log2;
  if (pot && (shift == 0 || (tanh && shift == 1))) return {0, shift};
  // Rescale to 1/(3 * 4096) per step: +-2^17 then stands for +-10.7.
  double multiplier = static_cast<double>(input_scale) * 4096.0 * 3.0;
  Sigmoid16Params p;
  while (multiplier <= 32767.0 / 2.0 && p.left_shift <= 30) {
    ++p.left_shift;
    multiplier *= 2.0;
  }
  p.multiplier = static_cast<int32_t>(multiplier);
  return p;
}

QuantizedMultiplier ComputeSoftmax16Multiplier(float beta, float input_scale) {
  return QuantizeMultiplier(static_cast<double>(input_scale) * static_cast<double>(beta) /
                            (10.0 / 65535.0));
}

}  // namespace boardlab::compiler
