#include "tests/support/control_flow_models.h"

#include <string>
#include <utility>
#include <vector>

#include "compiler/op_types.h"
#include "tests/support/test_models.h"

namespace boardlab::testing {
namespace {

using compiler::OpType;

int32_t Code(OpType type) { return compiler::OpTypeTfliteCode(type); }

int Int8(TfliteBuilder& b, const char* name, std::vector<int32_t> shape, float scale,
         int64_t zero_point) {
  return b.AddTensor(name, std::move(shape), TflType::kInt8, PerTensor(scale, zero_point));
}

int ConstInt8(TfliteBuilder& b, const char* name, int8_t value) {
  const int8_t values[] = {value};
  return b.AddConstInt8(name, {1}, values, PerTensor(0.5f, 0));
}

// The loop state of WhileModelBuilder: the counter and the vector.
struct LoopState {
  int n = 0;
  int x = 0;
};

LoopState AddLoopState(TfliteBuilder& b, const char* n_name, const char* x_name) {
  // The counter's scale is below 1, as TFLite Micro's quantized LESS requires; it counts in
  // steps of one quantum.
  return {Int8(b, n_name, {1}, 0.5f, 0), Int8(b, x_name, {1, 8}, 0.05f, 0)};
}

// cond: n < 5.
TfliteBuilder LoopCond() {
  TfliteBuilder b;
  b.set_name("cond");
  const LoopState in = AddLoopState(b, "n", "x");
  const int limit = ConstInt8(b, "limit", 5);
  const int less = b.AddTensor("less", {1}, TflType::kBool);
  b.AddOperator(Code(OpType::kLess), {in.n, limit}, {less});
  b.SetInputs({in.n, in.x});
  b.SetOutputs({less});
  return b;
}

// body: n + 1, x + x.
TfliteBuilder LoopBody() {
  TfliteBuilder b;
  b.set_name("body");
  const LoopState in = AddLoopState(b, "n", "x");
  const LoopState out = AddLoopState(b, "n_next", "x_next");
  const int one = ConstInt8(b, "one", 1);
  b.AddOperator(Code(OpType::kAdd), {in.n, one}, {out.n}, ElementwiseOpts{});
  b.AddOperator(Code(OpType::kAdd), {in.x, in.x}, {out.x}, ElementwiseOpts{});
  b.SetInputs({in.n, in.x});
  b.SetOutputs({out.n, out.x});
  return b;
}

TfliteBuilder Branch(const char* name, OpType type, float out_scale) {
  TfliteBuilder b;
  b.set_name(name);
  const int a = Int8(b, "a", {1, 8}, 0.1f, -3);
  const int out = Int8(b, "out", {1, 8}, out_scale, -3);
  if (type == OpType::kAdd) {
    b.AddOperator(Code(type), {a, a}, {out}, ElementwiseOpts{});
  } else {
    b.AddOperator(Code(type), {a}, {out});
  }
  b.SetInputs({a});
  b.SetOutputs({out});
  return b;
}

int Int16Frame(TfliteBuilder& b, const std::string& name) {
  return b.AddTensor(name, {4}, TflType::kInt16);
}

int HandleTensor(TfliteBuilder& b, const std::string& name) {
  return b.AddTensor(name, {}, TflType::kResource);
}

// SharedDelayModelBuilder's branches: (h,) a -> SIGNAL_DELAY(a) (assigned through h), or a.
TfliteBuilder DelayBranch(bool delays, bool through_handles) {
  TfliteBuilder b;
  b.set_name(delays ? "delay" : "pass");
  std::vector<int> inputs;
  if (through_handles) inputs.push_back(HandleTensor(b, "h"));
  const int a = Int16Frame(b, "a");
  inputs.push_back(a);
  int out = a;
  if (delays) {
    out = Int16Frame(b, "delayed");
    b.AddCustomOperator(std::string(compiler::CustomCodeOf(OpType::kSignalDelay)), {a}, {out},
                        IntMapFlexbuffer({{"delay_length", 3}}));
    if (through_handles) b.AddOperator(Code(OpType::kAssignVariable), {inputs[0], out}, {});
  }
  b.SetInputs(inputs);
  b.SetOutputs({out});
  return b;
}

// ADD(a, a) then RELU6, both (0.2, -3).
TfliteBuilder AddRelu6Branch() {
  TfliteBuilder b;
  b.set_name("then_add_relu6");
  const int a = Int8(b, "a", {1, 8}, 0.1f, -3);
  const int sum = Int8(b, "sum", {1, 8}, 0.2f, -3);
  const int out = Int8(b, "out", {1, 8}, 0.2f, -3);
  b.AddOperator(Code(OpType::kAdd), {a, a}, {sum}, ElementwiseOpts{});
  b.AddOperator(Code(OpType::kRelu6), {sum}, {out});
  b.SetInputs({a});
  b.SetOutputs({out});
  return b;
}

TfliteBuilder IfOf(TfliteBuilder then_branch, const char* name) {
  TfliteBuilder b;
  b.set_name(name);
  const int cond = b.AddTensor("cond", {1}, TflType::kBool);
  const int x = Int8(b, "x", {1, 8}, 0.05f, -3);
  const int y = Int8(b, "y", {1, 8}, 0.1f, -3);
  const int z = Int8(b, "z", {1, 8}, 0.1f, -3);
  b.AddOperator(Code(OpType::kAdd), {x, x}, {y}, ElementwiseOpts{});
  const int then_index = b.AddSubgraph(std::move(then_branch));
  const int else_index = b.AddSubgraph(Branch("else", OpType::kRelu, 0.1f));
  b.AddOperator(Code(OpType::kIf), {cond, y}, {z}, ControlFlowOpts{then_index, else_index});
  b.SetInputs({cond, x});
  b.SetOutputs({z});
  return b;
}

}  // namespace

TfliteBuilder SharedDelayModelBuilder(bool through_handles) {
  TfliteBuilder b;
  b.set_name(through_handles ? "shared_delay_handles_model" : "shared_delay_model");
  const int cond_a = b.AddTensor("cond_a", {1}, TflType::kBool);
  const int cond_b = b.AddTensor("cond_b", {1}, TflType::kBool);
  const int x = Int16Frame(b, "x");
  const int then_branch = b.AddSubgraph(DelayBranch(true, through_handles));
  const int else_branch = b.AddSubgraph(DelayBranch(false, through_handles));
  std::vector<int> outputs;
  for (const auto& [variable, cond] : {std::pair{"a", cond_a}, std::pair{"b", cond_b}}) {
    std::vector<int> inputs = {cond};
    if (through_handles) {
      const int h = HandleTensor(b, std::string("h_") + variable);
      b.AddOperator(Code(OpType::kVarHandle), {}, {h}, VarHandleOpts{"", variable});
      b.AddOperator(Code(OpType::kAssignVariable), {h, x}, {});
      inputs.push_back(h);
    }
    inputs.push_back(x);
    outputs.push_back(Int16Frame(b, std::string("y_") + variable));
    b.AddOperator(Code(OpType::kIf), inputs, {outputs.back()},
                  ControlFlowOpts{then_branch, else_branch});
  }
  b.SetInputs({cond_a, cond_b, x});
  b.SetOutputs(outputs);
  return b;
}

TfliteBuilder IfModelBuilder() { return IfOf(Branch("then", OpType::kAdd, 0.2f), "if_model"); }

TfliteBuilder IfWithAFusableBranchBuilder() {
  return IfOf(AddRelu6Branch(), "if_fusable_branch_model");
}

TfliteBuilder WhileModelBuilder() {
  TfliteBuilder b;
  b.set_name("while_model");
  const LoopState in = AddLoopState(b, "n", "x");
  const LoopState out = AddLoopState(b, "n_out", "x_out");
  const int y = Int8(b, "y", {1, 8}, 0.05f, 0);
  const int cond = b.AddSubgraph(LoopCond());
  const int body = b.AddSubgraph(LoopBody());
  b.AddOperator(Code(OpType::kWhile), {in.n, in.x}, {out.n, out.x}, ControlFlowOpts{cond, body});
  b.AddOperator(Code(OpType::kRelu), {out.x}, {y});
  b.SetInputs({in.n, in.x});
  b.SetOutputs({out.n, y});
  return b;
}

TfliteBuilder NestedControlFlowBuilder() {
  TfliteBuilder b;
  b.set_name("nested_model");
  const int cond = b.AddTensor("cond", {1}, TflType::kBool);
  const LoopState in = AddLoopState(b, "n", "x");
  const LoopState out = AddLoopState(b, "n_out", "x_out");
  // Subgraph 1: the loop; subgraph 2: pass-through; 3 and 4: the loop's cond and body.
  TfliteBuilder loop;
  loop.set_name("loop");
  const LoopState loop_in = AddLoopState(loop, "n", "x");
  const LoopState loop_out = AddLoopState(loop, "n_out", "x_out");
  loop.AddOperator(Code(OpType::kWhile), {loop_in.n, loop_in.x}, {loop_out.n, loop_out.x},
                   ControlFlowOpts{3, 4});
  loop.SetInputs({loop_in.n, loop_in.x});
  loop.SetOutputs({loop_out.n, loop_out.x});
  TfliteBuilder pass;
  pass.set_name("pass");
  const LoopState pass_in = AddLoopState(pass, "n", "x");
  pass.SetInputs({pass_in.n, pass_in.x});
  pass.SetOutputs({pass_in.n, pass_in.x});
  const int then_branch = b.AddSubgraph(std::move(loop));
  const int else_branch = b.AddSubgraph(std::move(pass));
  b.AddSubgraph(LoopCond());
  b.AddSubgraph(LoopBody());
  b.AddOperator(Code(OpType::kIf), {cond, in.n, in.x}, {out.n, out.x},
                ControlFlowOpts{then_branch, else_branch});
  b.SetInputs({cond, in.n, in.x});
  b.SetOutputs({out.n, out.x});
  return b;
}

TfliteBuilder SingleIfBuilder() {
  TfliteBuilder b;
  const int cond = b.AddTensor("cond", {1}, TflType::kBool);
  const int y = Int8(b, "y", {1, 8}, 0.1f, -3);
  const int z = Int8(b, "z", {1, 8}, 0.1f, -3);
  const int then_branch = b.AddSubgraph(Branch("then", OpType::kAdd, 0.2f));
  const int else_branch = b.AddSubgraph(Branch("else", OpType::kRelu, 0.1f));
  b.AddOperator(Code(OpType::kIf), {cond, y}, {z}, ControlFlowOpts{then_branch, else_branch});
  b.SetInputs({cond, y});
  b.SetOutputs({z});
  return b;
}

TfliteBuilder SingleWhileBuilder() {
  TfliteBuilder b;
  const LoopState in = AddLoopState(b, "n", "x");
  const LoopState out = AddLoopState(b, "n_out", "x_out");
  const int cond = b.AddSubgraph(LoopCond());
  const int body = b.AddSubgraph(LoopBody());
  b.AddOperator(Code(OpType::kWhile), {in.n, in.x}, {out.n, out.x}, ControlFlowOpts{cond, body});
  b.SetInputs({in.n, in.x});
  b.SetOutputs({out.n, out.x});
  return b;
}

}  // namespace boardlab::testing
