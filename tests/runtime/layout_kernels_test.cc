// The layout, comparison and selection kernels called directly, as the executor calls them: a
// program whose arguments contradict each other fails at Prepare with kInvalidProgram (never a
// crash), index values from a run-time tensor are checked where Eval reads them, and the few
// rules that TFLite Micro enforces at run time (comparison scales, equal quantization of int8
// REDUCE_MAX) give kNotSupported. Conformance of the results is oracle_ops_test.cc's.

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "tests/runtime/kernel_test_util.h"

namespace boardlab::runtime {
namespace {

using testing::KernelArgs;
using testing::RunKernel;

TEST(LayoutKernels, GatherIndexOutOfRangeFailsTheRun) {
  std::vector<int8_t> params(12, 1), out(6);
  std::vector<int32_t> indices = {1, 4};  // params have 4 rows
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {4, 3}, params.data());
  a.Tensor(ScalarType::kInt, {2}, indices.data());
  a.Int(0);
  a.Int(0);
  a.IntList({0, 0, 0});
  a.DoubleList({1, 0, 1});
  a.Tensor(ScalarType::kChar, {2, 3}, out.data());
  EXPECT_EQ(RunKernel("boardlab::gather.out", a), Error::kInvalidArgument);
  EXPECT_NE(std::string(LastErrorMessage()).find("index 4 outside [0, 4)"), std::string::npos)
      << LastErrorMessage();
}

TEST(LayoutKernels, GatherNdIndexOutOfRangeFailsTheRun) {
  std::vector<int8_t> params(12, 1), out(1);
  std::vector<int32_t> indices = {3, -1};
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {4, 3}, params.data());
  a.Tensor(ScalarType::kInt, {1, 2}, indices.data());
  a.IntList({0, 0, 0});
  a.DoubleList({1, 0, 1});
  a.Tensor(ScalarType::kChar, {1}, out.data());
  EXPECT_EQ(RunKernel("boardlab::gather_nd.out", a), Error::kInvalidArgument);
}

// BROADCAST_ARGS's shapes may be run-time values: sizes 3 and 4 in one dimension fail the run.
TEST(LayoutKernels, BroadcastArgsOfShapesThatDoNotBroadcastFailsTheRun) {
  std::vector<int32_t> a = {2, 3}, b = {5, 1, 4}, out(3);
  KernelArgs args;
  args.Tensor(ScalarType::kInt, {2}, a.data());
  args.Tensor(ScalarType::kInt, {3}, b.data());
  args.IntList({0, 0, 0});
  args.DoubleList({0, 0, 0});
  args.Tensor(ScalarType::kInt, {3}, out.data());
  EXPECT_EQ(RunKernel("boardlab::broadcast_args.out", args), Error::kInvalidArgument);
  EXPECT_NE(std::string(LastErrorMessage()).find("dimension 2 of the output meets sizes 3 and 4"),
            std::string::npos)
      << LastErrorMessage();
}

// EMBEDDING_LOOKUP's ids are a run-time input: one outside the table's rows fails the run.
TEST(LayoutKernels, EmbeddingLookupIdOutOfRangeFailsTheRun) {
  std::vector<float> table(12, 1.0f), out(6);
  std::vector<int32_t> ids = {3, 4};  // the table has 4 rows
  KernelArgs a;
  a.Tensor(ScalarType::kInt, {2}, ids.data());
  a.Tensor(ScalarType::kFloat, {4, 3}, table.data());
  a.IntList({0, 0, 0});
  a.DoubleList({0, 0, 0});
  a.Tensor(ScalarType::kFloat, {2, 3}, out.data());
  EXPECT_EQ(RunKernel("boardlab::embedding_lookup.out", a), Error::kInvalidArgument);
  EXPECT_NE(std::string(LastErrorMessage()).find("id 4 at 1 is outside the table's rows [0, 4)"),
            std::string::npos)
      << LastErrorMessage();
}

// int8 rows into float32: (q - 0) * scale, row 1 then row 0.
TEST(LayoutKernels, EmbeddingLookupDequantizesInt8Rows) {
  std::vector<int8_t> table = {-128, 0, 127, 4};
  std::vector<int32_t> ids = {1, 0};
  std::vector<float> out(4);
  KernelArgs a;
  a.Tensor(ScalarType::kInt, {2}, ids.data());
  a.Tensor(ScalarType::kChar, {2, 2}, table.data());
  a.IntList({0, 0, 0});
  a.DoubleList({0, 0.5, 0});
  a.Tensor(ScalarType::kFloat, {2, 2}, out.data());
  ASSERT_EQ(RunKernel("boardlab::embedding_lookup.out", a), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(out, (std::vector<float>{63.5f, 2.0f, -64.0f, 0.0f}));
}

TEST(LayoutKernels, GatherOutputShapeMustFollowTheInputs) {
  std::vector<int8_t> params(12, 1), out(6);
  std::vector<int32_t> indices = {1, 2};
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {4, 3}, params.data());
  a.Tensor(ScalarType::kInt, {2}, indices.data());
  a.Int(1);  // axis 1: the output would be [4, 2]
  a.Int(0);
  a.IntList({0, 0, 0});
  a.DoubleList({1, 0, 1});
  a.Tensor(ScalarType::kChar, {2, 3}, out.data());
  EXPECT_EQ(RunKernel("boardlab::gather.out", a), Error::kInvalidProgram);
}

TEST(LayoutKernels, SplitPartsMustAddUpToTheAxis) {
  std::vector<int8_t> in(10), a0(4), a1(4);
  std::vector<int32_t> axis = {1};
  KernelArgs a;
  a.Tensor(ScalarType::kInt, {1}, axis.data());
  a.Tensor(ScalarType::kChar, {2, 5}, in.data());
  a.Int(2);
  a.IntList({0, 0, 0, 0});
  a.DoubleList({0, 1, 1, 1});
  a.Tensor(ScalarType::kChar, {2, 2}, a0.data());
  a.Tensor(ScalarType::kChar, {2, 2}, a1.data());
  a.TensorListOfLast(2);
  EXPECT_EQ(RunKernel("boardlab::split.out", a), Error::kInvalidProgram);
}

TEST(LayoutKernels, PackOutputMustHoldEveryInput) {
  std::vector<int8_t> x(6), y(6), out(18);
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {2, 3}, x.data());
  a.Tensor(ScalarType::kChar, {2, 3}, y.data());
  a.TensorListOfLast(2);
  a.Int(2);
  a.Int(0);
  a.IntList({0, 0, 0});
  a.DoubleList({1, 1, 1});
  a.Tensor(ScalarType::kChar, {3, 2, 3}, out.data());
  EXPECT_EQ(RunKernel("boardlab::pack.out", a), Error::kInvalidProgram);
}

TEST(LayoutKernels, MirrorPadBeyondTheInput) {
  std::vector<int8_t> in(3), out(7);
  std::vector<int32_t> pads = {2, 2};
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {3}, in.data());
  a.Tensor(ScalarType::kInt, {1, 2}, pads.data());
  a.Int(0);  // REFLECT allows at most 2
  a.IntList({0, 0, 0});
  a.DoubleList({1, 0, 1});
  a.Tensor(ScalarType::kChar, {7}, out.data());
  EXPECT_EQ(RunKernel("boardlab::mirror_pad.out", a), Error::kOk);
  pads = {3, 0};
  KernelArgs b;
  b.Tensor(ScalarType::kChar, {3}, in.data());
  b.Tensor(ScalarType::kInt, {1, 2}, pads.data());
  b.Int(0);
  b.IntList({0, 0, 0});
  b.DoubleList({1, 0, 1});
  b.Tensor(ScalarType::kChar, {6}, out.data());
  EXPECT_EQ(RunKernel("boardlab::mirror_pad.out", b), Error::kInvalidProgram);
}

TEST(LayoutKernels, ComparisonScaleOfOneIsNotSupported) {
  std::vector<int8_t> x(4), y(4);
  std::vector<uint8_t> out(4);
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {4}, x.data());
  a.Tensor(ScalarType::kChar, {4}, y.data());
  a.IntList({0, 0, 0});
  a.DoubleList({1.0, 0.5, 0.0});
  a.Tensor(ScalarType::kBool, {4}, out.data());
  EXPECT_EQ(RunKernel("boardlab::less.out", a), Error::kNotSupported);
}

TEST(LayoutKernels, BoolsCannotBeOrdered) {
  std::vector<uint8_t> x(4), y(4), out(4);
  KernelArgs a;
  a.Tensor(ScalarType::kBool, {4}, x.data());
  a.Tensor(ScalarType::kBool, {4}, y.data());
  a.IntList({0, 0, 0});
  a.DoubleList({0, 0, 0});
  a.Tensor(ScalarType::kBool, {4}, out.data());
  EXPECT_EQ(RunKernel("boardlab::greater.out", a), Error::kInvalidProgram);
  EXPECT_EQ(RunKernel("boardlab::equal.out", a), Error::kOk);
}

TEST(LayoutKernels, Int8ReduceMaxNeedsOneQuantization) {
  std::vector<int8_t> in(6), out(2);
  std::vector<int32_t> axes = {1};
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {2, 3}, in.data());
  a.Tensor(ScalarType::kInt, {1}, axes.data());
  a.Bool(false);
  a.IntList({0, 0, 1});
  a.DoubleList({0.5, 0, 0.5});
  a.Tensor(ScalarType::kChar, {2}, out.data());
  EXPECT_EQ(RunKernel("boardlab::reduce_max.out", a), Error::kNotSupported);
}

TEST(LayoutKernels, CastRefusesConversionsTfliteMicroLacks) {
  std::vector<int8_t> in(4);
  std::vector<int64_t> out(4);
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {4}, in.data());
  a.IntList({0, 0});
  a.DoubleList({0, 0});
  a.Tensor(ScalarType::kLong, {4}, out.data());
  EXPECT_EQ(RunKernel("boardlab::cast.out", a), Error::kInvalidProgram);
}

// Float to integer conversions saturate at the int32 range first (the Cortex-M33's VCVT), then
// keep the low bits; NaN gives 0. Both the host and the firmware compute these values.
TEST(LayoutKernels, CastFromFloatTruncatesAndSaturates) {
  std::vector<float> in = {2.9f, -2.9f, 3e9f, -3e9f, __builtin_nanf(""), 300.0f};
  std::vector<int8_t> out(in.size());
  KernelArgs a;
  a.Tensor(ScalarType::kFloat, {6}, in.data());
  a.IntList({0, 0});
  a.DoubleList({0, 0});
  a.Tensor(ScalarType::kChar, {6}, out.data());
  ASSERT_EQ(RunKernel("boardlab::cast.out", a), Error::kOk);
  // 3e9 saturates to 0x7FFFFFFF (low byte -1), -3e9 to 0x80000000 (low byte 0), 300 -> 44.
  EXPECT_EQ(out, (std::vector<int8_t>{2, -2, -1, 0, 0, 44}));
}

TEST(LayoutKernels, SumWithOneQuantizationAddsRows) {
  std::vector<int8_t> in(6, 3), out(2);
  std::vector<int32_t> axes = {1};
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {2, 3}, in.data());
  a.Tensor(ScalarType::kInt, {1}, axes.data());
  a.Bool(false);
  a.IntList({0, 0, 0});
  a.DoubleList({0.5, 0, 0.5});
  a.Tensor(ScalarType::kChar, {2}, out.data());
  ASSERT_EQ(RunKernel("boardlab::sum.out", a), Error::kOk);
  EXPECT_EQ(out, (std::vector<int8_t>{9, 9}));
}

}  // namespace
}  // namespace boardlab::runtime
