#include "tests/support/resource_variable_models.h"

#include "compiler/op_types.h"
#include "tests/support/test_models.h"

namespace boardlab::testing {
namespace {

using compiler::OpType;

int32_t Code(OpType type) { return compiler::OpTypeTfliteCode(type); }

QuantParams CounterQuant(TflType type) {
  if (type == TflType::kInt8) return PerTensor(0.5f, -2);
  if (type == TflType::kInt16) return PerTensor(0.25f, 0);
  return {};
}

int ElementBytes(TflType type) {
  switch (type) {
    case TflType::kInt8:
    case TflType::kBool:
      return 1;
    case TflType::kInt16:
      return 2;
    case TflType::kInt64:
      return 8;
    default:
      return 4;
  }
}

// s = a + b: ADD in int8 and int16, ADD_N in float32.
void Sum(TfliteBuilder& b, TflType type, int a, int other, int s) {
  const OpType op = type == TflType::kFloat32 ? OpType::kAddN : OpType::kAdd;
  if (op == OpType::kAddN) {
    b.AddOperator(Code(op), {a, other}, {s});
  } else {
    b.AddOperator(Code(op), {a, other}, {s}, ElementwiseOpts{});
  }
}

// VAR_HANDLE `name` in `b`; returns the handle tensor.
int Handle(TfliteBuilder& b, const char* name) {
  const int handle = b.AddTensor(std::string(name) + "_handle", {}, TflType::kResource);
  b.AddOperator(Code(OpType::kVarHandle), {}, {handle}, VarHandleOpts{"", name});
  return handle;
}

// An init subgraph: each variable assigned its constant.
struct InitialValue {
  const char* variable;
  std::vector<int32_t> shape;
  TflType type;
  QuantParams quant;
  std::vector<uint8_t> bytes;
};

TfliteBuilder InitSubgraph(const std::vector<InitialValue>& values) {
  TfliteBuilder init;
  init.set_name("init");
  for (const InitialValue& v : values) {
    const int handle = Handle(init, v.variable);
    const int value =
        init.AddTensor(std::string(v.variable) + "_initial", v.shape, v.type, v.quant, v.bytes);
    init.AddOperator(Code(OpType::kAssignVariable), {handle, value}, {});
  }
  return init;
}

// Tensors of the accumulator models: x and the variable's values, quantized alike.
constexpr float kAccScale = 0.5f;
constexpr int64_t kAccZeroPoint = -2;

int AccTensor(TfliteBuilder& b, const std::string& name) {
  return b.AddTensor(name, {1, 4}, TflType::kInt8, PerTensor(kAccScale, kAccZeroPoint));
}

int HandleTensor(TfliteBuilder& b, const std::string& name) {
  return b.AddTensor(name, {}, TflType::kResource);
}

// "acc" starts at its zero point (0.0).
TfliteBuilder AccInit() {
  const std::vector<uint8_t> zero(4, static_cast<uint8_t>(kAccZeroPoint));
  return InitSubgraph({{"acc", {1, 4}, TflType::kInt8, PerTensor(kAccScale, kAccZeroPoint), zero}});
}

// s = READ_VARIABLE(h) + x, ASSIGN_VARIABLE(h, s); returns s.
int AddIntoVariable(TfliteBuilder& b, int h, int x) {
  const int v = AccTensor(b, "acc_value");
  const int s = AccTensor(b, "acc_sum");
  b.AddOperator(Code(OpType::kReadVariable), {h}, {v});
  Sum(b, TflType::kInt8, v, x, s);
  b.AddOperator(Code(OpType::kAssignVariable), {h, s}, {});
  return s;
}

int LoopCounter(TfliteBuilder& b, const std::string& name) {
  return b.AddTensor(name, {1}, TflType::kInt8, PerTensor(0.5f, 0));
}

// Loop counters count in quanta of 0.5 (TFLite Micro's quantized LESS wants a scale below 1).
int ConstCounter(TfliteBuilder& b, const char* name, int8_t value) {
  const int8_t values[] = {value};
  return b.AddConstInt8(name, {1}, values, PerTensor(0.5f, 0));
}

// LESS(counter, limit): a loop's condition.
int LessThan(TfliteBuilder& b, int counter, int8_t limit) {
  const int less = b.AddTensor("less", {1}, TflType::kBool);
  b.AddOperator(Code(OpType::kLess), {counter, ConstCounter(b, "limit", limit)}, {less});
  return less;
}

// counter + 1 into a new tensor `name`.
int Increment(TfliteBuilder& b, int counter, const char* name) {
  const int next = LoopCounter(b, name);
  b.AddOperator(Code(OpType::kAdd), {counter, ConstCounter(b, "one", 1)}, {next},
                ElementwiseOpts{});
  return next;
}

// The loop state of WhileAccumulatorModelBuilder: (i, h, x).
struct AccLoopState {
  int i, h, x;
};

AccLoopState AddAccLoopState(TfliteBuilder& b, const std::string& suffix) {
  return {LoopCounter(b, "i" + suffix), HandleTensor(b, "h" + suffix), AccTensor(b, "x" + suffix)};
}

TfliteBuilder AccLoopCond() {
  TfliteBuilder b;
  b.set_name("cond");
  const AccLoopState in = AddAccLoopState(b, "");
  const int less = LessThan(b, in.i, 3);
  b.SetInputs({in.i, in.h, in.x});
  b.SetOutputs({less});
  return b;
}

// With `hand_on`, the body hands on a VAR_HANDLE of that variable instead of its own handle
// (LoopSwitchedVariableModelBuilder's loop).
TfliteBuilder AccLoopBody(const char* hand_on = nullptr) {
  TfliteBuilder b;
  b.set_name("body");
  const AccLoopState in = AddAccLoopState(b, "");
  const int next = Increment(b, in.i, "i_next");
  AddIntoVariable(b, in.h, in.x);
  b.SetInputs({in.i, in.h, in.x});
  b.SetOutputs({next, hand_on == nullptr ? in.h : Handle(b, hand_on), in.x});
  return b;
}

// IfAssignModelBuilder's branches: (h, x) -> (the variable's value, h).
TfliteBuilder AccBranch(bool assigns) {
  TfliteBuilder b;
  b.set_name(assigns ? "then" : "else");
  const int h = HandleTensor(b, "h");
  const int x = AccTensor(b, "x");
  int value = -1;
  if (assigns) {
    value = AddIntoVariable(b, h, x);
  } else {
    value = AccTensor(b, "acc_value");
    b.AddOperator(Code(OpType::kReadVariable), {h}, {value});
  }
  b.SetInputs({h, x});
  b.SetOutputs({value, h});
  return b;
}

// SharedBranchesModelBuilder's then-branch with a loop: (h, x) -> WHILE(0, h, x) over
// AccLoopCond / AccLoopBody (subgraphs `cond` and `body`), then (READ_VARIABLE(h'), h').
TfliteBuilder AccLoopBranch(int cond, int body) {
  TfliteBuilder b;
  b.set_name("then_loop");
  const AccLoopState in = AddAccLoopState(b, "");
  const AccLoopState out = AddAccLoopState(b, "_out");
  const int value = AccTensor(b, "acc_value");
  b.AddOperator(Code(OpType::kWhile), {ConstCounter(b, "i_start", 0), in.h, in.x},
                {out.i, out.h, out.x}, ControlFlowOpts{cond, body});
  b.AddOperator(Code(OpType::kReadVariable), {out.h}, {value});
  b.SetInputs({in.h, in.x});
  b.SetOutputs({value, out.h});
  return b;
}

// RaiseToFiveModelBuilder's loop: cond and body take the handle alone.
TfliteBuilder RaiseCond() {
  TfliteBuilder b;
  b.set_name("cond");
  const int h = HandleTensor(b, "h");
  const int v = LoopCounter(b, "v");
  b.AddOperator(Code(OpType::kReadVariable), {h}, {v});
  const int less = LessThan(b, v, 5);
  b.SetInputs({h});
  b.SetOutputs({less});
  return b;
}

TfliteBuilder RaiseBody(bool replaces_handle) {
  TfliteBuilder b;
  b.set_name("body");
  const int h = HandleTensor(b, "h");
  const int v = LoopCounter(b, "v");
  b.AddOperator(Code(OpType::kReadVariable), {h}, {v});
  b.AddOperator(Code(OpType::kAssignVariable), {h, Increment(b, v, "v_next")}, {});
  b.SetInputs({h});
  b.SetOutputs({replaces_handle ? Handle(b, "w") : h});
  return b;
}

}  // namespace

TfliteBuilder RaiseToFiveModelBuilder(bool body_replaces_handle) {
  TfliteBuilder b;
  b.set_name("raise_to_five_model");
  const int x = LoopCounter(b, "x");
  const int h_out = HandleTensor(b, "h_out");
  const int y = LoopCounter(b, "y");
  const int cond = b.AddSubgraph(RaiseCond());
  const int body = b.AddSubgraph(RaiseBody(body_replaces_handle));
  const int h = Handle(b, "v");
  b.AddOperator(Code(OpType::kAssignVariable), {h, x}, {});
  b.AddOperator(Code(OpType::kWhile), {h}, {h_out}, ControlFlowOpts{cond, body});
  b.AddOperator(Code(OpType::kReadVariable), {h_out}, {y});
  b.SetInputs({x});
  b.SetOutputs({y});
  return b;
}

TfliteBuilder WhileAccumulatorModelBuilder() {
  TfliteBuilder b;
  b.set_name("while_accumulator_model");
  const int x = AccTensor(b, "x");
  const int start = ConstCounter(b, "i_start", 0);
  const AccLoopState out = AddAccLoopState(b, "_out");
  const int y = AccTensor(b, "y");
  const int init = b.AddSubgraph(AccInit());
  const int cond = b.AddSubgraph(AccLoopCond());
  const int body = b.AddSubgraph(AccLoopBody());
  b.AddOperator(Code(OpType::kCallOnce), {}, {}, CallOnceOpts{init});
  const int h = Handle(b, "acc");
  b.AddOperator(Code(OpType::kWhile), {start, h, x}, {out.i, out.h, out.x},
                ControlFlowOpts{cond, body});
  b.AddOperator(Code(OpType::kReadVariable), {out.h}, {y});
  b.SetInputs({x});
  b.SetOutputs({y});
  return b;
}

TfliteBuilder SharedBranchesModelBuilder(bool nested_loop) {
  TfliteBuilder b;
  b.set_name(nested_loop ? "shared_loop_branches_model" : "shared_branches_model");
  const int cond_a = b.AddTensor("cond_a", {1}, TflType::kBool);
  const int cond_b = b.AddTensor("cond_b", {1}, TflType::kBool);
  const int x = AccTensor(b, "x");
  const std::vector<uint8_t> zero(4, static_cast<uint8_t>(kAccZeroPoint));
  const QuantParams q = PerTensor(kAccScale, kAccZeroPoint);
  const int init = b.AddSubgraph(InitSubgraph(
      {{"a", {1, 4}, TflType::kInt8, q, zero}, {"b", {1, 4}, TflType::kInt8, q, zero}}));
  int then_branch = -1;
  if (nested_loop) {
    const int loop_cond = b.AddSubgraph(AccLoopCond());
    const int loop_body = b.AddSubgraph(AccLoopBody());
    then_branch = b.AddSubgraph(AccLoopBranch(loop_cond, loop_body));
  } else {
    then_branch = b.AddSubgraph(AccBranch(true));
  }
  const int else_branch = b.AddSubgraph(AccBranch(false));
  b.AddOperator(Code(OpType::kCallOnce), {}, {}, CallOnceOpts{init});
  std::vector<int> outputs, handles_out;
  for (const auto& [variable, cond] : {std::pair{"a", cond_a}, std::pair{"b", cond_b}}) {
    const int z = AccTensor(b, std::string("z_") + variable);
    const int h_out = HandleTensor(b, std::string("h_out_") + variable);
    b.AddOperator(Code(OpType::kIf), {cond, Handle(b, variable), x}, {z, h_out},
                  ControlFlowOpts{then_branch, else_branch});
    outputs.push_back(z);
    handles_out.push_back(h_out);
  }
  const int y_a = AccTensor(b, "y_a");
  b.AddOperator(Code(OpType::kReadVariable), {handles_out[0]}, {y_a});
  outputs.push_back(y_a);
  b.SetInputs({cond_a, cond_b, x});
  b.SetOutputs(outputs);
  return b;
}

TfliteBuilder IfAssignModelBuilder(bool uncalled_reader) {
  TfliteBuilder b;
  b.set_name("if_assign_model");
  const int cond = b.AddTensor("cond", {1}, TflType::kBool);
  const int x = AccTensor(b, "x");
  const int z = AccTensor(b, "z");
  const int h_out = HandleTensor(b, "h_out");
  const int y = AccTensor(b, "y");
  const int init = b.AddSubgraph(AccInit());
  const int then_branch = b.AddSubgraph(AccBranch(true));
  const int else_branch = b.AddSubgraph(AccBranch(false));
  b.AddOperator(Code(OpType::kCallOnce), {}, {}, CallOnceOpts{init});
  const int h = Handle(b, "acc");
  b.AddOperator(Code(OpType::kIf), {cond, h, x}, {z, h_out},
                ControlFlowOpts{then_branch, else_branch});
  b.AddOperator(Code(OpType::kReadVariable), {h_out}, {y});
  if (uncalled_reader) b.AddSubgraph(AccBranch(false));
  b.SetInputs({cond, x});
  b.SetOutputs({z, y});
  return b;
}

TfliteBuilder CounterModelBuilder(TflType type) {
  const QuantParams q = CounterQuant(type);
  const std::vector<int32_t> shape = {1, 4};
  std::vector<uint8_t> zero(4 * static_cast<size_t>(ElementBytes(type)), 0);
  if (type == TflType::kInt8) zero.assign(4, static_cast<uint8_t>(q.zero_points[0]));
  TfliteBuilder b;
  b.set_name("counter_model");
  const int x = b.AddTensor("x", shape, type, q);
  const int v = b.AddTensor("v", shape, type, q);
  const int s = b.AddTensor("s", shape, type, q);
  const int init = b.AddSubgraph(InitSubgraph({{"counter", shape, type, q, zero}}));
  b.AddOperator(Code(OpType::kCallOnce), {}, {}, CallOnceOpts{init});
  const int handle = Handle(b, "counter");
  b.AddOperator(Code(OpType::kReadVariable), {handle}, {v});
  Sum(b, type, v, x, s);
  b.AddOperator(Code(OpType::kAssignVariable), {handle, s}, {});
  b.SetInputs({x});
  b.SetOutputs({s});
  return b;
}

TfliteBuilder FibonacciModelBuilder() {
  const std::vector<int32_t> shape = {1};
  const TflType f32 = TflType::kFloat32;
  const std::vector<uint8_t> one = {0x00, 0x00, 0x80, 0x3F};  // 1.0f, little-endian
  TfliteBuilder b;
  b.set_name("fibonacci_model");
  const int x = b.AddTensor("x", shape, f32);
  const int a = b.AddTensor("a_value", shape, f32);
  const int bv = b.AddTensor("b_value", shape, f32);
  const int s = b.AddTensor("s", shape, f32);
  const int out = b.AddTensor("out", shape, f32);
  const int init = b.AddSubgraph(
      InitSubgraph({{"a", shape, f32, {}, {0, 0, 0, 0}}, {"b", shape, f32, {}, one}}));
  b.AddOperator(Code(OpType::kCallOnce), {}, {}, CallOnceOpts{init});
  const int handle_a = Handle(b, "a");
  const int handle_b = Handle(b, "b");
  b.AddOperator(Code(OpType::kReadVariable), {handle_a}, {a});
  b.AddOperator(Code(OpType::kReadVariable), {handle_b}, {bv});
  Sum(b, f32, a, bv, s);
  b.AddOperator(Code(OpType::kAssignVariable), {handle_a, bv}, {});
  b.AddOperator(Code(OpType::kAssignVariable), {handle_b, s}, {});
  Sum(b, f32, s, x, out);
  b.SetInputs({x});
  b.SetOutputs({out});
  return b;
}

TfliteBuilder ReadAssignReadModelBuilder(TflType type) {
  const QuantParams q = type == TflType::kInt8 ? PerTensor(0.5f, 3) : QuantParams{};
  TfliteBuilder b;
  b.set_name("read_assign_read_model");
  const int x = b.AddTensor("x", {1, 4}, type, q);
  const int before = b.AddTensor("before", {1, 4}, type, q);
  const int after = b.AddTensor("after", {1, 4}, type, q);
  const int handle = Handle(b, "v");
  b.AddOperator(Code(OpType::kReadVariable), {handle}, {before});
  b.AddOperator(Code(OpType::kAssignVariable), {handle, x}, {});
  b.AddOperator(Code(OpType::kReadVariable), {handle}, {after});
  b.SetInputs({x});
  b.SetOutputs({before, after});
  return b;
}

namespace {

// The run-time handle models' variables: "v" starts at 0.0 (the zero point), "w" at 6.0
// (quantized 10), so that reaching the wrong one shows.
constexpr int8_t kWStart = 10;

// With `float_f`, also a float32 [1] variable "f" set to 0.
TfliteBuilder VwInit(bool float_f = false) {
  const QuantParams q = PerTensor(kAccScale, kAccZeroPoint);
  std::vector<InitialValue> values = {
      {"v", {1, 4}, TflType::kInt8, q, std::vector<uint8_t>(4, 0xfe)},
      {"w", {1, 4}, TflType::kInt8, q, std::vector<uint8_t>(4, kWStart)}};
  if (float_f) values.push_back({"f", {1}, TflType::kFloat32, {}, std::vector<uint8_t>(4, 0)});
  return InitSubgraph(values);
}

// A subgraph without inputs that outputs VAR_HANDLE `variable`.
TfliteBuilder HandleOf(const char* variable) {
  TfliteBuilder b;
  b.set_name(variable);
  b.SetOutputs({Handle(b, variable)});
  return b;
}

// VAR_HANDLE "w" then "v": TFLite Micro numbers resource ids in prepare order, so "w" gets id 0
// and "v" id 1 (main's ops are prepared before the init subgraph's).
struct VwHandles {
  int w, v;
};

VwHandles AddVwHandles(TfliteBuilder& b) {
  const int w = Handle(b, "w");
  return {w, Handle(b, "v")};
}

// y_v = READ_VARIABLE(v), y_w = READ_VARIABLE(w).
std::vector<int> ReadVw(TfliteBuilder& b, const VwHandles& h) {
  const int y_v = AccTensor(b, "y_v");
  const int y_w = AccTensor(b, "y_w");
  b.AddOperator(Code(OpType::kReadVariable), {h.v}, {y_v});
  b.AddOperator(Code(OpType::kReadVariable), {h.w}, {y_w});
  return {y_v, y_w};
}

}  // namespace

TfliteBuilder BranchChosenVariableModelBuilder(bool outputs_handles) {
  TfliteBuilder b;
  b.set_name("branch_chosen_variable_model");
  const int cond = b.AddTensor("cond", {1}, TflType::kBool);
  const int x = AccTensor(b, "x");
  const int chosen = HandleTensor(b, "chosen");
  const VwHandles h = AddVwHandles(b);
  const int init = b.AddSubgraph(VwInit());
  const int then_branch = b.AddSubgraph(HandleOf("v"));
  const int else_branch = b.AddSubgraph(HandleOf("w"));
  b.AddOperator(Code(OpType::kCallOnce), {}, {}, CallOnceOpts{init});
  b.AddOperator(Code(OpType::kIf), {cond}, {chosen}, ControlFlowOpts{then_branch, else_branch});
  const int s = AddIntoVariable(b, chosen, x);
  const std::vector<int> read = ReadVw(b, h);
  b.SetInputs({cond, x});
  if (outputs_handles) {
    b.SetOutputs({s, read[0], read[1], chosen, h.v});
  } else {
    b.SetOutputs({s, read[0], read[1]});
  }
  return b;
}

TfliteBuilder LoopSwitchedVariableModelBuilder() {
  TfliteBuilder b;
  b.set_name("loop_switched_variable_model");
  const int x = AccTensor(b, "x");
  const AccLoopState out = AddAccLoopState(b, "_out");
  const int init = b.AddSubgraph(VwInit());
  const int cond = b.AddSubgraph(AccLoopCond());
  const int body = b.AddSubgraph(AccLoopBody("w"));
  b.AddOperator(Code(OpType::kCallOnce), {}, {}, CallOnceOpts{init});
  const VwHandles h = AddVwHandles(b);
  b.AddOperator(Code(OpType::kWhile), {ConstCounter(b, "i_start", 0), h.v, x},
                {out.i, out.h, out.x}, ControlFlowOpts{cond, body});
  const int y = AccTensor(b, "y");
  b.AddOperator(Code(OpType::kReadVariable), {out.h}, {y});
  const std::vector<int> read = ReadVw(b, h);
  b.SetInputs({x});
  b.SetOutputs({y, read[0], read[1]});
  return b;
}

TfliteBuilder CallersHandleModelBuilder() {
  TfliteBuilder b;
  b.set_name("callers_handle_model");
  const int handle = HandleTensor(b, "handle");
  const int x = AccTensor(b, "x");
  const VwHandles h = AddVwHandles(b);
  const int init = b.AddSubgraph(VwInit(true));
  b.AddOperator(Code(OpType::kCallOnce), {}, {}, CallOnceOpts{init});
  const int s = AddIntoVariable(b, handle, x);
  const std::vector<int> read = ReadVw(b, h);
  b.SetInputs({handle, x});
  b.SetOutputs({s, read[0], read[1]});
  return b;
}

}  // namespace boardlab::testing
