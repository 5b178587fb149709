// The importer's checks of the arithmetic and math ops (issue 13, batch 2): a model that
// contradicts itself is InvalidArgument, one that uses what TFLite Micro refuses is
// Unimplemented with the reason, and each message says where.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/compiler/validate_test_util.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using compiler::ImportTflite;
using compiler::OpType;
using validate_test::ExpectInvalid;
using validate_test::ExpectUnsupported;
using validate_test::OneOp;

TEST(ValidateMathOps, EveryGeneratedCaseImports) {
  for (const OpCase& c : MathCases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<compiler::Graph> g = ImportTflite(SingleCaseModel(c).model);
    EXPECT_TRUE(g.ok()) << g.status();
  }
}

TEST(ValidateMathOps, FloatOnlyOpsRefuseInt8) {
  for (OpType type : {OpType::kExp, OpType::kLog, OpType::kSqrt, OpType::kSquare, OpType::kRound,
                      OpType::kFloor, OpType::kCeil, OpType::kSin, OpType::kCos}) {
    OneOp m;
    const int in = m.Act({4});
    const std::string name = compiler::OpTypeName(type);
    ExpectUnsupported(m.Op(type, {in}, {m.Out({4})}),
                      {name + " #0", "TFLite Micro's " + name + " computes float32 only"});
  }
}

TEST(ValidateMathOps, FloorDivAndModRefuseInt8AndBroadcastOverFourDimensionsAtMost) {
  for (OpType type : {OpType::kFloorDiv, OpType::kFloorMod}) {
    const std::string name = compiler::OpTypeName(type);
    OneOp int8;
    const int a = int8.Act({4}), b = int8.Act({4});
    ExpectUnsupported(int8.Op(type, {a, b}, {int8.Out({4})}),
                      {name + " #0", "TFLite Micro's " + name + " computes float32 only"});
    OneOp rank5;
    const int x = rank5.Act({2, 1, 3, 1, 2}, TflType::kFloat32);
    const int y = rank5.Act({1, 2, 1, 4, 1}, TflType::kFloat32);
    ExpectUnsupported(rank5.Op(type, {x, y}, {rank5.Out({2, 2, 3, 4, 2}, TflType::kFloat32)}),
                      {name + " #0", "needs rank 5", "over at most 4 dimensions"});
  }
}

TEST(ValidateMathOps, RsqrtNeedsQuantizedInt8) {
  OneOp m;
  const int in = m.Act({4}, TflType::kInt8, {});
  ExpectInvalid(m.Op(OpType::kRsqrt, {in}, {m.Out({4})}),
                {"RSQRT #0", "is int8 without quantization"});
}

TEST(ValidateMathOps, EluInt32IsUnsupported) {
  OneOp m;
  const int in = m.Act({4}, TflType::kInt32);
  ExpectUnsupported(m.Op(OpType::kElu, {in}, {m.Out({4}, TflType::kInt32)}),
                    {"ELU #0", "TFLite Micro's ELU takes int8 or float32"});
}

TEST(ValidateMathOps, EluOutputTypeFollowsTheInput) {
  OneOp m;
  const int in = m.Act({4}, TflType::kFloat32);
  ExpectInvalid(m.Op(OpType::kElu, {in}, {m.Out({4})}), {"ELU #0", "is float32 but", "is int8"});
}

TEST(ValidateMathOps, PreluAlphaHasTheInputsType) {
  OneOp m;
  const int in = m.Act({2, 3});
  const int alpha = m.Act({3}, TflType::kFloat32);
  ExpectInvalid(m.Op(OpType::kPrelu, {in, alpha}, {m.Out({2, 3})}), {"PRELU #0", "is float32"});
}

TEST(ValidateMathOps, PreluAlphaMustBroadcast) {
  OneOp m;
  const int in = m.Act({2, 3});
  const int alpha = m.Act({4});
  ExpectInvalid(m.Op(OpType::kPrelu, {in, alpha}, {m.Out({2, 3})}),
                {"PRELU #0", "inputs [2,3] and [4] do not broadcast"});
}

TEST(ValidateMathOps, PreluRankIsAtMostFour) {
  OneOp m;
  const int in = m.Act({1, 2, 2, 2, 3});
  const int alpha = m.Act({3});
  ExpectInvalid(m.Op(OpType::kPrelu, {in, alpha}, {m.Out({1, 2, 2, 2, 3})}),
                {"PRELU #0", "expected rank 0-4"});
}

TEST(ValidateMathOps, PreluOutputShapeIsTheBroadcast) {
  OneOp m;
  const int in = m.Act({2, 1});
  const int alpha = m.Act({3});
  ExpectInvalid(m.Op(OpType::kPrelu, {in, alpha}, {m.Out({2, 1})}),
                {"PRELU #0", "has shape [2,1], the inputs give [2,3]"});
}

TEST(ValidateMathOps, PreluPerChannelAlphaIsUnsupported) {
  OneOp m;
  const int in = m.Act({2, 3});
  QuantParams per_channel;
  per_channel.scales = {0.1f, 0.2f, 0.3f};
  per_channel.zero_points = {0, 0, 0};
  per_channel.axis = 0;
  const int alpha = m.Act({3}, TflType::kInt8, per_channel);
  ExpectUnsupported(m.Op(OpType::kPrelu, {in, alpha}, {m.Out({2, 3})}),
                    {"PRELU #0", "per-channel quantization"});
}

TEST(ValidateMathOps, DivOfQuantizedInt32IsUnsupported) {
  OneOp m;
  const int a = m.Act({4}, TflType::kInt32);
  const int b = m.b.AddTensor("b", {4}, TflType::kInt32, PerTensor(0.5f, 0));
  m.graph_inputs.push_back(b);
  ExpectUnsupported(m.Op(OpType::kDiv, {a, b}, {m.Out({4}, TflType::kInt32)}, ElementwiseOpts{}),
                    {"DIV #0", "'b' is quantized int32"});
}

TEST(ValidateMathOps, DivBroadcastsOverAtMostFiveDimensions) {
  OneOp m;
  const int a = m.Act({2, 1, 2, 1, 2, 3});
  const int b = m.Act({3});
  ExpectUnsupported(m.Op(OpType::kDiv, {a, b}, {m.Out({2, 1, 2, 1, 2, 3})}, ElementwiseOpts{}),
                    {"DIV #0", "needs rank 6", "at most 5 dimensions"});
}

TEST(ValidateMathOps, SquaredDifferenceBroadcastsOverAtMostFourDimensions) {
  OneOp m;
  const int a = m.Act({2, 1, 2, 2, 3}, TflType::kFloat32);
  const int b = m.Act({3}, TflType::kFloat32);
  ExpectUnsupported(
      m.Op(OpType::kSquaredDifference, {a, b}, {m.Out({2, 1, 2, 2, 3}, TflType::kFloat32)}),
      {"SQUARED_DIFFERENCE #0", "at most 4 dimensions"});
}

TEST(ValidateMathOps, SquaredDifferenceOperandsShareAType) {
  OneOp m;
  const int a = m.Act({3});
  const int b = m.Act({3}, TflType::kInt32);
  ExpectInvalid(m.Op(OpType::kSquaredDifference, {a, b}, {m.Out({3})}),
                {"SQUARED_DIFFERENCE #0", "is int32"});
}

TEST(ValidateMathOps, AddNNeedsTwoInputs) {
  OneOp m;
  const int a = m.Act({3});
  ExpectInvalid(m.Op(OpType::kAddN, {a}, {m.Out({3})}),
                {"ADD_N #0", "has 1 inputs, expected at least 2"});
}

TEST(ValidateMathOps, AddNInputsShareOneQuantization) {
  OneOp m;
  const int a = m.Act({3});
  const int b = m.Act({3}, TflType::kInt8, PerTensor(0.05f, 4));
  ExpectUnsupported(m.Op(OpType::kAddN, {a, b}, {m.Out({3})}),
                    {"ADD_N #0", "requires one quantization for every input"});
}

TEST(ValidateMathOps, AddNInputsShareOneShape) {
  OneOp m;
  const int a = m.Act({3}, TflType::kFloat32);
  const int b = m.Act({1, 3}, TflType::kFloat32);
  ExpectInvalid(m.Op(OpType::kAddN, {a, b}, {m.Out({3}, TflType::kFloat32)}),
                {"ADD_N #0", "input 1 [1,3] differs from input 0 [3]"});
}

TEST(ValidateMathOps, CumsumAxisIsOneInt32InsideTheRank) {
  {
    OneOp m;
    const int in = m.Act({2, 3});
    const int axis = m.b.AddConstInt32("axis", {}, std::vector<int32_t>{2});
    ExpectInvalid(m.Op(OpType::kCumsum, {in, axis}, {m.Out({2, 3})}, CumsumOpts{}),
                  {"CUMSUM #0", "axis 2 is outside rank 2"});
  }
  {
    OneOp m;
    const int in = m.Act({2, 3});
    const int axis = m.Act({2}, TflType::kInt32);
    ExpectInvalid(m.Op(OpType::kCumsum, {in, axis}, {m.Out({2, 3})}, CumsumOpts{}),
                  {"CUMSUM #0", "expected one int32"});
  }
}

TEST(ValidateMathOps, CumsumOfAScalarIsInvalid) {
  OneOp m;
  const int in = m.Act({});
  const int axis = m.b.AddConstInt32("axis", {}, std::vector<int32_t>{0});
  ExpectInvalid(m.Op(OpType::kCumsum, {in, axis}, {m.Out({})}, CumsumOpts{}),
                {"CUMSUM #0", "input is a scalar"});
}

}  // namespace
}  // namespace boardlab::testing
