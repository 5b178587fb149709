// Unit tests of the 16x8 reference math: TFLite Micro's int64 requantization on worked numbers
// (derived from its formula by hand: the multiplier rounded to 16 bits and capped at 0x7FFF, one
// shift by 15 - shift rounding ties up), the SOFTMAX tables' fixed end points, and the argument
// checks of the 16x8 kernels.

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/reference/activations_s16.h"
#include "runtime/kernels/reference/activations_s8.h"
#include "runtime/kernels/reference/arith.h"
#include "runtime/kernels/reference/batch_matmul_s8.h"
#include "runtime/kernels/reference/conv_s16.h"
#include "runtime/kernels/reference/quantized_math.h"
#include "runtime/kernels/reference/reduce.h"

namespace boardlab::runtime::kernels {
namespace {

TEST(Kernel16x8Math, Int64RequantizationWorkedNumbers) {
  struct Row {
    int64_t x;
    int32_t qm, shift, expected;
  };
  const Row rows[] = {
      {1000, 1 << 30, 0, 500},                    // 0.5 exactly
      {1001, 1 << 30, 0, 501},                    // 500.5 rounds up
      {-1001, 1 << 30, 0, -500},                  // -500.5 rounds up too
      {1 << 20, 0x7FFFFFFF, 0, 1048544},          // the multiplier capped at 0x7FFF
      {int64_t{3} << 40, 1 << 30, -20, 1572864},  // an accumulator beyond int32
      {123456789, 1518500250, -3, 10911918},      // ~0.7071 / 8, the 16-bit multiplier 23171
  };
  for (const Row& r : rows) {
    EXPECT_EQ(MultiplyByQuantizedMultiplier64(r.x, r.qm, r.shift), r.expected) << r.x;
  }
}

TEST(Kernel16x8Math, SoftmaxTablesEndPoints) {
  Softmax16Tables t;
  BuildSoftmax16Tables(&t);
  EXPECT_EQ(t.exp[512], 32767);                  // exp(0) * 2^15, clamped
  EXPECT_LE(t.exp[0], 2);                        // exp(-10) * 2^15 = 1.49
  EXPECT_EQ(t.one_over_one_plus_x[0], 32767);    // 1 / 1, clamped
  EXPECT_EQ(t.one_over_one_plus_x[512], 16384);  // 1 / 2
  for (int i = 1; i < Softmax16Tables::kSize; ++i) {
    EXPECT_LE(t.exp[i - 1], t.exp[i]) << i;
    EXPECT_GE(t.one_over_one_plus_x[i - 1], t.one_over_one_plus_x[i]) << i;
  }
}

// A 16x8 softmax row of equal values gives each the same share, 1/n in Q0.15.
TEST(Kernel16x8Math, SoftmaxOfEqualValuesIsUniform) {
  Softmax16Tables t;
  BuildSoftmax16Tables(&t);
  const std::vector<int16_t> in(4, 1234);
  std::vector<int16_t> out(4);
  ASSERT_EQ(softmax_s16({1 << 30, 0, &t}, 1, 4, in.data(), out.data()), Error::kOk);
  for (int16_t v : out) EXPECT_NEAR(v, 8192, 2);
}

TEST(Kernel16x8Math, LogisticAndTanhOfZero) {
  const int16_t zero = 0;
  int16_t y = -1;
  ASSERT_EQ(logistic_s16({0, 0}, 1, &zero, &y), Error::kOk);
  EXPECT_EQ(y, 16384);  // 0.5 in Q0.15
  ASSERT_EQ(tanh_s16({0, 0}, 1, &zero, &y), Error::kOk);
  EXPECT_EQ(y, 0);
}

TEST(Kernel16x8Errors, ShiftsOutsideTheInt64RequantizationAreRefused) {
  const int32_t mult = 1 << 30, shift = 8;  // a real multiplier of 2^7
  const ChannelQuant q{&mult, &shift, 1};
  const int16_t in[1] = {1};
  const int8_t w[1] = {1};
  int16_t out[1];
  OutputStage stage;
  stage.act_min = -32768;
  stage.act_max = 32767;
  EXPECT_EQ(fully_connected_s16(stage, q, 1, 1, 1, in, w, nullptr, out), Error::kInvalidArgument);
  ConvParams p;
  p.out = stage;
  const Dims4 d{1, 1, 1, 1};
  EXPECT_EQ(conv2d_s16(p, q, d, in, d, w, nullptr, d, out), Error::kInvalidArgument);
  // The int32 accumulator's requantization takes any shift.
  EXPECT_EQ(conv2d_s16_acc32(p, q, d, in, d, w, nullptr, d, out), Error::kOk);
}

TEST(Kernel16x8Errors, ZeroPointsAndInt8RangesAreRefused) {
  const int32_t mult = 1 << 30, shift = 0;
  const ChannelQuant q{&mult, &shift, 1};
  const int16_t in[1] = {1};
  const int8_t w[1] = {1};
  int16_t out[1];
  ConvParams p;
  p.out.act_min = -32768;
  p.out.act_max = 32767;
  p.input_offset = 3;  // 16x8 has no zero points
  const Dims4 d{1, 1, 1, 1};
  EXPECT_EQ(conv2d_s16(p, q, d, in, d, w, nullptr, d, out), Error::kInvalidArgument);
  p.input_offset = 0;
  p.out.output_offset = 1;
  EXPECT_EQ(conv2d_s16(p, q, d, in, d, w, nullptr, d, out), Error::kInvalidArgument);
  p.out.output_offset = 0;
  p.out.act_max = 40000;
  EXPECT_EQ(conv2d_s16(p, q, d, in, d, w, nullptr, d, out), Error::kInvalidArgument);
}

// RELU6 16x8 is a raw clamp, and its bounds are whatever Prepare passed (here 0 and 32761).
TEST(Kernel16x8Math, Relu6ClampsRawValues) {
  const int16_t in[4] = {-32768, -1, 32760, 32767};
  int16_t out[4];
  ASSERT_EQ(relu6_s16(0, 32761, 4, in, out), Error::kOk);
  EXPECT_EQ(std::vector<int16_t>(out, out + 4), (std::vector<int16_t>{0, 0, 32760, 32761}));
}

// BATCH_MATMUL 16x8 sums in int64: four products 32767 * 32767 give 4294705156, past int32,
// = 131072 * 32766 + 4; the multiplier 2^30 with shift -16 is 2^-17 (rounded to 16 bits:
// 16384, one shift by 31), so the output is 32766.
TEST(Kernel16x8Math, BatchMatMulSumsInInt64) {
  const std::vector<int16_t> lhs(4, 32767), rhs(4, 32767);
  int16_t out = 0;
  BatchMatMulParams p;
  p.multiplier = 1 << 30;
  p.shift = -16;
  ShapeN ls, rs, os;
  ls.rank = rs.rank = os.rank = 2;
  ls.dims[0] = 1, ls.dims[1] = 4;
  rs.dims[0] = 4, rs.dims[1] = 1;
  os.dims[0] = 1, os.dims[1] = 1;
  ASSERT_EQ(batch_matmul_s16(p, ls, lhs.data(), rs, rhs.data(), os, &out), Error::kOk);
  EXPECT_EQ(out, 32766);
}

// SUM 16x8 clamps to int16 (the older float path wrapped): 3 x 20000 with scale 1 in and out.
TEST(Kernel16x8Math, SumClampsToInt16) {
  const int16_t in[3] = {20000, 20000, 20000};
  int16_t out = 0;
  int32_t scratch[1];
  SumParams p;
  p.multiplier = 1 << 30;
  p.shift = 1;  // 1.0
  ShapeN shape;
  shape.rank = 1;
  shape.dims[0] = 3;
  const bool reduced[1] = {true};
  ASSERT_EQ(sum_s16(p, shape, reduced, in, scratch, &out), Error::kOk);
  EXPECT_EQ(out, 32767);
}

// The 16x8 kernels refuse what their Prepare never hands them: clamp bounds outside int16 or
// upside down, zero points, and shifts the int64 requantization cannot take.
TEST(Kernel16x8Errors, NewKernelsRefuseArgumentsTheirPrepareNeverGives) {
  const int16_t in[2] = {1, 2};
  int16_t out[2];
  EXPECT_EQ(relu6_s16(0, 40000, 2, in, out), Error::kInvalidArgument);
  EXPECT_EQ(relu6_s16(5, 4, 2, in, out), Error::kInvalidArgument);
  ReluParams relu;
  relu.act_min = -32768;
  relu.act_max = 32768;
  EXPECT_EQ(relu_s16(relu, 2, in, out), Error::kInvalidArgument);
  BatchMatMulParams bmm;
  bmm.multiplier = 1 << 30;
  bmm.shift = 8;
  ShapeN s;
  s.rank = 2;
  s.dims[0] = s.dims[1] = 1;
  EXPECT_EQ(batch_matmul_s16(bmm, s, in, s, in, s, out), Error::kInvalidArgument);
  bmm.shift = 0;
  bmm.lhs_zero_point = 1;
  EXPECT_EQ(batch_matmul_s16(bmm, s, in, s, in, s, out), Error::kInvalidArgument);
  SquaredDifferenceParams sd;  // left shift 7: the int8 setting
  BroadcastStrides strides;
  EXPECT_EQ(squared_difference_s16(sd, strides, in, in, out), Error::kInvalidArgument);
}

}  // namespace
}  // namespace boardlab::runtime::kernels
