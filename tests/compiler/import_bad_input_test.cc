// ImportTflite on malformed and unsupported models: every case must return the right status code
// with a message that says what and where, and nothing may crash (the suite runs under ASan and
// UBSan). Broken models are written by the test builder, then one field is changed.

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include "boardlab/schema/tflite_generated.h"
#include "compiler/import_tflite.h"
#include "gtest/gtest.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"
#include "tests/support/tflite_builder.h"

namespace boardlab::testing {
namespace {

using compiler::ImportTflite;
using compiler::OpType;

int32_t Code(OpType type) { return compiler::OpTypeTfliteCode(type); }

// Imports a copy of exactly `size` bytes, so that ASan reports any read past the end.
absl::Status ImportPrefix(const std::vector<uint8_t>& bytes, size_t size) {
  std::vector<uint8_t> copy(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(size));
  return ImportTflite(copy).status();
}

void ExpectError(const std::vector<uint8_t>& bytes, absl::StatusCode code,
                 const std::vector<std::string>& phrases) {
  absl::StatusOr<compiler::Graph> graph = ImportTflite(bytes);
  ASSERT_FALSE(graph.ok()) << "imported a bad model";
  EXPECT_EQ(graph.status().code(), code) << graph.status();
  for (const std::string& phrase : phrases) {
    EXPECT_NE(graph.status().message().find(phrase), std::string_view::npos)
        << "missing \"" << phrase << "\" in: " << graph.status().message();
  }
}

void ExpectInvalid(const TfliteBuilder& b, const std::vector<std::string>& phrases) {
  ExpectError(b.Finish(), absl::StatusCode::kInvalidArgument, phrases);
}

void ExpectUnimplemented(const TfliteBuilder& b, const std::vector<std::string>& phrases) {
  ExpectError(b.Finish(), absl::StatusCode::kUnimplemented, phrases);
}

// Index of the conv weights / bias / output tensors in SingleConv2DBuilder's models.
constexpr int kConvInput = 0;
constexpr int kConvWeights = 1;
constexpr int kConvBias = 2;
constexpr int kConvOutput = 3;

ConvParams SmallConv() {
  ConvParams p;
  p.in_h = 4;
  p.in_w = 4;
  p.in_c = 2;
  p.out_c = 2;
  return p;
}

// ---------------------------------------------------------------------------------------------
// Container-level damage.

TEST(ImportBadInputTest, EveryPrefixOfASmallModelIsRejected) {
  const std::vector<uint8_t> bytes = SingleConv2D(SmallConv());
  ASSERT_TRUE(ImportTflite(bytes).ok());
  for (size_t size = 0; size < bytes.size(); ++size) {
    absl::Status s = ImportPrefix(bytes, size);
    ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << "prefix " << size << ": " << s;
  }
}

TEST(ImportBadInputTest, PrefixesOfARealModelAreRejected) {
  std::optional<std::string> path = SharedModelPath("mlperf-tiny/kws_dscnn_int8.tflite");
  if (!path) GTEST_SKIP() << "shared models folder absent: " << SharedModelsDir();
  const std::vector<uint8_t> bytes = ReadFile(*path);
  ASSERT_FALSE(bytes.empty());
  for (size_t size = 0; size < bytes.size(); size += (size < 256 ? 1 : 251)) {
    absl::Status s = ImportPrefix(bytes, size);
    ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << "prefix " << size << ": " << s;
  }
}

TEST(ImportBadInputTest, TooShortFile) {
  ExpectError({'T', 'F', 'L'}, absl::StatusCode::kInvalidArgument, {"3 bytes", "too short"});
  ExpectError({}, absl::StatusCode::kInvalidArgument, {"0 bytes"});
}

TEST(ImportBadInputTest, WrongIdentifier) {
  std::vector<uint8_t> bytes = SingleConv2D(SmallConv());
  bytes[4] = 'A';
  bytes[5] = 'B';
  bytes[6] = 'C';
  bytes[7] = 0x01;
  ExpectError(bytes, absl::StatusCode::kInvalidArgument, {"identifier is 'ABC?'", "TFL3"});
}

TEST(ImportBadInputTest, RandomBytesAreRejected) {
  std::mt19937 rng(1234);
  for (int i = 0; i < 300; ++i) {
    std::vector<uint8_t> bytes(8 + rng() % 600);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    if (i % 2 == 0) std::copy_n("TFL3", 4, bytes.begin() + 4);  // get past the identifier
    absl::Status s = ImportTflite(bytes).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << "seed 1234, case " << i << s;
  }
}

TEST(ImportBadInputTest, SingleByteCorruptionNeverCrashes) {
  const std::vector<uint8_t> original = TinyDsCnn();
  std::mt19937 rng(99);
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> bytes = original;
    bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    absl::StatusOr<compiler::Graph> g = ImportTflite(bytes);
    if (g.ok()) {
      EXPECT_EQ(compiler::VerifyGraph(*g), absl::OkStatus()) << "case " << i;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Index fields.

TEST(ImportBadInputTest, OperatorTensorIndexOutOfRange) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_operator(0).inputs[0] = 99;
  ExpectInvalid(b, {"CONV_2D #0", "tensor index 99 out of range", "4 tensors"});
  b = SingleConv2DBuilder();
  b.mutable_operator(0).inputs[1] = -2;
  ExpectInvalid(b, {"CONV_2D #0", "tensor index -2 out of range"});
  b = SingleConv2DBuilder();
  b.mutable_operator(0).outputs[0] = -1;  // -1 marks an absent input; outputs cannot be absent
  ExpectInvalid(b, {"CONV_2D #0", "tensor index -1 out of range"});
}

TEST(ImportBadInputTest, SubgraphInputIndexOutOfRange) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.SetInputs({7});
  ExpectInvalid(b, {"subgraph inputs", "tensor index 7 out of range"});
}

TEST(ImportBadInputTest, BufferIndexOutOfRange) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvWeights).buffer = 50;
  ExpectInvalid(b, {"tensor 1 'conv/weights'", "buffer 50 out of range", "3 buffers"});
}

TEST(ImportBadInputTest, OpcodeIndexOutOfRange) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_operator(0).opcode_index = 5;
  ExpectInvalid(b, {"operator 0", "opcode_index 5 out of range", "1 operator codes"});
}

// ---------------------------------------------------------------------------------------------
// Tensors: data, quantization, shapes, types.

TEST(ImportBadInputTest, BufferWithWrongByteCount) {
  TfliteBuilder b = SingleConv2DBuilder();
  const int32_t three[] = {1, 2, 3};
  b.mutable_tensor(kConvBias).buffer = b.AddBuffer(Int32Bytes(three));
  ExpectInvalid(b, {"tensor 2 'conv/bias'", "holds 12 bytes", "shape [4] int32 needs 16"});
}

TEST(ImportBadInputTest, ScaleAndZeroPointCountMismatch) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvWeights).quant.zero_points.pop_back();
  ExpectInvalid(b, {"tensor 1 'conv/weights'", "4 quantization scales but 3 zero points"});
}

TEST(ImportBadInputTest, QuantizedDimensionOutOfRange) {
  for (int32_t axis : {4, -1, 100}) {
    TfliteBuilder b = SingleConv2DBuilder();
    b.mutable_tensor(kConvWeights).quant.axis = axis;
    ExpectInvalid(b, {"tensor 1 'conv/weights'", "quantized_dimension " + std::to_string(axis),
                      "outside the tensor's rank 4"});
  }
}

TEST(ImportBadInputTest, PerChannelCountDoesNotMatchTheAxis) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvWeights).quant.axis = 1;  // kernel height 3, but 4 scales
  ExpectInvalid(b, {"tensor 1 'conv/weights'", "4 per-channel scales but dimension 1 has size 3"});
}

TEST(ImportBadInputTest, NonPositiveScale) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvInput).quant.scales = {0.0f};
  ExpectInvalid(b, {"tensor 0 'input'", "scale 0 is not a positive number"});
}

TEST(ImportBadInputTest, ZeroSizedDimension) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvInput).shape = {1, 0, 8, 3};
  ExpectInvalid(b, {"tensor 0 'input'", "dimension 0 in shape [1,0,8,3]"});
}

TEST(ImportBadInputTest, NegativeDimension) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvOutput).shape = {1, -1, 8, 4};
  ExpectInvalid(b, {"tensor 3 'conv/out'", "dimension -1 in shape [1,-1,8,4]"});
}

TEST(ImportBadInputTest, HugeShapeOver2GiB) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvInput).shape = {65536, 65536, 8, 3};
  ExpectInvalid(b, {"tensor 0 'input'", "larger than 2 GiB"});
  b = SingleConv2DBuilder();
  b.mutable_tensor(kConvInput).shape = {2147483647, 2147483647, 2147483647, 2147483647};
  ExpectInvalid(b, {"tensor 0 'input'", "larger than 2 GiB"});
}

TEST(ImportBadInputTest, RankAboveSix) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvInput).shape = {1, 1, 1, 1, 1, 1, 1};
  ExpectInvalid(b, {"tensor 0 'input'", "rank 7 exceeds 6"});
}

TEST(ImportBadInputTest, UnsupportedTensorType) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvInput).type = static_cast<int8_t>(TflType::kFloat16);
  ExpectUnimplemented(b, {"tensor 0 'input'", "TensorType 1"});
}

// ---------------------------------------------------------------------------------------------
// Operator checks.

TEST(ImportBadInputTest, StrideZeroConv) {
  TfliteBuilder b = SingleConv2DBuilder();
  std::get<Conv2DOpts>(b.mutable_operator(0).options).stride_w = 0;
  ExpectInvalid(b, {"CONV_2D #0", "stride 1x0 must be at least 1"});
}

TEST(ImportBadInputTest, ConvWithoutOptionsTable) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_operator(0).options = std::monostate{};
  ExpectInvalid(b, {"CONV_2D #0", "options table missing"});
  b = SingleConv2DBuilder();
  b.mutable_operator(0).options = Pool2DOpts{};  // a table of the wrong type
  ExpectInvalid(b, {"CONV_2D #0", "options table missing or of the wrong type"});
}

TEST(ImportBadInputTest, UnknownActivationAndPadding) {
  TfliteBuilder b = SingleConv2DBuilder();
  std::get<Conv2DOpts>(b.mutable_operator(0).options).activation =
      static_cast<compiler::Activation>(9);
  ExpectInvalid(b, {"CONV_2D #0", "unknown fused activation 9"});
  b = SingleConv2DBuilder();
  std::get<Conv2DOpts>(b.mutable_operator(0).options).padding = static_cast<compiler::Padding>(2);
  ExpectInvalid(b, {"CONV_2D #0", "unknown padding 2"});
}

TEST(ImportBadInputTest, DepthwiseChannelMismatch) {
  TfliteBuilder b = SingleDepthwiseBuilder();  // weights [1,3,3,4]
  b.mutable_tensor(0).shape = {1, 8, 8, 3};
  ExpectInvalid(b,
                {"DEPTHWISE_CONV_2D #0", "depthwise weights [1,3,3,4]", "input with 3 channels"});
}

TEST(ImportBadInputTest, ConvOutputShapeMismatch) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvOutput).shape = {1, 8, 8, 5};
  ExpectInvalid(
      b, {"CONV_2D #0", "output 'conv/out' has shape [1,8,8,5]", "the inputs give [1,8,8,4]"});
}

TEST(ImportBadInputTest, ConvInputChannelMismatch) {
  TfliteBuilder b = SingleConv2DBuilder();  // weights [4,3,3,3]
  b.mutable_tensor(kConvInput).shape = {1, 8, 8, 5};
  ExpectInvalid(b, {"CONV_2D #0", "weights expect 3 input channels, input has 5"});
}

TEST(ImportBadInputTest, GroupsMustDivideTheOutputChannels) {
  TfliteBuilder b = SingleConv2DBuilder();  // weights [4,3,3,3]
  b.mutable_tensor(kConvInput).shape = {1, 8, 8, 9};
  ExpectInvalid(b, {"CONV_2D #0",
                    "3 groups (input 9 channels, weights 3) do not divide the 4 "
                    "output channels"});
}

TEST(ImportBadInputTest, GroupedConvImports) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvInput).shape = {1, 8, 8, 6};
  EXPECT_TRUE(ImportTflite(b.Finish()).ok());
}

TEST(ImportBadInputTest, BiasWithWrongElementCount) {
  ConvParams p;
  TfliteBuilder b = SingleConv2DBuilder(p);
  const int32_t five[] = {1, 2, 3, 4, 5};
  b.mutable_tensor(kConvBias).buffer = b.AddBuffer(Int32Bytes(five));
  b.mutable_tensor(kConvBias).shape = {5};
  b.mutable_tensor(kConvBias).quant = {};
  ExpectInvalid(b, {"CONV_2D #0", "bias 'conv/bias' has 5 elements for 4 output channels"});
}

TEST(ImportBadInputTest, NonSymmetricWeightsAreUnimplemented) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_tensor(kConvWeights).quant.zero_points[2] = 3;
  ExpectUnimplemented(b, {"CONV_2D #0", "zero point 3"});
}

TEST(ImportBadInputTest, SoftmaxWithWrongOutputQuantization) {
  TfliteBuilder b = SingleOpBuilder(OpType::kSoftmax);
  b.mutable_tensor(1).quant = PerTensor(0.1f, 0);
  ExpectInvalid(b, {"SOFTMAX #0", "must be (0.00390625, -128)"});
}

TEST(ImportBadInputTest, ShuffledFullyConnectedWeightsAreUnimplemented) {
  TfliteBuilder b = SingleFullyConnectedBuilder();
  std::get<FullyConnectedOpts>(b.mutable_operator(0).options).weights_format = 1;
  ExpectUnimplemented(b, {"FULLY_CONNECTED #0", "shuffled"});
}

TEST(ImportBadInputTest, MissingRequiredInput) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_operator(0).inputs[1] = -1;
  ExpectInvalid(b, {"CONV_2D #0", "input 1 is missing"});
}

// ---------------------------------------------------------------------------------------------
// Unsupported operators and model structure.

TfliteBuilder ReluChainWithOp(int32_t code, const std::string& custom_code = "") {
  TfliteBuilder b;
  const int a = b.AddTensor("a", {1, 8}, TflType::kInt8, PerTensor(0.1f, 0));
  const int c = b.AddTensor("c", {1, 8}, TflType::kInt8, PerTensor(0.1f, 0));
  const int d = b.AddTensor("d", {1, 8}, TflType::kInt8, PerTensor(0.1f, 0));
  b.AddOperator(Code(OpType::kRelu), {a}, {c});
  if (custom_code.empty()) {
    b.AddOperator(code, {c}, {d});
  } else {
    b.AddCustomOperator(custom_code, {c}, {d});
  }
  b.SetInputs({a});
  b.SetOutputs({d});
  return b;
}

TEST(ImportBadInputTest, UnsupportedBuiltinOpIsNamed) {
  ExpectUnimplemented(ReluChainWithOp(kBuiltinLshProjection),
                      {"operator 1 is LSH_PROJECTION", "does not support", "CONV_2D"});
  ExpectUnimplemented(ReluChainWithOp(150), {"operator 1 is GELU"});
  ExpectUnimplemented(ReluChainWithOp(300), {"operator 1 is builtin code 300"});
}

TEST(ImportBadInputTest, UnsupportedOldEncodingOpIsNamed) {
  TfliteBuilder b = ReluChainWithOp(kBuiltinLshProjection);
  b.set_opcode_encoding(OpcodeEncoding::kOld);
  ExpectUnimplemented(b, {"operator 1 is LSH_PROJECTION"});
}

TEST(ImportBadInputTest, CustomOpIsNamed) {
  ExpectUnimplemented(ReluChainWithOp(kBuiltinCustom, "NeutronGraph"),
                      {"operator 1 is CUSTOM 'NeutronGraph'"});
}

// A model with several problems gets one message naming every one of them, each where it is.
TEST(ImportBadInputTest, EveryUnsupportedThingIsListedInOneMessage) {
  TfliteBuilder b;
  const QuantParams q = PerTensor(0.1f, 0);
  const int a = b.AddTensor("a", {1, 8}, TflType::kInt8, q);
  const int c = b.AddTensor("c", {1, 8}, TflType::kInt8, q);
  const int d = b.AddTensor("d", {1, 8}, TflType::kInt8, q);
  const int e = b.AddTensor("e", {1, 8}, TflType::kInt8, q);
  const int half = b.AddTensor("half", {1, 8}, TflType::kFloat16);
  const int wide = b.AddTensor("wide", {1, 8}, TflType::kInt16, PerTensor(0.1f, 0));
  b.AddOperator(Code(OpType::kRelu), {a}, {c});
  b.AddOperator(kBuiltinLshProjection, {c}, {d});
  b.AddCustomOperator("ethos-u", {d}, {e});
  b.AddOperator(Code(OpType::kHardSwish), {e}, {wide});
  b.SetInputs({a, half});
  b.SetOutputs({wide});
  ExpectUnimplemented(
      b, {"unsupported model: 4 problems: ", "tensor 4 'half' has TensorType 1 (FLOAT16)",
          "operator 1 is LSH_PROJECTION, which boardlab does not support",
          "operator 2 is CUSTOM 'ethos-u', which boardlab does not support",
          "HARD_SWISH #3: output 'wide' is int16; TFLite Micro has no 16x8", "supported: ADD"});
}

// Only what is unsupported is listed; a model that is also malformed is reported as malformed.
TEST(ImportBadInputTest, MalformedOperandWinsOverUnsupportedOperators) {
  TfliteBuilder b = ReluChainWithOp(kBuiltinLshProjection);
  b.mutable_operator(0).inputs[0] = 9;
  ExpectInvalid(b, {"RELU #0", "tensor index 9 out of range"});
}

// A subgraph nothing calls is imported (and checked) like TFLite Micro prepares it, then left
// without ops: TFLite Micro never runs it.
TEST(ImportBadInputTest, AnUncalledSubgraphIsImportedButUnused) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.set_subgraph_count(2);
  absl::StatusOr<compiler::Graph> graph = ImportTflite(b.Finish());
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_EQ(graph->subgraphs.size(), 1u);
  EXPECT_TRUE(graph->subgraphs[0].ops.empty());
  EXPECT_EQ(graph->ops.size(), 1u);
}

TEST(ImportBadInputTest, NoOperators) {
  TfliteBuilder b;
  const int a = b.AddTensor("a", {1, 8}, TflType::kInt8, PerTensor(0.1f, 0));
  b.SetInputs({a});
  b.SetOutputs({a});
  ExpectInvalid(b, {"no operators"});
}

TEST(ImportBadInputTest, NoInputsOrOutputs) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.SetOutputs({});
  ExpectInvalid(b, {"no inputs or no outputs"});
}

TEST(ImportBadInputTest, OpReadsTensorNeverWritten) {
  TfliteBuilder b = SingleOpBuilder(OpType::kAdd);
  b.SetInputs({0});  // input_b (tensor 1) is neither a graph input nor written by an op
  ExpectInvalid(b, {"ADD #0", "reads tensor 1 'input_b' before any operator writes it"});
}

TEST(ImportBadInputTest, OpsOutOfTopologicalOrder) {
  TfliteBuilder b;
  const int a = b.AddTensor("a", {1, 8}, TflType::kInt8, PerTensor(0.1f, 0));
  const int c = b.AddTensor("c", {1, 8}, TflType::kInt8, PerTensor(0.1f, 0));
  const int d = b.AddTensor("d", {1, 8}, TflType::kInt8, PerTensor(0.1f, 0));
  b.AddOperator(Code(OpType::kRelu), {c}, {d});
  b.AddOperator(Code(OpType::kRelu), {a}, {c});
  b.SetInputs({a});
  b.SetOutputs({d});
  ExpectInvalid(b, {"RELU #0", "reads tensor 1 'c' before any operator writes it"});
}

TEST(ImportBadInputTest, TensorWrittenTwice) {
  TfliteBuilder b;
  const int a = b.AddTensor("a", {1, 8}, TflType::kInt8, PerTensor(0.1f, 0));
  const int c = b.AddTensor("c", {1, 8}, TflType::kInt8, PerTensor(0.1f, 0));
  b.AddOperator(Code(OpType::kRelu), {a}, {c});
  b.AddOperator(Code(OpType::kRelu6), {a}, {c});
  b.SetInputs({a});
  b.SetOutputs({c});
  ExpectInvalid(b, {"tensor 1 'c' is written by two operators"});
}

TEST(ImportBadInputTest, OpWritesConstant) {
  TfliteBuilder b = SingleConv2DBuilder();
  b.mutable_operator(0).outputs[0] = kConvWeights;
  ExpectInvalid(b, {"CONV_2D #0", "writes constant tensor 1 'conv/weights'"});
}

TEST(ImportBadInputTest, GraphOutputNeverWritten) {
  TfliteBuilder b = SingleConv2DBuilder();
  const int orphan = b.AddTensor("orphan", {1, 4}, TflType::kInt8, PerTensor(0.1f, 0));
  b.SetOutputs({kConvOutput, orphan});
  ExpectInvalid(b, {"graph output tensor 4 'orphan' is never written"});
}

// ---------------------------------------------------------------------------------------------
// Operand values that overflow 32-bit shape arithmetic, and an absent CONCATENATION input. The
// importer must reject them with a status (it computes shape arithmetic in 64 bits); each one
// used to abort under UBSan or ASan.

TEST(ImportBadInputTest, PoolWithHugeStrideSamePadding) {
  TfliteBuilder b = SingleOpBuilder(OpType::kMaxPool2D);
  auto& o = std::get<Pool2DOpts>(b.mutable_operator(0).options);
  o.padding = Padding::kSame;
  o.stride_h = 2147483647;
  ExpectInvalid(b, {"MAX_POOL_2D #0"});
}

TEST(ImportBadInputTest, DepthwiseWithHugeDepthMultiplier) {
  TfliteBuilder b = SingleDepthwiseBuilder();
  std::get<DepthwiseConv2DOpts>(b.mutable_operator(0).options).depth_multiplier = 1073741824;
  absl::StatusOr<compiler::Graph> g = ImportTflite(b.Finish());  // stale multiplier: a warning
  EXPECT_TRUE(g.ok()) << g.status();
}

TEST(ImportBadInputTest, PadWithHugePaddings) {
  TfliteBuilder b = SingleOpBuilder(OpType::kPad);
  const int32_t pads[] = {0, 0, 2147483647, 1, 1, 1, 0, 0};
  b.mutable_tensor(1).buffer = b.AddBuffer(Int32Bytes(pads));
  ExpectInvalid(b, {"PAD #0"});
}

TEST(ImportBadInputTest, SliceWithHugeBegin) {
  TfliteBuilder b = SingleOpBuilder(OpType::kSlice);
  const int32_t begin[] = {0, 2147483647, 0, 0};
  b.mutable_tensor(1).buffer = b.AddBuffer(Int32Bytes(begin));
  ExpectInvalid(b, {"SLICE #0", "out of range"});
  b = SingleOpBuilder(OpType::kSlice);
  const int32_t negative[] = {0, -2147483647 - 1, 0, 0};
  const int32_t to_end[] = {1, -1, 4, 4};
  b.mutable_tensor(1).buffer = b.AddBuffer(Int32Bytes(negative));
  b.mutable_tensor(2).buffer = b.AddBuffer(Int32Bytes(to_end));
  ExpectInvalid(b, {"SLICE #0", "out of range"});
}

TEST(ImportBadInputTest, StridedSliceWithMinimumStride) {
  TfliteBuilder b = SingleOpBuilder(OpType::kStridedSlice);
  const int32_t strides[] = {1, -2147483647 - 1, 2, 1};
  b.mutable_tensor(3).buffer = b.AddBuffer(Int32Bytes(strides));
  absl::Status s = ImportTflite(b.Finish()).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

TEST(ImportBadInputTest, ConcatenationWithAbsentInput) {
  TfliteBuilder b = SingleOpBuilder(OpType::kConcatenation);
  b.mutable_operator(0).inputs[1] = -1;
  ExpectInvalid(b, {"CONCATENATION #0"});
}

TEST(ImportBadInputTest, ConcatenationOverflowingInt32) {
  TfliteBuilder b;
  const int x = b.AddTensor("x", {1073741824}, TflType::kInt8, PerTensor(0.1f, 0));
  const int y = b.AddTensor("y", {1073741824}, TflType::kInt8, PerTensor(0.1f, 0));
  const int z = b.AddTensor("z", {1}, TflType::kInt8, PerTensor(0.1f, 0));
  b.AddOperator(Code(OpType::kConcatenation), {x, y}, {z}, ConcatenationOpts{});
  b.SetInputs({x, y});
  b.SetOutputs({z});
  ExpectInvalid(b, {"CONCATENATION #0"});
}

// Found by the fuzzer: an op that writes a graph input (here in place: SOFTMAX reads and writes
// tensor 1, which is also listed as a graph input) passes CheckTopologicalOrder and then fails
// VerifyGraph with an Internal error instead of InvalidArgument.
TEST(ImportBadInputTest, OpWritesAGraphInput) {
  TfliteBuilder b = SingleOpBuilder(OpType::kSoftmax);
  b.mutable_operator(0).inputs = {1};
  b.SetInputs({0, 1});
  ExpectInvalid(b, {"SOFTMAX #0", "'output'"});
}

// Found by the fuzzer: the FlatBuffers verifier only checks 4-byte alignment of a vector's length,
// so an int64 zero_point vector can sit at an address that is 4 mod 8, and reading it with
// Vector<int64_t>::Get is a misaligned load (UBSan: alignment). This shifts everything after the
// 8-byte header by 4 bytes, which keeps every offset valid. The importer should either read the
// zero points bytewise or reject the file; it must not abort.
TEST(ImportBadInputTest, MisalignedZeroPointVector) {
  std::vector<uint8_t> bytes = SingleConv2D(SmallConv());
  bytes.insert(bytes.begin() + 8, 4, 0);
  uint32_t root = 0;
  std::memcpy(&root, bytes.data(), sizeof(root));
  root += 4;
  std::memcpy(bytes.data(), &root, sizeof(root));
  absl::StatusOr<compiler::Graph> g = ImportTflite(bytes);
  if (!g.ok()) {
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
  }
}

}  // namespace
}  // namespace boardlab::testing
