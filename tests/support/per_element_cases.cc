// PerElementCases (op_cases.h): one case per element-wise, comparison, logical and row op of
// issue 13 (TFLite Micro's signal ops SIGNAL_WINDOW, SIGNAL_FFT_AUTO_SCALE, SIGNAL_DELAY, the
// filter bank stage and the real FFTs among them), plus int8 ADD as the reference, at a chosen
// element count, for the per-element figures of tests/bench/firmware_bench.cc. Each case is the
// op's main type (int8 where the runtime has an int8 kernel, else float32, int16 or bool) over
// same-shape operands, so the cost grows with the element count alone; the value ranges keep every
// op in its domain (no division by zero, no log of a negative).

#include "tests/support/case_writer.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using cases::CaseList;
using cases::CaseWriter;
using cases::kQ;
using cases::kQHigh;
using cases::kQLow;
using compiler::OpType;

// Row ops normalize over the last axis; a fixed row length makes their cost linear in the rows.
constexpr int32_t kRowLength = 64;

using Shape = std::vector<int32_t>;

void AddInt8UnaryCases(CaseList& l, const Shape& s) {
  struct Unary {
    OpType type;
    QuantParams in_q, out_q;
    int lo;  // lowest input value (RSQRT needs inputs at or above its zero point)
    BuilderOptions options;
  };
  const Unary kUnaries[] = {
      {OpType::kAbs, kQ, PerTensor(0.05f, -128), -128, std::monostate{}},
      {OpType::kRsqrt, PerTensor(0.05f, 0), PerTensor(0.04f, -128), 0, std::monostate{}},
      {OpType::kElu, kQ, PerTensor(0.04f, 20), -128, std::monostate{}},
      {OpType::kLogSoftmax, kQ, PerTensor(16.0f / 256, 127), -128, std::monostate{}},
      {OpType::kL2Normalization, kQ, PerTensor(1.0f / 128, 0), -128, ElementwiseOpts{}},
  };
  for (const Unary& u : kUnaries) {
    l.Add(u.type, "int8", [u, s](CaseWriter& w) {
      const int in = w.Int8(s, u.in_q, u.lo, 127);
      w.Op(u.type, {in}, {w.Int8Output(s, u.out_q)}, u.options);
    });
  }
}

// The ops the runtime (like TFLite Micro) has in float32 only, over inputs in their domain.
void AddFloatUnaryCases(CaseList& l, const Shape& s) {
  struct Unary {
    OpType type;
    float lo, hi;
  };
  const Unary kUnaries[] = {
      {OpType::kNeg, -10.0f, 10.0f},   {OpType::kSquare, -100.0f, 100.0f},
      {OpType::kSqrt, 0.0f, 50.0f},    {OpType::kExp, -10.0f, 10.0f},
      {OpType::kLog, 0.125f, 100.0f},  {OpType::kFloor, -10.0f, 10.0f},
      {OpType::kRound, -4.0f, 4.0f},   {OpType::kCeil, -10.0f, 10.0f},
      {OpType::kSin, -100.0f, 100.0f}, {OpType::kCos, -100.0f, 100.0f},
  };
  for (const Unary& u : kUnaries) {
    l.Add(u.type, "float32", [u, s](CaseWriter& w) {
      const int in = w.Float(s, u.lo, u.hi);
      w.Op(u.type, {in}, {w.Output(s, TflType::kFloat32)});
    });
  }
  // Divisors stay away from 0.
  for (OpType type : {OpType::kFloorDiv, OpType::kFloorMod}) {
    l.Add(type, "float32", [type, s](CaseWriter& w) {
      const int a = w.Float(s, -20.0f, 20.0f), b = w.Float(s, 0.25f, 4.0f);
      w.Op(type, {a, b}, {w.Output(s, TflType::kFloat32)});
    });
  }
}

void AddInt8BinaryCases(CaseList& l, const Shape& s) {
  l.Add(OpType::kAdd, "int8", [s](CaseWriter& w) {
    const int a = w.Int8(s, kQ), b = w.Int8(s, PerTensor(0.03f, 10));
    w.Op(OpType::kAdd, {a, b}, {w.Int8Output(s, PerTensor(0.08f, -5))}, ElementwiseOpts{});
  });
  // Divisors stay off their zero point (-128).
  l.Add(OpType::kDiv, "int8", [s](CaseWriter& w) {
    const int a = w.Int8(s, kQ), b = w.Int8(s, PerTensor(0.04f, -128), -127, 127);
    w.Op(OpType::kDiv, {a, b}, {w.Int8Output(s, PerTensor(0.02f, 5))}, ElementwiseOpts{});
  });
  l.Add(OpType::kSquaredDifference, "int8", [s](CaseWriter& w) {
    const int a = w.Int8(s, kQ), b = w.Int8(s, PerTensor(0.03f, 10));
    w.Op(OpType::kSquaredDifference, {a, b}, {w.Int8Output(s, PerTensor(0.2f, -128))});
  });
  l.Add(OpType::kPrelu, "int8 channel alpha", [s](CaseWriter& w) {
    const int in = w.Int8(s, kQ), alpha = w.Int8({s.back()}, PerTensor(0.01f, 0));
    w.Op(OpType::kPrelu, {in, alpha}, {w.Int8Output(s, PerTensor(0.04f, -10))});
  });
  l.Add(OpType::kSelectV2, "int8", [s](CaseWriter& w) {
    const int c = w.Bool(s), x = w.Int8(s, kQ), y = w.Int8(s, kQ);
    w.Op(OpType::kSelectV2, {c, x, y}, {w.Int8Output(s, kQ)});
  });
}

void AddComparisonAndLogicalCases(CaseList& l, const Shape& s) {
  const OpType kComparisons[] = {OpType::kEqual,        OpType::kNotEqual, OpType::kGreater,
                                 OpType::kGreaterEqual, OpType::kLess,     OpType::kLessEqual};
  for (OpType type : kComparisons) {
    l.Add(type, "int8 rescaled", [type, s](CaseWriter& w) {
      const int a = w.Int8(s, kQLow), b = w.Int8(s, kQHigh);
      w.Op(type, {a, b}, {w.Output(s, TflType::kBool)});
    });
  }
  for (OpType type : {OpType::kLogicalAnd, OpType::kLogicalOr}) {
    l.Add(type, "bool", [type, s](CaseWriter& w) {
      const int a = w.Bool(s), b = w.Bool(s);
      w.Op(type, {a, b}, {w.Output(s, TflType::kBool)});
    });
  }
  l.Add(OpType::kLogicalNot, "bool", [s](CaseWriter& w) {
    w.Op(OpType::kLogicalNot, {w.Bool(s)}, {w.Output(s, TflType::kBool)});
  });
}

void AddCastCases(CaseList& l, const Shape& s) {
  l.Add(OpType::kCast, "int8 to int32", [s](CaseWriter& w) {
    w.Op(OpType::kCast, {w.Int8(s, kQ)}, {w.Output(s, TflType::kInt32)});
  });
  l.Add(OpType::kCast, "float32 to int8", [s](CaseWriter& w) {
    w.Op(OpType::kCast, {w.Float(s, -100.0f, 100.0f)}, {w.Output(s, TflType::kInt8)});
  });
}

// TFLite Micro's signal ops on int16 without quantization: a window of one row's length over
// every row, the auto-scale over the flattened elements (its input has rank 1), and a delay line
// of 16 samples per row (its history grows with the rows: 16384 elements keep 4096 samples).
void AddSignalCases(CaseList& l, const Shape& s) {
  l.Add(OpType::kSignalWindow, "int16", [s](CaseWriter& w) {
    const int in = w.Int16(s, {}), weights = w.ConstInt16({s.back()}, {}, 0, 32767);
    w.CustomOp(OpType::kSignalWindow, {in, weights}, {w.Output(s, TflType::kInt16)},
               IntMapFlexbuffer({{"shift", 15}}));
  });
  l.Add(OpType::kSignalFftAutoScale, "int16", [s](CaseWriter& w) {
    const Shape flat = {s[0] * s[1]};
    const int in = w.Int16(flat, {}, -1000, 1000);
    w.CustomOp(OpType::kSignalFftAutoScale, {in},
               {w.Output(flat, TflType::kInt16), w.Output({}, TflType::kInt32)}, {});
  });
  l.Add(OpType::kSignalDelay, "int16", [s](CaseWriter& w) {
    w.CustomOp(OpType::kSignalDelay, {w.Int16(s, {})}, {w.Output(s, TflType::kInt16)},
               IntMapFlexbuffer({{"delay_length", 16}}));
  });
}

// Random values of T over its whole range (or below `max`).
template <typename T>
std::vector<T> RandomUnsigned(CaseWriter& w, int32_t count, T max = ~T{0}) {
  std::uniform_int_distribution<T> d(0, max);
  std::vector<T> v(static_cast<size_t>(count));
  for (T& x : v) x = d(w.rng());
  return v;
}

// The signal library's filter bank stage, each over `n` = all elements: SIGNAL_ENERGY over n
// complex bins, SIGNAL_FILTER_BANK over n bins in channels of one row's length each,
// SIGNAL_FILTER_BANK_SQUARE_ROOT, SIGNAL_FILTER_BANK_LOG, SIGNAL_PCAN and
// SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION (TFLite Micro's test coefficients, 2 extra bits) over n
// channels.
void AddSignalFilterBankCases(CaseList& l, const Shape& s) {
  const int32_t n = s[0] * s[1];
  l.Add(OpType::kSignalEnergy, "int16", [n](CaseWriter& w) {
    w.CustomOp(OpType::kSignalEnergy, {w.Int16({2 * n}, {})}, {w.Output({n}, TflType::kUint32)},
               IntMapFlexbuffer({{"start_index", 0}, {"end_index", n}}));
  });
  l.Add(OpType::kSignalFilterBank, "uint32", [n](CaseWriter& w) {
    // Channel c (of n / row + 1 table entries, the first scratch) covers row c's bins.
    const int32_t channels = n / kRowLength - 1;
    std::vector<int16_t> starts, widths(static_cast<size_t>(channels + 1), kRowLength);
    for (int32_t c = 0; c <= channels; ++c) starts.push_back(static_cast<int16_t>(c * kRowLength));
    const int in = w.Values({n}, TflType::kUint32, RandomUnsigned<uint32_t>(w, n, 1u << 24));
    const int weights = w.ConstInt16({n}, {}, 0, 4095);
    const int unweights = w.ConstInt16({n}, {}, 0, 4095);
    const int table = static_cast<int32_t>(starts.size());
    w.CustomOp(OpType::kSignalFilterBank,
               {in, weights, unweights, w.Const16({table}, starts, {}),
                w.Const16({table}, starts, {}), w.Const16({table}, widths, {})},
               {w.Output({channels}, TflType::kUint64)},
               IntMapFlexbuffer({{"num_channels", channels}}));
  });
  l.Add(OpType::kSignalFilterBankSquareRoot, "uint64", [n](CaseWriter& w) {
    const int in = w.Values({n}, TflType::kUint64, RandomUnsigned<uint64_t>(w, n, 1ull << 40));
    w.CustomOp(OpType::kSignalFilterBankSquareRoot, {in, w.Int32({}, {7})},
               {w.Output({n}, TflType::kUint32)}, {});
  });
  l.Add(OpType::kSignalFilterBankLog, "uint32", [n](CaseWriter& w) {
    const int in = w.Values({n}, TflType::kUint32, RandomUnsigned<uint32_t>(w, n, 1u << 20));
    w.CustomOp(OpType::kSignalFilterBankLog, {in}, {w.Output({n}, TflType::kInt16)},
               IntMapFlexbuffer({{"input_correction_bits", 3}, {"output_scale", 1600}}));
  });
  l.Add(OpType::kSignalPcan, "uint32", [n](CaseWriter& w) {
    const int in = w.Values({n}, TflType::kUint32, RandomUnsigned<uint32_t>(w, n, 1u << 12));
    const int noise = w.Values({n}, TflType::kUint32, RandomUnsigned<uint32_t>(w, n, 1u << 20));
    const int lut = w.ConstInt16({125}, {}, -32767, 32767);
    w.CustomOp(OpType::kSignalPcan, {in, noise, lut}, {w.Output({n}, TflType::kUint32)},
               IntMapFlexbuffer({{"snr_shift", 6}}));
  });
  l.Add(OpType::kSignalSpectralSubtraction, "uint32", [n](CaseWriter& w) {
    const int in = w.Values({n}, TflType::kUint32, RandomUnsigned<uint32_t>(w, n, 1u << 20));
    w.CustomOp(OpType::kSignalSpectralSubtraction, {in},
               {w.Output({n}, TflType::kUint32), w.Output({n}, TflType::kUint32)},
               IntMapFlexbuffer({{"alternate_one_minus_smoothing", 15729},
                                 {"alternate_smoothing", 655},
                                 {"clamping", 1},
                                 {"min_signal_remaining", 819},
                                 {"num_channels", n},
                                 {"one_minus_smoothing", 15729},
                                 {"smoothing", 655},
                                 {"smoothing_bits", 2},
                                 {"spectral_subtraction_bits", 14}}));
  });
}

// TFLite Micro's streaming ops (state kept across inferences, at most 64 KiB per op: 16384
// elements keep 32 KiB of frames, overlap sums or buffered slots, and the stacker's two copies
// of the input 64 KiB): frames of a row's length every half row, with prefill; the whole tensor
// stacked with one earlier inference; frames of a row's length added every half row; a circular
// buffer of two slots that runs every inference (cycles_max 1).
void AddStreamCases(CaseList& l, const Shape& s) {
  l.Add(OpType::kSignalFramer, "int16", [s](CaseWriter& w) {
    w.CustomOp(OpType::kSignalFramer, {w.Int16(s, {})},
               {w.Output({s[0], 2, s[1]}, TflType::kInt16), w.Output({}, TflType::kBool)},
               IntMapFlexbuffer({{"frame_size", s[1]}, {"frame_step", s[1] / 2}, {"prefill", 1}}));
  });
  const int32_t n = s[0] * s[1];
  l.Add(OpType::kSignalStacker, "int16", [n](CaseWriter& w) {
    w.CustomOp(OpType::kSignalStacker, {w.Int16({n}, {})},
               {w.Output({2 * n}, TflType::kInt16), w.Output({}, TflType::kBool)},
               IntMapFlexbuffer({{"num_channels", n},
                                 {"stacker_left_context", 1},
                                 {"stacker_right_context", 0},
                                 {"stacker_step", 1}}));
  });
  l.Add(OpType::kSignalOverlapAdd, "int16", [s](CaseWriter& w) {
    w.CustomOp(OpType::kSignalOverlapAdd, {w.Int16({s[0], 1, s[1]}, {}, -10000, 10000)},
               {w.Output({s[0], s[1] / 2}, TflType::kInt16)},
               IntMapFlexbuffer({{"T", 7}, {"frame_step", s[1] / 2}}));
  });
  l.Add(OpType::kCircularBuffer, "int8", [n](CaseWriter& w) {
    const QuantParams q = PerTensor(0.5f, 0);
    w.CustomOp(OpType::kCircularBuffer, {w.Int8({1, 1, 1, n}, q)},
               {w.Output({1, 2, 1, n}, TflType::kInt8, q)}, IntMapFlexbuffer({{"cycles_max", 1}}));
  });
}

// The signal library's real FFTs in int16, one 64-point transform per row (a row's length): per
// element is per sample.
void AddSignalFftCases(CaseList& l, const Shape& s) {
  const std::vector<uint8_t> options = IntMapFlexbuffer({{"T", 7}, {"fft_length", s[1]}});
  l.Add(OpType::kSignalRfft, "int16", [s, options](CaseWriter& w) {
    w.CustomOp(OpType::kSignalRfft, {w.Int16(s, {})}, {w.Output({s[0], s[1] + 2}, TflType::kInt16)},
               options);
  });
  l.Add(OpType::kSignalIrfft, "int16", [s, options](CaseWriter& w) {
    w.CustomOp(OpType::kSignalIrfft, {w.Int16({s[0], s[1] + 2}, {})},
               {w.Output(s, TflType::kInt16)}, options);
  });
}

}  // namespace

std::vector<OpCase> PerElementCases(int32_t elements) {
  const Shape s = {elements / kRowLength, kRowLength};
  CaseList l;
  AddInt8BinaryCases(l, s);
  AddInt8UnaryCases(l, s);
  AddFloatUnaryCases(l, s);
  AddComparisonAndLogicalCases(l, s);
  AddCastCases(l, s);
  AddSignalCases(l, s);
  AddSignalFilterBankCases(l, s);
  AddSignalFftCases(l, s);
  AddStreamCases(l, s);
  return l.cases;
}

}  // namespace boardlab::testing
