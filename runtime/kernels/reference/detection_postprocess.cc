#include "runtime/kernels/reference/detection_postprocess.h"

#include <cmath>

namespace boardlab::runtime::kernels {
namespace {

constexpr int kCoords = 4;

// ymin, xmin, ymax, xmax of each anchor's decoded box.
struct Box {
  float ymin, xmin, ymax, xmax;
};

// The scratch arrays, carved from the caller's buffer in one place so that the size function
// and the run agree.
struct Scratch {
  Box* boxes;             // [num_boxes]
  float* class_scores;    // [num_boxes]: one class's scores, or each anchor's best score
  int32_t* best_class;    // [num_boxes] (fast NMS)
  float* keep_scores;     // [num_boxes]
  int32_t* keep_indices;  // [num_boxes]
  int32_t* order;         // [num_boxes]: sorted positions into keep_*
  int32_t* merge;         // [num_boxes]: merge sort buffer
  uint8_t* active;        // [num_boxes]
  int32_t* selected;      // [num_boxes]
  // Regular NMS: the running best detections of the classes so far, then one class's.
  int32_t* kept_ids;   // [max_detections + num_boxes]: anchor * classes_with_bg + class
  float* kept_scores;  // [max_detections + num_boxes]
  int32_t* top;        // [max_detections]
  int32_t* top_ids;    // [max_detections]
  float* top_scores;   // [max_detections]
};

// Takes the next `count` Ts from `base` at `offset` (4-byte steps). Offsets, not a moving pointer:
// measuring lays out from a null base, and arithmetic on a null pointer is undefined.
template <typename T>
T* Carve(uint8_t* base, size_t& offset, int64_t count) {
  T* out = base == nullptr ? nullptr : reinterpret_cast<T*>(base + offset);
  offset += static_cast<size_t>((count * static_cast<int64_t>(sizeof(T)) + 3) / 4 * 4);
  return out;
}

// Lays the arrays out from `base` (null: only measures); returns the bytes used.
size_t Layout(const DetectionPostprocessParams& p, const DetectionShape& s, uint8_t* base,
              Scratch* out) {
  size_t used = 0;
  const int64_t n = s.num_boxes;
  const int64_t wide = static_cast<int64_t>(p.max_detections) + n;
  Scratch k;
  k.boxes = Carve<Box>(base, used, n);
  k.class_scores = Carve<float>(base, used, n);
  k.best_class = Carve<int32_t>(base, used, n);
  k.keep_scores = Carve<float>(base, used, n);
  k.keep_indices = Carve<int32_t>(base, used, n);
  k.order = Carve<int32_t>(base, used, n);
  k.merge = Carve<int32_t>(base, used, n);
  k.active = Carve<uint8_t>(base, used, n);
  k.selected = Carve<int32_t>(base, used, n);
  k.kept_ids = Carve<int32_t>(base, used, wide);
  k.kept_scores = Carve<float>(base, used, wide);
  k.top = Carve<int32_t>(base, used, p.max_detections);
  k.top_ids = Carve<int32_t>(base, used, p.max_detections);
  k.top_scores = Carve<float>(base, used, p.max_detections);
  if (out != nullptr) *out = k;
  return used;
}

// DecodeCenterSizeBoxes: double arithmetic, each result rounded once to float.
void DecodeBoxes(const DetectionPostprocessParams& p, const DetectionShape& s,
                 const DetectionInput& encodings, const DetectionInput& anchors, Box* boxes) {
  for (int32_t i = 0; i < s.num_boxes; ++i) {
    const int64_t e = static_cast<int64_t>(i) * s.box_code_size;
    const int64_t a = static_cast<int64_t>(i) * kCoords;
    const double y = encodings.At(e), x = encodings.At(e + 1);
    const double h = encodings.At(e + 2), w = encodings.At(e + 3);
    const double ay = anchors.At(a), ax = anchors.At(a + 1);
    const double ah = anchors.At(a + 2), aw = anchors.At(a + 3);
    const float ycenter = static_cast<float>(y / static_cast<double>(p.y_scale) * ah + ay);
    const float xcenter = static_cast<float>(x / static_cast<double>(p.x_scale) * aw + ax);
    const float half_h =
        static_cast<float>(0.5 * std::exp(h / static_cast<double>(p.h_scale)) * ah);
    const float half_w =
        static_cast<float>(0.5 * std::exp(w / static_cast<double>(p.w_scale)) * aw);
    boxes[i] = {ycenter - half_h, xcenter - half_w, ycenter + half_h, xcenter + half_w};
  }
}

// std::max / std::min as TFLite Micro calls them (the first argument wins ties and NaNs).
float Max(float a, float b) { return a < b ? b : a; }
float Min(float a, float b) { return b < a ? b : a; }

float IntersectionOverUnion(const Box& a, const Box& b) {
  const float area_a = (a.ymax - a.ymin) * (a.xmax - a.xmin);
  const float area_b = (b.ymax - b.ymin) * (b.xmax - b.xmin);
  if (area_a <= 0 || area_b <= 0) return 0.0f;
  const float ymin = Max(a.ymin, b.ymin);
  const float xmin = Max(a.xmin, b.xmin);
  const float ymax = Min(a.ymax, b.ymax);
  const float xmax = Min(a.xmax, b.xmax);
  const float intersection = Max(ymax - ymin, 0.0f) * Max(xmax - xmin, 0.0f);
  return intersection / (area_a + area_b - intersection);
}

// A stable sort of positions 0..n-1 by decreasing values[i] (TFLite Micro's DecreasingArgSort:
// a stable merge sort; any stable sort gives the same order).
void StableDecreasingArgSort(const float* values, int32_t n, int32_t* order, int32_t* merge) {
  for (int32_t i = 0; i < n; ++i) order[i] = i;
  for (int32_t width = 1; width < n; width *= 2) {
    for (int32_t lo = 0; lo < n; lo += 2 * width) {
      const int32_t mid = lo + width < n ? lo + width : n;
      const int32_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int32_t l = lo, r = mid, out = lo;
      while (l < mid || r < hi) {
        // Take from the right only when strictly greater: equal values keep their order.
        const bool right = r < hi && (l >= mid || values[order[r]] > values[order[l]]);
        merge[out++] = right ? order[r++] : order[l++];
      }
    }
    for (int32_t i = 0; i < n; ++i) order[i] = merge[i];
  }
}

// TFLite Micro's DecreasingPartialArgSort: the first k positions in the order of (value
// decreasing, position increasing), a total order, so the result does not depend on the sort.
// One pass keeps the best k so far in order; a later position never beats an equal value.
void TopK(const float* values, int32_t n, int32_t k, int32_t* out) {
  int32_t size = 0;
  for (int32_t i = 0; i < n && k > 0; ++i) {
    if (size == k && !(values[i] > values[out[size - 1]])) continue;
    int32_t at = size < k ? size++ : size - 1;
    while (at > 0 && values[i] > values[out[at - 1]]) {
      out[at] = out[at - 1];
      --at;
    }
    out[at] = i;
  }
}

// NonMaxSuppressionSingleClassHelper: the anchors whose score reaches the threshold, best first,
// dropping each one that overlaps an already selected anchor by more than the IoU threshold.
int32_t NonMaxSuppression(const DetectionPostprocessParams& p, int32_t num_boxes,
                          const float* scores, int32_t max_selected, const Scratch& k) {
  int32_t kept = 0;
  for (int32_t i = 0; i < num_boxes; ++i) {
    if (scores[i] >= p.score_threshold) {
      k.keep_scores[kept] = scores[i];
      k.keep_indices[kept] = i;
      ++kept;
    }
  }
  StableDecreasingArgSort(k.keep_scores, kept, k.order, k.merge);
  const int32_t output_size = kept < max_selected ? kept : max_selected;
  int32_t selected = 0, active = kept;
  for (int32_t i = 0; i < kept; ++i) k.active[i] = 1;
  for (int32_t i = 0; i < kept; ++i) {
    if (active == 0 || selected >= output_size) break;
    if (k.active[i] == 0) continue;
    const int32_t anchor = k.keep_indices[k.order[i]];
    k.selected[selected++] = anchor;
    k.active[i] = 0;
    --active;
    for (int32_t j = i + 1; j < kept; ++j) {
      if (k.active[j] == 0) continue;
      const float iou = IntersectionOverUnion(k.boxes[anchor], k.boxes[k.keep_indices[k.order[j]]]);
      if (iou > p.iou_threshold) {
        k.active[j] = 0;
        --active;
      }
    }
  }
  return selected;
}

void WriteDetection(const DetectionOutputs& o, int32_t at, const Box& box, float cls, float score) {
  o.boxes[at * kCoords + 0] = box.ymin;
  o.boxes[at * kCoords + 1] = box.xmin;
  o.boxes[at * kCoords + 2] = box.ymax;
  o.boxes[at * kCoords + 3] = box.xmax;
  o.classes[at] = cls;
  o.scores[at] = score;
}

// NonMaxSuppressionMultiClassFastHelper with one class per detection: every anchor competes
// with its best class (the first of equal best scores).
int32_t FastNms(const DetectionPostprocessParams& p, const DetectionShape& s,
                const DetectionInput& predictions, const Scratch& k, const DetectionOutputs& o) {
  const int32_t width = s.num_classes_with_background;
  const int32_t offset = width - p.num_classes;  // 1 with a background class
  for (int32_t row = 0; row < s.num_boxes; ++row) {
    const int64_t base = static_cast<int64_t>(row) * width + offset;
    int32_t best = 0;
    float best_score = predictions.At(base);
    for (int32_t c = 1; c < p.num_classes; ++c) {
      const float v = predictions.At(base + c);
      if (v > best_score) best = c, best_score = v;
    }
    k.best_class[row] = best;
    k.class_scores[row] = best_score;
  }
  const int32_t selected = NonMaxSuppression(p, s.num_boxes, k.class_scores, p.max_detections, k);
  for (int32_t i = 0; i < selected; ++i) {
    const int32_t anchor = k.selected[i];
    WriteDetection(o, i, k.boxes[anchor], static_cast<float>(k.best_class[anchor]),
                   k.class_scores[anchor]);
  }
  return selected;
}

// NonMaxSuppressionMultiClassRegularHelper: NMS per class (at most detections_per_class each),
// merged class by class into the best max_detections so far.
int32_t RegularNms(const DetectionPostprocessParams& p, const DetectionShape& s,
                   const DetectionInput& predictions, const Scratch& k, const DetectionOutputs& o) {
  const int32_t width = s.num_classes_with_background;
  const int32_t offset = width - p.num_classes;
  int32_t kept = 0;
  for (int32_t col = 0; col < p.num_classes; ++col) {
    for (int32_t row = 0; row < s.num_boxes; ++row) {
      k.class_scores[row] = predictions.At(static_cast<int64_t>(row) * width + col + offset);
    }
    const int32_t selected =
        NonMaxSuppression(p, s.num_boxes, k.class_scores, p.detections_per_class, k);
    int32_t count = kept;
    for (int32_t i = 0; i < selected; ++i) {
      k.kept_ids[count] = k.selected[i] * width + col + offset;
      k.kept_scores[count] = k.class_scores[k.selected[i]];
      ++count;
    }
    const int32_t top = count < p.max_detections ? count : p.max_detections;
    TopK(k.kept_scores, count, top, k.top);
    for (int32_t r = 0; r < top; ++r) {
      k.top_ids[r] = k.kept_ids[k.top[r]];
      k.top_scores[r] = k.kept_scores[k.top[r]];
    }
    for (int32_t r = 0; r < top; ++r) {
      k.kept_ids[r] = k.top_ids[r];
      k.kept_scores[r] = k.top_scores[r];
    }
    kept = top;
  }
  for (int32_t i = 0; i < kept; ++i) {
    const int32_t anchor = k.kept_ids[i] / width;
    const int32_t cls = k.kept_ids[i] - anchor * width - offset;
    WriteDetection(o, i, k.boxes[anchor], static_cast<float>(cls), k.kept_scores[i]);
  }
  return kept;
}

}  // namespace

size_t detection_postprocess_get_buffer_size(const DetectionPostprocessParams& params,
                                             const DetectionShape& shape) {
  return Layout(params, shape, nullptr, nullptr);
}

Error detection_postprocess(const DetectionPostprocessParams& p, const DetectionShape& s,
                            const DetectionInput& box_encodings,
                            const DetectionInput& class_predictions, const DetectionInput& anchors,
                            const DetectionOutputs& o, void* scratch, size_t scratch_bytes) {
  RT_CHECK_OR_RETURN_ERROR(o.boxes != nullptr && o.classes != nullptr && o.scores != nullptr &&
                               o.num_detections != nullptr && scratch != nullptr &&
                               scratch_bytes >= detection_postprocess_get_buffer_size(p, s) &&
                               o.capacity >= p.max_detections,
                           kInvalidArgument, "detection_postprocess: outputs or scratch");
  Scratch k;
  Layout(p, s, static_cast<uint8_t*>(scratch), &k);
  DecodeBoxes(p, s, box_encodings, anchors, k.boxes);
  for (int32_t i = 0; i < s.num_boxes; ++i) {
    const Box& b = k.boxes[i];
    RT_CHECK_OR_RETURN_ERROR(!(b.ymin >= b.ymax || b.xmin >= b.xmax), kInvalidArgument,
                             "detection_postprocess: anchor %d decodes to an empty box "
                             "(ymin %g, ymax %g, xmin %g, xmax %g)",
                             static_cast<int>(i), static_cast<double>(b.ymin),
                             static_cast<double>(b.ymax), static_cast<double>(b.xmin),
                             static_cast<double>(b.xmax));
  }
  for (int32_t i = 0; i < o.capacity; ++i) {
    WriteDetection(o, i, Box{0.0f, 0.0f, 0.0f, 0.0f}, 0.0f, 0.0f);
  }
  const int32_t detections = p.use_regular_nms ? RegularNms(p, s, class_predictions, k, o)
                                               : FastNms(p, s, class_predictions, k, o);
  o.num_detections[0] = static_cast<float>(detections);
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
