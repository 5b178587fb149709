// The importer's checks of the layout, data movement, comparison and selection ops: a model
// that contradicts itself is InvalidArgument ("invalid model: GATHER #0: ..."), one that uses
// what TFLite Micro refuses is Unimplemented with the reason, and each message says where.

#include <string>
#include <vector>

#include "compiler/import_tflite.h"
#include "gtest/gtest.h"
#include "tests/compiler/validate_test_util.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using compiler::ImportTflite;
using compiler::OpType;
using validate_test::Expect;
using validate_test::ExpectInvalid;
using validate_test::ExpectUnsupported;
using validate_test::kQ;
using validate_test::OneOp;

TEST(ValidateLayoutOps, EveryGeneratedCaseImports) {
  for (const OpCase& c : LayoutAndSelectionCases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<compiler::Graph> g = ImportTflite(SingleCaseModel(c).model);
    EXPECT_TRUE(g.ok()) << g.status();
  }
}

TEST(ValidateLayoutOps, ExpandDimsAxisOutsideTheRank) {
  OneOp m;
  const int in = m.Act({2, 3});
  const int axis = m.b.AddConstInt32("axis", {1}, std::vector<int32_t>{3});
  ExpectInvalid(m.Op(OpType::kExpandDims, {in, axis}, {m.Out({2, 3, 1})}),
                {"EXPAND_DIMS #0", "axis 3 is outside rank 3"});
}

TEST(ValidateLayoutOps, AxisOperandMustBeConstant) {
  OneOp m;
  const int in = m.Act({2, 3});
  const int axis = m.Act({1}, TflType::kInt32);
  ExpectUnsupported(m.Op(OpType::kExpandDims, {in, axis}, {m.Out({1, 2, 3})}),
                    {"EXPAND_DIMS #0", "axis", "must be a constant"});
}

TEST(ValidateLayoutOps, FillDimsDisagreeWithTheOutput) {
  OneOp m;
  const int dims = m.b.AddConstInt32("dims", {2}, std::vector<int32_t>{2, 3});
  const int value = m.Act({});
  ExpectInvalid(m.Op(OpType::kFill, {dims, value}, {m.Out({3, 2})}),
                {"FILL #0", "dims 'dims' [2,3] differ from the output shape [3,2]"});
}

TEST(ValidateLayoutOps, FillValueOfAnotherTypeIsUnsupported) {
  OneOp m;
  const int dims = m.b.AddConstInt32("dims", {1}, std::vector<int32_t>{4});
  const int value = m.Act({}, TflType::kInt16, PerTensor(0.1f, 0));
  ExpectUnsupported(m.Op(OpType::kFill, {dims, value}, {m.Out({4}, TflType::kInt16)}),
                    {"FILL #0", "is int16", "TFLite Micro has no 16x8 (int16 activation) kernel"});
}

TEST(ValidateLayoutOps, BroadcastToAnIncompatibleShape) {
  OneOp m;
  const int in = m.Act({3, 2});
  const int shape = m.b.AddConstInt32("shape", {2}, std::vector<int32_t>{3, 4});
  ExpectInvalid(m.Op(OpType::kBroadcastTo, {in, shape}, {m.Out({3, 4})}),
                {"BROADCAST_TO #0", "[3,2] does not broadcast to [3,4]"});
}

TEST(ValidateLayoutOps, PackCountAndShapes) {
  OneOp m;
  const int a = m.Act({2, 3});
  const int b = m.Act({2, 3});
  ExpectInvalid(m.Op(OpType::kPack, {a, b}, {m.Out({3, 2, 3})}, PackOpts{3, 0}),
                {"PACK #0", "values_count 3 but 2 inputs"});
  OneOp n;
  const int c = n.Act({2, 3});
  const int d = n.Act({3, 2});
  ExpectInvalid(n.Op(OpType::kPack, {c, d}, {n.Out({2, 2, 3})}, PackOpts{2, 0}),
                {"input 1 [3,2] differs from input 0 [2,3]"});
}

TEST(ValidateLayoutOps, UnpackNumMustMatchTheAxis) {
  OneOp m;
  const int in = m.Act({3, 2});
  ExpectInvalid(m.Op(OpType::kUnpack, {in}, {m.Out({3}), m.Out({3})}, UnpackOpts{2, 0}),
                {"UNPACK #0", "num 2 but dimension 0 has size 3"});
}

TEST(ValidateLayoutOps, SplitIntoUnequalParts) {
  OneOp m;
  const int axis = m.b.AddConstInt32("axis", {}, std::vector<int32_t>{1});
  const int in = m.Act({2, 5});
  ExpectInvalid(m.Op(OpType::kSplit, {axis, in}, {m.Out({2, 2}), m.Out({2, 2})}, SplitOpts{2}),
                {"SPLIT #0", "dimension 1 of size 5 does not split into 2 equal parts"});
}

TEST(ValidateLayoutOps, SplitVSizesMustAddUp) {
  OneOp m;
  const int in = m.Act({2, 5});
  const int sizes = m.b.AddConstInt32("sizes", {2}, std::vector<int32_t>{2, 2});
  const int axis = m.b.AddConstInt32("axis", {}, std::vector<int32_t>{1});
  ExpectInvalid(
      m.Op(OpType::kSplitV, {in, sizes, axis}, {m.Out({2, 2}), m.Out({2, 2})}, SplitOpts{2}),
      {"SPLIT_V #0", "size_splits [2,2] do not add up to dimension 1 of size 5"});
}

TEST(ValidateLayoutOps, GatherIndicesMustBeIntegers) {
  OneOp m;
  const int params = m.Act({4, 3});
  const int idx = m.Act({2}, TflType::kFloat32);
  ExpectUnsupported(m.Op(OpType::kGather, {params, idx}, {m.Out({2, 3})}, GatherOpts{0, 0}),
                    {"GATHER #0", "indices", "is float32", "int32 or int64"});
}

TEST(ValidateLayoutOps, GatherBatchDimsAfterTheAxis) {
  OneOp m;
  const int params = m.Act({2, 4, 3});
  const int idx = m.b.AddConstInt32("idx", {2, 2}, std::vector<int32_t>{0, 1, 2, 3});
  ExpectInvalid(m.Op(OpType::kGather, {params, idx}, {m.Out({2, 2, 3})}, GatherOpts{0, 1}),
                {"GATHER #0", "batch_dims 1 with axis 0"});
}

TEST(ValidateLayoutOps, GatherNdIndexDepthAboveTheRank) {
  OneOp m;
  const int params = m.Act({4, 3});
  const int idx = m.b.AddConstInt32("idx", {1, 3}, std::vector<int32_t>{0, 1, 2});
  ExpectInvalid(m.Op(OpType::kGatherNd, {params, idx}, {m.Out({1})}),
                {"GATHER_ND #0", "last dimension 3 exceeds the params rank 2"});
}

TEST(ValidateLayoutOps, ReverseAxisTwice) {
  OneOp m;
  const int in = m.Act({2, 3});
  const int axes = m.b.AddConstInt32("axes", {2}, std::vector<int32_t>{1, -1});
  ExpectInvalid(m.Op(OpType::kReverseV2, {in, axes}, {m.Out({2, 3})}),
                {"REVERSE_V2 #0", "axis 1 appears twice"});
}

TEST(ValidateLayoutOps, MirrorPadWiderThanReflectAllows) {
  OneOp m;
  const int in = m.Act({2, 3});
  const int pads = m.b.AddConstInt32("pads", {2, 2}, std::vector<int32_t>{0, 0, 3, 0});
  ExpectInvalid(m.Op(OpType::kMirrorPad, {in, pads}, {m.Out({2, 6})}, MirrorPadOpts{0}),
                {"MIRROR_PAD #0", "padding 3 on dimension 1 of size 3 (REFLECT allows 0 to 2)"});
}

TEST(ValidateLayoutOps, DepthToSpaceChannelsNotAMultiple) {
  OneOp m;
  const int in = m.Act({1, 2, 2, 6});
  ExpectInvalid(m.Op(OpType::kDepthToSpace, {in}, {m.Out({1, 4, 4, 1})}, BlockSizeOpts{2}),
                {"DEPTH_TO_SPACE #0", "6 channels are not a multiple of block_size^2 4"});
}

TEST(ValidateLayoutOps, SpaceToDepthSizesNotMultiples) {
  OneOp m;
  const int in = m.Act({1, 3, 4, 1});
  ExpectInvalid(m.Op(OpType::kSpaceToDepth, {in}, {m.Out({1, 1, 2, 4})}, BlockSizeOpts{2}),
                {"SPACE_TO_DEPTH #0", "height 3 and width 4 are not multiples of block_size 2"});
}

TEST(ValidateLayoutOps, BatchToSpaceBatchNotAMultiple) {
  OneOp m;
  const int in = m.Act({3, 2, 2, 1});
  const int block = m.b.AddConstInt32("block", {2}, std::vector<int32_t>{2, 2});
  const int crops = m.b.AddConstInt32("crops", {2, 2}, std::vector<int32_t>{0, 0, 0, 0});
  ExpectInvalid(m.Op(OpType::kBatchToSpaceNd, {in, block, crops}, {m.Out({1, 4, 4, 1})}),
                {"BATCH_TO_SPACE_ND #0", "batch 3 is not a multiple of the block count 4"});
}

TEST(ValidateLayoutOps, SpaceToBatchPaddingThatDoesNotDivide) {
  OneOp m;
  const int in = m.Act({1, 3, 2, 1});
  const int block = m.b.AddConstInt32("block", {2}, std::vector<int32_t>{2, 1});
  const int pads = m.b.AddConstInt32("pads", {2, 2}, std::vector<int32_t>{0, 0, 0, 0});
  ExpectInvalid(m.Op(OpType::kSpaceToBatchNd, {in, block, pads}, {m.Out({2, 1, 2, 1})}),
                {"SPACE_TO_BATCH_ND #0", "spatial dimension 0 of size 3 with block 2"});
}

TEST(ValidateLayoutOps, SpaceToBatchPaddingWithAZeroPointWarns) {
  OneOp m;
  const int in = m.Act({1, 3, 2, 1});
  const int block = m.b.AddConstInt32("block", {2}, std::vector<int32_t>{2, 1});
  const int pads = m.b.AddConstInt32("pads", {2, 2}, std::vector<int32_t>{1, 0, 0, 0});
  std::vector<std::string> warnings;
  Expect(m.Op(OpType::kSpaceToBatchNd, {in, block, pads}, {m.Out({2, 2, 2, 1})}),
         absl::StatusCode::kOk, {}, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("the padding is raw 0 (real 3 x scale)"), std::string::npos)
      << warnings[0];
}

TEST(ValidateSelectionOps, ComparisonScaleNotBelowOne) {
  OneOp m;
  const int a = m.Act({4}, TflType::kInt8, PerTensor(1.5f, 0));
  const int b = m.Act({4});
  ExpectUnsupported(m.Op(OpType::kLess, {a, b}, {m.Out({4}, TflType::kBool)}),
                    {"LESS #0", "scale 1.5 is not below 1"});
}

TEST(ValidateSelectionOps, ComparisonWritesBool) {
  OneOp m;
  const int a = m.Act({4});
  const int b = m.Act({4});
  ExpectUnsupported(m.Op(OpType::kEqual, {a, b}, {m.Out({4})}),
                    {"EQUAL #0", "output", "comparisons write bool"});
}

TEST(ValidateSelectionOps, BoolsAreNotOrdered) {
  OneOp m;
  const int a = m.Act({4}, TflType::kBool);
  const int b = m.Act({4}, TflType::kBool);
  ExpectUnsupported(m.Op(OpType::kGreater, {a, b}, {m.Out({4}, TflType::kBool)}),
                    {"GREATER #0", "is bool"});
}

TEST(ValidateSelectionOps, LogicalOpsTakeBool) {
  OneOp m;
  const int a = m.Act({4});
  const int b = m.Act({4}, TflType::kBool);
  ExpectUnsupported(m.Op(OpType::kLogicalAnd, {a, b}, {m.Out({4}, TflType::kBool)}),
                    {"LOGICAL_AND #0", "logical ops take bool"});
}

TEST(ValidateSelectionOps, SelectOperandsDoNotBroadcast) {
  OneOp m;
  const int c = m.Act({3}, TflType::kBool);
  const int x = m.Act({2, 4});
  const int y = m.Act({2, 4});
  ExpectInvalid(m.Op(OpType::kSelectV2, {c, x, y}, {m.Out({2, 4})}),
                {"SELECT_V2 #0", "do not broadcast"});
}

TEST(ValidateSelectionOps, ReduceMaxRequantizingIsUnsupported) {
  OneOp m;
  const int in = m.Act({2, 3});
  const int axes = m.b.AddConstInt32("axes", {1}, std::vector<int32_t>{1});
  ExpectUnsupported(m.Op(OpType::kReduceMax, {in, axes},
                         {m.Out({2}, TflType::kInt8, PerTensor(0.1f, 0))}, ReducerOpts{false}),
                    {"REDUCE_MAX #0", "TFLite Micro's int8 REDUCE_MAX requires the same scale"});
}

TEST(ValidateSelectionOps, ReductionOutputShape) {
  OneOp m;
  const int in = m.Act({2, 3});
  const int axes = m.b.AddConstInt32("axes", {1}, std::vector<int32_t>{1});
  ExpectInvalid(m.Op(OpType::kSum, {in, axes}, {m.Out({2})}, ReducerOpts{true}),
                {"SUM #0", "has shape [2], the inputs give [2,1]"});
}

TEST(ValidateSelectionOps, ArgMaxWritesIndices) {
  OneOp m;
  const int in = m.Act({2, 3});
  const int axis = m.b.AddConstInt32("axis", {1}, std::vector<int32_t>{1});
  ExpectUnsupported(m.Op(OpType::kArgMax, {in, axis}, {m.Out({2})}, ArgMinMaxOpts{}),
                    {"ARG_MAX #0", "the index output is int32 or int64"});
}

TEST(ValidateSelectionOps, CastToBoolIsUnsupported) {
  OneOp m;
  const int in = m.Act({4});
  ExpectUnsupported(m.Op(OpType::kCast, {in}, {m.Out({4}, TflType::kBool)}),
                    {"CAST #0", "casts to int8, int16, int32 or float32"});
}

TEST(ValidateSelectionOps, Int8NegIsUnsupported) {
  OneOp m;
  const int in = m.Act({4});
  ExpectUnsupported(m.Op(OpType::kNeg, {in}, {m.Out({4})}),
                    {"NEG #0", "TFLite Micro's NEG computes float32 only"});
}

TEST(ValidateSelectionOps, AbsNeedsQuantizedInt8) {
  OneOp m;
  const int in = m.Act({4}, TflType::kInt8, {});
  ExpectInvalid(m.Op(OpType::kAbs, {in}, {m.Out({4})}), {"ABS #0", "is int8 without quantization"});
}

}  // namespace
}  // namespace boardlab::testing
