// The importer's checks of the signal library's real FFTs (SignalRfft, SignalIrfft): their
// custom codes and flexbuffer options ('T' and "fft_length"), the types TFLite Micro's Prepare
// refuses, and what its Eval would write or read past a tensor's end with or its kissfft would
// not compute.

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

// TFLite's TensorType codes, the 'T' of the options.
constexpr int64_t kTFloat32 = 0, kTInt32 = 2, kTInt16 = 7;

std::vector<uint8_t> Options(int64_t t, int64_t fft_length) {
  return IntMapFlexbuffer({{"T", t}, {"fft_length", fft_length}});
}

TfliteBuilder Fft(const char* code, std::vector<int32_t> in_shape, std::vector<int32_t> out_shape,
                  std::vector<uint8_t> options, TflType in_type = TflType::kInt16,
                  TflType out_type = TflType::kInt16) {
  TfliteBuilder b;
  const int in = b.AddTensor("input", std::move(in_shape), in_type);
  const int out = b.AddTensor("output", std::move(out_shape), out_type);
  b.AddCustomOperator(code, {in}, {out}, std::move(options));
  b.SetInputs({in});
  b.SetOutputs({out});
  return b;
}

TfliteBuilder Rfft(std::vector<int32_t> in, std::vector<int32_t> out, int64_t fft_length,
                   int64_t t = kTInt16, TflType type = TflType::kInt16) {
  return Fft("SignalRfft", std::move(in), std::move(out), Options(t, fft_length), type, type);
}

TfliteBuilder Irfft(std::vector<int32_t> in, std::vector<int32_t> out, int64_t fft_length,
                    int64_t t = kTInt16, TflType type = TflType::kInt16) {
  return Fft("SignalIrfft", std::move(in), std::move(out), Options(t, fft_length), type, type);
}

TEST(ValidateSignalFftOps, EveryCaseCompilesOntoTheCpuWithAReason) {
  validate_test::ExpectEveryCaseOnTheCpu(SignalFftCases(), "signal library op");
}

TEST(ValidateSignalFftOps, ImportsTheTypeAndLength) {
  absl::StatusOr<compiler::Graph> g = compiler::ImportTflite(
      Rfft({3, 64}, {3, 66}, 64, kTInt32, TflType::kInt32).Finish(), nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->ops[0].type, OpType::kSignalRfft);
  EXPECT_EQ(g->ops[0].opts<compiler::SignalOptions>().fft_length, 64);
  EXPECT_EQ(g->ops[0].opts<compiler::SignalOptions>().tensor_type, kTInt32);
  // Rows shorter than fft_length are zero padded, as TFLite Micro's Eval does.
  EXPECT_TRUE(compiler::ImportTflite(Rfft({2, 50}, {2, 66}, 64).Finish(), nullptr).ok());
  EXPECT_TRUE(compiler::ImportTflite(
                  Irfft({4, 18}, {4, 16}, 16, kTFloat32, TflType::kFloat32).Finish(), nullptr)
                  .ok());
}

TEST(ValidateSignalFftOps, BothKeysAreRequired) {
  ExpectInvalid(Fft("SignalRfft", {64}, {66}, {}), {"SIGNAL_RFFT #0", "custom options: none"});
  ExpectInvalid(Fft("SignalRfft", {64}, {66}, IntMapFlexbuffer({{"T", kTInt16}})),
                {"key 'fft_length' is missing"});
  ExpectInvalid(Fft("SignalIrfft", {66}, {64}, IntMapFlexbuffer({{"fft_length", 64}})),
                {"key 'T' is missing"});
}

// TFLite Micro's kissfft runs an even fft_length whose half factors into 2s, 3s and 5s (its
// stages of radix 2, 3, 4 and 5): 6 = 2 x 3, 10 = 2 x 5, 12 = 2 x 6, 4000 = 2 x 2000.
TEST(ValidateSignalFftOps, TheLengthIsEvenItsHalfA235Number) {
  for (int32_t n : {4, 6, 10, 12, 18, 30, 50, 60, 480, 1000, 4000, 4096}) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(compiler::ImportTflite(Rfft({n}, {n + 2}, n).Finish(), nullptr).ok());
    EXPECT_TRUE(compiler::ImportTflite(
                    Irfft({n + 2}, {n}, n, kTFloat32, TflType::kFloat32).Finish(), nullptr)
                    .ok());
  }
}

// kiss_fftr_alloc refuses an odd length; boardlab's tables stop at 4096.
TEST(ValidateSignalFftOps, AnOddShortOrLongLengthIsRefused) {
  for (int64_t n : {2, 5, 63, 0, -64, 4098, 8192}) {
    SCOPED_TRACE(n);
    const int32_t len = static_cast<int32_t>(n > 0 ? n : 64);
    ExpectUnsupported(Rfft({len}, {len + 2}, n),
                      {"fft_length " + std::to_string(n) + " is not an even length in 4..4096"});
  }
  ExpectUnsupported(Irfft({65}, {63}, 63), {"fft_length 63 is not an even length"});
}

// A half length with a prime factor above 5 needs kissfft's generic butterfly, whose scratch
// TFLite Micro's build never allocates: 14 = 2 x 7, 22 = 2 x 11, 2 x 3 x 7 = 42, 2 x 49 = 98.
TEST(ValidateSignalFftOps, AHalfWithAPrimeFactorAbove5IsRefused) {
  for (int32_t n : {14, 22, 42, 98, 4094}) {
    SCOPED_TRACE(n);
    ExpectUnsupported(Rfft({n}, {n + 2}, n),
                      {"fft_length " + std::to_string(n) + ": its half " + std::to_string(n / 2) +
                           " has a prime factor above 5",
                       "radix 2, 3, 4 and 5 only", "null scratch"});
  }
  ExpectUnsupported(Irfft({16}, {14}, 14, kTInt32, TflType::kInt32), {"its half 7"});
}

// TFLite Micro's Init reads 'T' by key but fft_length as the map's second value in key order
// (FlexbufferWrapper::ElementAsInt32(1)); boardlab takes the same value. A key after
// "fft_length" moves nothing.
TEST(ValidateSignalFftOps, TheLengthIsTheSecondValueInKeyOrderAsTfliteMicroReadsIt) {
  const auto length_of = [](const std::vector<uint8_t>& options, int32_t in, int32_t out) {
    absl::StatusOr<compiler::Graph> g =
        compiler::ImportTflite(Fft("SignalRfft", {in}, {out}, options).Finish(), nullptr);
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? g->ops[0].opts<compiler::SignalOptions>().fft_length : -1;
  };
  EXPECT_EQ(length_of(IntMapFlexbuffer({{"T", kTInt16}, {"fft_length", 64}, {"zeta", 12}}), 64, 66),
            64);
  // "_output_shapes" sorts between 'T' and "fft_length": its value is the length.
  EXPECT_EQ(
      length_of(IntMapFlexbuffer({{"T", kTInt16}, {"_output_shapes", 12}, {"fft_length", 64}}), 12,
                14),
      12);
  ExpectInvalid(
      Fft("SignalRfft", {64}, {66},
          IntMapFlexbuffer({{"T", kTInt16}, {"Tcomplex", 8}, {"fft_length", 64}})),
      {"input 'input' [64] rows hold 64 values; fft_length 8 takes 1..fft_length samples",
       "from the options map's second value in key order: 8, where key 'fft_length' holds 64"});
  // A key before 'T' makes 'T' itself the second value: length 7, odd.
  ExpectUnsupported(Fft("SignalRfft", {64}, {66},
                        IntMapFlexbuffer({{"N", 1}, {"T", kTInt16}, {"fft_length", 64}})),
                    {"fft_length 7 is not an even length", "where key 'fft_length' holds 64"});
}

// A second value that is a float, or stored by reference, has no length in its bits.
TEST(ValidateSignalFftOps, TheSecondValueInKeyOrderMustBeAnIntegerInPlace) {
  flexbuffers::Builder fbb;
  fbb.Map([&]() {
    fbb.Int("T", kTInt16);
    fbb.Float("a", 64.0f);
    fbb.Int("fft_length", 64);
  });
  fbb.Finish();
  ExpectInvalid(Fft("SignalRfft", {64}, {66}, fbb.GetBuffer()),
                {"custom options: TFLite Micro reads fft_length as the map's second value in key "
                 "order, key 'a' here, which is no integer stored in place"});
}

TEST(ValidateSignalFftOps, TheTypeIsTheOptionsAndTheTensors) {
  ExpectUnsupported(Rfft({64}, {66}, 64, 3), {"option T is TFLite type 3", "int16 (7)"});
  ExpectInvalid(Rfft({64}, {66}, 64, kTInt32), {"option T says int32", "input 'input' is int16"});
  ExpectInvalid(
      Fft("SignalRfft", {64}, {66}, Options(kTInt16, 64), TflType::kInt16, TflType::kInt32),
      {"output 'output' int32"});
  ExpectUnsupported(Rfft({64}, {66}, 64, 9, TflType::kInt8), {"option T is TFLite type 9"});
}

// TFLite Micro's Eval copies each row into an fft_length buffer and writes fft_length / 2 + 1
// complex bins per row: a longer row, a shorter output row or different leading dimensions
// would run past a tensor.
TEST(ValidateSignalFftOps, RowsMatchTheLength) {
  ExpectInvalid(Rfft({2, 80}, {2, 66}, 64),
                {"input 'input' [2,80] rows hold 80 values", "takes 1..fft_length samples"});
  ExpectInvalid(Rfft({2, 64}, {2, 64}, 64),
                {"output 'output' [2,64] rows hold 64 values", "fft_length 64 writes 66"});
  ExpectInvalid(Rfft({2, 64}, {3, 66}, 64), {"differ before their last dimension"});
  ExpectInvalid(Rfft({2, 64}, {132}, 64), {"differ before their last dimension"});
  ExpectInvalid(Irfft({64}, {64}, 64), {"rows hold 64 values", "reads 66"});
  ExpectInvalid(Irfft({66}, {128}, 64), {"rows hold 128 values", "writes 64"});
}

}  // namespace
}  // namespace boardlab::testing
