// Operand checks of the sequence and detection ops (issue 13): SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM
// and the TFLite_Detection_PostProcess custom op. The rules are TFLite Micro's (PrepareSvdf in
// svdf_common.cc and the integer Eval it dispatches to; the LSTM's Prepare and
// lstm_eval_common.cc; detection_postprocess.cc, whose Eval checks of static values move to
// compile time here): what TFLite Micro refuses is refused here when compiling, with the reason,
// and the variants boardlab does not run (float SVDF and LSTM, LSTM with peephole, projection,
// layer norm or CIFG, which TFLite Micro does not run either) are reported as unsupported.

#include <cmath>

#include "compiler/op_checker.h"
#include "compiler/quantization.h"

namespace boardlab::compiler {
namespace {

// One scale and zero point, as the integer kernels read them (they take scale[0] of a tensor).
absl::Status PerTensor(const OpChecker& c, const Tensor& t, const char* role) {
  if (t.quant.empty()) {
    return c.Invalid(
        absl::StrCat(role, " '", t.name, "' is ", DataTypeName(t.type), " without quantization"));
  }
  if (t.quant.per_channel()) {
    return c.Unsupported(absl::StrCat(role, " '", t.name, "' has ", t.quant.scale.size(),
                                      " scales; TFLite Micro's ", OpTypeName(c.op().type),
                                      " reads one scale per tensor"));
  }
  return absl::OkStatus();
}

// Constant symmetric weights: the integer kernels never subtract a weight zero point.
absl::Status SymmetricWeights(const OpChecker& c, const Tensor& w, const char* role,
                              DataType type) {
  RETURN_IF_ERROR(c.Constant(w, role, type));
  RETURN_IF_ERROR(PerTensor(c, w, role));
  if (w.quant.zp() != 0) {
    return c.Unsupported(absl::StrCat(role, " '", w.name, "' has zero point ", w.quant.zp(),
                                      "; TFLite Micro's integer ", OpTypeName(c.op().type),
                                      " takes symmetric weights (zero point 0)"));
  }
  return absl::OkStatus();
}

absl::Status Shape2(const OpChecker& c, const Tensor& t, const char* role, int32_t rows,
                    int32_t cols) {
  RETURN_IF_ERROR(c.Rank(t, role, 2, 2));
  if (t.shape[0] != rows || t.shape[1] != cols) {
    return c.Invalid(absl::StrCat(role, " '", t.name, "' has shape ", ShapeString(t.shape),
                                  ", expected [", rows, ",", cols, "]"));
  }
  return absl::OkStatus();
}

// A variable (stateful) operand: TFLite Micro's Prepare requires is_variable.
absl::Status VariableState(const OpChecker& c, const Tensor& t, const char* role) {
  if (!t.is_variable) {
    return c.Invalid(absl::StrCat(role, " '", t.name,
                                  "' is not a variable tensor (TFLite Micro requires is_variable "
                                  "on it: the op keeps its state there between inferences)"));
  }
  return absl::OkStatus();
}

// SVDF (svdf_common.cc, PrepareSvdf): input [batch, input_size] int8; weights_feature
// [filters, input_size] int8; weights_time [filters, memory] int16 or int8; optional bias
// [filters / rank] int32; activation state [batch, memory * filters] (variable, the type of
// weights_time); output [batch, filters / rank] int8.
absl::Status ValidateSvdf(const OpChecker& c) {
  const Op& op = c.op();
  if (op.inputs.size() != 5 || op.outputs.size() != 1) {
    return c.Invalid(absl::StrCat("has ", op.inputs.size(), " inputs and ", op.outputs.size(),
                                  " outputs, expected 5 (input, weights_feature, weights_time, "
                                  "bias or -1, activation_state) and 1"));
  }
  for (size_t i : {0, 1, 2, 4}) {
    if (!c.Has(i)) return c.Invalid(absl::StrCat("input ", i, " is missing"));
  }
  const Tensor& in = c.In(0);
  const Tensor& feature = c.In(1);
  const Tensor& time = c.In(2);
  const Tensor& state = c.In(4);
  const Tensor& out = c.Out();
  if (in.type == DataType::kFloat32) {
    return c.Unsupported("float32 input; boardlab runs TFLite Micro's integer SVDF (int8 input)");
  }
  RETURN_IF_ERROR(c.Int8Activation(in, "input"));
  RETURN_IF_ERROR(c.Int8Activation(out, "output"));
  RETURN_IF_ERROR(c.Rank(in, "input", 2, 2));
  RETURN_IF_ERROR(c.Rank(feature, "weights_feature", 2, 2));
  RETURN_IF_ERROR(c.Rank(time, "weights_time", 2, 2));
  const auto& o = op.opts<SvdfOptions>();
  const int32_t batch = in.shape[0], input_size = in.shape[1];
  const int32_t filters = feature.shape[0], memory = time.shape[1];
  if (o.rank < 1 || filters % o.rank != 0) {
    return c.Invalid(absl::StrCat("rank ", o.rank, " does not divide the ", filters, " filters"));
  }
  const int32_t units = filters / o.rank;
  RETURN_IF_ERROR(SymmetricWeights(c, feature, "weights_feature", DataType::kInt8));
  RETURN_IF_ERROR(Shape2(c, feature, "weights_feature", filters, input_size));
  if (time.type != DataType::kInt16 && time.type != DataType::kInt8) {
    return c.Unsupported(absl::StrCat("weights_time '", time.name, "' is ", DataTypeName(time.type),
                                      "; TFLite Micro's integer SVDF takes int16 or int8"));
  }
  RETURN_IF_ERROR(SymmetricWeights(c, time, "weights_time", time.type));
  RETURN_IF_ERROR(Shape2(c, time, "weights_time", filters, memory));
  RETURN_IF_ERROR(VariableState(c, state, "activation state"));
  if (state.type != time.type) {
    return c.Unsupported(absl::StrCat("activation state '", state.name, "' is ",
                                      DataTypeName(state.type), " but weights_time is ",
                                      DataTypeName(time.type),
                                      "; TFLite Micro computes the state in weights_time's type"));
  }
  RETURN_IF_ERROR(PerTensor(c, state, "activation state"));
  const int64_t limit = state.type == DataType::kInt16 ? 32767 : 127;
  if (state.quant.zp() < -limit - 1 || state.quant.zp() > limit) {
    return c.Invalid(absl::StrCat("activation state zero point ", state.quant.zp(), " is outside ",
                                  DataTypeName(state.type)));
  }
  RETURN_IF_ERROR(Shape2(c, state, "activation state", batch, memory * filters));
  if (c.Has(3)) {
    const Tensor& bias = c.In(3);
    RETURN_IF_ERROR(c.Constant(bias, "bias", DataType::kInt32));
    if (bias.NumElements() != units || bias.shape.size() != 1) {
      return c.Invalid(absl::StrCat("bias '", bias.name, "' has shape ", ShapeString(bias.shape),
                                    ", expected [", units, "] (filters / rank)"));
    }
    // TFLite Micro's Prepare: |bias scale - state scale * weights_time scale| < 1e-5, the product
    // taken in float.
    const float product = state.quant.scale[0] * time.quant.scale[0];
    const double bias_scale = bias.quant.empty() ? 0.0 : bias.quant.scale[0];
    if (!(std::fabs(bias_scale - static_cast<double>(product)) < 1e-5)) {
      return c.Invalid(absl::StrCat("bias scale ", bias_scale,
                                    " is not activation state scale * weights_time scale (",
                                    product, "), which TFLite Micro requires"));
    }
  }
  // TFLite's converter writes RELU (TFLite's integer SVDF requires it); neither TFLite nor TFLite
  // Micro applies it beyond the int8 clamp, which the output quantization makes a RELU.
  if (o.activation != Activation::kNone && o.activation != Activation::kRelu) {
    c.Warn(absl::StrCat("fused activation ", static_cast<int>(o.activation),
                        " is not applied: TFLite Micro's integer SVDF only clamps to int8"));
  }
  return c.OutputShape({batch, units});
}

// UNIDIRECTIONAL_SEQUENCE_LSTM operand roles (lstm_shared.h order).
constexpr size_t kLstmInputs = 24;
constexpr size_t kLstmHidden = 18, kLstmCell = 19;
const char* const kLstmRoles[kLstmInputs] = {"input",
                                             "input_to_input_weights",
                                             "input_to_forget_weights",
                                             "input_to_cell_weights",
                                             "input_to_output_weights",
                                             "recurrent_to_input_weights",
                                             "recurrent_to_forget_weights",
                                             "recurrent_to_cell_weights",
                                             "recurrent_to_output_weights",
                                             "cell_to_input_weights",
                                             "cell_to_forget_weights",
                                             "cell_to_output_weights",
                                             "input_gate_bias",
                                             "forget_gate_bias",
                                             "cell_gate_bias",
                                             "output_gate_bias",
                                             "projection_weights",
                                             "projection_bias",
                                             "hidden_state",
                                             "cell_state",
                                             "input_layer_norm_coefficients",
                                             "forget_layer_norm_coefficients",
                                             "cell_layer_norm_coefficients",
                                             "output_layer_norm_coefficients"};

// The standard LSTM TFLite Micro runs (LstmTensors::ValidateTensorStatus): every gate present,
// no peephole, projection or layer norm.
absl::Status LstmOperandsPresent(const OpChecker& c) {
  const Op& op = c.op();
  if (op.inputs.size() != kLstmInputs || op.outputs.size() != 1) {
    return c.Invalid(absl::StrCat("has ", op.inputs.size(), " inputs and ", op.outputs.size(),
                                  " outputs, expected 24 (20 without layer norm) and 1"));
  }
  for (size_t i : {size_t{1}, size_t{5}}) {
    if (!c.Has(i)) {
      return c.Unsupported(
          absl::StrCat(kLstmRoles[i],
                       " is absent (a CIFG LSTM, its input gate coupled to the forget gate); "
                       "TFLite Micro's LSTM computes the input gate from its own weights"));
    }
  }
  const struct {
    size_t first, last;
    const char* variant;
  } kVariants[] = {{9, 11, "peephole"}, {16, 17, "projection"}, {20, 23, "layer norm"}};
  for (const auto& v : kVariants) {
    for (size_t i = v.first; i <= v.last; ++i) {
      if (c.Has(i)) {
        return c.Unsupported(absl::StrCat(kLstmRoles[i], " is given: the ", v.variant,
                                          " LSTM variant, which TFLite Micro's LSTM does not run"));
      }
    }
  }
  for (size_t i = 0; i < kLstmInputs; ++i) {
    const bool required = i <= 8 || (i >= 12 && i <= 15) || i == kLstmHidden || i == kLstmCell;
    if (required && !c.Has(i)) {
      return c.Invalid(absl::StrCat("input ", i, " (", kLstmRoles[i], ") is missing"));
    }
  }
  return absl::OkStatus();
}

// A gate's weights: int8 constants, one scale, [rows, cols].
absl::Status LstmWeights(const OpChecker& c, size_t i, int32_t rows, int32_t cols) {
  const Tensor& w = c.In(i);
  RETURN_IF_ERROR(c.Constant(w, kLstmRoles[i], DataType::kInt8));
  RETURN_IF_ERROR(PerTensor(c, w, kLstmRoles[i]));
  return Shape2(c, w, kLstmRoles[i], rows, cols);
}

// The int16 cell state: symmetric, its scale a power of two 2^n (TFLite Micro takes n from the
// scale's log2 for the tanh of the cell; n <= 0 keeps that tanh's fixed-point input in int32).
absl::Status LstmCellState(const OpChecker& c, const Tensor& cell, int64_t elements) {
  RETURN_IF_ERROR(VariableState(c, cell, "cell_state"));
  if (cell.type != DataType::kInt16) {
    return c.Unsupported(absl::StrCat("cell_state '", cell.name, "' is ", DataTypeName(cell.type),
                                      "; TFLite Micro's integer LSTM keeps an int16 cell state"));
  }
  RETURN_IF_ERROR(PerTensor(c, cell, "cell_state"));
  if (cell.quant.zp() != 0) {
    return c.Unsupported(absl::StrCat("cell_state '", cell.name, "' has zero point ",
                                      cell.quant.zp(),
                                      "; TFLite Micro's integer LSTM reads the cell state as "
                                      "symmetric (zero point 0)"));
  }
  int power = 0;
  const float mantissa = std::frexp(cell.quant.scale[0], &power);
  if (mantissa != 0.5f || power - 1 > 0 || power - 1 < -31) {
    return c.Unsupported(absl::StrCat(
        "cell_state scale ", cell.quant.scale[0],
        " is not a power of two 2^n with -31 <= n <= 0; TFLite Micro's integer tanh of the cell "
        "state reads the cell state's format from that power"));
  }
  if (cell.NumElements() != elements) {
    return c.Invalid(absl::StrCat("cell_state '", cell.name, "' has shape ",
                                  ShapeString(cell.shape), ", expected ", elements,
                                  " elements (batch x state)"));
  }
  return absl::OkStatus();
}

// The LSTM's activations (input, hidden state, output): int8, or int16 with zero point 0 in the
// 16x8 form (TFLite Micro's int16 FCs never add the input's or hidden state's zero point).
absl::Status LstmActivation(const OpChecker& c, const Tensor& t, const char* role, bool is_16x8) {
  if (!is_16x8) return c.Int8Activation(t, role);
  return c.Int16Activation(t, role);
}

// The four gate biases: int32 with int8 activations, int64 in 16x8 (TFLite Micro's EvalLstm
// takes the bias type as its FCs' accumulator), [state].
absl::Status LstmBiases(const OpChecker& c, int32_t state, bool is_16x8) {
  for (size_t i = 12; i <= 15; ++i) {
    const Tensor& bias = c.In(i);
    const DataType type = is_16x8 ? DataType::kInt64 : DataType::kInt32;
    if (bias.is_constant && bias.type != type) {
      return c.Invalid(absl::StrCat(kLstmRoles[i], " '", bias.name, "' is ",
                                    DataTypeName(bias.type), ", expected ", DataTypeName(type),
                                    is_16x8 ? " (the 16x8 LSTM's FCs accumulate in its int64)"
                                            : " (the int8 LSTM's FCs accumulate in its int32)"));
    }
    RETURN_IF_ERROR(c.Constant(bias, kLstmRoles[i], type));
    if (bias.shape != std::vector<int32_t>{state}) {
      return c.Invalid(absl::StrCat(kLstmRoles[i], " '", bias.name, "' has shape ",
                                    ShapeString(bias.shape), ", expected [", state, "]"));
    }
  }
  return absl::OkStatus();
}

// The 16x8 FCs requantize with TFLite Micro's int64 MultiplyByQuantizedMultiplier, whose shift
// must stay below 8: activation scale x weight scale / 2^-12 below 2^7 for all eight.
absl::Status Lstm16x8Multipliers(const OpChecker& c) {
  for (size_t i = 1; i <= 8; ++i) {
    const Tensor& activation = c.In(i <= 4 ? 0 : kLstmHidden);
    const double m =
        static_cast<double>(activation.quant.scale[0] * c.In(i).quant.scale[0]) * 4096.0;
    if (QuantizeMultiplier(m).shift > 7) {
      return c.Unsupported(absl::StrCat(
          activation.name, " scale x ", kLstmRoles[i], " scale / 2^-12 is ", m,
          ", 2^7 or more; TFLite Micro's 16x8 requantization takes multipliers below 2^7"));
    }
  }
  return absl::OkStatus();
}

// UNIDIRECTIONAL_SEQUENCE_LSTM (unidirectional_sequence_lstm.cc, lstm_eval_common.cc), the
// integer paths of TFLite Micro: input [time, batch, input] (time_major) or [batch, time, input]
// int8, or int16 in the 16x8 form; 8 int8 weights; 4 biases [state], int32 or in 16x8 int64;
// hidden state [batch, state] of the input's type and int16 cell state (variables); output of
// the input's type [.., .., state] in the input's layout.
absl::Status ValidateLstm(const OpChecker& c) {
  RETURN_IF_ERROR(LstmOperandsPresent(c));
  const Tensor& in = c.In(0);
  const Tensor& hidden = c.In(kLstmHidden);
  const Tensor& out = c.Out();
  if (in.type == DataType::kFloat32) {
    return c.Unsupported(
        "float32 input; boardlab runs TFLite Micro's integer LSTM (int8 or 16x8 activations)");
  }
  const bool is_16x8 = in.type == DataType::kInt16;
  RETURN_IF_ERROR(LstmActivation(c, in, "input", is_16x8));
  RETURN_IF_ERROR(LstmActivation(c, out, "output", is_16x8));
  RETURN_IF_ERROR(VariableState(c, hidden, "hidden_state"));
  RETURN_IF_ERROR(LstmActivation(c, hidden, "hidden_state", is_16x8));
  const auto& o = c.op().opts<LstmOptions>();
  RETURN_IF_ERROR(c.Rank(in, "input", 3, 3));
  RETURN_IF_ERROR(c.Rank(hidden, "hidden_state", 2, 2));
  const int32_t batch = o.time_major ? in.shape[1] : in.shape[0];
  const int32_t input_size = in.shape[2];
  const int32_t state = hidden.shape[1];
  if (hidden.shape[0] != batch || state < 1) {
    return c.Invalid(absl::StrCat("hidden_state '", hidden.name, "' has shape ",
                                  ShapeString(hidden.shape), ", expected [", batch,
                                  ", state] for input ", ShapeString(in.shape),
                                  o.time_major ? " (time major)" : " (batch major)"));
  }
  for (size_t i = 1; i <= 4; ++i) RETURN_IF_ERROR(LstmWeights(c, i, state, input_size));
  for (size_t i = 5; i <= 8; ++i) RETURN_IF_ERROR(LstmWeights(c, i, state, state));
  RETURN_IF_ERROR(LstmBiases(c, state, is_16x8));
  if (is_16x8) RETURN_IF_ERROR(Lstm16x8Multipliers(c));
  RETURN_IF_ERROR(LstmCellState(c, c.In(kLstmCell), int64_t{batch} * state));
  if (o.activation != Activation::kTanh) {
    return c.Invalid(absl::StrCat("fused activation ", static_cast<int>(o.activation),
                                  " for the cell gate; TFLite Micro's LSTM takes tanh (or "
                                  "sigmoid, which TFLite's schema cannot express)"));
  }
  if (!(o.cell_clip >= 0.0f)) {
    return c.Invalid(absl::StrCat("cell_clip ", o.cell_clip, " is negative"));
  }
  if (o.proj_clip != 0.0f) {
    c.Warn(absl::StrCat("proj_clip ", o.proj_clip, " is ignored: there is no projection"));
  }
  // TFLite Micro copies each step's hidden state into the output byte for byte.
  if (out.quant.scale != hidden.quant.scale || out.quant.zp() != hidden.quant.zp()) {
    c.Warn(absl::StrCat("output '", out.name, "' is quantized unlike hidden_state '", hidden.name,
                        "': its bytes are the hidden state's (as TFLite Micro copies them), so "
                        "they mean values in the hidden state's scale and zero point"));
  }
  return c.OutputShape({in.shape[0], in.shape[1], state});
}

// The options TFLite Micro's Eval checks (or divides by), all known when compiling.
absl::Status DetectionOptions(const OpChecker& c, const DetectionPostprocessOptions& o) {
  if (o.num_classes < 1 || o.max_detections < 1 || o.max_classes_per_detection < 1) {
    return c.Invalid(absl::StrCat("num_classes ", o.num_classes, ", max_detections ",
                                  o.max_detections, " and max_classes_per_detection ",
                                  o.max_classes_per_detection, " must all be at least 1"));
  }
  if (o.use_regular_nms && o.detections_per_class < 1) {
    return c.Invalid(absl::StrCat("detections_per_class ", o.detections_per_class,
                                  " must be at least 1 with regular NMS"));
  }
  if (!(o.nms_iou_threshold > 0.0f && o.nms_iou_threshold <= 1.0f)) {
    return c.Invalid(absl::StrCat("nms_iou_threshold ", o.nms_iou_threshold,
                                  " is outside (0, 1], which TFLite Micro requires"));
  }
  if (o.y_scale == 0.0f || o.x_scale == 0.0f || o.h_scale == 0.0f || o.w_scale == 0.0f) {
    return c.Invalid(absl::StrCat("the box scales (", o.y_scale, ", ", o.x_scale, ", ", o.h_scale,
                                  ", ", o.w_scale, ") divide the encodings: none may be 0"));
  }
  if (!o.use_regular_nms && o.max_classes_per_detection > 1) {
    return c.Unsupported(absl::StrCat(
        "max_classes_per_detection ", o.max_classes_per_detection,
        " with fast NMS: TFLite Micro writes the k-th class of a detection at "
        "max_classes_per_detection * k + class with k counting every class written, past the end "
        "of "
        "its outputs; boardlab takes 1 class per detection (what SSD exports use) or regular NMS"));
  }
  return absl::OkStatus();
}

// A float32 input, or an int8 one with per-tensor quantization (dequantized as TFLite does).
absl::Status DetectionInput(const OpChecker& c, const Tensor& t, const char* role) {
  RETURN_IF_ERROR(c.TypeIn(t, role, {DataType::kFloat32, DataType::kInt8},
                           "boardlab's DETECTION_POSTPROCESS takes float32 or int8 (dequantized)"));
  return c.QuantizedIfInt8(t, role);
}

// TFLite_Detection_PostProcess (detection_postprocess.cc): box_encodings [1, boxes, >= 4],
// class_predictions [1, boxes, classes (+1 background)], anchors [boxes, 4]; four float32
// outputs: boxes [1, N, 4], classes [1, N], scores [1, N], num_detections [1], N = max_detections
// * max_classes_per_detection.
absl::Status ValidateDetectionPostprocess(const OpChecker& c) {
  RETURN_IF_ERROR(c.Arity(3, 3, 4));
  const auto& o = c.op().opts<DetectionPostprocessOptions>();
  RETURN_IF_ERROR(DetectionOptions(c, o));
  const Tensor& boxes = c.In(0);
  const Tensor& scores = c.In(1);
  const Tensor& anchors = c.In(2);
  RETURN_IF_ERROR(DetectionInput(c, boxes, "box_encodings"));
  RETURN_IF_ERROR(DetectionInput(c, scores, "class_predictions"));
  RETURN_IF_ERROR(DetectionInput(c, anchors, "anchors"));
  if (anchors.type != boxes.type) {
    return c.Unsupported(absl::StrCat(
        "anchors '", anchors.name, "' are ", DataTypeName(anchors.type), " but box_encodings are ",
        DataTypeName(boxes.type), "; TFLite reads both in the box encodings' type"));
  }
  RETURN_IF_ERROR(c.Rank(boxes, "box_encodings", 3, 3));
  RETURN_IF_ERROR(c.Rank(scores, "class_predictions", 3, 3));
  RETURN_IF_ERROR(c.Rank(anchors, "anchors", 2, 2));
  const int32_t num_boxes = boxes.shape[1];
  if (boxes.shape[0] != 1 || boxes.shape[2] < 4) {
    return c.Invalid(absl::StrCat("box_encodings '", boxes.name, "' has shape ",
                                  ShapeString(boxes.shape),
                                  ", expected [1, boxes, >= 4] (TFLite Micro runs batch 1)"));
  }
  const int32_t width = scores.shape[2];
  if (scores.shape[0] != 1 || scores.shape[1] != num_boxes || width < o.num_classes ||
      width > o.num_classes + 1) {
    return c.Invalid(absl::StrCat("class_predictions '", scores.name, "' has shape ",
                                  ShapeString(scores.shape), ", expected [1, ", num_boxes, ", ",
                                  o.num_classes, " or ", o.num_classes + 1,
                                  " (with a background class)]"));
  }
  if (anchors.shape[0] != num_boxes || anchors.shape[1] != 4) {
    return c.Invalid(absl::StrCat("anchors '", anchors.name, "' has shape ",
                                  ShapeString(anchors.shape), ", expected [", num_boxes, ", 4]"));
  }
  const int32_t n = o.max_detections * o.max_classes_per_detection;
  const std::vector<int32_t> shapes[] = {{1, n, 4}, {1, n}, {1, n}, {1}};
  const char* roles[] = {"detection_boxes", "detection_classes", "detection_scores",
                         "num_detections"};
  for (size_t k = 0; k < 4; ++k) {
    const Tensor& out = c.Out(k);
    if (out.type != DataType::kFloat32 || out.shape != shapes[k]) {
      return c.Invalid(absl::StrCat(roles[k], " output '", out.name, "' is ",
                                    DataTypeName(out.type), " ", ShapeString(out.shape),
                                    ", expected float32 ", ShapeString(shapes[k])));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSequenceOp(const OpChecker& c) {
  switch (c.op().type) {
    case OpType::kSvdf:
      return ValidateSvdf(c);
    case OpType::kUnidirectionalSequenceLstm:
      return ValidateLstm(c);
    case OpType::kDetectionPostprocess:
      return ValidateDetectionPostprocess(c);
    default:
      return c.Invalid("not a sequence op");
  }
}

}  // namespace boardlab::compiler
