// The importer's checks of the sequence and detection ops (issue 13): SVDF's options, operands
// and variable state as TFLite Micro's Prepare checks them, the uses of variable tensors
// boardlab does not keep state for, and TFLite_Detection_PostProcess's flexbuffer options,
// operands and outputs, each refused with its reason; every generated case compiles onto the
// CPU with its reason.

#include <string>
#include <vector>

#include "compiler/driver.h"
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
