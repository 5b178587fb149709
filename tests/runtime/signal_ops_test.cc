// TFLite Micro's signal library ops (SignalWindow, SignalFftAutoScale) compiled and run by the
// host runtime on TFLite Micro's own test vectors. The TFLite interpreter (tests/oracle) does not
// know these custom ops, so the expected outputs are TFLite Micro's goldens, compared exactly
// (its tests compare them with tolerance 0): signal/micro/kernels/window_test.cc and
// fft_test.cc (FftAutoScaleTest*), with the option bytes of
// window_flexbuffers_generated_data.cc.

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

// window_flexbuffers_generated_data.cc: {"shift": 12} and {"shift": 8} as the converter wrote
// them.
const Bytes kWindowShift12 = {0x73, 0x68, 0x69, 0x66, 0x74, 0x00, 0x01, 0x07,
                              0x01, 0x01, 0x01, 0x0c, 0x04, 0x02, 0x24, 0x01};
const Bytes kWindowShift8 = {0x73, 0x68, 0x69, 0x66, 0x74, 0x00, 0x01, 0x07,
                             0x01, 0x01, 0x01, 0x08, 0x04, 0x02, 0x24, 0x01};

runtime::testing::PteRun CompileAndRun(const Bytes& model, const std::vector<Bytes>& inputs) {
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(model, {});
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return {};
  return runtime::testing::RunPte(compiled->pte, inputs);
}

// A SignalWindow model: input `shape`, weights a constant (`constant_weights`) or a second model
// input.
Bytes WindowModel(const std::vector<int32_t>& shape, const std::vector<int16_t>& weights,
                  bool constant_weights, const Bytes& options) {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("input", shape, TflType::kInt16);
  const int32_t n = static_cast<int32_t>(weights.size());
  const int w = constant_weights ? b.AddTensor("weights", {n}, TflType::kInt16, {},
                                               tflm_reference::BytesOf(weights))
                                 : b.AddTensor("weights", {n}, TflType::kInt16);
  const int out = b.AddTensor("output", shape, TflType::kInt16);
  b.AddCustomOperator("SignalWindow", {in, w}, {out}, options);
  b.SetInputs(constant_weights ? std::vector<int32_t>{in} : std::vector<int32_t>{in, w});
  b.SetOutputs({out});
  return b.Finish();
}

const std::vector<int16_t> kRamp = {0x000, 0x100, 0x200, 0x300, 0x400, 0x500, 0x600, 0x700,
                                    0x800, 0x900, 0xA00, 0xB00, 0xC00, 0xD00, 0xE00, 0xF00};
const std::vector<int16_t> kFallingWindow = {0xF00, 0xE00, 0xD00, 0xC00, 0xB00, 0xA00,
                                             0x900, 0x800, 0x700, 0x600, 0x500, 0x400,
                                             0x300, 0x200, 0x100, 0x000};
const std::vector<int16_t> kRampGolden = {0,   224, 416, 576, 704, 800, 864, 896,
                                          896, 864, 800, 704, 576, 416, 224, 0};

// WindowTest.WindowTestLength16Shift12.
TEST(SignalWindow, TfliteMicroLength16Shift12) {
  const auto run = CompileAndRun(WindowModel({16}, kFallingWindow, true, kWindowShift12),
                                 {tflm_reference::BytesOf(kRamp)});
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), 1u);
  EXPECT_EQ(tflm_reference::ValuesOf<int16_t>(run.outputs[0]), kRampGolden);
}

// WindowTest.WindowTestLength32Shift8: most products saturate at 32767. The weights are a model
// input here, as in TFLite Micro's test.
TEST(SignalWindow, TfliteMicroLength32Shift8Saturates) {
  const std::vector<int16_t> input = {1221, 1920, 9531, 2795, 1826, 371,  8446, 850,
                                      3129, 8218, 4199, 8358, 205,  5268, 3263, 2849,
                                      8398, 1381, 6305, 668,  8867, 4651, 9121, 6141,
                                      1961, 3750, 8418, 8085, 3308, 1788, 1608, 4761};
  const std::vector<int16_t> weights = {1323, 764,  9100, 4220, 1745, 9311, 178,  9442,
                                        5676, 1817, 5433, 5837, 7635, 4539, 6548, 9690,
                                        6097, 4275, 1523, 3694, 7506, 2797, 5153, 172,
                                        2172, 4540, 6643, 7845, 1719, 7564, 1700, 5227};
  const std::vector<int16_t> golden = {6310,  5730,  32767, 32767, 12446, 13493, 5872,  31350,
                                       32767, 32767, 32767, 32767, 6113,  32767, 32767, 32767,
                                       32767, 23061, 32767, 9639,  32767, 32767, 32767, 4125,
                                       16637, 32767, 32767, 32767, 22212, 32767, 10678, 32767};
  const auto run =
      CompileAndRun(WindowModel({1, 32}, weights, false, kWindowShift8),
                    {tflm_reference::BytesOf(input), tflm_reference::BytesOf(weights)});
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), 1u);
  EXPECT_EQ(tflm_reference::ValuesOf<int16_t>(run.outputs[0]), golden);
}

// WindowTest.WindowTestLength16Shift12OuterDims4: the window repeats over [2, 2, 16].
TEST(SignalWindow, TfliteMicroOuterDims) {
  std::vector<int16_t> input, golden;
  for (int i = 0; i < 4; ++i) {
    input.insert(input.end(), kRamp.begin(), kRamp.end());
    golden.insert(golden.end(), kRampGolden.begin(), kRampGolden.end());
  }
  const auto run = CompileAndRun(WindowModel({2, 2, 16}, kFallingWindow, true, kWindowShift12),
                                 {tflm_reference::BytesOf(input)});
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), 1u);
  EXPECT_EQ(tflm_reference::ValuesOf<int16_t>(run.outputs[0]), golden);
}

// Negative products shift arithmetically and saturate at -32768 (window.cc's int32 product and
// clamp; worked out by hand: -32768 * 32767 >> 1 clamps, -3 * 5 >> 1 = -8).
TEST(SignalWindow, NegativeProductsRoundDownAndSaturate) {
  const auto run =
      CompileAndRun(WindowModel({2}, {32767, 5}, true, testing::IntMapFlexbuffer({{"shift", 1}})),
                    {tflm_reference::BytesOf(std::vector<int16_t>{-32768, -3})});
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  EXPECT_EQ(tflm_reference::ValuesOf<int16_t>(run.outputs[0]), (std::vector<int16_t>{-32768, -8}));
}

Bytes FftAutoScaleModel(int32_t n) {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("input", {n}, TflType::kInt16);
  const int out = b.AddTensor("output", {n}, TflType::kInt16);
  const int bits = b.AddTensor("scale_bits", {}, TflType::kInt32);
  // TFLite Micro's tests pass no options at all (its kernel has no Init).
  b.AddCustomOperator("SignalFftAutoScale", {in}, {out, bits});
  b.SetInputs({in});
  b.SetOutputs({out, bits});
  return b.Finish();
}

void ExpectAutoScale(const std::vector<int16_t>& input, const std::vector<int16_t>& golden,
                     int32_t golden_bits) {
  const auto run = CompileAndRun(FftAutoScaleModel(static_cast<int32_t>(input.size())),
                                 {tflm_reference::BytesOf(input)});
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), 2u);
  EXPECT_EQ(tflm_reference::ValuesOf<int16_t>(run.outputs[0]), golden);
  EXPECT_EQ(tflm_reference::ValuesOf<int32_t>(run.outputs[1]), std::vector<int32_t>{golden_bits});
}

// FftAutoScaleTestSmall.
TEST(SignalFftAutoScale, TfliteMicroSmall) {
  ExpectAutoScale({0x0000, 0x1111, 0x2222, 0x3333, 0x3333, 0x2222, 0x1111, 0x0000},
                  {0x0000, 0x2222, 0x4444, 0x6666, 0x6666, 0x4444, 0x2222, 0x0000}, 1);
}

// FftAutoScaleTestScaleBit.
TEST(SignalFftAutoScale, TfliteMicroScaleBit) {
  ExpectAutoScale({238, 113, -88, -243, -5, -130, 159, -70},
                  {30464, 14464, -11264, -31104, -640, -16640, 20352, -8960}, 7);
}

// The edges of fft_auto_scale.cc's arithmetic, worked out by hand from max_abs.cc and msb_32.cc:
// all zeros (msb(0) = 32 on GCC builds, so no shift); -32768 alone (its magnitude wraps to
// -32768 in int16 and reads as 0xFFFF8000: msb 32, no shift); -32768 then 1 (1 exceeds the
// wrapped maximum, so the shift is 14 and -32768 * 2^14 keeps its low 16 bits, 0); 1 and -1
// shift by 14.
TEST(SignalFftAutoScale, EdgesOfTheScale) {
  ExpectAutoScale({0, 0, 0}, {0, 0, 0}, 0);
  ExpectAutoScale({-32768}, {-32768}, 0);
  ExpectAutoScale({-32768, 1}, {0, 16384}, 14);
  ExpectAutoScale({1, -1}, {16384, -16384}, 14);
}

// delay_flexbuffers_generated_data.cc: {"delay_length": 3} and {"delay_length": 5}.
const Bytes kDelay3 = {0x64, 0x65, 0x6c, 0x61, 0x79, 0x5f, 0x6c, 0x65, 0x6e, 0x67, 0x74, 0x68,
                       0x00, 0x01, 0x0e, 0x01, 0x01, 0x01, 0x03, 0x04, 0x02, 0x24, 0x01};
const Bytes kDelay5 = {0x64, 0x65, 0x6c, 0x61, 0x79, 0x5f, 0x6c, 0x65, 0x6e, 0x67, 0x74, 0x68,
                       0x00, 0x01, 0x0e, 0x01, 0x01, 0x01, 0x05, 0x04, 0x02, 0x24, 0x01};

Bytes DelayModel(const std::vector<int32_t>& shape, const Bytes& options) {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("input", shape, TflType::kInt16);
  const int out = b.AddTensor("output", shape, TflType::kInt16);
  b.AddCustomOperator("SignalDelay", {in}, {out}, options);
  b.SetInputs({in});
  b.SetOutputs({out});
  return b.Finish();
}

// Runs `inputs` (one frame each) through one loaded model in turn, twice: a second load starts
// the history over, as TFLite Micro's Reset does (delay_test.cc TestDelayReset), so both runs
// must give `golden` (the frames' outputs concatenated).
void ExpectDelay(const std::vector<int32_t>& shape, const Bytes& options,
                 const std::vector<int16_t>& inputs, const std::vector<int16_t>& golden) {
  absl::StatusOr<compiler::CompileResult> compiled =
      compiler::Compile(DelayModel(shape, options), {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  size_t frame = 1;
  for (int32_t d : shape) frame *= static_cast<size_t>(d);
  std::vector<std::vector<Bytes>> inferences;
  for (size_t i = 0; i < inputs.size(); i += frame) {
    inferences.push_back({tflm_reference::BytesOf(
        std::vector<int16_t>(inputs.begin() + i, inputs.begin() + i + frame))});
  }
  for (int load = 0; load < 2; ++load) {
    const auto run = runtime::testing::RunPteInferences(compiled->pte, inferences);
    ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
    std::vector<int16_t> outputs;
    for (const Bytes& b : run.outputs) {
      const std::vector<int16_t> v = tflm_reference::ValuesOf<int16_t>(b);
      outputs.insert(outputs.end(), v.begin(), v.end());
    }
    EXPECT_EQ(outputs, golden) << "load " << load;
  }
}

// DelayTestSingleDimDelayLessThanFrameSize (and its Reset twin).
TEST(SignalDelay, TfliteMicroDelayShorterThanTheFrame) {
  ExpectDelay({8}, kDelay3, {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0},
              {0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0});
}

// DelayTestSingleDimDelayGreaterThanFrameSize (and its Reset twin).
TEST(SignalDelay, TfliteMicroDelayLongerThanTheFrame) {
  ExpectDelay({3}, kDelay5, {1, 2, 3, 4, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 1, 2, 3, 4});
}

// DelayTestMultiDimDelayLessThanFrameSize: four rows of four, each its own delay line.
TEST(SignalDelay, TfliteMicroRowsDelayShorterThanTheFrame) {
  std::vector<int16_t> input(32, 0);
  for (int16_t i = 0; i < 15; ++i) input[static_cast<size_t>(i)] = static_cast<int16_t>(i + 1);
  ExpectDelay({4, 4}, kDelay3, input, {0, 0, 0, 1, 0, 0, 0, 5, 0,  0,  0,  9, 0,  0,  0, 13,
                                       2, 3, 4, 0, 6, 7, 8, 0, 10, 11, 12, 0, 14, 15, 0, 0});
}

// DelayTestMultiDimDelayGreaterThanFrameSize.
TEST(SignalDelay, TfliteMicroRowsDelayLongerThanTheFrame) {
  std::vector<int16_t> input(48, 0);
  for (int16_t i = 0; i < 15; ++i) input[static_cast<size_t>(i)] = static_cast<int16_t>(i + 1);
  std::vector<int16_t> golden(16, 0);
  const std::vector<int16_t> second = {0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15};
  const std::vector<int16_t> third = {4, 0, 0, 0, 8, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0};
  golden.insert(golden.end(), second.begin(), second.end());
  golden.insert(golden.end(), third.begin(), third.end());
  ExpectDelay({4, 4}, kDelay5, input, golden);
}

// delay_length 0 passes every frame through unchanged (worked out from delay.cc: no zeros are
// primed, so each frame is written and read back).
TEST(SignalDelay, NoDelayPassesFramesThrough) {
  ExpectDelay({2, 3}, testing::IntMapFlexbuffer({{"delay_length", 0}}),
              {1, -2, 3, 4, 5, -32768, 7, 8, 9, 10, 11, 32767},
              {1, -2, 3, 4, 5, -32768, 7, 8, 9, 10, 11, 32767});
}

}  // namespace
}  // namespace boardlab
