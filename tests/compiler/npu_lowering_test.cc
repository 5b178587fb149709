#include "compiler/npu_lowering.h"

#include <cstring>

#include "boardlab/schema/npu_payload_generated.h"
#include "compiler/quantization.h"
#include "gtest/gtest.h"
#include "tests/support/ir_builders.h"

namespace boardlab::compiler {
namespace {

namespace fb = ::boardlab::npu;

using testing::Activations;
using testing::MakeOp;

// input [1,4,4,3] -> CONV_2D 3x3 SAME + RELU6 (10 channels, per-channel) -> MAX_POOL 2x2/2 ->
// output [1,2,2,10]; one NPU partition, memory plan by hand.
Compilation SmallConvGraph() {
  Compilation c;
  Graph& g = c.graph;
  g.AddTensor(Activations("input", {1, 4, 4, 3}, 0.5f, -1));
  Tensor w;
  w.name = "filter";
  w.shape = {10, 3, 3, 3};
  w.is_constant = true;
  for (int oc = 0; oc < 10; ++oc) {
    w.quant.scale.push_back(0.01f * (oc + 1));
    w.quant.zero_point.push_back(0);
  }
  for (int i = 0; i < 270; ++i) w.data.push_back(static_cast<uint8_t>(i % 255 - 127));
  g.AddTensor(w);
  Tensor b;
  b.name = "bias";
  b.shape = {10};
  b.type = DataType::kInt32;
  b.is_constant = true;
  for (int32_t v = 0; v < 10; ++v) {
    const int32_t value = (v - 5) * 1000;
    const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
    b.data.insert(b.data.end(), bytes, bytes + 4);
  }
  g.AddTensor(b);
  g.AddTensor(Activations("conv_out", {1, 4, 4, 10}, 0.25f, 2));
  g.AddTensor(Activations("pool_out", {1, 2, 2, 10}, 0.25f, 2));

  Op conv = MakeOp(OpType::kConv2D, {0, 1, 2}, {3});
  conv.options = ConvOptions{.activation = Activation::kRelu6};
  conv.source_index = 0;
  conv.fused_sources = {0, 1};
  Op pool = MakeOp(OpType::kMaxPool2D, {3}, {4});
  pool.options = PoolOptions{
      .padding = Padding::kValid, .stride_w = 2, .stride_h = 2, .filter_w = 2, .filter_h = 2};
  pool.source_index = 2;
  for (Op* op : {&conv, &pool}) {
    op->unit = Unit::kNpu;
    op->partition = 0;
    g.ops.push_back(*op);
  }
  g.inputs = {0};
  g.outputs = {4};
  g.RebuildUses();
  c.num_partitions = 1;
  c.memory.tensor_offset = {0, -1, -1, 48, 208};
  c.memory.arena_bytes = 256;
  return c;
}

const fb::NpuProgram* Program(const NpuPartitionBlob& blob) {
  absl::StatusOr<NpuPayloadView> view = ParseNpuPayload(blob.bytes);
  EXPECT_TRUE(view.ok()) << view.status();
  if (!view.ok()) return nullptr;
  flatbuffers::Verifier verifier(view->flatbuffer.data(), view->flatbuffer.size());
  EXPECT_TRUE(fb::VerifyNpuProgramBuffer(verifier));
  EXPECT_TRUE(fb::NpuProgramBufferHasIdentifier(view->flatbuffer.data()));
  return fb::GetNpuProgram(view->flatbuffer.data());
}

std::span<const uint8_t> Weights(const NpuPartitionBlob& blob) {
  return ParseNpuPayload(blob.bytes)->weights;
}

TEST(NpuLoweringTest, BlobHeaderAndIo) {
  const Compilation c = SmallConvGraph();
  absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
  ASSERT_TRUE(blobs.ok()) << blobs.status();
  ASSERT_EQ(blobs->size(), 1u);
  const NpuPartitionBlob& blob = (*blobs)[0];
  ASSERT_GE(blob.bytes.size(), 16u);
  EXPECT_EQ(std::memcmp(blob.bytes.data(), "BLNP", 4), 0);
  uint32_t header[3];
  std::memcpy(header, blob.bytes.data() + 4, sizeof(header));
  EXPECT_EQ(header[0], kNpuPayloadVersion);
  EXPECT_EQ(16 + (header[1] + 15) / 16 * 16 + header[2], blob.bytes.size());
  EXPECT_EQ(header[2], static_cast<uint32_t>(blob.weight_bytes));
  EXPECT_EQ(blob.input_tensors, std::vector<int>{0});
  EXPECT_EQ(blob.output_tensors, std::vector<int>{4});

  const fb::NpuProgram* program = Program(blob);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->weights_size(), static_cast<uint64_t>(blob.weight_bytes));
  ASSERT_EQ(program->tensors()->size(), 3u);
  const fb::Tensor* in = program->tensors()->Get(program->inputs()->Get(0));
  EXPECT_EQ(in->kind(), fb::TensorKind::Input);
  EXPECT_EQ(in->arg_index(), 0);
  EXPECT_EQ(in->zero_point(), -1);
  EXPECT_FLOAT_EQ(in->scale(), 0.5f);
  const fb::Tensor* out = program->tensors()->Get(program->outputs()->Get(0));
  EXPECT_EQ(out->kind(), fb::TensorKind::Output);
  EXPECT_EQ(out->arg_index(), 1);
  const fb::Tensor* mid = program->tensors()->Get(program->intermediates()->Get(0));
  EXPECT_EQ(mid->kind(), fb::TensorKind::Intermediate);
  EXPECT_EQ(mid->arena_offset(), 48);
  EXPECT_EQ(program->scratch_base(), 48);
  EXPECT_EQ(program->scratch_size(), 160);
  // Weights in SRAM: no prefetches, kernels in order.
  ASSERT_EQ(program->commands()->size(), 2u);
  EXPECT_EQ(program->commands_type()->Get(0), fb::Command::RunKernel);
  EXPECT_EQ(program->commands()->GetAs<fb::RunKernel>(1)->kernel(), 1u);
  EXPECT_EQ(program->sram_weight_scratch_size(), 0u);
}

TEST(NpuLoweringTest, ConvWeightsInNpuOrder) {
  const Compilation c = SmallConvGraph();
  absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
  ASSERT_TRUE(blobs.ok()) << blobs.status();
  const fb::NpuProgram* program = Program((*blobs)[0]);
  ASSERT_NE(program, nullptr);
  const fb::NpuKernel* conv = program->kernels()->Get(0);
  EXPECT_EQ(conv->kind(), fb::KernelKind::Conv2D);
  const std::span<const uint8_t> weights = Weights((*blobs)[0]);
  // [ceil(10/8)=2][3][3][ceil(3/8)=1][8 out][8 in]
  ASSERT_EQ(conv->weights()->size(), 2u * 3 * 3 * 1 * 64);
  const std::vector<uint8_t>& ohwi = c.graph.tensors[1].data;
  std::vector<int> expected(conv->weights()->size(), 0);
  for (int o = 0; o < 10; ++o) {
    for (int y = 0; y < 3; ++y) {
      for (int x = 0; x < 3; ++x) {
        for (int i = 0; i < 3; ++i) {
          const size_t dst = ((((o / 8) * 3 + y) * 3 + x) * 1 + i / 8) * 64 + (o % 8) * 8 + i % 8;
          expected[dst] = static_cast<int8_t>(ohwi[((o * 3 + y) * 3 + x) * 3 + i]);
        }
      }
    }
  }
  for (size_t j = 0; j < expected.size(); ++j) {
    ASSERT_EQ(static_cast<int8_t>(weights[conv->weights()->offset() + j]), expected[j])
        << "weight byte " << j;
  }
  // Bias: int32 zero-padded to 16 channels.
  ASSERT_EQ(conv->bias()->size(), 16u * 4);
  EXPECT_EQ(conv->bias()->offset() % 16, 0u);
  for (int ch = 0; ch < 16; ++ch) {
    int32_t v;
    std::memcpy(&v, weights.data() + conv->bias()->offset() + 4 * ch, 4);
    EXPECT_EQ(v, ch < 10 ? (ch - 5) * 1000 : 0) << ch;
  }
  EXPECT_EQ(conv->constants()->offset(), conv->weights()->offset());
  EXPECT_EQ(conv->constants()->size(),
            conv->bias()->offset() + conv->bias()->size() - conv->weights()->offset());
}

TEST(NpuLoweringTest, ConvRequantAndGeometry) {
  const Compilation c = SmallConvGraph();
  absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
  ASSERT_TRUE(blobs.ok()) << blobs.status();
  const fb::NpuProgram* program = Program((*blobs)[0]);
  ASSERT_NE(program, nullptr);
  const fb::NpuKernel* conv = program->kernels()->Get(0);
  ASSERT_EQ(conv->output_multipliers()->size(), 10u);
  for (int oc = 0; oc < 10; ++oc) {
    const QuantizedMultiplier qm = QuantizeMultiplier(0.5 * double(0.01f * (oc + 1)) / 0.25);
    EXPECT_EQ(conv->output_multipliers()->Get(oc), qm.multiplier) << oc;
    EXPECT_EQ(conv->output_shifts()->Get(oc), qm.shift) << oc;
  }
  EXPECT_EQ(conv->input_zero_point(), -1);
  EXPECT_EQ(conv->output_zero_point(), 2);
  // RELU6 at scale 0.25, zp 2: [quantize(0), quantize(6)] = [2, 26].
  EXPECT_EQ(conv->activation_min(), 2);
  EXPECT_EQ(conv->activation_max(), 26);
  const fb::Geometry* geo = conv->geometry();
  ASSERT_NE(geo, nullptr);
  EXPECT_EQ(geo->kernel_h(), 3);
  EXPECT_EQ(geo->kernel_w(), 3);
  EXPECT_EQ(geo->pad_top(), 1);
  EXPECT_EQ(geo->pad_left(), 1);
  EXPECT_EQ(geo->pad_bottom(), 1);
  EXPECT_EQ(geo->pad_right(), 1);
  ASSERT_EQ(conv->inputs()->size(), 1u);

  const fb::NpuKernel* pool = program->kernels()->Get(1);
  EXPECT_EQ(pool->kind(), fb::KernelKind::MaxPool2D);
  EXPECT_EQ(pool->geometry()->stride_h(), 2);
  EXPECT_EQ(pool->geometry()->pad_top(), 0);
  EXPECT_EQ(pool->constants()->size(), 0u);
  EXPECT_EQ(pool->inputs()->Get(0), conv->outputs()->Get(0));
}

TEST(NpuLoweringTest, DebugMap) {
  const Compilation c = SmallConvGraph();
  absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
  ASSERT_TRUE(blobs.ok()) << blobs.status();
  const std::vector<NpuDebugEntry>& debug = (*blobs)[0].debug;
  ASSERT_EQ(debug.size(), 2u);
  EXPECT_EQ(debug[0].kernel, 0);
  EXPECT_EQ(debug[0].source_ops, (std::vector<int>{0, 1}));
  EXPECT_EQ(debug[0].names, std::vector<std::string>{"conv_out"});
  EXPECT_EQ(debug[1].source_ops, std::vector<int>{2});
  // Two kernels: ids of equal width (10, 11) so none is a substring of another.
  EXPECT_EQ(debug[0].debug_id, 10);
  EXPECT_EQ(debug[1].debug_id, 11);
  const fb::NpuProgram* program = Program((*blobs)[0]);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->kernels()->Get(1)->debug_id(), 11);
  ASSERT_EQ(program->debug()->size(), 2u);
  EXPECT_EQ(program->debug()->Get(0)->source_ops()->size(), 2u);
  EXPECT_EQ(program->debug()->Get(0)->names()->Get(0)->str(), "conv_out");
}

TEST(NpuLoweringTest, FlashWeightsArePrefetchedIntoAlternatingSlots) {
  Compilation c = SmallConvGraph();
  c.memory.weights_in_flash = true;
  absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
  ASSERT_TRUE(blobs.ok()) << blobs.status();
  const fb::NpuProgram* program = Program((*blobs)[0]);
  ASSERT_NE(program, nullptr);
  const fb::NpuKernel* conv = program->kernels()->Get(0);
  EXPECT_EQ(conv->weight_slot(), 0);
  EXPECT_EQ(program->kernels()->Get(1)->weight_slot(), -1);
  ASSERT_EQ(program->commands()->size(), 3u);
  ASSERT_EQ(program->commands_type()->Get(0), fb::Command::Prefetch);
  const fb::Prefetch* prefetch = program->commands()->GetAs<fb::Prefetch>(0);
  EXPECT_EQ(prefetch->weights_offset(), conv->constants()->offset());
  EXPECT_EQ(prefetch->size(), conv->constants()->size());
  EXPECT_EQ(prefetch->slot(), 0u);
  EXPECT_EQ(program->commands_type()->Get(1), fb::Command::RunKernel);
  EXPECT_EQ(program->commands_type()->Get(2), fb::Command::RunKernel);
  const uint64_t slot = (conv->constants()->size() + 15) / 16 * 16;
  EXPECT_EQ(program->slot_size(), slot);
  EXPECT_EQ(program->sram_weight_scratch_size(), 2 * slot);
  EXPECT_EQ((*blobs)[0].largest_kernel_weight_bytes, static_cast<int64_t>(slot));
  EXPECT_EQ((*blobs)[0].weight_scratch_bytes, static_cast<int64_t>(2 * slot));
}

TEST(NpuLoweringTest, SmallScratchWindowUsesOneSlot) {
  Compilation c = SmallConvGraph();
  c.memory.weights_in_flash = true;
  c.memory.weight_scratch_bytes = 1216;  // one slot: conv weights 1152 + bias 64
  absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
  ASSERT_TRUE(blobs.ok()) << blobs.status();
  const fb::NpuProgram* program = Program((*blobs)[0]);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->slot_size(), 1216u);
  EXPECT_EQ(program->sram_weight_scratch_size(), 1216u);
  EXPECT_EQ((*blobs)[0].weight_scratch_bytes, 1216);
  EXPECT_EQ(program->kernels()->Get(0)->weight_slot(), 0);
}

TEST(NpuLoweringTest, ReorderHelpers) {
  // O=9, 1x1, I=10 with block 8x8: two output blocks, two input blocks of 64 bytes each.
  std::vector<int8_t> ohwi(90);
  for (int i = 0; i < 90; ++i) ohwi[i] = static_cast<int8_t>(i + 1);
  const std::vector<int8_t> npu = ReorderConvWeights(ohwi, 9, 1, 1, 10, 8, 8);
  ASSERT_EQ(npu.size(), 2u * 2 * 64);
  EXPECT_EQ(npu[0], ohwi[0]);                        // o0 i0
  EXPECT_EQ(npu[1 * 8 + 7], ohwi[1 * 10 + 7]);       // o1 i7
  EXPECT_EQ(npu[64 + 1 * 8 + 1], ohwi[1 * 10 + 9]);  // o1 i9 -> second input block
  EXPECT_EQ(npu[64 + 1 * 8 + 2], 0);                 // padded input channel
  EXPECT_EQ(npu[128], ohwi[8 * 10]);                 // o8 -> second output block
  EXPECT_EQ(npu[128 + 8], 0);                        // padded output channel

  std::vector<int8_t> hwc = {1, 2, 3, 4, 5, 6};  // 1x2 taps, 3 channels
  const std::vector<int8_t> dw = ReorderDepthwiseWeights(hwc, 1, 2, 3, 8);
  EXPECT_EQ(dw, (std::vector<int8_t>{1, 2, 3, 0, 0, 0, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0}));
}

TEST(NpuLoweringTest, Errors) {
  Compilation c = SmallConvGraph();
  c.memory.tensor_offset[3] = -1;
  EXPECT_EQ(LowerNpuPartitions(c).status().code(), absl::StatusCode::kFailedPrecondition);

  c = SmallConvGraph();
  c.num_partitions = 2;  // partition 1 has no ops
  EXPECT_EQ(LowerNpuPartitions(c).status().code(), absl::StatusCode::kFailedPrecondition);

  c = SmallConvGraph();
  c.graph.tensors[1].quant.zero_point[3] = 5;
  EXPECT_EQ(LowerNpuPartitions(c).status().code(), absl::StatusCode::kUnimplemented);

  const std::vector<uint8_t> junk = {'B', 'L', 'N', 'P', 1, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_FALSE(ParseNpuPayload(junk).ok());
}

}  // namespace
}  // namespace boardlab::compiler
