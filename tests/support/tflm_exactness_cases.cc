// int8 cases where TFLite Micro's result hangs on details of its arithmetic that a faithful-looking
// reimplementation gets wrong (issue 13, bit-exactness review):
// - RELU6 clamps the raw input between the input's quantized 0 and 6 and ignores the output
//   quantization (RELU rescales, and so does the TFLite interpreter's RELU6);
// - fused activation bounds are quantized in float: 6 / 0.0493827164 is 121.4999991 in double
//   but rounds to 122 in float;
// - SUB divides its scales in float, where ADD divides in double;
// - BATCH_MATMUL multiplies its two input scales in float;
// - SUM requantizes its int32 sums with an integer multiplier and clamps.
// The operands are chosen (by search over TFLite Micro's arithmetic) so that the wrong variant
// changes at least one output.

#include "tests/support/case_writer.h"

namespace boardlab::testing::cases {
namespace {

constexpr const char* kSubRatiosInDouble =
    "the interpreter divides SUB's scales in double; TFLite Micro in float";
constexpr const char* kBatchMatMulRoundsOnce =
    "the interpreter's optimized int8 BATCH_MATMUL requantizes with one rounding; TFLite Micro "
    "with two";

// An output scale whose quantized 6 (and fused RELU6 bound) is 122 steps in float arithmetic
// and 121 in double.
constexpr float kRelu6TieScale = 0.0493827164f;

void AddRelu6Cases(CaseList& l) {
  constexpr const char* kRawClamp =
      "the interpreter's RELU6 rescales to the output quantization; TFLite Micro clamps the raw "
      "input";
  l.Add(
      OpType::kRelu6, "int8 requantized output",
      [](CaseWriter& w) {
        const int in = w.Int8({4, 16}, kQ);
        w.Op(OpType::kRelu6, {in}, {w.Int8Output({4, 16}, PerTensor(0.03f, 10))});
      },
      kRawClamp);
  l.Add(OpType::kRelu6, "int8 after ADD at a float rounding tie", [](CaseWriter& w) {
    const QuantParams tie = PerTensor(kRelu6TieScale, -128);
    const int a = w.Int8({3, 16}, PerTensor(0.05f, 0));
    const int b = w.Int8({3, 16}, PerTensor(0.04f, 0));
    // One consumer and the same quantization: the compiler fuses RELU6 into the ADD.
    const int sum = w.Intermediate({3, 16}, TflType::kInt8, tie);
    w.Op(OpType::kAdd, {a, b}, {sum}, ElementwiseOpts{});
    w.Op(OpType::kRelu6, {sum}, {w.Int8Output({3, 16}, tie)});
  });
  l.Add(OpType::kRelu, "int8 requantized output", [](CaseWriter& w) {
    const int in = w.Int8({4, 16}, kQLow);
    w.Op(OpType::kRelu, {in}, {w.Int8Output({4, 16}, PerTensor(0.07f, -20))});
  });
}

void AddFusedRangeCases(CaseList& l) {
  l.Add(OpType::kAdd, "int8 fused relu6 at a float rounding tie", [](CaseWriter& w) {
    const int a = w.Int8({3, 16}, PerTensor(0.05f, 0));
    const int b = w.Int8({3, 16}, PerTensor(0.04f, 0));
    w.Op(OpType::kAdd, {a, b}, {w.Int8Output({3, 16}, PerTensor(kRelu6TieScale, -128))},
         ElementwiseOpts{Activation::kRelu6});
  });
}

// SUB with scales (0.16282095, 0.135399848) -> 0.107166879 and zero points (69, 122) -> -49:
// the operands (3, -10) give 17 with float ratios (TFLite Micro) and 18 with double ones.
// The interpreter gives 18 there: it divides SUB's scales in double, as it does ADD's.
void AddSubCases(CaseList& l) {
  l.Add(
      OpType::kSub, "int8 float scale ratios",
      [](CaseWriter& w) {
        const int a =
            w.Int8Values({2, 4}, PerTensor(0.16282095f, 69), {3, -128, 127, 0, 3, 60, -7, 3});
        const int b = w.Int8Values({2, 4}, PerTensor(0.135399848f, 122),
                                   {-10, 127, -128, 0, -9, -100, 31, -11});
        w.Op(OpType::kSub, {a, b}, {w.Int8Output({2, 4}, PerTensor(0.107166879f, -49))},
             ElementwiseOpts{});
      },
      kSubRatiosInDouble);
}

// BATCH_MATMUL with scales 0.0509157181 x 0.083322376 -> 0.612338841 (zero points 0): the row
// [127, -95] times the column [-18, 1] sums to -2381, which requantizes to -17 with the float
// product of the scales (TFLite Micro) and to -16 with the double one; [127, -74] times
// [-125, 1] sums to -15949, -111 with TFLite Micro's two roundings and -110 with one rounding,
// which is what the interpreter's optimized int8 BATCH_MATMUL does (it gives -16 and -110).
void AddBatchMatMulCases(CaseList& l) {
  l.Add(
      OpType::kBatchMatMul, "int8 float scale product",
      [](CaseWriter& w) {
        const int lhs = w.Int8Values({1, 2, 2}, PerTensor(0.0509157181f, 0), {127, -95, 127, -74});
        const int rhs =
            w.Int8Values({1, 2, 3}, PerTensor(0.083322376f, 0), {-18, -125, -128, 1, 1, 5});
        w.Op(OpType::kBatchMatMul, {lhs, rhs},
             {w.Int8Output({1, 2, 3}, PerTensor(0.612338841f, 0))}, BatchMatMulOpts{});
      },
      kBatchMatMulRoundsOnce);
  l.Add(
      OpType::kBatchMatMul, "int8 broadcast batch adj_y zero points",
      [](CaseWriter& w) {
        const int lhs = w.Int8({2, 1, 3, 6}, PerTensor(0.02f, 5));
        const int rhs = w.Int8({1, 4, 4, 6}, PerTensor(0.03f, -9));
        w.Op(OpType::kBatchMatMul, {lhs, rhs}, {w.Int8Output({2, 4, 3, 4}, PerTensor(0.5f, -3))},
             BatchMatMulOpts{false, true});
      },
      kBatchMatMulRoundsOnce);
}

}  // namespace

void AddTflmExactnessCases(CaseList& l) {
  AddRelu6Cases(l);
  AddFusedRangeCases(l);
  AddSubCases(l);
  AddBatchMatMulCases(l);
}

}  // namespace boardlab::testing::cases
