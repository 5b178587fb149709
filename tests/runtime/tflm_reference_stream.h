#pragma once

// The first inference of TFLite Micro's streaming signal ops (signal/micro/kernels framer.cc,
// stacker.cc, overlap_add.cc) for the StreamCases of tests/support/op_cases.h, worked out as
// streams rather than as the rings and shifted buffers the kernels keep: the expected outputs of
// cases the TFLite interpreter cannot check.

#include <cstdint>
#include <vector>

#include "flatbuffers/flexbuffers.h"
#include "tests/runtime/tflm_reference_signal.h"

namespace boardlab::tflm_reference {

inline int32_t StreamOption(const testing::CaseModel& m, const char* key) {
  return flexbuffers::GetRoot(m.builder.operator_spec(0).custom_options).AsMap()[key].AsInt32();
}

// SignalFramer: each row's stream is the primed zeros then its samples; the k-th frame it emits
// starts k steps in. Frame f of the row is emitted once the stream holds a whole frame after its
// f + 1 steps; frames before that are zeros and make the flag false.
inline std::vector<SignalBytes> FramerFirstInferenceReference(const testing::CaseModel& m) {
  const auto& op = m.builder.operator_spec(0);
  const std::vector<int16_t> in = ValuesOf<int16_t>(CaseTensorBytes(m, op.inputs[0]));
  const size_t row = static_cast<size_t>(m.builder.tensor(op.inputs[0]).shape.back());
  const size_t size = static_cast<size_t>(StreamOption(m, "frame_size"));
  const size_t step = static_cast<size_t>(StreamOption(m, "frame_step"));
  const size_t primed = StreamOption(m, "prefill") != 0 ? size - step : 0;
  std::vector<int16_t> out;
  bool valid = true;
  for (size_t r = 0; r < in.size(); r += row) {
    std::vector<int16_t> stream(primed, 0);
    stream.insert(stream.end(), in.begin() + r, in.begin() + r + row);
    size_t emitted = 0;
    for (size_t f = 0; f < row / step; ++f) {
      if (primed + (f + 1) * step < size) {
        out.insert(out.end(), size, 0);
        valid = false;
        continue;
      }
      const auto start = stream.begin() + emitted * step;
      out.insert(out.end(), start, start + size);
      ++emitted;
    }
  }
  return {BytesOf(out), SignalBytes{static_cast<uint8_t>(valid ? 1 : 0)}};
}

// SignalStacker: the first input stands for itself and the left context; it stacks when that
// covers the whole window (no right context), else the output is zeros and the flag false.
inline std::vector<SignalBytes> StackerFirstInferenceReference(const testing::CaseModel& m) {
  const std::vector<int16_t> in =
      ValuesOf<int16_t>(CaseTensorBytes(m, m.builder.operator_spec(0).inputs[0]));
  const int32_t left = StreamOption(m, "stacker_left_context");
  const int32_t right = StreamOption(m, "stacker_right_context");
  std::vector<int16_t> out;
  for (int32_t i = 0; i < left + 1 + right; ++i) out.insert(out.end(), in.begin(), in.end());
  if (right > 0) return {BytesOf(std::vector<int16_t>(out.size(), 0)), SignalBytes{0}};
  return {BytesOf(out), SignalBytes{1}};
}

// SignalOverlapAdd from a zero buffer: sample p of a row's output is the sum, in frame order, of
// every frame f's sample p - f * step (int16: each partial sum clamped, as the kernel clamps its
// buffer after each frame).
template <typename T>
std::vector<T> OverlapAddFirstInference(const std::vector<T>& in, size_t rows, size_t frames,
                                        size_t size, size_t step) {
  std::vector<T> out;
  for (size_t r = 0; r < rows; ++r) {
    std::vector<T> sums((frames - 1) * step + size, T{0});
    for (size_t f = 0; f < frames; ++f) {
      for (size_t i = 0; i < size; ++i) {
        T& s = sums[f * step + i];
        const T frame_value = in[(r * frames + f) * size + i];
        if constexpr (sizeof(T) == 2) {
          const int32_t v = int32_t{s} + frame_value;
          s = static_cast<T>(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
        } else {
          s = s + frame_value;
        }
      }
    }
    out.insert(out.end(), sums.begin(), sums.begin() + static_cast<ptrdiff_t>(frames * step));
  }
  return out;
}

inline SignalBytes OverlapAddFirstInferenceReference(const testing::CaseModel& m) {
  const auto& op = m.builder.operator_spec(0);
  const std::vector<int32_t>& shape = m.builder.tensor(op.inputs[0]).shape;
  const size_t size = static_cast<size_t>(shape.back());
  const size_t frames = static_cast<size_t>(shape[shape.size() - 2]);
  const size_t step = static_cast<size_t>(StreamOption(m, "frame_step"));
  const SignalBytes bytes = CaseTensorBytes(m, op.inputs[0]);
  if (StreamOption(m, "T") == 7) {
    const std::vector<int16_t> in = ValuesOf<int16_t>(bytes);
    return BytesOf(OverlapAddFirstInference(in, in.size() / (frames * size), frames, size, step));
  }
  const std::vector<float> in = ValuesOf<float>(bytes);
  return BytesOf(OverlapAddFirstInference(in, in.size() / (frames * size), frames, size, step));
}

// CIRCULAR_BUFFER: the first input in the last slot, zeros before it (the buffer starts empty).
inline SignalBytes CircularBufferFirstInferenceReference(const testing::CaseModel& m) {
  const SignalBytes in = CaseTensorBytes(m, m.builder.operator_spec(0).inputs[0]);
  const size_t slots = static_cast<size_t>(m.builder.tensor(m.output_tensors[0]).shape[1]);
  SignalBytes out((slots - 1) * in.size(), 0);
  out.insert(out.end(), in.begin(), in.end());
  return out;
}

}  // namespace boardlab::tflm_reference
