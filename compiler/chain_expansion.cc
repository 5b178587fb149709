// ExpandChain (declared in pte_writer.h): the serializer's instruction list, with IF, WHILE and
// CALL_ONCE lowered into copies, condition kernels and jumps around their called subgraphs' ops,
// and READ_VARIABLE / ASSIGN_VARIABLE into copies out of and into their variable's state.

#include "compiler/pte_writer.h"

#include "absl/strings/str_cat.h"

namespace boardlab::compiler {
namespace {

// Every call site inlines its subgraph, so a subgraph that calls another from both branches, and
// so on down, doubles the chain at each level: a hostile model could ask for billions of
// instructions. Far above any real model's count (MobileNetV2 has ~100).
constexpr size_t kMaxChainSteps = size_t{1} << 20;

class ChainExpander {
 public:
  explicit ChainExpander(const Graph& graph) : graph_(graph) {}

  void Op(const compiler::Op& op, int subgraph) {
    if (steps_.size() > kMaxChainSteps) return;  // Take() reports it
    if (op.type == OpType::kIf) return If(op, subgraph);
    if (op.type == OpType::kWhile) return While(op, subgraph);
    if (op.type == OpType::kCallOnce) return CallOnce(op, subgraph);
    // import_resource_variables.cc made input 0 the variable itself, unless the handle names
    // one of several depending on the run: then input 0 stays the handle and the kernel picks
    // the variable among the others. A VAR_HANDLE left is a graph output: import made it copy
    // its constant id there.
    if (op.type == OpType::kVarHandle) return Copy(op, subgraph, op.inputs[0], op.outputs[0]);
    if (IsResourceVariableOp(op.type) && graph_.tensors[op.inputs[0]].is_variable) {
      if (op.type == OpType::kReadVariable) return Copy(op, subgraph, op.inputs[0], op.outputs[0]);
      if (op.type == OpType::kAssignVariable) return Copy(op, subgraph, op.inputs[1], op.inputs[0]);
    }
    ChainStep step;
    step.op = &op;
    step.subgraph = subgraph;
    steps_.push_back(step);
  }

  void Delegate(int partition) {
    ChainStep step;
    step.kind = ChainStepKind::kDelegate;
    step.partition = partition;
    steps_.push_back(step);
  }

  absl::StatusOr<std::vector<ChainStep>> Take() {
    if (steps_.size() > kMaxChainSteps) {
      return absl::FailedPreconditionError(absl::StrCat(
          "unsupported model: its IF and WHILE subgraphs inline into more than ", kMaxChainSteps,
          " instructions (subgraphs that call subgraphs from several "
          "places multiply)"));
    }
    return std::move(steps_);
  }

 private:
  ChainStep Helper(ChainStepKind kind, const compiler::Op& op, int subgraph) const {
    ChainStep step;
    step.kind = kind;
    step.op = &op;
    step.subgraph = subgraph;
    return step;
  }

  void Copy(const compiler::Op& op, int subgraph, int from, int to) {
    ChainStep step = Helper(ChainStepKind::kCopy, op, subgraph);
    step.from = from;
    step.to = to;
    steps_.push_back(step);
  }

  void Copies(const compiler::Op& op, int subgraph, const std::vector<int>& from,
              const std::vector<int>& to) {
    for (size_t i = 0; i < from.size(); ++i) {
      if (from[i] != to[i]) Copy(op, subgraph, from[i], to[i]);
    }
  }

  void Body(int callee) {
    for (const compiler::Op& op : graph_.subgraph(callee).ops) Op(op, callee);
  }

  // The condition kernel then a jump on it; returns the jump's index, to patch.
  size_t Condition(const compiler::Op& op, int subgraph, int tensor) {
    ChainStep cond = Helper(ChainStepKind::kCondition, op, subgraph);
    cond.from = tensor;
    steps_.push_back(cond);
    return Jump(op, subgraph, true, -1);
  }

  size_t Jump(const compiler::Op& op, int subgraph, bool conditional, int destination) {
    ChainStep jump = Helper(ChainStepKind::kJump, op, subgraph);
    jump.conditional = conditional;
    jump.destination = destination;
    steps_.push_back(jump);
    return steps_.size() - 1;
  }

  int Here() const { return static_cast<int>(steps_.size()); }

  // cond -> flag; jump to else when false; then-branch; jump past else; else-branch.
  void If(const compiler::Op& op, int subgraph) {
    const auto& o = op.opts<ControlFlowOptions>();
    const std::vector<int> values(op.inputs.begin() + 1, op.inputs.end());
    const size_t to_else = Condition(op, subgraph, op.inputs[0]);
    Branch(op, subgraph, o.first, values);
    const size_t to_end = Jump(op, subgraph, false, -1);
    steps_[to_else].destination = Here();
    Branch(op, subgraph, o.second, values);
    steps_[to_end].destination = Here();
  }

  void Branch(const compiler::Op& op, int subgraph, int callee, const std::vector<int>& values) {
    const Subgraph& branch = graph_.subgraph(callee);
    Copies(op, subgraph, values, branch.inputs);
    Body(callee);
    Copies(op, subgraph, branch.outputs, op.outputs);
  }

  // WHILE's outputs hold the loop state: inputs -> state; top: state -> cond, cond -> flag, exit
  // when false; state -> body, body -> state; back to top.
  void While(const compiler::Op& op, int subgraph) {
    const auto& o = op.opts<ControlFlowOptions>();
    const Subgraph& cond = graph_.subgraph(o.first);
    const Subgraph& body = graph_.subgraph(o.second);
    Copies(op, subgraph, op.inputs, op.outputs);
    const int top = Here();
    Copies(op, subgraph, op.outputs, cond.inputs);
    Body(o.first);
    const size_t to_exit = Condition(op, subgraph, cond.outputs[0]);
    Copies(op, subgraph, op.outputs, body.inputs);
    Body(o.second);
    Copies(op, subgraph, body.outputs, op.outputs);
    Jump(op, subgraph, false, top);
    steps_[to_exit].destination = Here();
  }

  // TFLite Micro's CALL_ONCE: the "not run yet" flag (input 0, 1 at load) -> jump flag, past
  // the init subgraph when false; init; then the flag becomes false (input 1, a constant). The
  // flag is cleared after init, as TFLite Micro sets has_run after its init subgraph returns.
  void CallOnce(const compiler::Op& op, int subgraph) {
    const size_t to_end = Condition(op, subgraph, op.inputs[0]);
    Body(op.opts<ControlFlowOptions>().first);
    Copy(op, subgraph, op.inputs[1], op.inputs[0]);
    steps_[to_end].destination = Here();
  }

  const Graph& graph_;
  std::vector<ChainStep> steps_;
};

}  // namespace

absl::StatusOr<std::vector<ChainStep>> ExpandChain(const Compilation& c) {
  absl::StatusOr<std::vector<PteInstruction>> schedule = ScheduleInstructions(c);
  if (!schedule.ok()) return schedule.status();
  ChainExpander expander(c.graph);
  for (const PteInstruction& instr : *schedule) {
    if (instr.is_delegate) {
      expander.Delegate(instr.index);
    } else {
      expander.Op(c.graph.ops[instr.index], 0);
    }
  }
  return expander.Take();
}

}  // namespace boardlab::compiler
