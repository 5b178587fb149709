#include "compiler/import_control_flow.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace boardlab::compiler {
namespace {

// "IF #2" in the main graph, "IF #2 of subgraph 1" elsewhere.
std::string Where(const Graph& graph, int subgraph, const Op& op) {
  return subgraph == 0 ? graph.Describe(op)
                       : absl::StrCat(graph.Describe(op), " of subgraph ", subgraph);
}

absl::Status Invalid(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("invalid model: ", where, ": ", what));
}

std::string Signature(const Tensor& t) {
  return absl::StrCat(DataTypeName(t.type), "[", absl::StrJoin(t.shape, ","), "]");
}

// The subgraphs `op` calls (both of them), checked to exist and not to be the main graph.
absl::Status CheckCallees(const std::vector<Graph>& subgraphs, const std::string& where,
                          const Op& op) {
  const auto& o = op.opts<ControlFlowOptions>();
  const bool is_if = op.type == OpType::kIf;
  const bool is_call_once = op.type == OpType::kCallOnce;
  const std::pair<const char*, int32_t> callees[] = {{is_call_once ? "init"
                                                      : is_if      ? "then"
                                                                   : "cond",
                                                      o.first},
                                                     {is_call_once ? "init"
                                                      : is_if      ? "else"
                                                                   : "body",
                                                      o.second}};
  for (const auto& [role, index] : callees) {
    if (index <= 0 || index >= static_cast<int32_t>(subgraphs.size())) {
      return Invalid(where, absl::StrCat(role, " subgraph index ", index,
                                         " out of range (the "
                                         "model has subgraphs 1..",
                                         subgraphs.size() - 1, " to call)"));
    }
  }
  return absl::OkStatus();
}

// Tensors `actual` of the caller against `expected` of the callee, pair by pair.
absl::Status CheckSameTensors(const std::string& where, const std::string& what,
                              const Graph& caller, const std::vector<int>& actual,
                              const Graph& callee, const std::vector<int>& expected) {
  if (actual.size() != expected.size()) {
    return Invalid(where,
                   absl::StrCat(what, ": ", actual.size(), " tensors against ", expected.size()));
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    const Tensor& a = caller.tensors[actual[i]];
    const Tensor& e = callee.tensors[expected[i]];
    if (a.type != e.type || a.shape != e.shape) {
      return Invalid(where, absl::StrCat(what, ", tensor ", i, ": '", a.name, "' is ", Signature(a),
                                         ", '", e.name, "' is ", Signature(e)));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBoolScalar(const std::string& where, const std::string& what, const Tensor& t) {
  if (t.type != DataType::kBool || t.NumElements() != 1) {
    return Invalid(where, absl::StrCat(what, " '", t.name, "' is ", Signature(t),
                                       ", it must be a bool tensor of one element"));
  }
  return absl::OkStatus();
}

absl::Status CheckIf(const std::vector<Graph>& subgraphs, const std::string& where,
                     const Graph& graph, const Op& op) {
  if (op.inputs.empty() || op.inputs[0] == kNoTensor) {
    return Invalid(where, "IF needs its condition as input 0");
  }
  if (absl::Status s = CheckBoolScalar(where, "condition", graph.input(op, 0)); !s.ok()) return s;
  const std::vector<int> values(op.inputs.begin() + 1, op.inputs.end());
  for (int t : values) {
    if (t == kNoTensor) return Invalid(where, "an IF input is absent (-1)");
  }
  const auto& o = op.opts<ControlFlowOptions>();
  for (const auto& [role, index] : {std::pair{"then", o.first}, std::pair{"else", o.second}}) {
    const Graph& branch = subgraphs[index];
    const std::string label = absl::StrCat(role, " subgraph ", index);
    if (absl::Status s = CheckSameTensors(where, absl::StrCat("inputs against ", label), graph,
                                          values, branch, branch.inputs);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckSameTensors(where, absl::StrCat("outputs against ", label), graph,
                                          op.outputs, branch, branch.outputs);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckWhile(const std::vector<Graph>& subgraphs, const std::string& where,
                        const Graph& graph, const Op& op) {
  for (int t : op.inputs) {
    if (t == kNoTensor) return Invalid(where, "a WHILE input is absent (-1)");
  }
  // The loop state: WHILE's outputs carry what its inputs start with, through every iteration.
  if (absl::Status s = CheckSameTensors(where, "outputs against its inputs", graph, op.outputs,
                                        graph, op.inputs);
      !s.ok()) {
    return s;
  }
  const auto& o = op.opts<ControlFlowOptions>();
  const Graph& cond = subgraphs[o.first];
  const Graph& body = subgraphs[o.second];
  const std::string cond_label = absl::StrCat("cond subgraph ", o.first);
  const std::string body_label = absl::StrCat("body subgraph ", o.second);
  const struct {
    std::string what;
    const Graph& callee;
    const std::vector<int>& tensors;
  } checks[] = {{absl::StrCat("inputs against ", cond_label, " inputs"), cond, cond.inputs},
                {absl::StrCat("inputs against ", body_label, " inputs"), body, body.inputs},
                {absl::StrCat("inputs against ", body_label, " outputs"), body, body.outputs}};
  for (const auto& c : checks) {
    if (absl::Status s = CheckSameTensors(where, c.what, graph, op.inputs, c.callee, c.tensors);
        !s.ok()) {
      return s;
    }
  }
  if (cond.outputs.size() != 1) {
    return Invalid(where, absl::StrCat(cond_label, " has ", cond.outputs.size(),
                                       " outputs, it must have one (the loop condition)"));
  }
  return CheckBoolScalar(where, absl::StrCat(cond_label, " output"), cond.tensors[cond.outputs[0]]);
}

// TFLite Micro's CALL_ONCE invokes its init subgraph with nothing to pass in and nothing to take
// back: an init subgraph only assigns resource variables.
absl::Status CheckCallOnce(const std::vector<Graph>& subgraphs, const std::string& where,
                           const Op& op) {
  const int init = op.opts<ControlFlowOptions>().first;
  const Graph& callee = subgraphs[init];
  if (!callee.inputs.empty() || !callee.outputs.empty()) {
    return Invalid(
        where, absl::StrCat("init subgraph ", init, " has ", callee.inputs.size(), " inputs and ",
                            callee.outputs.size(), " outputs; CALL_ONCE passes none"));
  }
  return absl::OkStatus();
}

// Depth-first search over the call edges; `state` 1 = on the current path, 2 = done.
absl::Status FindRecursion(const std::vector<Graph>& subgraphs, int k, std::vector<int>& state,
                           std::vector<int>& path) {
  state[k] = 1;
  path.push_back(k);
  for (const Op& op : subgraphs[k].ops) {
    if (!IsControlFlowOp(op.type)) continue;
    const auto& o = op.opts<ControlFlowOptions>();
    for (int callee : {o.first, o.second}) {
      if (state[callee] == 1) {
        path.push_back(callee);
        return Invalid(Where(subgraphs[k], k, op),
                       absl::StrCat("subgraph ", callee, " calls itself (call path ",
                                    absl::StrJoin(path, " -> "),
                                    "); TFLite Micro runs no recursive subgraphs"));
      }
      if (state[callee] == 0) {
        if (absl::Status s = FindRecursion(subgraphs, callee, state, path); !s.ok()) return s;
      }
    }
  }
  path.pop_back();
  state[k] = 2;
  return absl::OkStatus();
}

void Renumber(std::vector<int>& tensors, int base) {
  for (int& t : tensors) {
    if (t != kNoTensor) t += base;
  }
}

}  // namespace

absl::Status PrefixSubgraph(const absl::Status& status, int subgraph) {
  std::string message(status.message());
  size_t at = 0;
  for (const std::string prefix : {"invalid model: ", "unsupported model: "}) {
    if (message.compare(0, prefix.size(), prefix) == 0) at = prefix.size();
  }
  message.insert(at, absl::StrCat("subgraph ", subgraph, ": "));
  return absl::Status(status.code(), message);
}

absl::Status CheckControlFlow(const std::vector<Graph>& subgraphs) {
  for (size_t k = 0; k < subgraphs.size(); ++k) {
    const Graph& graph = subgraphs[k];
    for (const Op& op : graph.ops) {
      if (!IsControlFlowOp(op.type)) continue;
      const std::string where = Where(graph, static_cast<int>(k), op);
      if (absl::Status s = CheckCallees(subgraphs, where, op); !s.ok()) return s;
      absl::Status s = op.type == OpType::kIf         ? CheckIf(subgraphs, where, graph, op)
                       : op.type == OpType::kCallOnce ? CheckCallOnce(subgraphs, where, op)
                                                      : CheckWhile(subgraphs, where, graph, op);
      if (!s.ok()) return s;
    }
  }
  std::vector<int> state(subgraphs.size(), 0);
  for (size_t k = 0; k < subgraphs.size(); ++k) {
    std::vector<int> path;
    if (state[k] != 0) continue;
    if (absl::Status s = FindRecursion(subgraphs, static_cast<int>(k), state, path); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

void DropUncalledSubgraphs(Graph& graph) {
  std::vector<bool> called(graph.subgraphs.size() + 1, false);
  std::vector<const std::vector<Op>*> pending = {&graph.ops};
  while (!pending.empty()) {
    const std::vector<Op>& ops = *pending.back();
    pending.pop_back();
    for (const Op& op : ops) {
      if (!IsControlFlowOp(op.type)) continue;
      const auto& o = op.opts<ControlFlowOptions>();
      for (int callee : {o.first, o.second}) {
        if (called[static_cast<size_t>(callee)]) continue;
        called[static_cast<size_t>(callee)] = true;
        pending.push_back(&graph.subgraph(callee).ops);
      }
    }
  }
  for (size_t k = 1; k < called.size(); ++k) {
    if (!called[k]) graph.subgraphs[k - 1].ops.clear();
  }
}

Graph MergeSubgraphs(std::vector<Graph> subgraphs) {
  Graph merged = std::move(subgraphs[0]);
  for (size_t k = 1; k < subgraphs.size(); ++k) {
    Graph& g = subgraphs[k];
    const int base = static_cast<int>(merged.tensors.size());
    for (Tensor& t : g.tensors) {
      // Def/use links describe the main dataflow only (Graph::RebuildUses).
      t.producer = -1;
      t.consumers.clear();
      merged.tensors.push_back(std::move(t));
    }
    Subgraph sub;
    sub.name = g.name;
    sub.source = static_cast<int>(k);
    sub.ops = std::move(g.ops);
    for (Op& op : sub.ops) {
      Renumber(op.inputs, base);
      Renumber(op.outputs, base);
    }
    sub.inputs = std::move(g.inputs);
    sub.outputs = std::move(g.outputs);
    Renumber(sub.inputs, base);
    Renumber(sub.outputs, base);
    merged.subgraphs.push_back(std::move(sub));
  }
  merged.RebuildUses();
  return merged;
}

}  // namespace boardlab::compiler
