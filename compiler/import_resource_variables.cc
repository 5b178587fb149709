#include "compiler/import_resource_variables.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/clone_handle_subgraphs.h"
#include "compiler/import_control_flow.h"

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

std::string Signature(const Tensor& t) {
  return absl::StrCat(DataTypeName(t.type), "[", absl::StrJoin(t.shape, ","), "]");
}

absl::Status Invalid(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("invalid model: ", where, ": ", what));
}

absl::Status Unresolvable(const std::string& where, const std::string& what) {
  return absl::UnimplementedError(
      absl::StrCat("unsupported model: ", where, ": ", what,
                   "; boardlab binds every resource handle to one variable when compiling"));
}

// In a handle's names: the caller's resource id, which can be any variable's.
constexpr int kCallersId = -1;

struct Variable {
  VarHandleOptions name;
  std::string first_assignment;  // where it is, for messages
  int value = kNoTensor;         // the first assignment's value: type, shape, quantization
  int tensor = kNoTensor;        // the variable tensor, once created
};

class Resolver {
 public:
  explicit Resolver(Graph& graph) : graph_(graph), order_(PrepareOrder(graph)) {}

  absl::Status Run() {
    // Models without state keep their tensors exactly as imported.
    const bool stateful = std::any_of(order_.begin(), order_.end(), [](const OpRef& ref) {
      return IsResourceVariableOp(ref.op->type) || ref.op->type == OpType::kCallOnce;
    });
    if (!stateful) {
      DropUncalled();
      if (absl::Status s = RefuseHandlesAtTheBoundary(); !s.ok()) return s;
      return RefuseUnresolvableHandles();
    }
    NameVariables();
    AllocateVariables();
    if (absl::Status s = CloneSubgraphs(); !s.ok()) return s;
    NameTheCallersHandles();
    TraceHandles();
    if (absl::Status s = RefuseUnresolvableHandles(); !s.ok()) return s;
    run_time_handles_ = HandlesDependOnTheRun();
    if (absl::Status s = CheckAssignments(); !s.ok()) return s;
    if (absl::Status s = CheckReads(); !s.ok()) return s;
    CreateVariableTensors();
    if (absl::Status s = FindCandidates(); !s.ok()) return s;
    RewriteAccesses();
    if (run_time_handles_) {
      KeepHandlesAsIds();
    } else {
      DropHandlesFromCalls();
    }
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

  // "READ_VARIABLE #3 of subgraph 2" ("..., copy 1" in a copy of it).
  std::string Where(const OpRef& ref) const { return graph_.Describe(*ref.op, ref.subgraph); }

  // TFLite Micro prepares every subgraph but runs only those called: once the prepare-order
  // bookkeeping (AllocateVariables) is done, nothing checks or compiles the others' ops.
  void DropUncalled() {
    DropUncalledSubgraphs(graph_);
    order_ = PrepareOrder(graph_);
  }

  void NameVariables() {
    for (const OpRef& ref : order_) {
      if (ref.op->type != OpType::kVarHandle) continue;
      const auto& name = ref.op->opts<VarHandleOptions>();
      int v = FindVariable(name);
      if (v < 0) {
        v = static_cast<int>(variables_.size());
        variables_.emplace_back();
        variables_.back().name = name;
      }
      names_[ref.op->outputs[0]].insert(v);
      from_var_handle_.insert(ref.op->outputs[0]);
    }
  }

  // A subgraph called with different variables' handles gets a copy per binding
  // (clone_handle_subgraphs.h); a subgraph nothing calls loses its ops. The copies' handles are
  // new tensors: name the VAR_HANDLEs' outputs again, over the new prepare order.
  absl::Status CloneSubgraphs() {
    HandleVariables variables;
    for (int t : from_var_handle_) variables[t] = *names_.at(t).begin();
    if (absl::Status s = CloneSubgraphsPerHandleBinding(graph_, variables); !s.ok()) return s;
    DropUncalled();
    names_.clear();
    from_var_handle_.clear();
    NameVariables();
    return absl::OkStatus();
  }

  // TFLite Micro passes a handle by value: VAR_HANDLE's output holds the variable's id, which IF
  // and WHILE copy into their subgraphs' inputs and back out like any other tensor's bytes. Which
  // variables each handle tensor can name follows along those copies, until nothing changes
  // (the sets only grow, so this ends). After CloneSubgraphs every subgraph is called with one
  // binding, so this names each handle what it names on every path through the calls.
  void TraceHandles() {
    bool changed = true;
    while (changed) {
      changed = false;
      for (const OpRef& ref : order_) {
        if (ref.op->type == OpType::kIf) changed |= FlowThroughIf(*ref.op);
        if (ref.op->type == OpType::kWhile) changed |= FlowThroughWhile(*ref.op);
      }
    }
  }

  bool Flow(int from, int to) {
    // (from == to would insert a set into itself, which std::set does not allow.)
    if (from == to || !IsHandle(from) || !names_.contains(from)) return false;
    const std::set<int>& source = names_.at(from);
    std::set<int>& target = names_[to];
    const size_t before = target.size();
    target.insert(source.begin(), source.end());
    return target.size() != before;
  }

  bool FlowThroughIf(const Op& op) {
    const auto& o = op.opts<ControlFlowOptions>();
    bool changed = false;
    for (int branch : {o.first, o.second}) {
      const Subgraph& callee = graph_.subgraph(branch);
      for (size_t i = 0; i < callee.inputs.size(); ++i) {
        changed |= Flow(op.inputs[i + 1], callee.inputs[i]);
      }
      for (size_t i = 0; i < callee.outputs.size(); ++i) {
        changed |= Flow(callee.outputs[i], op.outputs[i]);
      }
    }
    return changed;
  }

  // The loop state lives in WHILE's outputs: they start as its inputs and take the body's
  // outputs after each turn; the cond and the body read them.
  bool FlowThroughWhile(const Op& op) {
    const auto& o = op.opts<ControlFlowOptions>();
    const Subgraph& cond = graph_.subgraph(o.first);
    const Subgraph& body = graph_.subgraph(o.second);
    bool changed = false;
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      changed |= Flow(op.inputs[i], op.outputs[i]);
      changed |= Flow(body.outputs[i], op.outputs[i]);
      changed |= Flow(op.outputs[i], cond.inputs[i]);
      changed |= Flow(op.outputs[i], body.inputs[i]);
    }
    return changed;
  }

  bool IsHandle(int t) const {
    return t != kNoTensor && graph_.tensors[t].type == DataType::kResource;
  }

  bool AHandleIsAtTheBoundary() const {
    return std::any_of(graph_.inputs.begin(), graph_.inputs.end(),
                       [this](int t) { return IsHandle(t); }) ||
           std::any_of(graph_.outputs.begin(), graph_.outputs.end(),
                       [this](int t) { return IsHandle(t); });
  }

  // A model without resource variables has nothing a handle could name or carry an id of.
  absl::Status RefuseHandlesAtTheBoundary() const {
    if (!AHandleIsAtTheBoundary()) return absl::OkStatus();
    return Unresolvable("the main graph",
                        "has a resource handle as a graph input or output, and no "
                        "VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE or CALL_ONCE");
  }

  // A handle the caller passes in holds whatever resource id the caller puts there: it can name
  // any variable (kCallersId), and so can every handle it flows into.
  void NameTheCallersHandles() {
    for (int t : graph_.inputs) {
      if (IsHandle(t)) names_[t].insert(kCallersId);
    }
  }

  // Every handle READ_VARIABLE or ASSIGN_VARIABLE uses must name a variable; handles reach no
  // other op.
  absl::Status RefuseUnresolvableHandles() const {
    for (const OpRef& ref : order_) {
      for (size_t i = 0; i < ref.op->inputs.size(); ++i) {
        const int t = ref.op->inputs[i];
        if (!IsHandle(t)) continue;
        const std::string& name = graph_.tensors[t].name;
        const OpType type = ref.op->type;
        if (type == OpType::kIf || type == OpType::kWhile) continue;
        if (type != OpType::kReadVariable && type != OpType::kAssignVariable) {
          return Unresolvable(Where(ref), absl::StrCat("takes resource handle '", name, "'"));
        }
        if (!names_.contains(t) || names_.at(t).empty()) {
          return Unresolvable(Where(ref),
                              absl::StrCat("resource handle '", name,
                                           "' names no variable: no VAR_HANDLE or graph input "
                                           "reaches it, directly or through IF and WHILE"));
        }
      }
    }
    return absl::OkStatus();
  }

  static bool IsAccess(const Op& op) {
    return op.type == OpType::kReadVariable || op.type == OpType::kAssignVariable;
  }

  // Whether `op`'s handle names one variable whatever the run does.
  bool BoundWhenCompiling(const Op& op) const {
    const std::set<int>& names = names_.at(op.inputs[0]);
    return names.size() == 1 && !names.contains(kCallersId);
  }

  // IF branches returning different variables' handles, a loop replacing its handle with
  // another variable's, a handle the caller passes in: which variable such a READ_VARIABLE or
  // ASSIGN_VARIABLE reaches depends on the run, as TFLite Micro follows the handle's id at run
  // time. A handle the caller gets back must hold the id too.
  bool HandlesDependOnTheRun() const {
    return AHandleIsAtTheBoundary() ||
           std::any_of(order_.begin(), order_.end(), [this](const OpRef& ref) {
             return IsAccess(*ref.op) && !BoundWhenCompiling(*ref.op);
           });
  }

  // The variables `op`'s handle can name through VAR_HANDLEs, in resource id order (without
  // kCallersId; one when it is bound when compiling).
  std::set<int> VariablesOf(const Op& op) const {
    std::set<int> named = names_.at(op.inputs[0]);
    named.erase(kCallersId);
    return named;
  }
  int VariableOf(const Op& op) const { return *VariablesOf(op).begin(); }

  // The value tensor an access reads into or assigns from.
  const Tensor& ValueOf(const Op& op) const {
    return op.type == OpType::kReadVariable ? graph_.output(op) : graph_.input(op, 1);
  }

  // What each access that depends on the run can reach: the variables VAR_HANDLEs name to it
  // (CheckAssignments and CheckReads made them all match it) and, through a caller's handle,
  // every variable with storage of the access's type and byte count (an id of any other
  // variable fails at run time, where TFLite Micro would copy the variable's byte count
  // unchecked).
  absl::Status FindCandidates() {
    for (const OpRef& ref : order_) {
      if (!IsAccess(*ref.op) || BoundWhenCompiling(*ref.op)) continue;
      std::set<int> candidates = VariablesOf(*ref.op);
      if (names_.at(ref.op->inputs[0]).contains(kCallersId)) {
        for (size_t v = 0; v < variables_.size(); ++v) {
          if (Fits(variables_[v], ValueOf(*ref.op))) candidates.insert(static_cast<int>(v));
        }
      }
      if (candidates.empty()) {
        return Unresolvable(Where(ref),
                            absl::StrCat("the caller's resource handle can name no variable: "
                                         "none holds ",
                                         Signature(ValueOf(*ref.op))));
      }
      candidates_[ref.op] = std::move(candidates);
    }
    return absl::OkStatus();
  }

  bool Fits(const Variable& var, const Tensor& value) const {
    if (var.value == kNoTensor) return false;
    const Tensor& first = graph_.tensors[var.value];
    return first.type == value.type && first.SizeBytes() == value.SizeBytes();
  }

  std::string VariableLabel(int v) const {
    return absl::StrCat("resource variable '", variables_[v].name.shared_name, "'");
  }

  // TFLite Micro allocates a variable at the first ASSIGN_VARIABLE it prepares whose handle
  // comes straight from a VAR_HANDLE, with that value's byte count, and copies that many bytes at
  // every later assignment and read. A handle passed in by IF or WHILE holds no id yet when
  // operators are prepared (assign_variable.cc skips those), so its assignments allocate nothing.
  // It prepares every subgraph, called or not: this runs before CloneSubgraphs empties the
  // uncalled ones.
  void AllocateVariables() {
    for (const OpRef& ref : order_) {
      const Op& op = *ref.op;
      if (op.type != OpType::kAssignVariable || !from_var_handle_.contains(op.inputs[0])) continue;
      Variable& var = variables_[VariableOf(op)];
      if (var.value != kNoTensor) continue;
      var.first_assignment = Where(ref);
      var.value = op.inputs[1];
    }
  }

  // The assignments that run (those of the subgraphs called), against the allocation.
  absl::Status CheckAssignments() const {
    for (const OpRef& ref : order_) {
      if (ref.op->type != OpType::kAssignVariable) continue;
      for (int v : VariablesOf(*ref.op)) {
        if (absl::Status s = CheckAssignment(ref, v); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

  // One variable the assignment can reach: a handle that names several depending on the run
  // must match each, as TFLite Micro would copy the first assignment's bytes of whichever it is.
  absl::Status CheckAssignment(const OpRef& ref, int v) const {
    const Op& op = *ref.op;
    const Variable& var = variables_[v];
    const Tensor& value = graph_.input(op, 1);
    if (var.value == kNoTensor) {
      return Invalid(Where(ref),
                     absl::StrCat("assigns ", VariableLabel(v),
                                  " through a handle passed in by IF or WHILE, and no "
                                  "ASSIGN_VARIABLE takes that variable's handle straight from a "
                                  "VAR_HANDLE: TFLite Micro allocates a variable only at such an "
                                  "assignment and fails at this one"));
    }
    const Tensor& first = graph_.tensors[var.value];
    if (value.type != first.type || value.SizeBytes() != first.SizeBytes()) {
      return Invalid(Where(ref), absl::StrCat("assigns ", Signature(value), " to ",
                                              VariableLabel(v), ", which its first assignment (",
                                              var.first_assignment, ") made ", Signature(first),
                                              "; TFLite Micro keeps a variable's type and byte "
                                              "count"));
    }
    return absl::OkStatus();
  }

  absl::Status CheckReads() const {
    for (const OpRef& ref : order_) {
      if (ref.op->type != OpType::kReadVariable) continue;
      for (int v : VariablesOf(*ref.op)) {
        if (absl::Status s = CheckRead(ref, v); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckRead(const OpRef& ref, int v) const {
    const Tensor& out = graph_.output(*ref.op);
    if (variables_[v].value == kNoTensor) {
      return Invalid(Where(ref),
                     absl::StrCat("reads ", VariableLabel(v),
                                  ", which no ASSIGN_VARIABLE assigns: TFLite Micro creates a "
                                  "variable's storage at its first assignment"));
    }
    const Tensor& value = graph_.tensors[variables_[v].value];
    if (out.type != value.type || out.SizeBytes() != value.SizeBytes()) {
      return Invalid(Where(ref), absl::StrCat("reads ", VariableLabel(v), " (", Signature(value),
                                              ") into '", out.name, "' (", Signature(out), ")"));
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
      if (IsAccess(op)) {
        if (BoundWhenCompiling(op)) {
          op.inputs[0] = variables_[VariableOf(op)].tensor;
        } else {
          Dispatch(op);
        }
      }
      if (op.type == OpType::kVarHandle) RewriteVarHandle(op);
    }
    for (Subgraph& sub : graph_.subgraphs) {
      std::erase_if(sub.ops, [](const Op& op) { return op.dead; });
    }
    order_.clear();  // the subgraphs' ops moved
  }

  // The handle (input 0) stays, then the value for ASSIGN_VARIABLE; then a constant int32 tensor
  // of the candidates' resource ids and the candidates' variable tensors, in id order (the
  // dispatching form of runtime/kernels/control_flow.cc). A variable's index is its resource id:
  // NameVariables numbers them in prepare order, as MicroResourceVariables::CreateIdIfNoneFound
  // does at each VAR_HANDLE's prepare.
  void Dispatch(Op& op) {
    const std::set<int> candidates = candidates_.at(&op);
    op.inputs.resize(op.type == OpType::kReadVariable ? 1 : 2);
    Tensor ids;
    ids.name = absl::StrCat(graph_.tensors[op.inputs[0]].name, "_variable_ids");
    ids.shape = {static_cast<int32_t>(candidates.size())};
    ids.type = DataType::kInt32;
    ids.is_constant = true;
    for (int v : candidates) AppendInt32(ids.data, v);
    op.inputs.push_back(graph_.AddTensor(std::move(ids)));
    for (int v : candidates) op.inputs.push_back(variables_[v].tensor);
  }

  static void AppendInt32(std::vector<uint8_t>& bytes, int32_t value) {
    for (size_t i = 0; i < sizeof(int32_t); ++i) {
      bytes.push_back(static_cast<uint8_t>(static_cast<uint32_t>(value) >> (8 * i)));
    }
  }

  // VAR_HANDLE's output holds its variable's resource id (var_handle.cc), from prepare on: a
  // constant int32 where handles depend on the run, else nothing. A graph output cannot be a
  // constant (the runtime hands the caller planned memory): there VAR_HANDLE stays, copying a
  // constant id into its output (ExpandChain).
  void RewriteVarHandle(Op& op) {
    op.dead = true;
    if (!run_time_handles_) return;
    const int handle = op.outputs[0];
    Tensor id;
    id.name = absl::StrCat(graph_.tensors[handle].name, "_id");
    id.type = DataType::kInt32;
    id.is_constant = true;
    AppendInt32(id.data, *names_.at(handle).begin());
    if (std::find(graph_.outputs.begin(), graph_.outputs.end(), handle) == graph_.outputs.end()) {
      Tensor& t = graph_.tensors[handle];
      t.type = id.type;
      t.is_constant = true;
      t.data = std::move(id.data);
      return;
    }
    id.shape = graph_.tensors[handle].shape;
    op.inputs = {graph_.AddTensor(std::move(id))};
    op.dead = false;
  }

  // Where a handle's variable depends on the run, every handle stays an int32 tensor holding a
  // resource id, copied by IF and WHILE like any other (bound accesses just ignore it).
  void KeepHandlesAsIds() {
    for (Tensor& t : graph_.tensors) {
      if (t.type == DataType::kResource) t.type = DataType::kInt32;
    }
  }

  // Once every access names its variable, the handles IF and WHILE pass on carry nothing: they
  // leave the calls and the called subgraphs' signatures, position by position (import checks
  // made every call's positions agree in type with its subgraphs').
  void DropHandlesFromCalls() {
    auto drop = [this](std::vector<int>& tensors, size_t first) {
      std::vector<int> kept(tensors.begin(), tensors.begin() + static_cast<ptrdiff_t>(first));
      for (size_t i = first; i < tensors.size(); ++i) {
        if (!IsHandle(tensors[i])) kept.push_back(tensors[i]);
      }
      tensors = std::move(kept);
    };
    auto drop_from_call = [&drop](Op& op) {
      if (op.type != OpType::kIf && op.type != OpType::kWhile) return;
      drop(op.inputs, op.type == OpType::kIf ? 1 : 0);  // IF's input 0 is its condition
      drop(op.outputs, 0);
    };
    for (Op& op : graph_.ops) drop_from_call(op);
    for (Subgraph& sub : graph_.subgraphs) {
      for (Op& op : sub.ops) drop_from_call(op);
      drop(sub.inputs, 0);
      drop(sub.outputs, 0);
    }
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
  // init subgraph has run. TFLite Micro keeps has_run in the op: the copies CloneSubgraphs made
  // of a subgraph share its CALL_ONCEs' flags, so that init still runs once.
  void GiveCallOnceItsFlag() {
    std::map<std::pair<int, int>, int> flags;  // (TFLite subgraph, op index) -> flag
    auto give = [&](Op& op, int subgraph) {
      if (op.type != OpType::kCallOnce) return;
      auto [it, fresh] =
          flags.try_emplace({graph_.SourceSubgraph(subgraph), op.source_index}, kNoTensor);
      if (fresh) it->second = NewCallOnceFlag(op);
      op.inputs = {it->second, ConstantFalse()};
    };
    for (Op& op : graph_.ops) give(op, 0);
    for (size_t k = 0; k < graph_.subgraphs.size(); ++k) {
      for (Op& op : graph_.subgraphs[k].ops) give(op, static_cast<int>(k) + 1);
    }
  }

  int NewCallOnceFlag(const Op& op) {
    Tensor flag;
    flag.name = absl::StrCat("call_once_", op.source_index, "_pending");
    flag.shape = {1};
    flag.type = DataType::kBool;
    flag.is_variable = true;
    flag.reset_fill = 1;
    return graph_.AddTensor(std::move(flag));
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
  std::map<int, std::set<int>> names_;  // handle tensor -> the variables it can name
  std::set<int> from_var_handle_;       // the handles VAR_HANDLEs output
  int constant_false_ = kNoTensor;
  bool run_time_handles_ = false;                  // HandlesDependOnTheRun
  std::map<const Op*, std::set<int>> candidates_;  // FindCandidates
};

}  // namespace

absl::Status ResolveResourceVariables(Graph& graph) { return Resolver(graph).Run(); }

}  // namespace boardlab::compiler
