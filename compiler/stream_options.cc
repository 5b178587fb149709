#include "compiler/stream_options.h"

#include <vector>

#include "compiler/flexbuffer_options.h"

namespace boardlab::compiler {
namespace {

absl::Status ParseFramer(const flexbuffers::Map& map, StreamOptions& o) {
  int32_t prefill = 0;  // ElementAsBool: any bytes but zero
  absl::Status s = FlexbufferIntsByPlace(map, {"frame_size", "frame_step", "prefill"},
                                         {&o.frame_size, &o.frame_step, &prefill});
  o.prefill = prefill != 0;
  return s;
}

absl::Status ParseStacker(const flexbuffers::Map& map, StreamOptions& o) {
  return FlexbufferIntsByPlace(
      map, {"num_channels", "stacker_left_context", "stacker_right_context", "stacker_step"},
      {&o.num_channels, &o.left_context, &o.right_context, &o.stacker_step});
}

// Init reads 'T' by key (to pick the type) and frame_step by place.
absl::Status ParseOverlapAdd(const flexbuffers::Map& map, StreamOptions& o) {
  if (absl::Status s = FlexbufferInt(map, "T", true, &o.tensor_type); !s.ok()) return s;
  if (absl::Status s = FlexbufferInt(map, "frame_step", true, &o.frame_step); !s.ok()) return s;
  return FlexbufferIntByPlace(map, {"T", "frame_step"}, "frame_step", &o.frame_step);
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
