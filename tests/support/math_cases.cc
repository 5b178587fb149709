// The batch-2 cases of op_cases.h: arithmetic and math ops, with the zero points at the ends of
// int8, broadcasting where the op broadcasts and every fused activation where the op has one.

#include "tests/support/case_writer.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using cases::CaseList;
using cases::CaseWriter;
using cases::kQ;
using cases::kQHigh;
using cases::kQLow;
using compiler::OpType;

// What the interpreter build the oracle uses cannot run.
constexpr const char* kNoInt8AddN = "the interpreter's ADD_N has no int8";
constexpr const char* kNoInt8Cumsum = "the interpreter's CUMSUM has no int8";

// Float functions over inputs where the function is defined (no NaN, whose sign and payload
// the C libraries choose differently): multiples of 1/8, so ROUND meets ties.
void AddFloatUnaryCases(CaseList& l) {
  struct Range {
    OpType type;
    const char* name;
    float lo, hi;
  };
  const Range kRanges[] = {
      {OpType::kExp, "float", -10.0f, 10.0f},      {OpType::kExp, "float to inf", -100.0f, 100.0f},
      {OpType::kLog, "float", 0.125f, 100.0f},     {OpType::kLog, "float zero", 0.0f, 2.0f},
      {OpType::kSqrt, "float", 0.0f, 50.0f},       {OpType::kRsqrt, "float", 0.125f, 50.0f},
      {OpType::kSquare, "float", -100.0f, 100.0f}, {OpType::kRound, "float ties", -4.0f, 4.0f},
      {OpType::kFloor, "float", -10.0f, 10.0f},    {OpType::kElu, "float", -10.0f, 5.0f},
  };
  for (const Range& r : kRanges) {
    l.Add(r.type, r.name, [r](CaseWriter& w) {
      const int in = w.Float({3, 17}, r.lo, r.hi);
      w.Op(r.type, {in}, {w.Output({3, 17}, TflType::kFloat32)});
    });
  }
}

void AddQuantizedUnaryCases(CaseList& l) {
  // RSQRT is defined for inputs at or above the zero point; q = zp gives 127.
  l.Add(OpType::kRsqrt, "int8 zp 0", [](CaseWriter& w) {
    const QuantParams q = PerTensor(0.05f, 0);
    const int in = w.Int8({4, 32}, q, 0, 127);
    w.Op(OpType::kRsqrt, {in}, {w.Int8Output({4, 32}, PerTensor(0.04f, -128))});
  });
  l.Add(OpType::kRsqrt, "int8 zp -128", [](CaseWriter& w) {
    const int in = w.Int8({2, 64}, kQLow);
    w.Op(OpType::kRsqrt, {in}, {w.Int8Output({2, 64}, PerTensor(0.02f, 127))});
  });
  l.Add(OpType::kRsqrt, "int8 small scale", [](CaseWriter& w) {
    const QuantParams q = PerTensor(0.002f, -100);
    const int in = w.Int8({1, 50}, q, -100, 127);
    w.Op(OpType::kRsqrt, {in}, {w.Int8Output({1, 50}, PerTensor(0.5f, -128))});
  });
  l.Add(OpType::kElu, "int8", [](CaseWriter& w) {
    const int in = w.Int8({4, 64}, kQ);
    w.Op(OpType::kElu, {in}, {w.Int8Output({4, 64}, PerTensor(0.04f, 20))});
  });
  l.Add(OpType::kElu, "int8 zp extremes", [](CaseWriter& w) {
    const int in = w.Int8({2, 128}, kQHigh);
    w.Op(OpType::kElu, {in}, {w.Int8Output({2, 128}, PerTensor(0.01f, 127))});
  });
  l.Add(OpType::kElu, "int8 zp -128", [](CaseWriter& w) {
    const int in = w.Int8({2, 128}, kQLow);
    w.Op(OpType::kElu, {in}, {w.Int8Output({2, 128}, PerTensor(0.1f, -128))});
  });
}

void AddPreluCases(CaseList& l) {
  l.Add(OpType::kPrelu, "int8 channel alpha", [](CaseWriter& w) {
    const int in = w.Int8({1, 4, 5, 8}, kQ);
    const int alpha = w.Int8({8}, PerTensor(0.01f, 0));
    w.Op(OpType::kPrelu, {in, alpha}, {w.Int8Output({1, 4, 5, 8}, PerTensor(0.04f, -10))});
  });
  l.Add(OpType::kPrelu, "int8 alpha [1,1,C] zp extremes", [](CaseWriter& w) {
    const int in = w.Int8({2, 3, 6}, kQHigh);
    const int alpha = w.Int8({1, 1, 6}, PerTensor(0.004f, -128));
    w.Op(OpType::kPrelu, {in, alpha}, {w.Int8Output({2, 3, 6}, PerTensor(0.03f, 127))});
  });
  l.Add(OpType::kPrelu, "int8 full alpha", [](CaseWriter& w) {
    const int in = w.Int8({3, 10}, kQLow);
    const int alpha = w.Int8({3, 10}, PerTensor(0.02f, 127));
    w.Op(OpType::kPrelu, {in, alpha}, {w.Int8Output({3, 10}, PerTensor(0.08f, -128))});
  });
  l.Add(OpType::kPrelu, "float scalar alpha", [](CaseWriter& w) {
    const int in = w.Float({2, 3, 4, 5});
    const int alpha = w.Float({1}, -1.0f, 1.0f);
    w.Op(OpType::kPrelu, {in, alpha}, {w.Output({2, 3, 4, 5}, TflType::kFloat32)});
  });
  l.Add(OpType::kPrelu, "float channel alpha", [](CaseWriter& w) {
    const int in = w.Float({1, 3, 3, 4});
    const int alpha = w.Float({4}, 0.0f, 1.0f);
    w.Op(OpType::kPrelu, {in, alpha}, {w.Output({1, 3, 3, 4}, TflType::kFloat32)});
  });
}

// Divisors stay away from their zero point (a division by zero fails the run) and from float 0
// (whose NaN bit patterns differ between machines).
void AddDivCases(CaseList& l) {
  const Activation kActivations[] = {Activation::kNone, Activation::kRelu, Activation::kReluN1To1,
                                     Activation::kRelu6};
  for (Activation act : kActivations) {
    const std::string suffix = " act " + std::to_string(static_cast<int>(act));
    l.Add(OpType::kDiv, "int8" + suffix, [act](CaseWriter& w) {
      const int a = w.Int8({2, 3, 8}, kQ);
      const int b = w.Int8({2, 3, 8}, PerTensor(0.04f, -128), -127, 127);
      w.Op(OpType::kDiv, {a, b}, {w.Int8Output({2, 3, 8}, PerTensor(0.02f, 5))},
           ElementwiseOpts{act});
    });
    l.Add(OpType::kDiv, "float broadcast" + suffix, [act](CaseWriter& w) {
      const int a = w.Float({3, 1, 5}, -8.0f, 8.0f);
      const int b = w.Float({4, 5}, 0.25f, 4.0f);
      w.Op(OpType::kDiv, {a, b}, {w.Output({3, 4, 5}, TflType::kFloat32)}, ElementwiseOpts{act});
    });
  }
  l.Add(OpType::kDiv, "int8 broadcast negative divisors", [](CaseWriter& w) {
    const int a = w.Int8({4, 1, 6}, kQLow);
    const int b = w.Int8({3, 6}, PerTensor(0.05f, 127), -128, 126);
    w.Op(OpType::kDiv, {a, b}, {w.Int8Output({4, 3, 6}, PerTensor(0.1f, -128))}, ElementwiseOpts{});
  });
  l.Add(OpType::kDiv, "int32 broadcast", [](CaseWriter& w) {
    const int a = w.Int32Random({2, 6}, -1000, 1000);
    const int b = w.Int32({6}, {7, -3, 1, -1, 250, -64});
    w.Op(OpType::kDiv, {a, b}, {w.Output({2, 6}, TflType::kInt32)}, ElementwiseOpts{});
  });
  l.Add(OpType::kDiv, "int32 relu6", [](CaseWriter& w) {
    const int a = w.Int32Random({12}, -50, 50);
    const int b = w.Int32({12}, {3, 5, -2, 7, 1, 2, -9, 4, 11, -1, 6, 8});
    w.Op(OpType::kDiv, {a, b}, {w.Output({12}, TflType::kInt32)},
         ElementwiseOpts{Activation::kRelu6});
  });
}

void AddSquaredDifferenceCases(CaseList& l) {
  l.Add(OpType::kSquaredDifference, "int8", [](CaseWriter& w) {
    const int a = w.Int8({2, 4, 8}, kQ);
    const int b = w.Int8({2, 4, 8}, PerTensor(0.03f, 10));
    w.Op(OpType::kSquaredDifference, {a, b}, {w.Int8Output({2, 4, 8}, PerTensor(0.2f, -128))});
  });
  l.Add(OpType::kSquaredDifference, "int8 broadcast zp extremes", [](CaseWriter& w) {
    const int a = w.Int8({1, 3, 4, 5}, kQLow);
    const int b = w.Int8({4, 1}, kQHigh);
    w.Op(OpType::kSquaredDifference, {a, b}, {w.Int8Output({1, 3, 4, 5}, PerTensor(0.5f, 127))});
  });
  l.Add(OpType::kSquaredDifference, "float broadcast", [](CaseWriter& w) {
    const int a = w.Float({2, 3, 4});
    const int b = w.Float({3, 1});
    w.Op(OpType::kSquaredDifference, {a, b}, {w.Output({2, 3, 4}, TflType::kFloat32)});
  });
  l.Add(OpType::kSquaredDifference, "int32", [](CaseWriter& w) {
    const int a = w.Int32Random({10}, -30000, 30000);
    const int b = w.Int32Random({10}, -30000, 30000);
    w.Op(OpType::kSquaredDifference, {a, b}, {w.Output({10}, TflType::kInt32)});
  });
}

void AddSumOfInputsCases(CaseList& l) {
  l.Add(
      OpType::kAddN, "int8 3 inputs",
      [](CaseWriter& w) {
        std::vector<int32_t> ins;
        for (int i = 0; i < 3; ++i) ins.push_back(w.Int8({4, 8}, kQ));
        w.Op(OpType::kAddN, ins, {w.Int8Output({4, 8}, PerTensor(0.1f, 3))});
      },
      kNoInt8AddN);
  l.Add(
      OpType::kAddN, "int8 2 inputs zp extremes",
      [](CaseWriter& w) {
        std::vector<int32_t> ins = {w.Int8({2, 16}, kQHigh), w.Int8({2, 16}, kQHigh)};
        w.Op(OpType::kAddN, ins, {w.Int8Output({2, 16}, PerTensor(0.03f, -128))});
      },
      kNoInt8AddN);
  l.Add(OpType::kAddN, "float 4 inputs", [](CaseWriter& w) {
    std::vector<int32_t> ins;
    for (int i = 0; i < 4; ++i) ins.push_back(w.Float({3, 5}));
    w.Op(OpType::kAddN, ins, {w.Output({3, 5}, TflType::kFloat32)});
  });
  struct Variant {
    bool exclusive, reverse;
  };
  for (Variant v :
       {Variant{false, false}, Variant{true, false}, Variant{false, true}, Variant{true, true}}) {
    const std::string flags =
        std::string(v.exclusive ? " exclusive" : "") + (v.reverse ? " reverse" : "");
    l.Add(OpType::kCumsum, "float axis 1" + flags, [v](CaseWriter& w) {
      const int in = w.Float({2, 4, 3});
      w.Op(OpType::kCumsum, {in, w.Const32({}, {1})}, {w.Output({2, 4, 3}, TflType::kFloat32)},
           CumsumOpts{v.exclusive, v.reverse});
    });
    l.Add(
        OpType::kCumsum, "int8 axis -1" + flags,
        [v](CaseWriter& w) {
          const int in = w.Int8({3, 2, 5}, kQ);
          w.Op(OpType::kCumsum, {in, w.Const32({}, {-1})},
               {w.Int8Output({3, 2, 5}, PerTensor(0.1f, -20))}, CumsumOpts{v.exclusive, v.reverse});
        },
        kNoInt8Cumsum);
  }
  l.Add(
      OpType::kCumsum, "int8 axis 0 zp extremes",
      [](CaseWriter& w) {
        const int in = w.Int8({6, 4}, kQHigh);
        w.Op(OpType::kCumsum, {in, w.Const32({1}, {0})}, {w.Int8Output({6, 4}, kQLow)},
             CumsumOpts{});
      },
      kNoInt8Cumsum);
}

}  // namespace

const std::vector<OpCase>& MathCases() {
  static const std::vector<OpCase> cases = [] {
    CaseList l;
    AddFloatUnaryCases(l);
    AddQuantizedUnaryCases(l);
    AddPreluCases(l);
    AddDivCases(l);
    AddSquaredDifferenceCases(l);
    AddSumOfInputsCases(l);
    cases::AddTflmExactnessCases(l);
    return l.cases;
  }();
  return cases;
}

}  // namespace boardlab::testing
