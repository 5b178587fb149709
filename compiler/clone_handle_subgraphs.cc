#include "compiler/clone_handle_subgraphs.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace boardlab::compiler {
namespace {

using Names = std::set<int>;         // the variables a handle can name
using Binding = std::vector<Names>;  // per input (or output) position of a subgraph
using TensorNames = std::map<int, Names>;

// What one subgraph does with one binding of its inputs.
struct Context {
  Binding outputs;
  // For each call (IF, WHILE, CALL_ONCE) among the subgraph's ops, by position: the binding its
  // callees get (IF's both branches, WHILE's cond and body alike; none for CALL_ONCE's init).
  std::map<size_t, Binding> callee_inputs;
  int index = -1;  // the subgraph that runs it, once made
};

Binding NamesOf(const TensorNames& names, const std::vector<int>& tensors) {
  Binding binding;
  for (int t : tensors) {
    const auto it = names.find(t);
    binding.push_back(it == names.end() ? Names{} : it->second);
  }
  return binding;
}

void Name(TensorNames& names, const std::vector<int>& tensors, const Binding& binding) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!binding[i].empty()) names[tensors[i]] = binding[i];
  }
}

void Merge(Binding& into, const Binding& more) {
  for (size_t i = 0; i < into.size(); ++i) into[i].insert(more[i].begin(), more[i].end());
}

class Cloner {
 public:
  Cloner(Graph& graph, const HandleVariables& variables)
      : graph_(graph), variables_(variables), originals_(graph.subgraphs) {}

  absl::Status Run() {
    const size_t count = originals_.size() + 1;
    contexts_per_subgraph_.assign(count, 0);
    TensorNames names;
    std::map<size_t, Binding> callee_inputs;
    if (absl::Status s = Walk(graph_.ops, names, callee_inputs); !s.ok()) return s;
    if (absl::Status s = CheckCopiedOps(callee_inputs); !s.ok()) return s;
    made_.assign(count, false);
    copies_.assign(count, 0);
    Redirect(graph_.ops, callee_inputs);
    return absl::OkStatus();
  }

 private:
  // Names the handles `ops` produce, in order, and records the binding of each call.
  absl::Status Walk(const std::vector<Op>& ops, TensorNames& names,
                    std::map<size_t, Binding>& callee_inputs) {
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.type == OpType::kVarHandle) names[op.outputs[0]] = {variables_.at(op.outputs[0])};
      if (!IsControlFlowOp(op.type)) continue;
      absl::StatusOr<Binding> binding = op.type == OpType::kIf      ? CallIf(op, names)
                                        : op.type == OpType::kWhile ? CallWhile(op, names)
                                                                    : CallOnce(op);
      if (!binding.ok()) return binding.status();
      callee_inputs[i] = *std::move(binding);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Binding> CallIf(const Op& op, TensorNames& names) {
    const auto& o = op.opts<ControlFlowOptions>();
    const Binding args = NamesOf(names, std::vector<int>(op.inputs.begin() + 1, op.inputs.end()));
    Binding outputs(op.outputs.size());
    for (int branch : {o.first, o.second}) {
      absl::StatusOr<const Context*> c = Analyze(branch, args);
      if (!c.ok()) return c.status();
      Merge(outputs, (*c)->outputs);
    }
    Name(names, op.outputs, outputs);
    return args;
  }

  // The loop state starts as the inputs and takes the body's outputs after every turn: what it
  // names grows until a turn adds nothing (the sets only grow, so this ends).
  absl::StatusOr<Binding> CallWhile(const Op& op, TensorNames& names) {
    const auto& o = op.opts<ControlFlowOptions>();
    Binding state = NamesOf(names, op.inputs);
    while (true) {
      if (absl::StatusOr<const Context*> c = Analyze(o.first, state); !c.ok()) return c.status();
      absl::StatusOr<const Context*> body = Analyze(o.second, state);
      if (!body.ok()) return body.status();
      Binding next = state;
      Merge(next, (*body)->outputs);
      if (next == state) break;
      state = std::move(next);
    }
    Name(names, op.outputs, state);
    return state;
  }

  absl::StatusOr<Binding> CallOnce(const Op& op) {
    if (absl::StatusOr<const Context*> c = Analyze(op.opts<ControlFlowOptions>().first, {});
        !c.ok()) {
      return c.status();
    }
    return Binding{};
  }

  absl::StatusOr<const Context*> Analyze(int subgraph, const Binding& inputs) {
    const auto key = std::make_pair(subgraph, inputs);
    if (const auto it = contexts_.find(key); it != contexts_.end()) return &it->second;
    const Subgraph& sub = originals_[static_cast<size_t>(subgraph) - 1];
    if (contexts_per_subgraph_[subgraph]++ > 0) {
      // A WHILE's cond and body are analysed with every binding its loop state passes through,
      // though only the last is copied (CheckCopiedOps counts those); the analyses still must
      // not multiply without end.
      analyzed_ops_ += OpsOf(sub);
      if (analyzed_ops_ > kMaxAnalyzedSubgraphOps) return TooManyAnalyses();
    }
    TensorNames names;
    Name(names, sub.inputs, inputs);
    Context c;
    if (absl::Status s = Walk(sub.ops, names, c.callee_inputs); !s.ok()) return s;
    c.outputs = NamesOf(names, sub.outputs);
    return &contexts_.emplace(key, std::move(c)).first->second;
  }

  // An empty subgraph's copies cost little, but they still must not multiply without end.
  static size_t OpsOf(const Subgraph& sub) { return std::max<size_t>(1, sub.ops.size()); }

  // The calls Redirect follows from `calls` (positions in `ops`), each binding once: counts the
  // bindings each subgraph is called with.
  void Reach(const std::vector<Op>& ops, const std::map<size_t, Binding>& calls,
             std::set<std::pair<int, Binding>>& reached, std::vector<size_t>& bindings) const {
    for (const auto& [i, inputs] : calls) {
      const auto& o = ops[i].opts<ControlFlowOptions>();
      for (int callee : {o.first, o.second}) {
        if (!reached.insert(std::make_pair(callee, inputs)).second) continue;
        ++bindings[static_cast<size_t>(callee)];
        Reach(originals_[static_cast<size_t>(callee) - 1].ops,
              contexts_.at(std::make_pair(callee, inputs)).callee_inputs, reached, bindings);
      }
    }
  }

  // Refuses, before anything changes, copies of more than kMaxCopiedSubgraphOps ops: each
  // subgraph's first binding keeps the subgraph, every further one is a copy of it.
  absl::Status CheckCopiedOps(const std::map<size_t, Binding>& main_calls) const {
    std::set<std::pair<int, Binding>> reached;
    std::vector<size_t> bindings(originals_.size() + 1, 0);
    Reach(graph_.ops, main_calls, reached, bindings);
    size_t copied_ops = 0;
    for (size_t k = 1; k < bindings.size(); ++k) {
      if (bindings[k] > 1) copied_ops += (bindings[k] - 1) * OpsOf(originals_[k - 1]);
    }
    return copied_ops > kMaxCopiedSubgraphOps ? TooManyCopies() : absl::OkStatus();
  }

  // "unsupported model: binding ... `needs` more than `limit` operators `what`".
  static absl::Status TooMany(const char* needs, size_t limit, const char* what) {
    return absl::UnimplementedError(
        absl::StrCat("unsupported model: binding its resource handles to variables when "
                     "compiling ",
                     needs, " more than ", limit, " operators ", what));
  }

  static absl::Status TooManyAnalyses() {
    return TooMany("analyses", kMaxAnalyzedSubgraphOps,
                   "of subgraphs called with different variables' handles (subgraphs that pass "
                   "handles on to subgraphs from several places, or loops whose handles change "
                   "from turn to turn, multiply)");
  }

  static absl::Status TooManyCopies() {
    return TooMany("needs", kMaxCopiedSubgraphOps,
                   "in copies of subgraphs called with different variables' handles (subgraphs "
                   "that pass handles on to subgraphs from several places multiply)");
  }

  void Redirect(std::vector<Op>& ops, const std::map<size_t, Binding>& callee_inputs) {
    for (const auto& [i, inputs] : callee_inputs) {
      auto& o = ops[i].opts<ControlFlowOptions>();
      o.first = Make(o.first, inputs);
      o.second = Make(o.second, inputs);
    }
  }

  // The subgraph that runs `subgraph` with `inputs`: the subgraph itself for its first binding,
  // a copy after it for each other one.
  int Make(int subgraph, const Binding& inputs) {
    Context& c = contexts_.at(std::make_pair(subgraph, inputs));
    if (c.index >= 0) return c.index;
    Subgraph sub = originals_[static_cast<size_t>(subgraph) - 1];
    if (made_[subgraph]) {
      RenewHandles(sub);
      sub.copy = ++copies_[subgraph];
      graph_.subgraphs.emplace_back();  // the slot, before nested calls append theirs
      c.index = static_cast<int>(graph_.subgraphs.size());
    } else {
      made_[subgraph] = true;
      c.index = subgraph;
    }
    Redirect(sub.ops, c.callee_inputs);
    graph_.subgraphs[static_cast<size_t>(c.index) - 1] = std::move(sub);
    return c.index;
  }

  // Gives a copy its own handle tensors, so that they can name other variables than the
  // original's.
  void RenewHandles(Subgraph& sub) {
    std::map<int, int> renewed;
    auto renew = [&](std::vector<int>& tensors) {
      for (int& t : tensors) {
        if (t == kNoTensor || graph_.tensors[t].type != DataType::kResource) continue;
        auto [it, fresh] = renewed.try_emplace(t, -1);
        if (fresh) {
          Tensor copy = graph_.tensors[t];
          copy.producer = -1;
          copy.consumers.clear();
          it->second = graph_.AddTensor(std::move(copy));
        }
        t = it->second;
      }
    };
    renew(sub.inputs);
    renew(sub.outputs);
    for (Op& op : sub.ops) {
      renew(op.inputs);
      renew(op.outputs);
    }
  }

  Graph& graph_;
  const HandleVariables& variables_;
  const std::vector<Subgraph> originals_;  // as merged: the copies' source
  std::map<std::pair<int, Binding>, Context> contexts_;
  std::vector<int> contexts_per_subgraph_;
  size_t analyzed_ops_ = 0;  // in the contexts beyond each subgraph's first
  std::vector<bool> made_;   // per original subgraph: its own index is taken
  std::vector<int> copies_;  // per original subgraph: the copies made of it
};

}  // namespace

absl::Status CloneSubgraphsPerHandleBinding(Graph& graph, const HandleVariables& variables) {
  return Cloner(graph, variables).Run();
}

}  // namespace boardlab::compiler
