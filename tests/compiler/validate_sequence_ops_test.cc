// The importer's checks of the sequence and detection ops (issue 13): SVDF's options, operands
// and variable state as TFLite Micro's Prepare checks them, the uses of variable tensors
// boardlab does not keep state for, and TFLite_Detection_PostProcess's flexbuffer options,
// operands and outputs, each refused with its reason; every generated case compiles onto the
// CPU with its reason.

#include <string>
#include <vector>

#include "compiler/driver.h"
#include "compiler/validate_ops.h"
#include "flatbuffers/flexbuffers.h"
#include "gtest/gtest.h"
#include "tests/compiler/validate_test_util.h"
#include "tests/support/op_cases.h"

namespace boardlab::testing {
namespace {

using compiler::OpType;
using validate_test::Code;
using validate_test::ExpectInvalid;
using validate_test::ExpectUnsupported;

// An SVDF of batch 1, 8 inputs, 6 filters (rank 2, 3 units), memory 4, with int16 state; the
// fields are public so that each test can break one thing.
struct SvdfModel {
  TfliteBuilder b;
  int in, feature, time, bias, state, out;
  int32_t rank = 2;
  Activation activation = Activation::kNone;

  SvdfModel() {
    in = b.AddTensor("in", {1, 8}, TflType::kInt8, PerTensor(0.05f, -3));
    feature = b.AddConstInt8("feature", {6, 8}, std::vector<int8_t>(48, 5), PerTensor(0.01f, 0));
    time = b.AddTensor("time", {6, 4}, TflType::kInt16, PerTensor(1.0f / 16384, 0),
                       std::vector<uint8_t>(48, 1));
    bias = b.AddConstInt32("bias", {3}, std::vector<int32_t>{1, 2, 3}, PerTensor(0.02f / 16384, 0));
    state = b.AddTensor("state", {1, 24}, TflType::kInt16, PerTensor(0.02f, 0));
    b.mutable_tensor(state).is_variable = true;
    out = b.AddTensor("out", {1, 3}, TflType::kInt8, PerTensor(0.1f, 2));
  }
  TfliteBuilder& Build() {
    b.AddOperator(Code(OpType::kSvdf), {in, feature, time, bias, state}, {out},
                  SvdfOpts{rank, activation});
    b.SetInputs({in});
    b.SetOutputs({out});
    return b;
  }
};

TEST(ValidateSvdf, TheModelImports) {
  SvdfModel m;
  validate_test::Expect(m.Build(), absl::StatusCode::kOk, {});
}

TEST(ValidateSvdf, EveryCaseCompilesOntoTheCpuWithAReason) {
  validate_test::ExpectEveryCaseOnTheCpu(SvdfCases(), "state persists between inferences");
}

TEST(ValidateSvdf, MissingOptionsAreInvalid) {
  SvdfModel m;
  m.Build().mutable_operator(0).options = std::monostate{};
  ExpectInvalid(m.b, {"SVDF #0", "options table missing"});
}

TEST(ValidateSvdf, RankMustDivideTheFilters) {
  SvdfModel m;
  m.rank = 4;
  ExpectInvalid(m.Build(), {"SVDF #0", "rank 4 does not divide the 6 filters"});
  SvdfModel zero;
  zero.rank = 0;
  ExpectInvalid(zero.Build(), {"rank 0"});
}

TEST(ValidateSvdf, TakesFiveInputs) {
  SvdfModel m;
  m.Build().mutable_operator(0).inputs.pop_back();
  ExpectInvalid(m.b, {"SVDF #0", "has 4 inputs", "expected 5"});
}

TEST(ValidateSvdf, StateMustBeAVariable) {
  SvdfModel m;
  m.b.mutable_tensor(m.state).is_variable = false;
  m.Build().SetInputs({m.in, m.state});
  ExpectInvalid(m.b, {"SVDF #0", "activation state 'state' is not a variable tensor"});
  // Nor may it be an activation nobody writes.
  SvdfModel unwritten;
  unwritten.b.mutable_tensor(unwritten.state).is_variable = false;
  ExpectInvalid(unwritten.Build(), {"reads tensor 4 'state' before any operator writes it"});
}

TEST(ValidateSvdf, StateTypeFollowsTheTimeWeights) {
  SvdfModel m;
  m.b.mutable_tensor(m.state).type = static_cast<int8_t>(TflType::kInt8);
  m.b.mutable_tensor(m.state).quant = PerTensor(0.02f, 0);
  ExpectUnsupported(m.Build(), {"activation state 'state' is int8 but weights_time is int16"});
}

TEST(ValidateSvdf, StateShapeIsBatchByMemoryTimesFilters) {
  SvdfModel m;
  m.b.mutable_tensor(m.state).shape = {1, 20};
  ExpectInvalid(m.Build(), {"activation state 'state' has shape [1,20], expected [1,24]"});
}

TEST(ValidateSvdf, FloatSvdfIsNotRun) {
  SvdfModel m;
  m.b.mutable_tensor(m.in).type = static_cast<int8_t>(TflType::kFloat32);
  ExpectUnsupported(m.Build(), {"SVDF #0", "float32 input"});
}

TEST(ValidateSvdf, BiasHasOneValuePerUnit) {
  SvdfModel m;
  m.b.mutable_tensor(m.bias).shape = {6};
  m.b.mutable_tensor(m.bias).buffer = m.b.AddBuffer(Int32Bytes(std::vector<int32_t>(6, 1)));
  ExpectInvalid(m.Build(), {"bias 'bias' has shape [6], expected [3]"});
}

TEST(ValidateSvdf, BiasScaleIsStateTimesTimeScale) {
  SvdfModel m;
  m.b.mutable_tensor(m.bias).quant = PerTensor(0.5f, 0);
  ExpectInvalid(m.Build(), {"bias scale 0.5", "TFLite Micro requires"});
}

TEST(ValidateSvdf, WeightsAreSymmetricAndPerTensor) {
  SvdfModel zp;
  zp.b.mutable_tensor(zp.feature).quant = PerTensor(0.01f, 4);
  ExpectUnsupported(zp.Build(), {"weights_feature 'feature' has zero point 4"});
  SvdfModel per_channel;
  per_channel.b.mutable_tensor(per_channel.time).quant = {
      {0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f}, {0, 0, 0, 0, 0, 0}, 0};
  ExpectUnsupported(per_channel.Build(), {"weights_time 'time' has 6 scales"});
}

TEST(ValidateSvdf, OutputIsBatchByUnits) {
  SvdfModel m;
  m.b.mutable_tensor(m.out).shape = {1, 6};
  ExpectInvalid(m.Build(), {"output 'out' has shape [1,6], the inputs give [1,3]"});
}

// RELU is what TFLite's converter writes (and TFLite's SVDF requires); others are not applied
// either, which the compiler says.
TEST(ValidateSvdf, AFusedActivationIsNotAppliedAndSaysSo) {
  SvdfModel relu;
  relu.activation = Activation::kRelu;
  std::vector<std::string> warnings;
  validate_test::Expect(relu.Build(), absl::StatusCode::kOk, {}, &warnings);
  EXPECT_TRUE(warnings.empty());
  SvdfModel relu6;
  relu6.activation = Activation::kRelu6;
  validate_test::Expect(relu6.Build(), absl::StatusCode::kOk, {}, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("fused activation 3 is not applied"), std::string::npos)
      << warnings[0];
}

TEST(ValidateSvdf, InitialDataOfTheStateIsIgnoredWithAWarning) {
  SvdfModel m;
  m.b.mutable_tensor(m.state).buffer = m.b.AddBuffer(std::vector<uint8_t>(48, 7));
  std::vector<std::string> warnings;
  validate_test::Expect(m.Build(), absl::StatusCode::kOk, {}, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("initial data; the data is ignored"), std::string::npos)
      << warnings[0];
}

// Variable tensors anywhere but in a stateful op's state slot: each use is named.
TEST(ValidateVariables, OtherOpsMayNotReadOrWriteThem) {
  SvdfModel m;
  m.Build();
  const int sum = m.b.AddTensor("sum", {1, 24}, TflType::kInt16, PerTensor(0.02f, 0));
  m.b.AddOperator(Code(OpType::kAdd), {m.state, m.state}, {sum}, ElementwiseOpts{});
  m.b.SetOutputs({m.out, sum});
  ExpectUnsupported(
      m.b, {"ADD #1 reads variable tensor 4 'state' as input 0", "boardlab keeps state only for"});
}

TEST(ValidateVariables, TwoStatefulOpsMayNotShareAState) {
  SvdfModel m;
  m.Build();
  const int out2 = m.b.AddTensor("out2", {1, 3}, TflType::kInt8, PerTensor(0.1f, 2));
  m.b.AddOperator(Code(OpType::kSvdf), {m.in, m.feature, m.time, m.bias, m.state}, {out2},
                  SvdfOpts{2, Activation::kNone});
  m.b.SetOutputs({m.out, out2});
  ExpectUnsupported(m.b, {"variable tensor 4 'state' is the state of both SVDF #0 and SVDF #1"});
}

TEST(ValidateVariables, AVariableIsNoGraphInputOrOutput) {
  SvdfModel m;
  m.Build().SetInputs({m.in, m.state});
  ExpectUnsupported(m.b, {"variable tensor 4 'state' is a graph input"});
}

TEST(ValidateVariables, NoOpWritesAVariableAsItsOutput) {
  SvdfModel m;
  m.Build();
  const int x = m.b.AddTensor("x", {1, 24}, TflType::kInt16, PerTensor(0.02f, 0));
  m.b.AddOperator(Code(OpType::kRelu), {x}, {m.state});
  m.b.SetInputs({m.in, x});
  ExpectUnsupported(m.b, {"RELU #1 writes variable tensor 4 'state' as an output"});
}

}  // namespace
}  // namespace boardlab::testing

namespace boardlab::testing {
namespace {

using compiler::OpType;
using validate_test::ExpectInvalid;
using validate_test::ExpectUnsupported;

// TFLite_Detection_PostProcess over 6 boxes and 2 classes (plus background), float32, with
// TFLite's test options (3 detections); fields public so that each test can break one thing.
struct DetectionModel {
  TfliteBuilder b;
  int boxes, scores, anchors, out_boxes, classes, out_scores, count;
  DetectionPostprocessOpts options;
  DetectionModel() {
    boxes = b.AddTensor("boxes", {1, 6, 4}, TflType::kFloat32);
    scores = b.AddTensor("scores", {1, 6, 3}, TflType::kFloat32);
    anchors =
        b.AddTensor("anchors", {6, 4}, TflType::kFloat32, {}, std::vector<uint8_t>(6 * 4 * 4, 0));
    out_boxes = b.AddTensor("detection_boxes", {1, 3, 4}, TflType::kFloat32);
    classes = b.AddTensor("detection_classes", {1, 3}, TflType::kFloat32);
    out_scores = b.AddTensor("detection_scores", {1, 3}, TflType::kFloat32);
    count = b.AddTensor("num_detections", {1}, TflType::kFloat32);
  }
  TfliteBuilder& Build(std::vector<uint8_t> custom_options) {
    b.AddCustomOperator("TFLite_Detection_PostProcess", {boxes, scores, anchors},
                        {out_boxes, classes, out_scores, count}, std::move(custom_options));
    b.SetInputs({boxes, scores});
    b.SetOutputs({out_boxes, classes, out_scores, count});
    return b;
  }
  TfliteBuilder& Build() { return Build(DetectionPostprocessFlexbuffer(options)); }
};

TEST(ValidateDetectionPostprocess, TheModelImportsWithItsOptions) {
  DetectionModel m;
  m.options.use_regular_nms = true;
  m.options.detections_per_class = 7;
  absl::StatusOr<compiler::Graph> g = compiler::ImportTflite(m.Build().Finish(), nullptr);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->ops.size(), 1u);
  EXPECT_EQ(g->ops[0].type, OpType::kDetectionPostprocess);
  const auto& o = g->ops[0].opts<compiler::DetectionPostprocessOptions>();
  EXPECT_EQ(o.max_detections, 3);
  EXPECT_EQ(o.num_classes, 2);
  EXPECT_EQ(o.detections_per_class, 7);
  EXPECT_TRUE(o.use_regular_nms);
  EXPECT_EQ(o.y_scale, 10.0f);
  EXPECT_EQ(o.w_scale, 5.0f);
  EXPECT_EQ(o.nms_iou_threshold, 0.5f);
}

TEST(ValidateDetectionPostprocess, EveryCaseCompilesOntoTheCpuWithAReason) {
  validate_test::ExpectEveryCaseOnTheCpu(DetectionPostprocessCases(), "non-max suppression");
}

TEST(ValidateDetectionPostprocess, OtherCustomOpsStayUnsupported) {
  TfliteBuilder other;
  const int a = other.AddTensor("a", {1, 4}, TflType::kFloat32);
  const int c = other.AddTensor("c", {1, 4}, TflType::kFloat32);
  other.AddCustomOperator("TFLite_Detection_PostProcess_v2", {a}, {c});
  other.SetInputs({a});
  other.SetOutputs({c});
  ExpectUnsupported(other, {"operator 0 is CUSTOM 'TFLite_Detection_PostProcess_v2'"});
}

TEST(ValidateDetectionPostprocess, MissingOptionsAreInvalid) {
  DetectionModel m;
  ExpectInvalid(m.Build({}), {"DETECTION_POSTPROCESS #0", "custom options: none"});
}

TEST(ValidateDetectionPostprocess, ABrokenFlexbufferIsInvalid) {
  DetectionModel m;
  std::vector<uint8_t> bytes = DetectionPostprocessFlexbuffer(m.options);
  bytes.resize(bytes.size() / 2);
  ExpectInvalid(m.Build(bytes), {"DETECTION_POSTPROCESS #0", "are not a valid flexbuffer"});
  DetectionModel garbage;
  ExpectInvalid(garbage.Build({0xff, 0xff, 0xff, 0x01}), {"are not a valid flexbuffer"});
}

TEST(ValidateDetectionPostprocess, TheRootMustBeAMap) {
  flexbuffers::Builder fbb;
  fbb.Int(3);
  fbb.Finish();
  DetectionModel m;
  ExpectInvalid(m.Build(fbb.GetBuffer()), {"the flexbuffer root is not a map"});
}

TEST(ValidateDetectionPostprocess, RequiredKeysMustBeThere) {
  flexbuffers::Builder fbb;
  fbb.Map([&]() {
    fbb.Int("max_detections", 3);
    fbb.Int("max_classes_per_detection", 1);
    fbb.Int("num_classes", 2);
    fbb.Float("nms_score_threshold", 0.0f);
    fbb.Float("nms_iou_threshold", 0.5f);
    fbb.Float("y_scale", 10.0f);
    fbb.Float("x_scale", 10.0f);
    fbb.Float("h_scale", 5.0f);
  });
  fbb.Finish();
  DetectionModel m;
  ExpectInvalid(m.Build(fbb.GetBuffer()), {"key 'w_scale' is missing"});
}

TEST(ValidateDetectionPostprocess, ValuesMustBeNumbers) {
  flexbuffers::Builder fbb;
  fbb.Map([&]() {
    fbb.String("max_detections", "three");
    fbb.Int("max_classes_per_detection", 1);
    fbb.Int("num_classes", 2);
  });
  fbb.Finish();
  DetectionModel m;
  ExpectInvalid(m.Build(fbb.GetBuffer()), {"key 'max_detections' is not a number"});
}

TEST(ValidateDetectionPostprocess, TheFormatMustBeFlexbuffers) {
  DetectionModel m;
  m.Build().mutable_operator(0).custom_options_format = 1;
  ExpectInvalid(m.b, {"custom_options_format 1 is not FLEXBUFFERS"});
}

TEST(ValidateDetectionPostprocess, IouThresholdInZeroToOne) {
  DetectionModel m;
  m.options.nms_iou_threshold = 1.5f;
  ExpectInvalid(m.Build(), {"nms_iou_threshold 1.5 is outside (0, 1]"});
}

TEST(ValidateDetectionPostprocess, ScalesMustNotBeZero) {
  DetectionModel m;
  m.options.h_scale = 0.0f;
  ExpectInvalid(m.Build(), {"none may be 0"});
}

TEST(ValidateDetectionPostprocess, FastNmsTakesOneClassPerDetection) {
  DetectionModel m;
  m.options.max_classes_per_detection = 2;
  m.b.mutable_tensor(m.out_boxes).shape = {1, 6, 4};
  m.b.mutable_tensor(m.classes).shape = {1, 6};
  m.b.mutable_tensor(m.out_scores).shape = {1, 6};
  ExpectUnsupported(m.Build(), {"max_classes_per_detection 2 with fast NMS"});
}

TEST(ValidateDetectionPostprocess, RegularNmsNeedsDetectionsPerClass) {
  DetectionModel m;
  m.options.use_regular_nms = true;
  m.options.detections_per_class = 0;
  ExpectInvalid(m.Build(), {"detections_per_class 0 must be at least 1"});
}

TEST(ValidateDetectionPostprocess, ClassPredictionsHoldTheClassesAndAtMostABackground) {
  DetectionModel m;
  m.b.mutable_tensor(m.scores).shape = {1, 6, 5};
  ExpectInvalid(m.Build(), {"class_predictions 'scores' has shape [1,6,5]", "2 or 3"});
}

TEST(ValidateDetectionPostprocess, AnchorsAreBoxesByFour) {
  DetectionModel m;
  m.b.mutable_tensor(m.anchors).shape = {6, 3};
  m.b.mutable_tensor(m.anchors).buffer = m.b.AddBuffer(std::vector<uint8_t>(6 * 3 * 4, 0));
  ExpectInvalid(m.Build(), {"anchors 'anchors' has shape [6,3], expected [6, 4]"});
}

TEST(ValidateDetectionPostprocess, OutputsAreFloat32OfTheDetectionCount) {
  DetectionModel m;
  m.b.mutable_tensor(m.classes).shape = {1, 4};
  ExpectInvalid(m.Build(), {"detection_classes output", "expected float32 [1,3]"});
  DetectionModel int8_out;
  int8_out.b.mutable_tensor(int8_out.count).type = static_cast<int8_t>(TflType::kInt8);
  int8_out.b.mutable_tensor(int8_out.count).quant = PerTensor(1.0f, 0);
  ExpectInvalid(int8_out.Build(), {"num_detections output", "is int8"});
}

TEST(ValidateDetectionPostprocess, Uint8InputsAreNotTaken) {
  DetectionModel m;
  m.b.mutable_tensor(m.scores).type = static_cast<int8_t>(TflType::kUint8);
  m.b.mutable_tensor(m.scores).quant = PerTensor(0.01f, 0);
  ExpectUnsupported(m.Build(), {"class_predictions 'scores' is uint8", "float32 or int8"});
}

TEST(ValidateDetectionPostprocess, AnchorsTakeTheBoxEncodingsType) {
  DetectionModel m;
  m.b.mutable_tensor(m.boxes).type = static_cast<int8_t>(TflType::kInt8);
  m.b.mutable_tensor(m.boxes).quant = PerTensor(0.05f, 0);
  ExpectUnsupported(m.Build(), {"anchors 'anchors' are float32 but box_encodings are int8"});
}

}  // namespace
}  // namespace boardlab::testing

namespace boardlab::testing {
namespace {

using compiler::OpType;
using validate_test::Code;
using validate_test::ExpectInvalid;
using validate_test::ExpectUnsupported;

// A batch-major LSTM of batch 2, 3 steps, 4 inputs, state 5, as TFLite's converter writes it for
// TFLite Micro (no layer norm: 20 inputs, which the importer pads to 24), int8 or 16x8 (int16
// activations with zero point 0, int64 biases); the fields are public so that each test can
// break one thing.
struct LstmModel {
  TfliteBuilder b;
  std::vector<int32_t> inputs;
  int in, hidden, cell, out;
  UnidirectionalSequenceLstmOpts options{Activation::kTanh, 0.0f, 0.0f, false};

  explicit LstmModel(bool is_16x8 = false) {
    const TflType activation = is_16x8 ? TflType::kInt16 : TflType::kInt8;
    const QuantParams state_q = is_16x8 ? PerTensor(1.0f / 32768, 0) : PerTensor(0.01f, 4);
    in = b.AddTensor("in", {2, 3, 4}, activation,
                     is_16x8 ? PerTensor(1.0f / 16384, 0) : PerTensor(0.05f, -3));
    inputs.push_back(in);
    const char* gates[] = {"input", "forget", "cell", "output"};
    for (const char* gate : gates) {
      inputs.push_back(b.AddConstInt8(std::string(gate) + "_w", {5, 4}, std::vector<int8_t>(20, 3),
                                      PerTensor(0.02f, 0)));
    }
    for (const char* gate : gates) {
      inputs.push_back(b.AddConstInt8(std::string(gate) + "_r", {5, 5}, std::vector<int8_t>(25, -2),
                                      PerTensor(0.03f, 0)));
    }
    inputs.insert(inputs.end(), {-1, -1, -1});
    for (const char* gate : gates) {
      inputs.push_back(Bias(std::string(gate) + "_b", is_16x8 ? TflType::kInt64 : TflType::kInt32));
    }
    inputs.insert(inputs.end(), {-1, -1});
    hidden = b.AddTensor("hidden", {2, 5}, activation, state_q);
    cell = b.AddTensor("cell", {2, 5}, TflType::kInt16, PerTensor(1.0f / 2048, 0));
    b.mutable_tensor(hidden).is_variable = true;
    b.mutable_tensor(cell).is_variable = true;
    inputs.insert(inputs.end(), {hidden, cell});
    out = b.AddTensor("out", {2, 3, 5}, activation, state_q);
  }
  // A bias [5] of 100s, int32 or int64.
  int Bias(const std::string& name, TflType type) {
    const size_t size = type == TflType::kInt64 ? 8 : 4;
    std::vector<uint8_t> bytes(5 * size, 0);
    for (size_t i = 0; i < 5; ++i) bytes[i * size] = 100;
    return b.AddTensor(name, {5}, type, PerTensor(0.001f, 0), bytes);
  }
  TfliteBuilder& Build() {
    b.AddOperator(Code(OpType::kUnidirectionalSequenceLstm), inputs, {out}, options);
    b.SetInputs({in});
    b.SetOutputs({out});
    return b;
  }
  // Input `i` replaced by a new constant of `shape` (a variant's tensor, or a reshaped one).
  void SetConst(size_t i, std::vector<int32_t> shape) {
    int64_t n = 1;
    for (int32_t d : shape) n *= d;
    inputs[i] = b.AddConstInt8("extra" + std::to_string(i), shape,
                               std::vector<int8_t>(static_cast<size_t>(n), 1), PerTensor(0.02f, 0));
  }
};

// Every generated case compiles, the op on the CPU (never the NPU) with its reason; the
// hand-built model imports with 20 inputs or with the 4 layer norm slots given as absent.
TEST(ValidateLstm, ImportsAndCompilesOntoTheCpuWithAReason) {
  validate_test::ExpectEveryCaseOnTheCpu(LstmCases(), "state persists between inferences");
  LstmModel m;
  validate_test::Expect(m.Build(), absl::StatusCode::kOk, {});
  LstmModel layer_norm_slots;
  layer_norm_slots.inputs.insert(layer_norm_slots.inputs.end(), {-1, -1, -1, -1});
  validate_test::Expect(layer_norm_slots.Build(), absl::StatusCode::kOk, {});
}

TEST(ValidateLstm, MissingOptionsAreInvalid) {
  LstmModel m;
  m.Build().mutable_operator(0).options = std::monostate{};
  ExpectInvalid(m.b, {"UNIDIRECTIONAL_SEQUENCE_LSTM #0", "options table missing"});
}

TEST(ValidateLstm, TakesTwentyOrTwentyFourInputs) {
  LstmModel m;
  m.inputs.pop_back();
  ExpectInvalid(m.Build(), {"has 19 inputs and 1 outputs, expected 24 (20 without layer norm)"});
}

TEST(ValidateLstm, RequiredInputsMustBeThere) {
  LstmModel m;
  m.inputs[13] = -1;
  ExpectInvalid(m.Build(), {"input 13 (forget_gate_bias) is missing"});
}

TEST(ValidateLstm, VariantsAreNotRun) {
  LstmModel cifg;
  cifg.inputs[1] = -1;
  ExpectUnsupported(cifg.Build(), {"input_to_input_weights is absent (a CIFG LSTM"});
  LstmModel peephole;
  peephole.SetConst(10, {5});
  ExpectUnsupported(peephole.Build(), {"cell_to_forget_weights is given: the peephole"});
  LstmModel projection;
  projection.SetConst(16, {5, 5});
  ExpectUnsupported(projection.Build(), {"projection_weights is given: the projection"});
  LstmModel layer_norm;
  layer_norm.inputs.insert(layer_norm.inputs.end(), {-1, -1, -1, -1});
  layer_norm.SetConst(21, {5});
  ExpectUnsupported(layer_norm.Build(),
                    {"forget_layer_norm_coefficients is given: the layer norm"});
}

TEST(ValidateLstm, StatesMustBeVariables) {
  LstmModel m;
  m.b.mutable_tensor(m.cell).is_variable = false;
  m.Build().SetInputs({m.in, m.cell});
  ExpectInvalid(m.b, {"cell_state 'cell' is not a variable tensor"});
}

TEST(ValidateLstm, FloatLstmIsNotRun) {
  LstmModel m;
  m.b.mutable_tensor(m.in).type = static_cast<int8_t>(TflType::kFloat32);
  ExpectUnsupported(m.Build(), {"float32 input; boardlab runs TFLite Micro's integer LSTM"});
}

TEST(ValidateLstm, TheCellStateIsInt16WithAPowerOfTwoScale) {
  LstmModel int8_cell;
  int8_cell.b.mutable_tensor(int8_cell.cell).type = static_cast<int8_t>(TflType::kInt8);
  ExpectUnsupported(int8_cell.Build(), {"cell_state 'cell' is int8", "int16 cell state"});
  LstmModel scale;
  scale.b.mutable_tensor(scale.cell).quant = PerTensor(0.001f, 0);
  ExpectUnsupported(scale.Build(), {"cell_state scale 0.001 is not a power of two"});
  LstmModel zp;
  zp.b.mutable_tensor(zp.cell).quant = PerTensor(1.0f / 2048, 3);
  ExpectUnsupported(zp.Build(), {"cell_state 'cell' has zero point 3"});
}

TEST(ValidateLstm, ShapesFollowTheInputAndHiddenState) {
  LstmModel weights;
  weights.SetConst(6, {5, 4});
  ExpectInvalid(weights.Build(),
                {"recurrent_to_forget_weights 'extra6' has shape [5,4], expected [5,5]"});
  LstmModel hidden;
  hidden.b.mutable_tensor(hidden.hidden).shape = {3, 5};
  ExpectInvalid(hidden.Build(), {"hidden_state 'hidden' has shape [3,5], expected [2, state]"});
  LstmModel time_major;  // the same tensors read as [time 2, batch 3, input 4]
  time_major.options.time_major = true;
  ExpectInvalid(time_major.Build(), {"expected [3, state]", "(time major)"});
  LstmModel out;
  out.b.mutable_tensor(out.out).shape = {2, 3, 4};
  ExpectInvalid(out.Build(), {"output 'out' has shape [2,3,4], the inputs give [2,3,5]"});
}

TEST(ValidateLstm, TheCellGateTakesTanhAndTheClipIsNotNegative) {
  LstmModel relu;
  relu.options.activation = Activation::kRelu;
  ExpectInvalid(relu.Build(), {"fused activation 1 for the cell gate"});
  LstmModel clip;
  clip.options.cell_clip = -1.0f;
  ExpectInvalid(clip.Build(), {"cell_clip -1 is negative"});
}

TEST(ValidateLstm, IgnoredProjectionClipAndOutputQuantizationAreWarned) {
  LstmModel plain;
  std::vector<std::string> warnings;
  validate_test::Expect(plain.Build(), absl::StatusCode::kOk, {}, &warnings);
  EXPECT_TRUE(warnings.empty());
  LstmModel proj_clip;
  proj_clip.options.proj_clip = 3.0f;
  validate_test::Expect(proj_clip.Build(), absl::StatusCode::kOk, {}, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("proj_clip 3 is ignored"), std::string::npos) << warnings[0];
  LstmModel out;
  out.b.mutable_tensor(out.out).quant = PerTensor(0.02f, 4);
  warnings.clear();
  validate_test::Expect(out.Build(), absl::StatusCode::kOk, {}, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("output 'out' is quantized unlike hidden_state 'hidden'"),
            std::string::npos)
      << warnings[0];
}

// The 16x8 form (TFLite Micro's EvalLstm<int16_t, int8_t, int16_t, int64_t>) compiles onto the
// CPU; tests/runtime/stateful_ops_test.cc runs it.
TEST(ValidateLstm16x8, CompilesOntoTheCpu) {
  EXPECT_TRUE(compiler::Runs16x8(OpType::kUnidirectionalSequenceLstm));
  LstmModel m(/*is_16x8=*/true);
  validate_test::Expect(m.Build(), absl::StatusCode::kOk, {});
}

// The bias type is the FCs' accumulator: int64 in 16x8, int32 with int8 activations.
TEST(ValidateLstm16x8, BiasesAreInt64AndInt8BiasesInt32) {
  LstmModel int32_biases(/*is_16x8=*/true);
  int32_biases.inputs[13] = int32_biases.Bias("forget_b32", TflType::kInt32);
  ExpectInvalid(int32_biases.Build(), {"forget_gate_bias 'forget_b32' is int32, expected int64",
                                       "the 16x8 LSTM's FCs accumulate in its int64"});
  LstmModel int64_biases;
  int64_biases.inputs[12] = int64_biases.Bias("input_b64", TflType::kInt64);
  ExpectInvalid(int64_biases.Build(), {"input_gate_bias 'input_b64' is int64, expected int32"});
}

// TFLite Micro's int16 FCs never add the input's or hidden state's zero point: 16x8 activations
// are symmetric.
TEST(ValidateLstm16x8, Int16ZeroPointsAreZero) {
  LstmModel input(/*is_16x8=*/true);
  input.b.mutable_tensor(input.in).quant = PerTensor(1.0f / 16384, 5);
  ExpectUnsupported(input.Build(),
                    {"input 'in' is int16 with zero point 5", "symmetric (zero point 0)"});
  LstmModel hidden(/*is_16x8=*/true);
  hidden.b.mutable_tensor(hidden.hidden).quant = PerTensor(1.0f / 32768, -7);
  ExpectUnsupported(hidden.Build(), {"hidden_state 'hidden' is int16 with zero point -7"});
  LstmModel out(/*is_16x8=*/true);
  out.b.mutable_tensor(out.out).quant = PerTensor(1.0f / 32768, 2);
  ExpectUnsupported(out.Build(), {"output 'out' is int16 with zero point 2"});
}

// One form throughout: int16 input, hidden state and output, or int8 ones.
TEST(ValidateLstm16x8, ActivationsAreInt16Throughout) {
  LstmModel int8_hidden(/*is_16x8=*/true);
  int8_hidden.b.mutable_tensor(int8_hidden.hidden).type = static_cast<int8_t>(TflType::kInt8);
  ExpectUnsupported(int8_hidden.Build(), {"hidden_state 'hidden' is int8",
                                          "the 16x8 form of "
                                          "UNIDIRECTIONAL_SEQUENCE_LSTM takes int16 "
                                          "activations throughout"});
  LstmModel int16_out;
  int16_out.b.mutable_tensor(int16_out.out).type = static_cast<int8_t>(TflType::kInt16);
  int16_out.b.mutable_tensor(int16_out.out).quant = PerTensor(0.01f, 0);
  ExpectUnsupported(int16_out.Build(),
                    {"output 'out' is int16", "takes int16 activations throughout"});
}

// TFLite Micro's LSTM runs the standard LSTM only, in 16x8 as in int8 (LstmTensors's
// ValidateTensorStatus): the peephole, projection and layer norm variants and CIFG stay refused.
TEST(ValidateLstm16x8, VariantsAreNotRunEither) {
  LstmModel cifg(/*is_16x8=*/true);
  cifg.inputs[5] = -1;
  ExpectUnsupported(cifg.Build(), {"recurrent_to_input_weights is absent (a CIFG LSTM"});
  LstmModel peephole(/*is_16x8=*/true);
  peephole.SetConst(9, {5});
  ExpectUnsupported(peephole.Build(), {"cell_to_input_weights is given: the peephole"});
  LstmModel projection(/*is_16x8=*/true);
  projection.SetConst(17, {5});
  ExpectUnsupported(projection.Build(), {"projection_bias is given: the projection"});
  LstmModel layer_norm(/*is_16x8=*/true);
  layer_norm.inputs.insert(layer_norm.inputs.end(), {-1, -1, -1, -1});
  layer_norm.SetConst(23, {5});
  ExpectUnsupported(layer_norm.Build(),
                    {"output_layer_norm_coefficients is given: the layer norm"});
}

// TFLite Micro's int64 requantization (the 16x8 FCs) takes multipliers below 2^7: input scale
// 1/8 x weight scale 0.02 / 2^-12 = 10.24 passes, input scale 2 (163.84) does not.
TEST(ValidateLstm16x8, FcMultipliersStayBelow2To7) {
  LstmModel small(/*is_16x8=*/true);
  small.b.mutable_tensor(small.in).quant = PerTensor(0.125f, 0);
  validate_test::Expect(small.Build(), absl::StatusCode::kOk, {});
  LstmModel large(/*is_16x8=*/true);
  large.b.mutable_tensor(large.in).quant = PerTensor(2.0f, 0);
  ExpectUnsupported(large.Build(), {"in scale x input_to_input_weights scale / 2^-12 is 163.84",
                                    "takes multipliers below 2^7"});
}

}  // namespace
}  // namespace boardlab::testing
