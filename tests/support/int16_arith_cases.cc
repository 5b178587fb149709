// The 16x8 cases of the ops TFLite Micro's reference kernels run on int16 activations beyond the
// conv-like, element-wise and layout ops of int16_cases.cc: RELU and RELU6 (RELU6 alone with a
// raw clamp, and fused into a producer), SUM, BATCH_MATMUL, ABS, PRELU, SQUARED_DIFFERENCE,
// GREATER, and the data movement ops TFLite Micro copies int16 with (SPLIT, SPLIT_V, UNPACK).
// Zero points are 0 (16x8 is symmetric) except GREATER's, whose kernel applies them.

#include "tests/support/case_writer.h"

namespace boardlab::testing::cases {
namespace {

const QuantParams kQ16 = PerTensor(0.0005f, 0);

// An int16 scale whose quantized 6 is 32761 steps in float arithmetic (TFLite's) and 32760 in
// double: every value at or above 32761 shows which one a RELU6 clamps to.
constexpr float kRelu6TieScale16 = 0.000183147393f;

constexpr const char* kRawClamp16 =
    "the interpreter's RELU6 rescales to the output quantization; TFLite Micro clamps the raw "
    "input";

// FULLY_CONNECTED 16x8 [2, 8] x [6, 8] into `out`, with the same operands in every case that
// calls it (so their outputs compare): outputs saturate both ways, so a RELU6 after it meets
// both of its bounds.
void FullyConnected16(CaseWriter& w, int out) {
  std::vector<int16_t> x;
  std::vector<int8_t> k;
  for (int i = 0; i < 16; ++i) x.push_back(static_cast<int16_t>((i * 7919) % 65536 - 32768));
  for (int i = 0; i < 48; ++i) k.push_back(static_cast<int8_t>((i * 37) % 255 - 127));
  const int in = w.Int16Values({2, 8}, PerTensor(0.001f, 0), x);
  const int weights = w.ConstInt8Values({6, 8}, k, PerTensor(0.008f, 0));
  // An int64 bias: the interpreter's bias-less 16x8 FULLY_CONNECTED sums differently.
  const int bias = w.Const64({6}, {-5000, 0, 7, 123456, -99, 40000}, PerTensor(0.001f * 0.008f, 0));
  w.Op(OpType::kFullyConnected, {in, weights, bias}, {out}, FullyConnectedOpts{});
}

void AddReluCases(CaseList& l) {
  l.Add(OpType::kRelu, "16x8 same quantization", [](CaseWriter& w) {
    const int in = w.Int16({3, 24}, kQ16);
    w.Op(OpType::kRelu, {in}, {w.Int16Output({3, 24}, kQ16)});
  });
  l.Add(OpType::kRelu, "16x8 rescaled saturating", [](CaseWriter& w) {
    const int in = w.Int16({3, 24}, kQ16);
    w.Op(OpType::kRelu, {in}, {w.Int16Output({3, 24}, PerTensor(0.0003f, 0))});
  });
  l.Add(OpType::kRelu6, "16x8 six at a float rounding tie", [](CaseWriter& w) {
    const QuantParams q = PerTensor(kRelu6TieScale16, 0);
    const int in = w.Int16({4, 20}, q, 32700, 32767);
    const int low = w.Int16({1, 20}, q, -32768, 100);
    w.Op(OpType::kRelu6, {in}, {w.Int16Output({4, 20}, q)});
    w.Op(OpType::kRelu6, {low}, {w.Int16Output({1, 20}, q)});
  });
  l.Add(
      OpType::kRelu6, "16x8 requantized output",
      [](CaseWriter& w) {
        const int in = w.Int16({3, 24}, PerTensor(0.0004f, 0));
        w.Op(OpType::kRelu6, {in}, {w.Int16Output({3, 24}, PerTensor(0.0002f, 0))});
      },
      kRawClamp16);
  // One consumer and one quantization: the compiler fuses RELU6 into FULLY_CONNECTED.
  l.Add(OpType::kRelu6, "16x8 fused into FULLY_CONNECTED", [](CaseWriter& w) {
    const QuantParams q = PerTensor(kRelu6TieScale16, 0);
    const int fc = w.Intermediate({2, 6}, TflType::kInt16, q);
    FullyConnected16(w, fc);
    w.Op(OpType::kRelu6, {fc}, {w.Int16Output({2, 6}, q)});
  });
  // The same with the FULLY_CONNECTED output also a model output: nothing is fused, RELU6 runs
  // alone on the CPU, and both must give the fused case's bytes.
  l.Add(OpType::kRelu6, "16x8 after FULLY_CONNECTED unfused", [](CaseWriter& w) {
    const QuantParams q = PerTensor(kRelu6TieScale16, 0);
    const int fc = w.Int16Output({2, 6}, q);
    FullyConnected16(w, fc);
    w.Op(OpType::kRelu6, {fc}, {w.Int16Output({2, 6}, q)});
  });
}

void AddSumCases(CaseList& l) {
  constexpr const char* kSumInIntegers =
      "the interpreter's SUM requantizes in float; TFLite Micro with an integer multiplier";
  l.Add(
      OpType::kSum, "16x8 axis 1",
      [](CaseWriter& w) {
        const int in = w.Int16({2, 5, 3}, kQ16);
        w.Op(OpType::kSum, {in, w.Const32({1}, {1})},
             {w.Int16Output({2, 3}, PerTensor(0.0019f, 0))}, ReducerOpts{false});
      },
      kSumInIntegers);
  l.Add(
      OpType::kSum, "16x8 axes 0,2 keep dims saturating",
      [](CaseWriter& w) {
        const int in = w.Int16({3, 4, 5}, kQ16);
        w.Op(OpType::kSum, {in, w.Const32({2}, {0, -1})},
             {w.Int16Output({1, 4, 1}, PerTensor(0.0007f, 0))}, ReducerOpts{true});
      },
      kSumInIntegers);
}

// 0.000747985963 x 0.00035923894 / 0.0143496152: the float and double products of the two
// input scales round to different 16-bit multipliers, so most outputs show which one was used.
void AddBatchMatMulCases(CaseList& l) {
  l.Add(OpType::kBatchMatMul, "16x8 float scale product", [](CaseWriter& w) {
    const int lhs = w.Int16({2, 3, 6}, PerTensor(0.000747985963f, 0));
    const int rhs = w.Int16({2, 6, 4}, PerTensor(0.00035923894f, 0));
    w.Op(OpType::kBatchMatMul, {lhs, rhs}, {w.Int16Output({2, 3, 4}, PerTensor(0.0143496152f, 0))},
         BatchMatMulOpts{});
  });
  l.Add(OpType::kBatchMatMul, "16x8 broadcast batch adj_x adj_y", [](CaseWriter& w) {
    const int lhs = w.Int16({1, 5, 3}, PerTensor(0.0004f, 0));
    const int rhs = w.Int16({3, 2, 5}, PerTensor(0.0006f, 0));
    w.Op(OpType::kBatchMatMul, {lhs, rhs}, {w.Int16Output({3, 3, 2}, PerTensor(0.009f, 0))},
         BatchMatMulOpts{true, true});
  });
}

// What the interpreter build (tfjs-tflite 0.0.1-alpha.10) refuses in int16.
constexpr const char* kNoInt16Prelu =
    "the interpreter's PRELU takes no int16 input with an int8 alpha";
constexpr const char* kNoInt16SquaredDifference =
    "the interpreter's SQUARED_DIFFERENCE has no int16";
constexpr const char* kNoInt16Greater = "the interpreter's GREATER has no int16";

// SUB 16x8 with scales (0.166434243, 0.0421371125) -> 0.146767288: TFLite Micro's float ratios
// give 24077 for (17976, -12862) and -10245 for (-957, 31906), double ones 24078 and -10246
// (about one operand pair in a thousand differs; these are two of them).
// The interpreter gives the double ratios' 24078 and -10246: its SUB divides in double.
void AddSubCases(CaseList& l) {
  l.Add(
      OpType::kSub, "16x8 float scale ratios",
      [](CaseWriter& w) {
        const int a = w.Int16Values({2, 3}, PerTensor(0.166434243f, 0),
                                    {17976, -957, 26206, -32768, 5686, 0});
        const int b = w.Int16Values({2, 3}, PerTensor(0.0421371125f, 0),
                                    {-12862, 31906, 6580, 32767, -7414, -1});
        w.Op(OpType::kSub, {a, b}, {w.Int16Output({2, 3}, PerTensor(0.146767288f, 0))},
             ElementwiseOpts{});
      },
      "the interpreter divides SUB's scales in double; TFLite Micro in float");
}

void AddUnaryAndBinaryCases(CaseList& l) {
  l.Add(OpType::kAbs, "16x8 same scale", [](CaseWriter& w) {
    const int in = w.Int16({4, 30}, kQ16);
    w.Op(OpType::kAbs, {in}, {w.Int16Output({4, 30}, kQ16)});
  });
  l.Add(OpType::kAbs, "16x8 rescaled", [](CaseWriter& w) {
    const int in = w.Int16({3, 30}, kQ16);
    w.Op(OpType::kAbs, {in}, {w.Int16Output({3, 30}, PerTensor(0.0008f, 0))});
  });
  l.Add(OpType::kAbs, "int16 without quantization", [](CaseWriter& w) {
    const int in = w.Int16Values({6}, {}, {-32768, -32767, -1, 0, 1, 32767});
    w.Op(OpType::kAbs, {in}, {w.Int16Output({6}, {})});
  });
  l.Add(
      OpType::kPrelu, "16x8 channel alpha",
      [](CaseWriter& w) {
        const int in = w.Int16({2, 3, 4, 5}, kQ16);
        const int alpha = w.Int8({5}, PerTensor(0.01f, 3));
        w.Op(OpType::kPrelu, {in, alpha}, {w.Int16Output({2, 3, 4, 5}, PerTensor(0.0004f, 0))});
      },
      kNoInt16Prelu);
  l.Add(
      OpType::kSquaredDifference, "16x8 same shape",
      [](CaseWriter& w) {
        const int a = w.Int16({4, 12}, PerTensor(0.0003f, 0));
        const int b = w.Int16({4, 12}, PerTensor(0.0005f, 0));
        w.Op(OpType::kSquaredDifference, {a, b}, {w.Int16Output({4, 12}, PerTensor(0.01f, 0))});
      },
      kNoInt16SquaredDifference);
  l.Add(
      OpType::kSquaredDifference, "16x8 broadcast saturating",
      [](CaseWriter& w) {
        const int a = w.Int16({2, 3, 4}, kQ16);
        const int b = w.Int16({3, 1}, kQ16);
        w.Op(OpType::kSquaredDifference, {a, b}, {w.Int16Output({2, 3, 4}, PerTensor(0.0001f, 0))});
      },
      kNoInt16SquaredDifference);
  l.Add(
      OpType::kGreater, "16x8 rescaled broadcast",
      [](CaseWriter& w) {
        const int a = w.Int16({2, 3, 8}, PerTensor(0.0005f, 0));
        const int b = w.Int16({3, 1}, PerTensor(0.0011f, 0), -15000, 15000);
        w.Op(OpType::kGreater, {a, b}, {w.Output({2, 3, 8}, TflType::kBool)});
      },
      kNoInt16Greater);
  l.Add(
      OpType::kGreater, "16x8 zero points",
      [](CaseWriter& w) {
        const int a = w.Int16({4, 10}, PerTensor(0.0007f, 120), -300, 300);
        const int b = w.Int16({4, 10}, PerTensor(0.0007f, -45), -300, 300);
        w.Op(OpType::kGreater, {a, b}, {w.Output({4, 10}, TflType::kBool)});
      },
      kNoInt16Greater);
}

void AddDataMovementCases(CaseList& l) {
  l.Add(OpType::kSplit, "16x8 axis 1", [](CaseWriter& w) {
    const int axis = w.Const32({}, {1});
    const int in = w.Int16({2, 6, 3}, kQ16);
    w.Op(OpType::kSplit, {axis, in},
         {w.Int16Output({2, 2, 3}, kQ16), w.Int16Output({2, 2, 3}, kQ16),
          w.Int16Output({2, 2, 3}, kQ16)},
         SplitOpts{3});
  });
  l.Add(OpType::kSplitV, "16x8 sizes 1,-1", [](CaseWriter& w) {
    const int in = w.Int16({3, 5}, kQ16);
    const int sizes = w.Const32({2}, {1, -1});
    const int axis = w.Const32({}, {-1});
    w.Op(OpType::kSplitV, {in, sizes, axis},
         {w.Int16Output({3, 1}, kQ16), w.Int16Output({3, 4}, kQ16)}, SplitOpts{2});
  });
  l.Add(OpType::kUnpack, "16x8 axis 0", [](CaseWriter& w) {
    const int in = w.Int16({2, 3, 4}, kQ16);
    w.Op(OpType::kUnpack, {in}, {w.Int16Output({3, 4}, kQ16), w.Int16Output({3, 4}, kQ16)},
         UnpackOpts{2, 0});
  });
}

}  // namespace

void AddInt16ArithmeticCases(CaseList& l) {
  AddReluCases(l);
  AddSumCases(l);
  AddBatchMatMulCases(l);
  AddSubCases(l);
  AddUnaryAndBinaryCases(l);
  AddDataMovementCases(l);
}

}  // namespace boardlab::testing::cases
