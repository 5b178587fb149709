// The memory plan of models with IF, WHILE and CALL_ONCE, checked against the chain the runtime
// executes: walking the expanded chain along concrete branch and loop paths, every tensor a step
// reads must still hold what its writer left, in bytes no other tensor has written since.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/driver.h"
#include "compiler/pte_writer.h"
#include "gtest/gtest.h"
#include "tests/support/control_flow_models.h"
#include "tests/support/resource_variable_models.h"
#include "tests/support/tflite_builder.h"

namespace boardlab::testing {
namespace {

constexpr int kNobody = -1;
constexpr int kMaxSteps = 10000;

// Which tensor last wrote each arena byte, along one path through the chain.
class ArenaOwners {
 public:
  explicit ArenaOwners(const compiler::Compilation& c)
      : c_(c), owner_(static_cast<size_t>(c.memory.arena_bytes), kNobody) {}

  void Write(int t) {
    if (!InArena(t)) return;
    const int64_t begin = c_.memory.tensor_offset[t];
    for (int64_t b = begin; b < begin + Size(t); ++b) owner_[static_cast<size_t>(b)] = t;
  }

  // Empty when `t`'s bytes are all its own, else what went wrong.
  std::string Read(int t) const {
    if (!InArena(t)) return "";
    const int64_t begin = c_.memory.tensor_offset[t];
    for (int64_t b = begin; b < begin + Size(t); ++b) {
      const int owner = owner_[static_cast<size_t>(b)];
      if (owner == t) continue;
      return absl::StrCat(Name(t), " at byte ", b, " holds ",
                          owner == kNobody ? "nothing written yet" : Name(owner));
    }
    return "";
  }

 private:
  bool InArena(int t) const {
    return t != compiler::kNoTensor && c_.memory.tensor_offset[t] >= 0 && Size(t) > 0;
  }
  int64_t Size(int t) const { return c_.graph.tensors[t].SizeBytes(); }
  std::string Name(int t) const { return absl::StrCat("'", c_.graph.tensors[t].name, "'"); }

  const compiler::Compilation& c_;
  std::vector<int> owner_;
};

// Runs the chain's data flow (not its arithmetic): `outcomes` are the conditions met in order
// (false once they run out). Returns the first read of bytes another tensor overwrote.
std::string WalkChain(const compiler::Compilation& c, const std::vector<compiler::ChainStep>& chain,
                      std::vector<bool> outcomes) {
  ArenaOwners arena(c);
  for (int t : c.graph.inputs) arena.Write(t);
  auto run_op = [&](const compiler::Op& op) -> std::string {
    for (int t : op.inputs) {
      if (std::string e = arena.Read(t); !e.empty()) return e;
    }
    for (int t : op.outputs) arena.Write(t);
    return "";
  };
  bool flag = false;
  size_t next_outcome = 0;
  int steps = 0;
  for (size_t pc = 0; pc < chain.size() && steps < kMaxSteps; ++steps) {
    const compiler::ChainStep& step = chain[pc];
    const std::string where = absl::StrCat("chain step ", pc, ": ");
    std::string error;
    switch (step.kind) {
      case compiler::ChainStepKind::kKernel:
        error = run_op(*step.op);
        break;
      case compiler::ChainStepKind::kDelegate:
        for (const compiler::Op& op : c.graph.ops) {
          if (op.partition == step.partition && error.empty()) error = run_op(op);
        }
        break;
      case compiler::ChainStepKind::kCopy:
        error = arena.Read(step.from);
        arena.Write(step.to);
        break;
      case compiler::ChainStepKind::kCondition:
        error = arena.Read(step.from);
        flag = next_outcome < outcomes.size() && outcomes[next_outcome++];
        break;
      case compiler::ChainStepKind::kJump:
        if (!step.conditional || !flag) {
          pc = static_cast<size_t>(step.destination);
          continue;
        }
        break;
    }
    if (!error.empty()) return where + error;
    ++pc;
  }
  if (steps >= kMaxSteps) return "the walk did not end";
  for (int t : c.graph.outputs) {
    if (std::string e = arena.Read(t); !e.empty()) return "graph output: " + e;
  }
  return "";
}

struct PlanCase {
  std::string name;
  std::vector<uint8_t> model;
  std::vector<std::vector<bool>> paths;
};

std::vector<PlanCase> Cases() {
  const std::vector<bool> never = {false};
  const std::vector<bool> once = {true, false};
  const std::vector<bool> thrice = {true, true, true, false};
  return {
      {"if", IfModelBuilder().Finish(), {{true}, {false}}},
      {"while", WhileModelBuilder().Finish(), {never, once, thrice}},
      // The IF's condition comes first, then the loop's inside its then-branch.
      {"nested", NestedControlFlowBuilder().Finish(), {{false}, {true, false}, {true, true, true}}},
      {"single_if", SingleIfBuilder().Finish(), {{true}, {false}}},
      {"single_while", SingleWhileBuilder().Finish(), {never, thrice}},
      // CALL_ONCE's init runs on the first inference, not on later ones.
      {"counter", CounterModelBuilder(TflType::kInt8).Finish(), {{true}, {false}}},
      // CALL_ONCE's condition, then the loop's (or the IF's) with the handle bound when compiling.
      {"while_accumulator",
       WhileAccumulatorModelBuilder().Finish(),
       {{true, true, true, true, false}, {false, false}, {false, true, false}}},
      {"if_assign", IfAssignModelBuilder().Finish(), {{true, true}, {false, false}, {true, false}}},
      {"raise_to_five", RaiseToFiveModelBuilder().Finish(), {{false}, {true, true, false}}},
      // Two IFs over one pair of branches, copied per variable: CALL_ONCE's condition, then each
      // IF's (and, nested, the loop's in the then-branch copies).
      {"shared_branches",
       SharedBranchesModelBuilder().Finish(),
       {{true, true, true}, {false, false, false}, {false, true, false}, {true, false, true}}},
      {"shared_loop_branches",
       SharedBranchesModelBuilder(true).Finish(),
       {{true, true, true, false, false},
        {false, false, true, true, true, true, false},
        {false, true, true, false, true, false}}},
  };
}

TEST(ControlFlowMemoryTest, EveryReadFindsWhatItsWriterLeftOnEveryPath) {
  for (const PlanCase& pc : Cases()) {
    absl::StatusOr<compiler::CompileResult> r = compiler::Compile(pc.model, {});
    ASSERT_TRUE(r.ok()) << pc.name << ": " << r.status();
    absl::StatusOr<std::vector<compiler::ChainStep>> chain = compiler::ExpandChain(r->compilation);
    ASSERT_TRUE(chain.ok()) << pc.name << ": " << chain.status();
    for (const std::vector<bool>& path : pc.paths) {
      EXPECT_EQ(WalkChain(r->compilation, *chain, path), "")
          << pc.name << " with " << path.size() << " conditions";
    }
  }
}

// The walk finds a plan that puts two tensors a loop body needs at once in the same bytes: the
// body's next counter value, moved onto its doubled x, is gone when the copy-out reads it.
TEST(ControlFlowMemoryTest, TheWalkFindsTensorsPlacedOverEachOther) {
  absl::StatusOr<compiler::CompileResult> r = compiler::Compile(WhileModelBuilder().Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  compiler::Compilation& c = r->compilation;
  const compiler::Subgraph& body = c.graph.subgraph(2);
  ASSERT_EQ(body.outputs.size(), 2u);
  absl::StatusOr<std::vector<compiler::ChainStep>> chain = compiler::ExpandChain(c);
  ASSERT_TRUE(chain.ok()) << chain.status();
  ASSERT_EQ(WalkChain(c, *chain, {true, false}), "");
  c.memory.tensor_offset[body.outputs[0]] = c.memory.tensor_offset[body.outputs[1]];
  EXPECT_EQ(WalkChain(c, *chain, {false}), "") << "the body does not run";
  const std::string error = WalkChain(c, *chain, {true, false});
  EXPECT_NE(error.find(absl::StrCat("'", c.graph.tensors[body.outputs[0]].name, "'")),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(absl::StrCat("holds '", c.graph.tensors[body.outputs[1]].name, "'")),
            std::string::npos)
      << error;
}

bool Overlap(const compiler::Compilation& c, int t, int u) {
  const int64_t tb = c.memory.tensor_offset[t], ub = c.memory.tensor_offset[u];
  if (tb < 0 || ub < 0) return false;
  return tb < ub + c.graph.tensors[u].SizeBytes() && ub < tb + c.graph.tensors[t].SizeBytes();
}

// The walk above would also pass if no subgraph tensor shared anything (as the plan once did);
// here the sharing it allows happens: the loop body's tensors reuse bytes of tensors dead around
// the loop or of the condition's.
TEST(ControlFlowMemoryTest, ALoopBodysTensorsShareBytesWithOthers) {
  absl::StatusOr<compiler::CompileResult> r = compiler::Compile(WhileModelBuilder().Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  const compiler::Compilation& c = r->compilation;
  const compiler::Subgraph& body = c.graph.subgraph(2);
  int shared = 0;
  for (const compiler::Op& op : body.ops) {
    for (int t : op.outputs) {
      for (size_t u = 0; u < c.graph.tensors.size(); ++u) {
        if (static_cast<int>(u) != t && Overlap(c, t, static_cast<int>(u))) ++shared;
      }
    }
  }
  EXPECT_GT(shared, 0) << "no tensor written in the loop body shares arena bytes";
}

}  // namespace
}  // namespace boardlab::testing
