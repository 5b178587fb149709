// The LOG_SOFTMAX, L2_NORMALIZATION, L2_POOL_2D and RESIZE_BILINEAR kernels (issue 13, batch 3)
// called directly, as the executor calls them: arguments that contradict each other fail at
// Prepare with kInvalidProgram, and small cases worked out by hand from TFLite Micro's arithmetic
// pin the rounding rules. Conformance over the generated cases is oracle_ops_test.cc's.

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "tests/runtime/kernel_test_util.h"

namespace boardlab::runtime {
namespace {

using testing::KernelArgs;
using testing::RunKernel;

KernelArgs RowOpArgs(std::vector<int8_t>& in, std::vector<int8_t>& out, std::vector<int32_t> shape,
                     std::vector<int64_t> zero_points, std::vector<double> scales,
                     bool l2_activation_args) {
  KernelArgs a;
  a.Tensor(ScalarType::kChar, shape, in.data());
  if (l2_activation_args) {
    a.Int(0);
    a.Int(-128);
    a.Int(127);
  }
  a.IntList(zero_points);
  a.DoubleList(scales);
  a.Tensor(ScalarType::kChar, shape, out.data());
  return a;
}

// One entry per row gives log(1) = 0: the zero point 127.
TEST(NormalizationKernels, LogSoftmaxOfOneEntryIsZero) {
  std::vector<int8_t> in = {-128, 0, 127}, out(3);
  KernelArgs a = RowOpArgs(in, out, {3, 1}, {0, 127}, {0.1, 0.0625}, false);
  ASSERT_EQ(RunKernel("boardlab::log_softmax.out", a), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(out, (std::vector<int8_t>{127, 127, 127}));
}

// Two equal entries: log(1/2) = -0.693 is -11.09 steps of 1/16 below 127, so 116.
TEST(NormalizationKernels, LogSoftmaxOfTwoEqualEntriesIsLogHalf) {
  std::vector<int8_t> in = {7, 7}, out(2);
  KernelArgs a = RowOpArgs(in, out, {1, 2}, {0, 127}, {0.1, 0.0625}, false);
  ASSERT_EQ(RunKernel("boardlab::log_softmax.out", a), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(out, (std::vector<int8_t>{116, 116}));
}

TEST(NormalizationKernels, LogSoftmaxRefusesAnotherOutputQuantization) {
  std::vector<int8_t> in(4), out(4);
  KernelArgs a = RowOpArgs(in, out, {4}, {0, 0}, {0.1, 0.0625}, false);
  EXPECT_EQ(RunKernel("boardlab::log_softmax.out", a), Error::kInvalidProgram);
}

TEST(NormalizationKernels, LogSoftmaxRefusesATinyInputScale) {
  std::vector<int8_t> in(4), out(4);
  KernelArgs a = RowOpArgs(in, out, {4}, {0, 127}, {1e-9, 0.0625}, false);
  EXPECT_EQ(RunKernel("boardlab::log_softmax.out", a), Error::kInvalidProgram);
}

// A row at the zero point has no norm: the reference's 1/sqrt of 0 is INT32_MAX with shift 0,
// times 0 gives 0. One entry per row is +-1, which saturates to 127 and -128.
TEST(NormalizationKernels, L2NormalizationZeroRowAndUnitRows) {
  std::vector<int8_t> in = {5, 5, 5, 8, 9, 5}, out(6);
  KernelArgs a = RowOpArgs(in, out, {2, 3}, {5, 0}, {0.1, 1.0 / 128}, true);
  ASSERT_EQ(RunKernel("boardlab::l2_normalization.out", a), Error::kOk) << LastErrorMessage();
  // Row 2: v = (3, 4, 0), |v| = 5: 3/5 * 128 = 76.8 -> 77 and 4/5 * 128 = 102.4 -> 102.
  EXPECT_EQ(out, (std::vector<int8_t>{0, 0, 0, 77, 102, 0}));
  std::vector<int8_t> single = {100, -100}, single_out(2);
  KernelArgs b = RowOpArgs(single, single_out, {2, 1}, {0, 0}, {0.1, 1.0 / 128}, true);
  ASSERT_EQ(RunKernel("boardlab::l2_normalization.out", b), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(single_out, (std::vector<int8_t>{127, -128}));
}

TEST(NormalizationKernels, L2NormalizationRefusesAFusedActivation) {
  std::vector<int8_t> in(4), out(4);
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {4}, in.data());
  a.Int(1);
  a.Int(0);
  a.Int(127);
  a.IntList({0, 0});
  a.DoubleList({0.1, 1.0 / 128});
  a.Tensor(ScalarType::kChar, {4}, out.data());
  EXPECT_EQ(RunKernel("boardlab::l2_normalization.out", a), Error::kInvalidProgram);
}

KernelArgs ResizeArgs(std::vector<int8_t>& in, std::vector<int32_t> in_shape,
                      std::vector<int8_t>& out, std::vector<int32_t> out_shape,
                      std::vector<int32_t>& size, bool align, bool half) {
  KernelArgs a;
  a.Tensor(ScalarType::kChar, in_shape, in.data());
  a.Tensor(ScalarType::kInt, {2}, size.data());
  a.Bool(align);
  a.Bool(half);
  a.IntList({0, 0});
  a.DoubleList({0.1, 0.1});
  a.Tensor(ScalarType::kChar, out_shape, out.data());
  return a;
}

// Width 2 -> 3: the scale is round(2048 / 3) = 683 in 1/1024 steps, so output 1 sits at 683/1024
// between the two inputs: 100 * 683 / 1024 = 66.7 -> 67 and -100 * 341 / 1024 = -33.3 -> -33.
TEST(NormalizationKernels, ResizeBilinearWorkedExample) {
  std::vector<int8_t> in = {0, 100}, out(3);
  std::vector<int32_t> size = {1, 3};
  KernelArgs a = ResizeArgs(in, {1, 1, 2, 1}, out, {1, 1, 3, 1}, size, false, false);
  ASSERT_EQ(RunKernel("boardlab::resize_bilinear.out", a), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(out, (std::vector<int8_t>{0, 67, 100}));
  std::vector<int8_t> neg = {-100, 0}, neg_out(3);
  KernelArgs b = ResizeArgs(neg, {1, 1, 2, 1}, neg_out, {1, 1, 3, 1}, size, false, false);
  ASSERT_EQ(RunKernel("boardlab::resize_bilinear.out", b), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(neg_out, (std::vector<int8_t>{-100, -33, 0}));
}

TEST(NormalizationKernels, ResizeBilinearRefusesBothCoordinateModes) {
  std::vector<int8_t> in(4), out(16);
  std::vector<int32_t> size = {4, 4};
  KernelArgs a = ResizeArgs(in, {1, 2, 2, 1}, out, {1, 4, 4, 1}, size, true, true);
  EXPECT_EQ(RunKernel("boardlab::resize_bilinear.out", a), Error::kInvalidProgram);
}

KernelArgs L2PoolArgs(std::vector<float>& in, std::vector<int32_t> in_shape,
                      std::vector<float>& out, std::vector<int32_t> out_shape, int activation) {
  KernelArgs a;
  a.Tensor(ScalarType::kFloat, in_shape, in.data());
  a.IntList({2, 2});
  a.IntList({0, 0, 0, 0});
  a.IntList({2, 2});
  a.Int(-128);
  a.Int(127);
  a.Int(activation);
  a.Tensor(ScalarType::kFloat, out_shape, out.data());
  return a;
}

// sqrt((1 + 4 + 4 + 16) / 4) = 2.5; RELU_N1_TO_1 clamps it to 1.
TEST(NormalizationKernels, L2PoolWorkedExample) {
  std::vector<float> in = {1, -2, 2, 4}, out(1);
  KernelArgs a = L2PoolArgs(in, {1, 2, 2, 1}, out, {1, 1, 1, 1}, 0);
  ASSERT_EQ(RunKernel("boardlab::l2_pool_2d.out", a), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(out[0], 2.5f);
  KernelArgs b = L2PoolArgs(in, {1, 2, 2, 1}, out, {1, 1, 1, 1}, 2);
  ASSERT_EQ(RunKernel("boardlab::l2_pool_2d.out", b), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(out[0], 1.0f);
}

TEST(NormalizationKernels, L2PoolRefusesInt8) {
  std::vector<int8_t> in(4), out(1);
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {1, 2, 2, 1}, in.data());
  a.IntList({2, 2});
  a.IntList({0, 0, 0, 0});
  a.IntList({2, 2});
  a.Int(-128);
  a.Int(127);
  a.Int(0);
  a.Tensor(ScalarType::kChar, {1, 1, 1, 1}, out.data());
  EXPECT_EQ(RunKernel("boardlab::l2_pool_2d.out", a), Error::kInvalidProgram);
}

}  // namespace
}  // namespace boardlab::runtime
