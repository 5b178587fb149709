// TFLite Micro's SignalFilterBankSpectralSubtraction compiled and run by the host runtime over
// several inferences of one load and over a second load. The first inference of each load is
// TFLite Micro's own test vector (filter_bank_spectral_subtraction_test.cc, which resets and
// checks it again); the later ones, and the edges its test leaves alone (odd channels'
// alternate coefficients, clamping, smoothing_bits' 32-bit wrap, the 64-bit filter sum's wrap),
// are worked by hand from signal/src/filter_bank_spectral_subtraction.cc, as the comments show.

#include <map>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "tests/runtime/pte_runner.h"
#include "tests/runtime/tflm_reference_16x8.h"
#include "tests/support/op_cases.h"
#include "tests/support/tflite_builder.h"

namespace boardlab {
namespace {

using testing::TflType;
using tflm_reference::BytesOf;
using tflm_reference::ValuesOf;
using Bytes = std::vector<uint8_t>;
using U32 = std::vector<uint32_t>;

Bytes Model(int32_t channels, const Bytes& options) {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("input", {channels}, TflType::kUint32);
  const int out = b.AddTensor("output", {channels}, TflType::kUint32);
  const int noise = b.AddTensor("noise_estimate", {channels}, TflType::kUint32);
  b.AddCustomOperator("SignalFilterBankSpectralSubtraction", {in}, {out, noise}, options);
  b.SetInputs({in});
  b.SetOutputs({out, noise});
  return b.Finish();
}

struct Step {
  U32 input, output, noise;
};

// Runs `steps` as the inferences of one load and expects each one's output and noise estimate.
void ExpectInferences(const Bytes& pte, const std::vector<Step>& steps) {
  std::vector<std::vector<Bytes>> inputs;
  for (const Step& s : steps) inputs.push_back({BytesOf(s.input)});
  const runtime::testing::PteRun run = runtime::testing::RunPteInferences(pte, inputs);
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), 2 * steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE("inference " + std::to_string(i));
    EXPECT_EQ(ValuesOf<uint32_t>(run.outputs[2 * i]), steps[i].output);
    EXPECT_EQ(ValuesOf<uint32_t>(run.outputs[2 * i + 1]), steps[i].noise);
  }
}

Bytes Compiled(const Bytes& model) {
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(model, {});
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled.ok() ? compiled->pte : Bytes{};
}

// FilterBankSpectralSubtractionTest16Channel three times in a row: the estimate grows towards
// the signal. Channel 0 (393): noise 0 -> 393 x 655 >> 14 = 15 -> (257415 + 15 x 15729) >> 14
// = 30 -> (257415 + 30 x 15729) >> 14 = 44; output 393 - noise (the floor, 393 x 819 >> 14 =
// 19, stays below). Channel 3 (1): noise stays 0, output 1.
TEST(SignalSpectralSubtraction, TfliteMicro16ChannelCarriesItsEstimateAndResetsOnLoad) {
  const U32 x = {393, 213, 408, 1, 361, 385, 386, 326, 170, 368, 368, 305, 152, 322, 213, 319};
  const std::vector<Step> steps = {
      {x,
       {378, 205, 392, 1, 347, 370, 371, 313, 164, 354, 354, 293, 146, 310, 205, 307},
       {15, 8, 16, 0, 14, 15, 15, 13, 6, 14, 14, 12, 6, 12, 8, 12}},
      {x,
       {363, 197, 377, 1, 334, 356, 357, 301, 158, 340, 340, 282, 141, 298, 197, 295},
       {30, 16, 31, 0, 27, 29, 29, 25, 12, 28, 28, 23, 11, 24, 16, 24}},
      {x,
       {349, 190, 362, 1, 321, 342, 343, 289, 152, 327, 327, 271, 136, 287, 190, 284},
       {44, 23, 46, 0, 40, 43, 43, 37, 18, 41, 41, 34, 16, 35, 23, 35}}};
  const Bytes pte = Compiled(Model(16, testing::SpectralSubtractionOptions(16)));
  ASSERT_FALSE(pte.empty());
  ExpectInferences(pte, steps);
  // A second load starts from a zero estimate again: TFLite Micro's vector once more.
  ExpectInferences(pte, {steps[0]});
}

// Even channels filter with 1/2 and 1/2, odd ones take the input whole (alternate_smoothing 1,
// alternate_one_minus_smoothing 0); smoothing_bits 4; at least 1/16 of the signal kept.
Bytes EdgeOptions(bool clamping) {
  return testing::SpectralSubtractionOptions(4, {{"smoothing", 8192},
                                                 {"one_minus_smoothing", 8192},
                                                 {"alternate_smoothing", 16384},
                                                 {"alternate_one_minus_smoothing", 0},
                                                 {"min_signal_remaining", 1024},
                                                 {"smoothing_bits", 4},
                                                 {"clamping", clamping ? 1 : 0}});
}

// Inference 1, channel 0: 1000 << 4 = 16000, noise 8000, output (16000 - 8000) >> 4 = 500;
// channel 1: noise 16000 is the whole signal, output the floor 1000 x 1024 >> 14 = 62;
// channel 2: (2^28 + 5) << 4 wraps to 80, noise 40, (80 - 40) >> 4 = 2 under the floor
// (2^28 + 5) x 1024 >> 14 = 2^24. Inference 2, channel 0: 100 << 4 = 1600, noise
// (1600 + 8000) / 2 = 4800 is over the signal: the output is the floor 6, and clamping pulls the
// estimate down to 1600 (without, it stays 4800). Inference 3, channel 0: 0, noise 800 (2400
// without clamping), again over the signal.
TEST(SignalSpectralSubtraction, AlternateCoefficientsClampingAndSmoothingBits) {
  const std::vector<U32> inputs = {
      {1000, 1000, (1u << 28) + 5, 7}, {100, 100, 3, 7}, {0, 50, 1, 7}};
  const std::vector<U32> outputs = {{500, 62, 1u << 24, 0}, {6, 6, 0, 0}, {0, 3, 0, 0}};
  const Bytes clamped = Compiled(Model(4, EdgeOptions(true)));
  ASSERT_FALSE(clamped.empty());
  ExpectInferences(clamped, {{inputs[0], outputs[0], {8000, 16000, 40, 112}},
                             {inputs[1], outputs[1], {1600, 1600, 44, 112}},
                             {inputs[2], outputs[2], {0, 800, 16, 112}}});
  const Bytes unclamped = Compiled(Model(4, EdgeOptions(false)));
  ASSERT_FALSE(unclamped.empty());
  ExpectInferences(unclamped, {{inputs[0], outputs[0], {8000, 16000, 40, 112}},
                               {inputs[1], outputs[1], {4800, 1600, 44, 112}},
                               {inputs[2], outputs[2], {2400, 800, 30, 112}}});
}

// Coefficients of -1 are 2^32 - 1 to TFLite Micro; spectral_subtraction_bits 33. Inference 1,
// channel 0: (2^32 - 1)^2 >> 33 = 2^31 - 1, output 2^32 - 1 - (2^31 - 1) = 2^31. Inference 2:
// (2^32 - 1)^2 + (2^31 - 1)(2^32 - 1) passes 2^64 and wraps to 2^63 - 7 x 2^31 + 2, so the
// estimate is 2^30 - 2 (3 x 2^30 - 2 had the sum not wrapped) and the output 3 x 2^30 + 1.
TEST(SignalSpectralSubtraction, TheFilterSumWrapsAt64Bits) {
  const Bytes pte = Compiled(
      Model(2, testing::SpectralSubtractionOptions(2, {{"smoothing", -1},
                                                       {"one_minus_smoothing", -1},
                                                       {"alternate_smoothing", -1},
                                                       {"alternate_one_minus_smoothing", -1},
                                                       {"min_signal_remaining", -1},
                                                       {"spectral_subtraction_bits", 33}})));
  ASSERT_FALSE(pte.empty());
  const U32 x = {0xffffffffu, 0x80000000u};
  ExpectInferences(pte, {{x, {2147483648u, 1073741825u}, {2147483647u, 1073741823u}},
                         {x, {3221225473u, 1073741823u}, {1073741822u, 1610612735u}}});
}

}  // namespace
}  // namespace boardlab
