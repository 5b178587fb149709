// TFLite Micro's streaming ops (SignalFramer, SignalStacker, SignalOverlapAdd, CIRCULAR_BUFFER)
// compiled and run by the host runtime over several inferences of one load, on TFLite Micro's
// own test vectors: signal/micro/kernels/framer_test.cc, stacker_test.cc, overlap_add_test.cc
// and tensorflow/lite/micro/kernels/circular_buffer_test.cc, with the option bytes of their
// *_flexbuffers_generated_data.cc. The TFLite interpreter does not know these custom ops; TFLite
// Micro's tests compare exactly, so do these.

#include <cstring>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "tests/runtime/pte_runner.h"
#include "tests/runtime/tflm_reference_16x8.h"
#include "tests/support/tflite_builder.h"

namespace boardlab {
namespace {

using testing::TflType;
using Bytes = std::vector<uint8_t>;

using tflm_reference::BytesOf;
using tflm_reference::ValuesOf;

// One model input per inference; `runs` holds each inference's outputs (all of them).
struct Inferences {
  runtime::testing::PteRun run;
  size_t outputs_per_inference = 1;
  template <typename T>
  std::vector<T> Output(size_t inference, size_t k = 0) const {
    return ValuesOf<T>(run.outputs.at(inference * outputs_per_inference + k));
  }
  bool Valid(size_t inference) const { return Output<uint8_t>(inference, 1).at(0) != 0; }
};

Inferences RunInferences(const Bytes& model, const std::vector<Bytes>& inputs, size_t outputs) {
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(model, {});
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  Inferences r;
  r.outputs_per_inference = outputs;
  if (!compiled.ok()) return r;
  std::vector<std::vector<Bytes>> inferences;
  for (const Bytes& in : inputs) inferences.push_back({in});
  r.run = runtime::testing::RunPteInferences(compiled->pte, inferences);
  EXPECT_EQ(r.run.error, runtime::Error::kOk) << r.run.message;
  EXPECT_EQ(r.run.outputs.size(), inputs.size() * outputs);
  return r;
}

// ---- SignalFramer ----

// framer_flexbuffers_generated_data.cc: frame_size 3, frame_step 1, no prefill; and 5, 2,
// prefill.
const Bytes kFramer310 = {0x66, 0x72, 0x61, 0x6d, 0x65, 0x5f, 0x73, 0x69, 0x7a, 0x65, 0x00, 0x66,
                          0x72, 0x61, 0x6d, 0x65, 0x5f, 0x73, 0x74, 0x65, 0x70, 0x00, 0x70, 0x72,
                          0x65, 0x66, 0x69, 0x6c, 0x6c, 0x00, 0x03, 0x1f, 0x15, 0x0b, 0x03, 0x01,
                          0x03, 0x03, 0x01, 0x00, 0x04, 0x04, 0x68, 0x06, 0x24, 0x01};
const Bytes kFramer521 = {0x66, 0x72, 0x61, 0x6d, 0x65, 0x5f, 0x73, 0x69, 0x7a, 0x65, 0x00, 0x66,
                          0x72, 0x61, 0x6d, 0x65, 0x5f, 0x73, 0x74, 0x65, 0x70, 0x00, 0x70, 0x72,
                          0x65, 0x66, 0x69, 0x6c, 0x6c, 0x00, 0x03, 0x1f, 0x15, 0x0b, 0x03, 0x01,
                          0x03, 0x05, 0x02, 0x01, 0x04, 0x04, 0x68, 0x06, 0x24, 0x01};

Bytes FramerModel(const std::vector<int32_t>& in_shape, const std::vector<int32_t>& out_shape,
                  const Bytes& options) {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("input", in_shape, TflType::kInt16);
  const int out = b.AddTensor("frames", out_shape, TflType::kInt16);
  const int valid = b.AddTensor("valid", {}, TflType::kBool);
  b.AddCustomOperator("SignalFramer", {in}, {out, valid}, options);
  b.SetInputs({in});
  b.SetOutputs({out, valid});
  return b.Finish();
}

// Each row of `shape` gets the same samples, as TFLite Micro's test copies them.
Bytes Rows(const std::vector<int16_t>& samples, int rows) {
  std::vector<int16_t> all;
  for (int r = 0; r < rows; ++r) all.insert(all.end(), samples.begin(), samples.end());
  return BytesOf(all);
}

// FramerTest_3_1_0 (and TestReset, a second load): one sample per inference; the first two
// frames are not full yet, then each frame is the last three samples.
TEST(SignalFramer, TfliteMicroFrameOf3Step1) {
  const Bytes model = FramerModel({1}, {1, 3}, kFramer310);
  const std::vector<Bytes> inputs = {Rows({0x1234}, 1), Rows({0x5678}, 1), Rows({0x4321}, 1),
                                     Rows({0x7777}, 1)};
  for (int load = 0; load < 2; ++load) {
    const Inferences r = RunInferences(model, inputs, 2);
    ASSERT_EQ(r.run.outputs.size(), 8u);
    EXPECT_FALSE(r.Valid(0));
    EXPECT_FALSE(r.Valid(1));
    ASSERT_TRUE(r.Valid(2));
    EXPECT_EQ(r.Output<int16_t>(2), (std::vector<int16_t>{0x1234, 0x5678, 0x4321}));
    ASSERT_TRUE(r.Valid(3));
    EXPECT_EQ(r.Output<int16_t>(3), (std::vector<int16_t>{0x5678, 0x4321, 0x7777}));
    // The frames not yet full: TFLite Micro leaves them as they were, boardlab writes zeros.
    EXPECT_EQ(r.Output<int16_t>(0), (std::vector<int16_t>{0, 0, 0}));
  }
}

// FramerTest_5_2_1: prefill primes three zeros, so every frame is full.
TEST(SignalFramer, TfliteMicroFrameOf5Step2Prefilled) {
  const Inferences r = RunInferences(FramerModel({2}, {1, 5}, kFramer521),
                                     {Rows({0x1010, 0x0202}, 1), Rows({0x7070, 0x0606}, 1)}, 2);
  ASSERT_EQ(r.run.outputs.size(), 4u);
  EXPECT_TRUE(r.Valid(0));
  EXPECT_EQ(r.Output<int16_t>(0), (std::vector<int16_t>{0, 0, 0, 0x1010, 0x0202}));
  EXPECT_TRUE(r.Valid(1));
  EXPECT_EQ(r.Output<int16_t>(1), (std::vector<int16_t>{0, 0x1010, 0x0202, 0x7070, 0x0606}));
}

// FramerTest_5_2_1_NFrames2 and _NFrames2OuterDims4: two frames per inference, over 1 and 4
// rows.
TEST(SignalFramer, TfliteMicroTwoFramesPerInferenceOverRows) {
  const std::vector<int16_t> samples = {0x1010, 0x0202, 0x7070, 0x0606};
  const std::vector<int16_t> frames = {0, 0, 0, 0x1010, 0x0202, 0, 0x1010, 0x0202, 0x7070, 0x0606};
  for (const auto& [in_shape, out_shape, rows] :
       {std::tuple{std::vector<int32_t>{4}, std::vector<int32_t>{2, 5}, 1},
        std::tuple{std::vector<int32_t>{2, 2, 4}, std::vector<int32_t>{2, 2, 2, 5}, 4}}) {
    const Inferences r =
        RunInferences(FramerModel(in_shape, out_shape, kFramer521), {Rows(samples, rows)}, 2);
    ASSERT_EQ(r.run.outputs.size(), 2u);
    EXPECT_TRUE(r.Valid(0));
    std::vector<int16_t> golden;
    for (int i = 0; i < rows; ++i) golden.insert(golden.end(), frames.begin(), frames.end());
    EXPECT_EQ(r.Output<int16_t>(0), golden) << rows << " rows";
  }
}

// ---- SignalStacker ----

// stacker_flexbuffers_generated_data.cc: 3 channels and 10 channels, left context 1, right 0,
// steps 1 and 2.
const Bytes kStackerHead = {
    0x6e, 0x75, 0x6d, 0x5f, 0x63, 0x68, 0x61, 0x6e, 0x6e, 0x65, 0x6c, 0x73, 0x00, 0x73, 0x74, 0x61,
    0x63, 0x6b, 0x65, 0x72, 0x5f, 0x6c, 0x65, 0x66, 0x74, 0x5f, 0x63, 0x6f, 0x6e, 0x74, 0x65, 0x78,
    0x74, 0x00, 0x73, 0x74, 0x61, 0x63, 0x6b, 0x65, 0x72, 0x5f, 0x72, 0x69, 0x67, 0x68, 0x74, 0x5f,
    0x63, 0x6f, 0x6e, 0x74, 0x65, 0x78, 0x74, 0x00, 0x73, 0x74, 0x61, 0x63, 0x6b, 0x65, 0x72, 0x5f,
    0x73, 0x74, 0x65, 0x70, 0x00, 0x04, 0x46, 0x3a, 0x26, 0x11, 0x04, 0x01, 0x04};
Bytes StackerOptions(uint8_t channels, uint8_t step) {
  Bytes b = kStackerHead;
  for (uint8_t v : {channels, uint8_t{0x01}, uint8_t{0x00}, step, uint8_t{0x04}, uint8_t{0x04},
                    uint8_t{0x04}, uint8_t{0x04}, uint8_t{0x08}, uint8_t{0x24}, uint8_t{0x01}}) {
    b.push_back(v);
  }
  return b;
}

Bytes StackerModel(int32_t channels, int32_t out, const Bytes& options) {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("input", {channels}, TflType::kInt16);
  const int o = b.AddTensor("stacked", {out}, TflType::kInt16);
  const int valid = b.AddTensor("valid", {}, TflType::kBool);
  b.AddCustomOperator("SignalStacker", {in}, {o, valid}, options);
  b.SetInputs({in});
  b.SetOutputs({o, valid});
  return b.Finish();
}

std::vector<int16_t> Twice(const std::vector<int16_t>& v) {
  std::vector<int16_t> out = v;
  out.insert(out.end(), v.begin(), v.end());
  return out;
}

// StackerTest3ChannelStep1 and its Reset twin (a second load): the first input fills the left
// context too.
TEST(SignalStacker, TfliteMicro3ChannelsStep1) {
  const std::vector<int16_t> input = {0x1234, 0x5678, 0x4321};
  for (int load = 0; load < 2; ++load) {
    const Inferences r =
        RunInferences(StackerModel(3, 6, StackerOptions(3, 1)), {BytesOf(input)}, 2);
    ASSERT_EQ(r.run.outputs.size(), 2u);
    EXPECT_TRUE(r.Valid(0));
    EXPECT_EQ(r.Output<int16_t>(0), Twice(input));
  }
}

const std::vector<int16_t> kStacker1 = {252, 477, 1071, 166, 1022, 312, 1171, 1586, 1491, 145};
const std::vector<int16_t> kStacker2 = {1060, 200, 69, 1519, 883, 1317, 182, 724, 143, 334};

// StackerTest10ChannelStep2_1stTest and _2ndTest: each a first inference of its own load.
TEST(SignalStacker, TfliteMicro10ChannelsStep2) {
  for (const std::vector<int16_t>& input : {kStacker1, kStacker2}) {
    const Inferences r =
        RunInferences(StackerModel(10, 20, StackerOptions(10, 2)), {BytesOf(input)}, 2);
    ASSERT_EQ(r.run.outputs.size(), 2u);
    EXPECT_TRUE(r.Valid(0));
    EXPECT_EQ(r.Output<int16_t>(0), Twice(input));
  }
}

// The same vectors in one load (worked out from stacker.cc's ring, TFLite Micro has no such
// test): the first inference stacks it with itself and drops both (step 2); the second leaves
// one of the two needed; the third stacks the second and third.
TEST(SignalStacker, StepTwoStacksEveryOtherInference) {
  std::vector<int16_t> third = kStacker1;
  for (int16_t& v : third) v = static_cast<int16_t>(-v);
  const Inferences r = RunInferences(StackerModel(10, 20, StackerOptions(10, 2)),
                                     {BytesOf(kStacker1), BytesOf(kStacker2), BytesOf(third)}, 2);
  ASSERT_EQ(r.run.outputs.size(), 6u);
  EXPECT_TRUE(r.Valid(0));
  EXPECT_EQ(r.Output<int16_t>(0), Twice(kStacker1));
  EXPECT_FALSE(r.Valid(1));
  EXPECT_EQ(r.Output<int16_t>(1), std::vector<int16_t>(20, 0));
  EXPECT_TRUE(r.Valid(2));
  std::vector<int16_t> golden = kStacker2;
  golden.insert(golden.end(), third.begin(), third.end());
  EXPECT_EQ(r.Output<int16_t>(2), golden);
}

// ---- SignalOverlapAdd ----

// overlap_add_flexbuffers_generated_data.cc: {"T": float32 (0) or int16 (7), "frame_step": 1}.
Bytes OverlapAddOptions(uint8_t type) {
  return {0x66, 0x72, 0x61, 0x6d, 0x65, 0x5f, 0x73, 0x74, 0x65, 0x70, 0x00, 0x54, 0x00,
          0x02, 0x03, 0x0f, 0x02, 0x01, 0x02, type, 0x01, 0x04, 0x04, 0x04, 0x24, 0x01};
}

Bytes OverlapAddModel(const std::vector<int32_t>& in_shape, const std::vector<int32_t>& out_shape,
                      TflType type) {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("frames", in_shape, type);
  const int out = b.AddTensor("samples", out_shape, type);
  b.AddCustomOperator("SignalOverlapAdd", {in}, {out},
                      OverlapAddOptions(type == TflType::kInt16 ? 0x07 : 0x00));
  b.SetInputs({in});
  b.SetOutputs({out});
  return b.Finish();
}

const std::vector<int16_t> kOverlapIn = {125, -12, -895, 1000, 65, -212, 63, 71, 52, 1, -17, 32};
const std::vector<int16_t> kOverlapOut = {125, 988, -767, -140};

// OverlapAddTestInt16 and OverlapAddTestFloat: one frame of 3 per inference, four inferences.
TEST(SignalOverlapAdd, TfliteMicroOneFramePerInference) {
  std::vector<Bytes> inputs;
  for (size_t i = 0; i < 12; i += 3) {
    inputs.push_back(
        BytesOf(std::vector<int16_t>(kOverlapIn.begin() + i, kOverlapIn.begin() + i + 3)));
  }
  const Inferences r = RunInferences(OverlapAddModel({1, 3}, {1}, TflType::kInt16), inputs, 1);
  ASSERT_EQ(r.run.outputs.size(), 4u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(r.Output<int16_t>(i), std::vector<int16_t>{kOverlapOut[i]});

  const std::vector<float> in = {12.5, -1.2, -89.5, 100.0, 6.5,  -21.2,
                                 6.3,  7.1,  5.2,   0.1,   -1.7, 3.2};
  const std::vector<float> golden = {12.5, 98.8, -76.7, -14.0};
  std::vector<Bytes> float_inputs;
  for (size_t i = 0; i < 12; i += 3) {
    float_inputs.push_back(BytesOf(std::vector<float>(in.begin() + i, in.begin() + i + 3)));
  }
  const Inferences f =
      RunInferences(OverlapAddModel({1, 3}, {1}, TflType::kFloat32), float_inputs, 1);
  ASSERT_EQ(f.run.outputs.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(f.Output<float>(i), std::vector<float>{golden[i]});
}

// OverlapAddTestNframes4Int16 and _Nframes4OuterDims4Int16 (and testReset, a second load): the
// four frames in one inference, over 1 and 4 rows.
TEST(SignalOverlapAdd, TfliteMicroFourFramesPerInferenceOverRows) {
  for (int load = 0; load < 2; ++load) {
    const Inferences one =
        RunInferences(OverlapAddModel({4, 3}, {4}, TflType::kInt16), {BytesOf(kOverlapIn)}, 1);
    EXPECT_EQ(one.Output<int16_t>(0), kOverlapOut);
    std::vector<int16_t> in, golden;
    for (int r = 0; r < 4; ++r) {
      in.insert(in.end(), kOverlapIn.begin(), kOverlapIn.end());
      golden.insert(golden.end(), kOverlapOut.begin(), kOverlapOut.end());
    }
    const Inferences rows =
        RunInferences(OverlapAddModel({2, 2, 4, 3}, {2, 2, 4}, TflType::kInt16), {BytesOf(in)}, 1);
    EXPECT_EQ(rows.Output<int16_t>(0), golden);
  }
}

// Sums beyond int16 saturate in the buffer (overlap_add.cc clamps each sum), and the clamped
// value is what later frames add to (worked out by hand: 30000 + 30000 -> 32767, then
// 32767 + (-1) -> 32766 as the next output's head).
TEST(SignalOverlapAdd, Int16SumsSaturate) {
  const Inferences r = RunInferences(
      OverlapAddModel({1, 2}, {1}, TflType::kInt16),
      {BytesOf(std::vector<int16_t>{30000, 30000}), BytesOf(std::vector<int16_t>{2767, -1}),
       BytesOf(std::vector<int16_t>{-32768, -32768})},
      1);
  ASSERT_EQ(r.run.outputs.size(), 3u);
  EXPECT_EQ(r.Output<int16_t>(0), std::vector<int16_t>{30000});
  EXPECT_EQ(r.Output<int16_t>(1), std::vector<int16_t>{32767});
  EXPECT_EQ(r.Output<int16_t>(2), std::vector<int16_t>{-32768});
}

// ---- CIRCULAR_BUFFER ----

// circular_buffer_flexbuffers_generated_data.cc: {"cycles_max": 1}.
const Bytes kCyclesMax1 = {0x63, 0x79, 0x63, 0x6c, 0x65, 0x73, 0x5f, 0x6d, 0x61, 0x78, 0x00,
                           0x01, 0x0c, 0x01, 0x01, 0x01, 0x01, 0x04, 0x02, 0x24, 0x01};

Bytes CircularBufferModel(int32_t depth, int32_t slots, const Bytes& options) {
  testing::TfliteBuilder b;
  const testing::QuantParams q{{1.0f}, {0}};
  const int in = b.AddTensor("input", {1, 1, 1, depth}, TflType::kInt8, q);
  const int out = b.AddTensor("buffer", {1, slots, 1, depth}, TflType::kInt8, q);
  b.AddCustomOperator("CIRCULAR_BUFFER", {in}, {out}, options);
  b.SetInputs({in});
  b.SetOutputs({out});
  return b.Finish();
}

// Inference i's input: i * depth + 1, ..., i * depth + depth (circular_buffer_test.cc).
std::vector<Bytes> CountingInputs(int depth, int count) {
  std::vector<Bytes> inputs;
  for (int i = 0; i < count; ++i) {
    std::vector<int8_t> v;
    for (int j = 0; j < depth; ++j) v.push_back(static_cast<int8_t>(i * depth + j + 1));
    inputs.push_back(BytesOf(v));
  }
  return inputs;
}

const std::vector<std::vector<int8_t>> kSlots4Goldens = {
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3},
    {0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6},
    {0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
    {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
    {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}};

// OutputTensorLength4: no options and 4 slots, so TFLite Micro runs it every other inference and
// aborts the ones between (kTfLiteAbort): here those end without outputs (produced false).
TEST(CircularBuffer, TfliteMicroEveryOtherInferenceWithoutOptions) {
  const Inferences r = RunInferences(CircularBufferModel(3, 4, {}), CountingInputs(3, 5), 1);
  ASSERT_EQ(r.run.produced.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.Output<int8_t>(i), kSlots4Goldens[i]) << "inference " << i;
    EXPECT_EQ(r.run.produced[i], i % 2 == 1) << "inference " << i;
  }
}

// OutputTensorOnEveryIterationLength4: cycles_max 1 runs it every inference.
TEST(CircularBuffer, TfliteMicroEveryInferenceWithCyclesMax1) {
  const Inferences r =
      RunInferences(CircularBufferModel(3, 4, kCyclesMax1), CountingInputs(3, 5), 1);
  ASSERT_EQ(r.run.produced.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.Output<int8_t>(i), kSlots4Goldens[i]) << "inference " << i;
    EXPECT_TRUE(r.run.produced[i]);
  }
}

// OutputTensorLength5: 5 slots without options is one of TFLite Micro's every-inference shapes.
TEST(CircularBuffer, TfliteMicroFiveSlotsRunEveryInference) {
  const std::vector<std::vector<int8_t>> goldens = {
      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4},
      {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8},
      {0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
      {0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20},
      {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}};
  const Inferences r = RunInferences(CircularBufferModel(4, 5, {}), CountingInputs(4, 6), 1);
  ASSERT_EQ(r.run.produced.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(r.Output<int8_t>(i), goldens[i]) << "inference " << i;
    EXPECT_TRUE(r.run.produced[i]);
  }
}

// The ops after a CIRCULAR_BUFFER do not run in an inference it ends, and the method says there
// is no output: the RELU behind it gives the buffer's values only when the buffer ran. Its output
// bytes after an early end are not an inference's output at all: the memory plan shares them
// with the model input here (the fourth input shows through), which is why boardlab-run does not
// judge them.
TEST(CircularBuffer, EndingAnInferenceSkipsTheRestOfTheChain) {
  testing::TfliteBuilder b;
  const testing::QuantParams q{{1.0f}, {0}};
  const int in = b.AddTensor("input", {1, 1, 1, 2}, TflType::kInt8, q);
  const int buffer = b.AddTensor("buffer", {1, 2, 1, 2}, TflType::kInt8, q);
  const int out = b.AddTensor("relu", {1, 2, 1, 2}, TflType::kInt8, q);
  b.AddCustomOperator("CIRCULAR_BUFFER", {in}, {buffer},
                      testing::IntMapFlexbuffer({{"cycles_max", 3}}));
  b.AddOperator(19 /*RELU*/, {buffer}, {out});
  b.SetInputs({in});
  b.SetOutputs({out});
  const Inferences r =
      RunInferences(b.Finish(),
                    {BytesOf(std::vector<int8_t>{-1, 2}), BytesOf(std::vector<int8_t>{3, -4}),
                     BytesOf(std::vector<int8_t>{5, 6}), BytesOf(std::vector<int8_t>{7, 8})},
                    1);
  ASSERT_EQ(r.run.produced, (std::vector<bool>{false, false, true, false}));
  EXPECT_EQ(r.Output<int8_t>(2), (std::vector<int8_t>{3, 0, 5, 6}));
  // The fourth ends at the buffer ([5, 6, 7, 8] now): had the RELU run, it would give that.
  EXPECT_NE(r.Output<int8_t>(3), (std::vector<int8_t>{5, 6, 7, 8}));
}

}  // namespace
}  // namespace boardlab
