// The cases of TFLite Micro's signal library ops (op_cases.h SignalCases): SignalWindow with
// constant and run-time weights, shifts that saturate and that do not, repeated over outer
// dimensions; SignalFftAutoScale on small values (large shifts), full-range values (no shift)
// and all zeros; SignalDelay shorter and longer than its frames, over one row and several. The
// TFLite interpreter has no signal ops, so each is checked against a hand-derived reference
// (tests/runtime/hand_derived_ops_test.cc) and against TFLite Micro's own goldens
// (tests/runtime/signal_ops_test.cc).

#include "tests/support/case_writer.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using cases::CaseList;
using cases::CaseWriter;
using compiler::OpType;

constexpr const char* kNoSignalOps = "the TFLite interpreter has no signal library ops";

struct WindowGeometry {
  const char* name;
  std::vector<int32_t> shape;
  int32_t shift;
  bool constant_weights;
};

void AddWindow(CaseWriter& w, const WindowGeometry& g) {
  const int32_t length = g.shape.back();
  const int in = w.Int16(g.shape, {});
  // Hann-like weights are non-negative in real front ends; negative ones exercise the arithmetic
  // shift as well.
  const int weights =
      g.constant_weights ? w.ConstInt16({length}, {}, -32768, 32767) : w.Int16({length}, {});
  const int out = w.Output(g.shape, TflType::kInt16);
  w.CustomOp(OpType::kSignalWindow, {in, weights}, {out}, IntMapFlexbuffer({{"shift", g.shift}}));
}

void AddFftAutoScale(CaseWriter& w, int32_t n, int lo, int hi) {
  const int in = w.Int16({n}, {}, lo, hi);
  const int out = w.Output({n}, TflType::kInt16);
  const int bits = w.Output({}, TflType::kInt32);
  w.CustomOp(OpType::kSignalFftAutoScale, {in}, {out, bits}, {});
}

void AddDelay(CaseWriter& w, const std::vector<int32_t>& shape, int32_t delay) {
  const int in = w.Int16(shape, {});
  w.CustomOp(OpType::kSignalDelay, {in}, {w.Output(shape, TflType::kInt16)},
             IntMapFlexbuffer({{"delay_length", delay}}));
}

}  // namespace

const std::vector<OpCase>& SignalCases() {
  static const std::vector<OpCase> cases = [] {
    const WindowGeometry kWindows[] = {
        {"shift 12 constant weights", {64}, 12, true},
        {"shift 0 saturates", {1, 48}, 0, true},
        {"shift 31 run-time weights", {2, 32}, 31, false},
        {"shift 15 outer dims", {3, 2, 40}, 15, true},
    };
    CaseList l;
    for (const WindowGeometry& g : kWindows) {
      l.Add(
          OpType::kSignalWindow, g.name, [g](CaseWriter& w) { AddWindow(w, g); }, kNoSignalOps);
    }
    l.Add(
        OpType::kSignalFftAutoScale, "small values",
        [](CaseWriter& w) { AddFftAutoScale(w, 64, -300, 300); }, kNoSignalOps);
    l.Add(
        OpType::kSignalFftAutoScale, "full range",
        [](CaseWriter& w) { AddFftAutoScale(w, 100, -32768, 32767); }, kNoSignalOps);
    l.Add(
        OpType::kSignalFftAutoScale, "zeros", [](CaseWriter& w) { AddFftAutoScale(w, 16, 0, 0); },
        kNoSignalOps);
    // Stateful: the firmware test runs these three times in a row.
    l.Add(
        OpType::kSignalDelay, "delay 5 over frames of 12",
        [](CaseWriter& w) { AddDelay(w, {12}, 5); }, kNoSignalOps);
    l.Add(
        OpType::kSignalDelay, "delay 20 over 3 rows of 8",
        [](CaseWriter& w) {
          AddDelay(w, {3, 8}, 20);
        },
        kNoSignalOps);
    return l.cases;
  }();
  return cases;
}

}  // namespace boardlab::testing
