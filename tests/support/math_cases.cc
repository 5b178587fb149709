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

}  // namespace

const std::vector<OpCase>& MathCases() {
  static const std::vector<OpCase> cases = [] {
    CaseList l;
    AddFloatUnaryCases(l);
    AddQuantizedUnaryCases(l);
    AddPreluCases(l);
    return l.cases;
  }();
  return cases;
}

}  // namespace boardlab::testing
