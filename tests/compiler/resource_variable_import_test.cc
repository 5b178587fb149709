// Importing and compiling resource variables and CALL_ONCE: how handles resolve into variable
// tensors, the order the passes keep, how the chain is laid out, and a clear refusal for each
// model whose variables cannot be resolved when compiling or that TFLite Micro cannot run.

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "compiler/import_tflite.h"
#include "compiler/pte_writer.h"
#include "gtest/gtest.h"
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

// A model with a handle passed to another subgraph: main's VAR_HANDLE goes into IF, whose
// branches read the variable through their input.
TfliteBuilder HandleThroughIf() {
  auto branch = [](const char* name) {
    TfliteBuilder b;
    b.set_name(name);
    const int h = b.AddTensor("h", {}, TflType::kResource);
    const int out = b.AddTensor("out", {1}, TflType::kInt32);
    b.AddOperator(Code(OpType::kReadVariable), {h}, {out});
    b.SetInputs({h});
    b.SetOutputs({out});
    return b;
  };
  TfliteBuilder b;
  const int cond = b.AddTensor("cond", {1}, TflType::kBool);
  const int h = b.AddTensor("h", {}, TflType::kResource);
  const int zero = b.AddTensor("zero", {1}, TflType::kInt32, {}, std::vector<uint8_t>{0, 0, 0, 0});
  const int out = b.AddTensor("out", {1}, TflType::kInt32);
  const int then_branch = b.AddSubgraph(branch("then"));
  const int else_branch = b.AddSubgraph(branch("else"));
  b.AddOperator(Code(OpType::kVarHandle), {}, {h}, VarHandleOpts{"", "v"});
  b.AddOperator(Code(OpType::kAssignVariable), {h, zero}, {});
  b.AddOperator(Code(OpType::kIf), {cond, h}, {out}, ControlFlowOpts{then_branch, else_branch});
  b.SetInputs({cond});
  b.SetOutputs({out});
  return b;
}

TEST(ResourceVariableImportTest, RefusesAHandlePassedIntoIf) {
  ExpectRefused(HandleThroughIf(), absl::StatusCode::kUnimplemented,
                {"unsupported model: IF #2: passes resource handle 'h' to a subgraph",
                 "resolves resource handles when compiling"});
}

TEST(ResourceVariableImportTest, RefusesAHandleAsAGraphInput) {
  TfliteBuilder b;
  const int h = b.AddTensor("h", {}, TflType::kResource);
  const int out = b.AddTensor("out", {1}, TflType::kInt32);
  b.AddOperator(Code(OpType::kReadVariable), {h}, {out});
  b.SetInputs({h});
  b.SetOutputs({out});
  ExpectRefused(b, absl::StatusCode::kUnimplemented,
                {"READ_VARIABLE #0: resource handle 'h' is not the output of a VAR_HANDLE"});
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
  const int x = b.AddTensor("x", {1}, TflType::kFloat32);
  const int y = b.AddTensor("y", {1}, TflType::kFloat32);
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
