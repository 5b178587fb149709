// The importer's checks of TFLite Micro's signal library ops (SignalWindow, SignalFftAutoScale):
// their custom codes and flexbuffer options, and the types and shapes TFLite Micro's Prepare
// refuses or its Eval would read past a tensor's end with.

#include <string>
#include <vector>

#include "flatbuffers/flexbuffers.h"
#include "gtest/gtest.h"
#include "tests/compiler/validate_test_util.h"

namespace boardlab::testing {
namespace {

using compiler::OpType;
using validate_test::ExpectInvalid;
using validate_test::ExpectUnsupported;

// SignalWindow over `shape` with `weights_len` int16 weights; fields public so that each test can
// break one thing.
struct WindowModel {
  TfliteBuilder b;
  std::vector<int32_t> shape = {2, 16};
  int32_t weights_len = 16;
  TflType in_type = TflType::kInt16, weights_type = TflType::kInt16, out_type = TflType::kInt16;
  std::vector<int32_t> out_shape = {2, 16};
  TfliteBuilder& Build(std::vector<uint8_t> options = IntMapFlexbuffer({{"shift", 12}})) {
    const int in = b.AddTensor("input", shape, in_type);
    const int w = b.AddTensor("weights", {weights_len}, weights_type);
    const int out = b.AddTensor("output", out_shape, out_type);
    b.AddCustomOperator("SignalWindow", {in, w}, {out}, std::move(options));
    b.SetInputs({in, w});
    b.SetOutputs({out});
    return b;
  }
};

TEST(ValidateSignalWindow, ImportsWithItsShift) {
  WindowModel m;
  absl::StatusOr<compiler::Graph> g = compiler::ImportTflite(m.Build().Finish(), nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->ops.size(), 1u);
  EXPECT_EQ(g->ops[0].type, OpType::kSignalWindow);
  EXPECT_EQ(g->ops[0].opts<compiler::SignalOptions>().shift, 12);
}

TEST(ValidateSignalOps, EveryCaseCompilesOntoTheCpuWithAReason) {
  validate_test::ExpectEveryCaseOnTheCpu(SignalCases(), "signal library op");
}

TEST(ValidateSignalWindow, OptionsMustBeAFlexbufferMapWithAShift) {
  WindowModel none;
  ExpectInvalid(none.Build({}), {"SIGNAL_WINDOW #0", "custom options: none"});
  WindowModel garbage;
  ExpectInvalid(garbage.Build({0xff, 0xff, 0xff, 0x01}), {"are not a valid flexbuffer"});
  std::vector<uint8_t> cut = IntMapFlexbuffer({{"shift", 12}});
  cut.resize(cut.size() - 3);
  WindowModel truncated;
  // Cut short, the bytes may still verify as some other flexbuffer (then not a map).
  ExpectInvalid(truncated.Build(cut), {"SIGNAL_WINDOW #0: custom options: "});
  WindowModel other_key;
  ExpectInvalid(other_key.Build(IntMapFlexbuffer({{"shifts", 12}})), {"key 'shift' is missing"});
  flexbuffers::Builder fbb;
  fbb.Map([&]() { fbb.String("shift", "twelve"); });
  fbb.Finish();
  WindowModel text;
  ExpectInvalid(text.Build(fbb.GetBuffer()), {"key 'shift' is not a number"});
}

TEST(ValidateSignalWindow, ShiftWithinAnInt32) {
  WindowModel negative;
  ExpectInvalid(negative.Build(IntMapFlexbuffer({{"shift", -1}})), {"shift -1 is outside 0..31"});
  WindowModel large;
  ExpectInvalid(large.Build(IntMapFlexbuffer({{"shift", 32}})), {"shift 32 is outside 0..31"});
}

TEST(ValidateSignalWindow, Int16Throughout) {
  WindowModel in;
  in.in_type = TflType::kInt8;
  ExpectUnsupported(in.Build(), {"input 'input' is int8", "signal kernels take int16"});
  WindowModel weights;
  weights.weights_type = TflType::kFloat32;
  ExpectUnsupported(weights.Build(), {"weights 'weights' is float32"});
  WindowModel out;
  out.out_type = TflType::kInt32;
  ExpectUnsupported(out.Build(), {"output 'output' is int32"});
}

TEST(ValidateSignalWindow, TheWindowSpansTheLastDimension) {
  WindowModel m;
  m.weights_len = 8;
  ExpectInvalid(m.Build(), {"weights 'weights' have 8 entries", "last dimension must equal"});
  WindowModel out;
  out.out_shape = {1, 32};
  ExpectInvalid(out.Build(), {"output 'output' has shape [1,32]"});
}

TEST(ValidateSignalWindow, TheFormatMustBeFlexbuffers) {
  WindowModel m;
  m.Build().mutable_operator(0).custom_options_format = 1;
  ExpectInvalid(m.b, {"custom_options_format 1 is not FLEXBUFFERS"});
}

struct AutoScaleModel {
  TfliteBuilder b;
  std::vector<int32_t> in_shape = {32}, out_shape = {32}, bits_shape = {};
  TflType bits_type = TflType::kInt32;
  TfliteBuilder& Build() {
    const int in = b.AddTensor("input", in_shape, TflType::kInt16);
    const int out = b.AddTensor("output", out_shape, TflType::kInt16);
    const int bits = b.AddTensor("scale_bits", bits_shape, bits_type);
    b.AddCustomOperator("SignalFftAutoScale", {in}, {out, bits});
    b.SetInputs({in});
    b.SetOutputs({out, bits});
    return b;
  }
};

TEST(ValidateSignalFftAutoScale, ImportsWithoutOptions) {
  AutoScaleModel m;
  absl::StatusOr<compiler::Graph> g = compiler::ImportTflite(m.Build().Finish(), nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->ops[0].type, OpType::kSignalFftAutoScale);
}

TEST(ValidateSignalFftAutoScale, OneDimensionAndAnInt32ScalarShift) {
  AutoScaleModel rank2;
  rank2.in_shape = rank2.out_shape = {2, 16};
  ExpectInvalid(rank2.Build(), {"input 'input' has shape [2,16], expected rank 1"});
  AutoScaleModel longer;
  longer.out_shape = {64};
  ExpectInvalid(longer.Build(), {"output 'output' has shape [64]"});
  AutoScaleModel vector_bits;
  vector_bits.bits_shape = {1};
  ExpectInvalid(vector_bits.Build(), {"scale_bits output 'scale_bits' has shape [1]"});
  AutoScaleModel int16_bits;
  int16_bits.bits_type = TflType::kInt16;
  ExpectUnsupported(int16_bits.Build(), {"scale_bits output 'scale_bits' is int16"});
}

TfliteBuilder DelayModel(std::vector<int32_t> shape, std::vector<uint8_t> options,
                         TflType type = TflType::kInt16) {
  TfliteBuilder b;
  const int in = b.AddTensor("input", shape, type);
  const int out = b.AddTensor("output", shape, type);
  b.AddCustomOperator("SignalDelay", {in}, {out}, std::move(options));
  b.SetInputs({in});
  b.SetOutputs({out});
  return b;
}

TEST(ValidateSignalDelay, ImportsWithItsDelayLength) {
  absl::StatusOr<compiler::Graph> g = compiler::ImportTflite(
      DelayModel({4, 4}, IntMapFlexbuffer({{"delay_length", 3}})).Finish(), nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->ops[0].type, OpType::kSignalDelay);
  EXPECT_EQ(g->ops[0].opts<compiler::SignalOptions>().delay_length, 3);
}

TEST(ValidateSignalDelay, TheDelayLengthIsRequiredAndNotNegative) {
  ExpectInvalid(DelayModel({8}, {}), {"SIGNAL_DELAY #0", "custom options: none"});
  ExpectInvalid(DelayModel({8}, IntMapFlexbuffer({{"delay", 3}})),
                {"key 'delay_length' is missing"});
  ExpectInvalid(DelayModel({8}, IntMapFlexbuffer({{"delay_length", -1}})),
                {"delay_length -1 is negative"});
}

// 8 rows x 4097 samples = 32776 history samples, 8 more than boardlab keeps.
TEST(ValidateSignalDelay, TheHistoryMustFitPersistentMemory) {
  ExpectUnsupported(DelayModel({8, 16}, IntMapFlexbuffer({{"delay_length", 4097}})),
                    {"keeps 32776 samples of history", "more than boardlab's 32768"});
  ExpectUnsupported(DelayModel({8}, IntMapFlexbuffer({{"delay_length", 3}}), TflType::kFloat32),
                    {"input 'input' is float32"});
}

// A custom code boardlab does not know (TFLite Micro's signal library has no SignalStft).
TEST(ValidateSignalOps, OtherSignalOpsStayUnsupportedByName) {
  TfliteBuilder b;
  const int a = b.AddTensor("a", {16}, TflType::kInt16);
  const int c = b.AddTensor("c", {8}, TflType::kInt16);
  b.AddCustomOperator("SignalStft", {a}, {c});
  b.SetInputs({a});
  b.SetOutputs({c});
  ExpectUnsupported(b, {"CUSTOM 'SignalStft'"});
}

}  // namespace
}  // namespace boardlab::testing
