#include "compiler/detection_postprocess_options.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "flatbuffers/flexbuffers.h"

namespace boardlab::compiler {
namespace {

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("custom options: ", what));
}

// A numeric value of `key`, or an error naming the key. `required` false: absent is fine.
absl::Status Number(const flexbuffers::Map& map, const char* key, bool required,
                    flexbuffers::Reference* out) {
  const flexbuffers::Reference value = map[key];
  if (value.IsNull()) {
    return required ? Bad(absl::StrCat("key '", key, "' is missing")) : absl::OkStatus();
  }
  if (!value.IsNumeric() && !value.IsBool()) {
    return Bad(absl::StrCat("key '", key, "' is not a number (flexbuffer type ",
                            static_cast<int>(value.GetType()), ")"));
  }
  *out = value;
  return absl::OkStatus();
}

absl::Status Int(const flexbuffers::Map& map, const char* key, bool required, int32_t* out) {
  flexbuffers::Reference value;
  if (absl::Status s = Number(map, key, required, &value); !s.ok()) return s;
  if (!value.IsNull()) *out = value.AsInt32();
  return absl::OkStatus();
}

absl::Status Float(const flexbuffers::Map& map, const char* key, float* out) {
  flexbuffers::Reference value;
  if (absl::Status s = Number(map, key, true, &value); !s.ok()) return s;
  *out = value.AsFloat();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DetectionPostprocessOptions> ParseDetectionPostprocessOptions(
    std::span<const uint8_t> options) {
  if (options.empty()) return Bad("none (the op needs its flexbuffer map)");
  // The verifier first: flexbuffers' readers trust every offset they are given.
  std::vector<uint8_t> reuse;
  if (!flexbuffers::VerifyBuffer(options.data(), options.size(), &reuse)) {
    return Bad(absl::StrCat("the ", options.size(), " bytes are not a valid flexbuffer"));
  }
  const flexbuffers::Reference root = flexbuffers::GetRoot(options.data(), options.size());
  if (!root.IsMap()) return Bad("the flexbuffer root is not a map");
  const flexbuffers::Map map = root.AsMap();
  DetectionPostprocessOptions o;
  for (const auto& [key, field] : std::vector<std::pair<const char*, int32_t*>>{
           {"max_detections", &o.max_detections},
           {"max_classes_per_detection", &o.max_classes_per_detection},
           {"num_classes", &o.num_classes}}) {
    if (absl::Status s = Int(map, key, true, field); !s.ok()) return s;
  }
  if (absl::Status s = Int(map, "detections_per_class", false, &o.detections_per_class); !s.ok()) {
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
  if (absl::Status s = Number(map, "use_regular_nms", false, &regular); !s.ok()) return s;
  if (!regular.IsNull()) o.use_regular_nms = regular.AsBool();
  return o;
}

}  // namespace boardlab::compiler
