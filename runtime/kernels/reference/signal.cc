#include "runtime/kernels/reference/signal.h"

namespace boardlab::runtime::kernels {
namespace {

int16_t SaturateToInt16(int32_t v) {
  if (v < INT16_MIN) return INT16_MIN;
  if (v > INT16_MAX) return INT16_MAX;
  return static_cast<int16_t>(v);
}

// The largest magnitude kept in int16: negating -32768 wraps back to -32768 there, which the
// scale computation below then sees as 0xFFFF8000.
int16_t MaxAbsInt16(const int16_t* input, int32_t count) {
  int16_t max = 0;
  for (int32_t i = 0; i < count; ++i) {
    const int16_t v = input[i];
    if (v > max) {
      max = v;
    } else if (-v > max) {
      max = static_cast<int16_t>(-v);
    }
  }
  return max;
}

int32_t HighestBitIndex(uint32_t x) { return x == 0 ? 32 : 32 - __builtin_clz(x); }

}  // namespace

Error window_s16(const int16_t* input, const int16_t* weights, int64_t rows, int32_t length,
                 int32_t shift, int16_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && weights != nullptr && output != nullptr &&
                               rows >= 0 && length > 0 && shift >= 0 && shift <= 31,
                           kInvalidArgument, "window_s16: bad arguments");
  for (int64_t r = 0; r < rows; ++r) {
    const int16_t* in = input + r * length;
    int16_t* out = output + r * length;
    for (int32_t i = 0; i < length; ++i) {
      out[i] = SaturateToInt16((static_cast<int32_t>(in[i]) * weights[i]) >> shift);
    }
  }
  return Error::kOk;
}

Error fft_auto_scale_s16(const int16_t* input, int32_t count, int16_t* output,
                         int32_t* scale_bits) {
  RT_CHECK_OR_RETURN_ERROR(
      input != nullptr && output != nullptr && scale_bits != nullptr && count >= 0,
      kInvalidArgument, "fft_auto_scale_s16: bad arguments");
  const int16_t max = MaxAbsInt16(input, count);
  // The int16 converts to uint32 sign-extended, as TFLite Micro passes it.
  int32_t bits = 16 - HighestBitIndex(static_cast<uint32_t>(static_cast<int32_t>(max))) - 1;
  if (bits < 0) bits = 0;
  for (int32_t i = 0; i < count; ++i) {
    output[i] = static_cast<int16_t>(input[i] * (1 << bits));
  }
  *scale_bits = bits;
  return Error::kOk;
}

Error delay_s16(const int16_t* input, int64_t rows, int32_t frame, int32_t delay, int16_t* history,
                int16_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && rows >= 0 && frame > 0 &&
                               delay >= 0 && (delay == 0 || history != nullptr),
                           kInvalidArgument, "delay_s16: bad arguments");
  for (int64_t r = 0; r < rows; ++r) {
    const int16_t* in = input + r * frame;
    int16_t* out = output + r * frame;
    int16_t* kept = history + r * delay;
    // Sample k of the stream (kept samples, then this frame's).
    auto stream = [&](int32_t k) { return k < delay ? kept[k] : in[k - delay]; };
    for (int32_t i = 0; i < frame; ++i) out[i] = stream(i);
    // Each write reads a later sample (frame >= 1), so the history shifts in place.
    for (int32_t j = 0; j < delay; ++j) kept[j] = stream(frame + j);
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
