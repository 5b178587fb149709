#include "compiler/plan_memory.h"

#include "gtest/gtest.h"

namespace boardlab::compiler {
namespace {

int AddActivation(Graph& g, const std::string& name, std::vector<int32_t> shape) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  return g.AddTensor(std::move(t));
}

int AddConstant(Graph& g, const std::string& name, std::vector<int32_t> shape, DataType type) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.type = type;
  t.is_constant = true;
  t.data.resize(t.SizeBytes());
  return g.AddTensor(std::move(t));
}

Op MakeOp(OpType type, std::vector<int> inputs, std::vector<int> outputs, OpOptions options = {}) {
  Op op;
  op.type = type;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  op.options = std::move(options);
  return op;
}

// input [1,10,10,10] -> CONV_2D 1x1 10->20 -> RELU -> SOFTMAX -> output, all int8.
Compilation ChainCompilation() {
  Compilation c;
  Graph& g = c.graph;
  const int in = AddActivation(g, "in", {1, 10, 10, 10});              // 1000 B
  const int w = AddConstant(g, "w", {20, 1, 1, 10}, DataType::kInt8);  // 200 B
  const int b = AddConstant(g, "b", {20}, DataType::kInt32);           // 80 B
  const int t1 = AddActivation(g, "t1", {1, 10, 10, 20});              // 2000 B
  const int t2 = AddActivation(g, "t2", {1, 10, 10, 20});
  const int out = AddActivation(g, "out", {1, 10, 10, 20});
  g.ops.push_back(MakeOp(OpType::kConv2D, {in, w, b}, {t1}, ConvOptions{}));
  g.ops.push_back(MakeOp(OpType::kRelu, {t1}, {t2}));
  g.ops.push_back(MakeOp(OpType::kSoftmax, {t2}, {out}, SoftmaxOptions{}));
  g.inputs = {in};
  g.outputs = {out};
  g.RebuildUses();
  c.board.name = "test-board";
  c.board.sram_budget_bytes = 1 << 20;
  c.board.flash_bytes = 1 << 24;
  return c;
}

TEST(MemoryPlanMemory, PlansChainArena) {
  Compilation c = ChainCompilation();
  ASSERT_TRUE(PlanMemory(c).ok());
  const MemoryPlan& m = c.memory;
  ASSERT_EQ(m.tensor_offset.size(), c.graph.tensors.size());
  EXPECT_EQ(m.tensor_offset[1], -1);  // constants get no arena bytes
  EXPECT_EQ(m.tensor_offset[2], -1);
  for (int t : {0, 3, 4, 5}) EXPECT_EQ(m.tensor_offset[t] % 16, 0) << t;
  // Two 2000-byte tensors are live together at steps 1 and 2.
  EXPECT_EQ(m.arena_lower_bound, 4000);
  EXPECT_EQ(m.arena_bytes, 4000);
  EXPECT_NE(m.tensor_offset[3], m.tensor_offset[4]);
  EXPECT_EQ(m.tensor_offset[0], m.tensor_offset[4]);  // the input's bytes are reused
  EXPECT_EQ(m.weight_bytes, 280);
  EXPECT_EQ(m.min_weight_scratch_bytes, 280);
  EXPECT_FALSE(m.weights_in_flash);
  EXPECT_EQ(m.sram_budget_bytes, 1 << 20);
  EXPECT_EQ(m.sram_used_bytes, 4280);
}

TEST(MemoryPlanMemory, GraphInputLivesFromTheFirstStep) {
  Compilation c = ChainCompilation();
  // A second graph input read only by the last op must not share bytes with t1.
  const int late = AddActivation(c.graph, "late", {1, 10, 10, 20});
  c.graph.ops[2].inputs.push_back(late);
  c.graph.inputs.push_back(late);
  c.graph.RebuildUses();
  ASSERT_TRUE(PlanMemory(c).ok());
  // Step 1: t1 + t2 + late (the first input is dead by then).
  EXPECT_EQ(c.memory.arena_lower_bound, 3 * 2000);
  EXPECT_NE(c.memory.tensor_offset[0], c.memory.tensor_offset[late]);
}

TEST(MemoryPlanPlaceWeights, SramWhenItFits) {
  Compilation c = ChainCompilation();
  ASSERT_TRUE(PlanMemory(c).ok());
  ASSERT_TRUE(PlaceWeights(c, 500000, 40000).ok());
  EXPECT_FALSE(c.memory.weights_in_flash);
  EXPECT_EQ(c.memory.weight_bytes, 500000);
  EXPECT_EQ(c.memory.sram_used_bytes, 504000);
}

TEST(MemoryPlanPlaceWeights, AutoFallsBackToFlash) {
  Compilation c = ChainCompilation();
  c.options.sram_budget = 100000;  // overrides the board's 1 MiB
  ASSERT_TRUE(PlanMemory(c).ok());
  ASSERT_TRUE(PlaceWeights(c, 500000, 40000).ok());
  EXPECT_TRUE(c.memory.weights_in_flash);
  EXPECT_EQ(c.memory.sram_budget_bytes, 100000);
  EXPECT_EQ(c.memory.weight_scratch_bytes, 80000);  // double-buffered: two 40000-byte slots
  EXPECT_EQ(c.memory.min_weight_scratch_bytes, 40000);
  EXPECT_EQ(c.memory.sram_used_bytes, 84000);
}

TEST(MemoryPlanPlaceWeights, SingleBufferedScratchWhenTwoSlotsDoNotFit) {
  Compilation c = ChainCompilation();
  c.options.sram_budget = 60000;
  ASSERT_TRUE(PlanMemory(c).ok());
  ASSERT_TRUE(PlaceWeights(c, 500000, 40000).ok());
  EXPECT_TRUE(c.memory.weights_in_flash);
  EXPECT_EQ(c.memory.weight_scratch_bytes, 40000);
  EXPECT_EQ(c.memory.sram_used_bytes, 44000);
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_NE(c.warnings.back().find("single-buffered"), std::string::npos);
}

TEST(MemoryPlanPlaceWeights, ForcedSramThatDoesNotFitSaysWhy) {
  Compilation c = ChainCompilation();
  c.options.weights = WeightsPlacement::kSram;
  c.options.sram_budget = 100000;
  ASSERT_TRUE(PlanMemory(c).ok());
  const absl::Status s = PlaceWeights(c, 500000, 40000);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "does not fit: needs 504000 bytes of SRAM (arena 4000 + weights 500000), "
            "budget 100000; use --weights flash");
}

TEST(MemoryPlanPlaceWeights, FlashScratchMustFit) {
  Compilation c = ChainCompilation();
  c.options.weights = WeightsPlacement::kFlash;
  c.options.sram_budget = 40000;
  ASSERT_TRUE(PlanMemory(c).ok());
  const absl::Status s = PlaceWeights(c, 500000, 40000);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "does not fit with weights in flash: needs 44000 bytes of SRAM (arena 4000 + "
            "weight scratch 40000), budget 40000; the scratch window must hold the largest "
            "kernel's weights");
}

TEST(MemoryPlanPlaceWeights, FlashMustHoldTheWeights) {
  Compilation c = ChainCompilation();
  c.options.weights = WeightsPlacement::kFlash;
  c.board.flash_bytes = 1000;
  ASSERT_TRUE(PlanMemory(c).ok());
  const absl::Status s = PlaceWeights(c, 500000, 40000);
  EXPECT_EQ(s.message(),
            "does not fit: 500000 bytes of weights, but board 'test-board' has 1000 bytes "
            "of external flash");
}

TEST(MemoryPlanPlaceWeights, ZeroBudgetIsAConfigurationError) {
  Compilation c = ChainCompilation();
  c.board.sram_budget_bytes = 0;
  EXPECT_EQ(PlanMemory(c).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace boardlab::compiler
