#include "compiler/signal_options.h"

#include "compiler/flexbuffer_options.h"
#include "compiler/stream_options.h"

namespace boardlab::compiler {

absl::StatusOr<SignalOptions> ParseSignalOptions(OpType type, std::span<const uint8_t> options) {
  SignalOptions o;
  if (type == OpType::kSignalFftAutoScale) return o;
  absl::StatusOr<flexbuffers::Map> map = VerifiedFlexbufferMap(options);
  if (!map.ok()) return map.status();
  if (type == OpType::kSignalWindow) {
    if (absl::Status s = FlexbufferInt(*map, "shift", true, &o.shift); !s.ok()) return s;
  }
  if (type == OpType::kSignalDelay) {
    if (absl::Status s = FlexbufferInt(*map, "delay_length", true, &o.delay_length); !s.ok()) {
      return s;
    }
  }
  return o;
}

bool IsSignalOp(OpType type) {
  return type == OpType::kSignalWindow || type == OpType::kSignalFftAutoScale ||
         type == OpType::kSignalDelay || IsSignalStreamOp(type);
}

}  // namespace boardlab::compiler
