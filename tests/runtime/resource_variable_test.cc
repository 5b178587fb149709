// Resource variables and CALL_ONCE end to end (tests/support/resource_variable_models.h):
// compiled by boardlab and run by the host runtime over several inferences of one load, against
// hand-derived outputs (the models' arithmetic is exact) and against TFLite's interpreter.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "tests/runtime/kernel_test_util.h"
#include "tests/runtime/pte_runner.h"
#include "tests/runtime/tflm_reference_16x8.h"
#include "tests/support/resource_variable_models.h"
#include "tests/support/tflite_oracle.h"

namespace boardlab {
namespace {

using Bytes = std::vector<uint8_t>;
using tflm_reference::BytesOf;
using Inference = std::vector<Bytes>;
using testing::TflType;

Bytes Compiled(const Bytes& model, bool cpu_only = false) {
  return runtime::testing::CompiledPte(model, cpu_only);
}

// Inference n's input of the counter: four values of T, different in every inference.
template <typename T>
std::vector<T> CounterInput(int n) {
  std::vector<T> x;
  for (int k = 0; k < 4; ++k) x.push_back(static_cast<T>((n * 7 + k * 5) % 11 - 4));
  return x;
}

// The counter by hand: the running sum of the inputs, in quantized units (equal scales: q_s =
// q_v + q_x - zero_point), saturating in int8 and int16.
template <typename T>
std::vector<Bytes> CounterByHand(int inferences, int64_t zero_point) {
  std::vector<int64_t> sum(4, zero_point);
  std::vector<Bytes> outputs;
  for (int n = 0; n < inferences; ++n) {
    const std::vector<T> x = CounterInput<T>(n);
    std::vector<T> out;
    for (int k = 0; k < 4; ++k) {
      int64_t v = sum[k] + static_cast<int64_t>(x[k]) - zero_point;
      if constexpr (sizeof(T) < 4) {
        v = std::clamp<int64_t>(v, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
      }
      sum[k] = v;
      out.push_back(static_cast<T>(v));
    }
    outputs.push_back(BytesOf(out));
  }
  return outputs;
}

template <typename T>
std::vector<Inference> CounterInferences(int count) {
  std::vector<Inference> inferences;
  for (int n = 0; n < count; ++n) inferences.push_back({BytesOf(CounterInput<T>(n))});
  return inferences;
}

template <typename T>
void ExpectCounter(TflType type, int64_t zero_point) {
  const Bytes pte = Compiled(testing::CounterModelBuilder(type).Finish());
  ASSERT_FALSE(pte.empty());
  const std::vector<Inference> inferences = CounterInferences<T>(5);
  // Two loads of one program: CALL_ONCE runs its init on the first inference of each, so the
  // second load counts from 0 again.
  for (int load = 0; load < 2; ++load) {
    const runtime::testing::PteRun run = runtime::testing::RunPteInferences(pte, inferences);
    ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
    EXPECT_EQ(run.outputs, CounterByHand<T>(5, zero_point)) << "load " << load;
  }
}

TEST(ResourceVariableTest, CounterInt8CountsAcrossInferencesAndStartsOverOnLoad) {
  ExpectCounter<int8_t>(TflType::kInt8, -2);
}
TEST(ResourceVariableTest, CounterInt16) { ExpectCounter<int16_t>(TflType::kInt16, 0); }

TEST(ResourceVariableTest, CounterFloat32) {
  const Bytes pte = Compiled(testing::CounterModelBuilder(TflType::kFloat32).Finish());
  ASSERT_FALSE(pte.empty());
  std::vector<Inference> inferences;
  std::vector<float> sum(4, 0.0f);
  std::vector<Bytes> expected;
  for (int n = 0; n < 4; ++n) {
    std::vector<float> x;
    for (int k = 0; k < 4; ++k) x.push_back(0.25f * static_cast<float>(n + k) - 0.5f);
    for (int k = 0; k < 4; ++k) sum[k] += x[k];
    inferences.push_back({BytesOf(x)});
    expected.push_back(BytesOf(sum));
  }
  const runtime::testing::PteRun run = runtime::testing::RunPteInferences(pte, inferences);
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  EXPECT_EQ(run.outputs, expected);
}

// The int8 counter's ADD goes to the NPU between the READ_VARIABLE and the ASSIGN_VARIABLE on
// the CPU; the CPU-only build gives the same bytes.
TEST(ResourceVariableTest, CounterWithItsAddOnTheNpu) {
  const Bytes model = testing::CounterModelBuilder(TflType::kInt8).Finish();
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(model, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->compilation.num_partitions, 1);
  const std::vector<Inference> inferences = CounterInferences<int8_t>(4);
  const runtime::testing::PteRun npu =
      runtime::testing::RunPteInferences(compiled->pte, inferences);
  ASSERT_EQ(npu.error, runtime::Error::kOk) << npu.message;
  EXPECT_EQ(npu.outputs, CounterByHand<int8_t>(4, -2));
  const runtime::testing::PteRun cpu =
      runtime::testing::RunPteInferences(Compiled(model, true), inferences);
  EXPECT_EQ(npu.outputs, cpu.outputs);
}

TEST(ResourceVariableTest, TwoVariablesGiveFibonacci) {
  const Bytes pte = Compiled(testing::FibonacciModelBuilder().Finish());
  ASSERT_FALSE(pte.empty());
  std::vector<Inference> inferences;
  std::vector<Bytes> expected;
  float a = 0, b = 1;  // whole numbers far below 2^24: float32 sums are exact
  for (int n = 0; n < 8; ++n) {
    const float x = 100.0f * static_cast<float>(n);
    inferences.push_back({BytesOf(std::vector<float>{x})});
    const float s = a + b;
    a = b;
    b = s;
    expected.push_back(BytesOf(std::vector<float>{s + x}));
  }
  const runtime::testing::PteRun run = runtime::testing::RunPteInferences(pte, inferences);
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  EXPECT_EQ(run.outputs, expected);  // 1, 102, 203, 305, 408, ...
}

// A read before the assignment sees the value of the inference before (or, on the very first
// one, TFLite Micro's reset value: the zero point, 3); a read after it sees the new value. The
// TFLite interpreter refuses to read a variable nothing assigned yet, so this model's first
// inference has only TFLite Micro's rule (micro_resource_variable.cc) to go by.
TEST(ResourceVariableTest, ReadBeforeAndAfterAnAssignmentInOneInference) {
  const Bytes pte = Compiled(testing::ReadAssignReadModelBuilder().Finish());
  ASSERT_FALSE(pte.empty());
  std::vector<Inference> inferences;
  for (int n = 0; n < 4; ++n) inferences.push_back({BytesOf(CounterInput<int8_t>(n))});
  const runtime::testing::PteRun run = runtime::testing::RunPteInferences(pte, inferences);
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  ASSERT_EQ(run.outputs.size(), 2 * inferences.size());
  for (size_t n = 0; n < inferences.size(); ++n) {
    const Bytes before = n == 0 ? Bytes(4, 3) : inferences[n - 1][0];
    EXPECT_EQ(run.outputs[2 * n], before) << "inference " << n;
    EXPECT_EQ(run.outputs[2 * n + 1], inferences[n][0]) << "inference " << n;
  }
}

// TFLite Micro's assignment copies bytes whatever the type: the same model in int16, int32 and
// bool (no quantization, so the very first read sees zeros).
TEST(ResourceVariableTest, ReadAssignReadInOtherTypes) {
  const std::pair<TflType, size_t> types[] = {
      {TflType::kInt16, 8}, {TflType::kInt32, 16}, {TflType::kBool, 4}};
  for (const auto& [type, bytes] : types) {
    const Bytes pte = Compiled(testing::ReadAssignReadModelBuilder(type).Finish());
    ASSERT_FALSE(pte.empty());
    std::vector<Inference> inferences;
    for (int n = 0; n < 3; ++n) {
      Bytes x(bytes);
      for (size_t k = 0; k < bytes; ++k) {
        x[k] = type == TflType::kBool ? static_cast<uint8_t>((n + k) % 2)
                                      : static_cast<uint8_t>(n * 41 + k * 13 + 1);
      }
      inferences.push_back({x});
    }
    const runtime::testing::PteRun run = runtime::testing::RunPteInferences(pte, inferences);
    ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
    ASSERT_EQ(run.outputs.size(), 2 * inferences.size());
    for (size_t n = 0; n < inferences.size(); ++n) {
      const Bytes before = n == 0 ? Bytes(bytes, 0) : inferences[n - 1][0];
      EXPECT_EQ(run.outputs[2 * n], before) << static_cast<int>(type) << " inference " << n;
      EXPECT_EQ(run.outputs[2 * n + 1], inferences[n][0]) << static_cast<int>(type);
    }
  }
}

// The accumulator models (handles through WHILE and IF) by hand: "acc" starts at its zero
// point (-2) and each addition of x saturates in quantized units, as the counter's does.
constexpr int64_t kAccZeroPoint = -2;

void AddInto(std::vector<int64_t>& acc, const std::vector<int8_t>& x) {
  for (size_t k = 0; k < acc.size(); ++k) {
    acc[k] = std::clamp<int64_t>(acc[k] + x[k] - kAccZeroPoint, -128, 127);
  }
}

Bytes Int8Bytes(const std::vector<int64_t>& values) {
  std::vector<int8_t> out(values.begin(), values.end());
  return BytesOf(out);
}

// Inference n adds x three times (the loop turns for i = 0, 1, 2) and outputs the variable
// through the handle the WHILE passed back.
std::vector<Bytes> WhileAccumulatorByHand(const std::vector<Inference>& inferences) {
  std::vector<int64_t> acc(4, kAccZeroPoint);
  std::vector<Bytes> outputs;
  for (const Inference& in : inferences) {
    const std::vector<int8_t> x(in[0].begin(), in[0].end());
    for (int turn = 0; turn < 3; ++turn) AddInto(acc, x);
    outputs.push_back(Int8Bytes(acc));
  }
  return outputs;
}

// Inputs (cond, x) -> outputs (z, y): the then-branch adds x and returns the sum, the else-branch
// returns the variable as it is; y reads it after the IF.
std::vector<Bytes> IfAssignByHand(const std::vector<Inference>& inferences) {
  std::vector<int64_t> acc(4, kAccZeroPoint);
  std::vector<Bytes> outputs;
  for (const Inference& in : inferences) {
    if (in[0][0] != 0) AddInto(acc, std::vector<int8_t>(in[1].begin(), in[1].end()));
    outputs.push_back(Int8Bytes(acc));
    outputs.push_back(Int8Bytes(acc));
  }
  return outputs;
}

std::vector<Inference> IfAssignInferences(int count) {
  std::vector<Inference> inferences;
  for (int n = 0; n < count; ++n) {
    const Bytes cond = {static_cast<uint8_t>(n % 3 != 1)};  // then, else, then, then, else, ...
    inferences.push_back({cond, BytesOf(CounterInput<int8_t>(n))});
  }
  return inferences;
}

// Large enough inputs that the variable saturates within a few inferences.
std::vector<Inference> WhileAccumulatorInferences(int count) {
  std::vector<Inference> inferences;
  for (int n = 0; n < count; ++n) {
    std::vector<int8_t> x;
    for (int k = 0; k < 4; ++k) x.push_back(static_cast<int8_t>((n * 5 + k * 9) % 23 - 8));
    inferences.push_back({BytesOf(x)});
  }
  return inferences;
}

// One load of `model` over `inferences` gives `expected`.
void ExpectOneLoadGives(const Bytes& model, const std::vector<Inference>& inferences,
                        const std::vector<Bytes>& expected) {
  const Bytes pte = Compiled(model);
  ASSERT_FALSE(pte.empty());
  const runtime::testing::PteRun run = runtime::testing::RunPteInferences(pte, inferences);
  ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
  EXPECT_EQ(run.outputs, expected);
}

TEST(ResourceVariableTest, WhileBodyAssignsTheVariableItsHandleNames) {
  const std::vector<Inference> inferences = WhileAccumulatorInferences(6);
  ExpectOneLoadGives(testing::WhileAccumulatorModelBuilder().Finish(), inferences,
                     WhileAccumulatorByHand(inferences));
}

TEST(ResourceVariableTest, IfBranchAssignsTheVariableItsHandleNames) {
  const std::vector<Inference> inferences = IfAssignInferences(6);
  ExpectOneLoadGives(testing::IfAssignModelBuilder().Finish(), inferences,
                     IfAssignByHand(inferences));
}

// SharedBranchesModelBuilder: inputs (cond_a, cond_b, x) -> outputs (z_a, z_b, y_a). The
// then-branch adds x into the variable its IF's handle names (three times through the nested
// loop), the else-branch leaves it; "a" and "b" start at the zero point.
std::vector<Bytes> SharedBranchesByHand(const std::vector<Inference>& inferences,
                                        bool nested_loop) {
  std::vector<int64_t> a(4, kAccZeroPoint), b(4, kAccZeroPoint);
  std::vector<Bytes> outputs;
  const int additions = nested_loop ? 3 : 1;
  for (const Inference& in : inferences) {
    const std::vector<int8_t> x(in[2].begin(), in[2].end());
    for (int k = 0; in[0][0] != 0 && k < additions; ++k) AddInto(a, x);
    for (int k = 0; in[1][0] != 0 && k < additions; ++k) AddInto(b, x);
    outputs.push_back(Int8Bytes(a));
    outputs.push_back(Int8Bytes(b));
    outputs.push_back(Int8Bytes(a));
  }
  return outputs;
}

// Every combination of the two conditions, x different in each inference.
std::vector<Inference> SharedBranchesInferences(int count) {
  std::vector<Inference> inferences;
  for (int n = 0; n < count; ++n) {
    const Bytes cond_a = {static_cast<uint8_t>(n % 3 != 1)};
    const Bytes cond_b = {static_cast<uint8_t>(n % 2 == 0)};
    inferences.push_back({cond_a, cond_b, BytesOf(CounterInput<int8_t>(n))});
  }
  return inferences;
}

// Two IFs share their branch subgraphs, each passing another variable's handle: boardlab copies
// the branches (and, nested, the loop in the then-branch) per variable, so each IF's additions
// reach its own variable and leave the other's.
TEST(ResourceVariableTest, BranchesSharedByTwoVariablesAssignEachItsOwn) {
  for (const bool nested_loop : {false, true}) {
    SCOPED_TRACE(nested_loop ? "then-branch through a loop" : "then-branch adds once");
    const std::vector<Inference> inferences = SharedBranchesInferences(7);
    ExpectOneLoadGives(testing::SharedBranchesModelBuilder(nested_loop).Finish(), inferences,
                       SharedBranchesByHand(inferences, nested_loop));
  }
}

// A subgraph nothing calls, reading through its input handle, changes nothing: TFLite Micro
// never runs it.
TEST(ResourceVariableTest, AnUncalledSubgraphReadingAHandleIsLeftOut) {
  const std::vector<Inference> inferences = IfAssignInferences(5);
  ExpectOneLoadGives(testing::IfAssignModelBuilder(true).Finish(), inferences,
                     IfAssignByHand(inferences));
}

// x = -128 ... 127 in steps (int8, one quantum each): the loop raises x to 5, or leaves it.
std::vector<Inference> RaiseToFiveInferences() {
  std::vector<Inference> inferences;
  for (const int x : {-128, 7, 4, -3, 5, 0, 127}) {
    inferences.push_back({BytesOf(std::vector<int8_t>{static_cast<int8_t>(x)})});
  }
  return inferences;
}

std::vector<Bytes> RaiseToFiveByHand(const std::vector<Inference>& inferences) {
  std::vector<Bytes> outputs;
  for (const Inference& in : inferences) {
    outputs.push_back({static_cast<uint8_t>(std::max<int8_t>(static_cast<int8_t>(in[0][0]), 5))});
  }
  return outputs;
}

// The loop's only state is the handle: the WHILE keeps no operands once it is bound, and its
// cond and body still read and assign the variable main assigned.
TEST(ResourceVariableTest, AWhileWhoseOnlyStateIsTheHandle) {
  const std::vector<Inference> inferences = RaiseToFiveInferences();
  ExpectOneLoadGives(testing::RaiseToFiveModelBuilder().Finish(), inferences,
                     RaiseToFiveByHand(inferences));
}

// The run-time handle models (resource_variable_models.h) by hand: "v" starts at the zero point,
// "w" at 10; outputs (the sum or the variable read through the handle, y_v, y_w).
constexpr int64_t kWStart = 10;

// BranchChosenVariableModelBuilder: inputs (cond, x); x goes into "v" when cond, else "w".
std::vector<Bytes> BranchChosenByHand(const std::vector<Inference>& inferences) {
  std::vector<int64_t> v(4, kAccZeroPoint), w(4, kWStart);
  std::vector<Bytes> outputs;
  for (const Inference& in : inferences) {
    std::vector<int64_t>& chosen = in[0][0] != 0 ? v : w;
    AddInto(chosen, std::vector<int8_t>(in[1].begin(), in[1].end()));
    outputs.push_back(Int8Bytes(chosen));
    outputs.push_back(Int8Bytes(v));
    outputs.push_back(Int8Bytes(w));
  }
  return outputs;
}

// LoopSwitchedVariableModelBuilder: the first turn adds x into "v", the two later ones into "w",
// which y reads through the loop's handle.
std::vector<Bytes> LoopSwitchedByHand(const std::vector<Inference>& inferences) {
  std::vector<int64_t> v(4, kAccZeroPoint), w(4, kWStart);
  std::vector<Bytes> outputs;
  for (const Inference& in : inferences) {
    const std::vector<int8_t> x(in[0].begin(), in[0].end());
    AddInto(v, x);
    AddInto(w, x);
    AddInto(w, x);
    outputs.push_back(Int8Bytes(w));
    outputs.push_back(Int8Bytes(v));
    outputs.push_back(Int8Bytes(w));
  }
  return outputs;
}

// TFLite Micro follows the handle's id at run time: the IF's branch decides which variable the
// main graph's read and assignment reach.
TEST(ResourceVariableTest, IfBranchesChooseTheVariableAtRunTime) {
  const std::vector<Inference> inferences = IfAssignInferences(7);
  ExpectOneLoadGives(testing::BranchChosenVariableModelBuilder().Finish(), inferences,
                     BranchChosenByHand(inferences));
}

TEST(ResourceVariableTest, ALoopBodyReplacingItsHandleSwitchesVariablesBetweenTurns) {
  const std::vector<Inference> inferences = WhileAccumulatorInferences(6);
  ExpectOneLoadGives(testing::LoopSwitchedVariableModelBuilder().Finish(), inferences,
                     LoopSwitchedByHand(inferences));
}

Bytes Int32Bytes(int32_t v) { return BytesOf(std::vector<int32_t>{v}); }

// CallersHandleModelBuilder: inputs (resource id, x); id 0 is "w", 1 is "v".
std::vector<Inference> CallersHandleInferences(const std::vector<int32_t>& ids) {
  std::vector<Inference> inferences;
  for (size_t n = 0; n < ids.size(); ++n) {
    inferences.push_back({Int32Bytes(ids[n]), BytesOf(CounterInput<int8_t>(static_cast<int>(n)))});
  }
  return inferences;
}

std::vector<Bytes> CallersHandleByHand(const std::vector<Inference>& inferences) {
  std::vector<int64_t> v(4, kAccZeroPoint), w(4, kWStart);
  std::vector<Bytes> outputs;
  for (const Inference& in : inferences) {
    std::vector<int64_t>& named = in[0][0] == 1 ? v : w;
    AddInto(named, std::vector<int8_t>(in[1].begin(), in[1].end()));
    outputs.push_back(Int8Bytes(named));
    outputs.push_back(Int8Bytes(v));
    outputs.push_back(Int8Bytes(w));
  }
  return outputs;
}

// The caller's handle holds the resource id it puts there, as TFLite Micro's does.
TEST(ResourceVariableTest, TheCallersHandleReachesTheVariableOfItsId) {
  const std::vector<Inference> inferences = CallersHandleInferences({0, 1, 1, 0, 1});
  ExpectOneLoadGives(testing::CallersHandleModelBuilder().Finish(), inferences,
                     CallersHandleByHand(inferences));
}

// Id 2 is "f", a float32 [1] variable the int8 [1,4] read cannot take (TFLite Micro would copy
// its 4 bytes unchecked); id 7 names no variable. Both fail the run, clearly, after the
// inferences before them ran as they should.
TEST(ResourceVariableTest, ACallersIdOfNoFittingVariableFailsTheRun) {
  const Bytes pte = Compiled(testing::CallersHandleModelBuilder().Finish());
  ASSERT_FALSE(pte.empty());
  for (const int32_t id : {2, 7, -1}) {
    const runtime::testing::PteRun run =
        runtime::testing::RunPteInferences(pte, CallersHandleInferences({1, id}));
    EXPECT_EQ(run.error, runtime::Error::kInvalidArgument) << id;
    EXPECT_NE(run.message.find(absl::StrCat("read_variable: the resource handle holds id ", id,
                                            ", which names none of the 2 variables")),
              std::string::npos)
        << run.message;
  }
}

// Handles as graph outputs give the caller the resource ids: IF's output the branch's, main's
// VAR_HANDLE "v" its own (1).
TEST(ResourceVariableTest, AHandleOutputIsItsResourceId) {
  const std::vector<Inference> inferences = IfAssignInferences(4);
  const std::vector<Bytes> by_hand = BranchChosenByHand(inferences);
  std::vector<Bytes> expected;
  for (size_t n = 0; n < inferences.size(); ++n) {
    expected.insert(expected.end(), by_hand.begin() + static_cast<ptrdiff_t>(3 * n),
                    by_hand.begin() + static_cast<ptrdiff_t>(3 * n + 3));
    expected.push_back(Int32Bytes(inferences[n][0][0] != 0 ? 1 : 0));
    expected.push_back(Int32Bytes(1));
  }
  ExpectOneLoadGives(testing::BranchChosenVariableModelBuilder(true).Finish(), inferences,
                     expected);
}

// The dispatching READ_VARIABLE and ASSIGN_VARIABLE kernels (control_flow.cc) called directly:
// the handle's id picks the variable among those listed; an id none of them has is a clear error
// (TFLite Micro fails a read of an id it has no variable for too).
struct DispatchCase {
  int32_t handle = 0;
  std::vector<int32_t> ids = {4, 1};  // a is resource id 4, b id 1
  std::vector<int8_t> a = {1, 2}, b = {3, 4}, value = {9, 9};
};

void AddIdsAndVariables(runtime::testing::KernelArgs& args, DispatchCase& c) {
  args.Tensor(runtime::ScalarType::kInt, {2}, c.ids.data());
  args.Tensor(runtime::ScalarType::kChar, {2}, c.a.data());
  args.Tensor(runtime::ScalarType::kChar, {2}, c.b.data());
}

runtime::Error RunRead(DispatchCase& c) {
  runtime::testing::KernelArgs args;
  args.Tensor(runtime::ScalarType::kInt, {}, &c.handle);
  AddIdsAndVariables(args, c);
  args.Tensor(runtime::ScalarType::kChar, {2}, c.value.data());
  return runtime::testing::RunKernel("boardlab::read_variable.out", args);
}

runtime::Error RunAssign(DispatchCase& c) {
  runtime::testing::KernelArgs args;
  args.Tensor(runtime::ScalarType::kInt, {}, &c.handle);
  args.Tensor(runtime::ScalarType::kChar, {2}, c.value.data());
  AddIdsAndVariables(args, c);
  return runtime::testing::RunKernel("boardlab::assign_variable.out", args);
}

TEST(ResourceVariableKernelTest, TheHandlesIdPicksTheVariable) {
  DispatchCase read_b{.handle = 1};
  ASSERT_EQ(RunRead(read_b), runtime::Error::kOk) << runtime::LastErrorMessage();
  EXPECT_EQ(read_b.value, (std::vector<int8_t>{3, 4}));
  DispatchCase assign_a{.handle = 4};
  ASSERT_EQ(RunAssign(assign_a), runtime::Error::kOk) << runtime::LastErrorMessage();
  EXPECT_EQ(assign_a.a, (std::vector<int8_t>{9, 9}));
  EXPECT_EQ(assign_a.b, (std::vector<int8_t>{3, 4}));
}

TEST(ResourceVariableKernelTest, AnIdNoListedVariableHasIsAClearError) {
  for (const bool read : {true, false}) {
    DispatchCase c{.handle = 2};
    EXPECT_EQ(read ? RunRead(c) : RunAssign(c), runtime::Error::kInvalidArgument);
    EXPECT_NE(std::string(runtime::LastErrorMessage())
                  .find("the resource handle holds id 2, which names none of the 2 variables"),
              std::string::npos)
        << runtime::LastErrorMessage();
    EXPECT_EQ(c.a, (std::vector<int8_t>{1, 2}));
    EXPECT_EQ(c.b, (std::vector<int8_t>{3, 4}));
    EXPECT_EQ(c.value, (std::vector<int8_t>{9, 9}));
  }
}

class ResourceVariableOracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = testing::TfliteOracleUnavailable()) GTEST_SKIP() << *why;
  }

  // The interpreter's outputs over `inferences` of one interpreter, against boardlab's of one
  // load.
  void CompareWithInterpreter(const Bytes& model, const std::string& type,
                              const std::vector<int32_t>& shape,
                              const std::vector<Inference>& inferences) {
    CompareWithInterpreter(model, {type}, {shape}, {type}, inferences);
  }

  void CompareWithInterpreter(const Bytes& model, const std::vector<std::string>& input_types,
                              const std::vector<std::vector<int32_t>>& input_shapes,
                              const std::vector<std::string>& output_types,
                              const std::vector<Inference>& inferences,
                              std::vector<Bytes>* interpreter_outputs = nullptr) {
    std::vector<Bytes> scratch;
    std::vector<Bytes>& expected = interpreter_outputs ? *interpreter_outputs : scratch;
    std::string error;
    ASSERT_TRUE(testing::RunTfliteOracleInferences(model, input_types, input_shapes, output_types,
                                                   inferences, &expected, &error))
        << error;
    const runtime::testing::PteRun run =
        runtime::testing::RunPteInferences(Compiled(model), inferences);
    ASSERT_EQ(run.error, runtime::Error::kOk) << run.message;
    ASSERT_EQ(run.outputs.size(), expected.size());
    // Inference 0 is left out: through tests/oracle (tfjs-tflite), the interpreter's first
    // outputs of these models read all zeros, while every later inference, which starts from
    // the state the first one left, equals boardlab's. Not explained yet (IF and WHILE models
    // compare inference 0 fine through the same path); the hand-derived tests above check
    // inference 0.
    const auto first_later = static_cast<ptrdiff_t>(output_types.size());
    const std::vector<Bytes> later(run.outputs.begin() + first_later, run.outputs.end());
    EXPECT_EQ(later, std::vector<Bytes>(expected.begin() + first_later, expected.end()));
  }
};

TEST_F(ResourceVariableOracleTest, CounterInt8EqualsTheInterpreter) {
  CompareWithInterpreter(testing::CounterModelBuilder(TflType::kInt8).Finish(), "int8", {1, 4},
                         CounterInferences<int8_t>(6));
}

TEST_F(ResourceVariableOracleTest, CounterInt16EqualsTheInterpreter) {
  CompareWithInterpreter(testing::CounterModelBuilder(TflType::kInt16).Finish(), "int16", {1, 4},
                         CounterInferences<int16_t>(6));
}

TEST_F(ResourceVariableOracleTest, CounterFloat32EqualsTheInterpreter) {
  std::vector<Inference> inferences;
  for (int n = 0; n < 6; ++n) {
    std::vector<float> x;
    for (int k = 0; k < 4; ++k) x.push_back(0.125f * static_cast<float>(n * 3 - k));
    inferences.push_back({BytesOf(x)});
  }
  CompareWithInterpreter(testing::CounterModelBuilder(TflType::kFloat32).Finish(), "float32",
                         {1, 4}, inferences);
}

TEST_F(ResourceVariableOracleTest, FibonacciEqualsTheInterpreter) {
  std::vector<Inference> inferences;
  for (int n = 0; n < 8; ++n) {
    inferences.push_back({BytesOf(std::vector<float>{7.0f * static_cast<float>(n)})});
  }
  CompareWithInterpreter(testing::FibonacciModelBuilder().Finish(), "float32", {1}, inferences);
}

// Handles through WHILE and IF (TensorFlow's tf.Variable updated in tf.while_loop / tf.cond):
// the interpreter copies the handle into the subgraphs and the assignments there reach the one
// variable, as boardlab's binding when compiling does.
// The interpreter's later outputs also equal the hand-derived ones, so neither side can agree
// with the other on a wrong (or empty) result.
void ExpectLaterOutputsEqual(const std::vector<Bytes>& interpreter,
                             const std::vector<Bytes>& by_hand, size_t outputs_per_inference) {
  ASSERT_EQ(interpreter.size(), by_hand.size());
  const auto first = static_cast<ptrdiff_t>(outputs_per_inference);
  EXPECT_EQ(std::vector<Bytes>(interpreter.begin() + first, interpreter.end()),
            std::vector<Bytes>(by_hand.begin() + first, by_hand.end()));
}

TEST_F(ResourceVariableOracleTest, WhileAccumulatorEqualsTheInterpreter) {
  const std::vector<Inference> inferences = WhileAccumulatorInferences(6);
  std::vector<Bytes> interpreter;
  CompareWithInterpreter(testing::WhileAccumulatorModelBuilder().Finish(), {"int8"}, {{1, 4}},
                         {"int8"}, inferences, &interpreter);
  ExpectLaterOutputsEqual(interpreter, WhileAccumulatorByHand(inferences), 1);
}

TEST_F(ResourceVariableOracleTest, IfAssignEqualsTheInterpreter) {
  const std::vector<Inference> inferences = IfAssignInferences(6);
  std::vector<Bytes> interpreter;
  CompareWithInterpreter(testing::IfAssignModelBuilder().Finish(), {"bool", "int8"}, {{1}, {1, 4}},
                         {"int8", "int8"}, inferences, &interpreter);
  ExpectLaterOutputsEqual(interpreter, IfAssignByHand(inferences), 2);
}

// The interpreter follows each IF's handle into the shared branches at run time; boardlab's
// copies per variable give the same bytes. Only the model without the nested loop: through
// tests/oracle the interpreter fails to prepare the nested one ("read_variable.cc:42
// NumElements(input_resource_id_tensor) != 1" for the READ_VARIABLE after the WHILE in the
// then-branch), not investigated yet; the hand-derived test above checks that one.
TEST_F(ResourceVariableOracleTest, SharedBranchesEqualTheInterpreter) {
  const std::vector<Inference> inferences = SharedBranchesInferences(7);
  std::vector<Bytes> interpreter;
  CompareWithInterpreter(testing::SharedBranchesModelBuilder().Finish(), {"bool", "bool", "int8"},
                         {{1}, {1}, {1, 4}}, {"int8", "int8", "int8"}, inferences, &interpreter);
  ExpectLaterOutputsEqual(interpreter, SharedBranchesByHand(inferences, false), 3);
}

TEST_F(ResourceVariableOracleTest, RaiseToFiveEqualsTheInterpreter) {
  const std::vector<Inference> inferences = RaiseToFiveInferences();
  std::vector<Bytes> interpreter;
  CompareWithInterpreter(testing::RaiseToFiveModelBuilder().Finish(), {"int8"}, {{1}}, {"int8"},
                         inferences, &interpreter);
  ExpectLaterOutputsEqual(interpreter, RaiseToFiveByHand(inferences), 1);
}

TEST_F(ResourceVariableOracleTest, IfBranchesChoosingTheVariableEqualTheInterpreter) {
  const std::vector<Inference> inferences = IfAssignInferences(7);
  std::vector<Bytes> interpreter;
  CompareWithInterpreter(testing::BranchChosenVariableModelBuilder().Finish(), {"bool", "int8"},
                         {{1}, {1, 4}}, {"int8", "int8", "int8"}, inferences, &interpreter);
  ExpectLaterOutputsEqual(interpreter, BranchChosenByHand(inferences), 3);
}

TEST_F(ResourceVariableOracleTest, ALoopSwitchingVariablesEqualsTheInterpreter) {
  const std::vector<Inference> inferences = WhileAccumulatorInferences(6);
  std::vector<Bytes> interpreter;
  CompareWithInterpreter(testing::LoopSwitchedVariableModelBuilder().Finish(), {"int8"}, {{1, 4}},
                         {"int8", "int8", "int8"}, inferences, &interpreter);
  ExpectLaterOutputsEqual(interpreter, LoopSwitchedByHand(inferences), 3);
}

// No oracle test of CallersHandleModelBuilder: through tests/oracle (tfjs-tflite) the
// interpreter ignores the int32 the test feeds into the resource-typed input and reaches "w" (id
// 0) whatever the id; the hand-derived tests above check it against TFLite Micro's semantics.

}  // namespace
}  // namespace boardlab
