// UNIDIRECTIONAL_SEQUENCE_LSTM: the int16 sigmoid and tanh of TFLite's integer kernels on worked
// numbers and against the real functions over every input, hand-derived steps of the int8 and
// 16x8 kernels, and the whole op end to end on
// TFLite Micro's own int8 test model (lstm_test_data.cc: batch 2, 3 steps, 2 inputs, state 2,
// cell clip 6), whose float goldens TFLite Micro's int8 test meets within 1e-2. The generated
// cases are checked bit for bit against TFLite Micro's arithmetic in stateful_ops_test.cc and
// hand_derived_ops_test.cc.

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "runtime/kernels/reference/lstm.h"
#include "tests/runtime/kernel_test_util.h"
#include "tests/runtime/pte_runner.h"
#include "tests/support/tflite_builder.h"

namespace boardlab {
namespace {

using runtime::kernels::Sigmoid16;
using runtime::kernels::Tanh16;
using testing::PerTensor;
using testing::TflType;

// Q3.12 in, Q0.15 out, worked by hand from the table: sigmoid(1) reads entry 4096 * 3 >> 9 = 24
// (47911) with no fraction, (47911 * 512 + 512) >> 10 = 23956 (0.7311 * 32768 = 23955.6);
// sigmoid(-1) = (2^25 - 47911 * 512 + 511) >> 10 = 8812. tanh(1) reads entry 12288 >> 8 = 48
// (57724): (57724 * 256 - 2^23 + 128) >> 8 = 24956 (0.7616 * 32768 = 24956.2), and tanh(-1)
// mirrors it. The largest inputs stay on the table (index 191): sigmoid(7.99) = 32757.
TEST(LstmActivations, WorkedNumbers) {
  EXPECT_EQ(Sigmoid16(0), 16384);
  EXPECT_EQ(Sigmoid16(4096), 23956);
  EXPECT_EQ(Sigmoid16(-4096), 8812);
  EXPECT_EQ(Tanh16(0, 0, 0), 0);
  EXPECT_EQ(Tanh16(4096, 0, 0), 24956);
  EXPECT_EQ(Tanh16(-4096, 0, 0), -24956);
  EXPECT_EQ(Sigmoid16(32767), 32757);
  EXPECT_EQ(Sigmoid16(-32768), 11);
}

// Every int16 input, against the real functions: the table interpolation stays within a few
// units of 2^-15 (the table's entries are within one unit of 65536 / (1 + exp(-i / 24))).
TEST(LstmActivations, FollowTheRealFunctionsOverEveryInput) {
  double worst_sigmoid = 0, worst_tanh = 0;
  for (int32_t x = -32768; x <= 32767; ++x) {
    const double real = x / 4096.0;
    const double sigmoid = 32768.0 / (1.0 + std::exp(-real));
    worst_sigmoid = std::max(
        worst_sigmoid, std::fabs(Sigmoid16(static_cast<int16_t>(x)) - std::min(sigmoid, 32767.0)));
    const double tanh = 32768.0 * std::tanh(real);
    worst_tanh = std::max(worst_tanh, std::fabs(Tanh16(static_cast<int16_t>(x), 0, 0) -
                                                std::min(std::max(tanh, -32768.0), 32767.0)));
  }
  EXPECT_LE(worst_sigmoid, 4.0);
  EXPECT_LE(worst_tanh, 8.0);
}

// The cell state's tanh reads the cell in Q(15 + n).(-n) for a scale 2^n: the same real value
// in each format gives (nearly) the same output.
TEST(LstmActivations, TanhOfTheCellFollowsItsScale) {
  // 0.75 as a cell value in scale 2^-11, 2^-12 and 2^-15, with the (multiplier, shift) TFLite
  // Micro derives from n: shift = 12 + n, or multiplier 3 and shift -(12 + n) when negative.
  const int16_t at11 = Tanh16(static_cast<int16_t>(0.75 * 2048), 0, 1);
  const int16_t at12 = Tanh16(static_cast<int16_t>(0.75 * 4096), 0, 0);
  const int16_t at15 = Tanh16(static_cast<int16_t>(0.75 * 32768), 3, 3);
  const double want = 32768 * std::tanh(0.75);
  EXPECT_NEAR(at11, want, 8);
  EXPECT_NEAR(at12, want, 8);
  EXPECT_NEAR(at15, want, 8);
}

// Every gate of `p` with 1x1 input and recurrent weights `weight`, bias `bias` and both FC
// multipliers 0.5 x 2^shift.
void SetEveryGate(runtime::kernels::LstmParams& p, const int8_t* weight, const void* bias,
                  int32_t shift) {
  for (runtime::kernels::LstmGate* g : {&p.input, &p.forget, &p.cell, &p.output}) {
    g->input_weights = weight;
    g->recurrent_weights = weight;
    g->bias = bias;
    g->input_multiplier = g->recurrent_multiplier = 1 << 30;
    g->input_shift = g->recurrent_shift = shift;
  }
}

// One unit, one input, three steps of x = 64 from a zero state, every weight 1, no bias, worked by
// hand. Each FC multiplier is 2^30 with shift 7 (x 64), so the first pre-activation is
// 64 * 64 = 4096 (1.0 in Q3.12): sigmoid 23956, tanh 24956. Cell scale 2^-11: the input x cell
// gate product scales by 2^-19 (multiplier 2^30, shift -18): 23956 * 24956 -> 1140; its tanh (the
// input times 6) is 16563, and the hidden product (2^-30 / 2^-7: multiplier 2^30, shift -22)
// gives 16563 * 23956 -> 47. Step 2 adds the recurrent FC, 47 * 64 = 3008: pre-activation 7104,
// sigmoid 27852, tanh 30788; the forget product (2^-15: shift -14) keeps 969 of 1140, the new
// part is 1636, and the sum 2605 is clipped to 1500; tanh(1500) = 20465 and hidden 68. Step 3:
// pre-activation 64 * 64 + 68 * 64 = 8448, sigmoid 29072, cell clipped again, hidden 71.
TEST(LstmKernel, ThreeHandDerivedStepsWithACellClip) {
  const int8_t one = 1;
  const int32_t zero_bias = 0;
  runtime::kernels::LstmParams p;
  SetEveryGate(p, &one, &zero_bias, 7);
  p.forget_cell_multiplier = p.input_cell_multiplier = p.hidden_multiplier = 1 << 30;
  p.forget_cell_shift = -14;
  p.input_cell_shift = -18;
  p.hidden_shift = -22;
  p.cell_scale_power = -11;
  p.clip_cell = true;
  p.cell_clip = 1500;
  p.time = 3;
  const int8_t input[3] = {64, 64, 64};
  int8_t hidden = 0, output[3] = {};
  int16_t cell = 0;
  int16_t scratch[4];
  ASSERT_EQ(runtime::kernels::lstm_s8(p, input, &hidden, &cell, output, scratch, sizeof(scratch)),
            runtime::Error::kOk);
  EXPECT_EQ(output[0], 47);
  EXPECT_EQ(output[1], 68);
  EXPECT_EQ(output[2], 71);
  EXPECT_EQ(hidden, 71);
  EXPECT_EQ(cell, 1500);
  // Without the clip the cell grows past it.
  p.clip_cell = false;
  hidden = 0;
  cell = 0;
  ASSERT_EQ(runtime::kernels::lstm_s8(p, input, &hidden, &cell, output, scratch, sizeof(scratch)),
            runtime::Error::kOk);
  EXPECT_EQ(output[0], 47);
  EXPECT_GT(cell, 1500);
}

TEST(LstmKernel, RefusesTooLittleScratch) {
  runtime::kernels::LstmParams p;
  p.state_size = 4;
  const int8_t input = 0;
  int8_t hidden[4] = {}, output[4] = {};
  int16_t cell[4] = {}, scratch[15];
  EXPECT_EQ(runtime::kernels::lstm_s8(p, &input, hidden, cell, output, scratch, sizeof(scratch)),
            runtime::Error::kInvalidArgument);
}

// 16x8: an int64 bias beyond int32 (2^33 x 2^-11 = 2^22, saturating the forget gate's Q3.12
// input at 32767, sigmoid 0.99966) keeps nearly all of the cell, where an int32 sum would wrap
// the bias to 0 (sigmoid 0.5: half the cell lost). The input gate (0.5) adds tanh(0) = 0; the
// hidden state is tanh(2000 x 2^-11) x 0.5 = 0.3759, 12318 in 2^-15, and the step's output.
TEST(LstmKernel, The16x8FormSumsItsInt64BiasWithoutWrapping) {
  const int8_t zero_weight = 0;
  const int64_t zero_bias = 0, wide_bias = int64_t{1} << 33;
  runtime::kernels::LstmParams p;
  SetEveryGate(p, &zero_weight, &zero_bias, -10);
  p.forget.bias = &wide_bias;
  p.forget_cell_multiplier = p.input_cell_multiplier = p.hidden_multiplier = 1 << 30;
  p.forget_cell_shift = -14;
  p.input_cell_shift = -18;
  p.hidden_shift = -14;
  p.cell_scale_power = -11;
  const int16_t input = 0;
  int16_t hidden = 0, output = 0, cell = 2000, scratch[4];
  ASSERT_EQ(
      runtime::kernels::lstm_s16(p, &input, &hidden, &cell, &output, scratch, sizeof(scratch)),
      runtime::Error::kOk);
  EXPECT_GE(cell, 1995);
  EXPECT_LE(cell, 2000);
  EXPECT_NEAR(hidden, 12318, 20);
  EXPECT_EQ(output, hidden);
}

// ---- The registered kernel in 16x8, called as the executor calls it -------------------------

// The kernel's 61 arguments (docs/artifact-format.md) for one unit, one input and one step in
// 16x8: zero weights, every FC multiplier 0.5 x 2^fc_shift, the inter-gate products of a cell
// scale 2^-11 and a hidden scale 2^-15; each test changes one field.
struct Lstm16x8Args {
  int16_t input = 0, hidden = 0, cell = 2000, output = 0;
  int8_t weight = 0;
  int64_t bias = 0;
  int32_t bias32 = 0;
  int64_t input_zero_point = 0, fc_shift = -10;
  bool int32_biases = false;

  void Build(runtime::testing::KernelArgs& a) {
    using runtime::ScalarType;
    a.Tensor(ScalarType::kShort, {1, 1, 1}, &input);
    for (int i = 0; i < 8; ++i) a.Tensor(ScalarType::kChar, {1, 1}, &weight);
    for (int i = 0; i < 3; ++i) a.Null();  // peephole
    for (int i = 0; i < 4; ++i) {
      if (int32_biases) {
        a.Tensor(ScalarType::kInt, {1}, &bias32);
      } else {
        a.Tensor(ScalarType::kLong, {1}, &bias);
      }
    }
    for (int i = 0; i < 2; ++i) a.Null();  // projection
    a.Tensor(ScalarType::kShort, {1, 1}, &hidden);
    a.Tensor(ScalarType::kShort, {1, 1}, &cell);
    for (int i = 0; i < 4; ++i) a.Null();  // layer norm
    a.Int(input_zero_point);
    a.Int(0);  // hidden zero point
    for (int gate = 0; gate < 4; ++gate) {
      for (int64_t x :
           {int64_t{1} << 30, fc_shift, int64_t{1} << 30, fc_shift, int64_t{0}, int64_t{0}}) {
        a.Int(x);
      }
    }
    for (int64_t x : {1 << 30, -14, 1 << 30, -18, 1 << 30, -14, -11, 0}) a.Int(x);
    a.Bool(false);  // clip_cell
    a.Bool(false);  // time_major
    a.Tensor(ScalarType::kShort, {1, 1, 1}, &output);
  }
};

constexpr const char* kLstmKernel = "boardlab::unidirectional_sequence_lstm.out";

// Every gate's input is 0: forget and output gates 0.5, cell gate 0, so the cell halves to 1000
// and the hidden state is tanh(1000 x 2^-11) x 0.5 = 0.2264, 7418 in 2^-15.
TEST(LstmKernelArgs, The16x8FormRunsThroughTheRegistry) {
  Lstm16x8Args l;
  runtime::testing::KernelArgs a;
  l.Build(a);
  ASSERT_EQ(runtime::testing::RunKernel(kLstmKernel, a), runtime::Error::kOk)
      << runtime::LastErrorMessage();
  EXPECT_EQ(l.cell, 1000);
  EXPECT_NEAR(l.hidden, 7418, 10);
  EXPECT_EQ(l.output, l.hidden);
}

// What the compiler never writes fails at Prepare: an FC shift of 8 (TFLite's int64
// requantization takes shifts below 8), an int16 zero point, int32 biases in 16x8.
TEST(LstmKernelArgs, The16x8FormRefusesWhatItCannotCompute) {
  Lstm16x8Args shift;
  shift.fc_shift = 8;
  Lstm16x8Args zero_point;
  zero_point.input_zero_point = 3;
  Lstm16x8Args biases;
  biases.int32_biases = true;
  for (Lstm16x8Args* l : {&shift, &zero_point, &biases}) {
    runtime::testing::KernelArgs a;
    l->Build(a);
    EXPECT_EQ(runtime::testing::RunKernel(kLstmKernel, a), runtime::Error::kInvalidProgram);
  }
}

// ---- TFLite Micro's 2x3x2 int8 test model ---------------------------------------------------

constexpr float kInputScale = 0.00784313725490196f;
constexpr float kHiddenScale = 0.004705882165580988f;
constexpr int kHiddenZp = -21;

std::vector<int8_t> Quantize(const std::vector<float>& v, float scale, int zero_point) {
  std::vector<int8_t> q;
  for (float x : v) {
    const long r = std::lround(x / scale) + zero_point;
    q.push_back(static_cast<int8_t>(std::min(127L, std::max(-128L, r))));
  }
  return q;
}

std::vector<int32_t> QuantizeBias(const std::vector<float>& v, float scale) {
  std::vector<int32_t> q;
  for (float x : v) q.push_back(static_cast<int32_t>(std::lround(x / scale)));
  return q;
}

// Gate weights, recurrent weights (both [2, 2]) and bias of lstm_test_data.cc, in float.
struct FloatGate {
  std::vector<float> weights, recurrent, bias;
  float weight_scale;
};

std::vector<uint8_t> TfliteMicroTestModel() {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("in", {2, 3, 2}, TflType::kInt8, PerTensor(kInputScale, 0));
  // TFLite's order: input, forget, cell, output.
  const FloatGate gates[4] = {
      {{10, 10, 20, 20}, {10, 10, 20, 20}, {-1, -2}, 0.15748031496062992f},
      {{-10, -10, -20, -20}, {-10, -10, -20, -20}, {1, 2}, 0.15748031496062992f},
      {{1, 1, 1, 1}, {1, 1, 1, 1}, {0, 0}, 0.007874015748031496f},
      {{1, 1, 1, 1}, {1, 1, 1, 1}, {0, 0}, 0.007874015748031496f}};
  std::vector<int32_t> inputs = {in};
  for (const FloatGate& g : gates) {
    inputs.push_back(b.AddConstInt8("w", {2, 2}, Quantize(g.weights, g.weight_scale, 0),
                                    PerTensor(g.weight_scale, 0)));
  }
  for (const FloatGate& g : gates) {
    inputs.push_back(b.AddConstInt8("r", {2, 2}, Quantize(g.recurrent, g.weight_scale, 0),
                                    PerTensor(g.weight_scale, 0)));
  }
  inputs.insert(inputs.end(), {-1, -1, -1});
  for (const FloatGate& g : gates) {
    const float scale = kInputScale * g.weight_scale;
    inputs.push_back(b.AddConstInt32("b", {2}, QuantizeBias(g.bias, scale), PerTensor(scale, 0)));
  }
  inputs.insert(inputs.end(), {-1, -1});
  const int hidden =
      b.AddTensor("hidden", {2, 2}, TflType::kInt8, PerTensor(kHiddenScale, kHiddenZp));
  const int cell = b.AddTensor("cell", {2, 2}, TflType::kInt16, PerTensor(1.0f / 4096, 0));
  b.mutable_tensor(hidden).is_variable = true;
  b.mutable_tensor(cell).is_variable = true;
  inputs.insert(inputs.end(), {hidden, cell, -1, -1, -1, -1});
  const int out = b.AddTensor("out", {2, 3, 2}, TflType::kInt8, PerTensor(kHiddenScale, kHiddenZp));
  // TFLite Micro's test settings: cell clip 6, projection clip 3 (unused), batch major.
  b.AddOperator(
      44, inputs, {out},
      testing::UnidirectionalSequenceLstmOpts{testing::Activation::kTanh, 6.0f, 3.0f, false});
  b.SetInputs({in});
  b.SetOutputs({out});
  return b.Finish();
}

TEST(LstmKernel, TfliteMicroInt8TestModelMeetsItsFloatGoldens) {
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(TfliteMicroTestModel(), {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::vector<float> input = {0.2f,   0.3f,  0.2f,  0.3f,  0.2f,  0.3f,
                                    -0.98f, 0.62f, 0.01f, 0.99f, 0.49f, -0.32f};
  const std::vector<int8_t> q = Quantize(input, kInputScale, 0);
  std::vector<uint8_t> bytes(q.size());
  std::memcpy(bytes.data(), q.data(), q.size());
  const runtime::testing::PteRun run = runtime::testing::RunPte(compiled->pte, {bytes});
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), 1u);
  ASSERT_EQ(run.outputs[0].size(), 12u);
  const float expected[12] = {0.26455893f, 0.26870455f, 0.47935803f,     0.47937014f,
                              0.58013272f, 0.58013278f, -1.41184672e-3f, -1.43329117e-5f,
                              0.46887168f, 0.46891281f, 0.50054074f,     0.50054148f};
  for (size_t i = 0; i < 12; ++i) {
    const float got = (static_cast<int8_t>(run.outputs[0][i]) - kHiddenZp) * kHiddenScale;
    EXPECT_NEAR(got, expected[i], 1e-2) << "output " << i;
  }
}

}  // namespace
}  // namespace boardlab
