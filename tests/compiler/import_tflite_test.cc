// ImportTflite on well-formed models written by the test builder: every op type, its options,
// quantization, both opcode encodings, optional inputs and the person_detect bias quirk.

#include "compiler/import_tflite.h"

#include <string>

#include "boardlab/schema/tflite_generated.h"
#include "gtest/gtest.h"
#include "tests/support/test_models.h"
#include "tests/support/tflite_builder.h"

namespace boardlab::testing {
namespace {

using compiler::Graph;
using compiler::ImportTflite;
using compiler::Op;
using compiler::OpType;

// Compares every imported tensor with the flatbuffer it came from, so that each single-op test
// also checks names, shapes, quantization and constant data.
void ExpectTensorsMatchFlatbuffer(const std::vector<uint8_t>& bytes, const Graph& graph) {
  const tflite::Model* model = tflite::GetModel(bytes.data());
  // Every subgraph's tensors, in order: the importer appends called subgraphs' after the main's.
  std::vector<const tflite::Tensor*> sources;
  for (const tflite::SubGraph* sg : *model->subgraphs()) {
    for (const tflite::Tensor* src : *sg->tensors()) sources.push_back(src);
  }
  ASSERT_EQ(graph.tensors.size(), sources.size());
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const compiler::Tensor& t = graph.tensors[i];
    const tflite::Tensor* src = sources[i];
    SCOPED_TRACE("tensor " + std::to_string(i) + " " + t.name);
    EXPECT_EQ(t.name, src->name()->str());
    EXPECT_EQ(t.shape, std::vector<int32_t>(src->shape()->begin(), src->shape()->end()));
    const tflite::QuantizationParameters* q = src->quantization();
    if (q == nullptr) {
      EXPECT_TRUE(t.quant.empty());
    } else {
      EXPECT_EQ(t.quant.scale, std::vector<float>(q->scale()->begin(), q->scale()->end()));
      EXPECT_EQ(t.quant.zero_point,
                std::vector<int64_t>(q->zero_point()->begin(), q->zero_point()->end()));
    }
    const tflite::Buffer* buffer = model->buffers()->Get(src->buffer());
    const bool has_data = buffer->data() && buffer->data()->size() > 0;
    EXPECT_EQ(t.is_constant, has_data);
    if (has_data) {
      EXPECT_EQ(t.data, std::vector<uint8_t>(buffer->data()->begin(), buffer->data()->end()));
    }
  }
}

// The IR options alternative each op type must carry after import.
size_t ExpectedOptionsIndex(OpType type) {
  switch (type) {
    case OpType::kConv2D:
    case OpType::kDepthwiseConv2D:
    case OpType::kTransposeConv:
      return 1;
    case OpType::kAveragePool2D:
    case OpType::kMaxPool2D:
    case OpType::kL2Pool2D:
      return 2;
    case OpType::kFullyConnected:
      return 3;
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kDiv:
    case OpType::kL2Normalization:
      return 4;
    case OpType::kConcatenation:
      return 5;
    case OpType::kSoftmax:
      return 6;
    case OpType::kMean:
      return 7;
    case OpType::kSqueeze:
      return 8;
    case OpType::kStridedSlice:
      return 9;
    case OpType::kResizeNearestNeighbor:
    case OpType::kResizeBilinear:
      return 10;
    case OpType::kLeakyRelu:
      return 11;
    case OpType::kBatchMatMul:
      return 12;
    case OpType::kSum:
    case OpType::kReduceMax:
    case OpType::kReduceMin:
      return 7;
    case OpType::kGather:
      return 13;
    case OpType::kPack:
    case OpType::kUnpack:
      return 14;
    case OpType::kSplit:
    case OpType::kSplitV:
      return 15;
    case OpType::kDepthToSpace:
    case OpType::kSpaceToDepth:
      return 16;
    case OpType::kMirrorPad:
      return 17;
    case OpType::kCumsum:
      return 18;
    case OpType::kSvdf:
      return 19;
    case OpType::kDetectionPostprocess:
      return 20;
    case OpType::kUnidirectionalSequenceLstm:
      return 21;
    case OpType::kIf:
    case OpType::kWhile:
      return 22;
    case OpType::kSignalWindow:
    case OpType::kSignalFftAutoScale:
    case OpType::kSignalDelay:
    case OpType::kSignalEnergy:
    case OpType::kSignalFilterBank:
    case OpType::kSignalFilterBankSquareRoot:
    case OpType::kSignalFilterBankLog:
    case OpType::kSignalPcan:
    case OpType::kSignalSpectralSubtraction:
    case OpType::kSignalRfft:
    case OpType::kSignalIrfft:
      return 23;
    case OpType::kSignalFramer:
    case OpType::kSignalStacker:
    case OpType::kSignalOverlapAdd:
    case OpType::kCircularBuffer:
      return 24;
    default:
      return 0;
  }
}

struct Imported {
  absl::StatusOr<Graph> graph;
  std::vector<std::string> warnings;
};

Imported Import(const std::vector<uint8_t>& bytes) {
  Imported result;
  result.graph = ImportTflite(bytes, &result.warnings);
  return result;
}

class ImportEveryOpTest : public ::testing::TestWithParam<int> {
 protected:
  OpType type() const { return static_cast<OpType>(GetParam()); }

  void CheckImport(const std::vector<uint8_t>& bytes) {
    if (compiler::IsResourceVariableOp(type()) || type() == OpType::kCallOnce) {
      GTEST_SKIP() << "no single-op model: tests/compiler/resource_variable_import_test.cc "
                      "imports the four ops together";
    }
    Imported r = Import(bytes);
    ASSERT_TRUE(r.graph.ok()) << r.graph.status();
    EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
    const Graph& g = *r.graph;
    ASSERT_EQ(g.ops.size(), 1u);
    const Op& op = g.ops[0];
    EXPECT_EQ(op.type, type());
    EXPECT_EQ(op.source_index, 0);
    EXPECT_EQ(op.options.index(), ExpectedOptionsIndex(type()));
    ASSERT_FALSE(op.outputs.empty());
    EXPECT_EQ(g.outputs, op.outputs);
    for (int t : op.outputs) EXPECT_EQ(g.tensors[t].producer, 0);
    ExpectTensorsMatchFlatbuffer(bytes, g);
  }
};

TEST_P(ImportEveryOpTest, ImportsSingleOpModel) { CheckImport(SingleOpModel(type())); }

TEST_P(ImportEveryOpTest, ImportsOldOpcodeEncoding) {
  if (compiler::OpTypeTfliteCode(type()) > 127) {
    GTEST_SKIP() << "the old encoding has one byte: codes above 127 need builtin_code";
  }
  TfliteBuilder b = SingleOpBuilder(type());
  b.set_opcode_encoding(OpcodeEncoding::kOld);
  CheckImport(b.Finish());
}

INSTANTIATE_TEST_SUITE_P(ImportAllOps, ImportEveryOpTest,
                         ::testing::Range(0, compiler::kNumOpTypes),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(
                               compiler::OpTypeName(static_cast<OpType>(info.param)));
                         });

TEST(ImportTfliteTest, Conv2DOptionsAndPerChannelQuantization) {
  const Conv2DOpts variants[] = {
      {Padding::kSame, 2, 2, 1, 1, Activation::kRelu},
      {Padding::kValid, 1, 1, 2, 2, Activation::kRelu6},
      {Padding::kValid, 1, 2, 1, 1, Activation::kReluN1To1},
  };
  for (const Conv2DOpts& o : variants) {
    ConvParams p{.in_h = 9, .in_w = 7, .in_c = 5, .out_c = 6};
    p.opts = o;
    Imported r = Import(SingleConv2D(p));
    ASSERT_TRUE(r.graph.ok()) << r.graph.status();
    const auto& c = r.graph->ops[0].opts<compiler::ConvOptions>();
    EXPECT_EQ(c.padding, o.padding);
    EXPECT_EQ(c.stride_w, o.stride_w);
    EXPECT_EQ(c.stride_h, o.stride_h);
    EXPECT_EQ(c.dilation_w, o.dilation_w);
    EXPECT_EQ(c.dilation_h, o.dilation_h);
    EXPECT_EQ(c.activation, o.activation);
    const compiler::Tensor& w = r.graph->input(r.graph->ops[0], 1);
    EXPECT_EQ(w.quant.scale.size(), 6u);
    EXPECT_EQ(w.quant.axis, 0);
    const compiler::Tensor& bias = r.graph->input(r.graph->ops[0], 2);
    EXPECT_EQ(bias.type, compiler::DataType::kInt32);
    EXPECT_EQ(bias.quant.scale.size(), 6u);
  }
}

TEST(ImportTfliteTest, Conv2DPerTensorWeights) {
  Imported r = Import(SingleConv2D({.per_channel = false}));
  ASSERT_TRUE(r.graph.ok()) << r.graph.status();
  EXPECT_FALSE(r.graph->input(r.graph->ops[0], 1).quant.per_channel());
}

TEST(ImportTfliteTest, DepthwiseMultiplierAndChannelAxis) {
  DepthwiseParams p{.in_c = 3, .multiplier = 2};
  p.opts = {Padding::kValid, 2, 2, 1, 1, 2, Activation::kRelu6};
  Imported r = Import(SingleDepthwise(p));
  ASSERT_TRUE(r.graph.ok()) << r.graph.status();
  const auto& c = r.graph->ops[0].opts<compiler::ConvOptions>();
  EXPECT_EQ(c.depth_multiplier, 2);
  EXPECT_EQ(c.padding, Padding::kValid);
  EXPECT_EQ(c.activation, Activation::kRelu6);
  const compiler::Tensor& w = r.graph->input(r.graph->ops[0], 1);
  EXPECT_EQ(w.quant.axis, 3);
  EXPECT_EQ(w.quant.scale.size(), 6u);
  EXPECT_EQ(r.graph->output(r.graph->ops[0]).shape, (std::vector<int32_t>{1, 3, 3, 6}));
}

TEST(ImportTfliteTest, StaleDepthMultiplierWarns) {
  TfliteBuilder b = SingleDepthwiseBuilder();
  std::get<DepthwiseConv2DOpts>(b.mutable_operator(0).options).depth_multiplier = 3;
  Imported r = Import(b.Finish());
  ASSERT_TRUE(r.graph.ok()) << r.graph.status();
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("depth_multiplier 3"), std::string::npos) << r.warnings[0];
}

TEST(ImportTfliteTest, FullyConnectedOptionsAndRows) {
  FullyConnectedParams p{.in_shape = {2, 3, 8}, .units = 5};
  p.opts = {Activation::kRelu, false, 0};
  Imported r = Import(SingleFullyConnected(p));
  ASSERT_TRUE(r.graph.ok()) << r.graph.status();
  const auto& f = r.graph->ops[0].opts<compiler::FullyConnectedOptions>();
  EXPECT_EQ(f.activation, Activation::kRelu);
  EXPECT_FALSE(f.keep_num_dims);
  EXPECT_EQ(r.graph->output(r.graph->ops[0]).shape, (std::vector<int32_t>{6, 5}));
}

TEST(ImportTfliteTest, OptionalBiasIsNoTensor) {
  const std::vector<uint8_t> models[] = {SingleConv2D({.bias = false}),
                                         SingleDepthwise({.bias = false}),
                                         SingleFullyConnected({.bias = false})};
  for (const auto& bytes : models) {
    Imported r = Import(bytes);
    ASSERT_TRUE(r.graph.ok()) << r.graph.status();
    const Op& op = r.graph->ops[0];
    ASSERT_EQ(op.inputs.size(), 3u);
    EXPECT_EQ(op.inputs[2], compiler::kNoTensor);
    EXPECT_EQ(compiler::VerifyGraph(*r.graph), absl::OkStatus());
  }
}

TEST(ImportTfliteTest, PersonDetectBiasQuirkImportsWithWarning) {
  // person_detect's 1-D biases carry quantized_dimension 3 with one scale per channel.
  Imported r = Import(SingleConv2D({.out_c = 8, .bias_quant_axis = 3}));
  ASSERT_TRUE(r.graph.ok()) << r.graph.status();
  const compiler::Tensor& bias = r.graph->input(r.graph->ops[0], 2);
  EXPECT_EQ(bias.quant.axis, 0);
  EXPECT_EQ(bias.quant.scale.size(), 8u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("quantized_dimension 3"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("conv/bias"), std::string::npos) << r.warnings[0];
}

TEST(ImportTfliteTest, ElementwiseActivationAndBroadcast) {
  for (OpType type : {OpType::kAdd, OpType::kSub, OpType::kMul}) {
    Imported r =
        Import(SingleBinaryBuilder(type, {1, 5, 1, 8}, {4, 1}, Activation::kRelu6).Finish());
    ASSERT_TRUE(r.graph.ok()) << r.graph.status();
    EXPECT_EQ(r.graph->ops[0].opts<compiler::ElementwiseOptions>().activation, Activation::kRelu6);
    EXPECT_EQ(r.graph->output(r.graph->ops[0]).shape, (std::vector<int32_t>{1, 5, 4, 8}));
  }
}

TEST(ImportTfliteTest, OptionValuesOfEveryOptionsTable) {
  auto first_op = [](OpType type) {
    absl::StatusOr<Graph> g = ImportTflite(SingleOpModel(type));
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? g->ops[0] : Op{};
  };
  const auto pool = first_op(OpType::kMaxPool2D).opts<compiler::PoolOptions>();
  EXPECT_EQ(pool.padding, Padding::kValid);
  EXPECT_EQ(pool.filter_w, 2);
  EXPECT_EQ(pool.filter_h, 2);
  EXPECT_EQ(pool.stride_w, 2);
  EXPECT_EQ(first_op(OpType::kConcatenation).opts<compiler::ConcatOptions>().axis, 3);
  EXPECT_TRUE(first_op(OpType::kMean).opts<compiler::ReducerOptions>().keep_dims);
  EXPECT_EQ(first_op(OpType::kSqueeze).opts<compiler::SqueezeOptions>().squeeze_dims,
            (std::vector<int32_t>{1, 2}));
  const auto slice = first_op(OpType::kStridedSlice).opts<compiler::StridedSliceOptions>();
  EXPECT_EQ(slice.begin_mask, 9);
  EXPECT_EQ(slice.end_mask, 9);
  const auto resize = first_op(OpType::kResizeNearestNeighbor).opts<compiler::ResizeOptions>();
  EXPECT_FALSE(resize.align_corners);
  EXPECT_TRUE(resize.half_pixel_centers);
  EXPECT_FLOAT_EQ(first_op(OpType::kLeakyRelu).opts<compiler::LeakyReluOptions>().alpha, 0.1f);
  const auto bmm = first_op(OpType::kBatchMatMul).opts<compiler::BatchMatMulOptions>();
  EXPECT_FALSE(bmm.adj_x);
  EXPECT_TRUE(bmm.adj_y);
}

TEST(ImportTfliteTest, SoftmaxBetaAndFixedOutputQuantization) {
  absl::StatusOr<Graph> g = ImportTflite(SingleSoftmax(12, 0.5f));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FLOAT_EQ(g->ops[0].opts<compiler::SoftmaxOptions>().beta, 0.5f);
  const compiler::Tensor& out = g->output(g->ops[0]);
  EXPECT_FLOAT_EQ(out.quant.scale[0], 1.0f / 256);
  EXPECT_EQ(out.quant.zp(), -128);
}

TEST(ImportTfliteTest, ConcatenationNegativeAxis) {
  TfliteBuilder b = SingleOpBuilder(OpType::kConcatenation);
  std::get<ConcatenationOpts>(b.mutable_operator(0).options).axis = -1;
  absl::StatusOr<Graph> g = ImportTflite(b.Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->ops[0].opts<compiler::ConcatOptions>().axis, -1);
}

TEST(ImportTfliteTest, TinyDsCnnChainsSevenOps) {
  absl::StatusOr<Graph> g = ImportTflite(TinyDsCnn());
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<OpType> expected = {
      OpType::kConv2D,  OpType::kDepthwiseConv2D, OpType::kConv2D, OpType::kAveragePool2D,
      OpType::kReshape, OpType::kFullyConnected,  OpType::kSoftmax};
  ASSERT_EQ(g->ops.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(g->ops[i].type, expected[i]) << i;
    if (i > 0) {
      EXPECT_EQ(g->tensors[g->ops[i].inputs[0]].producer, static_cast<int>(i - 1)) << i;
    }
  }
  EXPECT_EQ(g->name, "tiny_ds_cnn");
  EXPECT_EQ(g->ops[0].opts<compiler::ConvOptions>().activation, Activation::kRelu);
  EXPECT_EQ(g->tensors[g->inputs[0]].shape, (std::vector<int32_t>{1, 49, 10, 1}));
  EXPECT_EQ(g->tensors[g->outputs[0]].shape, (std::vector<int32_t>{1, 12}));
  EXPECT_EQ(compiler::VerifyGraph(*g), absl::OkStatus());
}

TEST(ImportTfliteTest, NchwModelHasTransposesAtTheEdges) {
  absl::StatusOr<Graph> g = ImportTflite(NchwTransposeModel());
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->ops.size(), 3u);
  EXPECT_EQ(g->ops[0].type, OpType::kTranspose);
  EXPECT_EQ(g->ops[1].type, OpType::kConv2D);
  EXPECT_EQ(g->ops[2].type, OpType::kTranspose);
  EXPECT_EQ(g->tensors[g->inputs[0]].shape, (std::vector<int32_t>{1, 3, 16, 16}));
  EXPECT_EQ(g->tensors[g->outputs[0]].shape, (std::vector<int32_t>{1, 4, 16, 16}));
}

TEST(ImportTfliteTest, ConvThenSeparateRelu) {
  absl::StatusOr<Graph> g = ImportTflite(ConvThenRelu());
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->ops.size(), 2u);
  EXPECT_EQ(g->ops[0].opts<compiler::ConvOptions>().activation, Activation::kNone);
  EXPECT_EQ(g->ops[1].type, OpType::kRelu);
  const compiler::Tensor& between = g->tensors[g->ops[0].outputs[0]];
  EXPECT_EQ(between.consumers, std::vector<int>{1});
}

TEST(ImportTfliteTest, ConstantDataIsCopiedOutOfTheFile) {
  absl::StatusOr<Graph> g;
  std::vector<uint8_t> expected;
  {
    std::vector<uint8_t> bytes = SingleConv2D();
    g = ImportTflite(bytes);
    ASSERT_TRUE(g.ok()) << g.status();
    expected = g->input(g->ops[0], 1).data;
    std::fill(bytes.begin(), bytes.end(), 0);
  }
  EXPECT_EQ(g->input(g->ops[0], 1).data, expected);
  EXPECT_EQ(expected.size(), 4u * 3 * 3 * 3);
}

TEST(ImportTfliteTest, NullWarningsPointerIsAllowed) {
  absl::StatusOr<Graph> g = ImportTflite(SingleConv2D({.bias_quant_axis = 3}), nullptr);
  EXPECT_TRUE(g.ok()) << g.status();
}

}  // namespace
}  // namespace boardlab::testing
