// Unit tests of the int8 reference math against hand-computed cases and the worked vectors of
// shared/reference/tflite-int8.md section 9, plus registry coverage and negative Prepare cases.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "compiler/op_types.h"
#include "gtest/gtest.h"
#include "runtime/kernels/reference/activations_s8.h"
#include "runtime/kernels/reference/add_s8.h"
#include "runtime/kernels/reference/conv2d_s8.h"
#include "runtime/kernels/reference/depthwise_conv2d_s8.h"
#include "runtime/kernels/reference/fully_connected_s8.h"
#include "runtime/kernels/reference/int8_dot.h"
#include "runtime/kernels/reference/mean_s8.h"
#include "runtime/kernels/reference/pooling_s8.h"
#include "runtime/kernels/reference/quantized_math.h"
#include "runtime/kernels/reference/softmax_s8.h"
#include "tests/runtime/kernel_test_util.h"

namespace boardlab::runtime::kernels {
namespace {

TEST(KernelQuantizedMath, WorkedVectorsSection9) {
  struct Row {
    int32_t qm, shift, x, expected;
  };
  const Row rows[] = {
      {1073741824, 0, 100, 50}, {1610612736, 0, -2, -1},
      {1610612736, 0, 6, 5},    {1073741824, -1, -2, -1},
      {1073741824, -1, -6, -2}, {1073741824, -1, 81, 21},
      {1696766344, -6, 81, 1},  {1073741824, 1, 12345, 12345},
      {1073741824, 1, -7, -7},  {1342177280, 2, 4, 10},
      {0, 0, 1000, 0},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(MultiplyByQuantizedMultiplier(r.x, r.qm, r.shift), r.expected)
        << r.qm << " " << r.shift << " " << r.x;
  }
}

TEST(KernelQuantizedMath, Primitives) {
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(3, 1 << 30), 2);
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(-3, 1 << 30), -1);
  EXPECT_EQ(SaturatingRoundingDoublingHighMul(kInt32Min, kInt32Min), kInt32Max);
  EXPECT_EQ(RoundingDivideByPOT(3, 1), 2);
  EXPECT_EQ(RoundingDivideByPOT(-3, 1), -2);
  EXPECT_EQ(RoundingDivideByPOT(-5, 2), -1);
  EXPECT_EQ(RoundingDivideByPOT(-6, 2), -2);
}

TEST(KernelQuantizedMath, FixedPointFunctionsTrackTheReals) {
  // exp(-x) for x in Q5.26, logistic/tanh in Q4.27: within a few Q0.31 ulps of the real values.
  for (double x : {0.0, 0.1, 0.5, 1.0, 2.5, 7.0, 15.0}) {
    const int32_t raw = static_cast<int32_t>(-x * (1 << 26));
    const double e = fixed_point::ExpOnNegativeValues(raw, 5) / 2147483648.0;
    EXPECT_NEAR(e, std::exp(-x), 1e-6) << x;
  }
  for (double x : {-7.0, -1.0, -0.3, 0.0, 0.3, 1.0, 7.0}) {
    const int32_t raw = static_cast<int32_t>(x * (1 << 27));
    EXPECT_NEAR(fixed_point::Logistic(raw, 4) / 2147483648.0, 1.0 / (1.0 + std::exp(-x)), 1e-6);
    EXPECT_NEAR(fixed_point::Tanh(raw, 4) / 2147483648.0, std::tanh(x), 1e-6);
  }
}

TEST(KernelReference, Conv2DHandComputed) {
  // 1x3x3x1 input, one 2x2 filter of ones, VALID stride 1, multiplier 0.5 (qm 2^30, shift 0).
  const int8_t input[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const int8_t filter[4] = {1, 1, 1, 1};
  const int32_t bias[1] = {1};
  const int32_t mult[1] = {1 << 30}, shift[1] = {0};
  ConvParams p;
  p.input_offset = 1;  // input zero point -1
  p.out.output_offset = -2;
  int8_t out[4];
  ASSERT_EQ(conv2d_s8(p, {mult, shift, 1}, {1, 3, 3, 1}, input, {1, 2, 2, 1}, filter, bias,
                      {1, 2, 2, 1}, out),
            Error::kOk);
  // acc = sum(window) + 4 (input offset x 4 taps) + 1 (bias); x0.5 rounds ties up; then -2.
  EXPECT_EQ(out[0], 7);   // (1+2+4+5)+5 = 17 -> 9 - 2
  EXPECT_EQ(out[1], 9);   // (2+3+5+6)+5 = 21 -> 11 - 2
  EXPECT_EQ(out[2], 13);  // (4+5+7+8)+5 = 29 -> 15 - 2
  EXPECT_EQ(out[3], 15);  // (5+6+8+9)+5 = 33 -> 17 - 2
  // SAME padding: taps outside the input are skipped (same as padding with the zero point).
  p.pad_top = 0;
  int8_t same[9];
  ASSERT_EQ(conv2d_s8(p, {mult, shift, 1}, {1, 3, 3, 1}, input, {1, 2, 2, 1}, filter, bias,
                      {1, 3, 3, 1}, same),
            Error::kOk);
  EXPECT_EQ(same[8], 4);  // only the 9 tap: (9+1)+1 = 11 -> 5.5 ties up to 6, - 2
  EXPECT_EQ(same[0], out[0]);
}

TEST(KernelReference, DepthwiseMultiplier2) {
  const int8_t input[2] = {3, -4};                       // 1x1x1x2
  const int8_t filter[4] = {1, 2, 3, -1};                // 1x1x1x4, oc = ic*2 + m
  const int32_t mult[1] = {1073741824}, shift[1] = {1};  // x1.0
  DepthwiseConvParams p;
  p.depth_multiplier = 2;
  int8_t out[4];
  int32_t scratch[4];
  ASSERT_EQ(depthwise_conv2d_s8(p, {mult, shift, 1}, {1, 1, 1, 2}, input, {1, 1, 1, 4}, filter,
                                nullptr, {1, 1, 1, 4}, out, scratch, sizeof(scratch)),
            Error::kOk);
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[1], 6);
  EXPECT_EQ(out[2], -12);
  EXPECT_EQ(out[3], 4);
  EXPECT_EQ(depthwise_conv2d_s8(p, {mult, shift, 1}, {1, 1, 1, 2}, input, {1, 1, 1, 4}, filter,
                                nullptr, {1, 1, 1, 4}, out, scratch, 8),
            Error::kInvalidArgument);
}

TEST(KernelReference, DepthwiseSaturatingBiasClampsInsteadOfWrapping) {
  // 8 channels (the per-channel fast path): acc = 127 * 127 each, bias 100 below INT32_MAX.
  std::vector<int8_t> input(8, 127), filter(8, 127);
  const std::vector<int32_t> bias(8, 2147483647 - 100);
  const std::vector<int32_t> mult(8, 1 << 30), shift(8, 0);  // x0.5
  DepthwiseConvParams p;
  std::vector<int8_t> out(8);
  int32_t scratch[8];
  for (const int32_t channels : {8, 1}) {  // per-channel table, then per-tensor
    SCOPED_TRACE(channels);
    for (const bool saturate : {false, true}) {
      p.conv.saturate_bias = saturate;
      ASSERT_EQ(depthwise_conv2d_s8(p, {mult.data(), shift.data(), channels}, {1, 1, 1, 8},
                                    input.data(), {1, 1, 1, 8}, filter.data(), bias.data(),
                                    {1, 1, 1, 8}, out.data(), scratch, sizeof(scratch)),
                Error::kOk);
      // Saturated: INT32_MAX x0.5 clamps to 127. Wrapped: about -2^31 x0.5 clamps to -128.
      EXPECT_EQ(out, std::vector<int8_t>(8, saturate ? 127 : -128));
    }
  }
}

TEST(KernelReference, Conv2DPrepackedEqualsConv2D) {
  if (!HavePackedDot()) GTEST_SKIP() << "no packed dot kernel on this machine (needs AVX2)";
  // 2x5x5x8 input, 13 filters of 3x3x8, stride 2, SAME-like padding, per-channel requantization.
  const Dims4 in{2, 5, 5, 8}, f{13, 3, 3, 8}, out{2, 3, 3, 13};
  std::vector<int8_t> input(static_cast<size_t>(in.Size())), filter(static_cast<size_t>(f.Size()));
  uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<int8_t>(state >> 24);
  };
  for (int8_t& v : input) v = next();
  for (int8_t& v : filter) v = next();
  std::vector<int32_t> bias(13), mult(13), shift(13);
  for (int32_t c = 0; c < 13; ++c) {
    bias[static_cast<size_t>(c)] = (c - 6) * 997;
    mult[static_cast<size_t>(c)] = (1 << 30) + c * 4099;
    shift[static_cast<size_t>(c)] = -7 - c % 3;
  }
  ConvParams p;
  p.stride_h = p.stride_w = 2;
  p.pad_top = p.pad_left = 1;
  p.input_offset = 5;
  p.out.output_offset = -3;
  const ChannelQuant q{mult.data(), shift.data(), 13};
  std::vector<uint8_t> scratch(conv2d_s8_get_buffer_size_packed(in, f));
  std::vector<int8_t> expected(static_cast<size_t>(out.Size())), actual(expected.size());
  ASSERT_EQ(conv2d_s8(p, q, in, input.data(), f, filter.data(), bias.data(), out, expected.data()),
            Error::kOk);
  const int32_t k = f.h * f.w * f.c;
  std::vector<int16_t> packed(PackedRowsElements(f.n, k));
  PackRowsForDot(filter.data(), ptrdiff_t{8} * k, k, 8, f.n, k, packed.data());
  ASSERT_EQ(conv2d_s8_prepacked(p, q, in, input.data(), f, packed.data(), bias.data(), out,
                                actual.data(), scratch.data(), scratch.size()),
            Error::kOk);
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(conv2d_s8_prepacked(p, q, in, input.data(), f, packed.data(), bias.data(), out,
                                actual.data(), scratch.data(), 16),
            Error::kInvalidArgument);
}

TEST(KernelReference, FullyConnectedPerChannel) {
  const int8_t x[3] = {1, 2, 3};
  const int8_t w[6] = {1, 1, 1, 2, 0, -1};
  const int32_t mult[2] = {1 << 30, 1 << 30}, shift[2] = {1, 0};  // x1.0 and x0.5
  FullyConnectedParams p;
  int8_t y[2];
  ASSERT_EQ(fully_connected_s8(p, {mult, shift, 2}, 1, 3, 2, x, w, nullptr, y), Error::kOk);
  EXPECT_EQ(y[0], 6);
  EXPECT_EQ(y[1], 0);  // -1 * 0.5 = -0.5: the doubling high multiply rounds ties toward +inf
}

TEST(KernelReference, AveragePoolRoundsHalfAwayAndSkipsPadding) {
  const int8_t input[4] = {1, 2, -3, -4};  // 1x2x2x1
  PoolParams p;
  p.filter_h = p.filter_w = 2;
  int8_t out[1];
  ASSERT_EQ(avgpool_s8(p, {1, 2, 2, 1}, input, {1, 1, 1, 1}, out), Error::kOk);
  EXPECT_EQ(out[0], -1);  // -4/4 = -1
  // 3x3 SAME at a corner sees 4 inputs, not 9.
  const int8_t in2[4] = {1, 2, 2, 2};
  p.filter_h = p.filter_w = 3;
  p.pad_top = p.pad_left = 1;
  ASSERT_EQ(avgpool_s8(p, {1, 2, 2, 1}, in2, {1, 1, 1, 1}, out), Error::kOk);
  EXPECT_EQ(out[0], 2);  // 7/4 = 1.75 -> 2
  const int8_t in3[4] = {-1, -2, -2, -2};
  ASSERT_EQ(avgpool_s8(p, {1, 2, 2, 1}, in3, {1, 1, 1, 1}, out), Error::kOk);
  EXPECT_EQ(out[0], -2);  // -7/4 = -1.75 -> -2; -6/4 would give -2 (ties away)
}

TEST(KernelReference, MeanFoldsTheCountIntoTheMultiplier) {
  // 1x2x2x1, sum -7, count 4, in_scale/out_scale = 1 (qm 2^30, shift 1), zero points 0: the count
  // folds into the multiplier (s = 2, m' = 2^32 / 4 = 2^30, shift' = -1): -7 * 0.25 = -1.75 -> -2.
  // TFLite Micro takes this path even when the quantization is equal (MobileNetV2's MEAN matches
  // the goldens only this way); truncating -7 / 4 would give -1.
  const int8_t input[4] = {-1, -2, -2, -2};
  const int32_t axes[2] = {1, 2};
  MeanParams p;
  ShapeN s;
  s.rank = 4;
  s.dims[0] = 1;
  s.dims[1] = 2;
  s.dims[2] = 2;
  s.dims[3] = 1;
  int8_t out[1];
  int32_t scratch[1];
  p.multiplier = 1 << 30;
  p.shift = 1;
  ASSERT_EQ(mean_s8(p, s, input, axes, 2, out, 1, scratch, sizeof(scratch)), Error::kOk);
  EXPECT_EQ(out[0], -2);
}

TEST(KernelReference, AddSameScaleIsExactSum) {
  // Both inputs and output at one scale: multipliers 0.5, 0.5 and 1/2^20... computed as the
  // compiler does for scale s: input mults 0.5 (2^30, 0), output 2s/(2^20 s) = 2^-19.
  AddParams p;
  p.input1_multiplier = p.input2_multiplier = 1 << 30;
  p.output_multiplier = 1 << 30;
  p.output_shift = -18;
  ShapeN a;
  a.rank = 1;
  a.dims[0] = 3;
  ShapeN b;
  b.rank = 1;
  b.dims[0] = 1;
  const int8_t x[3] = {1, -5, 100}, y[1] = {20};
  int8_t out[3];
  ASSERT_EQ(add_s8(p, a, x, b, y, a, out), Error::kOk);
  EXPECT_EQ(out[0], 21);
  EXPECT_EQ(out[1], 15);
  EXPECT_EQ(out[2], 120);
  ASSERT_EQ(sub_s8(p, a, x, b, y, a, out), Error::kOk);
  EXPECT_EQ(out[0], -19);
  EXPECT_EQ(out[2], 80);
}

TEST(KernelReference, SoftmaxUniformRow) {
  // Equal inputs: each of n outputs is 1/n: n = 4 -> 64/256 -> -64.
  const int8_t x[4] = {5, 5, 5, 5};
  int8_t y[4];
  SoftmaxParams p{1 << 30, 20, -1000};
  ASSERT_EQ(softmax_s8(p, 1, 4, x, y), Error::kOk);
  for (int8_t v : y) EXPECT_EQ(v, -64);
}

TEST(KernelReference, LogisticAndTanhAtZero) {
  const int8_t x[1] = {7};
  int8_t y[1];
  SigmoidParams p{7, 1 << 30, 20, 100};
  ASSERT_EQ(logistic_s8(p, 1, x, y), Error::kOk);
  EXPECT_EQ(y[0], 0);  // 0.5 * 256 - 128
  ASSERT_EQ(tanh_s8(p, 1, x, y), Error::kOk);
  EXPECT_EQ(y[0], 0);
}

TEST(KernelRegistry, EveryCompilerOpHasAKernel) {
  for (int i = 0; i < compiler::kNumOpTypes; ++i) {
    std::string name = compiler::OpTypeName(static_cast<compiler::OpType>(i));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const std::string key = "boardlab::" + name + ".out";
    EXPECT_NE(FindKernel(key.c_str()), nullptr) << key;
  }
  // One per op type, and `copy`, which IF and WHILE use to hand tensors to their subgraphs.
  EXPECT_EQ(AllKernels().size(), static_cast<size_t>(compiler::kNumOpTypes) + 1);
  EXPECT_NE(FindKernel("boardlab::copy.out"), nullptr);
  EXPECT_EQ(FindKernel("boardlab::lsh_projection.out"), nullptr);
  EXPECT_EQ(FindKernel(nullptr), nullptr);
}

TEST(KernelPrepare, RejectsWrongArgumentLayouts) {
  using testing::KernelArgs;
  std::vector<int8_t> in(16), out(16);
  {
    KernelArgs a;  // conv with too few arguments
    a.Tensor(ScalarType::kChar, {1, 4, 4, 1}, in.data());
    a.Tensor(ScalarType::kChar, {1, 4, 4, 1}, out.data());
    EXPECT_EQ(testing::RunKernel("boardlab::conv_2d.out", a), Error::kInvalidProgram);
  }
  {
    KernelArgs a;  // softmax with an Int where the Double beta goes
    a.Tensor(ScalarType::kChar, {1, 16}, in.data());
    a.Int(1);
    a.Int(1 << 30);
    a.Int(20);
    a.Int(-100);
    a.Tensor(ScalarType::kChar, {1, 16}, out.data());
    EXPECT_EQ(testing::RunKernel("boardlab::softmax.out", a), Error::kInvalidProgram);
    EXPECT_NE(std::string(LastErrorMessage()).find("softmax"), std::string::npos);
  }
  {
    KernelArgs a;  // maximum with differing quantization is not supported
    a.Tensor(ScalarType::kChar, {16}, in.data());
    a.Tensor(ScalarType::kChar, {16}, in.data());
    a.IntList({0, 1, 0});
    a.DoubleList({0.1, 0.1, 0.1});
    a.Tensor(ScalarType::kChar, {16}, out.data());
    EXPECT_EQ(testing::RunKernel("boardlab::maximum.out", a), Error::kNotSupported);
  }
}

}  // namespace
}  // namespace boardlab::runtime::kernels
