// The importer's checks of the signal library's filter bank stage (SignalEnergy,
// SignalFilterBank, SignalFilterBankSquareRoot, SignalFilterBankLog, SignalPCAN,
// SignalFilterBankSpectralSubtraction): their custom
// codes and flexbuffer options, the types and shapes TFLite Micro's Prepare refuses, and what
// its Eval would read past a tensor's end with or shift by more than a value's width.

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "flatbuffers/flexbuffers.h"
#include "gtest/gtest.h"
#include "tests/compiler/validate_test_util.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using compiler::OpType;
using validate_test::ExpectInvalid;
using validate_test::ExpectUnsupported;

// One custom op over fresh tensors: inputs (shape, type, constant int16 data or none), outputs.
struct Operand {
  std::vector<int32_t> shape;
  TflType type;
  std::vector<int16_t> data = {};  // a constant int16 table when not empty
};

TfliteBuilder CustomModel(const char* code, const std::vector<Operand>& inputs,
                          const std::vector<Operand>& outputs, std::vector<uint8_t> options) {
  TfliteBuilder b;
  std::vector<int32_t> in, out, graph_inputs;
  for (const Operand& o : inputs) {
    const std::string name = "in" + std::to_string(in.size());
    if (o.data.empty()) {
      in.push_back(b.AddTensor(name, o.shape, o.type));
      graph_inputs.push_back(in.back());
    } else {
      std::vector<uint8_t> bytes(o.data.size() * 2);
      std::memcpy(bytes.data(), o.data.data(), bytes.size());
      in.push_back(b.AddTensor(name, o.shape, o.type, {}, bytes));
    }
  }
  for (const Operand& o : outputs) {
    out.push_back(b.AddTensor("out" + std::to_string(out.size()), o.shape, o.type));
  }
  b.AddCustomOperator(code, in, out, std::move(options));
  b.SetInputs(graph_inputs);
  b.SetOutputs(out);
  return b;
}

TfliteBuilder Energy(std::vector<uint8_t> options, TflType in = TflType::kInt16,
                     TflType out = TflType::kUint32) {
  return CustomModel("SignalEnergy", {{{16}, in}}, {{{8}, out}}, std::move(options));
}

TEST(ValidateSignalFilterBankOps, EveryCaseCompilesOntoTheCpuWithAReason) {
  validate_test::ExpectEveryCaseOnTheCpu(SignalFilterBankCases(), "signal library op");
}

TEST(ValidateSignalEnergy, ImportsItsBinRange) {
  absl::StatusOr<compiler::Graph> g = compiler::ImportTflite(
      Energy(IntMapFlexbuffer({{"start_index", 2}, {"end_index", 5}})).Finish(), nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->ops[0].type, OpType::kSignalEnergy);
  EXPECT_EQ(g->ops[0].opts<compiler::SignalOptions>().start_index, 2);
  EXPECT_EQ(g->ops[0].opts<compiler::SignalOptions>().end_index, 5);
}

// TFLite Micro's Init reads end_index and start_index by place, the map's first and second
// values in key order (FlexbufferWrapper::ElementAsInt32(0) and (1)): a key sorting before
// them moves both, and boardlab takes the same values. By key these would be bins [7, 2).
TEST(ValidateSignalEnergy, TheIndicesAreReadByPlaceAsTfliteMicroReadsThem) {
  absl::StatusOr<compiler::Graph> g = compiler::ImportTflite(
      Energy(IntMapFlexbuffer({{"a", 6}, {"end_index", 2}, {"start_index", 7}})).Finish(), nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->ops[0].opts<compiler::SignalOptions>().end_index, 6);
  EXPECT_EQ(g->ops[0].opts<compiler::SignalOptions>().start_index, 2);

  // The value at a place must be an integer stored in place, the bytes the wrapper reads.
  flexbuffers::Builder fbb;
  fbb.Map([&]() {
    fbb.String("a", "six");
    fbb.Int("end_index", 2);
    fbb.Int("start_index", 7);
  });
  fbb.Finish();
  ExpectInvalid(Energy(fbb.GetBuffer()),
                {"custom options: TFLite Micro reads end_index as the map's first value in key "
                 "order, key 'a' here, which is no integer stored in place"});
}

TEST(ValidateSignalEnergy, BothIndicesRequiredAndWithinTheBins) {
  ExpectInvalid(Energy({}), {"SIGNAL_ENERGY #0", "custom options: none"});
  ExpectInvalid(Energy(IntMapFlexbuffer({{"start_index", 0}})), {"key 'end_index' is missing"});
  // 16 int16 values are 8 complex bins; the output has 8.
  ExpectInvalid(Energy(IntMapFlexbuffer({{"start_index", 0}, {"end_index", 9}})),
                {"bins [start_index 0, end_index 9) are not within the 8"});
  ExpectInvalid(Energy(IntMapFlexbuffer({{"start_index", 5}, {"end_index", 4}})),
                {"start_index 5, end_index 4"});
  ExpectInvalid(Energy(IntMapFlexbuffer({{"start_index", -1}, {"end_index", 4}})),
                {"start_index -1"});
}

TEST(ValidateSignalEnergy, Int16InUint32Out) {
  const std::vector<uint8_t> o = IntMapFlexbuffer({{"start_index", 0}, {"end_index", 8}});
  ExpectUnsupported(Energy(o, TflType::kInt32), {"input 'in0' is int32", "signal kernels"});
  ExpectUnsupported(Energy(o, TflType::kInt16, TflType::kInt32), {"output 'out0' is int32"});
}

// SignalFilterBank over `bins` uint32 inputs, 6 weights, 3 channel-table entries (2 channels).
TfliteBuilder FilterBank(int32_t channels, std::vector<int16_t> frequency_starts = {0, 1, 2},
                         int32_t out = 2, TflType weights = TflType::kInt16) {
  const std::vector<int16_t> weight_starts = {0, 2, 4}, widths = {2, 2, 2};
  return CustomModel("SignalFilterBank",
                     {{{4}, TflType::kUint32},
                      {{6}, weights},
                      {{6}, TflType::kInt16},
                      {{3}, TflType::kInt16, frequency_starts},
                      {{3}, TflType::kInt16, weight_starts},
                      {{3}, TflType::kInt16, widths}},
                     {{{out}, TflType::kUint64}}, IntMapFlexbuffer({{"num_channels", channels}}));
}

TEST(ValidateSignalFilterBank, WellFormedImports) {
  validate_test::Expect(FilterBank(2), absl::StatusCode::kOk, {});
}

// TFLite Micro's FilterBankNumChannelsOverflowPoc: num_channels beyond the channel tables.
TEST(ValidateSignalFilterBank, NumChannelsWithinTheChannelTables) {
  ExpectInvalid(FilterBank(3, {0, 1, 2}, 3),
                {"channel_frequency_starts 'in3' has 3 entries; num_channels 3 reads 4"});
  ExpectInvalid(FilterBank(0), {"num_channels 0 is not positive"});
  ExpectInvalid(FilterBank(2, {0, 1, 2}, 3), {"output 'out0' has 3 entries, more than "
                                              "num_channels 2"});
  TfliteBuilder none = FilterBank(2);
  none.mutable_operator(0).custom_options.clear();
  ExpectInvalid(none, {"SIGNAL_FILTER_BANK #0", "custom options: none"});
}

TEST(ValidateSignalFilterBank, ChannelsWithinTheInputAndWeights) {
  // Channel 2 starts at bin 3 and is 2 wide: bin 4 is past the 4 inputs.
  ExpectInvalid(FilterBank(2, {0, 1, 3}),
                {"channel 2 (frequency start 3, weight start 4, width 2) reads past input"});
  ExpectInvalid(FilterBank(2, {-1, 1, 2}), {"channel 0 (frequency start -1"});
}

TEST(ValidateSignalFilterBank, TypesAsTfliteMicro) {
  ExpectUnsupported(FilterBank(2, {0, 1, 2}, 2, TflType::kInt8), {"weights 'in1' is int8"});
}

TfliteBuilder SquareRoot(std::vector<int32_t> bits_shape, int32_t bits,
                         TflType in = TflType::kUint64, std::vector<int32_t> out_shape = {4}) {
  TfliteBuilder b;
  const int input = b.AddTensor("input", {4}, in);
  const std::vector<int32_t> value = {bits};
  const int scale = b.AddConstInt32("scale_bits", bits_shape, value);
  const int out = b.AddTensor("output", out_shape, TflType::kUint32);
  b.AddCustomOperator("SignalFilterBankSquareRoot", {input, scale}, {out}, {});
  b.SetInputs({input});
  b.SetOutputs({out});
  return b;
}

TEST(ValidateSignalFilterBankSquareRoot, ScaleBitsAnInt32ScalarWithin0To31) {
  validate_test::Expect(SquareRoot({}, 31), absl::StatusCode::kOk, {});
  ExpectInvalid(SquareRoot({}, 32), {"scale_bits 32 is outside 0..31"});
  ExpectInvalid(SquareRoot({}, -1), {"scale_bits -1 is outside 0..31"});
  ExpectInvalid(SquareRoot({1}, 3), {"scale_bits"});
  ExpectUnsupported(SquareRoot({}, 3, TflType::kUint32), {"input 'input' is uint32"});
  ExpectInvalid(SquareRoot({}, 3, TflType::kUint64, {5}), {"output 'output' has shape [5]"});
}

TfliteBuilder Log(std::vector<uint8_t> options, TflType out = TflType::kInt16) {
  return CustomModel("SignalFilterBankLog", {{{8}, TflType::kUint32}}, {{{8}, out}},
                     std::move(options));
}

TEST(ValidateSignalFilterBankLog, OptionsRequiredAndTheCorrectionWithin0To31) {
  validate_test::Expect(
      Log(IntMapFlexbuffer({{"input_correction_bits", 31}, {"output_scale", 1600}})),
      absl::StatusCode::kOk, {});
  ExpectInvalid(Log(IntMapFlexbuffer({{"input_correction_bits", 3}})),
                {"key 'output_scale' is missing"});
  ExpectInvalid(Log(IntMapFlexbuffer({{"input_correction_bits", 32}, {"output_scale", 1}})),
                {"input_correction_bits 32 is outside 0..31"});
  ExpectUnsupported(
      Log(IntMapFlexbuffer({{"input_correction_bits", 3}, {"output_scale", 1}}), TflType::kInt32),
      {"output 'out0' is int32"});
}

TfliteBuilder Pcan(int32_t lut_entries, int32_t snr_shift = 6, int32_t noise = 8) {
  return CustomModel(
      "SignalPCAN",
      {{{8}, TflType::kUint32}, {{noise}, TflType::kUint32}, {{lut_entries}, TflType::kInt16}},
      {{{8}, TflType::kUint32}}, IntMapFlexbuffer({{"snr_shift", snr_shift}}));
}

TEST(ValidatePcan, GainTableNoiseEstimateAndShift) {
  validate_test::Expect(Pcan(125), absl::StatusCode::kOk, {});
  ExpectInvalid(Pcan(124), {"gain_lut 'in2' has 124 entries", "reads entry 124"});
  ExpectInvalid(Pcan(125, 64), {"snr_shift 64 is outside 0..63"});
  ExpectInvalid(Pcan(125, 6, 7), {"noise_estimate 'in1' has shape [7]"});
  ExpectInvalid(CustomModel("SignalPCAN", {{{8}, TflType::kUint32}}, {{{8}, TflType::kUint32}},
                            IntMapFlexbuffer({{"snr_shift", 6}})),
                {"has 1 inputs, expected 3"});
}

TfliteBuilder Spectral(std::vector<uint8_t> options, int32_t in = 8, int32_t out = 8,
                       int32_t noise = 8, TflType type = TflType::kUint32) {
  return CustomModel("SignalFilterBankSpectralSubtraction", {{{in}, type}},
                     {{{out}, TflType::kUint32}, {{noise}, TflType::kUint32}}, std::move(options));
}

TEST(ValidateSpectralSubtraction, ImportsItsOptions) {
  absl::StatusOr<compiler::Graph> g = compiler::ImportTflite(
      Spectral(SpectralSubtractionOptions(8, {{"smoothing_bits", 3}, {"clamping", 1}})).Finish(),
      nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  const auto& o = g->ops[0].opts<compiler::SignalOptions>();
  EXPECT_EQ(g->ops[0].type, OpType::kSignalSpectralSubtraction);
  EXPECT_EQ(o.num_channels, 8);
  EXPECT_EQ(o.smoothing, 655);
  EXPECT_EQ(o.one_minus_smoothing, 15729);
  EXPECT_EQ(o.min_signal_remaining, 819);
  EXPECT_EQ(o.smoothing_bits, 3);
  EXPECT_EQ(o.spectral_subtraction_bits, 14);
  EXPECT_TRUE(o.clamping);
}

TEST(ValidateSpectralSubtraction, EveryKeyIsRequired) {
  for (const char* key : {"num_channels", "smoothing", "one_minus_smoothing", "alternate_smoothing",
                          "alternate_one_minus_smoothing", "min_signal_remaining", "smoothing_bits",
                          "spectral_subtraction_bits", "clamping"}) {
    SCOPED_TRACE(key);
    ExpectInvalid(Spectral(SpectralSubtractionOptions(8, {}, key)),
                  {"SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION #0",
                   std::string("key '") + key + "' is missing"});
  }
  ExpectInvalid(Spectral({}), {"custom options: none"});
}

// TFLite Micro's Eval walks num_channels entries of each tensor and copies the noise estimate
// tensor's size out of a num_channels buffer.
TEST(ValidateSpectralSubtraction, EveryTensorHoldsNumChannels) {
  validate_test::Expect(Spectral(SpectralSubtractionOptions(8)), absl::StatusCode::kOk, {});
  ExpectInvalid(Spectral(SpectralSubtractionOptions(8), 7),
                {"input 'in0' has 7 entries; num_channels is 8"});
  ExpectInvalid(Spectral(SpectralSubtractionOptions(8), 8, 9),
                {"output 'out0' has 9 entries; num_channels is 8"});
  ExpectInvalid(Spectral(SpectralSubtractionOptions(8), 8, 8, 16),
                {"noise_estimate output 'out1' has 16 entries; num_channels is 8"});
  ExpectInvalid(Spectral(SpectralSubtractionOptions(8, {{"num_channels", 0}})),
                {"num_channels 0 is not positive"});
  ExpectUnsupported(
      Spectral(SpectralSubtractionOptions(8, {{"num_channels", 16385}}), 16385, 16385, 16385),
      {"num_channels 16385 keeps a noise estimate larger than boardlab's 16384"});
}

TEST(ValidateSpectralSubtraction, TypesArityAndShifts) {
  ExpectUnsupported(Spectral(SpectralSubtractionOptions(8), 8, 8, 8, TflType::kInt32),
                    {"input 'in0' is int32"});
  ExpectInvalid(Spectral(SpectralSubtractionOptions(8, {{"smoothing_bits", 32}})),
                {"smoothing_bits 32 is outside 0..31"});
  ExpectInvalid(Spectral(SpectralSubtractionOptions(8, {{"smoothing_bits", -1}})),
                {"smoothing_bits -1 is outside 0..31"});
  ExpectInvalid(Spectral(SpectralSubtractionOptions(8, {{"spectral_subtraction_bits", 64}})),
                {"spectral_subtraction_bits 64 is outside 0..63"});
  ExpectInvalid(CustomModel("SignalFilterBankSpectralSubtraction", {{{8}, TflType::kUint32}},
                            {{{8}, TflType::kUint32}}, SpectralSubtractionOptions(8)),
                {"has 1 outputs, expected 2"});
  ExpectInvalid(CustomModel("SignalFilterBankSpectralSubtraction", {{{2, 4}, TflType::kUint32}},
                            {{{8}, TflType::kUint32}, {{8}, TflType::kUint32}},
                            SpectralSubtractionOptions(8)),
                {"input 'in0'"});
}

// Unsupported types are collected over the model into one message.
TEST(ValidateSignalFilterBankOps, OneMessageListsEveryUnsupportedOp) {
  TfliteBuilder b;
  const int a = b.AddTensor("a", {16}, TflType::kFloat32);
  const int e = b.AddTensor("e", {8}, TflType::kUint32);
  const int c = b.AddTensor("c", {8}, TflType::kUint32);
  const int l = b.AddTensor("l", {8}, TflType::kInt32);
  b.AddCustomOperator("SignalEnergy", {a}, {e},
                      IntMapFlexbuffer({{"start_index", 0}, {"end_index", 8}}));
  b.AddCustomOperator("SignalFilterBankLog", {c}, {l},
                      IntMapFlexbuffer({{"input_correction_bits", 3}, {"output_scale", 1600}}));
  b.SetInputs({a, c});
  b.SetOutputs({e, l});
  ExpectUnsupported(b, {"2 problems", "SIGNAL_ENERGY #0: input 'a' is float32",
                        "SIGNAL_FILTER_BANK_LOG #1: output 'l' is int32"});
}

}  // namespace
}  // namespace boardlab::testing
