// The cases of TFLite Micro's streaming signal ops (op_cases.h StreamCases): SignalFramer with
// and without prefill, over one row and several; SignalStacker stacking on its first inference
// and not; SignalOverlapAdd in int16 and float32. CIRCULAR_BUFFER is a list of its own
// (CircularBufferCases): it ends the inference between its runs, which would cut short every
// other case of a combined model. The TFLite
// interpreter has no such ops: each is checked against a hand-derived first inference
// (tests/runtime/hand_derived_ops_test.cc, tflm_reference_stream.h) and, over several
// inferences, against TFLite Micro's goldens (signal_stream_ops_test.cc) and the firmware.

#include "tests/support/case_writer.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using cases::CaseList;
using cases::CaseWriter;
using compiler::OpType;

constexpr const char* kNoStreamOps = "the TFLite interpreter has no signal library ops";

void AddFramer(CaseWriter& w, std::vector<int32_t> shape, int32_t size, int32_t step,
               bool prefill) {
  const int in = w.Int16(shape, {});
  std::vector<int32_t> out_shape(shape.begin(), shape.end() - 1);
  out_shape.push_back(shape.back() / step);
  out_shape.push_back(size);
  w.CustomOp(OpType::kSignalFramer, {in},
             {w.Output(out_shape, TflType::kInt16), w.Output({}, TflType::kBool)},
             IntMapFlexbuffer({{"frame_size", size}, {"frame_step", step}, {"prefill", prefill}}));
}

void AddStacker(CaseWriter& w, int32_t channels, int32_t left, int32_t right, int32_t step) {
  const int in = w.Int16({channels}, {});
  w.CustomOp(
      OpType::kSignalStacker, {in},
      {w.Output({channels * (left + right + 1)}, TflType::kInt16), w.Output({}, TflType::kBool)},
      IntMapFlexbuffer({{"num_channels", channels},
                        {"stacker_left_context", left},
                        {"stacker_right_context", right},
                        {"stacker_step", step}}));
}

void AddOverlapAdd(CaseWriter& w, std::vector<int32_t> shape, int32_t step, bool int16) {
  const int in = int16 ? w.Int16(shape, {}, -20000, 20000) : w.Float(shape, -100.0f, 100.0f);
  std::vector<int32_t> out_shape(shape.begin(), shape.end() - 2);
  out_shape.push_back(shape[shape.size() - 2] * step);
  w.CustomOp(OpType::kSignalOverlapAdd, {in},
             {w.Output(out_shape, int16 ? TflType::kInt16 : TflType::kFloat32)},
             IntMapFlexbuffer({{"T", int16 ? 7 : 0}, {"frame_step", step}}));
}

}  // namespace

const std::vector<OpCase>& StreamCases() {
  static const std::vector<OpCase> cases = [] {
    CaseList l;
    // Stateful: the firmware test runs these three times in a row.
    l.Add(
        OpType::kSignalFramer, "frames of 8 every 4 over 2 rows, prefill",
        [](CaseWriter& w) {
          AddFramer(w, {2, 8}, 8, 4, true);
        },
        kNoStreamOps);
    l.Add(
        OpType::kSignalFramer, "frames of 5 every 2, no prefill",
        [](CaseWriter& w) { AddFramer(w, {6}, 5, 2, false); }, kNoStreamOps);
    l.Add(
        OpType::kSignalStacker, "4 channels, left 2, step 1",
        [](CaseWriter& w) { AddStacker(w, 4, 2, 0, 1); }, kNoStreamOps);
    l.Add(
        OpType::kSignalStacker, "3 channels, left 1, right 1, step 2",
        [](CaseWriter& w) { AddStacker(w, 3, 1, 1, 2); }, kNoStreamOps);
    l.Add(
        OpType::kSignalOverlapAdd, "int16 3 frames of 8 every 4 over 2 rows",
        [](CaseWriter& w) {
          AddOverlapAdd(w, {2, 3, 8}, 4, true);
        },
        kNoStreamOps);
    l.Add(
        OpType::kSignalOverlapAdd, "float32 3 frames of 6 every 2",
        [](CaseWriter& w) {
          AddOverlapAdd(w, {3, 6}, 2, false);
        },
        kNoStreamOps);
    return l.cases;
  }();
  return cases;
}

const std::vector<OpCase>& CircularBufferCases() {
  static const std::vector<OpCase> cases = [] {
    CaseList l;
    // No options and 5 slots: TFLite Micro's guess runs it every inference.
    l.Add(
        OpType::kCircularBuffer, "5 slots of 4, no options",
        [](CaseWriter& w) {
          const QuantParams q = PerTensor(0.25f, 3);
          w.CustomOp(OpType::kCircularBuffer, {w.Int8({1, 1, 1, 4}, q)},
                     {w.Output({1, 5, 1, 4}, TflType::kInt8, q)}, {});
        },
        "the TFLite interpreter has no CIRCULAR_BUFFER");
    return l.cases;
  }();
  return cases;
}

}  // namespace boardlab::testing
