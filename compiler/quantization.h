#pragma once

// Bit-exact TFLite int8 fixed-point arithmetic (shared/reference/tflite-int8.md section 9), used
// by the compiler to precompute requantization parameters and by tests as an oracle.
//
// Usage:
//   QuantizedMultiplier qm = QuantizeMultiplier(in_scale * w_scale / out_scale);
//   int32_t y = MultiplyByQuantizedMultiplier(acc, qm.multiplier, qm.shift) + out_zp;
//   ActivationRange r = ComputeActivationRange(Activation::kRelu6, out_scale, out_zp);
//
// Every function is pure and total: inputs outside a primitive's documented domain are clamped
// the way the reference does, never undefined behaviour.

#include <cstdint>

#include "compiler/ir.h"

namespace boardlab::compiler {

/// A real multiplier m encoded as m ~= multiplier * 2^(shift - 31), multiplier in [2^30, 2^31)
/// or 0. A positive shift is a left shift.
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int32_t shift = 0;
  bool operator==(const QuantizedMultiplier&) const = default;
};

/// TFLite QuantizeMultiplier: frexp, round half away from zero, 2^31 carry, flush to (0, 0)
/// when shift < -31. `real_multiplier` must be >= 0.
QuantizedMultiplier QuantizeMultiplier(double real_multiplier);

/// round(a * b / 2^31) with ties toward +infinity; saturates INT32_MIN * INT32_MIN.
int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b);

/// x / 2^exponent rounded half away from zero; `exponent` in [0, 31].
int32_t RoundingDivideByPOT(int32_t x, int exponent);

/// The reference requantization (double rounding, tflite-micro's default).
int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift);

/// The TFLITE_SINGLE_ROUNDING variant; only for comparing against builds that define it.
int32_t MultiplyByQuantizedMultiplierSingleRounding(int32_t x, int32_t multiplier, int shift);

/// out_zp + round(value / scale), not clamped.
int32_t QuantizeValue(double value, double scale, int64_t zero_point);

/// Inclusive clamp range of a quantized output with a fused activation.
struct ActivationRange {
  int32_t min = -128;
  int32_t max = 127;
  bool operator==(const ActivationRange&) const = default;
};

/// TFLite CalculateActivationRangeQuantized for an output of `scale`/`zero_point` stored in
/// [qmin, qmax]. kTanh and kSignBit as fused types clamp to the full range, like the reference.
ActivationRange ComputeActivationRange(Activation activation, double scale, int64_t zero_point,
                                       int32_t qmin = -128, int32_t qmax = 127);

/// ADD/SUB parameters as TFLite prepares them: both inputs are scaled up by 2^left_shift (20
/// for int8, 15 for int16) and to a common scale of twice the larger input scale, then the sum is
/// rescaled to the output.
struct AddSubParams {
  int32_t left_shift = 20;
  int32_t input1_offset = 0, input2_offset = 0, output_offset = 0;
  QuantizedMultiplier input1, input2, output;
};
AddSubParams ComputeAddSubParams(double input1_scale, int64_t input1_zp, double input2_scale,
                                 int64_t input2_zp, double output_scale, int64_t output_zp,
                                 int32_t left_shift = 20);

/// SUB's parameters: the same scheme, but TFLite Micro (and TFLite) compute twice the larger
/// input scale and the three ratios in float32 and widen them to double only for
/// QuantizeMultiplier, where ADD divides in double. The multipliers differ in their low bits for
/// most scale pairs, and so do some outputs (int8 and int16).
AddSubParams ComputeSubParams(float input1_scale, int64_t input1_zp, float input2_scale,
                              int64_t input2_zp, float output_scale, int64_t output_zp,
                              int32_t left_shift = 20);

/// ComputeSubParams for SUB, ComputeAddSubParams for ADD, from per-tensor quantizations.
AddSubParams ComputeElementwiseAddSubParams(OpType type, const Quantization& a,
                                            const Quantization& b, const Quantization& out,
                                            int32_t left_shift = 20);

/// MUL int8: one output multiplier in1 * in2 / out.
struct MulParams {
  int32_t input1_offset = 0, input2_offset = 0, output_offset = 0;
  QuantizedMultiplier output;
};
MulParams ComputeMulParams(double input1_scale, int64_t input1_zp, double input2_scale,
                           int64_t input2_zp, double output_scale, int64_t output_zp);

/// BATCH_MATMUL (int8 and 16x8): TFLite's GetQuantizedConvolutionMultipler multiplies the two
/// input scales in float before dividing by the output scale in double (MUL multiplies in
/// double); the two products round differently for most scale pairs.
QuantizedMultiplier ComputeBatchMatMulMultiplier(float lhs_scale, float rhs_scale,
                                                 double output_scale);

/// LOGISTIC / TANH int8: the input is rescaled to Q4.27 fixed point; inputs farther than
/// `input_range_radius` from the zero point saturate.
struct SigmoidParams {
  int32_t input_zero_point = 0;
  int32_t input_multiplier = 0;
  int32_t input_left_shift = 0;
  int32_t input_range_radius = 0;
};
SigmoidParams ComputeSigmoidParams(double input_scale, int64_t input_zp);

/// SOFTMAX int8: beta * input_scale rescaled to Q5.26; differences below `diff_min` give exp 0.
struct SoftmaxParams {
  int32_t input_multiplier = 0;
  int32_t input_left_shift = 0;
  int32_t diff_min = 0;
};
SoftmaxParams ComputeSoftmaxParams(double beta, double input_scale);

/// TFLite's CheckedLog2: log2(x) rounded into `log2`, and whether x is a power of two (the
/// fractional part below 1e-3), computed in float as TFLite does.
bool CheckedLog2(float x, int* log2);

/// LOGISTIC / TANH int16 (16x8) as TFLite Micro's Prepare computes them: a power-of-two input
/// scale whose shift 12 + log2(scale) is 0 (LOGISTIC) or 0 or 1 (TANH) gives multiplier 0 and
/// that shift; any other scale is rescaled to the table's 1/(3 * 4096) steps as
/// scale * 3 * 4096 * 2^left_shift, doubled until above 32767 / 2 (left_shift <= 31), truncated.
struct Sigmoid16Params {
  int32_t multiplier = 0;
  int32_t left_shift = 0;
};
Sigmoid16Params ComputeSigmoid16Params(float input_scale, bool tanh);

/// SOFTMAX int16 (16x8): the input difference is rescaled so that -65535 maps to -10, the exp
/// table's range: QuantizeMultiplier(input_scale * beta / (10 / 65535)).
QuantizedMultiplier ComputeSoftmax16Multiplier(float beta, float input_scale);

}  // namespace boardlab::compiler
