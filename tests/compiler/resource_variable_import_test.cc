// Importing and compiling resource variables and CALL_ONCE: how handles resolve into variable
// tensors, the order the passes keep, how the chain is laid out, and a clear refusal for each
// model whose variables cannot be resolved when compiling or that TFLite Micro cannot run.

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/driver.h"
#include "compiler/import_tflite.h"
#include "compiler/pte_writer.h"
#include "compiler/report.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/resource_variable_models.h"
#include "tests/support/test_models.h"
#include "tests/support/tflite_builder.h"

namespace boardlab::testing {
namespace {

using compiler::ImportTflite;
using compiler::OpType;

int32_t Code(OpType type) { return compiler::OpTypeTfliteCode(type); }

void ExpectRefused(const TfliteBuilder& b, absl::StatusCode code,
                   const std::vector<std::string>& phrases) {
  absl::StatusOr<compiler::Graph> graph = ImportTflite(b.Finish());
  ASSERT_FALSE(graph.ok()) << "imported a model it should refuse";
  EXPECT_EQ(graph.status().code(), code) << graph.status();
  for (const std::string& phrase : phrases) {
    EXPECT_NE(graph.status().message().find(phrase), std::string_view::npos)
        << "missing \"" << phrase << "\" in: " << graph.status().message();
  }
}

const compiler::Tensor* FindTensor(const compiler::Graph& g, const std::string& name) {
  for (const compiler::Tensor& t : g.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST(ResourceVariableImportTest, HandlesOfOneSharedNameBecomeOneVariableTensor) {
  absl::StatusOr<compiler::Graph> g = ImportTflite(CounterModelBuilder(TflType::kInt8).Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  // Main: CALL_ONCE, READ_VARIABLE, ADD, ASSIGN_VARIABLE (the VAR_HANDLE is gone); init:
  // ASSIGN_VARIABLE.
  std::vector<OpType> types;
  for (const compiler::Op& op : g->ops) types.push_back(op.type);
  EXPECT_EQ(types, (std::vector<OpType>{OpType::kCallOnce, OpType::kReadVariable, OpType::kAdd,
                                        OpType::kAssignVariable}));
  ASSERT_EQ(g->subgraphs.size(), 1u);
  ASSERT_EQ(g->subgraph(1).ops.size(), 1u);
  const compiler::Op& init_assign = g->subgraph(1).ops[0];
  const compiler::Op& read = g->ops[1];
  const compiler::Op& assign = g->ops[3];
  EXPECT_EQ(read.inputs[0], assign.inputs[0]);
  EXPECT_EQ(init_assign.inputs[0], read.inputs[0]);
  const compiler::Tensor& var = g->tensors[read.inputs[0]];
  EXPECT_EQ(var.name, "counter");
  EXPECT_TRUE(var.is_variable);
  EXPECT_EQ(var.type, compiler::DataType::kInt8);
  EXPECT_EQ(var.shape, (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(var.reset_fill, 0xFE);  // the first assignment's zero point, -2, as an int8 byte
  for (const compiler::Tensor& t : g->tensors) {
    EXPECT_NE(t.type, compiler::DataType::kResource) << t.name;
  }
  // CALL_ONCE reads its "not run yet" flag (a variable that starts at 1) and a constant false.
  const compiler::Op& call_once = g->ops[0];
  ASSERT_EQ(call_once.inputs.size(), 2u);
  EXPECT_TRUE(g->tensors[call_once.inputs[0]].is_variable);
  EXPECT_EQ(g->tensors[call_once.inputs[0]].reset_fill, 1);
  EXPECT_TRUE(g->tensors[call_once.inputs[1]].is_constant);
  // Every main-graph op with side effects on the variable is numbered in program order.
  EXPECT_EQ(g->ops[0].effect_order, 0);
  EXPECT_EQ(g->ops[1].effect_order, 1);
  EXPECT_EQ(g->ops[2].effect_order, -1);
  EXPECT_EQ(g->ops[3].effect_order, 2);
}

TEST(ResourceVariableImportTest, TwoSharedNamesAreTwoVariables) {
  absl::StatusOr<compiler::Graph> g = ImportTflite(FibonacciModelBuilder().Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  for (const char* name : {"a", "b"}) {
    const compiler::Tensor* var = FindTensor(*g, name);
    ASSERT_NE(var, nullptr) << name;
    EXPECT_TRUE(var->is_variable) << name;
    EXPECT_EQ(var->type, compiler::DataType::kFloat32) << name;
    EXPECT_EQ(var->reset_fill, 0) << name;  // no quantization: TFLite Micro fills with 0
  }
  int variables = 0;
  for (const compiler::Tensor& t : g->tensors) {
    variables += t.is_variable && t.type == compiler::DataType::kFloat32 ? 1 : 0;
  }
  EXPECT_EQ(variables, 2);
  // Both reads, then both assignments, in program order.
  const compiler::Tensor* a = FindTensor(*g, "a");
  int reads_of_a = 0;
  for (const compiler::Op& op : g->ops) {
    if (op.type == OpType::kReadVariable && &g->tensors[op.inputs[0]] == a) ++reads_of_a;
  }
  EXPECT_EQ(reads_of_a, 1);
}

// The scheduler must not hoist the assignment above the read before it, nor the read after it
// above the assignment, although no tensor links them.
TEST(ResourceVariableImportTest, TheChainKeepsReadsAndAssignmentsInProgramOrder) {
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(ReadAssignReadModelBuilder().Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::vector<compiler::ChainStep>> chain = compiler::ExpandChain(r->compilation);
  ASSERT_TRUE(chain.ok()) << chain.status();
  std::vector<OpType> order;
  for (const compiler::ChainStep& step : *chain) order.push_back(step.op->type);
  EXPECT_EQ(order, (std::vector<OpType>{OpType::kReadVariable, OpType::kAssignVariable,
                                        OpType::kReadVariable}));
  for (const compiler::Op& op : r->compilation.graph.ops) {
    EXPECT_EQ(op.unit, compiler::Unit::kCpu);
    EXPECT_NE(op.cpu_reason.find("resource-variable op"), std::string::npos) << op.cpu_reason;
  }
}

// CALL_ONCE: its condition on the flag, a jump past init, init's assignment, the flag cleared;
// then the main graph's read, the NPU partition of the ADD and the assignment.
TEST(ResourceVariableImportTest, CallOnceExpandsIntoAJumpAroundItsInitSubgraph) {
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(CounterModelBuilder(TflType::kInt8).Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::vector<compiler::ChainStep>> chain = compiler::ExpandChain(r->compilation);
  ASSERT_TRUE(chain.ok()) << chain.status();
  using K = compiler::ChainStepKind;
  const std::vector<K> kinds = {K::kCondition, K::kJump,     K::kCopy, K::kCopy,
                                K::kCopy,      K::kDelegate, K::kCopy};
  ASSERT_EQ(chain->size(), kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ((*chain)[i].kind, kinds[i]) << i;
  EXPECT_TRUE((*chain)[1].conditional);
  EXPECT_EQ((*chain)[1].destination, 4);
  EXPECT_EQ((*chain)[2].op->type, OpType::kAssignVariable);
  EXPECT_EQ((*chain)[2].subgraph, 1);
  EXPECT_EQ((*chain)[3].op->type, OpType::kCallOnce);
  EXPECT_EQ((*chain)[4].op->type, OpType::kReadVariable);
  EXPECT_EQ((*chain)[6].op->type, OpType::kAssignVariable);
  // Variables and the flag live in the state buffer, reset at each load.
  EXPECT_GE(r->compilation.memory.state_bytes, 16 + 16);
}

// A model with a handle passed to another subgraph: main's VAR_HANDLE "v" goes into IF, whose
// branches read the variable through their input (with `branches_assign`, after assigning it 0;
// main then assigns nothing). With `second_variable`, a second IF calls the same branches with the
// handle of another variable, "w".
TfliteBuilder HandleThroughIf(bool branches_assign = false, bool second_variable = false,
                              bool then_calls_once = false) {
  auto branch = [branches_assign, then_calls_once](const char* name) {
    TfliteBuilder b;
    b.set_name(name);
    // Subgraph 3, added after the branches, assigns variable "u".
    if (then_calls_once && name[0] == 't') {
      b.AddOperator(Code(OpType::kCallOnce), {}, {}, CallOnceOpts{3});
    }
    const int h = b.AddTensor("h", {}, TflType::kResource);
    const int out = b.AddTensor("out", {1}, TflType::kInt32);
    if (branches_assign) {
      const int zero =
          b.AddTensor("zero", {1}, TflType::kInt32, {}, std::vector<uint8_t>{0, 0, 0, 0});
      b.AddOperator(Code(OpType::kAssignVariable), {h, zero}, {});
    }
    b.AddOperator(Code(OpType::kReadVariable), {h}, {out});
    b.SetInputs({h});
    b.SetOutputs({out});
    return b;
  };
  TfliteBuilder b;
  const int cond = b.AddTensor("cond", {1}, TflType::kBool);
  const int zero = b.AddTensor("zero", {1}, TflType::kInt32, {}, std::vector<uint8_t>{0, 0, 0, 0});
  const int then_branch = b.AddSubgraph(branch("then"));
  const int else_branch = b.AddSubgraph(branch("else"));
  if (then_calls_once) {
    TfliteBuilder init;
    init.set_name("init");
    const int u = init.AddTensor("u_handle", {}, TflType::kResource);
    const int one =
        init.AddTensor("one", {1}, TflType::kInt32, {}, std::vector<uint8_t>{1, 0, 0, 0});
    init.AddOperator(Code(OpType::kVarHandle), {}, {u}, VarHandleOpts{"", "u"});
    init.AddOperator(Code(OpType::kAssignVariable), {u, one}, {});
    b.AddSubgraph(std::move(init));
  }
  std::vector<int> outputs;
  for (const char* variable : {"v", "w"}) {
    if (variable[0] == 'w' && !second_variable) break;
    const int h = b.AddTensor(std::string("h_") + variable, {}, TflType::kResource);
    const int out = b.AddTensor(std::string("out_") + variable, {1}, TflType::kInt32);
    b.AddOperator(Code(OpType::kVarHandle), {}, {h}, VarHandleOpts{"", variable});
    if (!branches_assign) b.AddOperator(Code(OpType::kAssignVariable), {h, zero}, {});
    b.AddOperator(Code(OpType::kIf), {cond, h}, {out}, ControlFlowOpts{then_branch, else_branch});
    outputs.push_back(out);
  }
  b.SetInputs({cond});
  b.SetOutputs(outputs);
  return b;
}

// TFLite Micro copies the handle into the branch like any value: the branches' reads name the
// main graph's variable, and the handle leaves the IF and the branches' signatures.
TEST(ResourceVariableImportTest, AHandlePassedIntoIfNamesTheCallersVariable) {
  absl::StatusOr<compiler::Graph> g = ImportTflite(HandleThroughIf().Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  for (const compiler::Tensor& t : g->tensors) {
    EXPECT_NE(t.type, compiler::DataType::kResource) << t.name;
  }
  const compiler::Tensor* v = FindTensor(*g, "v");
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(g->ops.size(), 2u);  // ASSIGN_VARIABLE, IF
  const compiler::Op& if_op = g->ops[1];
  EXPECT_EQ(if_op.type, OpType::kIf);
  EXPECT_EQ(if_op.inputs.size(), 1u);  // the condition only
  EXPECT_EQ(if_op.outputs.size(), 1u);
  EXPECT_GE(if_op.effect_order, 0);  // its branches read the variable
  for (int k : {1, 2}) {
    const compiler::Subgraph& branch = g->subgraph(k);
    EXPECT_TRUE(branch.inputs.empty()) << k;
    ASSERT_EQ(branch.ops.size(), 1u) << k;
    EXPECT_EQ(&g->tensors[branch.ops[0].inputs[0]], v) << k;
  }
}

// The handle through WHILE's loop state into its body, and back out to main's READ_VARIABLE:
// one variable everywhere, the WHILE left with its counter and x.
TEST(ResourceVariableImportTest, AHandleThroughWhileNamesOneVariableInsideAndAfterTheLoop) {
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(WhileAccumulatorModelBuilder().Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  const compiler::Graph& g = r->compilation.graph;
  const compiler::Tensor* acc = FindTensor(g, "acc");
  ASSERT_NE(acc, nullptr);
  int accesses = 0;
  auto count = [&](const compiler::Op& op) {
    if (op.type == OpType::kWhile) {
      EXPECT_EQ(op.inputs.size(), 2u);
      EXPECT_EQ(op.outputs.size(), 2u);
    }
    if (op.type != OpType::kReadVariable && op.type != OpType::kAssignVariable) return;
    EXPECT_EQ(&g.tensors[op.inputs[0]], acc);
    ++accesses;
  };
  for (const compiler::Op& op : g.ops) count(op);
  for (const compiler::Subgraph& sub : g.subgraphs) {
    for (const compiler::Op& op : sub.ops) count(op);
    EXPECT_LE(sub.inputs.size(), 2u);
  }
  EXPECT_EQ(accesses, 4);  // init's assignment, the body's read and assignment, main's read
}

// A loop over the handle alone: bound, the WHILE has no operands left; the effect order keeps it
// between main's assignment and read.
TEST(ResourceVariableImportTest, AWhileWhoseOnlyStateIsTheHandleKeepsNoOperands) {
  absl::StatusOr<compiler::Graph> g = ImportTflite(RaiseToFiveModelBuilder().Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->ops.size(), 3u);  // ASSIGN_VARIABLE, WHILE, READ_VARIABLE
  const compiler::Op& loop = g->ops[1];
  EXPECT_EQ(loop.type, OpType::kWhile);
  EXPECT_TRUE(loop.inputs.empty());
  EXPECT_TRUE(loop.outputs.empty());
  EXPECT_EQ(g->ops[0].effect_order, 0);
  EXPECT_EQ(loop.effect_order, 1);
  EXPECT_EQ(g->ops[2].effect_order, 2);
  EXPECT_TRUE(g->subgraph(1).inputs.empty());
  EXPECT_EQ(g->subgraph(1).outputs.size(), 1u);  // the condition
  EXPECT_TRUE(g->subgraph(2).inputs.empty());
  EXPECT_TRUE(g->subgraph(2).outputs.empty());
}

// The READ_VARIABLE in each subgraph `op` calls (IF's branches, WHILE's cond and body), and
// those they call in turn, by the variable its input 0 is.
void CollectAccesses(const compiler::Graph& g, const compiler::Op& op,
                     std::vector<std::string>& variables) {
  const auto& o = op.opts<compiler::ControlFlowOptions>();
  for (int k : {o.first, o.second}) {
    for (const compiler::Op& inner : g.subgraph(k).ops) {
      if (inner.type == OpType::kReadVariable || inner.type == OpType::kAssignVariable) {
        variables.push_back(g.tensors[inner.inputs[0]].name);
      }
      if (inner.type == OpType::kIf || inner.type == OpType::kWhile) {
        CollectAccesses(g, inner, variables);
      }
    }
  }
}

std::vector<std::string> AccessesUnder(const compiler::Graph& g, const compiler::Op& op) {
  std::vector<std::string> variables;
  CollectAccesses(g, op, variables);
  return variables;
}

// Two IFs share their branches, each passing another variable's handle: TFLite Micro follows the
// id at run time; boardlab gives the second IF copies of the branches whose reads name "w".
TEST(ResourceVariableImportTest, ASubgraphCalledWithTwoVariablesGetsACopyPerVariable) {
  absl::StatusOr<compiler::Graph> g = ImportTflite(HandleThroughIf(false, true).Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  for (const compiler::Tensor& t : g->tensors) {
    EXPECT_NE(t.type, compiler::DataType::kResource) << t.name;
  }
  ASSERT_EQ(g->subgraphs.size(), 4u);  // then, else, and a copy of each for "w"
  std::vector<const compiler::Op*> ifs;
  for (const compiler::Op& op : g->ops) {
    if (op.type == OpType::kIf) ifs.push_back(&op);
  }
  ASSERT_EQ(ifs.size(), 2u);
  const auto& first = ifs[0]->opts<compiler::ControlFlowOptions>();
  const auto& second = ifs[1]->opts<compiler::ControlFlowOptions>();
  EXPECT_EQ(first.first, 1);
  EXPECT_EQ(first.second, 2);
  EXPECT_EQ(second.first, 3);
  EXPECT_EQ(second.second, 4);
  EXPECT_EQ(AccessesUnder(*g, *ifs[0]), (std::vector<std::string>{"v", "v"}));
  EXPECT_EQ(AccessesUnder(*g, *ifs[1]), (std::vector<std::string>{"w", "w"}));
  // The copies share the originals' tensors but the handles: the reads' outputs are one tensor.
  EXPECT_EQ(g->subgraph(1).outputs, g->subgraph(3).outputs);
}

// Copies nest: the then-branch's loop, called with "a" from the first IF and "b" from the
// second, gets a cond and body per variable too; the else-branch a copy; init none.
TEST(ResourceVariableImportTest, CopiesOfABranchCopyTheLoopInsideIt) {
  absl::StatusOr<compiler::Graph> g = ImportTflite(SharedBranchesModelBuilder(true).Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  // init, cond, body, then, else; then copies of then, cond, body, else for "b".
  ASSERT_EQ(g->subgraphs.size(), 9u);
  std::vector<const compiler::Op*> ifs;
  for (const compiler::Op& op : g->ops) {
    if (op.type == OpType::kIf) ifs.push_back(&op);
  }
  ASSERT_EQ(ifs.size(), 2u);
  // The then-branch's READ after its loop; the loop body's read and assignment; the
  // else-branch's read.
  EXPECT_EQ(AccessesUnder(*g, *ifs[0]), (std::vector<std::string>{"a", "a", "a", "a"}));
  EXPECT_EQ(AccessesUnder(*g, *ifs[1]), (std::vector<std::string>{"b", "b", "b", "b"}));
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(SharedBranchesModelBuilder(true).Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
}

// A copy's ops are named by the TFLite subgraph they copy and which copy, wherever the compiler
// names ops (debug map, report.json, the report table, CPU placement reasons), never by the
// index the copy has in boardlab's graph: subgraphs 1..5 (init, cond, body, then, else) are the
// model's; boardlab's 6..9 copy then, cond, body and else for "b".
TEST(ResourceVariableImportTest, CopiesAreNamedByTheSubgraphTheyCopy) {
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(SharedBranchesModelBuilder(true).Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  std::set<std::string> copied;  // "subgraph/copy" of the report's rows in copies
  const nlohmann::json report = nlohmann::json::parse(r->report_json);
  for (const nlohmann::json& op : report["ops"]) {
    EXPECT_LE(op.value("subgraph", 0), 5) << op.dump();
    if (op.contains("copy")) {
      copied.insert(absl::StrCat(op["subgraph"].get<int>(), "/", op["copy"].get<int>()));
      EXPECT_NE(op["reason"].get<std::string>().find(
                    absl::StrCat("of subgraph ", op["subgraph"].get<int>(), ", copy 1: ")),
                std::string::npos)
          << op.dump();
    }
  }
  EXPECT_EQ(copied, (std::set<std::string>{"2/1", "3/1", "4/1", "5/1"}));
  std::set<std::string> names;
  const nlohmann::json debug_map = nlohmann::json::parse(r->debug_map_json);
  for (const nlohmann::json& op : debug_map["cpu_ops"]) {
    const std::string name = op["name"].get<std::string>();
    EXPECT_EQ(name.find("of subgraph 6"), std::string::npos) << name;
    EXPECT_LE(op.value("subgraph", 0), 5) << op.dump();
    if (!op.contains("copy")) continue;
    names.insert(name);
    EXPECT_NE(name.find(absl::StrCat("of subgraph ", op["subgraph"].get<int>(), ", copy ",
                                     op["copy"].get<int>())),
              std::string::npos)
        << op.dump();
  }
  // The loop body's read (its op 1) in the copy for "b"; the copy's WHILE's own copies.
  EXPECT_TRUE(names.contains("READ_VARIABLE #1 of subgraph 3, copy 1"))
      << ::testing::PrintToString(names);
  EXPECT_TRUE(names.contains("WHILE #0 of subgraph 4, copy 1 copy"))
      << ::testing::PrintToString(names);
  const std::string table = compiler::ReportTable(*r);
  EXPECT_NE(table.find("\n3/1:2 "), std::string::npos) << table;
}

// TFLite Micro keeps CALL_ONCE's has_run in the op: the copies of a branch holding a CALL_ONCE
// share its "not run yet" flag, so that the init runs once whichever copy runs first.
TEST(ResourceVariableImportTest, CopiesOfASubgraphShareItsCallOnceFlag) {
  TfliteBuilder b = HandleThroughIf(false, true, true);
  absl::StatusOr<compiler::Graph> g = ImportTflite(b.Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->subgraphs.size(), 5u);  // then, else, init, copies of then and else
  std::vector<int> flags;
  for (const compiler::Subgraph& sub : g->subgraphs) {
    for (const compiler::Op& op : sub.ops) {
      if (op.type == OpType::kCallOnce) flags.push_back(op.inputs[0]);
    }
  }
  ASSERT_EQ(flags.size(), 2u);
  EXPECT_EQ(flags[0], flags[1]);
  EXPECT_TRUE(g->tensors[flags[0]].is_variable);
}

// TFLite Micro prepares a subgraph nothing calls but never runs it, so its READ_VARIABLE of an
// input handle (which names no variable) never runs either: accepted, and the subgraph left
// without ops.
TEST(ResourceVariableImportTest, ASubgraphNothingCallsMayReadThroughItsInputHandle) {
  absl::StatusOr<compiler::Graph> g = ImportTflite(IfAssignModelBuilder(true).Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->subgraphs.size(), 4u);
  EXPECT_TRUE(g->subgraph(4).ops.empty());
  EXPECT_EQ(g->subgraph(4).inputs.size(), 1u);  // x; the handle left with the others
  EXPECT_FALSE(g->subgraph(3).ops.empty());     // the called else-branch, alike, keeps its read
  for (const compiler::Tensor& t : g->tensors) {
    EXPECT_NE(t.type, compiler::DataType::kResource) << t.name;
  }
}

// An IF whose branches return the handles of different variables merges them into one value:
// which variable the read after it reaches depends on the condition at run time.
// IF branches returning different variables' handles into one output: TFLite Micro follows the
// handle's resource id at run time, so the READ_VARIABLE after the IF dispatches on it among both
// variables (ids in prepare order: "v" 0, "w" 1), and every handle stays an int32 tensor.
TEST(ResourceVariableImportTest, AHandleThatBranchesSetToDifferentVariablesDispatchesAtRunTime) {
  auto branch = [](const char* variable) {
    TfliteBuilder b;
    b.set_name(variable);
    const int h = b.AddTensor("h", {}, TflType::kResource);
    b.AddOperator(Code(OpType::kVarHandle), {}, {h}, VarHandleOpts{"", variable});
    b.SetOutputs({h});
    return b;
  };
  TfliteBuilder b;
  const int cond = b.AddTensor("cond", {1}, TflType::kBool);
  const int zero = b.AddTensor("zero", {1}, TflType::kInt32, {}, std::vector<uint8_t>{0, 0, 0, 0});
  const int then_branch = b.AddSubgraph(branch("v"));
  const int else_branch = b.AddSubgraph(branch("w"));
  for (const char* variable : {"v", "w"}) {
    const int h = b.AddTensor(std::string("h_") + variable, {}, TflType::kResource);
    b.AddOperator(Code(OpType::kVarHandle), {}, {h}, VarHandleOpts{"", variable});
    b.AddOperator(Code(OpType::kAssignVariable), {h, zero}, {});
  }
  const int chosen = b.AddTensor("chosen", {}, TflType::kResource);
  const int out = b.AddTensor("out", {1}, TflType::kInt32);
  b.AddOperator(Code(OpType::kIf), {cond}, {chosen}, ControlFlowOpts{then_branch, else_branch});
  b.AddOperator(Code(OpType::kReadVariable), {chosen}, {out});
  b.SetInputs({cond});
  b.SetOutputs({out});
  absl::StatusOr<compiler::Graph> g = ImportTflite(b.Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  for (const compiler::Tensor& t : g->tensors) {
    EXPECT_NE(t.type, compiler::DataType::kResource) << t.name;
  }
  const compiler::Op& read = g->ops.back();
  ASSERT_EQ(read.type, OpType::kReadVariable);
  ASSERT_EQ(read.inputs.size(), 4u);  // the handle, the ids, "v", "w"
  EXPECT_EQ(g->tensors[read.inputs[0]].name, "chosen");
  EXPECT_EQ(g->tensors[read.inputs[0]].type, compiler::DataType::kInt32);
  const compiler::Tensor& ids = g->tensors[read.inputs[1]];
  EXPECT_TRUE(ids.is_constant);
  EXPECT_EQ(ids.type, compiler::DataType::kInt32);
  EXPECT_EQ(ids.data, (std::vector<uint8_t>{0, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(&g->tensors[read.inputs[2]], FindTensor(*g, "v"));
  EXPECT_EQ(&g->tensors[read.inputs[3]], FindTensor(*g, "w"));
  // The branches' VAR_HANDLEs leave constants holding the ids behind, which IF copies.
  for (int k : {1, 2}) {
    const compiler::Tensor& h = g->tensors[g->subgraph(k).outputs.at(0)];
    EXPECT_TRUE(h.is_constant) << k;
    EXPECT_EQ(h.data, (std::vector<uint8_t>{static_cast<uint8_t>(k - 1), 0, 0, 0})) << k;
  }
  // The main graph's accesses through VAR_HANDLE outputs stay bound when compiling.
  EXPECT_EQ(g->ops[0].type, OpType::kAssignVariable);
  EXPECT_EQ(g->ops[0].inputs.size(), 2u);
  EXPECT_EQ(&g->tensors[g->ops[0].inputs[0]], FindTensor(*g, "v"));
}

// Bindings multiply: level k of `levels` subgraphs passes its handles on to level k + 1 twice,
// once as they came and once with its handle k - 1 replaced by variable "b"'s, so level k is
// called with 2^(k-1) bindings; the last one reads its handle 0 64 times.
TfliteBuilder DoublingHandleLevels(int levels) {
  const size_t width = static_cast<size_t>(levels);
  auto level = [width](int k, int next) {
    TfliteBuilder b;
    const int cond = b.AddTensor("cond", {1}, TflType::kBool);
    std::vector<int> inputs = {cond};
    for (size_t i = 0; i < width; ++i) {
      inputs.push_back(b.AddTensor("h" + std::to_string(i), {}, TflType::kResource));
    }
    b.SetInputs(inputs);
    b.SetOutputs({cond});  // IF needs an output
    if (next < 0) {
      for (int r = 0; r < 64; ++r) {
        const int v = b.AddTensor("v" + std::to_string(r), {1}, TflType::kInt32);
        b.AddOperator(Code(OpType::kReadVariable), {inputs[1]}, {v});
      }
      return b;
    }
    const int other = b.AddTensor("b_handle", {}, TflType::kResource);
    b.AddOperator(Code(OpType::kVarHandle), {}, {other}, VarHandleOpts{"", "b"});
    std::vector<int> args = {cond};  // IF's condition, then the next level's inputs
    args.insert(args.end(), inputs.begin(), inputs.end());
    b.AddOperator(Code(OpType::kIf), args, {b.AddTensor("kept", {1}, TflType::kBool)},
                  ControlFlowOpts{next, next});
    args[static_cast<size_t>(k) + 1] = other;
    b.AddOperator(Code(OpType::kIf), args, {b.AddTensor("replaced", {1}, TflType::kBool)},
                  ControlFlowOpts{next, next});
    return b;
  };
  TfliteBuilder b;
  const int cond = b.AddTensor("cond", {1}, TflType::kBool);
  const int zero = b.AddTensor("zero", {1}, TflType::kInt32, {}, std::vector<uint8_t>{0, 0, 0, 0});
  // Subgraph k is level k; each calls the next.
  for (int k = 1; k <= levels; ++k) b.AddSubgraph(level(k, k == levels ? -1 : k + 1));
  std::vector<int> args = {cond, cond};  // IF's condition, then level 1's inputs
  for (const char* variable : {"a", "b"}) {
    const int h = b.AddTensor(std::string("h_") + variable, {}, TflType::kResource);
    b.AddOperator(Code(OpType::kVarHandle), {}, {h}, VarHandleOpts{"", variable});
    b.AddOperator(Code(OpType::kAssignVariable), {h, zero}, {});
    if (variable[0] == 'a') args.resize(width + 2, h);
  }
  b.AddOperator(Code(OpType::kIf), args, {b.AddTensor("level_1", {1}, TflType::kBool)},
                ControlFlowOpts{1, 1});
  const int out = b.AddTensor("out", {1}, TflType::kInt32);
  b.AddOperator(Code(OpType::kReadVariable), {args[2]}, {out});
  b.SetInputs({cond});
  b.SetOutputs({out});
  return b;
}

TEST(ResourceVariableImportTest, RefusesHandleBindingsThatMultiplyBeyondTheLimit) {
  // 1 + 2 + 4 + 8 bindings, 7 * 64 reads in copies of the last level.
  absl::StatusOr<compiler::Graph> g = ImportTflite(DoublingHandleLevels(4).Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->subgraphs.size(), 15u);
  // 2^11 bindings of the last level: 2047 copies of its 64 reads are beyond the limit.
  ExpectRefused(DoublingHandleLevels(12), absl::StatusCode::kUnimplemented,
                {"unsupported model: binding its resource handles to variables when compiling "
                 "needs more than 65536 operators in copies of subgraphs"});
}

// A WHILE whose loop state holds `handles` handles, of variables h0, h1, ..., that its body
// hands on rotated (position k takes position k + 1's), besides a counter i (3 turns) and an
// int8 [1,8] t that the body runs through `relus` RELUs. Position k names one variable more on
// each turn until every one names them all: the cond and body are analysed with `handles`
// bindings, of which only the last is copied, and that one is the subgraphs' first (no copy).
// Nothing reads the rotated handles; main assigns h0 (a model with resource variables).
TfliteBuilder RotatingHandlesLoop(int handles, int relus) {
  const QuantParams counter_q = PerTensor(0.5f, 0), t_q = PerTensor(0.1f, 0);
  auto state = [&](TfliteBuilder& b, const std::string& suffix) {
    std::vector<int> tensors = {b.AddTensor("i" + suffix, {1}, TflType::kInt8, counter_q),
                                b.AddTensor("t" + suffix, {1, 8}, TflType::kInt8, t_q)};
    for (int k = 0; k < handles; ++k) {
      tensors.push_back(b.AddTensor(absl::StrCat("h", k, suffix), {}, TflType::kResource));
    }
    return tensors;
  };
  auto constant = [&](TfliteBuilder& b, const char* name, int8_t value) {
    const int8_t values[] = {value};
    return b.AddConstInt8(name, {1}, values, counter_q);
  };
  TfliteBuilder cond;
  const std::vector<int> cond_in = state(cond, "");
  const int less = cond.AddTensor("less", {1}, TflType::kBool);
  cond.AddOperator(Code(OpType::kLess), {cond_in[0], constant(cond, "three", 3)}, {less});
  cond.SetInputs(cond_in);
  cond.SetOutputs({less});
  TfliteBuilder body;
  const std::vector<int> body_in = state(body, "");
  std::vector<int> body_out = {body.AddTensor("i_next", {1}, TflType::kInt8, counter_q)};
  body.AddOperator(Code(OpType::kAdd), {body_in[0], constant(body, "one", 1)}, {body_out[0]},
                   ElementwiseOpts{});
  int t = body_in[1];
  for (int r = 0; r < relus; ++r) {
    const int next = body.AddTensor(absl::StrCat("t", r), {1, 8}, TflType::kInt8, t_q);
    body.AddOperator(Code(OpType::kRelu), {t}, {next});
    t = next;
  }
  body_out.push_back(t);
  for (int k = 0; k < handles; ++k) body_out.push_back(body_in[2 + (k + 1) % handles]);
  body.SetInputs(body_in);
  body.SetOutputs(body_out);
  TfliteBuilder b;
  const std::vector<int> out = state(b, "_out");
  const int x = b.AddTensor("x", {1, 8}, TflType::kInt8, t_q);
  const int cond_index = b.AddSubgraph(std::move(cond));
  const int body_index = b.AddSubgraph(std::move(body));
  std::vector<int> in = {constant(b, "i_start", 0), x};
  for (int k = 0; k < handles; ++k) {
    in.push_back(b.AddTensor(absl::StrCat("h", k), {}, TflType::kResource));
    b.AddOperator(Code(OpType::kVarHandle), {}, {in.back()},
                  VarHandleOpts{"", absl::StrCat("v", k)});
  }
  b.AddOperator(Code(OpType::kAssignVariable), {in[2], x}, {});
  b.AddOperator(Code(OpType::kWhile), in, out, ControlFlowOpts{cond_index, body_index});
  b.SetInputs({x});
  b.SetOutputs({out[1]});
  return b;
}

// 17 handles: the cond (1 op) and body (4097 ops) are analysed with 16 bindings beyond their
// first, 16 * 4098 = 65568 ops, more than the copies' limit; but no copy is made, so nothing
// counts against it.
TEST(ResourceVariableImportTest, ALoopsIntermediateBindingsCountNoCopies) {
  absl::StatusOr<compiler::Graph> g = ImportTflite(RotatingHandlesLoop(17, 4096).Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->subgraphs.size(), 2u);
  EXPECT_EQ(g->subgraph(2).ops.size(), 4097u);
  for (const compiler::Subgraph& sub : g->subgraphs) EXPECT_EQ(sub.copy, 0);
}

// The loop's handle names "v" on the first turn and "w" on the later ones, and nothing assigns
// "w" through a VAR_HANDLE's output: TFLite Micro allocates nothing for it and fails when the
// body's assignment reaches it on the second turn.
TEST(ResourceVariableImportTest, RefusesALoopSwitchingToAVariableNothingAllocates) {
  ExpectRefused(RaiseToFiveModelBuilder(true), absl::StatusCode::kInvalidArgument,
                {"of subgraph 2: assigns resource variable 'w' through a handle passed in by IF "
                 "or WHILE"});
}

// TFLite Micro allocates a variable only where an assignment's handle is a VAR_HANDLE's output
// while it prepares; through the IF, the branch's handle holds no id yet, and the assignment
// fails when it runs.
TEST(ResourceVariableImportTest, RefusesAVariableAssignedOnlyThroughAPassedHandle) {
  ExpectRefused(HandleThroughIf(true), absl::StatusCode::kInvalidArgument,
                {"ASSIGN_VARIABLE #0 of subgraph 1: assigns resource variable 'v' through a "
                 "handle passed in by IF or WHILE",
                 "TFLite Micro allocates a variable only at such an assignment"});
}

// The caller's handle can hold any resource id, but no variable holds what this read takes (none
// has storage at all).
TEST(ResourceVariableImportTest, RefusesACallersHandleNoVariableFits) {
  TfliteBuilder b;
  const int h = b.AddTensor("h", {}, TflType::kResource);
  const int out = b.AddTensor("out", {1}, TflType::kInt32);
  b.AddOperator(Code(OpType::kReadVariable), {h}, {out});
  b.SetInputs({h});
  b.SetOutputs({out});
  ExpectRefused(b, absl::StatusCode::kUnimplemented,
                {"READ_VARIABLE #0: the caller's resource handle can name no variable: none holds "
                 "int32[1]"});
}

// The caller's handle: its read and assignment dispatch among the variables of their type and
// size, by resource id ("w" 0, "v" 1; float32 "f" 2 is left out), and the input is int32.
TEST(ResourceVariableImportTest, ACallersHandleDispatchesAmongTheVariablesThatFit) {
  absl::StatusOr<compiler::Graph> g = ImportTflite(CallersHandleModelBuilder().Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->tensors[g->inputs[0]].type, compiler::DataType::kInt32);
  int dispatching = 0;
  for (const compiler::Op& op : g->ops) {
    if (op.type != OpType::kReadVariable && op.type != OpType::kAssignVariable) continue;
    if (op.inputs[0] != g->inputs[0]) continue;
    ++dispatching;
    const size_t ids = op.type == OpType::kReadVariable ? 1 : 2;
    ASSERT_EQ(op.inputs.size(), ids + 3);
    EXPECT_EQ(g->tensors[op.inputs[ids]].data, (std::vector<uint8_t>{0, 0, 0, 0, 1, 0, 0, 0}));
    EXPECT_EQ(&g->tensors[op.inputs[ids + 1]], FindTensor(*g, "w"));
    EXPECT_EQ(&g->tensors[op.inputs[ids + 2]], FindTensor(*g, "v"));
  }
  EXPECT_EQ(dispatching, 2);
}

// A handle as a graph output gives the caller its resource id: here VAR_HANDLE "v"'s, 0.
TEST(ResourceVariableImportTest, AHandleAsAGraphOutputHoldsItsResourceId) {
  TfliteBuilder b = ReadAssignReadModelBuilder();
  const int handle = b.operator_spec(0).outputs[0];  // VAR_HANDLE's
  b.SetOutputs({b.operator_spec(1).outputs[0], handle});
  absl::StatusOr<compiler::Graph> g = ImportTflite(b.Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  const compiler::Tensor& out = g->tensors[g->outputs[1]];
  EXPECT_EQ(out.type, compiler::DataType::kInt32);
  EXPECT_FALSE(out.is_constant);  // the runtime plans every output: VAR_HANDLE copies the id
  const compiler::Op& var_handle = g->ops[0];
  ASSERT_EQ(var_handle.type, OpType::kVarHandle);
  EXPECT_EQ(var_handle.outputs, (std::vector<int>{g->outputs[1]}));
  ASSERT_EQ(var_handle.inputs.size(), 1u);
  EXPECT_EQ(g->tensors[var_handle.inputs[0]].data, (std::vector<uint8_t>{0, 0, 0, 0}));
}

TEST(ResourceVariableImportTest, RefusesAHandleAtTheBoundaryOfAModelWithoutVariables) {
  TfliteBuilder b;
  const int h = b.AddTensor("h", {}, TflType::kResource);
  const int x = b.AddTensor("x", {1}, TflType::kInt8, PerTensor(0.5f, 0));
  const int y = b.AddTensor("y", {1}, TflType::kInt8, PerTensor(0.5f, 0));
  b.AddOperator(Code(OpType::kRelu), {x}, {y});
  b.SetInputs({h, x});
  b.SetOutputs({y, h});
  ExpectRefused(b, absl::StatusCode::kUnimplemented,
                {"the main graph: has a resource handle as a graph input or output, and no "
                 "VAR_HANDLE"});
}

// ReadAssignRead with its assignment's value replaced by `value`.
TfliteBuilder AssignOf(TflType type, std::vector<int32_t> shape) {
  TfliteBuilder b = ReadAssignReadModelBuilder();
  const int value = b.AddTensor("other", std::move(shape), type, PerTensor(0.5f, 3));
  b.mutable_operator(2).inputs[1] = value;  // VAR_HANDLE, READ, ASSIGN, READ
  b.SetInputs({value});
  return b;
}

TEST(ResourceVariableImportTest, RefusesAnAssignmentOfAnotherType) {
  TfliteBuilder b = ReadAssignReadModelBuilder();
  const int handle = b.operator_spec(0).outputs[0];  // VAR_HANDLE's
  const int wide = b.AddTensor("wide", {1, 4}, TflType::kInt16, PerTensor(0.5f, 0));
  b.AddOperator(Code(OpType::kAssignVariable), {handle, wide}, {});
  b.SetInputs({b.operator_spec(2).inputs[1], wide});
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                {"ASSIGN_VARIABLE #4: assigns int16[1,4] to resource variable 'v'",
                 "first assignment (ASSIGN_VARIABLE #2) made int8[1,4]"});
}

TEST(ResourceVariableImportTest, RefusesAReadIntoATensorOfAnotherSize) {
  TfliteBuilder b = AssignOf(TflType::kInt8, {1, 8});
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                {"READ_VARIABLE #1: reads resource variable 'v' (int8[1,8]) into 'before' "
                 "(int8[1,4])"});
}

TEST(ResourceVariableImportTest, RefusesAReadOfAVariableNothingAssigns) {
  TfliteBuilder b;
  const int h = b.AddTensor("h", {}, TflType::kResource);
  const int x = b.AddTensor("x", {1}, TflType::kFloat32);
  const int v = b.AddTensor("v", {1}, TflType::kFloat32);
  const int out = b.AddTensor("out", {1}, TflType::kFloat32);
  b.AddOperator(Code(OpType::kVarHandle), {}, {h}, VarHandleOpts{std::nullopt, "never"});
  b.AddOperator(Code(OpType::kReadVariable), {h}, {v});
  b.AddOperator(Code(OpType::kAddN), {v, x}, {out});
  b.SetInputs({x});
  b.SetOutputs({out});
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                {"READ_VARIABLE #1: reads resource variable 'never', which no ASSIGN_VARIABLE "
                 "assigns"});
}

TEST(ResourceVariableImportTest, RefusesAVarHandleWithoutASharedName) {
  TfliteBuilder b = ReadAssignReadModelBuilder();
  b.mutable_operator(0).options = VarHandleOpts{"", std::nullopt};
  ExpectRefused(b, absl::StatusCode::kInvalidArgument, {"VAR_HANDLE #0: has no shared_name"});
}

TEST(ResourceVariableImportTest, RefusesAnInitSubgraphWithInputs) {
  TfliteBuilder init;
  const int in = init.AddTensor("in", {1}, TflType::kFloat32);
  init.SetInputs({in});
  init.SetOutputs({in});
  TfliteBuilder b;
  const int x = b.AddTensor("x", {1}, TflType::kInt8, PerTensor(0.5f, 0));
  const int y = b.AddTensor("y", {1}, TflType::kInt8, PerTensor(0.5f, 0));
  const int sub = b.AddSubgraph(std::move(init));
  b.AddOperator(Code(OpType::kCallOnce), {}, {}, CallOnceOpts{sub});
  b.AddOperator(Code(OpType::kAddN), {x, x}, {y});
  b.SetInputs({x});
  b.SetOutputs({y});
  ExpectRefused(
      b, absl::StatusCode::kInvalidArgument,
      {"CALL_ONCE #0: init subgraph 1 has 1 inputs and 1 outputs; CALL_ONCE passes none"});
}

TEST(ResourceVariableImportTest, RefusesACallOnceOfAMissingSubgraph) {
  TfliteBuilder b = CounterModelBuilder(TflType::kInt8);
  b.mutable_operator(0).options = CallOnceOpts{5};
  ExpectRefused(b, absl::StatusCode::kInvalidArgument,
                {"CALL_ONCE #0: init subgraph index 5 out of range"});
}

TEST(ResourceVariableImportTest, RefusesAResourceHandleAsAnotherOpsOperand) {
  TfliteBuilder b;
  const int h = b.AddTensor("h", {}, TflType::kResource);
  const int out = b.AddTensor("out", {}, TflType::kResource);
  b.AddOperator(Code(OpType::kVarHandle), {}, {h}, VarHandleOpts{"", "v"});
  b.AddOperator(Code(OpType::kReshape), {h}, {out});
  const int x = b.AddTensor("x", {1}, TflType::kInt32);
  b.SetInputs({x});
  b.SetOutputs({x});
  ExpectRefused(b, absl::StatusCode::kUnimplemented,
                {"RESHAPE #1: takes resource tensor 'h'; only READ_VARIABLE and ASSIGN_VARIABLE"});
}

}  // namespace
}  // namespace boardlab::testing
