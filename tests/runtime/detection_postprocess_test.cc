// DETECTION_POSTPROCESS (TFLite_Detection_PostProcess) end to end on TFLite Micro's own test
// vectors (detection_postprocess_test.cc: six boxes, two classes, the options TFLite's tests
// use) and its failure on an anchor that decodes to an empty box. The generated cases are
// checked against the TFLite interpreter in oracle_ops_test.cc.

#include <cstring>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "tests/runtime/pte_runner.h"
#include "tests/support/tflite_builder.h"

namespace boardlab {
namespace {

using testing::TflType;
using Bytes = std::vector<uint8_t>;

Bytes FloatBytes(const std::vector<float>& v) {
  Bytes b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<float> Floats(const Bytes& b) {
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

// Six boxes in center-size encoding, two classes (and a background column) of scores, six
// anchors: TFLite Micro's kInputData1..3. In corner form the decoded boxes are [0,0,1,1],
// [0,0.1,1,1.1], [0,-0.1,1,0.9], [0,10,1,11], [0,10.1,1,11.1] and [0,100,1,101].
const std::vector<float> kBoxes = {0, 0, 0, 0, 0, 1, 0, 0, 0, -1, 0, 0,
                                   0, 0, 0, 0, 0, 1, 0, 0, 0, 0,  0, 0};
const std::vector<float> kScores = {0., .9,  .8,  0., .75, .72, 0., .6, .5,
                                    0., .93, .95, 0., .5,  .4,  0., .3, .2};
const std::vector<float> kAnchors = {0.5, 0.5,  1.0, 1.0, 0.5, 0.5,   1.0, 1.0,
                                     0.5, 0.5,  1.0, 1.0, 0.5, 10.5,  1.0, 1.0,
                                     0.5, 10.5, 1.0, 1.0, 0.5, 100.5, 1.0, 1.0};

std::vector<uint8_t> SixBoxModel(bool regular, const std::vector<float>& anchors) {
  testing::TfliteBuilder b;
  const int boxes = b.AddTensor("boxes", {1, 6, 4}, TflType::kFloat32);
  const int scores = b.AddTensor("scores", {1, 6, 3}, TflType::kFloat32);
  const int anchor = b.AddTensor("anchors", {6, 4}, TflType::kFloat32, {}, FloatBytes(anchors));
  const int out_boxes = b.AddTensor("detection_boxes", {1, 3, 4}, TflType::kFloat32);
  const int classes = b.AddTensor("detection_classes", {1, 3}, TflType::kFloat32);
  const int out_scores = b.AddTensor("detection_scores", {1, 3}, TflType::kFloat32);
  const int count = b.AddTensor("num_detections", {1}, TflType::kFloat32);
  testing::DetectionPostprocessOpts o;  // TFLite's test options: 3 detections, 1 per class
  o.use_regular_nms = regular;
  b.AddCustomOperator("TFLite_Detection_PostProcess", {boxes, scores, anchor},
                      {out_boxes, classes, out_scores, count},
                      testing::DetectionPostprocessFlexbuffer(o));
  b.SetInputs({boxes, scores});
  b.SetOutputs({out_boxes, classes, out_scores, count});
  return b.Finish();
}

runtime::testing::PteRun CompileAndRun(const std::vector<uint8_t>& model) {
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(model, {});
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return {};
  return runtime::testing::RunPte(compiled->pte, {FloatBytes(kBoxes), FloatBytes(kScores)});
}

// TFLite Micro's DetectionPostprocessFloatFastNMS, whose goldens it compares with tolerance 0.
TEST(DetectionPostprocess, TfliteMicroFastNmsGoldens) {
  const runtime::testing::PteRun run = CompileAndRun(SixBoxModel(false, kAnchors));
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), 4u);
  EXPECT_EQ(Floats(run.outputs[0]),
            (std::vector<float>{0.0, 10.0, 1.0, 11.0, 0.0, 0.0, 1.0, 1.0, 0.0, 100.0, 1.0, 101.0}));
  EXPECT_EQ(Floats(run.outputs[1]), (std::vector<float>{1, 0, 0}));
  EXPECT_EQ(Floats(run.outputs[2]), (std::vector<float>{0.95f, 0.9f, 0.3f}));
  EXPECT_EQ(Floats(run.outputs[3]), (std::vector<float>{3.0}));
}

// TFLite Micro's DetectionPostprocessFloatRegularNMS (one detection per class): its goldens
// within its tolerance of 0.1, and the exact values its arithmetic gives (class 0's best score
// is 0.93, which its golden rounds to 0.9).
TEST(DetectionPostprocess, TfliteMicroRegularNmsGoldens) {
  const runtime::testing::PteRun run = CompileAndRun(SixBoxModel(true, kAnchors));
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), 4u);
  const std::vector<float> golden_boxes = {0.0, 10.0, 1.0, 11.0, 0.0, 10.0,
                                           1.0, 11.0, 0.0, 0.0,  0.0, 0.0};
  const std::vector<float> golden_scores = {0.95f, 0.9f, 0.0f};
  const std::vector<float> boxes = Floats(run.outputs[0]);
  const std::vector<float> scores = Floats(run.outputs[2]);
  for (size_t i = 0; i < golden_boxes.size(); ++i) EXPECT_NEAR(boxes[i], golden_boxes[i], 0.1);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(scores[i], golden_scores[i], 0.1);
  EXPECT_EQ(scores, (std::vector<float>{0.95f, 0.93f, 0.0f}));
  EXPECT_EQ(Floats(run.outputs[1]), (std::vector<float>{1, 0, 0}));
  EXPECT_EQ(Floats(run.outputs[3]), (std::vector<float>{2.0}));
}

// An anchor of height 0 decodes to a box with ymin == ymax; TFLite Micro fails the inference
// (ValidateBoxes), and so does the runtime, saying which anchor.
TEST(DetectionPostprocess, AnEmptyDecodedBoxFailsTheInference) {
  std::vector<float> anchors = kAnchors;
  anchors[4 * 2 + 2] = 0.0f;  // anchor 2: h = 0
  const runtime::testing::PteRun run = CompileAndRun(SixBoxModel(false, anchors));
  EXPECT_EQ(run.error, runtime::Error::kInvalidArgument);
  EXPECT_NE(run.message.find("anchor 2 decodes to an empty box"), std::string::npos) << run.message;
}

}  // namespace
}  // namespace boardlab
