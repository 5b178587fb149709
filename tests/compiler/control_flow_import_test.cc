// Importing and compiling IF and WHILE: what the IR holds, where the ops run, how the chain is
// laid out, and a clear error for each malformed control-flow model.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "boardlab/schema/program_generated.h"
#include "compiler/driver.h"
#include "compiler/import_tflite.h"
#include "compiler/pte_writer.h"
#include "compiler/report.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/control_flow_models.h"
#include "tests/support/test_models.h"
#include "tests/support/tflite_builder.h"

namespace boardlab::testing {
namespace {

using compiler::ImportTflite;
using compiler::OpType;

int32_t Code(OpType type) { return compiler::OpTypeTfliteCode(type); }

void ExpectInvalid(const TfliteBuilder& b, const std::vector<std::string>& phrases) {
  absl::StatusOr<compiler::Graph> graph = ImportTflite(b.Finish());
  ASSERT_FALSE(graph.ok()) << "imported a bad model";
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument) << graph.status();
  for (const std::string& phrase : phrases) {
    EXPECT_NE(graph.status().message().find(phrase), std::string_view::npos)
        << "missing \"" << phrase << "\" in: " << graph.status().message();
  }
}

// A model whose main graph calls subgraph 1 with IF; subgraph 1 is `callee`, then `more`.
TfliteBuilder CallerOf(TfliteBuilder callee, std::vector<TfliteBuilder> more = {},
                       ControlFlowOpts opts = {1, 1}) {
  TfliteBuilder b;
  const int cond = b.AddTensor("cond", {1}, TflType::kBool);
  const int x = b.AddTensor("x", {1, 8}, TflType::kInt8, PerTensor(0.1f, -3));
  const int z = b.AddTensor("z", {1, 8}, TflType::kInt8, PerTensor(0.1f, -3));
  b.AddSubgraph(std::move(callee));
  for (TfliteBuilder& m : more) b.AddSubgraph(std::move(m));
  b.AddOperator(Code(OpType::kIf), {cond, x}, {z}, opts);
  b.SetInputs({cond, x});
  b.SetOutputs({z});
  return b;
}

// RELU [1,8] int8, or (with `call`) an IF on a constant true that calls subgraph `call`.
TfliteBuilder Relu(int call = 0) {
  TfliteBuilder b;
  const int a = b.AddTensor("a", {1, 8}, TflType::kInt8, PerTensor(0.1f, -3));
  const int out = b.AddTensor("out", {1, 8}, TflType::kInt8, PerTensor(0.1f, -3));
  if (call > 0) {
    const int yes = b.AddTensor("yes", {1}, TflType::kBool, {}, std::vector<uint8_t>{1});
    b.AddOperator(Code(OpType::kIf), {yes, a}, {out}, ControlFlowOpts{call, call});
  } else {
    b.AddOperator(Code(OpType::kRelu), {a}, {out});
  }
  b.SetInputs({a});
  b.SetOutputs({out});
  return b;
}

// LSH_PROJECTION [1,8] int8: an operator that TFLite Micro has no kernel for.
TfliteBuilder LshProjection() {
  TfliteBuilder b;
  const int a = b.AddTensor("a", {1, 8}, TflType::kInt8, PerTensor(0.1f, -3));
  const int out = b.AddTensor("out", {1, 8}, TflType::kInt8, PerTensor(0.1f, -3));
  b.AddOperator(kBuiltinLshProjection, {a}, {out});
  b.SetInputs({a});
  b.SetOutputs({out});
  return b;
}

TEST(ControlFlowImportTest, IfBecomesOneOpCallingTwoSubgraphs) {
  absl::StatusOr<compiler::Graph> g = ImportTflite(IfModelBuilder().Finish());
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->ops.size(), 2u);
  ASSERT_EQ(g->subgraphs.size(), 2u);
  const compiler::Op& op = g->ops[1];
  EXPECT_EQ(op.type, OpType::kIf);
  EXPECT_EQ(op.opts<compiler::ControlFlowOptions>().first, 1);
  EXPECT_EQ(op.opts<compiler::ControlFlowOptions>().second, 2);
  EXPECT_EQ(g->subgraph(1).ops.at(0).type, OpType::kAdd);
  EXPECT_EQ(g->subgraph(2).ops.at(0).type, OpType::kRelu);
  // Subgraph tensors are appended after the main graph's 4 and are distinct from them.
  EXPECT_EQ(g->subgraph(1).inputs, std::vector<int>{4});
  EXPECT_EQ(g->subgraph(2).inputs, std::vector<int>{6});
  EXPECT_EQ(g->tensors.size(), 8u);
}

TEST(ControlFlowImportTest, ControlFlowAndItsSubgraphsRunOnTheCpuWithAReason) {
  absl::StatusOr<compiler::CompileResult> r = compiler::Compile(IfModelBuilder().Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  const compiler::Graph& g = r->compilation.graph;
  EXPECT_EQ(g.ops[0].unit, compiler::Unit::kNpu);  // the main graph's ADD
  EXPECT_EQ(g.ops[1].unit, compiler::Unit::kCpu);
  EXPECT_NE(g.ops[1].cpu_reason.find("IF #1: control flow"), std::string::npos)
      << g.ops[1].cpu_reason;
  for (const compiler::Subgraph& sub : g.subgraphs) {
    for (const compiler::Op& op : sub.ops) {
      EXPECT_EQ(op.unit, compiler::Unit::kCpu);
      EXPECT_NE(op.cpu_reason.find("IF, WHILE or CALL_ONCE calls"), std::string::npos)
          << op.cpu_reason;
    }
  }
}

// Inside a subgraph a RELU6 whose input only it reads folds into the ADD writing it, as in the
// main graph; a RELU reading the subgraph's own input has no producer there and stays.
TEST(ControlFlowImportTest, ActivationsFuseInsideSubgraphs) {
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(IfWithAFusableBranchBuilder().Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  const compiler::Graph& g = r->compilation.graph;
  ASSERT_EQ(g.subgraph(1).ops.size(), 1u);
  const compiler::Op& add = g.subgraph(1).ops[0];
  EXPECT_EQ(add.type, compiler::OpType::kAdd);
  EXPECT_EQ(std::get<compiler::ElementwiseOptions>(add.options).activation,
            compiler::Activation::kRelu6);
  EXPECT_EQ(add.fused_sources, std::vector<int>{1});
  EXPECT_EQ(add.outputs, g.subgraph(1).outputs);
  ASSERT_EQ(g.subgraph(2).ops.size(), 1u);
  EXPECT_EQ(g.subgraph(2).ops[0].type, compiler::OpType::kRelu);
  EXPECT_NE(r->debug_map_json.find("ADD #0 of subgraph 1"), std::string::npos);
}

// IF: cond kernel, jump to else, copy in, then's ADD, copy out, jump to the end, copy in,
// else's RELU, copy out; after the NPU partition of the main graph's ADD.
TEST(ControlFlowImportTest, IfExpandsIntoJumpsAroundBothBranches) {
  absl::StatusOr<compiler::CompileResult> r = compiler::Compile(IfModelBuilder().Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::vector<compiler::ChainStep>> chain = compiler::ExpandChain(r->compilation);
  ASSERT_TRUE(chain.ok()) << chain.status();
  using K = compiler::ChainStepKind;
  const std::vector<K> kinds = {K::kDelegate, K::kCondition, K::kJump, K::kCopy,   K::kKernel,
                                K::kCopy,     K::kJump,      K::kCopy, K::kKernel, K::kCopy};
  ASSERT_EQ(chain->size(), kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ((*chain)[i].kind, kinds[i]) << i;
  EXPECT_TRUE((*chain)[2].conditional);
  EXPECT_EQ((*chain)[2].destination, 7);  // the else branch
  EXPECT_FALSE((*chain)[6].conditional);
  EXPECT_EQ((*chain)[6].destination, 10);  // past the end
  EXPECT_NE(r->debug_map_json.find("RELU #0 of subgraph 2"), std::string::npos);
  EXPECT_NE(r->debug_map_json.find("IF #1 condition"), std::string::npos);
}

// report.json and the text table list the ops inside the called subgraphs too, on the CPU with
// their reason and an estimate for one run; the latency total stays the main graph's.
TEST(ControlFlowImportTest, TheReportListsEveryOpOfEverySubgraph) {
  absl::StatusOr<compiler::CompileResult> r = compiler::Compile(IfModelBuilder().Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  const nlohmann::json report = nlohmann::json::parse(r->report_json);
  std::vector<std::string> rows;
  double main_us = 0;
  for (const nlohmann::json& op : report["ops"]) {
    const int subgraph = op.value("subgraph", 0);
    rows.push_back(absl::StrCat(subgraph, ":", op["index"].get<int>(), " ",
                                op["type"].get<std::string>(), " ", op["unit"].get<std::string>()));
    if (subgraph == 0) main_us += op["us"].get<double>();
    if (subgraph > 0) {
      EXPECT_GT(op["cycles"].get<uint64_t>(), 0u) << op.dump();
      EXPECT_NE(op["reason"].get<std::string>().find("IF, WHILE or CALL_ONCE calls"),
                std::string::npos);
    }
  }
  EXPECT_EQ(rows,
            (std::vector<std::string>{"0:0 ADD NPU", "0:1 IF CPU", "1:0 ADD CPU", "2:0 RELU CPU"}));
  EXPECT_EQ(report["totals"]["ops"], 4);
  EXPECT_EQ(report["totals"]["cpu_ops"], 3);
  EXPECT_DOUBLE_EQ(report["totals"]["estimated_latency_us"].get<double>(), main_us);
  const std::string table = compiler::ReportTable(*r);
  EXPECT_NE(table.find("\n1:0   ADD"), std::string::npos) << table;
  EXPECT_NE(table.find("\n2:0   RELU"), std::string::npos) << table;
  EXPECT_NE(table.find("RELU #0 of subgraph 2: in a subgraph that IF, WHILE or CALL_ONCE calls"),
            std::string::npos)
      << table;
}

TEST(ControlFlowImportTest, SubgraphIndexOutOfRange) {
  ExpectInvalid(CallerOf(Relu(), {}, {1, 7}),
                {"IF #0", "else subgraph index 7 out of range", "subgraphs 1..1"});
  ExpectInvalid(CallerOf(Relu(), {}, {0, 1}), {"then subgraph index 0 out of range"});
}

TEST(ControlFlowImportTest, SubgraphCallingItselfIsRefused) {
  ExpectInvalid(CallerOf(Relu(1)),
                {"IF #0 of subgraph 1", "subgraph 1 calls itself", "1 -> 1", "recursive"});
  // Indirectly: 1 calls 2, which calls 1.
  ExpectInvalid(CallerOf(Relu(2), {Relu(1)}), {"calls itself", "0 -> 1 -> 2 -> 1"});
}

TEST(ControlFlowImportTest, IfConditionMustBeABoolScalar) {
  TfliteBuilder b = CallerOf(Relu());
  b.mutable_tensor(0).type = static_cast<int8_t>(TflType::kInt8);
  ExpectInvalid(b, {"IF #0", "condition 'cond' is int8[1]", "bool tensor of one element"});
  TfliteBuilder two = CallerOf(Relu());
  two.mutable_tensor(0).shape = {2};
  ExpectInvalid(two, {"condition 'cond' is bool[2]"});
}

TEST(ControlFlowImportTest, IfBranchSignatureMismatch) {
  TfliteBuilder b = CallerOf(Relu());
  b.mutable_tensor(1).shape = {1, 4};
  b.mutable_tensor(2).shape = {1, 4};
  ExpectInvalid(
      b, {"IF #0", "inputs against then subgraph 1", "'x' is int8[1,4]", "'a' is int8[1,8]"});
}

TEST(ControlFlowImportTest, WhileBodyAndCondSignatureMismatch) {
  TfliteBuilder body_shape = WhileModelBuilder();
  TfliteBuilder wrong = WhileModelBuilder();
  // Subgraph 2 (the body) with an output of another shape.
  {
    TfliteBuilder body;
    const int n = body.AddTensor("n", {1}, TflType::kInt8, PerTensor(0.5f, 0));
    const int x = body.AddTensor("x", {1, 8}, TflType::kInt8, PerTensor(0.05f, 0));
    const int x4 = body.AddTensor("x4", {1, 4}, TflType::kInt8, PerTensor(0.05f, 0));
    const int32_t begin[] = {0, 0}, size[] = {1, 4};
    const int b0 = body.AddConstInt32("begin", {2}, begin);
    const int s0 = body.AddConstInt32("size", {2}, size);
    body.AddOperator(Code(OpType::kSlice), {x, b0, s0}, {x4});
    body.SetInputs({n, x});
    body.SetOutputs({n, x4});
    TfliteBuilder cond;
    const int cn = cond.AddTensor("n", {1}, TflType::kInt8, PerTensor(0.5f, 0));
    const int cx = cond.AddTensor("x", {1, 8}, TflType::kInt8, PerTensor(0.05f, 0));
    const int limit =
        cond.AddTensor("limit", {1}, TflType::kInt8, PerTensor(0.5f, 0), std::vector<uint8_t>{5});
    const int less = cond.AddTensor("less", {1}, TflType::kBool);
    cond.AddOperator(Code(OpType::kLess), {cn, limit}, {less});
    cond.SetInputs({cn, cx});
    cond.SetOutputs({less});
    TfliteBuilder m;
    const int in_n = m.AddTensor("n", {1}, TflType::kInt8, PerTensor(0.5f, 0));
    const int in_x = m.AddTensor("x", {1, 8}, TflType::kInt8, PerTensor(0.05f, 0));
    const int out_n = m.AddTensor("n_out", {1}, TflType::kInt8, PerTensor(0.5f, 0));
    const int out_x = m.AddTensor("x_out", {1, 8}, TflType::kInt8, PerTensor(0.05f, 0));
    m.AddSubgraph(std::move(cond));
    m.AddSubgraph(std::move(body));
    m.AddOperator(Code(OpType::kWhile), {in_n, in_x}, {out_n, out_x}, ControlFlowOpts{1, 2});
    m.SetInputs({in_n, in_x});
    m.SetOutputs({out_n, out_x});
    ExpectInvalid(m, {"WHILE #0", "inputs against body subgraph 2 outputs", "'x4' is int8[1,4]"});
  }
  // The cond's output is not a bool: point the WHILE at the body as its cond too.
  wrong.mutable_operator(0).options = ControlFlowOpts{2, 2};
  ExpectInvalid(wrong, {"WHILE #0", "cond subgraph 2 has 2 outputs"});
  // The WHILE's outputs do not match its inputs.
  body_shape.mutable_tensor(2).shape = {2};
  ExpectInvalid(body_shape, {"WHILE #0", "outputs against its inputs"});
}

// A loop whose cond is constant true never ends; detecting that is not required, but the
// compiler must compile it without crashing (the runtime would then loop, as TFLite Micro does).
TEST(ControlFlowImportTest, ALoopThatNeverEndsStillCompiles) {
  TfliteBuilder cond;
  const int n = cond.AddTensor("n", {1}, TflType::kInt8, PerTensor(0.5f, 0));
  const int yes = cond.AddTensor("yes", {1}, TflType::kBool, {}, std::vector<uint8_t>{1});
  cond.SetInputs({n});
  cond.SetOutputs({yes});
  TfliteBuilder body;
  const int bn = body.AddTensor("n", {1}, TflType::kInt8, PerTensor(0.5f, 0));
  body.SetInputs({bn});
  body.SetOutputs({bn});
  TfliteBuilder m;
  const int in = m.AddTensor("n", {1}, TflType::kInt8, PerTensor(0.5f, 0));
  const int out = m.AddTensor("n_out", {1}, TflType::kInt8, PerTensor(0.5f, 0));
  m.AddSubgraph(std::move(cond));
  m.AddSubgraph(std::move(body));
  m.AddOperator(Code(OpType::kWhile), {in}, {out}, ControlFlowOpts{1, 2});
  m.SetInputs({in});
  m.SetOutputs({out});
  absl::StatusOr<compiler::CompileResult> r = compiler::Compile(m.Finish(), {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->pte.empty());
}

// Subgraph k calls subgraph k + 1 from both branches: 2^24 inlined RELUs. The compiler refuses
// the model with a message instead of running out of memory.
TEST(ControlFlowImportTest, AnExponentialExpansionIsRefused) {
  constexpr int kDepth = 24;
  std::vector<TfliteBuilder> more;
  for (int k = 2; k <= kDepth; ++k) more.push_back(Relu(k + 1));
  more.push_back(Relu());
  absl::StatusOr<compiler::CompileResult> r =
      compiler::Compile(CallerOf(Relu(2), std::move(more)).Finish(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find("more than 1048576 instructions"), std::string_view::npos)
      << r.status();
}

TEST(ControlFlowImportTest, UnsupportedOpInASubgraphSaysWhichSubgraph) {
  absl::StatusOr<compiler::Graph> g = ImportTflite(CallerOf(LshProjection()).Finish());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(g.status().message().find("subgraph 1: operator 0 is LSH_PROJECTION"),
            std::string_view::npos)
      << g.status();
}

// TFLite Micro prepares a subgraph that nothing calls (so an operator it has no kernel for fails
// the model) but never invokes it: boardlab checks it likewise, then compiles none of its ops,
// with or without resource variables in the model (CALL_ONCE's init makes this one stateful).
TEST(ControlFlowImportTest, AnUncalledSubgraphIsCheckedButNotCompiled) {
  for (const bool stateful : {false, true}) {
    SCOPED_TRACE(stateful ? "with CALL_ONCE" : "without resource variables");
    TfliteBuilder b = CallerOf(Relu(), {Relu()});  // subgraph 2: the same RELU, never called
    if (stateful) {
      TfliteBuilder init;  // assigns variable "v" a constant
      init.set_name("init");
      const int h = init.AddTensor("h", {}, TflType::kResource);
      const int8_t zero[] = {0};
      init.AddOperator(Code(OpType::kVarHandle), {}, {h}, VarHandleOpts{"", "v"});
      init.AddOperator(Code(OpType::kAssignVariable),
                       {h, init.AddConstInt8("zero", {1}, zero, PerTensor(0.5f, 0))}, {});
      b.AddSubgraph(std::move(init));
      b.AddOperator(Code(OpType::kCallOnce), {}, {}, CallOnceOpts{3});
    }
    absl::StatusOr<compiler::CompileResult> r = compiler::Compile(b.Finish(), {});
    ASSERT_TRUE(r.ok()) << r.status();
    const compiler::Graph& g = r->compilation.graph;
    EXPECT_EQ(g.subgraph(1).ops.size(), 1u);
    EXPECT_TRUE(g.subgraph(2).ops.empty());
    const nlohmann::json report = nlohmann::json::parse(r->report_json);
    for (const nlohmann::json& op : report["ops"]) {
      EXPECT_NE(op.value("subgraph", 0), 2) << op.dump();
    }
  }
  std::vector<TfliteBuilder> uncalled;
  uncalled.push_back(LshProjection());
  absl::StatusOr<compiler::Graph> g = ImportTflite(CallerOf(Relu(), std::move(uncalled)).Finish());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(g.status().message().find("subgraph 2: operator 0 is LSH_PROJECTION"),
            std::string_view::npos)
      << g.status();
}

}  // namespace
}  // namespace boardlab::testing
