// The DETECTION_POSTPROCESS cases of op_cases.h (the TFLite_Detection_PostProcess custom op of
// SSD detectors): fast and regular NMS, with and without a background class, box codes longer
// than 4 (keypoints), float32 inputs and int8 ones (dequantized; the TFLite interpreter checks
// them as their uint8 twins, see oracle_ops_test.cc), a score threshold nothing reaches. Anchors
// sit on a coarse grid with overlapping sizes so that the IoU test prunes some boxes; every class
// score of a case is distinct, because the TFLite interpreter's partial sort orders equal scores as
// its library's std::partial_sort happens to, where TFLite Micro orders them by index.

#include <algorithm>
#include <numeric>

#include "tests/support/case_writer.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using cases::CaseList;
using cases::CaseWriter;
using compiler::OpType;

struct DetectionGeometry {
  const char* name;
  int32_t num_boxes, num_classes;
  bool background;
  int32_t box_code_size;
  bool int8;  // box encodings, anchors and class predictions int8
  DetectionPostprocessOpts options;
};

// Anchor i as [ycenter, xcenter, h, w] on a 4 x 4 grid of centers, sizes 0.2 to 0.5.
std::vector<float> Anchors(int32_t n) {
  std::vector<float> a;
  for (int32_t i = 0; i < n; ++i) {
    a.push_back(0.15f + 0.25f * static_cast<float>(i % 4));
    a.push_back(0.15f + 0.25f * static_cast<float>((i / 4) % 4));
    a.push_back(0.2f + 0.1f * static_cast<float>((i * 3) % 4));
    a.push_back(0.2f + 0.1f * static_cast<float>((i * 5 + 1) % 4));
  }
  return a;
}

// `count` distinct values, shuffled: k * step + offset for k < count.
template <typename T>
std::vector<T> Distinct(CaseWriter& w, int32_t count, float step, float offset) {
  std::vector<int32_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), w.rng());
  std::vector<T> values;
  for (int32_t k : order) values.push_back(static_cast<T>(static_cast<float>(k) * step + offset));
  return values;
}

void AddDetection(CaseWriter& w, const DetectionGeometry& g) {
  const int32_t width = g.num_classes + (g.background ? 1 : 0);
  const int32_t scores_count = g.num_boxes * width;
  const std::vector<int32_t> box_shape = {1, g.num_boxes, g.box_code_size};
  const std::vector<int32_t> score_shape = {1, g.num_boxes, width};
  int boxes, scores, anchors;
  if (g.int8) {
    boxes = w.Int8(box_shape, PerTensor(0.04f, 3));
    // Distinct int8 scores in [-128, -128 + count): dequantized to [0, count / 128).
    scores = w.Int8Values(score_shape, PerTensor(1.0f / 128, -128),
                          Distinct<int8_t>(w, scores_count, 1.0f, -128.0f));
    std::vector<int8_t> q;
    const QuantParams anchor_q = PerTensor(1.0f / 256, -128);
    for (float v : Anchors(g.num_boxes)) q.push_back(static_cast<int8_t>(v * 256 - 128));
    anchors = w.ConstInt8Values({g.num_boxes, 4}, q, anchor_q);
  } else {
    boxes = w.Float(box_shape, -2.0f, 2.0f);
    scores = w.FloatValues(
        score_shape,
        Distinct<float>(w, scores_count, 1.0f / static_cast<float>(scores_count), 1.0f / 1024));
    anchors = w.ConstFloat({g.num_boxes, 4}, Anchors(g.num_boxes));
  }
  const int32_t n = g.options.max_detections * g.options.max_classes_per_detection;
  const int out_boxes = w.Output({1, n, 4}, TflType::kFloat32);
  const int out_classes = w.Output({1, n}, TflType::kFloat32);
  const int out_scores = w.Output({1, n}, TflType::kFloat32);
  const int out_count = w.Output({1}, TflType::kFloat32);
  w.CustomOp(OpType::kDetectionPostprocess, {boxes, scores, anchors},
             {out_boxes, out_classes, out_scores, out_count},
             DetectionPostprocessFlexbuffer(g.options));
}

DetectionPostprocessOpts Options(int32_t classes, int32_t max_detections, bool regular,
                                 int32_t per_class, float score, float iou) {
  DetectionPostprocessOpts o;
  o.num_classes = classes;
  o.max_detections = max_detections;
  o.use_regular_nms = regular;
  o.detections_per_class = per_class;
  o.nms_score_threshold = score;
  o.nms_iou_threshold = iou;
  return o;
}

}  // namespace

const std::vector<OpCase>& DetectionPostprocessCases() {
  static const std::vector<OpCase> cases = [] {
    const DetectionGeometry kGeometries[] = {
        {"float fast nms", 16, 3, true, 4, false, Options(3, 5, false, 1, 0.3f, 0.5f)},
        {"float fast nms iou 0.2", 16, 3, true, 4, false, Options(3, 8, false, 1, 0.1f, 0.2f)},
        {"float regular nms", 16, 3, true, 4, false, Options(3, 6, true, 2, 0.2f, 0.4f)},
        {"float regular nms no background keypoints", 12, 2, false, 6, false,
         Options(2, 4, true, 3, 0.1f, 0.5f)},
        {"float fast nms nothing above threshold", 8, 2, true, 4, false,
         Options(2, 3, false, 1, 2.0f, 0.5f)},
        {"int8 fast nms", 12, 2, true, 4, true, Options(2, 4, false, 1, 0.05f, 0.5f)},
        {"int8 regular nms", 12, 3, true, 4, true, Options(3, 5, true, 2, 0.1f, 0.3f)},
    };
    CaseList l;
    for (const DetectionGeometry& g : kGeometries) {
      l.Add(OpType::kDetectionPostprocess, g.name, [g](CaseWriter& w) { AddDetection(w, g); });
    }
    return l.cases;
  }();
  return cases;
}

}  // namespace boardlab::testing
