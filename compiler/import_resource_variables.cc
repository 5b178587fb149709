#include "compiler/import_resource_variables.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace boardlab::compiler {
namespace {

// An op in TFLite Micro's prepare order: subgraph 0's ops, then subgraph 1's, and so on.
struct OpRef {
  int subgraph = 0;
  Op* op = nullptr;
};

std::vector<OpRef> PrepareOrder(Graph& graph) {
  std::vector<OpRef> order;
  for (Op& op : graph.ops) order.push_back({0, &op});
  for (size_t k = 0; k < graph.subgraphs.size(); ++k) {
    for (Op& op : graph.subgraphs[k].ops) order.push_back({static_cast<int>(k) + 1, &op});
  }
  return order;
}

std::string Where(const Graph& graph, const OpRef& ref) {
  return ref.subgraph == 0 ? graph.Describe(*ref.op)
                           : absl::StrCat(graph.Describe(*ref.op), " of subgraph ", ref.subgraph);
}

std::string Signature(const Tensor& t) {
  return absl::StrCat(DataTypeName(t.type), "[", absl::StrJoin(t.shape, ","), "]");
}

absl::Status Invalid(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("invalid model: ", where, ": ", what));
}

absl::Status Unresolvable(const std::string& where, const std::string& what) {
  return absl::UnimplementedError(absl::StrCat(
      "unsupported model: ", where, ": ", what,
      "; boardlab resolves resource handles when compiling and follows none across subgraphs "
      "(create the VAR_HANDLE in the subgraph that reads or assigns the variable)"));
}

struct Variable {
  VarHandleOptions name;
  int first_assignment = -1;  // index into the prepare order
  int value = kNoTensor;      // the first assignment's value: type, shape, quantization
  int tensor = kNoTensor;     // the variable tensor, once created
};

class Resolver {
 public:
  explicit Resolver(Graph& graph) : graph_(graph), order_(PrepareOrder(graph)) {}

  absl::Status Run() {
    // Models without state keep their tensors exactly as imported.
    const bool stateful = std::any_of(order_.begin(), order_.end(), [](const OpRef& ref) {
      return IsResourceVariableOp(ref.op->type) || ref.op->type == OpType::kCallOnce;
    });
    if (!stateful) return RefuseUnresolvableHandles();
    NameVariables();
    if (absl::Status s = RefuseUnresolvableHandles(); !s.ok()) return s;
    if (absl::Status s = TypeVariables(); !s.ok()) return s;
    if (absl::Status s = CheckReads(); !s.ok()) return s;
    CreateVariableTensors();
    RewriteAccesses();
    GiveCallOnceItsFlag();
    NumberEffects();
    graph_.Compact();
    return VerifyGraph(graph_);
  }

 private:
  // MicroResourceVariables::FindId: same shared_name, and the container too when the handle
  // names one.
  int FindVariable(const VarHandleOptions& name) const {
    for (size_t v = 0; v < variables_.size(); ++v) {
      const VarHandleOptions& known = variables_[v].name;
      if (known.shared_name != name.shared_name) continue;
      if (!name.has_container || name.container == known.container) return static_cast<int>(v);
    }
    return -1;
  }

  void NameVariables() {
    for (const OpRef& ref : order_) {
      if (ref.op->type != OpType::kVarHandle) continue;
      const auto& name = ref.op->opts<VarHandleOptions>();
      int v = FindVariable(name);
      if (v < 0) {
        v = static_cast<int>(variables_.size());
        variables_.push_back({name});
      }
      variable_of_handle_[ref.op->outputs[0]] = v;
    }
  }

  bool IsHandle(int t) const {
    return t != kNoTensor && graph_.tensors[t].type == DataType::kResource;
  }

  // Every resource tensor an op reads must come from a VAR_HANDLE of its own subgraph; none may
  // leave a subgraph or enter the main graph.
  absl::Status RefuseUnresolvableHandles() const {
    for (const OpRef& ref : order_) {
      for (size_t i = 0; i < ref.op->inputs.size(); ++i) {
        const int t = ref.op->inputs[i];
        if (!IsHandle(t)) continue;
        const Tensor& handle = graph_.tensors[t];
        const bool accessor =
            ref.op->type == OpType::kReadVariable || ref.op->type == OpType::kAssignVariable;
        if (!accessor) {
          return Unresolvable(Where(graph_, ref), absl::StrCat("passes resource handle '",
                                                               handle.name, "' to a subgraph"));
        }
        if (!variable_of_handle_.contains(t)) {
          return Unresolvable(Where(graph_, ref),
                              absl::StrCat("resource handle '", handle.name,
                                           "' is not the output of a VAR_HANDLE of the same "
                                           "subgraph (a subgraph input)"));
        }
      }
    }
    auto boundary = [this](const std::vector<int>& tensors, const std::string& what) {
      for (int t : tensors) {
        if (!IsHandle(t)) continue;
        return Unresolvable(what, absl::StrCat("resource handle '", graph_.tensors[t].name,
                                               "' crosses the subgraph's boundary"));
      }
      return absl::OkStatus();
    };
    for (const std::vector<int>* list : {&graph_.inputs, &graph_.outputs}) {
      if (absl::Status s = boundary(*list, "the main graph"); !s.ok()) return s;
    }
    for (size_t k = 0; k < graph_.subgraphs.size(); ++k) {
      const Subgraph& sub = graph_.subgraphs[k];
      for (const std::vector<int>* list : {&sub.inputs, &sub.outputs}) {
        if (absl::Status s = boundary(*list, absl::StrCat("subgraph ", k + 1)); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

  int VariableOf(const Op& op) const { return variable_of_handle_.at(op.inputs[0]); }

  std::string VariableLabel(int v) const {
    return absl::StrCat("resource variable '", variables_[v].name.shared_name, "'");
  }

  // TFLite Micro allocates a variable at the first ASSIGN_VARIABLE it prepares, with that value's
  // byte count, and copies that many bytes at every later assignment and read.
  absl::Status TypeVariables() {
    for (size_t i = 0; i < order_.size(); ++i) {
      const Op& op = *order_[i].op;
      if (op.type != OpType::kAssignVariable) continue;
      Variable& var = variables_[VariableOf(op)];
      const Tensor& value = graph_.input(op, 1);
      if (var.value == kNoTensor) {
        var.first_assignment = static_cast<int>(i);
        var.value = op.inputs[1];
        continue;
      }
      const Tensor& first = graph_.tensors[var.value];
      if (value.type != first.type || value.SizeBytes() != first.SizeBytes()) {
        return Invalid(
            Where(graph_, order_[i]),
            absl::StrCat("assigns ", Signature(value), " to ", VariableLabel(VariableOf(op)),
                         ", which its first assignment (",
                         Where(graph_, order_[var.first_assignment]), ") made ", Signature(first),
                         "; TFLite Micro keeps a variable's type and byte count"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckReads() const {
    for (const OpRef& ref : order_) {
      if (ref.op->type != OpType::kReadVariable) continue;
      const int v = VariableOf(*ref.op);
      const Tensor& out = graph_.output(*ref.op);
      if (variables_[v].value == kNoTensor) {
        return Invalid(Where(graph_, ref),
                       absl::StrCat("reads ", VariableLabel(v),
                                    ", which no ASSIGN_VARIABLE assigns: TFLite Micro creates a "
                                    "variable's storage at its first assignment"));
      }
      const Tensor& value = graph_.tensors[variables_[v].value];
      if (out.type != value.type || out.SizeBytes() != value.SizeBytes()) {
        return Invalid(Where(graph_, ref),
                       absl::StrCat("reads ", VariableLabel(v), " (", Signature(value), ") into '",
                                    out.name, "' (", Signature(out), ")"));
      }
    }
    return absl::OkStatus();
  }

  void CreateVariableTensors() {
    for (Variable& var : variables_) {
      if (var.value == kNoTensor) continue;  // named but never assigned (nor read: CheckReads)
      const Tensor& value = graph_.tensors[var.value];
      Tensor t;
      t.name = var.name.shared_name;
      t.shape = value.shape;
      t.type = value.type;
      t.quant = value.quant;
      t.is_variable = true;
      // MicroResourceVariables::Allocate memsets the buffer with the zero point cast to int8.
      t.reset_fill = t.quant.empty() ? 0 : static_cast<uint8_t>(static_cast<int8_t>(t.quant.zp()));
      var.tensor = graph_.AddTensor(std::move(t));
    }
  }

  void RewriteAccesses() {
    for (OpRef& ref : order_) {
      Op& op = *ref.op;
      if (op.type == OpType::kReadVariable || op.type == OpType::kAssignVariable) {
        op.inputs[0] = variables_[VariableOf(op)].tensor;
      }
      if (op.type == OpType::kVarHandle) op.dead = true;
    }
    for (Subgraph& sub : graph_.subgraphs) {
      std::erase_if(sub.ops, [](const Op& op) { return op.dead; });
    }
    order_.clear();  // the subgraphs' ops moved
  }

  int ConstantFalse() {
    if (constant_false_ == kNoTensor) {
      Tensor t;
      t.name = "call_once_false";
      t.shape = {1};
      t.type = DataType::kBool;
      t.data = {0};
      t.is_constant = true;
      constant_false_ = graph_.AddTensor(std::move(t));
    }
    return constant_false_;
  }

  // CALL_ONCE's has_run, inverted so that its condition kernel hands the jump flag on as it is:
  // "not run yet" starts at 1 at every load, and the lowering copies false into it once the
  // init subgraph has run.
  void GiveCallOnceItsFlag() {
    std::vector<Op*> call_onces;
    for (Op& op : graph_.ops) {
      if (op.type == OpType::kCallOnce) call_onces.push_back(&op);
    }
    for (Subgraph& sub : graph_.subgraphs) {
      for (Op& op : sub.ops) {
        if (op.type == OpType::kCallOnce) call_onces.push_back(&op);
      }
    }
    for (Op* op : call_onces) {
      Tensor flag;
      flag.name = absl::StrCat("call_once_", op->source_index, "_pending");
      flag.shape = {1};
      flag.type = DataType::kBool;
      flag.is_variable = true;
      flag.reset_fill = 1;
      const int pending = graph_.AddTensor(std::move(flag));
      op->inputs = {pending, ConstantFalse()};
    }
  }

  // Whether subgraph `k` (>= 1), or one it calls, reads or writes state.
  bool SubgraphHasEffects(int k, std::vector<int>& memo) const {
    if (memo[k] < 0) {
      memo[k] = 0;  // no recursion (import_control_flow.cc), but stay finite anyway
      for (const Op& op : graph_.subgraph(k).ops) {
        if (OpHasEffects(op, memo)) memo[k] = 1;
      }
    }
    return memo[k] == 1;
  }

  bool OpHasEffects(const Op& op, std::vector<int>& memo) const {
    if (op.type == OpType::kReadVariable || op.type == OpType::kAssignVariable ||
        op.type == OpType::kCallOnce) {
      return true;
    }
    if (op.type != OpType::kIf && op.type != OpType::kWhile) return false;
    const auto& o = op.opts<ControlFlowOptions>();
    return SubgraphHasEffects(o.first, memo) || SubgraphHasEffects(o.second, memo);
  }

  void NumberEffects() {
    std::vector<int> memo(graph_.subgraphs.size() + 1, -1);
    int next = 0;
    for (Op& op : graph_.ops) {
      if (!op.dead && OpHasEffects(op, memo)) op.effect_order = next++;
    }
  }

  Graph& graph_;
  std::vector<OpRef> order_;
  std::vector<Variable> variables_;
  std::map<int, int> variable_of_handle_;  // VAR_HANDLE output tensor -> variable
  int constant_false_ = kNoTensor;
};

}  // namespace

absl::Status ResolveResourceVariables(Graph& graph) { return Resolver(graph).Run(); }

}  // namespace boardlab::compiler
