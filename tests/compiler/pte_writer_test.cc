#include "compiler/pte_writer.h"

#include <cstring>

#include "boardlab/schema/program_generated.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/ir_builders.h"

namespace boardlab::compiler {
namespace {

namespace et = ::executorch_flatbuffer;

using testing::Activations;
using testing::MakeOp;

Tensor Constant(std::string name, std::vector<int32_t> shape, DataType type, int fill) {
  Tensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.type = type;
  t.is_constant = true;
  t.data.resize(t.SizeBytes());
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<uint8_t>(fill + i);
  if (type == DataType::kInt8) {
    t.quant.scale = {0.02f};
    t.quant.zero_point = {0};
  }
  return t;
}

// NPU partition 0: CONV_2D 3x3 -> input [1,4,4,3], output t3 [1,4,4,8];
// CPU: CONV_2D 1x1 t3 -> t6 [1,4,4,4];
// NPU partition 1: SOFTMAX t6 -> t7 (graph output).
Compilation ThreeStepProgram() {
  Compilation c;
  Graph& g = c.graph;
  g.AddTensor(Activations("input", {1, 4, 4, 3}, 0.5f, -1));          // 0
  g.AddTensor(Constant("w0", {8, 3, 3, 3}, DataType::kInt8, 1));      // 1
  g.AddTensor(Activations("a", {1, 4, 4, 8}, 0.25f, 2));              // 2
  g.AddTensor(Constant("w1", {4, 1, 1, 8}, DataType::kInt8, 7));      // 3
  g.AddTensor(Constant("b1", {4}, DataType::kInt32, 3));              // 4
  g.AddTensor(Activations("b", {1, 4, 4, 4}, 0.125f, 0));             // 5
  g.AddTensor(Activations("probs", {1, 4, 4, 4}, 1.0f / 256, -128));  // 6
  Op npu_conv = MakeOp(OpType::kConv2D, {0, 1, kNoTensor}, {2});
  npu_conv.options = ConvOptions{};
  npu_conv.source_index = 0;
  npu_conv.unit = Unit::kNpu;
  npu_conv.partition = 0;
  Op cpu_conv = MakeOp(OpType::kConv2D, {2, 3, 4}, {5});
  cpu_conv.options = ConvOptions{.padding = Padding::kValid, .activation = Activation::kRelu};
  cpu_conv.source_index = 1;
  cpu_conv.unit = Unit::kCpu;
  Op softmax = MakeOp(OpType::kSoftmax, {5}, {6});
  softmax.options = SoftmaxOptions{};
  softmax.source_index = 2;
  softmax.unit = Unit::kNpu;
  softmax.partition = 1;
  g.ops = {npu_conv, cpu_conv, softmax};
  g.inputs = {0};
  g.outputs = {6};
  g.RebuildUses();
  c.num_partitions = 2;
  c.memory.tensor_offset = {0, -1, 48, -1, -1, 176, 240};
  c.memory.arena_bytes = 304;
  return c;
}

struct Written {
  std::vector<NpuPartitionBlob> blobs;
  std::vector<uint8_t> pte;
  PteExtendedHeader header;
  const et::Program* program = nullptr;
};

Written Write(const Compilation& c) {
  Written w;
  absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
  EXPECT_TRUE(blobs.ok()) << blobs.status();
  if (!blobs.ok()) return w;
  w.blobs = *std::move(blobs);
  absl::StatusOr<std::vector<uint8_t>> pte = WritePte(c, w.blobs);
  EXPECT_TRUE(pte.ok()) << pte.status();
  if (!pte.ok()) return w;
  w.pte = *std::move(pte);
  std::optional<PteExtendedHeader> header = ReadPteExtendedHeader(w.pte);
  EXPECT_TRUE(header.has_value());
  if (!header) return w;
  w.header = *header;
  EXPECT_LE(w.header.program_size, w.pte.size());
  flatbuffers::Verifier verifier(w.pte.data(), w.header.program_size);
  EXPECT_TRUE(et::VerifyProgramBuffer(verifier));
  w.program = et::GetProgram(w.pte.data());
  return w;
}

const et::Tensor* ValueTensor(const et::ExecutionPlan* plan, int value) {
  const et::EValue* v = plan->values()->Get(value);
  EXPECT_EQ(v->val_type(), et::KernelTypes::Tensor);
  return v->val_as_Tensor();
}

uint64_t PlannedOffset(const et::Tensor* t) {
  EXPECT_NE(t->allocation_info(), nullptr);
  if (t->allocation_info() == nullptr) return ~0ull;
  EXPECT_EQ(t->allocation_info()->memory_id(), 1u);
  EXPECT_EQ(t->data_buffer_idx(), 0u);
  return t->allocation_info()->memory_offset_low() |
         (uint64_t{t->allocation_info()->memory_offset_high()} << 32);
}

TEST(PteWriterTest, ContainerHeaderAndSegments) {
  const Written w = Write(ThreeStepProgram());
  ASSERT_NE(w.program, nullptr);
  EXPECT_EQ(std::memcmp(w.pte.data() + 4, "ET12", 4), 0);
  EXPECT_TRUE(et::ProgramBufferHasIdentifier(w.pte.data()));
  EXPECT_EQ(std::memcmp(w.pte.data() + 8, "eh00", 4), 0);
  EXPECT_EQ(w.header.length, 32u);
  EXPECT_EQ(w.header.segment_base_offset % 128, 0u);
  EXPECT_GE(w.header.segment_base_offset, w.header.program_size);
  EXPECT_EQ(w.header.segment_base_offset + w.header.segment_data_size, w.pte.size());
  // Root offset points past the extended header.
  uint32_t root;
  std::memcpy(&root, w.pte.data(), 4);
  EXPECT_GE(root, 40u);

  // Segment 0 = constants, then one segment per delegate blob.
  const auto* segments = w.program->segments();
  ASSERT_EQ(segments->size(), 3u);
  EXPECT_EQ(segments->Get(0)->offset(), 0u);
  for (size_t i = 0; i < segments->size(); ++i) EXPECT_EQ(segments->Get(i)->offset() % 128, 0u);
  EXPECT_EQ(segments->Get(2)->offset() + segments->Get(2)->size(), w.header.segment_data_size);
  const et::ExecutionPlan* plan = w.program->execution_plan()->Get(0);
  ASSERT_EQ(plan->delegates()->size(), 2u);
  for (int p = 0; p < 2; ++p) {
    const et::BackendDelegate* d = plan->delegates()->Get(p);
    EXPECT_EQ(d->id()->str(), "BoardlabNeutronBackend");
    EXPECT_EQ(d->processed()->location(), et::DataLocation::SEGMENT);
    const et::DataSegment* s = segments->Get(d->processed()->index());
    ASSERT_EQ(s->size(), w.blobs[p].bytes.size());
    const uint8_t* data = w.pte.data() + w.header.segment_base_offset + s->offset();
    EXPECT_TRUE(std::equal(w.blobs[p].bytes.begin(), w.blobs[p].bytes.end(), data)) << p;
  }
}

TEST(PteWriterTest, ConstantsAndPlannedMemory) {
  const Compilation c = ThreeStepProgram();
  const Written w = Write(c);
  ASSERT_NE(w.program, nullptr);
  const et::ExecutionPlan* plan = w.program->execution_plan()->Get(0);
  EXPECT_EQ(plan->name()->str(), "forward");
  ASSERT_EQ(plan->non_const_buffer_sizes()->size(), 2u);
  EXPECT_EQ(plan->non_const_buffer_sizes()->Get(0), 0);
  EXPECT_EQ(plan->non_const_buffer_sizes()->Get(1), 304);
  EXPECT_EQ(w.program->constant_buffer(), nullptr);
  const et::SubsegmentOffsets* constants = w.program->constant_segment();
  ASSERT_NE(constants, nullptr);
  EXPECT_EQ(constants->segment_index(), 0u);
  ASSERT_GE(constants->offsets()->size(), 3u);
  EXPECT_EQ(constants->offsets()->Get(0), 0u);
  EXPECT_EQ(constants->offsets()->Get(1), 0u);
  for (uint64_t offset : *constants->offsets()) EXPECT_EQ(offset % 16, 0u);

  // Graph input and output are memory-planned at the plan's offsets.
  ASSERT_EQ(plan->inputs()->size(), 1u);
  ASSERT_EQ(plan->outputs()->size(), 1u);
  EXPECT_EQ(PlannedOffset(ValueTensor(plan, plan->inputs()->Get(0))), 0u);
  EXPECT_EQ(PlannedOffset(ValueTensor(plan, plan->outputs()->Get(0))), 240u);
  const et::Tensor* input = ValueTensor(plan, plan->inputs()->Get(0));
  EXPECT_EQ(input->scalar_type(), et::ScalarType::CHAR);
  EXPECT_EQ(std::vector<int>(input->sizes()->begin(), input->sizes()->end()),
            (std::vector<int>{1, 4, 4, 3}));
  EXPECT_EQ(std::vector<int>(input->dim_order()->begin(), input->dim_order()->end()),
            (std::vector<int>{0, 1, 2, 3}));

  // The CPU conv's filter is a constant whose bytes sit at its offset in segment 0.
  const et::KernelCall* call =
      plan->chains()->Get(0)->instructions()->Get(1)->instr_args_as_KernelCall();
  ASSERT_NE(call, nullptr);
  const et::Tensor* filter = ValueTensor(plan, call->args()->Get(1));
  ASSERT_GT(filter->data_buffer_idx(), 0u);
  EXPECT_EQ(filter->allocation_info(), nullptr);
  const uint64_t at = w.header.segment_base_offset + w.program->segments()->Get(0)->offset() +
                      constants->offsets()->Get(filter->data_buffer_idx());
  const std::vector<uint8_t>& w1 = c.graph.tensors[3].data;
  EXPECT_TRUE(std::equal(w1.begin(), w1.end(), w.pte.begin() + at));
}

TEST(PteWriterTest, InstructionsAndArguments) {
  const Written w = Write(ThreeStepProgram());
  ASSERT_NE(w.program, nullptr);
  const et::ExecutionPlan* plan = w.program->execution_plan()->Get(0);
  const auto* instructions = plan->chains()->Get(0)->instructions();
  ASSERT_EQ(instructions->size(), 3u);
  EXPECT_EQ(instructions->Get(0)->instr_args_type(), et::InstructionArguments::DelegateCall);
  EXPECT_EQ(instructions->Get(1)->instr_args_type(), et::InstructionArguments::KernelCall);
  EXPECT_EQ(instructions->Get(2)->instr_args_type(), et::InstructionArguments::DelegateCall);

  const et::DelegateCall* first = instructions->Get(0)->instr_args_as_DelegateCall();
  EXPECT_EQ(first->delegate_index(), 0);
  ASSERT_EQ(first->args()->size(), 2u);
  EXPECT_EQ(PlannedOffset(ValueTensor(plan, first->args()->Get(0))), 0u);
  EXPECT_EQ(PlannedOffset(ValueTensor(plan, first->args()->Get(1))), 48u);

  const et::KernelCall* call = instructions->Get(1)->instr_args_as_KernelCall();
  const et::Operator* op = plan->operators()->Get(call->op_index());
  EXPECT_EQ(op->name()->str(), "boardlab::conv_2d");
  EXPECT_EQ(op->overload()->str(), "out");
  // input, filter, bias, stride, padding, dilation, in_zp, out_zp, multipliers, shifts,
  // act_min, act_max, output.
  ASSERT_EQ(call->args()->size(), 13u);
  const auto value = [&](int arg) { return plan->values()->Get(call->args()->Get(arg)); };
  EXPECT_EQ(PlannedOffset(ValueTensor(plan, call->args()->Get(0))), 48u);
  EXPECT_EQ(value(3)->val_as_IntList()->items()->size(), 2u);
  EXPECT_EQ(value(4)->val_as_IntList()->items()->size(), 4u);
  EXPECT_EQ(value(6)->val_as_Int()->int_val(), 2);  // input zero point
  EXPECT_EQ(value(7)->val_as_Int()->int_val(), 0);  // output zero point
  const et::Tensor* multipliers = value(8)->val_as_Tensor();
  ASSERT_NE(multipliers, nullptr);
  EXPECT_EQ(multipliers->scalar_type(), et::ScalarType::INT);
  EXPECT_EQ(multipliers->sizes()->Get(0), 1);
  EXPECT_EQ(value(10)->val_as_Int()->int_val(), 0);  // RELU at zp 0
  EXPECT_EQ(value(11)->val_as_Int()->int_val(), 127);
  EXPECT_EQ(PlannedOffset(ValueTensor(plan, call->args()->Get(12))), 176u);
}

TEST(PteWriterTest, FlashWeightsAddScratchBuffer) {
  Compilation c = ThreeStepProgram();
  c.memory.weights_in_flash = true;
  absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
  ASSERT_TRUE(blobs.ok()) << blobs.status();
  const int64_t needed = (*blobs)[0].weight_scratch_bytes;
  EXPECT_EQ(needed, 2 * (*blobs)[0].largest_kernel_weight_bytes);
  // A plan whose window is smaller than what the payload prefetches into is rejected.
  c.memory.weight_scratch_bytes = needed - 16;
  EXPECT_EQ(WritePte(c, *blobs).status().code(), absl::StatusCode::kFailedPrecondition);
  c.memory.weight_scratch_bytes = needed;
  absl::StatusOr<std::vector<uint8_t>> pte = WritePte(c, *blobs);
  ASSERT_TRUE(pte.ok()) << pte.status();
  const et::Program* program = et::GetProgram(pte->data());
  const auto* sizes = program->execution_plan()->Get(0)->non_const_buffer_sizes();
  ASSERT_EQ(sizes->size(), 3u);
  EXPECT_EQ(sizes->Get(1), 304);
  EXPECT_EQ(sizes->Get(2), needed);
}

TEST(PteWriterTest, DebugMapJson) {
  const Compilation c = ThreeStepProgram();
  absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
  ASSERT_TRUE(blobs.ok()) << blobs.status();
  const nlohmann::json map = nlohmann::json::parse(DebugMapJson(c, *blobs));
  ASSERT_EQ(map["delegates"].size(), 2u);
  EXPECT_EQ(map["delegates"][0]["instruction"], 0);
  EXPECT_EQ(map["delegates"][0]["partition"], 0);
  EXPECT_EQ(map["delegates"][0]["kernels"][0]["id"], 10);
  EXPECT_EQ(map["delegates"][0]["kernels"][0]["ops"], nlohmann::json::array({0}));
  EXPECT_EQ(map["delegates"][0]["kernels"][0]["names"], nlohmann::json::array({"a"}));
  // Op name and MACs for timelines: 4x4x8 outputs x 3x3 taps x 3 input channels.
  EXPECT_EQ(map["delegates"][0]["kernels"][0]["name"], "CONV_2D #0");
  EXPECT_EQ(map["delegates"][0]["kernels"][0]["macs"], 4 * 4 * 8 * 3 * 3 * 3);
  EXPECT_EQ(map["delegates"][1]["instruction"], 2);
  EXPECT_EQ(map["delegates"][1]["kernels"][0]["id"], 11);
  EXPECT_EQ(map["delegates"][1]["kernels"][0]["name"], "SOFTMAX #2");
  ASSERT_EQ(map["cpu_ops"].size(), 1u);
  EXPECT_EQ(map["cpu_ops"][0]["instruction"], 1);
  EXPECT_EQ(map["cpu_ops"][0]["op"], 1);
  EXPECT_EQ(map["cpu_ops"][0]["name"], "CONV_2D #1");
  EXPECT_EQ(map["cpu_ops"][0]["macs"], 4 * 4 * 4 * 8);  // 1x1 conv, 8 input channels
}

TEST(PteWriterTest, SchedulingRejectsCyclesAndUnassignedOps) {
  // One partition holding conv and softmax around the CPU conv would have to run both before
  // and after it: a cycle.
  Compilation c = ThreeStepProgram();
  c.graph.ops[2].partition = 0;
  c.num_partitions = 1;
  absl::StatusOr<std::vector<PteInstruction>> order = ScheduleInstructions(c);
  ASSERT_FALSE(order.ok());  // conv -> cpu -> softmax in one partition is a cycle
  c.graph.ops[0].unit = Unit::kUnassigned;
  EXPECT_EQ(ScheduleInstructions(c).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(PteWriterTest, Errors) {
  const Compilation c = ThreeStepProgram();
  absl::StatusOr<std::vector<NpuPartitionBlob>> blobs = LowerNpuPartitions(c);
  ASSERT_TRUE(blobs.ok());
  blobs->pop_back();
  EXPECT_EQ(WritePte(c, *blobs).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace boardlab::compiler
