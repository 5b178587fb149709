// The importer's checks of LOG_SOFTMAX, L2_NORMALIZATION, L2_POOL_2D and RESIZE_BILINEAR
// (issue 13, batch 3): what TFLite Micro (or TFLite's Prepare) refuses is refused when compiling,
// with the reason and the op's index.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/compiler/validate_test_util.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using compiler::OpType;
using validate_test::ExpectInvalid;
using validate_test::ExpectUnsupported;
using validate_test::kQ;
using validate_test::OneOp;

const QuantParams kLogSoftmaxOut = PerTensor(16.0f / 256, 127);
const QuantParams kL2NormOut = PerTensor(1.0f / 128, 0);

// Every batch-3 op compiles (so imports) and stays on the CPU, each with its reason.
TEST(ValidateNormalizationOps, EveryCaseRunsOnTheCpuWithAReason) {
  validate_test::ExpectEveryCaseOnTheCpu(NormalizationCases());
}

TEST(ValidateNormalizationOps, LogSoftmaxOutputQuantizationIsFixed) {
  OneOp m;
  const int in = m.Act({2, 8});
  ExpectUnsupported(m.Op(OpType::kLogSoftmax, {in}, {m.Out({2, 8}, TflType::kInt8, kQ)}),
                    {"LOG_SOFTMAX #0", "must be (0.0625, 127)"});
}

TEST(ValidateNormalizationOps, LogSoftmaxIsInt8Only) {
  OneOp m;
  const int in = m.Act({2, 8}, TflType::kFloat32);
  ExpectUnsupported(m.Op(OpType::kLogSoftmax, {in}, {m.Out({2, 8}, TflType::kFloat32)}),
                    {"LOG_SOFTMAX #0", "is float32", "int8 activations only"});
}

TEST(ValidateNormalizationOps, LogSoftmaxOfAScalarIsUnsupported) {
  OneOp m;
  const int in = m.Act({});
  ExpectInvalid(m.Op(OpType::kLogSoftmax, {in}, {m.Out({}, TflType::kInt8, kLogSoftmaxOut)}),
                {"LOG_SOFTMAX #0", "rank"});
}

TEST(ValidateNormalizationOps, LogSoftmaxInputScaleRange) {
  for (float scale : {1e-9f, 16.0f}) {
    OneOp m;
    const int in = m.Act({4}, TflType::kInt8, PerTensor(scale, 0));
    ExpectUnsupported(m.Op(OpType::kLogSoftmax, {in}, {m.Out({4}, TflType::kInt8, kLogSoftmaxOut)}),
                      {"LOG_SOFTMAX #0", "outside [2^-26, 16)"});
  }
}

TEST(ValidateNormalizationOps, L2NormalizationOutputQuantizationIsFixed) {
  OneOp m;
  const int in = m.Act({2, 8});
  ExpectUnsupported(m.Op(OpType::kL2Normalization, {in},
                         {m.Out({2, 8}, TflType::kInt8, PerTensor(0.01f, 0))}, ElementwiseOpts{}),
                    {"L2_NORMALIZATION #0", "must be (0.0078125, 0)"});
}

TEST(ValidateNormalizationOps, L2NormalizationRefusesAFusedActivation) {
  OneOp m;
  const int in = m.Act({2, 8});
  ExpectUnsupported(
      m.Op(OpType::kL2Normalization, {in}, {m.Out({2, 8}, TflType::kInt8, kL2NormOut)},
           ElementwiseOpts{Activation::kRelu}),
      {"L2_NORMALIZATION #0", "fused activation 1"});
}

TEST(ValidateNormalizationOps, L2NormalizationRankIsAtMostFour) {
  OneOp m;
  const int in = m.Act({1, 2, 2, 2, 3});
  ExpectInvalid(m.Op(OpType::kL2Normalization, {in},
                     {m.Out({1, 2, 2, 2, 3}, TflType::kInt8, kL2NormOut)}, ElementwiseOpts{}),
                {"L2_NORMALIZATION #0", "rank"});
}

TEST(ValidateNormalizationOps, L2PoolIsFloatOnly) {
  OneOp m;
  const int in = m.Act({1, 4, 4, 2});
  ExpectUnsupported(m.Op(OpType::kL2Pool2D, {in}, {m.Out({1, 2, 2, 2})},
                         Pool2DOpts{Padding::kValid, 2, 2, 2, 2, Activation::kNone}),
                    {"L2_POOL_2D #0", "TFLite Micro's L2_POOL_2D computes float32 only"});
}

TEST(ValidateNormalizationOps, L2PoolOutputShapeFollowsTheWindow) {
  OneOp m;
  const int in = m.Act({1, 4, 4, 2}, TflType::kFloat32);
  ExpectInvalid(m.Op(OpType::kL2Pool2D, {in}, {m.Out({1, 3, 3, 2}, TflType::kFloat32)},
                     Pool2DOpts{Padding::kValid, 2, 2, 2, 2, Activation::kNone}),
                {"L2_POOL_2D #0", "[1,2,2,2]"});
}

TEST(ValidateNormalizationOps, ResizeBilinearNeedsOneQuantization) {
  OneOp m;
  const int in = m.Act({1, 2, 2, 3});
  const int size = m.b.AddConstInt32("size", {2}, std::vector<int32_t>{4, 4});
  ExpectUnsupported(
      m.Op(OpType::kResizeBilinear, {in, size},
           {m.Out({1, 4, 4, 3}, TflType::kInt8, PerTensor(0.1f, 0))}, ResizeNearestNeighborOpts{}),
      {"RESIZE_BILINEAR #0", "quantized differently"});
}

TEST(ValidateNormalizationOps, ResizeBilinearRefusesBothCoordinateModes) {
  OneOp m;
  const int in = m.Act({1, 2, 2, 3});
  const int size = m.b.AddConstInt32("size", {2}, std::vector<int32_t>{4, 4});
  ExpectInvalid(m.Op(OpType::kResizeBilinear, {in, size}, {m.Out({1, 4, 4, 3})},
                     ResizeNearestNeighborOpts{true, true}),
                {"RESIZE_BILINEAR #0", "align_corners and half_pixel_centers"});
}

TEST(ValidateNormalizationOps, ResizeBilinearSizeIsAConstantInt32) {
  OneOp m;
  const int in = m.Act({1, 2, 2, 3});
  const int size = m.Act({2}, TflType::kInt32);
  ExpectUnsupported(
      m.Op(OpType::kResizeBilinear, {in, size}, {m.Out({1, 4, 4, 3})}, ResizeNearestNeighborOpts{}),
      {"RESIZE_BILINEAR #0", "is int32"});
}

}  // namespace
}  // namespace boardlab::testing
