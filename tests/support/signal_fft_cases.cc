// The cases of the signal library's real FFTs (op_cases.h SignalFftCases): TFLite Micro's own
// test vectors from signal/micro/kernels/fft_test.cc and signal/testdata/fft_test_data.cc, with
// the option bytes of fft_flexbuffers_generated_data.cc (so the importer reads exactly what
// TFLite Micro's tests feed its Init). boardlab's outputs equal the expected ones exactly, also
// where TFLite Micro's test allows a tolerance (RfftTestSize512Int16 3, RfftTestSize512Float
// 1e-5); IrfftTestLength512Float's samples are printed with 8 decimals, and 24 of them equal
// boardlab's once those are rounded to 8 decimals too (hand_derived_ops_test.cc). TFLite Micro's
// tests have no length but 64 and 512, so the lengths that take kissfft's radix 3 and 5 stages are
// cases worked out by hand below.

#include <map>

#include "tests/support/case_writer.h"
#include "tests/support/op_cases.h"
#include "tests/support/signal_fft_vectors.h"
#include "tests/support/tflite_builder.h"

namespace boardlab::testing {
namespace {

using cases::CaseList;
using cases::CaseWriter;
using cases::RawBytes;
using compiler::OpType;
using Bytes = std::vector<uint8_t>;

constexpr const char* kNoSignalOps =
    "the TFLite interpreter has no signal library ops; TFLite Micro's test vectors";

// TFLite's TensorType codes, the 'T' of the options.
constexpr uint8_t kT32Float = 0, kTInt32 = 2, kTInt16 = 7;

// fft_flexbuffers_generated_data.cc: {"T": t, "fft_length": 64} and {"T": t, "fft_length": 512}.
Bytes Fft64Options(uint8_t t) {
  return {0x66, 0x66, 0x74, 0x5f, 0x6c, 0x65, 0x6e, 0x67, 0x74, 0x68, 0x00, 0x54, 0x00,
          0x02, 0x03, 0x0f, 0x02, 0x01, 0x02, t,    0x40, 0x04, 0x04, 0x04, 0x24, 0x01};
}
Bytes Fft512Options(uint8_t t) {
  return {0x66, 0x66, 0x74, 0x5f, 0x6c, 0x65, 0x6e, 0x67, 0x74, 0x68, 0x00,
          0x54, 0x00, 0x02, 0x03, 0x0f, 0x02, 0x00, 0x01, 0x00, 0x02, 0x00,
          t,    0x00, 0x00, 0x02, 0x05, 0x05, 0x06, 0x25, 0x01};
}

// `rows` rows of `length`: `first` then zeros (an impulse per row).
template <typename T>
std::vector<T> Impulses(int32_t rows, int32_t length, T first) {
  std::vector<T> v(static_cast<size_t>(rows * length), T{0});
  for (int32_t r = 0; r < rows; ++r) v[static_cast<size_t>(r * length)] = first;
  return v;
}

// `rows` x `bins` complex bins (value, 0): a flat spectrum.
template <typename T>
std::vector<T> FlatSpectra(int32_t rows, int32_t bins, T value) {
  std::vector<T> v(static_cast<size_t>(rows * bins * 2), T{0});
  for (size_t i = 0; i < v.size(); i += 2) v[i] = value;
  return v;
}

TflType TflTypeOf(uint8_t t) {
  return t == kTInt16 ? TflType::kInt16 : t == kTInt32 ? TflType::kInt32 : TflType::kFloat32;
}

struct FftVector {
  std::string name;
  OpType type;
  uint8_t t;
  std::vector<int32_t> in_shape, out_shape;
  Bytes options, input, golden;
  const char* no_oracle = kNoSignalOps;
};

template <typename T>
FftVector Vector(std::string name, OpType type, uint8_t t, std::vector<int32_t> in_shape,
                 std::vector<int32_t> out_shape, Bytes options, const std::vector<T>& input,
                 const std::vector<T>& golden) {
  return {std::move(name),
          type,
          t,
          std::move(in_shape),
          std::move(out_shape),
          std::move(options),
          RawBytes(input),
          RawBytes(golden)};
}

// fft_test.cc's 64-point impulses and flat spectra (each row of RfftTestSize64Int32OuterDims4
// an impulse, as its input lists them).
template <typename T>
void Add64(std::vector<FftVector>& v, const char* suffix, uint8_t t, T scaled) {
  const std::string s(suffix);
  const T impulse(16384);
  v.push_back(Vector<T>("TFLite Micro RfftTestSize64" + s, OpType::kSignalRfft, t, {1, 64}, {1, 66},
                        Fft64Options(t), Impulses<T>(1, 64, impulse),
                        FlatSpectra<T>(1, 33, scaled)));
  v.push_back(Vector<T>("TFLite Micro IrfftTestLength64" + s, OpType::kSignalIrfft, t, {1, 66},
                        {1, 64}, Fft64Options(t), FlatSpectra<T>(1, 33, T(256)),
                        Impulses<T>(1, 64, T(256))));
}

// Hand-worked int16 SignalRfft cases of the lengths whose half takes kissfft's radix 3 and 5
// butterflies, each step of kissfft v130's arithmetic done on paper (FIXDIV by k: x times
// 32767 / k, + 2^14, >> 15, so /2 multiplies by 16383, /3 by 10922, /5 by 6553; C_MUL and S_MUL
// round the same way; HALF_OF is >> 1; the twiddles floor(0.5 + 32767 cos, sin) computed in
// double), and checked against the DFT / fft_length.
std::vector<FftVector> HandWorkedVectors() {
  const auto options = [](int32_t n) {
    return IntMapFlexbuffer({{"T", kTInt16}, {"fft_length", n}});
  };
  std::vector<FftVector> v;
  // fft_length 6: one radix 3 stage on z = (600, 300), (-900, 1200), (1500, -600).
  //   /3: (200, 100), (-300, 400), (500, -200); times twiddle 0 (32767, 0) unchanged.
  //   sum (200, 200), difference (-800, 600); mid = z0 - sum >> 1 = (100, 0).
  //   the difference times sin(-2 pi / 3) = -28377: (693, -520).
  //   Z0 = z0 + sum = (400, 300); Z1 = (100 + 520, 0 + 693) = (620, 693);
  //   Z2 = (100 - 520, 0 - 693) = (-420, -693).
  // kiss_fftr's split (super twiddle 0 of -pi (1/3 + 1/2): (-28377, -16384)):
  //   Z0 / 2 = (200, 150): bins 0 and 3 are 200 + 150 = 350 and 200 - 150 = 50.
  //   Z1 / 2 = (310, 346), conj(Z2) / 2 = (-210, 346): sum (100, 692), difference (520, 0),
  //   times the super twiddle: (-450, -260); bin 1 = ((100 - 450) >> 1, (692 - 260) >> 1)
  //   = (-175, 216), bin 2 = ((100 + 450) >> 1, (-260 - 692) >> 1) = (275, -476).
  // (The DFT / 6: 350, (-175, 216.5), (275, -476.3), 50.)
  v.push_back(Vector<int16_t>(
      "hand-worked RfftLength6Int16 (radix 3)", OpType::kSignalRfft, kTInt16, {1, 6}, {1, 8},
      options(6), {600, 300, -900, 1200, 1500, -600}, {350, 0, -175, 216, 275, -476, 50, 0}));
  // fft_length 10, an impulse of 3000 at sample 2 (z1 = (3000, 0)), given as 3 samples that
  // are zero padded: one radix 5 stage, ya = (10126, -31163), yb = (-26509, -19260).
  //   /5: z1 = (600, 0), times twiddle 0: (600, 0) = s1 = s7 = s10; s8 = s9 = 0.
  //   Z0 = (600, 0); s5 = (S(600, 10126), 0) = (185, 0); s6 = (0, -S(600, -31163)) = (0, 571);
  //   Z1 = s5 - s6 = (185, -571), Z4 = (185, 571);
  //   s11 = (S(600, -26509), 0) = (-485, 0); s12 = (0, S(600, -19260)) = (0, -353);
  //   Z2 = (-485, -353), Z3 = (-485, 353).
  // The split: Z0 / 2 = (300, 0): bins 0 and 5 are 300. Bin k's and conj(Z(5 - k)) halves
  // are equal (Z1 / 2 = (92, -285), Z2 / 2 = (-242, -176)), so their difference and its
  // product with the super twiddle are 0: bin 1 = (184 >> 1, -570 >> 1) = (92, -285), bin 4 =
  // (92, 285), bin 2 = (-242, -176), bin 3 = (-242, 176).
  // (The DFT / 10: 300 e^(-2 pi i 2 k / 10): (92.7, -285.3), (-242.7, -176.3), ...)
  v.push_back(Vector<int16_t>("hand-worked RfftLength10Int16 (radix 5, zero padded)",
                              OpType::kSignalRfft, kTInt16, {1, 3}, {1, 12}, options(10),
                              {0, 0, 3000},
                              {300, 0, 92, -285, -242, -176, -242, 176, 92, 285, 300, 0}));
  // fft_length 12, an impulse of 3004 at sample 2 (z1 = (3004, 0)): n = 6 factors 2 then 3,
  // so the two radix 3 FFTs (of z0, z2, z4 and z1, z3, z5) come first and divide by 3 first
  // (3004 / 3 = 1001, / 2 = 500, where / 2 first would give 1502, then 501).
  //   radix 3 of z1, z3, z5: (1001, 0) three times; of the even ones: zeros.
  //   radix 2 with twiddles (32767, 0), (16384, -28377), (-16383, -28377): (1001, 0) / 2 =
  //   (500, 0), times them: (500, 0), (250, -433), (-250, -433); Z0..2 are these (plus 0),
  //   Z3..5 their negatives.
  // The split: Z0 / 2 = (250, 0), bins 0 and 6 are 250; again bin k's and conj(Z(6 - k))
  // halves are equal: bin 1 = (250 >> 1, -432 >> 1) = (125, -216), bin 5 = (125, 216), bin 2 =
  // (-125, -216), bin 4 = (-125, 216), bin 3 = (-500 >> 1, 0) = (-250, 0).
  // (The DFT / 12: 250.3 e^(-pi i k / 3): (125.2, -216.8), (-125.2, -216.8), -250.3, ...)
  v.push_back(Vector<int16_t>(
      "hand-worked RfftLength12Int16 (radix 2 after 3)", OpType::kSignalRfft, kTInt16, {1, 12},
      {1, 14}, options(12), {0, 0, 3004, 0, 0, 0, 0, 0, 0, 0, 0, 0},
      {250, 0, 125, -216, -125, -216, -250, 0, -125, 216, 125, 216, 250, 0}));
  return v;
}

std::vector<FftVector> Vectors() {
  std::vector<FftVector> v;
  Add64<float>(v, "Float", kT32Float, 16384.0f);  // float32 is not scaled
  Add64<int16_t>(v, "Int16", kTInt16, 256);       // fixed point: 16384 / 64
  Add64<int32_t>(v, "Int32", kTInt32, 256);
  v.push_back(Vector<int32_t>("TFLite Micro RfftTestSize64Int32OuterDims4", OpType::kSignalRfft,
                              kTInt32, {2, 2, 64}, {2, 2, 66}, Fft64Options(kTInt32),
                              Impulses<int32_t>(4, 64, 16384), FlatSpectra<int32_t>(4, 33, 256)));
  v.push_back(Vector<int32_t>("TFLite Micro IrfftTestLength64Int32OuterDims4", OpType::kSignalIrfft,
                              kTInt32, {2, 2, 66}, {2, 2, 64}, Fft64Options(kTInt32),
                              FlatSpectra<int32_t>(4, 33, 256), Impulses<int32_t>(4, 64, 256)));
  v.push_back(Vector<float>("TFLite Micro RfftTestSize512Float", OpType::kSignalRfft, kT32Float,
                            {1, 512}, {1, 514}, Fft512Options(kT32Float), kRfftFloatLength512Input,
                            kRfftFloatLength512Golden));
  v.push_back(Vector<int16_t>("TFLite Micro RfftTestSize512Int16", OpType::kSignalRfft, kTInt16,
                              {1, 512}, {1, 514}, Fft512Options(kTInt16), kRfftInt16Length512Input,
                              kRfftInt16Length512Golden));
  v.push_back(Vector<int32_t>("TFLite Micro RfftTestSize512Int32", OpType::kSignalRfft, kTInt32,
                              {1, 512}, {1, 514}, Fft512Options(kTInt32), kRfftInt32Length512Input,
                              kRfftInt32Length512Golden));
  v.push_back(Vector<float>("TFLite Micro IrfftTestLength512Float", OpType::kSignalIrfft, kT32Float,
                            {1, 514}, {1, 512}, Fft512Options(kT32Float), kIrfftFloatLength512Input,
                            kIrfftFloatLength512Golden));
  v.push_back(Vector<int16_t>("TFLite Micro IrfftTestLength512Int16", OpType::kSignalIrfft, kTInt16,
                              {1, 514}, {1, 512}, Fft512Options(kTInt16), kRfftInt16Length512Golden,
                              kIrfftInt16Length512Golden));
  v.push_back(Vector<int32_t>("TFLite Micro IrfftTestLength512Int32", OpType::kSignalIrfft, kTInt32,
                              {1, 514}, {1, 512}, Fft512Options(kTInt32), kIrfftInt32Length512Input,
                              kIrfftInt32Length512Golden));
  for (FftVector& hand : HandWorkedVectors()) {
    hand.no_oracle = "the TFLite interpreter has no signal library ops; worked by hand";
    v.push_back(std::move(hand));
  }
  return v;
}

// Every case's expected outputs, by case name.
std::map<std::string, std::vector<Bytes>>& Goldens() {
  static std::map<std::string, std::vector<Bytes>> goldens;
  return goldens;
}

}  // namespace

const std::vector<OpCase>& SignalFftCases() {
  static const std::vector<OpCase> cases = [] {
    CaseList l;
    for (const FftVector& v : Vectors()) {
      l.Add(
          v.type, v.name,
          [v](CaseWriter& w) {
            const int in = w.Values(v.in_shape, TflTypeOf(v.t), v.input);
            w.CustomOp(v.type, {in}, {w.Output(v.out_shape, TflTypeOf(v.t))}, v.options);
          },
          v.no_oracle);
      Goldens()[l.cases.back().name] = {v.golden};
    }
    return l.cases;
  }();
  return cases;
}

std::vector<Bytes> SignalFftGolden(const std::string& name) {
  SignalFftCases();  // fills the goldens
  const auto it = Goldens().find(name);
  return it == Goldens().end() ? std::vector<Bytes>{} : it->second;
}

}  // namespace boardlab::testing
