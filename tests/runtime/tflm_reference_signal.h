#pragma once

// TFLite Micro's signal library arithmetic (signal/src/window.cc, fft_auto_scale.cc, max_abs.cc,
// msb_32.cc) written out for the SignalCases of tests/support/op_cases.h, independently of the
// runtime's code: the expected outputs of cases the TFLite interpreter cannot check.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "flatbuffers/flexbuffers.h"
#include "tests/runtime/tflm_reference_16x8.h"
#include "tests/support/op_cases.h"

namespace boardlab::tflm_reference {

using SignalBytes = std::vector<uint8_t>;

// The bytes of case tensor `t`: a model input's, or a constant's buffer.
inline SignalBytes CaseTensorBytes(const testing::CaseModel& m, int t) {
  for (size_t i = 0; i < m.input_tensors.size(); ++i) {
    if (m.input_tensors[i] == t) return m.inputs[i];
  }
  return m.builder.buffer(m.builder.tensor(t).buffer);
}

// SignalWindow: element i of each row times weight i, as int64 (no product of two int16 leaves
// int32), shifted right rounding down, clamped to int16.
inline SignalBytes WindowReference(const testing::CaseModel& m) {
  const auto& op = m.builder.operator_spec(0);
  const std::vector<int16_t> in = ValuesOf<int16_t>(CaseTensorBytes(m, op.inputs[0]));
  const std::vector<int16_t> w = ValuesOf<int16_t>(CaseTensorBytes(m, op.inputs[1]));
  const int shift = flexbuffers::GetRoot(op.custom_options).AsMap()["shift"].AsInt32();
  std::vector<int16_t> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t v = int64_t{in[i]} * w[i % w.size()];
    v = v >= 0 ? v >> shift : -((-v + (int64_t{1} << shift) - 1) >> shift);  // floor division
    out[i] = static_cast<int16_t>(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
  }
  return BytesOf(out);
}

// SignalFftAutoScale: the running maximum of value and -value kept in int16 (so -32768 stays
// -32768), its highest set bit as a sign-extended uint32 counted by shifting (0 counts as 32, as
// GCC's __builtin_clz form TFLite Micro builds with gives), the left shift 15 - that, at least 0.
inline std::vector<SignalBytes> FftAutoScaleReference(const testing::CaseModel& m) {
  const std::vector<int16_t> in =
      ValuesOf<int16_t>(CaseTensorBytes(m, m.builder.operator_spec(0).inputs[0]));
  int16_t max = 0;
  for (int16_t v : in) {
    if (v > max) {
      max = v;
    } else if (-v > max) {
      max = static_cast<int16_t>(-v);
    }
  }
  uint32_t x = static_cast<uint32_t>(int32_t{max});
  int32_t msb = 0;
  for (; x != 0; x >>= 1) ++msb;
  if (max == 0) msb = 32;
  const int32_t bits = std::max(0, 15 - msb);
  std::vector<int16_t> out;
  for (int16_t v : in) out.push_back(static_cast<int16_t>(int32_t{v} * (int32_t{1} << bits)));
  return {BytesOf(out), BytesOf(std::vector<int32_t>{bits})};
}

// SignalDelay's first inference: each row's output is `delay` zeros (the primed history) followed
// by the row's first samples, cut to the row's length.
inline SignalBytes DelayFirstInferenceReference(const testing::CaseModel& m) {
  const auto& op = m.builder.operator_spec(0);
  const std::vector<int16_t> in = ValuesOf<int16_t>(CaseTensorBytes(m, op.inputs[0]));
  const size_t frame = static_cast<size_t>(m.builder.tensor(op.inputs[0]).shape.back());
  const size_t delay = static_cast<size_t>(
      flexbuffers::GetRoot(op.custom_options).AsMap()["delay_length"].AsInt32());
  std::vector<int16_t> out;
  for (size_t row = 0; row < in.size(); row += frame) {
    std::vector<int16_t> stream(delay, 0);
    stream.insert(stream.end(), in.begin() + row, in.begin() + row + frame);
    out.insert(out.end(), stream.begin(), stream.begin() + frame);
  }
  return BytesOf(out);
}

}  // namespace boardlab::tflm_reference
