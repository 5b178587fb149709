// The importer's checks of TRANSPOSE_CONV (issue 13, batch 3): what TFLite Micro refuses, and
// the fused activation its versions disagree on, are refused when compiling, with the reason;
// every generated case compiles onto the CPU with its reason.

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
using validate_test::OneOp;

// output_shape, weights [4, 3, 3, 2] and an input [1, 3, 3, 2].
struct TransposeConvModel {
  OneOp m;
  int shape, weights, in;
  explicit TransposeConvModel(std::vector<int32_t> out_shape, int64_t weight_zp = 0) {
    shape = m.b.AddConstInt32("shape", {4}, out_shape);
    const std::vector<int8_t> w(4 * 3 * 3 * 2, 3);
    weights = m.b.AddConstInt8("w", {4, 3, 3, 2}, w, PerTensor(0.01f, weight_zp));
    in = m.Act({1, 3, 3, 2});
  }
  TfliteBuilder& Op(std::vector<int32_t> out_shape, TransposeConvOpts o, int bias = -1) {
    std::vector<int32_t> inputs = {shape, weights, in};
    if (bias >= 0) inputs.push_back(bias);
    return m.Op(OpType::kTransposeConv, inputs, {m.Out(out_shape)}, o);
  }
};

TEST(ValidateTransposeConv, EveryCaseCompilesOntoTheCpuWithAReason) {
  validate_test::ExpectEveryCaseOnTheCpu(TransposeConvCases(), "lowering has no kernel");
}

TEST(ValidateTransposeConv, RefusesAFusedActivation) {
  TransposeConvModel t({1, 6, 6, 4});
  ExpectUnsupported(t.Op({1, 6, 6, 4}, {Padding::kSame, 2, 2, Activation::kRelu}),
                    {"TRANSPOSE_CONV #0", "fused activation 1"});
}

TEST(ValidateTransposeConv, OutputShapeMustMatchItsOperand) {
  TransposeConvModel t({1, 6, 6, 4});
  ExpectInvalid(t.Op({1, 5, 6, 4}, {Padding::kSame, 2, 2, Activation::kNone}),
                {"TRANSPOSE_CONV #0", "[1,6,6,4]"});
}

TEST(ValidateTransposeConv, OutputShapeChannelsAreTheWeights) {
  TransposeConvModel t({1, 6, 6, 3});
  ExpectInvalid(t.Op({1, 6, 6, 3}, {Padding::kSame, 2, 2, Activation::kNone}),
                {"TRANSPOSE_CONV #0", "is not [1,H,W,4]"});
}

TEST(ValidateTransposeConv, WeightsAreSymmetric) {
  TransposeConvModel t({1, 6, 6, 4}, 5);
  ExpectUnsupported(t.Op({1, 6, 6, 4}, {Padding::kSame, 2, 2, Activation::kNone}),
                    {"TRANSPOSE_CONV #0", "zero point 5"});
}

TEST(ValidateTransposeConv, BiasHasOneValuePerOutputChannel) {
  TransposeConvModel t({1, 6, 6, 4});
  const int bias = t.m.b.AddConstInt32("bias", {3}, std::vector<int32_t>{1, 2, 3});
  ExpectInvalid(t.Op({1, 6, 6, 4}, {Padding::kSame, 2, 2, Activation::kNone}, bias),
                {"TRANSPOSE_CONV #0", "3 elements for 4 output channels"});
}

TEST(ValidateTransposeConv, StrideIsPositive) {
  TransposeConvModel t({1, 6, 6, 4});
  ExpectInvalid(t.Op({1, 6, 6, 4}, {Padding::kSame, 0, 2, Activation::kNone}),
                {"TRANSPOSE_CONV #0", "stride"});
}

}  // namespace
}  // namespace boardlab::testing
