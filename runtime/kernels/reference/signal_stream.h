#pragma once

// TFLite Micro's streaming ops (signal/micro/kernels framer.cc, stacker.cc, overlap_add.cc with
// signal/src/circular_buffer.cc and overlap_add.cc; tensorflow/lite/micro/kernels
// circular_buffer.cc), bit-exact, each with state its caller keeps from one call to the next.
// TFLite Micro keeps a ring of twice the capacity; a linear buffer holding the unread samples
// oldest first gives the same values:
// - framer_s16: per row, `step` new samples join the unread ones; once frame_size are unread,
//   the oldest frame_size are a frame and the oldest `step` are dropped. `valid` is false when
//   some frame was not yet full (TFLite Micro leaves such a frame's bytes as they were; here it
//   is zeros).
// - stacker_s16: `channels` new values join the unread ones (the very first ones repeated
//   `left` more times); once (left + right + 1) x channels are unread, they are the output and
//   the oldest step x channels are dropped; `valid` says whether that happened (zeros if not).
// - overlap_add_s16 / _f32: per row and frame, buffer += frame (int16 saturating), the first
//   `step` buffer values out, the buffer shifted left by `step` with zeros behind.
// - circular_buffer_s8: the `slots` x `depth` buffer shifted one slot towards its start, the
//   input appended as the last slot.

#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

/// The unread samples of a framer's rows: rows x capacity int16, `filled` of each row unread
/// (the same count for every row: they all take `step` samples per frame).
struct FramerState {
  int16_t* unread = nullptr;
  int32_t capacity = 0;
  int32_t filled = 0;
};

/// Frames `rows` rows of `frames` x `step` int16 samples into rows x frames x `frame_size`.
[[nodiscard]] Error framer_s16(const int16_t* input, int64_t rows, int32_t frames,
                               int32_t frame_size, int32_t step, FramerState& state,
                               int16_t* output, bool* valid);

/// A stacker's unread values (capacity int16) and whether the first input has been seen.
struct StackerState {
  int16_t* unread = nullptr;
  int32_t capacity = 0;
  int32_t filled = 0;
  bool started = false;
};

/// Stacks `channels` int16 values: output (left + right + 1) x channels when `*valid`.
[[nodiscard]] Error stacker_s16(const int16_t* input, int32_t channels, int32_t left, int32_t right,
                                int32_t step, StackerState& state, int16_t* output, bool* valid);

/// Overlap-adds `rows` rows of `frames` frames of `frame_size` into rows x frames x `step`;
/// `buffer` holds rows x frame_size running sums.
[[nodiscard]] Error overlap_add_s16(const int16_t* input, int64_t rows, int32_t frames,
                                    int32_t frame_size, int32_t step, int16_t* buffer,
                                    int16_t* output);
[[nodiscard]] Error overlap_add_f32(const float* input, int64_t rows, int32_t frames,
                                    int32_t frame_size, int32_t step, float* buffer, float* output);

/// Shifts `buffer` (slots x depth int8) one slot and appends `input` (depth int8).
[[nodiscard]] Error circular_buffer_s8(const int8_t* input, int32_t slots, int32_t depth,
                                       int8_t* buffer);

}  // namespace boardlab::runtime::kernels
