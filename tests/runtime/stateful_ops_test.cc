// The stateful ops of issue 13 (SVDF) over several inferences of one loaded program: their
// variable tensors live in their own planned buffer (not the reused activation arena), start
// from TFLite Micro's reset values when the program loads, and carry the state from one
// inference to the next. Each generated case (tests/support/op_cases.h) is compiled, loaded once
// and run on four different inputs in a row; every output must equal TFLite Micro's arithmetic
// (tflm_reference.h) and, where the TFLite interpreter runs the case, the interpreter's answers
// after the same inferences on one interpreter.

#include <random>
#include <string>
#include <vector>

#include "boardlab/schema/program_generated.h"
#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "tests/runtime/pte_runner.h"
#include "tests/runtime/tflm_reference.h"
#include "tests/support/op_cases.h"
#include "tests/support/tflite_oracle.h"

namespace boardlab {
namespace {

using testing::CaseModel;
using testing::OpCase;
using Bytes = std::vector<uint8_t>;
using Inference = std::vector<Bytes>;  // the bytes of every model input

constexpr int kInferences = 4;

// Inference 0 reads the case's own inputs, the later ones fresh random bytes of the same sizes.
std::vector<Inference> Inferences(const CaseModel& m, uint32_t seed) {
  std::vector<Inference> all = {m.inputs};
  std::mt19937 rng(seed);
  for (int i = 1; i < kInferences; ++i) {
    Inference next = m.inputs;
    for (Bytes& input : next) {
      for (uint8_t& v : input) v = static_cast<uint8_t>(rng());
    }
    all.push_back(next);
  }
  return all;
}

std::vector<Bytes> FirstInputs(const std::vector<Inference>& inferences) {
  std::vector<Bytes> firsts;
  for (const Inference& i : inferences) firsts.push_back(i[0]);
  return firsts;
}

runtime::testing::PteRun RunInferences(const CaseModel& m,
                                       const std::vector<Inference>& inferences) {
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(m.model, {});
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return {};
  runtime::testing::PteRun run = runtime::testing::RunPteInferences(compiled->pte, inferences);
  EXPECT_EQ(run.error, runtime::Error::kOk) << run.message;
  return run;
}

TEST(StatefulOps, SvdfFollowsTfliteMicroOverSeveralInferences) {
  int checked = 0;
  for (const OpCase& c : testing::SvdfCases()) {
    SCOPED_TRACE(c.name);
    const CaseModel m = testing::SingleCaseModel(c);
    const std::vector<Inference> inferences = Inferences(m, 17 + checked);
    const runtime::testing::PteRun run = RunInferences(m, inferences);
    const std::vector<Bytes> expected = tflm_reference::SvdfInferences(m, FirstInputs(inferences));
    ASSERT_EQ(run.outputs.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(run.outputs[i], expected[i]) << "inference " << i;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 7);
}

// The same input twice in a row gives different outputs (the state moved on); loading the
// program again starts the state over, so its first output is the first load's.
TEST(StatefulOps, StateCarriesOverAndStartsOverWhenTheProgramLoads) {
  const CaseModel m = testing::SingleCaseModel(testing::SvdfCases().front());
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(m.model, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const runtime::testing::PteRun first =
      runtime::testing::RunPteInferences(compiled->pte, {m.inputs, m.inputs, m.inputs});
  ASSERT_EQ(first.error, runtime::Error::kOk) << first.message;
  ASSERT_EQ(first.outputs.size(), 3u);
  EXPECT_NE(first.outputs[0], first.outputs[1]);
  EXPECT_NE(first.outputs[1], first.outputs[2]);
  const runtime::testing::PteRun again = runtime::testing::RunPte(compiled->pte, m.inputs);
  ASSERT_EQ(again.error, runtime::Error::kOk) << again.message;
  EXPECT_EQ(again.outputs[0], first.outputs[0]);
}

// The variable tensor is planned into buffer 3 (memory_id 3), alone, with its reset value in
// the mutable-data segment; the arena does not hold it.
TEST(StatefulOps, StateHasItsOwnPlannedBuffer) {
  const OpCase& c = testing::SvdfCases().front();  // state [1, 5 * 4] int16
  const CaseModel m = testing::SingleCaseModel(c);
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(m.model, {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->compilation.memory.state_bytes, 48);  // 40 bytes, 16-byte aligned
  namespace et = ::executorch_flatbuffer;
  const et::Program* program = et::GetProgram(compiled->pte.data());
  const et::ExecutionPlan* plan = program->execution_plan()->Get(0);
  ASSERT_EQ(plan->non_const_buffer_sizes()->size(), 4u);
  EXPECT_EQ(plan->non_const_buffer_sizes()->Get(2), 0);  // no weight scratch
  EXPECT_EQ(plan->non_const_buffer_sizes()->Get(3), 48);
  int variables = 0;
  for (const et::EValue* v : *plan->values()) {
    const et::Tensor* t = v->val_as_Tensor();
    if (t == nullptr || t->allocation_info() == nullptr || t->allocation_info()->memory_id() != 3) {
      continue;
    }
    ++variables;
    EXPECT_GT(t->data_buffer_idx(), 0u);
    ASSERT_NE(t->extra_tensor_info(), nullptr);
    EXPECT_EQ(t->extra_tensor_info()->mutable_data_segments_idx(), 0u);
  }
  EXPECT_EQ(variables, 1);
  ASSERT_NE(program->mutable_data_segments(), nullptr);
  EXPECT_EQ(program->mutable_data_segments()->size(), 1u);
}

class StatefulOracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = testing::TfliteOracleUnavailable()) GTEST_SKIP() << *why;
  }
};

// The interpreter keeps its variable tensors between predict() calls, like TFLite Micro does
// between Invoke() calls.
TEST_F(StatefulOracleTest, SvdfEqualsTheInterpreterOverSeveralInferences) {
  std::vector<CaseModel> models;
  std::vector<std::vector<Inference>> inferences;
  std::vector<testing::TypedOracleCase> oracle;
  for (const OpCase& c : testing::SvdfCases()) {
    if (!c.no_oracle.empty()) continue;
    models.push_back(testing::SingleCaseModel(c));
    inferences.push_back(Inferences(models.back(), 29 + static_cast<uint32_t>(models.size())));
    testing::TypedOracleCase& o = oracle.emplace_back();
    o.model = models.back().model;
    o.inputs = inferences.back()[0];
    o.input_types = {"int8"};
    o.input_shapes = {models.back().builder.tensor(models.back().input_tensors[0]).shape};
    o.output_types = {"int8"};
    o.later_inputs.assign(inferences.back().begin() + 1, inferences.back().end());
  }
  ASSERT_EQ(oracle.size(), 5u);
  std::vector<std::vector<Bytes>> expected;
  std::string error;
  ASSERT_TRUE(testing::RunTfliteOracleTyped(oracle, &expected, &error)) << error;
  for (size_t i = 0; i < models.size(); ++i) {
    const runtime::testing::PteRun run = RunInferences(models[i], inferences[i]);
    EXPECT_EQ(run.outputs, expected[i]) << "case " << i;
  }
}

}  // namespace
}  // namespace boardlab
