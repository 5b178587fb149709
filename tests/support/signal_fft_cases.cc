// The cases of the signal library's real FFTs (op_cases.h SignalFftCases): TFLite Micro's own
// test vectors from signal/micro/kernels/fft_test.cc and signal/testdata/fft_test_data.cc, with
// the option bytes of fft_flexbuffers_generated_data.cc (so the importer reads exactly what
// TFLite Micro's tests feed its Init). boardlab's outputs equal the expected ones exactly, also
// where TFLite Micro's test allows a tolerance (RfftTestSize512Int16 3, RfftTestSize512Float
// 1e-5). IrfftTestLength512Float is not among them (its vectors are not transcribed).

#include <map>

#include "tests/support/case_writer.h"
#include "tests/support/op_cases.h"
#include "tests/support/signal_fft_vectors.h"

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
  v.push_back(Vector<int16_t>("TFLite Micro IrfftTestLength512Int16", OpType::kSignalIrfft, kTInt16,
                              {1, 514}, {1, 512}, Fft512Options(kTInt16), kRfftInt16Length512Golden,
                              kIrfftInt16Length512Golden));
  v.push_back(Vector<int32_t>("TFLite Micro IrfftTestLength512Int32", OpType::kSignalIrfft, kTInt32,
                              {1, 514}, {1, 512}, Fft512Options(kTInt32), kIrfftInt32Length512Input,
                              kIrfftInt32Length512Golden));
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
          kNoSignalOps);
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
