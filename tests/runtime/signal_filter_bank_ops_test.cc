// The signal library's filter bank stage on the host runtime beyond TFLite Micro's own vectors
// (tests/support/signal_filter_bank_cases.cc, checked in hand_derived_ops_test.cc): the edges of
// its integer arithmetic, worked out by hand, and the run-time operands the compiler cannot see
// (a scale_bits or channel table that is a model input), which the kernels refuse with a clear
// error instead of shifting too far or reading past a tensor.

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

using testing::IntMapFlexbuffer;
using testing::TflType;
using Bytes = std::vector<uint8_t>;

// Compiles `b` (every operand a model input) and runs it once on `inputs`.
runtime::testing::PteRun RunModel(const testing::TfliteBuilder& b,
                                  const std::vector<Bytes>& inputs) {
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(b.Finish(), {});
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return {runtime::Error::kInternal, "compile failed", {}, {}};
  return runtime::testing::RunPte(compiled->pte, inputs);
}

testing::TfliteBuilder SquareRootModel(int32_t n) {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("input", {n}, TflType::kUint64);
  const int bits = b.AddTensor("scale_bits", {}, TflType::kInt32);
  const int out = b.AddTensor("output", {n}, TflType::kUint32);
  b.AddCustomOperator("SignalFilterBankSquareRoot", {in, bits}, {out}, {});
  b.SetInputs({in, bits});
  b.SetOutputs({out});
  return b;
}

// Below 2^32 the root is taken in 32 bits and kept to 16: 2^32 - 1 (root 65535, remainder
// 131070) would round to 65536 but stays 65535. From 2^32 the 64-bit root rounds up to 2^32 - 1
// at most.
TEST(SignalFilterBankSquareRoot, RoundingAtTheEdgesOfItsWidths) {
  const std::vector<uint64_t> in = {
      0,          1,          2,          3,  4294967295,           4294967296,
      4295098368, 4295098369, UINT64_MAX, 99, 18446744065119617025u};
  const auto run =
      RunModel(SquareRootModel(static_cast<int32_t>(in.size())),
               {tflm_reference::BytesOf(in), tflm_reference::BytesOf(std::vector<int32_t>{0})});
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  // 2 -> 1 (remainder 1, not above 1); 3 -> 2 (remainder 2 > 1); 99 -> 10 (9, remainder 18 > 9);
  // 2^32 + 2^17 = 65537^2 - 1 -> 65536 remainder 131072 > 65536 -> 65537; UINT64_MAX and
  // (2^32 - 1)^2 stay at 2^32 - 1.
  EXPECT_EQ(tflm_reference::ValuesOf<uint32_t>(run.outputs[0]),
            (std::vector<uint32_t>{0, 1, 1, 2, 65535, 65536, 65537, 65537, 4294967295u, 10,
                                   4294967295u}));
}

TEST(SignalFilterBankSquareRoot, ARunTimeScaleOutside0To31IsRefused) {
  for (int32_t bits : {32, -1}) {
    const auto run =
        RunModel(SquareRootModel(2), {tflm_reference::BytesOf(std::vector<uint64_t>{4, 9}),
                                      tflm_reference::BytesOf(std::vector<int32_t>{bits})});
    EXPECT_NE(run.error, runtime::Error::kOk) << bits;
    EXPECT_NE(run.message.find("scale_bits " + std::to_string(bits) + " is outside 0..31"),
              std::string::npos)
        << run.message;
  }
}

// Channel tables as model inputs: checked at each inference.
testing::TfliteBuilder RunTimeTablesModel() {
  testing::TfliteBuilder b;
  std::vector<int> in = {b.AddTensor("input", {4}, TflType::kUint32)};
  for (const char* name : {"weights", "unweights"})
    in.push_back(b.AddTensor(name, {4}, TflType::kInt16));
  for (const char* name : {"frequency_starts", "weight_starts", "widths"}) {
    in.push_back(b.AddTensor(name, {3}, TflType::kInt16));
  }
  const int out = b.AddTensor("output", {2}, TflType::kUint64);
  b.AddCustomOperator("SignalFilterBank", in, {out}, IntMapFlexbuffer({{"num_channels", 2}}));
  b.SetInputs(in);
  b.SetOutputs({out});
  return b;
}

TEST(SignalFilterBank, RunTimeChannelTablesAreCheckedBeforeReading) {
  const Bytes input = tflm_reference::BytesOf(std::vector<uint32_t>{10, 20, 30, 40});
  const Bytes weights = tflm_reference::BytesOf(std::vector<int16_t>{1, 2, 3, -1});
  const Bytes unweights = tflm_reference::BytesOf(std::vector<int16_t>{4, 5, 6, 7});
  const Bytes weight_starts = tflm_reference::BytesOf(std::vector<int16_t>{0, 1, 2});
  const Bytes widths = tflm_reference::BytesOf(std::vector<int16_t>{1, 1, 2});
  // Channel 0 (scratch) bin 0: unweighted 4 x 10 into channel 1. Channel 1 bin 1: 2 x 20 + 40 =
  // 80, unweighted 5 x 20 = 100 into channel 2. Channel 2 bins 2..3, weights 3, -1: 100 + 90 - 40
  // (the -1 sign-extended wraps modulo 2^64) = 150.
  const auto ok =
      RunModel(RunTimeTablesModel(),
               {input, weights, unweights, tflm_reference::BytesOf(std::vector<int16_t>{0, 1, 2}),
                weight_starts, widths});
  ASSERT_EQ(ok.error, runtime::Error::kOk) << ok.message;
  EXPECT_EQ(tflm_reference::ValuesOf<uint64_t>(ok.outputs[0]), (std::vector<uint64_t>{80, 150}));
  // Channel 2 from bin 3, two wide: bin 4 does not exist.
  const auto bad =
      RunModel(RunTimeTablesModel(),
               {input, weights, unweights, tflm_reference::BytesOf(std::vector<int16_t>{0, 1, 3}),
                weight_starts, widths});
  EXPECT_NE(bad.error, runtime::Error::kOk);
  EXPECT_NE(bad.message.find("channel 2 reads past its input or weights"), std::string::npos)
      << bad.message;
}

// SignalEnergy: two -32768s sum to 2^31 in 32 bits; bins outside [start, end) are written 0.
TEST(SignalEnergy, FullScaleBinAndUnwrittenBins) {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("input", {6}, TflType::kInt16);
  const int out = b.AddTensor("output", {3}, TflType::kUint32);
  b.AddCustomOperator("SignalEnergy", {in}, {out},
                      IntMapFlexbuffer({{"start_index", 1}, {"end_index", 2}}));
  b.SetInputs({in});
  b.SetOutputs({out});
  const auto run =
      RunModel(b, {tflm_reference::BytesOf(std::vector<int16_t>{3, 4, -32768, -32768, 5, 6})});
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  EXPECT_EQ(tflm_reference::ValuesOf<uint32_t>(run.outputs[0]),
            (std::vector<uint32_t>{0, 2147483648u, 0}));
}

// SignalFilterBankLog: 0 and 1 (after the shift) give 0. For 2, ln = 45426 / 2^16; times the
// scale 2^16 that is 45426, above 32767. For 2^32 - 1, ln = 1453728 / 2^16 and 2^16 x 1453728
// wraps in 32 bits (as in TFLite Micro) to 11936 x 2^16 (1453728 mod 2^16): 11936.
TEST(SignalFilterBankLog, SmallAndSaturatingInputs) {
  testing::TfliteBuilder b;
  const int in = b.AddTensor("input", {4}, TflType::kUint32);
  const int out = b.AddTensor("output", {4}, TflType::kInt16);
  b.AddCustomOperator("SignalFilterBankLog", {in}, {out},
                      IntMapFlexbuffer({{"input_correction_bits", 0}, {"output_scale", 65536}}));
  b.SetInputs({in});
  b.SetOutputs({out});
  const auto run =
      RunModel(b, {tflm_reference::BytesOf(std::vector<uint32_t>{0, 1, 2, 4294967295u})});
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  EXPECT_EQ(tflm_reference::ValuesOf<int16_t>(run.outputs[0]),
            (std::vector<int16_t>{0, 0, 32767, 11936}));
}

}  // namespace
}  // namespace boardlab
