// Imports the six real int8 models from the shared folder and checks op counts per type, graph
// input/output shapes and quantization against the facts in shared/models/README.md and
// shared/reference/tflite-int8.md (op counts taken from `flatc --json` dumps of the files).

#include <cctype>
#include <map>
#include <string>

#include "compiler/import_tflite.h"
#include "gtest/gtest.h"
#include "tests/support/shared_data.h"

namespace boardlab::testing {
namespace {

using compiler::Graph;
using compiler::OpType;

struct TensorFacts {
  std::vector<int32_t> shape;
  float scale;
  int64_t zero_point;
};

struct ModelFacts {
  std::string_view path;
  std::map<OpType, int> op_counts;
  TensorFacts input;
  TensorFacts output;
};

const ModelFacts kFacts[] = {
    {"mlperf-tiny/vww_96_int8.tflite",
     {{OpType::kConv2D, 14},
      {OpType::kDepthwiseConv2D, 13},
      {OpType::kAveragePool2D, 1},
      {OpType::kReshape, 1},
      {OpType::kFullyConnected, 1},
      {OpType::kSoftmax, 1}},
     {{1, 96, 96, 3}, 1.0f / 255, -128},
     {{1, 2}, 1.0f / 256, -128}},
    {"mlperf-tiny/resnet8_int8.tflite",
     {{OpType::kConv2D, 9},
      {OpType::kAdd, 3},
      {OpType::kAveragePool2D, 1},
      {OpType::kReshape, 1},
      {OpType::kFullyConnected, 1},
      {OpType::kSoftmax, 1}},
     {{1, 32, 32, 3}, 1.0f, -128},
     {{1, 10}, 1.0f / 256, -128}},
    {"mlperf-tiny/kws_dscnn_int8.tflite",
     {{OpType::kConv2D, 5},
      {OpType::kDepthwiseConv2D, 4},
      {OpType::kAveragePool2D, 1},
      {OpType::kReshape, 1},
      {OpType::kFullyConnected, 1},
      {OpType::kSoftmax, 1}},
     {{1, 49, 10, 1}, 0.584703f, 83},
     {{1, 12}, 1.0f / 256, -128}},
    {"mlperf-tiny/ad_fcae_int8.tflite",
     {{OpType::kFullyConnected, 10}},
     {{1, 640}, 0.391015f, 89},
     {{1, 640}, 0.364498f, 96}},
    {"tflite-micro/hello_world_int8.tflite",
     {{OpType::kFullyConnected, 3}},
     {{1, 1}, 0.02448f, -128},
     {{1, 1}, 0.008291f, 5}},
    {"pytorch-export/mobilenet_v2_int8_1x3x224x224.tflite",
     {{OpType::kTranspose, 1},
      {OpType::kPad, 18},
      {OpType::kConv2D, 35},
      {OpType::kDepthwiseConv2D, 17},
      {OpType::kAdd, 10},
      {OpType::kMean, 1},
      {OpType::kReshape, 1},
      {OpType::kFullyConnected, 1}},
     {{1, 3, 224, 224}, 0.018631f, -14},
     {{1, 1000}, 0.113735f, -24}},
};

void ExpectTensor(const compiler::Tensor& t, const TensorFacts& facts) {
  EXPECT_EQ(t.shape, facts.shape);
  EXPECT_EQ(t.type, compiler::DataType::kInt8);
  ASSERT_EQ(t.quant.scale.size(), 1u);
  // The facts carry 6 significant digits (flatc's JSON output).
  EXPECT_NEAR(t.quant.scale[0], facts.scale, facts.scale * 1e-4f);
  EXPECT_EQ(t.quant.zp(), facts.zero_point);
}

class RealModelImportTest : public ::testing::TestWithParam<ModelFacts> {};

TEST_P(RealModelImportTest, ImportsWithExpectedOpsAndEdges) {
  const ModelFacts& facts = GetParam();
  std::optional<std::string> path = SharedModelPath(facts.path);
  if (!path) GTEST_SKIP() << "shared models folder absent: " << SharedModelsDir();
  const std::vector<uint8_t> bytes = ReadFile(*path);
  ASSERT_FALSE(bytes.empty()) << *path;
  std::vector<std::string> warnings;
  absl::StatusOr<Graph> g = compiler::ImportTflite(bytes, &warnings);
  ASSERT_TRUE(g.ok()) << g.status();
  for (const std::string& w : warnings) ADD_FAILURE() << "unexpected warning: " << w;
  std::map<OpType, int> counts;
  for (const compiler::Op& op : g->ops) ++counts[op.type];
  EXPECT_EQ(counts, facts.op_counts);
  ASSERT_EQ(g->inputs.size(), 1u);
  ASSERT_EQ(g->outputs.size(), 1u);
  ExpectTensor(g->tensors[g->inputs[0]], facts.input);
  ExpectTensor(g->tensors[g->outputs[0]], facts.output);
  EXPECT_EQ(compiler::VerifyGraph(*g), absl::OkStatus());
}

INSTANTIATE_TEST_SUITE_P(RealModelShared, RealModelImportTest, ::testing::ValuesIn(kFacts),
                         [](const ::testing::TestParamInfo<ModelFacts>& info) {
                           std::string name(info.param.path.substr(info.param.path.find('/') + 1));
                           name = name.substr(0, name.find('.'));
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

absl::StatusOr<Graph> ImportShared(std::string_view relative) {
  std::optional<std::string> path = SharedModelPath(relative);
  if (!path) return absl::NotFoundError("absent");
  return compiler::ImportTflite(ReadFile(*path));
}

TEST(RealModelImportTest, KwsHasFourPointwiseConvolutions) {
  absl::StatusOr<Graph> g = ImportShared("mlperf-tiny/kws_dscnn_int8.tflite");
  if (absl::IsNotFound(g.status())) GTEST_SKIP() << "shared models folder absent";
  ASSERT_TRUE(g.ok()) << g.status();
  int pointwise = 0;
  for (const compiler::Op& op : g->ops) {
    if (op.type != OpType::kConv2D) continue;
    const compiler::Tensor& w = g->input(op, 1);
    if (w.shape[1] == 1 && w.shape[2] == 1) ++pointwise;
    EXPECT_TRUE(w.quant.per_channel());
    EXPECT_EQ(w.quant.axis, 0);
  }
  EXPECT_EQ(pointwise, 4);
  EXPECT_EQ(g->ops.front().type, OpType::kConv2D);
}

TEST(RealModelImportTest, MlperfDepthwiseWeightsArePerChannelOnAxis3) {
  absl::StatusOr<Graph> g = ImportShared("mlperf-tiny/vww_96_int8.tflite");
  if (absl::IsNotFound(g.status())) GTEST_SKIP() << "shared models folder absent";
  ASSERT_TRUE(g.ok()) << g.status();
  for (const compiler::Op& op : g->ops) {
    if (op.type != OpType::kDepthwiseConv2D) continue;
    EXPECT_EQ(g->input(op, 1).quant.axis, 3) << g->Describe(op);
  }
}

TEST(RealModelImportTest, MobilenetStartsWithTransposeFromNchw) {
  absl::StatusOr<Graph> g = ImportShared("pytorch-export/mobilenet_v2_int8_1x3x224x224.tflite");
  if (absl::IsNotFound(g.status())) GTEST_SKIP() << "shared models folder absent";
  ASSERT_TRUE(g.ok()) << g.status();
  const compiler::Op& first = g->ops.front();
  EXPECT_EQ(first.type, OpType::kTranspose);
  EXPECT_EQ(first.inputs[0], g->inputs[0]);
  EXPECT_EQ(g->output(first).shape, (std::vector<int32_t>{1, 224, 224, 3}));
}

}  // namespace
}  // namespace boardlab::testing
