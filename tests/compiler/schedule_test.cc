#include "compiler/schedule.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

#include <string>
#include <vector>

namespace boardlab::compiler {
namespace {

// A graph of element-wise ops over one [1,4] tensor shape; units and partitions are set by hand
// the way the partitioner would.
class ScheduleTest : public ::testing::Test {
 protected:
  int Act() {
    Tensor t;
    t.name = absl::StrCat("t", c_.graph.tensors.size());
    t.shape = {1, 4};
    t.quant = {{0.5f}, {0}, 0};
    return c_.graph.AddTensor(std::move(t));
  }
  int AddOp(const std::vector<int>& inputs, Unit unit, int partition) {
    Op op;
    op.type = OpType::kRelu;
    op.inputs = inputs;
    op.outputs = {Act()};
    op.unit = unit;
    op.partition = partition;
    op.source_index = static_cast<int>(c_.graph.ops.size());
    c_.graph.ops.push_back(op);
    return op.outputs[0];
  }
  std::vector<int> Order() const {
    std::vector<int> order;
    for (const Op& op : c_.graph.ops) order.push_back(op.source_index);
    return order;
  }
  Compilation c_;
};

TEST_F(ScheduleTest, KeepsAnOrderThatNeedsNoChange) {
  const int in = Act();
  c_.graph.inputs = {in};
  const int a = AddOp({in}, Unit::kNpu, 0);
  const int b = AddOp({a}, Unit::kCpu, -1);
  c_.graph.outputs = {AddOp({b}, Unit::kNpu, 1)};
  c_.num_partitions = 2;
  c_.graph.RebuildUses();
  ASSERT_TRUE(ScheduleOps(c_).ok());
  EXPECT_EQ(Order(), (std::vector<int>{0, 1, 2}));
}

TEST_F(ScheduleTest, MakesAPartitionContiguous) {
  // Source order: A (partition 0), X (CPU, independent of A), C (partition 0, reads A).
  const int in = Act();
  c_.graph.inputs = {in};
  const int a = AddOp({in}, Unit::kNpu, 0);
  const int x = AddOp({in}, Unit::kCpu, -1);
  const int c = AddOp({a}, Unit::kNpu, 0);
  c_.graph.outputs = {x, c};
  c_.num_partitions = 1;
  c_.graph.RebuildUses();
  ASSERT_TRUE(ScheduleOps(c_).ok());
  EXPECT_EQ(Order(), (std::vector<int>{0, 2, 1}));
  EXPECT_TRUE(VerifyGraph(c_.graph).ok());
}

TEST_F(ScheduleTest, WaitsForACpuProducerOfALaterPartitionOp) {
  // A (p0) -> X (CPU) ; B (p0, independent) ; D (p1) reads X and B.
  const int in = Act();
  c_.graph.inputs = {in};
  const int a = AddOp({in}, Unit::kNpu, 0);
  const int x = AddOp({a}, Unit::kCpu, -1);
  const int b = AddOp({in}, Unit::kNpu, 0);
  c_.graph.outputs = {AddOp({x, b}, Unit::kNpu, 1)};
  c_.num_partitions = 2;
  c_.graph.RebuildUses();
  ASSERT_TRUE(ScheduleOps(c_).ok());
  EXPECT_EQ(Order(), (std::vector<int>{0, 2, 1, 3}));
}

TEST_F(ScheduleTest, ReportsPartitionsThatDependOnEachOther) {
  // p0 = {A, C}, X (CPU) between them: A -> X -> C makes p0 depend on itself through the CPU.
  const int in = Act();
  c_.graph.inputs = {in};
  const int a = AddOp({in}, Unit::kNpu, 0);
  const int x = AddOp({a}, Unit::kCpu, -1);
  c_.graph.outputs = {AddOp({x}, Unit::kNpu, 0)};
  c_.num_partitions = 1;
  c_.graph.RebuildUses();
  const absl::Status s = ScheduleOps(c_);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("cycle"), std::string::npos);
}

}  // namespace
}  // namespace boardlab::compiler
