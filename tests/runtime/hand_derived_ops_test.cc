// The cases the TFLite interpreter cannot check (op_cases.h `no_oracle`) and the ops whose
// interpreter answers come from XNNPACK with known differences, against TFLite Micro's
// arithmetic as tflm_reference.h writes it out, end to end: compiled by boardlab's compiler and
// run by the runtime in this process.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "tests/runtime/pte_runner.h"
#include "tests/runtime/tflm_reference.h"
#include "tests/runtime/tflm_reference_16x8.h"
#include "tests/support/op_cases.h"

namespace boardlab::tflm_reference {
namespace {

using testing::OpCase;

// The XNNPACK-run ops whose TFLite Micro results differ from XNNPACK's (see
// oracle_ops_test.cc XnnpackKnownDifferences), against TFLite Micro's arithmetic.
Bytes XnnpackRunReference(const OpCase& c, const CaseModel& m) {
  if (c.type == compiler::OpType::kRound) return RoundReference(m.inputs[0]);
  return EluReference(m.builder, m);
}

std::vector<Bytes> HandDerived(const OpCase& c, const CaseModel& m) {
  const testing::TfliteBuilder& b = m.builder;
  const int out = m.output_tensors[0];
  switch (c.type) {
    case compiler::OpType::kZerosLike:
      return {Bytes(m.inputs[0].size(), 0)};
    case compiler::OpType::kBroadcastTo:
      return {BroadcastTo(b, m, m.input_tensors[0], out)};
    case compiler::OpType::kReduceMax:
    case compiler::OpType::kReduceMin: {
      const std::vector<int8_t> in = Int8s(m.inputs[0]);
      const bool max = c.type == compiler::OpType::kReduceMax;
      return {Bytes{static_cast<uint8_t>(max ? *std::max_element(in.begin(), in.end())
                                             : *std::min_element(in.begin(), in.end()))}};
    }
    case compiler::OpType::kSum:
      return {SumSameQuantization(m.inputs[0], b.tensor(m.input_tensors[0]).shape.back(),
                                  static_cast<int>(b.tensor(out).quant.zero_points[0]))};
    case compiler::OpType::kSpaceToBatchNd:
      return {SpaceToBatchPaddedRow(m.inputs[0])};
    case compiler::OpType::kAddN:
      return {AddNReference(m)};
    case compiler::OpType::kConv2D:
      return {Conv16x8Acc32Reference(m)};
    case compiler::OpType::kQuantize:
      return {Requantize8To16Reference(m)};
    case compiler::OpType::kMean:
      return {Mean16x8Reference(m)};
    case compiler::OpType::kLogistic:
    case compiler::OpType::kTanh:
      return {Sigmoid16PowerOfTwoReference(m, c.type == compiler::OpType::kTanh)};
    case compiler::OpType::kAdd:
    case compiler::OpType::kSub:
      return {AddSub16x8Reference(m, c.type == compiler::OpType::kSub)};
    case compiler::OpType::kCumsum: {
      const auto& o = std::get<testing::CumsumOpts>(b.operator_spec(0).options);
      int32_t axis;
      std::memcpy(&axis, b.buffer(b.tensor(b.operator_spec(0).inputs[1]).buffer).data(), 4);
      return {CumsumReference(m, axis, o.exclusive, o.reverse)};
    }
    default:
      ADD_FAILURE() << c.name << ": no hand-derived reference";
      return {};
  }
}

// Compiles and runs every case of `cases` that `select` takes and compares its outputs with
// `expected(c, m)`; `checked` counts the cases run.
template <typename Select, typename Expected>
void ExpectCasesFollow(const std::vector<OpCase>& cases, Select select, Expected expected,
                       int* checked) {
  for (const OpCase& c : cases) {
    if (!select(c)) continue;
    SCOPED_TRACE(c.no_oracle.empty() ? c.name : c.name + " (" + c.no_oracle + ")");
    const CaseModel m = testing::SingleCaseModel(c);
    std::string error;
    const runtime::testing::PteRun run =
        runtime::testing::CompileAndRunCase(m.model, m.inputs, &error);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_EQ(run.outputs, expected(c, m));
    ++*checked;
  }
}

TEST(HandDerivedOpsTest, CasesTheInterpreterCannotCheckFollowTfliteMicro) {
  int checked = 0;
  ExpectCasesFollow(
      testing::AllOpCases(), [](const OpCase& c) { return !c.no_oracle.empty(); }, HandDerived,
      &checked);
  EXPECT_GE(checked, 23);
}

// The ops that XNNPACK runs in the interpreter with known differences from TFLite's kernels
// (XnnpackKnownDifferences) follow TFLite Micro's own arithmetic exactly.
TEST(HandDerivedOpsTest, OpsXnnpackComputesDifferentlyFollowTfliteMicro) {
  int checked = 0;
  ExpectCasesFollow(
      testing::AllOpCases(),
      [](const OpCase& c) {
        return c.type == compiler::OpType::kRound ||
               (c.type == compiler::OpType::kElu && c.name.find("int8") != std::string::npos);
      },
      [](const OpCase& c, const CaseModel& m) {
        return std::vector<Bytes>{XnnpackRunReference(c, m)};
      },
      &checked);
  EXPECT_GE(checked, 4);
}

// RESIZE_BILINEAR (XNNPACK in the interpreter) and L2_POOL_2D (the interpreter's optimized
// kernel) differ from TFLite Micro's reference kernels in a few elements; every element of every
// case follows TFLite Micro's arithmetic exactly.
TEST(HandDerivedOpsTest, ResizeBilinearAndL2PoolFollowTfliteMicro) {
  int checked = 0;
  ExpectCasesFollow(
      testing::NormalizationCases(),
      [](const OpCase& c) {
        return c.type == compiler::OpType::kResizeBilinear || c.type == compiler::OpType::kL2Pool2D;
      },
      [](const OpCase&, const CaseModel& m) {
        const testing::BuilderOptions& o = m.builder.operator_spec(0).options;
        if (const auto* resize = std::get_if<testing::ResizeNearestNeighborOpts>(&o)) {
          return std::vector<Bytes>{
              ResizeBilinearReference(m, resize->align_corners, resize->half_pixel_centers)};
        }
        return std::vector<Bytes>{L2PoolReference(m, std::get<testing::Pool2DOpts>(o))};
      },
      &checked);
  EXPECT_EQ(checked, 14);
}

// The resize reference on the kernel test's worked numbers (width 2 -> 3: 0, 66.7, 100).
TEST(HandDerivedOpsTest, ResizeBilinearReferenceOnWorkedNumbers) {
  testing::CaseModel m;
  const testing::QuantParams q = testing::PerTensor(0.1f, 0);
  m.input_tensors = {m.builder.AddTensor("in", {1, 1, 2, 1}, TflType::kInt8, q)};
  m.output_tensors = {m.builder.AddTensor("out", {1, 1, 3, 1}, TflType::kInt8, q)};
  m.inputs = {FromInt8s({0, 100})};
  EXPECT_EQ(Int8s(ResizeBilinearReference(m, false, false)), (std::vector<int8_t>{0, 67, 100}));
}

// The reference functions on worked numbers: 2.5 and -0.5 are ties (to 2 and +0), -0.375 rounds
// to +0; an ELU entry whose product 0.1 * 25 is exactly 2.5 rounds away from zero to 3.
TEST(HandDerivedOpsTest, RoundAndEluReferencesOnWorkedNumbers) {
  EXPECT_EQ(TfliteRoundToNearest(2.5f), 2.0f);
  EXPECT_EQ(TfliteRoundToNearest(3.5f), 4.0f);
  EXPECT_FALSE(std::signbit(TfliteRoundToNearest(-0.5f)));
  EXPECT_FALSE(std::signbit(TfliteRoundToNearest(-0.375f)));
  EXPECT_EQ(TfliteRoundToNearest(-1.5f), -2.0f);
  const testing::QuantParams in = testing::PerTensor(0.05f, -3),
                             out = testing::PerTensor(0.04f, 20);
  EXPECT_EQ(EluEntry(-1, in, out, false), 23);    // 0.1 / 0.04 = 2.5 -> 3, + 20
  EXPECT_EQ(EluEntry(-1, in, out, true), 22);     // XNNPACK: 2.5 -> 2
  EXPECT_EQ(EluEntry(-128, in, out, false), -5);  // exp(-6.25) - 1 = -0.998 -> -25 + 20
}

// The hand-derived arithmetic itself, on numbers worked out by hand: a zero point of -3 adds
// 3 * 6 = 18 before it is subtracted again (15 in all), and the byte wraps.
TEST(HandDerivedOpsTest, SumReferenceOnWorkedNumbers) {
  EXPECT_EQ(Int8s(SumSameQuantization(FromInt8s({1, 2, 3, 4, 5, 6}), 6, -3)),
            (std::vector<int8_t>{36}));
  EXPECT_EQ(Int8s(SumSameQuantization(FromInt8s({100, 100}), 2, 0)), (std::vector<int8_t>{-56}));
}

// ADD_N's starting offset on worked numbers: zero point -3, scale 1 in and out, inputs 1 and 2.
// Each value (q + 3) << 20 halves to (q + 3) << 19; the sum starts at 3 << 19, so it holds
// (3 + 4 + 5) << 19 = 12 << 19; the output multiplier 2 / 2^20 gives 12, minus 3 = 9 (plain
// addition would give (1 + 3) + (2 + 3) - 3 = 6).
TEST(HandDerivedOpsTest, AddNReferenceOnWorkedNumbers) {
  testing::CaseModel m;
  const testing::QuantParams q = testing::PerTensor(1.0f, -3);
  const int a = m.builder.AddTensor("a", {1}, TflType::kInt8, q);
  const int b = m.builder.AddTensor("b", {1}, TflType::kInt8, q);
  const int out = m.builder.AddTensor("out", {1}, TflType::kInt8, q);
  m.input_tensors = {a, b};
  m.output_tensors = {out};
  m.inputs = {{1}, {2}};
  EXPECT_EQ(AddNReference(m), Bytes{9});
}

// CUMSUM's running sum starts from the same offset: zero point -3, scale 1 in and out, inputs 1
// and 2 are (4, 5) << 19 on top of 3 << 19. Inclusive: 7 - 3 = 4, then 12 - 3 = 9; exclusive:
// 3 - 3 = 0, then 4; reversed: 8 - 3 = 5 for the last element, then 9 for the first.
TEST(HandDerivedOpsTest, CumsumReferenceOnWorkedNumbers) {
  testing::CaseModel m;
  const testing::QuantParams q = testing::PerTensor(1.0f, -3);
  m.input_tensors = {m.builder.AddTensor("in", {2}, TflType::kInt8, q)};
  m.output_tensors = {m.builder.AddTensor("out", {2}, TflType::kInt8, q)};
  m.inputs = {{1, 2}};
  EXPECT_EQ(CumsumReference(m, 0, false, false), (Bytes{4, 9}));
  EXPECT_EQ(CumsumReference(m, 0, true, false), (Bytes{0, 4}));
  EXPECT_EQ(CumsumReference(m, -1, false, true), (Bytes{9, 5}));
}

}  // namespace
}  // namespace boardlab::tflm_reference
