// The importer's checks of TFLite Micro's streaming ops (SignalFramer, SignalStacker,
// SignalOverlapAdd, CIRCULAR_BUFFER): their flexbuffer options, the types and shapes TFLite
// Micro's Prepare refuses, option values its Eval would overrun a buffer with, and state larger
// than boardlab keeps per op. Where they run: the CPU, with a reason.

#include <string>
#include <vector>

#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "tests/compiler/validate_test_util.h"

namespace boardlab::testing {
namespace {

using compiler::OpType;
using validate_test::ExpectInvalid;
using validate_test::ExpectUnsupported;

std::vector<uint8_t> FramerOptions(int64_t size, int64_t step, int64_t prefill) {
  return IntMapFlexbuffer({{"frame_size", size}, {"frame_step", step}, {"prefill", prefill}});
}

TfliteBuilder Framer(const std::vector<int32_t>& in_shape, const std::vector<int32_t>& out_shape,
                     std::vector<uint8_t> options, TflType valid_type = TflType::kBool) {
  TfliteBuilder b;
  const int in = b.AddTensor("input", in_shape, TflType::kInt16);
  const int out = b.AddTensor("frames", out_shape, TflType::kInt16);
  const int valid = b.AddTensor("valid", {}, valid_type);
  b.AddCustomOperator("SignalFramer", {in}, {out, valid}, std::move(options));
  b.SetInputs({in});
  b.SetOutputs({out, valid});
  return b;
}

TEST(ValidateSignalFramer, ImportsWithItsOptions) {
  absl::StatusOr<compiler::Graph> g =
      compiler::ImportTflite(Framer({2, 4}, {2, 2, 5}, FramerOptions(5, 2, 1)).Finish(), nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  const auto& o = g->ops[0].opts<compiler::StreamOptions>();
  EXPECT_EQ(g->ops[0].type, OpType::kSignalFramer);
  EXPECT_EQ(o.frame_size, 5);
  EXPECT_EQ(o.frame_step, 2);
  EXPECT_TRUE(o.prefill);
}

TEST(ValidateSignalFramer, OptionsMustBeComplete) {
  ExpectInvalid(Framer({4}, {2, 5}, {}), {"SIGNAL_FRAMER #0", "custom options: none"});
  ExpectInvalid(Framer({4}, {2, 5}, IntMapFlexbuffer({{"frame_size", 5}, {"frame_step", 2}})),
                {"key 'prefill' is missing"});
  ExpectInvalid(Framer({4}, {2, 5}, {0xff, 0xff, 0xff, 0x01}), {"are not a valid flexbuffer"});
}

TEST(ValidateSignalFramer, StepsMustDivideTheInputAndPrefillFit) {
  ExpectInvalid(Framer({5}, {2, 5}, FramerOptions(5, 2, 0)),
                {"5 samples per row, not a positive multiple of frame_step 2"});
  ExpectInvalid(Framer({4}, {2, 5}, FramerOptions(0, 2, 0)), {"must both be at least 1"});
  ExpectInvalid(Framer({4}, {1, 1}, FramerOptions(1, 4, 1)),
                {"would prime a negative number of zeros"});
  ExpectInvalid(Framer({4}, {2, 4}, FramerOptions(5, 2, 0)),
                {"output 'frames' has shape [2,4], the inputs give [2,5]"});
  ExpectUnsupported(Framer({4}, {2, 5}, FramerOptions(5, 2, 0), TflType::kInt32),
                    {"output valid 'valid' is int32"});
}

// 64 rows x a ring of 1024 samples x 2 bytes = 131072 bytes, twice what boardlab keeps.
TEST(ValidateSignalFramer, TheStreamMustFitPersistentMemory) {
  ExpectUnsupported(Framer({64, 512}, {64, 1, 1024}, FramerOptions(1024, 512, 0)),
                    {"the framer keeps 131072 bytes of state", "more than boardlab's 65536"});
}

TfliteBuilder Stacker(int32_t channels, int32_t out, std::vector<uint8_t> options,
                      TflType in_type = TflType::kInt16) {
  TfliteBuilder b;
  const int in = b.AddTensor("input", {channels}, in_type);
  const int o = b.AddTensor("stacked", {out}, TflType::kInt16);
  const int valid = b.AddTensor("valid", {}, TflType::kBool);
  b.AddCustomOperator("SignalStacker", {in}, {o, valid}, std::move(options));
  b.SetInputs({in});
  b.SetOutputs({o, valid});
  return b;
}

std::vector<uint8_t> StackerOptions(int64_t channels, int64_t left, int64_t right, int64_t step) {
  return IntMapFlexbuffer({{"num_channels", channels},
                           {"stacker_left_context", left},
                           {"stacker_right_context", right},
                           {"stacker_step", step}});
}

// TFLite Micro's Init reads the stacker's four options by place (ElementAsInt32(0) to (3)): a
// key sorting before "num_channels" moves each to the next key's value, and boardlab takes the
// same values. By key this would be one channel, which the [3] input refuses.
TEST(ValidateSignalStacker, TheOptionsAreReadByPlaceAsTfliteMicroReadsThem) {
  absl::StatusOr<compiler::Graph> g =
      compiler::ImportTflite(Stacker(3, 6,
                                     IntMapFlexbuffer({{"_channels", 3},
                                                       {"num_channels", 1},
                                                       {"stacker_left_context", 0},
                                                       {"stacker_right_context", 1},
                                                       {"stacker_step", 9}}))
                                 .Finish(),
                             nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  const auto& o = g->ops[0].opts<compiler::StreamOptions>();
  EXPECT_EQ(o.num_channels, 3);
  EXPECT_EQ(o.left_context, 1);
  EXPECT_EQ(o.right_context, 0);
  EXPECT_EQ(o.stacker_step, 1);
}

TEST(ValidateSignalStacker, OptionsShapesAndSteps) {
  ExpectInvalid(Stacker(3, 6, IntMapFlexbuffer({{"num_channels", 3}})),
                {"SIGNAL_STACKER #0", "key 'stacker_left_context' is missing"});
  ExpectInvalid(Stacker(3, 6, StackerOptions(4, 1, 0, 1)),
                {"input 'input' has shape [3], num_channels is 4"});
  ExpectInvalid(Stacker(3, 6, StackerOptions(3, 1, 0, 3)),
                {"stacker_step 3 exceeds the 2 stacked inferences"});
  ExpectInvalid(Stacker(3, 6, StackerOptions(3, -1, 0, 1)), {"contexts at least 0"});
  ExpectInvalid(Stacker(3, 9, StackerOptions(3, 1, 0, 1)),
                {"output 'stacked' has shape [9], the inputs give [6]"});
  ExpectUnsupported(Stacker(3, 6, StackerOptions(3, 1, 0, 1), TflType::kInt8),
                    {"input 'input' is int8"});
  ExpectUnsupported(Stacker(1024, 1024 * 40, StackerOptions(1024, 39, 0, 1)),
                    {"the stacker keeps 81920 bytes of state"});
}

TfliteBuilder OverlapAdd(const std::vector<int32_t>& in_shape,
                         const std::vector<int32_t>& out_shape, TflType type,
                         std::vector<uint8_t> options) {
  TfliteBuilder b;
  const int in = b.AddTensor("frames", in_shape, type);
  const int out = b.AddTensor("samples", out_shape, type);
  b.AddCustomOperator("SignalOverlapAdd", {in}, {out}, std::move(options));
  b.SetInputs({in});
  b.SetOutputs({out});
  return b;
}

TEST(ValidateSignalOverlapAdd, TypeOptionStepAndShapes) {
  ExpectInvalid(OverlapAdd({4, 3}, {4}, TflType::kInt16, IntMapFlexbuffer({{"frame_step", 1}})),
                {"SIGNAL_OVERLAP_ADD #0", "key 'T' is missing"});
  ExpectUnsupported(
      OverlapAdd({4, 3}, {4}, TflType::kInt32, IntMapFlexbuffer({{"T", 2}, {"frame_step", 1}})),
      {"option T is TFLite type 2", "int16 (7) or float32 (0)"});
  ExpectInvalid(
      OverlapAdd({4, 3}, {4}, TflType::kFloat32, IntMapFlexbuffer({{"T", 7}, {"frame_step", 1}})),
      {"option T says int16 but input 'frames' is float32"});
  ExpectInvalid(
      OverlapAdd({4, 3}, {16}, TflType::kInt16, IntMapFlexbuffer({{"T", 7}, {"frame_step", 4}})),
      {"frame_step 4 is outside 1..3"});
  ExpectInvalid(
      OverlapAdd({4, 3}, {8}, TflType::kInt16, IntMapFlexbuffer({{"T", 7}, {"frame_step", 1}})),
      {"output 'samples' has shape [8], the inputs give [4]"});
  ExpectInvalid(
      OverlapAdd({12}, {12}, TflType::kInt16, IntMapFlexbuffer({{"T", 7}, {"frame_step", 1}})),
      {"input 'frames' has shape [12], expected rank 2-5"});
  // 8 rows x 2048 float32 = 65536... and one more row over.
  ExpectUnsupported(OverlapAdd({9, 1, 2048}, {9, 1024}, TflType::kFloat32,
                               IntMapFlexbuffer({{"T", 0}, {"frame_step", 1024}})),
                    {"the overlap-add buffer keeps 73728 bytes of state"});
}

TfliteBuilder CircularBuffer(const std::vector<int32_t>& in_shape,
                             const std::vector<int32_t>& out_shape, std::vector<uint8_t> options,
                             QuantParams out_q = PerTensor(1.0f, 0)) {
  TfliteBuilder b;
  const int in = b.AddTensor("input", in_shape, TflType::kInt8, PerTensor(1.0f, 0));
  const int out = b.AddTensor("buffer", out_shape, TflType::kInt8, out_q);
  b.AddCustomOperator("CIRCULAR_BUFFER", {in}, {out}, std::move(options));
  b.SetInputs({in});
  b.SetOutputs({out});
  return b;
}

TEST(ValidateCircularBuffer, ShapesQuantizationAndOptions) {
  absl::StatusOr<compiler::Graph> g =
      compiler::ImportTflite(CircularBuffer({1, 1, 1, 3}, {1, 4, 1, 3}, {}).Finish(), nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->ops[0].type, OpType::kCircularBuffer);
  EXPECT_EQ(g->ops[0].opts<compiler::StreamOptions>().cycles_max, 0);
  ExpectInvalid(CircularBuffer({1, 1, 1, 3}, {1, 4, 1, 3}, IntMapFlexbuffer({{"period", 2}})),
                {"CIRCULAR_BUFFER #0", "key 'cycles_max' is missing"});
  ExpectInvalid(CircularBuffer({1, 1, 1, 3}, {1, 4, 1, 3}, IntMapFlexbuffer({{"cycles_max", -2}})),
                {"cycles_max -2 is negative"});
  ExpectInvalid(CircularBuffer({1, 2, 1, 3}, {1, 4, 1, 3}, {}),
                {"expected [b, 1, h, d] into [b, slots, h, d]"});
  ExpectInvalid(CircularBuffer({1, 1, 3}, {1, 4, 3}, {}), {"expected rank 4"});
  ExpectInvalid(CircularBuffer({1, 1, 1, 3}, {1, 4, 1, 3}, {}, PerTensor(0.5f, 0)),
                {"quantization differ"});
  // TFLite Micro's Eval shifts only the first batch's slots: batch 1 alone is its op.
  ExpectUnsupported(
      CircularBuffer({2, 1, 1, 3}, {2, 4, 1, 3}, {}),
      {"CIRCULAR_BUFFER #0", "batch 2: TFLite Micro's CIRCULAR_BUFFER assumes batch 1",
       "shifts the first batch's slots only"});
  ExpectUnsupported(CircularBuffer({1, 1, 1, 4096}, {1, 17, 1, 4096}, {}),
                    {"the circular buffer keeps 69632 bytes of state"});
}

// All four compile onto the CPU, each with the streaming op reason in the report.
TEST(ValidateStreamOps, CompileOntoTheCpuWithAReason) {
  for (TfliteBuilder b :
       {Framer({4}, {2, 5}, FramerOptions(5, 2, 1)), Stacker(3, 6, StackerOptions(3, 1, 0, 1)),
        OverlapAdd({4, 3}, {4}, TflType::kInt16, IntMapFlexbuffer({{"T", 7}, {"frame_step", 1}})),
        CircularBuffer({1, 1, 1, 3}, {1, 4, 1, 3}, {})}) {
    absl::StatusOr<compiler::CompileResult> r = compiler::Compile(b.Finish(), {});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NE(r->report_json.find("a TFLite Micro streaming op"), std::string::npos)
        << r->report_json;
  }
}

}  // namespace
}  // namespace boardlab::testing
