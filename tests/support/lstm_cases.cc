// The UNIDIRECTIONAL_SEQUENCE_LSTM cases of op_cases.h: TFLite Micro's integer LSTM (int8 input,
// hidden state and output, int8 weights, int32 biases, int16 cell state with a power-of-two
// scale), and after them its 16x8 form (int16 input, hidden state and output with zero point 0,
// int64 biases, one of them beyond int32 so that the int64 sum matters); batch-major and
// time-major sequences, one to three batches, one to five time steps,
// cell scales 2^-11, 2^-12 and 2^-15 (the three branches of the cell tanh's input shift), a cell
// clip, hidden zero points away from 0 and asymmetric weights. TFLite's interpreter runs its own
// integer LSTM, whose outputs differ from TFLite Micro's by a unit here and there (and which
// subtracts the hidden zero point where TFLite Micro adds it), so the cases are checked exactly
// against TFLite Micro's arithmetic (tflm_reference.h) and within one unit against the
// interpreter, with that sign accounted for (stateful_ops_test.cc); TFLite Micro's own float
// goldens check the whole op in tests/runtime/lstm_kernel_test.cc.

#include <cmath>

#include "tests/support/case_writer.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using cases::CaseList;
using cases::CaseWriter;
using cases::kQ;
using compiler::OpType;

struct LstmGeometry {
  const char* name;
  int32_t batch, time, input_size, state;
  bool time_major;
  int cell_power;      // cell state scale 2^cell_power
  float cell_clip;     // 0: none
  QuantParams hidden;  // hidden state and output quantization
  int64_t weight_zero_point = 0;
  bool is_16x8 = false;
};

// The activations' quantization: int8 with a zero point, or symmetric int16 over +-2.
QuantParams InputQuantization(const LstmGeometry& g) {
  return g.is_16x8 ? PerTensor(1.0f / 16384, 0) : kQ;
}

// One gate's weights: input [state, input_size] and recurrent [state, state] int8, and its
// bias [state] in the input FC's scale: int32, or int64 in 16x8 (Bias64).
struct GateTensors {
  int input_weights, recurrent_weights, bias;
};

// 16x8 biases of gate `gate` spread over +-2^20 (about +-1 in real terms, as the int32 ones), the
// forget gate's first far beyond int32 (an int32 sum would wrap it).
std::vector<int64_t> Bias64(int32_t state, int gate) {
  std::vector<int64_t> v;
  for (int64_t c = 0; c < state; ++c) {
    v.push_back(((c + 1) * 2654435761 + gate * 40503) % 2097152 - 1048576);
  }
  if (gate == 1) v[0] = (int64_t{1} << 33) + 12345;
  return v;
}

GateTensors AddGate(CaseWriter& w, const LstmGeometry& g, float input_scale, float weight_scale,
                    int gate) {
  const QuantParams q = PerTensor(weight_scale, g.weight_zero_point);
  GateTensors t;
  t.input_weights = w.ConstInt8({g.state, g.input_size}, q);
  t.recurrent_weights = w.ConstInt8({g.state, g.state}, q);
  const QuantParams bias_q = PerTensor(input_scale * weight_scale, 0);
  if (!g.is_16x8) {
    t.bias = w.Const32Random({g.state}, -2000, 2000, bias_q);
    return t;
  }
  t.bias = w.Const64({g.state}, Bias64(g.state, gate), bias_q);
  return t;
}

void AddLstm(CaseWriter& w, const LstmGeometry& g) {
  const std::vector<int32_t> in_shape = g.time_major
                                            ? std::vector<int32_t>{g.time, g.batch, g.input_size}
                                            : std::vector<int32_t>{g.batch, g.time, g.input_size};
  const std::vector<int32_t> out_shape = {in_shape[0], in_shape[1], g.state};
  const QuantParams in_q = InputQuantization(g);
  const int in = g.is_16x8 ? w.Int16(in_shape, in_q) : w.Int8(in_shape, in_q);
  // TFLite's input order: input, forget, cell, output gates.
  const float scales[4] = {0.02f, 0.03f, 0.01f, 0.025f};
  GateTensors gates[4];
  for (int k = 0; k < 4; ++k) gates[k] = AddGate(w, g, in_q.scales[0], scales[k], k);
  const TflType activation = g.is_16x8 ? TflType::kInt16 : TflType::kInt8;
  const int hidden = w.Variable({g.batch, g.state}, activation, g.hidden);
  const int cell =
      w.Variable({g.batch, g.state}, TflType::kInt16, PerTensor(std::ldexp(1.0f, g.cell_power), 0));
  std::vector<int32_t> inputs = {in};
  for (const GateTensors& t : gates) inputs.push_back(t.input_weights);
  for (const GateTensors& t : gates) inputs.push_back(t.recurrent_weights);
  inputs.insert(inputs.end(), {-1, -1, -1});  // no peephole
  for (const GateTensors& t : gates) inputs.push_back(t.bias);
  inputs.insert(inputs.end(), {-1, -1});  // no projection
  inputs.insert(inputs.end(), {hidden, cell});
  inputs.insert(inputs.end(), {-1, -1, -1, -1});  // no layer norm
  w.Op(OpType::kUnidirectionalSequenceLstm, inputs, {w.Output(out_shape, activation, g.hidden)},
       UnidirectionalSequenceLstmOpts{Activation::kTanh, g.cell_clip, 0.0f, g.time_major});
}

}  // namespace

const std::vector<OpCase>& LstmCases() {
  static const std::vector<OpCase> cases = [] {
    const char* kNoOracle =
        "TFLite's interpreter runs its own integer LSTM (gemmlowp's sigmoid and tanh where TFLite "
        "Micro interpolates a table, the cell products by rounding shifts where TFLite Micro "
        "multiplies with double rounding, and it subtracts the hidden zero point where TFLite "
        "Micro adds it); checked exactly against TFLite Micro's arithmetic and within one unit "
        "against the interpreter";
    const char* kNoOracle16x8 =
        "TFLite's interpreter has no 16x8 LSTM (its Prepare refuses int64 biases); checked exactly "
        "against TFLite Micro's arithmetic and within 0.004 of the interpreter's float LSTM";
    const LstmGeometry kGeometries[] = {
        {"batch major 1x3", 1, 3, 4, 5, false, -11, 0.0f, PerTensor(0.0078125f, 0)},
        {"batch major 2x4 hidden zp", 2, 4, 3, 6, false, -11, 0.0f, PerTensor(0.006f, -21)},
        {"time major 3x2x5", 2, 3, 5, 4, true, -12, 0.0f, PerTensor(0.005f, 10)},
        {"cell scale 2^-15 clip", 1, 5, 3, 3, false, -15, 0.5f, PerTensor(0.004f, -5)},
        {"cell scale 2^-11 clip 2", 3, 2, 6, 8, false, -11, 2.0f, PerTensor(0.008f, 3)},
        {"time major one step asymmetric weights", 2, 1, 4, 4, true, -12, 0.0f,
         PerTensor(0.007f, -1), 5},
        {"16x8 batch major 1x3", 1, 3, 4, 5, false, -11, 0.0f, PerTensor(1.0f / 32768, 0), 0, true},
        {"16x8 batch major 2x4", 2, 4, 3, 6, false, -12, 0.0f, PerTensor(1.0f / 20000, 0), 0, true},
        {"16x8 time major 3x2x5", 2, 3, 5, 4, true, -11, 0.0f, PerTensor(1.0f / 32768, 0), 0, true},
        {"16x8 cell scale 2^-15 clip", 1, 5, 3, 3, false, -15, 0.5f, PerTensor(1.0f / 16384, 0), 0,
         true},
        {"16x8 time major one step asymmetric weights", 2, 1, 4, 4, true, -12, 0.0f,
         PerTensor(1.0f / 32768, 0), 5, true},
    };
    CaseList l;
    for (const LstmGeometry& g : kGeometries) {
      l.Add(
          OpType::kUnidirectionalSequenceLstm, g.name, [g](CaseWriter& w) { AddLstm(w, g); },
          g.is_16x8 ? kNoOracle16x8 : kNoOracle);
    }
    return l.cases;
  }();
  return cases;
}

}  // namespace boardlab::testing
