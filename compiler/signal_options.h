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
};

/// Parses the options of signal op `type`. SIGNAL_WINDOW needs a verified flexbuffer map with an
/// integer "shift", SIGNAL_DELAY one with "delay_length"; SIGNAL_FFT_AUTO_SCALE reads none (TFLite
/// Micro registers it without Init), so its bytes are ignored. InvalidArgument, saying what,
/// otherwise.
absl::StatusOr<SignalOptions> ParseSignalOptions(OpType type, std::span<const uint8_t> options);

/// SIGNAL_WINDOW, SIGNAL_FFT_AUTO_SCALE, SIGNAL_DELAY: the signal library ops boardlab runs.
bool IsSignalOp(OpType type);

}  // namespace boardlab::compiler
