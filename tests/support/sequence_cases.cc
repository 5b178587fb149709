// The SVDF cases of op_cases.h: int8 input and output with TFLite Micro's int16 activation state
// (and int16 time weights), ranks 1 to 3, one and two batches, memories of 1 to 6, a state scale
// small enough that the feature matmul saturates int16, the activation zero points at the ends
// of int8, a missing bias, and the int8-state variant TFLite Micro also runs. The stateful
// behaviour over several inferences is checked in tests/runtime/stateful_ops_test.cc.

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

struct SvdfGeometry {
  const char* name;
  int32_t batch, input_size, filters, memory, rank;
  float state_scale;  // the feature matmul's output scale
  bool int16_state;
  bool bias;
  QuantParams in_q, out_q;
  int64_t state_zero_point = 0;
  const char* no_oracle = "";
  // TFLite's integer SVDF insists on RELU, which neither it nor TFLite Micro applies (the int8
  // output clamp is all there is); TFLite Micro takes any.
  Activation activation = Activation::kRelu;
};

void AddSvdf(CaseWriter& w, const SvdfGeometry& g) {
  const float feature_scale = 0.008f;
  const float time_scale = g.int16_state ? 1.0f / 16384 : 1.0f / 64;
  const TflType state_type = g.int16_state ? TflType::kInt16 : TflType::kInt8;
  const int units = g.filters / g.rank;
  const int in = w.Int8({g.batch, g.input_size}, g.in_q);
  const int feature = w.ConstInt8({g.filters, g.input_size}, PerTensor(feature_scale, 0));
  const int time = g.int16_state ? w.ConstInt16({g.filters, g.memory}, PerTensor(time_scale, 0))
                                 : w.ConstInt8({g.filters, g.memory}, PerTensor(time_scale, 0));
  // The bias scale TFLite Micro requires: state scale * time scale.
  const int bias =
      g.bias ? w.Const32Random({units}, -30000, 30000, PerTensor(g.state_scale * time_scale, 0))
             : -1;
  const int state = w.Variable({g.batch, g.memory * g.filters}, state_type,
                               PerTensor(g.state_scale, g.state_zero_point));
  w.Op(OpType::kSvdf, {in, feature, time, bias, state}, {w.Int8Output({g.batch, units}, g.out_q)},
       SvdfOpts{g.rank, g.activation});
}

}  // namespace

const std::vector<OpCase>& SvdfCases() {
  static const std::vector<OpCase> cases = [] {
    const char* kNoBias =
        "TFLite's SVDF Prepare reads the bias's scale; a bias-less SVDF is checked against "
        "TFLite Micro's Eval arithmetic";
    const char* kInt8State = "TFLite's SVDF takes an int16 state only";
    const SvdfGeometry kGeometries[] = {
        {"int16 state rank 1", 1, 8, 4, 5, 1, 0.02f, true, true, kQ, PerTensor(0.25f, 6)},
        {"int16 state rank 2 batch 2 zp extremes", 2, 12, 6, 4, 2, 0.01f, true, true, kQLow,
         kQHigh},
        {"int16 state rank 3 memory 6", 1, 10, 9, 6, 3, 0.015f, true, true, kQHigh,
         PerTensor(0.5f, -20)},
        {"int16 state saturating feature matmul", 1, 16, 4, 3, 1, 0.0005f, true, true, kQ,
         PerTensor(0.02f, 0)},
        {"int16 state memory 1", 2, 6, 2, 1, 1, 0.02f, true, true, kQ, PerTensor(0.05f, -128)},
        {"int16 state no bias no activation", 1, 8, 4, 4, 2, 0.02f, true, false, kQ,
         PerTensor(0.2f, 3), 0, kNoBias, Activation::kNone},
        {"int8 state", 1, 8, 6, 4, 2, 0.5f, false, true, kQ, PerTensor(0.3f, -7), 9, kInt8State},
    };
    CaseList l;
    for (const SvdfGeometry& g : kGeometries) {
      l.Add(
          OpType::kSvdf, g.name, [g](CaseWriter& w) { AddSvdf(w, g); }, g.no_oracle);
    }
    return l.cases;
  }();
  return cases;
}

}  // namespace boardlab::testing
