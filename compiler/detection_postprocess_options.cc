#include "compiler/detection_postprocess_options.h"

#include <string>
#include <vector>

#include "compiler/flexbuffer_options.h"

namespace boardlab::compiler {
namespace {

absl::Status Float(const flexbuffers::Map& map, const char* key, float* out) {
  flexbuffers::Reference value;
  if (absl::Status s = FlexbufferNumber(map, key, true, &value); !s.ok()) return s;
  *out = value.AsFloat();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DetectionPostprocessOptions> ParseDetectionPostprocessOptions(
    std::span<const uint8_t> options) {
  absl::StatusOr<flexbuffers::Map> root = VerifiedFlexbufferMap(options);
  if (!root.ok()) return root.status();
  const flexbuffers::Map& map = *root;
  DetectionPostprocessOptions o;
  for (const auto& [key, field] : std::vector<std::pair<const char*, int32_t*>>{
           {"max_detections", &o.max_detections},
           {"max_classes_per_detection", &o.max_classes_per_detection},
           {"num_classes", &o.num_classes}}) {
    if (absl::Status s = FlexbufferInt(map, key, true, field); !s.ok()) return s;
  }
  if (absl::Status s = FlexbufferInt(map, "detections_per_class", false, &o.detections_per_class);
      !s.ok()) {
    return s;
  }
  for (const auto& [key, field] :
       std::vector<std::pair<const char*, float*>>{{"nms_score_threshold", &o.nms_score_threshold},
                                                   {"nms_iou_threshold", &o.nms_iou_threshold},
                                                   {"y_scale", &o.y_scale},
                                                   {"x_scale", &o.x_scale},
                                                   {"h_scale", &o.h_scale},
                                                   {"w_scale", &o.w_scale}}) {
    if (absl::Status s = Float(map, key, field); !s.ok()) return s;
  }
  flexbuffers::Reference regular;
  if (absl::Status s = FlexbufferNumber(map, "use_regular_nms", false, &regular); !s.ok()) return s;
  if (!regular.IsNull()) o.use_regular_nms = regular.AsBool();
  return o;
}

}  // namespace boardlab::compiler
