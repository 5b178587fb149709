#include "runtime/kernels/reference/signal_stream.h"

#include <cstring>

namespace boardlab::runtime::kernels {
namespace {

int16_t SaturatingAdd(int16_t a, int16_t b) {
  const int32_t sum = int32_t{a} + b;
  if (sum < INT16_MIN) return INT16_MIN;
  if (sum > INT16_MAX) return INT16_MAX;
  return static_cast<int16_t>(sum);
}

// Drops the oldest `n` of `filled` values of `unread`, keeping the rest in order.
template <typename T>
void DropOldest(T* unread, int32_t filled, int32_t n) {
  std::memmove(unread, unread + n, static_cast<size_t>(filled - n) * sizeof(T));
}

template <typename T, typename Add>
void OverlapAddRow(const T* frames_in, int32_t frames, int32_t frame_size, int32_t step, T* buffer,
                   T* out, Add add) {
  for (int32_t f = 0; f < frames; ++f) {
    const T* frame = frames_in + static_cast<int64_t>(f) * frame_size;
    for (int32_t i = 0; i < frame_size; ++i) buffer[i] = add(buffer[i], frame[i]);
    std::memcpy(out + static_cast<int64_t>(f) * step, buffer,
                static_cast<size_t>(step) * sizeof(T));
    DropOldest(buffer, frame_size, step);
    std::memset(buffer + frame_size - step, 0, static_cast<size_t>(step) * sizeof(T));
  }
}

template <typename T, typename Add>
Error OverlapAdd(const T* input, int64_t rows, int32_t frames, int32_t frame_size, int32_t step,
                 T* buffer, T* output, Add add) {
  RT_CHECK_OR_RETURN_ERROR(
      input != nullptr && output != nullptr && buffer != nullptr && step > 0 && step <= frame_size,
      kInvalidArgument, "overlap_add: bad arguments");
  for (int64_t r = 0; r < rows; ++r) {
    OverlapAddRow(input + r * frames * frame_size, frames, frame_size, step,
                  buffer + r * frame_size, output + r * frames * step, add);
  }
  return Error::kOk;
}

}  // namespace

Error framer_s16(const int16_t* input, int64_t rows, int32_t frames, int32_t frame_size,
                 int32_t step, FramerState& state, int16_t* output, bool* valid) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && valid != nullptr &&
                               state.unread != nullptr && frame_size > 0 && step > 0 &&
                               state.filled + step <= state.capacity,
                           kInvalidArgument, "framer_s16: bad arguments");
  *valid = true;
  int32_t filled = state.filled;
  for (int64_t r = 0; r < rows; ++r) {
    int16_t* unread = state.unread + r * state.capacity;
    filled = state.filled;  // every row sees the same counts
    for (int32_t f = 0; f < frames; ++f) {
      const int16_t* in = input + (r * frames + f) * step;
      int16_t* out = output + (r * frames + f) * frame_size;
      std::memcpy(unread + filled, in, static_cast<size_t>(step) * sizeof(int16_t));
      filled += step;
      if (filled >= frame_size) {
        std::memcpy(out, unread, static_cast<size_t>(frame_size) * sizeof(int16_t));
        DropOldest(unread, filled, step);
        filled -= step;
      } else {
        std::memset(out, 0, static_cast<size_t>(frame_size) * sizeof(int16_t));
        *valid = false;
      }
    }
  }
  state.filled = filled;
  return Error::kOk;
}

Error stacker_s16(const int16_t* input, int32_t channels, int32_t left, int32_t right, int32_t step,
                  StackerState& state, int16_t* output, bool* valid) {
  const int32_t window = (left + right + 1) * channels;
  const int32_t copies = state.started ? 1 : left + 1;
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && valid != nullptr &&
                               state.unread != nullptr && channels > 0 && step > 0 &&
                               window <= state.capacity &&
                               state.filled + copies * channels <= state.capacity,
                           kInvalidArgument, "stacker_s16: bad arguments");
  // The first input stands in for the `left` inferences before it as well.
  for (int32_t c = 0; c < copies; ++c) {
    std::memcpy(state.unread + state.filled, input, static_cast<size_t>(channels) * 2);
    state.filled += channels;
  }
  state.started = true;
  *valid = state.filled >= window;
  if (!*valid) {
    std::memset(output, 0, static_cast<size_t>(window) * sizeof(int16_t));
    return Error::kOk;
  }
  std::memcpy(output, state.unread, static_cast<size_t>(window) * sizeof(int16_t));
  DropOldest(state.unread, state.filled, step * channels);
  state.filled -= step * channels;
  return Error::kOk;
}

Error overlap_add_s16(const int16_t* input, int64_t rows, int32_t frames, int32_t frame_size,
                      int32_t step, int16_t* buffer, int16_t* output) {
  return OverlapAdd(input, rows, frames, frame_size, step, buffer, output, SaturatingAdd);
}

Error overlap_add_f32(const float* input, int64_t rows, int32_t frames, int32_t frame_size,
                      int32_t step, float* buffer, float* output) {
  return OverlapAdd(input, rows, frames, frame_size, step, buffer, output,
                    [](float a, float b) { return a + b; });
}

Error circular_buffer_s8(const int8_t* input, int32_t slots, int32_t depth, int8_t* buffer) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && buffer != nullptr && slots > 0 && depth > 0,
                           kInvalidArgument, "circular_buffer_s8: bad arguments");
  DropOldest(buffer, slots * depth, depth);
  std::memcpy(buffer + static_cast<int64_t>(slots - 1) * depth, input, static_cast<size_t>(depth));
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
