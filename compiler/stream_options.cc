#include "compiler/stream_options.h"

#include "compiler/flexbuffer_options.h"

namespace boardlab::compiler {
namespace {

absl::Status ParseFramer(const flexbuffers::Map& map, StreamOptions& o) {
  if (absl::Status s = FlexbufferInt(map, "frame_size", true, &o.frame_size); !s.ok()) return s;
  if (absl::Status s = FlexbufferInt(map, "frame_step", true, &o.frame_step); !s.ok()) return s;
  flexbuffers::Reference prefill;
  if (absl::Status s = FlexbufferNumber(map, "prefill", true, &prefill); !s.ok()) return s;
  o.prefill = prefill.AsBool();
  return absl::OkStatus();
}

absl::Status ParseStacker(const flexbuffers::Map& map, StreamOptions& o) {
  for (auto [key, field] : {std::pair{"num_channels", &o.num_channels},
                            std::pair{"stacker_left_context", &o.left_context},
                            std::pair{"stacker_right_context", &o.right_context},
                            std::pair{"stacker_step", &o.stacker_step}}) {
    if (absl::Status s = FlexbufferInt(map, key, true, field); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ParseOverlapAdd(const flexbuffers::Map& map, StreamOptions& o) {
  if (absl::Status s = FlexbufferInt(map, "T", true, &o.tensor_type); !s.ok()) return s;
  return FlexbufferInt(map, "frame_step", true, &o.frame_step);
}

}  // namespace

absl::StatusOr<StreamOptions> ParseStreamOptions(OpType type, std::span<const uint8_t> options) {
  StreamOptions o;
  // TFLite Micro's CIRCULAR_BUFFER Init reads nothing from empty options.
  if (type == OpType::kCircularBuffer && options.empty()) return o;
  absl::StatusOr<flexbuffers::Map> map = VerifiedFlexbufferMap(options);
  if (!map.ok()) return map.status();
  absl::Status s;
  switch (type) {
    case OpType::kSignalFramer:
      s = ParseFramer(*map, o);
      break;
    case OpType::kSignalStacker:
      s = ParseStacker(*map, o);
      break;
    case OpType::kSignalOverlapAdd:
      s = ParseOverlapAdd(*map, o);
      break;
    case OpType::kCircularBuffer:
      s = FlexbufferInt(*map, "cycles_max", true, &o.cycles_max);
      break;
    default:
      return BadCustomOptions("not a streaming op");
  }
  if (!s.ok()) return s;
  return o;
}

bool IsSignalStreamOp(OpType type) {
  return type == OpType::kSignalFramer || type == OpType::kSignalStacker ||
         type == OpType::kSignalOverlapAdd;
}

bool IsStreamOp(OpType type) { return IsSignalStreamOp(type) || type == OpType::kCircularBuffer; }

}  // namespace boardlab::compiler
