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
                         "boardlab::square.out", "boardlab::round.out", "boardlab::floor.out"}) {
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

}  // namespace
}  // namespace boardlab::runtime
