#pragma once

// TFLite_Detection_PostProcess, the custom operator at the end of SSD detectors, bit-exact with
// TFLite Micro's detection_postprocess.cc:
//
//   1. decode every anchor's box (center-size encoding, anchors [y, x, h, w]), in double and
//      rounded to float as TFLite Micro does:
//        ycenter = y / y_scale * anchor.h + anchor.y        (xcenter alike)
//        half_h  = 0.5 * exp(h / h_scale) * anchor.h          (half_w alike)
//        box = [ycenter - half_h, xcenter - half_w, ycenter + half_h, xcenter + half_w]
//      a box with ymin >= ymax or xmin >= xmax fails the inference, as in TFLite Micro;
//   2. non-max suppression, TFLite Micro's "fast" one (each anchor competes with its best class,
//      first index on ties) or its "regular" one (per class, then the best max_detections of
//      all classes), with its stable score sort and its (score, index) tie order;
//   3. four float32 outputs: boxes [max_detections, 4] (ymin, xmin, ymax, xmax), classes and
//      scores [max_detections], num_detections [1]. Entries past num_detections are 0 (TFLite
//      Micro leaves them as the arena had them after a fast NMS).
//
// int8 inputs are dequantized element by element as (float(q) - zero_point) * scale in float32,
// the formula of the dequantizer TFLite's and older TFLite Micro's versions of this op use for
// quantized box encodings, anchors and class predictions (TFLite Micro itself runs float32 inputs
// only). Fast NMS takes max_classes_per_detection == 1 (the compiler refuses more: TFLite
// Micro's output indexing then overruns its outputs).

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

struct DetectionPostprocessParams {
  int32_t max_detections = 0;
  int32_t max_classes_per_detection = 1;
  int32_t detections_per_class = 100;
  int32_t num_classes = 0;
  bool use_regular_nms = false;
  float score_threshold = 0;
  float iou_threshold = 0;
  float y_scale = 1, x_scale = 1, h_scale = 1, w_scale = 1;
};

/// A float32 input, or an int8 one with the per-tensor quantization it is dequantized with.
struct DetectionInput {
  const float* f32 = nullptr;
  const int8_t* s8 = nullptr;
  int32_t zero_point = 0;
  float scale = 1;

  float At(int64_t i) const {
    return f32 != nullptr ? f32[i]
                          : (static_cast<float>(s8[i]) - static_cast<float>(zero_point)) * scale;
  }
};

struct DetectionShape {
  int32_t num_boxes = 0;
  int32_t box_code_size = 4;                // box_encodings [1, num_boxes, box_code_size >= 4]
  int32_t num_classes_with_background = 0;  // class_predictions [1, num_boxes, this]
};

struct DetectionOutputs {
  float* boxes = nullptr;    // [max_detections * max_classes_per_detection, 4]
  float* classes = nullptr;  // [max_detections * max_classes_per_detection]
  float* scores = nullptr;
  float* num_detections = nullptr;  // [1]
  int32_t capacity = 0;             // entries of classes / scores
};

/// Scratch bytes detection_postprocess needs (from the caller's temp memory).
size_t detection_postprocess_get_buffer_size(const DetectionPostprocessParams& params,
                                             const DetectionShape& shape);

/// Runs the op. `scratch` must hold detection_postprocess_get_buffer_size() bytes, 4-byte
/// aligned. Errors: kInvalidArgument for null pointers or too little scratch, and when a decoded
/// box has ymin >= ymax or xmin >= xmax (the inputs' fault; TFLite Micro fails the inference
/// alike).
[[nodiscard]] Error detection_postprocess(const DetectionPostprocessParams& params,
                                          const DetectionShape& shape,
                                          const DetectionInput& box_encodings,
                                          const DetectionInput& class_predictions,
                                          const DetectionInput& anchors,
                                          const DetectionOutputs& outputs, void* scratch,
                                          size_t scratch_bytes);

}  // namespace boardlab::runtime::kernels
