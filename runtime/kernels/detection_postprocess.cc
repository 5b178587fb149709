// TFLite_Detection_PostProcess (reference/detection_postprocess.h). Args: box_encodings 0,
// class_predictions 1, anchors 2 (float32, or int8 dequantized with the lists below),
// max_detections 3, max_classes_per_detection 4, detections_per_class 5, num_classes 6,
// use_regular_nms 7 (Bool), nms_score_threshold 8, nms_iou_threshold 9, y_scale 10, x_scale 11,
// h_scale 12, w_scale 13 (Double), zero_points 14 and scales 15 of the three inputs, outputs:
// detection_boxes 16, detection_classes 17, detection_scores 18, num_detections 19 (float32).

#include "runtime/kernels/reference/detection_postprocess.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/kernels.h"

namespace boardlab::runtime::kernels {
namespace {

constexpr int kArgs = 20;
constexpr int kFirstOutput = 16;

Error ReadOptions(const char* op, Args args, DetectionPostprocessParams& p) {
  int32_t* ints[] = {&p.max_detections, &p.max_classes_per_detection, &p.detections_per_class,
                     &p.num_classes};
  for (size_t i = 0; i < 4; ++i) RT_RETURN_IF_ERROR(IntArg(op, args, 3 + i, ints[i]));
  RT_RETURN_IF_ERROR(BoolArg(op, args, 7, &p.use_regular_nms));
  float* floats[] = {&p.score_threshold, &p.iou_threshold, &p.y_scale,
                     &p.x_scale,         &p.h_scale,       &p.w_scale};
  for (size_t i = 0; i < 6; ++i) {
    double v = 0;
    RT_RETURN_IF_ERROR(DoubleArg(op, args, 8 + i, &v));
    *floats[i] = static_cast<float>(v);
  }
  RT_CHECK_OR_RETURN_ERROR(
      p.max_detections > 0 && p.num_classes > 0 && p.max_classes_per_detection > 0 &&
          (p.use_regular_nms ? p.detections_per_class > 0 : p.max_classes_per_detection == 1),
      kInvalidProgram, "%s: bad detection counts", op);
  return Error::kOk;
}

// Input `i`: float32, or int8 with its zero point and scale from the lists.
Error ReadInput(const char* op, Args args, size_t i, const QuantLists& q, bool* is_int8,
                TensorView** t) {
  RT_RETURN_IF_ERROR(AnyTensorArg(op, args, i, t));
  *is_int8 = (*t)->type == ScalarType::kChar;
  RT_CHECK_OR_RETURN_ERROR(*is_int8 || (*t)->type == ScalarType::kFloat, kInvalidProgram,
                           "%s: input %d must be float32 or int8", op, static_cast<int>(i));
  RT_CHECK_OR_RETURN_ERROR(!*is_int8 || q.scale[i] > 0, kInvalidProgram,
                           "%s: int8 input %d has no scale", op, static_cast<int>(i));
  return Error::kOk;
}

Error ReadOutputs(const char* op, Args args, int32_t capacity) {
  const int32_t sizes[] = {capacity * 4, capacity, capacity, 1};
  for (int k = 0; k < 4; ++k) {
    TensorView* t;
    RT_RETURN_IF_ERROR(TensorArg(op, args, kFirstOutput + k, ScalarType::kFloat, &t));
    RT_CHECK_OR_RETURN_ERROR(t->NumElements() == sizes[k], kInvalidProgram,
                             "%s: output %d holds %lld values, expected %d", op, k,
                             static_cast<long long>(t->NumElements()), static_cast<int>(sizes[k]));
  }
  return Error::kOk;
}

DetectionInput InputView(const Value* v, const OpDataDetectionPostprocess& d, int i) {
  DetectionInput in;
  if (d.is_int8[i]) {
    in.s8 = v->tensor->As<const int8_t>();
    in.zero_point = d.zero_point[i];
    in.scale = d.scale[i];
  } else {
    in.f32 = v->tensor->As<const float>();
  }
  return in;
}

}  // namespace

Error DetectionPostprocessPrepare(KernelContext& ctx, Args args) {
  constexpr const char* op = "detection_postprocess";
  RT_RETURN_IF_ERROR(CheckArgCount(op, args, kArgs));
  auto* d = static_cast<OpDataDetectionPostprocess*>(ctx.op_data);
  RT_RETURN_IF_ERROR(ReadOptions(op, args, d->params));
  QuantLists q;
  RT_RETURN_IF_ERROR(IntListArg(op, args, 14, 3, q.zero_point, QuantLists::kMax, &q.count));
  RT_CHECK_OR_RETURN_ERROR(
      args[15]->tag == ValueTag::kDoubleList && args[15]->double_list.size == 3, kInvalidProgram,
      "%s: scales must be a DoubleList of 3", op);
  TensorView* in[3];
  for (int i = 0; i < 3; ++i) {
    q.scale[i] = args[15]->double_list.At(i);
    RT_RETURN_IF_ERROR(ReadInput(op, args, i, q, &d->is_int8[i], &in[i]));
    d->zero_point[i] = q.zero_point[i];
    d->scale[i] = static_cast<float>(q.scale[i]);  // TFLite keeps float32 scales
  }
  DetectionShape& s = d->shape;
  s.num_boxes = in[0]->rank == 3 ? in[0]->dims[1] : 0;
  s.box_code_size = in[0]->rank == 3 ? in[0]->dims[2] : 0;
  s.num_classes_with_background = in[1]->rank == 3 ? in[1]->dims[2] : 0;
  const int32_t background = s.num_classes_with_background - d->params.num_classes;
  RT_CHECK_OR_RETURN_ERROR(
      in[0]->rank == 3 && in[0]->dims[0] == 1 && s.box_code_size >= 4 && in[1]->rank == 3 &&
          in[1]->dims[0] == 1 && in[1]->dims[1] == s.num_boxes &&
          (background == 0 || background == 1) && in[2]->rank == 2 &&
          in[2]->dims[0] == s.num_boxes && in[2]->dims[1] == 4 && d->is_int8[0] == d->is_int8[2],
      kInvalidProgram, "%s: box_encodings, class_predictions and anchors do not match", op);
  d->capacity = d->params.max_detections * d->params.max_classes_per_detection;
  RT_RETURN_IF_ERROR(ReadOutputs(op, args, d->capacity));
  // The scratch comes from the temp pool at every Eval: a pool too small is a load error.
  d->scratch_bytes = detection_postprocess_get_buffer_size(d->params, s);
  RT_CHECK_OR_RETURN_ERROR(
      ctx.temp != nullptr && ctx.temp->size() >= d->scratch_bytes + 16, kMemoryAllocationFailed,
      "%s: needs %lu bytes of temp memory for %d boxes, the pool has %lu", op,
      static_cast<unsigned long>(d->scratch_bytes), static_cast<int>(s.num_boxes),
      static_cast<unsigned long>(ctx.temp == nullptr ? 0 : ctx.temp->size()));
  return Error::kOk;
}

Error DetectionPostprocessEval(KernelContext& ctx, Args args) {
  const auto* d = static_cast<const OpDataDetectionPostprocess*>(ctx.op_data);
  void* scratch = ctx.temp->Allocate(d->scratch_bytes, 16);
  const DetectionOutputs outputs{args[kFirstOutput]->tensor->As<float>(),
                                 args[kFirstOutput + 1]->tensor->As<float>(),
                                 args[kFirstOutput + 2]->tensor->As<float>(),
                                 args[kFirstOutput + 3]->tensor->As<float>(), d->capacity};
  return detection_postprocess(d->params, d->shape, InputView(args[0], *d, 0),
                               InputView(args[1], *d, 1), InputView(args[2], *d, 2), outputs,
                               scratch, scratch != nullptr ? d->scratch_bytes : 0);
}

}  // namespace boardlab::runtime::kernels
