#include "compiler/quantization.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace boardlab::compiler {
namespace {

// One row of the worked-vector table in shared/reference/tflite-int8.md section 9.
struct Vector {
  double real;
  int32_t multiplier;
  int32_t shift;
  int32_t x;
  int32_t double_rounding;
  int32_t single_rounding;
};

constexpr Vector kVectors[] = {
    {0.5, 1073741824, 0, 100, 50, 50},
    {0.75, 1610612736, 0, -2, -1, -1},
    {0.75, 1610612736, 0, 6, 5, 5},
    {0.25, 1073741824, -1, -2, -1, 0},
    {0.25, 1073741824, -1, -6, -2, -1},
    {0.25, 1073741824, -1, 81, 21, 20},
    {0.0123456, 1696766344, -6, 81, 1, 1},
    {1.0, 1073741824, 1, 37, 37, 37},
    {1.0, 1073741824, 1, -1234, -1234, -1234},
    {2.5, 1342177280, 2, 4, 10, 10},
    {1e-10, 0, 0, 12345, 0, 0},
};

TEST(QuantizeMultiplierTest, WorkedVectors) {
  for (const Vector& v : kVectors) {
    SCOPED_TRACE(v.real);
    const QuantizedMultiplier qm = QuantizeMultiplier(v.real);
    EXPECT_EQ(qm.multiplier, v.multiplier);
    EXPECT_EQ(qm.shift, v.shift);
    EXPECT_EQ(MultiplyByQuantizedMultiplier(v.x, qm.multiplier, qm.shift), v.double_rounding);
    EXPECT_EQ(MultiplyByQuantizedMultiplierSingleRounding(v.x, qm.multiplier, qm.shift),
              v.single_rounding);
  }
}

TEST(QuantizeMultiplierTest, ZeroAndCarry) {
  EXPECT_EQ(QuantizeMultiplier(0.0), (QuantizedMultiplier{0, 0}));
  // 1 - 2^-40 rounds its mantissa up to 2^31, which must carry into the exponent.
  const QuantizedMultiplier carry = QuantizeMultiplier(1.0 - 1.0 / (1ull << 40));
  EXPECT_EQ(carry, (QuantizedMultiplier{1073741824, 1}));
  // 2^-32 is the smallest representable multiplier: frexp gives shift -31.
  EXPECT_EQ(QuantizeMultiplier(1.0 / (1ull << 32)), (QuantizedMultiplier{1073741824, -31}));
  EXPECT_EQ(QuantizeMultiplier(1.0 / (1ull << 33)), (QuantizedMultiplier{0, 0}));
}

TEST(QuantizeMultiplierTest, Primitives) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(3, 1 << 30), 2);
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(-3, 1 << 30), -1);
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(kMin, kMin), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(RoundingDivideByPOT(3, 1), 2);
  EXPECT_EQ(RoundingDivideByPOT(-3, 1), -2);
  EXPECT_EQ(RoundingDivideByPOT(-5, 2), -1);
  EXPECT_EQ(RoundingDivideByPOT(-6, 2), -2);
  EXPECT_EQ(RoundingDivideByPOT(7, 0), 7);
}

TEST(QuantizeMultiplierTest, ActivationRanges) {
  // scale 0.05, zp -10: quantize(0) = -10, quantize(6) = 110, quantize(+-1) = -30 / 10.
  EXPECT_EQ(ComputeActivationRange(Activation::kNone, 0.05, -10), (ActivationRange{-128, 127}));
  EXPECT_EQ(ComputeActivationRange(Activation::kRelu, 0.05, -10), (ActivationRange{-10, 127}));
  EXPECT_EQ(ComputeActivationRange(Activation::kRelu6, 0.05, -10), (ActivationRange{-10, 110}));
  EXPECT_EQ(ComputeActivationRange(Activation::kReluN1To1, 0.05, -10), (ActivationRange{-30, 10}));
  // Large scales leave the clamp at the type limits.
  EXPECT_EQ(ComputeActivationRange(Activation::kRelu6, 0.01, -128), (ActivationRange{-128, 127}));
  EXPECT_EQ(ComputeActivationRange(Activation::kTanh, 0.05, 3), (ActivationRange{-128, 127}));
  // Round half away from zero: 0.5 / 1.0 -> 1, -0.5 -> -1.
  EXPECT_EQ(QuantizeValue(0.5, 1.0, 0), 1);
  EXPECT_EQ(QuantizeValue(-0.5, 1.0, 0), -1);
}

TEST(QuantizeMultiplierTest, AddSubParams) {
  const AddSubParams p = ComputeAddSubParams(0.5, 3, 0.25, -4, 0.125, 7);
  EXPECT_EQ(p.left_shift, 20);
  EXPECT_EQ(p.input1_offset, -3);
  EXPECT_EQ(p.input2_offset, 4);
  EXPECT_EQ(p.output_offset, 7);
  EXPECT_EQ(p.input1, QuantizeMultiplier(0.5));   // 0.5 / (2 * 0.5)
  EXPECT_EQ(p.input2, QuantizeMultiplier(0.25));  // 0.25 / (2 * 0.5)
  EXPECT_EQ(p.output, QuantizeMultiplier(1.0 / (1 << 20) / 0.125));
}

TEST(QuantizeMultiplierTest, MulSigmoidSoftmaxParams) {
  const MulParams mul = ComputeMulParams(0.5, 1, 0.25, 2, 0.0625, -3);
  EXPECT_EQ(mul.output, QuantizeMultiplier(2.0));
  EXPECT_EQ(mul.output_offset, -3);

  // input scale 2^-4: 2^-4 * 2^27 = 2^23 = 0.5 * 2^24 -> multiplier 2^30, left shift 24;
  // radius = floor(15 * 2^27 / 2^24) = 120.
  const SigmoidParams sig = ComputeSigmoidParams(1.0 / 16, 5);
  EXPECT_EQ(sig.input_zero_point, 5);
  EXPECT_EQ(sig.input_multiplier, 1 << 30);
  EXPECT_EQ(sig.input_left_shift, 24);
  EXPECT_EQ(sig.input_range_radius, 120);

  // beta 1, scale 2^-4: 2^-4 * 2^26 = 2^22 -> (2^30, 23); diff_min = -floor(31 * 2^26 / 2^23).
  const SoftmaxParams sm = ComputeSoftmaxParams(1.0, 1.0 / 16);
  EXPECT_EQ(sm.input_multiplier, 1 << 30);
  EXPECT_EQ(sm.input_left_shift, 23);
  EXPECT_EQ(sm.diff_min, -248);
}

}  // namespace
}  // namespace boardlab::compiler
