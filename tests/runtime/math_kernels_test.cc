// The arithmetic and math kernels (issue 13, batch 2) called directly, as the executor calls
// them: arguments that contradict each other fail at Prepare with kInvalidProgram (never a
// crash), and what TFLite Micro refuses at run time (an int8 RSQRT input below the zero point)
// fails the run with a message. Conformance of the results is oracle_ops_test.cc's.

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/runtime/kernel_test_util.h"

namespace boardlab::runtime {
namespace {

using testing::KernelArgs;
using testing::RunKernel;

bool MessageHas(const char* text) {
  return std::string(LastErrorMessage()).find(text) != std::string::npos;
}

TEST(MathKernels, RsqrtInputBelowTheZeroPointFailsTheRun) {
  std::vector<int8_t> in = {10, 4, 2}, out(3);  // zero point 5: the second value is negative
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {3}, in.data());
  a.IntList({5, 0});
  a.DoubleList({0.1, 0.1});
  a.Tensor(ScalarType::kChar, {3}, out.data());
  EXPECT_EQ(RunKernel("boardlab::rsqrt.out", a), Error::kInvalidArgument);
  EXPECT_TRUE(MessageHas("only defined for positive values")) << LastErrorMessage();
}

TEST(MathKernels, FloatOnlyOpsRefuseInt8) {
  for (const char* op : {"boardlab::exp.out", "boardlab::log.out", "boardlab::sqrt.out",
                         "boardlab::square.out", "boardlab::round.out", "boardlab::floor.out",
                         "boardlab::ceil.out", "boardlab::sin.out", "boardlab::cos.out"}) {
    std::vector<int8_t> in(4), out(4);
    KernelArgs a;
    a.Tensor(ScalarType::kChar, {4}, in.data());
    a.IntList({0, 0});
    a.DoubleList({1, 1});
    a.Tensor(ScalarType::kChar, {4}, out.data());
    EXPECT_EQ(RunKernel(op, a), Error::kInvalidProgram) << op;
  }
}

TEST(MathKernels, UnaryOutputShapeMustBeTheInputs) {
  std::vector<float> in(4), out(6);
  KernelArgs a;
  a.Tensor(ScalarType::kFloat, {4}, in.data());
  a.IntList({0, 0});
  a.DoubleList({0, 0});
  a.Tensor(ScalarType::kFloat, {6}, out.data());
  EXPECT_EQ(RunKernel("boardlab::elu.out", a), Error::kInvalidProgram);
}

TEST(MathKernels, EluInt8NeedsQuantization) {
  std::vector<int8_t> in(4), out(4);
  KernelArgs a;
  a.Tensor(ScalarType::kChar, {4}, in.data());
  a.IntList({0, 0});
  a.DoubleList({0.1, 0});  // no output scale
  a.Tensor(ScalarType::kChar, {4}, out.data());
  EXPECT_EQ(RunKernel("boardlab::elu.out", a), Error::kInvalidProgram);
}

TEST(MathKernels, PreluInputAndAlphaMustShareATypeAndBroadcast) {
  std::vector<int8_t> in(6), out(6);
  std::vector<float> alpha_f(3);
  KernelArgs mixed;
  mixed.Tensor(ScalarType::kChar, {2, 3}, in.data());
  mixed.Tensor(ScalarType::kFloat, {3}, alpha_f.data());
  mixed.IntList({0, 0, 0});
  mixed.DoubleList({0.1, 0.1, 0.1});
  mixed.Tensor(ScalarType::kChar, {2, 3}, out.data());
  EXPECT_EQ(RunKernel("boardlab::prelu.out", mixed), Error::kInvalidProgram);

  std::vector<int8_t> alpha(4);
  KernelArgs shapes;
  shapes.Tensor(ScalarType::kChar, {2, 3}, in.data());
  shapes.Tensor(ScalarType::kChar, {4}, alpha.data());
  shapes.IntList({0, 0, 0});
  shapes.DoubleList({0.1, 0.1, 0.1});
  shapes.Tensor(ScalarType::kChar, {2, 3}, out.data());
  EXPECT_EQ(RunKernel("boardlab::prelu.out", shapes), Error::kInvalidProgram);
  EXPECT_TRUE(MessageHas("do not broadcast")) << LastErrorMessage();
}

// DIV int8 with all scales 1: `a` and `b` quantized with zero points 0 and -100.
Error RunDivS8(const std::vector<int8_t>& a, const std::vector<int8_t>& b,
               std::vector<int8_t>* out) {
  out->assign(a.size(), 0);
  KernelArgs args;
  args.Tensor(ScalarType::kChar, {static_cast<int32_t>(a.size())}, const_cast<int8_t*>(a.data()));
  args.Tensor(ScalarType::kChar, {static_cast<int32_t>(b.size())}, const_cast<int8_t*>(b.data()));
  args.Int(0);  // no fused activation
  args.Int(-128);
  args.Int(127);
  args.IntList({0, -100, 0});
  args.DoubleList({1, 1, 1});
  args.Tensor(ScalarType::kChar, {static_cast<int32_t>(a.size())}, out->data());
  return RunKernel("boardlab::div.out", args);
}

TEST(MathKernels, DivInt8ByTheZeroPointFailsTheRun) {
  std::vector<int8_t> out;
  EXPECT_EQ(RunDivS8({10, 20}, {50, -100}, &out), Error::kInvalidArgument);
  EXPECT_TRUE(MessageHas("division by zero")) << LastErrorMessage();
}

// 1 / 200 and -1 / 200 with unit scales: headroom 30 + reciprocal shift 7 - output shift 1 = 36,
// past TFLite's rounding shift range; TFLite Micro on a Cortex-M gives +1 and -1 there (and 1
// for 0 / 200), not the rounded quotient 0. 100 / 200 stays in range: 0.5 rounds to 1.
TEST(MathKernels, DivInt8ShiftsPast31AsTfliteMicroOnCortexM) {
  std::vector<int8_t> out;
  ASSERT_EQ(RunDivS8({1, -1, 0, 100}, {100, 100, 100, 100}, &out), Error::kOk);
  EXPECT_EQ(out, (std::vector<int8_t>{1, -1, 1, 1}));
}

TEST(MathKernels, DivInt32ByZeroFailsTheRun) {
  std::vector<int32_t> a = {7, 8}, b = {2, 0}, out(2);
  KernelArgs args;
  args.Tensor(ScalarType::kInt, {2}, a.data());
  args.Tensor(ScalarType::kInt, {2}, b.data());
  args.Int(0);
  args.Int(-128);
  args.Int(127);
  args.IntList({0, 0, 0});
  args.DoubleList({0, 0, 0});
  args.Tensor(ScalarType::kInt, {2}, out.data());
  EXPECT_EQ(RunKernel("boardlab::div.out", args), Error::kInvalidArgument);
  EXPECT_TRUE(MessageHas("int32 division by zero")) << LastErrorMessage();
}

// FLOOR_DIV / FLOOR_MOD float32 operands a and b (b broadcast over a) into `out`.
Error RunFloatBinary(const char* op, std::vector<float> a, std::vector<float> b,
                     std::vector<float>* out) {
  out->assign(a.size(), 0.0f);
  KernelArgs args;
  args.Tensor(ScalarType::kFloat, {static_cast<int32_t>(a.size())}, a.data());
  args.Tensor(ScalarType::kFloat, {static_cast<int32_t>(b.size())}, b.data());
  args.IntList({0, 0, 0});
  args.DoubleList({0, 0, 0});
  args.Tensor(ScalarType::kFloat, {static_cast<int32_t>(a.size())}, out->data());
  return RunKernel(op, args);
}

// TFLite Micro checks every divisor before dividing: a zero anywhere fails the run.
TEST(MathKernels, FloorDivByZeroFailsTheRun) {
  std::vector<float> out;
  EXPECT_EQ(RunFloatBinary("boardlab::floor_div.out", {7, 8}, {2, 0}, &out),
            Error::kInvalidArgument);
  EXPECT_TRUE(MessageHas("divisor element 1 is 0")) << LastErrorMessage();
}

// Worked numbers: floor(7 / -2) = -4 and floor(-7 / 2) = -4; fmod(7, -2) = 1 differs in sign from
// -2, so FLOOR_MOD gives 1 + -2 = -1; fmod(-7, 2) = -1 gives -1 + 2 = 1; fmod(6, 3) = 0 stays 0.
TEST(MathKernels, FloorDivAndModRoundTowardMinusInfinity) {
  std::vector<float> out;
  ASSERT_EQ(RunFloatBinary("boardlab::floor_div.out", {7, -7, 6}, {-2, 2, 3}, &out), Error::kOk);
  EXPECT_EQ(out, (std::vector<float>{-4, -4, 2}));
  ASSERT_EQ(RunFloatBinary("boardlab::floor_mod.out", {7, -7, 6}, {-2, 2, 3}, &out), Error::kOk);
  EXPECT_EQ(out, (std::vector<float>{-1, 1, 0}));
}

TEST(MathKernels, FloorDivAndModRefuseInt8) {
  for (const char* op : {"boardlab::floor_div.out", "boardlab::floor_mod.out"}) {
    std::vector<int8_t> a(4), b(4), out(4);
    KernelArgs args;
    args.Tensor(ScalarType::kChar, {4}, a.data());
    args.Tensor(ScalarType::kChar, {4}, b.data());
    args.IntList({0, 0, 0});
    args.DoubleList({1, 1, 1});
    args.Tensor(ScalarType::kChar, {4}, out.data());
    EXPECT_EQ(RunKernel(op, args), Error::kInvalidProgram) << op;
    EXPECT_TRUE(MessageHas("float32 operands only")) << LastErrorMessage();
  }
}

TEST(MathKernels, AddNInputsShareTheOutputsShapeAndQuantization) {
  std::vector<int8_t> x(4), y(4), out(4);
  KernelArgs shapes;
  shapes.Tensor(ScalarType::kChar, {4}, x.data());
  shapes.Tensor(ScalarType::kChar, {2, 2}, y.data());
  shapes.TensorListOfLast(2);
  shapes.IntList({0, 0, 0});
  shapes.DoubleList({0.1, 0.1, 0.1});
  shapes.Tensor(ScalarType::kChar, {4}, out.data());
  EXPECT_EQ(RunKernel("boardlab::add_n.out", shapes), Error::kInvalidProgram);

  KernelArgs quant;
  quant.Tensor(ScalarType::kChar, {4}, x.data());
  quant.Tensor(ScalarType::kChar, {4}, y.data());
  quant.TensorListOfLast(2);
  quant.IntList({0, 1, 0});
  quant.DoubleList({0.1, 0.1, 0.1});
  quant.Tensor(ScalarType::kChar, {4}, out.data());
  EXPECT_EQ(RunKernel("boardlab::add_n.out", quant), Error::kInvalidProgram);
  EXPECT_TRUE(MessageHas("quantized differently")) << LastErrorMessage();
}

TEST(MathKernels, CumsumRunTimeAxisOutsideTheRankFailsTheRun) {
  std::vector<float> in(6), out(6);
  std::vector<int32_t> axis = {2};
  KernelArgs a;
  a.Tensor(ScalarType::kFloat, {2, 3}, in.data());
  a.Tensor(ScalarType::kInt, {}, axis.data());
  a.Bool(false);
  a.Bool(false);
  a.IntList({0, 0, 0});
  a.DoubleList({0, 0, 0});
  a.Tensor(ScalarType::kFloat, {2, 3}, out.data());
  EXPECT_EQ(RunKernel("boardlab::cumsum.out", a), Error::kInvalidArgument);
  EXPECT_TRUE(MessageHas("axis 2 is outside rank 2")) << LastErrorMessage();
}

}  // namespace
}  // namespace boardlab::runtime
