// Checks that the test-model writer produces what the TFLite format requires, independently of
// the importer: identifier, verifier, buffer 0 sentinel, both opcode encodings, option tables.

#include "tests/support/tflite_builder.h"

#include <cstdlib>
#include <string>

#include "boardlab/schema/tflite_generated.h"
#include "gtest/gtest.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"

namespace boardlab::testing {
namespace {

using compiler::OpType;

const tflite::Model* Verified(const std::vector<uint8_t>& bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!tflite::ModelBufferHasIdentifier(bytes.data()) || !tflite::VerifyModelBuffer(verifier)) {
    return nullptr;
  }
  return tflite::GetModel(bytes.data());
}

TEST(TfliteBuilderTest, WritesIdentifierVersionAndEmptySentinelBuffer) {
  std::vector<uint8_t> bytes = SingleConv2D();
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(std::string(bytes.begin() + 4, bytes.begin() + 8), "TFL3");
  const tflite::Model* model = Verified(bytes);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->version(), 3u);
  ASSERT_NE(model->buffers(), nullptr);
  ASSERT_GE(model->buffers()->size(), 1u);
  const tflite::Buffer* sentinel = model->buffers()->Get(0);
  EXPECT_TRUE(sentinel->data() == nullptr || sentinel->data()->size() == 0);
}

TEST(TfliteBuilderTest, ConstantDataIsSixteenByteAligned) {
  std::vector<uint8_t> bytes = SingleConv2D();
  const tflite::Model* model = Verified(bytes);
  ASSERT_NE(model, nullptr);
  int with_data = 0;
  for (const tflite::Buffer* buffer : *model->buffers()) {
    if (!buffer->data() || buffer->data()->size() == 0) continue;
    ++with_data;
    EXPECT_EQ((buffer->data()->data() - bytes.data()) % 16, 0);
  }
  EXPECT_EQ(with_data, 2);  // weights and bias
}

TEST(TfliteBuilderTest, WritesBothOpcodeFieldsByDefault) {
  TfliteBuilder b;
  const int in = b.AddTensor("in", {1, 4}, TflType::kInt8, PerTensor(0.1f, 0));
  const int mid = b.AddTensor("mid", {1, 4}, TflType::kInt8, PerTensor(0.1f, 0));
  const int out = b.AddTensor("out", {1, 4}, TflType::kInt8, PerTensor(0.1f, 0));
  b.AddOperator(97, {in}, {mid});
  b.AddOperator(150, {mid}, {out});  // GELU: a code above the byte field's range
  b.SetInputs({in});
  b.SetOutputs({out});
  std::vector<uint8_t> bytes = b.Finish();
  const tflite::Model* model = Verified(bytes);
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->operator_codes()->size(), 2u);
  EXPECT_EQ(model->operator_codes()->Get(0)->builtin_code(), 97);
  EXPECT_EQ(model->operator_codes()->Get(0)->deprecated_builtin_code(), 97);
  EXPECT_EQ(model->operator_codes()->Get(1)->builtin_code(), 150);
  EXPECT_EQ(model->operator_codes()->Get(1)->deprecated_builtin_code(), 127);
}

TEST(TfliteBuilderTest, OldEncodingWritesOnlyTheDeprecatedByte) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.set_opcode_encoding(OpcodeEncoding::kOld);
  std::vector<uint8_t> bytes = b.Finish();
  const tflite::Model* model = Verified(bytes);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->operator_codes()->Get(0)->builtin_code(), 0);
  EXPECT_EQ(model->operator_codes()->Get(0)->deprecated_builtin_code(), 3);
}

TEST(TfliteBuilderTest, SharesOneOpcodePerCodeAndKeepsCustomCodes) {
  TfliteBuilder b;
  const int a = b.AddTensor("a", {1, 4}, TflType::kInt8, PerTensor(0.1f, 0));
  const int c = b.AddTensor("c", {1, 4}, TflType::kInt8, PerTensor(0.1f, 0));
  const int d = b.AddTensor("d", {1, 4}, TflType::kInt8, PerTensor(0.1f, 0));
  const int e = b.AddTensor("e", {1, 4}, TflType::kInt8, PerTensor(0.1f, 0));
  b.AddOperator(19, {a}, {c});
  b.AddOperator(19, {c}, {d});
  b.AddCustomOperator("NeutronGraph", {d}, {e});
  b.SetInputs({a});
  b.SetOutputs({e});
  std::vector<uint8_t> bytes = b.Finish();
  const tflite::Model* model = Verified(bytes);
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->operator_codes()->size(), 2u);
  const tflite::OperatorCode* custom = model->operator_codes()->Get(1);
  EXPECT_EQ(custom->builtin_code(), kBuiltinCustom);
  ASSERT_NE(custom->custom_code(), nullptr);
  EXPECT_EQ(custom->custom_code()->str(), "NeutronGraph");
}

TEST(TfliteBuilderTest, ElementwiseOptionsUseTheTableOfTheOp) {
  for (OpType type : {OpType::kAdd, OpType::kSub, OpType::kMul}) {
    std::vector<uint8_t> bytes =
        SingleBinaryBuilder(type, {1, 4}, {1, 4}, Activation::kRelu6).Finish();
    const tflite::Model* model = Verified(bytes);
    ASSERT_NE(model, nullptr);
    const tflite::Operator* op = model->subgraphs()->Get(0)->operators()->Get(0);
    const tflite::BuiltinOptions expected =
        type == OpType::kAdd   ? tflite::BuiltinOptions::AddOptions
        : type == OpType::kSub ? tflite::BuiltinOptions::SubOptions
                               : tflite::BuiltinOptions::MulOptions;
    EXPECT_EQ(op->builtin_options_type(), expected) << compiler::OpTypeName(type);
  }
}

TEST(TfliteBuilderTest, ConvOptionsAndQuantizationRoundTrip) {
  ConvParams p;
  p.opts = {Padding::kValid, 2, 1, 1, 2, Activation::kRelu6};
  std::vector<uint8_t> bytes = SingleConv2D(p);
  const tflite::Model* model = Verified(bytes);
  ASSERT_NE(model, nullptr);
  const tflite::SubGraph* sg = model->subgraphs()->Get(0);
  const auto* o = sg->operators()->Get(0)->builtin_options_as_Conv2DOptions();
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->padding(), 1);
  EXPECT_EQ(o->stride_w(), 2);
  EXPECT_EQ(o->stride_h(), 1);
  EXPECT_EQ(o->dilation_h_factor(), 2);
  EXPECT_EQ(o->fused_activation_function(), 3);
  const tflite::Tensor* w = sg->tensors()->Get(sg->operators()->Get(0)->inputs()->Get(1));
  ASSERT_NE(w->quantization(), nullptr);
  EXPECT_EQ(w->quantization()->scale()->size(), 4u);
  EXPECT_EQ(w->quantization()->zero_point()->size(), 4u);
  EXPECT_EQ(w->quantization()->quantized_dimension(), 0);
}

TEST(TfliteBuilderTest, GeneratorsAreDeterministicAndSymmetric) {
  EXPECT_EQ(SingleConv2D(), SingleConv2D());
  EXPECT_EQ(TinyDsCnn(), TinyDsCnn());
  std::vector<int8_t> values = RandomInt8(10000, 42);
  for (int8_t v : values) ASSERT_NE(v, -128);
  EXPECT_EQ(values, RandomInt8(10000, 42));
  EXPECT_NE(values, RandomInt8(10000, 43));
}

TEST(TfliteBuilderTest, EveryGeneratedModelPassesTheVerifier) {
  for (int i = 0; i < compiler::kNumOpTypes; ++i) {
    const OpType type = static_cast<OpType>(i);
    EXPECT_NE(Verified(SingleOpModel(type)), nullptr) << compiler::OpTypeName(type);
  }
  EXPECT_NE(Verified(TinyDsCnn()), nullptr);
  EXPECT_NE(Verified(NchwTransposeModel()), nullptr);
  EXPECT_NE(Verified(ConvThenRelu()), nullptr);
}

TEST(TfliteBuilderTest, SeveralSubgraphsAreWritten) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.set_subgraph_count(2);
  std::vector<uint8_t> bytes = b.Finish();
  const tflite::Model* model = Verified(bytes);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->subgraphs()->size(), 2u);
}

// Regenerates the fuzzer seeds: BOARDLAB_WRITE_FUZZ_SEEDS=tests/fuzz/seeds compiler_tests
// --gtest_filter=TfliteBuilderTest.WriteFuzzSeeds. Skipped otherwise.
TEST(TfliteBuilderTest, WriteFuzzSeeds) {
  const char* dir = std::getenv("BOARDLAB_WRITE_FUZZ_SEEDS");
  if (dir == nullptr) GTEST_SKIP() << "set BOARDLAB_WRITE_FUZZ_SEEDS=<dir> to write the seeds";
  const std::pair<const char*, std::vector<uint8_t>> seeds[] = {
      {"conv2d.tflite", SingleConv2D({.in_h = 4, .in_w = 4, .in_c = 2, .out_c = 2})},
      {"depthwise.tflite", SingleDepthwise({.in_h = 4, .in_w = 4, .in_c = 2, .multiplier = 2})},
      {"fully_connected.tflite", SingleFullyConnected({.in_shape = {1, 8}, .units = 4})},
      {"add_broadcast.tflite", SingleOpModel(OpType::kAdd)},
      {"softmax.tflite", SingleSoftmax()},
      {"strided_slice.tflite", SingleOpModel(OpType::kStridedSlice)},
      {"pad.tflite", SingleOpModel(OpType::kPadV2)},
      {"batch_matmul.tflite", SingleOpModel(OpType::kBatchMatMul)},
      {"tiny_ds_cnn.tflite", TinyDsCnn()},
      {"nchw_transpose.tflite", NchwTransposeModel()},
      {"conv_relu_old_opcodes.tflite",
       [] {
         TfliteBuilder b = SingleConv2DBuilder({.in_h = 4, .in_w = 4, .out_c = 2});
         b.set_opcode_encoding(OpcodeEncoding::kOld);
         return b.Finish();
       }()},
  };
  for (const auto& [name, bytes] : seeds) {
    EXPECT_LT(bytes.size(), 20000u) << name;
    EXPECT_TRUE(WriteFile(std::string(dir) + "/" + name, bytes)) << name;
  }
}

}  // namespace
}  // namespace boardlab::testing
