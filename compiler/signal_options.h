#pragma once

// The options of TFLite Micro's signal library ops (signal/micro/kernels, the custom ops audio
// front ends such as micro_speech's preprocessor use): a flexbuffer map in
// Operator.custom_options that each kernel's Init reads. Only the keys a kernel reads are kept.

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "compiler/op_types.h"

namespace boardlab::compiler {

struct SignalOptions {
  int32_t shift = 0;         // SIGNAL_WINDOW: the right shift after each input x weight product
  int32_t delay_length = 0;  // SIGNAL_DELAY: samples each row is delayed by
  // The filter bank stage.
  int32_t start_index = 0;            // SIGNAL_ENERGY: the first bin written
  int32_t end_index = 0;              // SIGNAL_ENERGY: one past the last bin written
  int32_t num_channels = 0;           // SIGNAL_FILTER_BANK: channels accumulated
  int32_t input_correction_bits = 0;  // SIGNAL_FILTER_BANK_LOG: left shift before the log
  int32_t output_scale = 0;           // SIGNAL_FILTER_BANK_LOG: multiplier of the natural log
  int32_t snr_shift = 0;              // SIGNAL_PCAN: right shift of input x gain
  // SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION (num_channels above too): the noise estimate's
  // low-pass coefficients, even channels `smoothing`, odd ones `alternate_smoothing`, scaled by
  // 2^spectral_subtraction_bits, as is the least share of the signal kept; `smoothing_bits`
  // extra fraction bits of the estimate; `clamping` pulls the estimate down to the signal. TFLite
  // Micro reads the coefficients as int32 and keeps them as uint32.
  int32_t smoothing = 0;
  int32_t one_minus_smoothing = 0;
  int32_t alternate_smoothing = 0;
  int32_t alternate_one_minus_smoothing = 0;
  int32_t min_signal_remaining = 0;
  int32_t smoothing_bits = 0;
  int32_t spectral_subtraction_bits = 0;
  bool clamping = false;
  // The real FFTs. TFLite Micro's Init takes fft_length from the options map's second value in
  // key order, whatever its key ('T' sorts first, but any key between 'T' and "fft_length", or
  // before 'T', moves it); `fft_length_key` is what the "fft_length" key itself holds.
  int32_t fft_length = 0;  // SIGNAL_RFFT, SIGNAL_IRFFT: real samples per transform
  int32_t fft_length_key = 0;
  int32_t tensor_type =
      0;  // SIGNAL_RFFT, SIGNAL_IRFFT: the TFLite TensorType 'T' Init dispatches on
};

/// Parses the options of signal op `type`. The filter bank stage needs every key its TFLite Micro
/// Init reads: SIGNAL_ENERGY "start_index" and "end_index", SIGNAL_FILTER_BANK "num_channels",
/// SIGNAL_FILTER_BANK_LOG "input_correction_bits" and "output_scale", SIGNAL_PCAN "snr_shift",
/// SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION its nine keys (SignalOptions lists them);
/// SIGNAL_FILTER_BANK_SQUARE_ROOT reads none (no Init). SIGNAL_WINDOW needs a verified flexbuffer
/// map with an integer "shift", SIGNAL_DELAY one with "delay_length"; SIGNAL_FFT_AUTO_SCALE reads
/// none (TFLite Micro registers it without Init), so its bytes are ignored. InvalidArgument, saying
/// what, otherwise.
absl::StatusOr<SignalOptions> ParseSignalOptions(OpType type, std::span<const uint8_t> options);

/// SIGNAL_WINDOW, SIGNAL_FFT_AUTO_SCALE, SIGNAL_DELAY, the filter bank stage (with its spectral
/// subtraction) and the streaming ops: the signal library ops boardlab runs.
bool IsSignalOp(OpType type);

/// SIGNAL_RFFT and SIGNAL_IRFFT, whose Init reads 'T' by key and fft_length by position (both
/// keys required here; the second value in key order must be an integer stored in place).
bool IsSignalFftOp(OpType type);

}  // namespace boardlab::compiler
