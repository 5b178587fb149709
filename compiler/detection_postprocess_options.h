#pragma once

// The options of the TFLite_Detection_PostProcess custom operator (SSD detectors): a flexbuffer
// map in Operator.custom_options, written by TFLite's converter and read by TFLite Micro's
// detection_postprocess.cc Init. Keys and defaults are TFLite Micro's; a key it reads without a
// default must be present here.

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"

namespace boardlab::compiler {

struct DetectionPostprocessOptions {
  int32_t max_detections = 0;
  int32_t max_classes_per_detection = 0;
  int32_t detections_per_class = 100;  // default when the key is absent
  int32_t num_classes = 0;
  float nms_score_threshold = 0;
  float nms_iou_threshold = 0;
  float y_scale = 0, x_scale = 0, h_scale = 0, w_scale = 0;
  bool use_regular_nms = false;  // default when the key is absent
};

/// Parses the flexbuffer `options`. InvalidArgument, saying what, when they are not a verified
/// flexbuffer holding a map, when a required key is missing, or when a value is not a number
/// (use_regular_nms: a bool or a number); values are converted as flexbuffers' AsInt32 /
/// AsFloat / AsBool do.
absl::StatusOr<DetectionPostprocessOptions> ParseDetectionPostprocessOptions(
    std::span<const uint8_t> options);

}  // namespace boardlab::compiler
