#pragma once

// The options of TFLite Micro's streaming custom ops, the ones that keep state from one inference
// to the next beyond SIGNAL_DELAY: the signal library's SignalFramer, SignalStacker and
// SignalOverlapAdd (signal/micro/kernels), and TFLite Micro's own CIRCULAR_BUFFER
// (tensorflow/lite/micro/kernels). Each reads a flexbuffer map from Operator.custom_options in
// its Init; only the keys a kernel reads are kept.

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "compiler/op_types.h"

namespace boardlab::compiler {

struct StreamOptions {
  // SIGNAL_FRAMER: frames of frame_size samples every frame_step samples, the first
  // frame_size - frame_step of them zeros when prefill is set.
  int32_t frame_size = 0;
  int32_t frame_step = 0;  // also SIGNAL_OVERLAP_ADD's output samples per frame
  bool prefill = false;
  // SIGNAL_STACKER: num_channels values per inference, stacked with left_context earlier and
  // right_context later inferences, every stacker_step inferences.
  int32_t num_channels = 0;
  int32_t left_context = 0;
  int32_t right_context = 0;
  int32_t stacker_step = 0;
  // SIGNAL_OVERLAP_ADD: the TFLite TensorType its Init dispatches on ('T').
  int32_t tensor_type = -1;
  // CIRCULAR_BUFFER: runs every cycles_max inferences; 0 when the model gives none (TFLite
  // Micro then picks 1 or 2 from the output shape, CircularBufferPeriod).
  int32_t cycles_max = 0;
};

/// Parses the options of streaming op `type` (IsStreamOp). The signal ops need a verified
/// flexbuffer map with their keys; CIRCULAR_BUFFER takes no bytes at all or a map with
/// "cycles_max". InvalidArgument, saying what, otherwise.
absl::StatusOr<StreamOptions> ParseStreamOptions(OpType type, std::span<const uint8_t> options);

/// SIGNAL_FRAMER, SIGNAL_STACKER, SIGNAL_OVERLAP_ADD and CIRCULAR_BUFFER.
bool IsStreamOp(OpType type);

/// The three signal library ones among them (IsSignalOp counts them too).
bool IsSignalStreamOp(OpType type);

}  // namespace boardlab::compiler
