// The ops of issue 13 (tests/support/op_cases.h: layout, data movement, comparison, selection,
// arithmetic, math, the 16x8 cases, the stateful SVDF and LSTM and SSD post-processing) on the
// Cortex-M33 firmware under QEMU: every generated case gives the same output bytes as on the host
// (boardlab-run), whose outputs tests/runtime/oracle_ops_test.cc checks against the TFLite
// interpreter. Many cases share one model so that one QEMU session runs many ops; the firmware
// takes at most 8 input files, which
// bounds a model's cases.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "tests/firmware/firmware_available.h"
#include "tests/support/control_flow_models.h"
#include "tests/support/op_cases.h"
#include "tests/support/process.h"
#include "tests/support/resource_variable_models.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

namespace boardlab::firmware {
namespace {

namespace fs = std::filesystem;

// Cases whose inputs stay run-time inputs in the second model (the first bakes every case's
// inputs in as constants): index, bool and scalar inputs, at most the firmware's 8 input files.
const char* const kRunTimeInputCases[] = {"GATHER axis 0 run-time indices",
                                          "GATHER_ND nested run-time indices",
                                          "SELECT_V2 broadcast", "FILL int8"};

std::vector<testing::OpCase> RunTimeInputCases() {
  std::vector<testing::OpCase> cases;
  for (const testing::OpCase& c : testing::AllOpCases()) {
    for (const char* name : kRunTimeInputCases) {
      if (c.name == name) cases.push_back(c);
    }
  }
  return cases;
}

class FirmwareOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why =
        firmware::WhyFirmwareCannotRun(BOARDLAB_FIRMWARE_ELF, firmware::NeedsRun::kYes);
    if (!why.empty()) GTEST_SKIP() << why;
    run_ = testing::RunBinary();
    dir_ = fs::path(::testing::TempDir()) / ("fw_ops_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  // Runs `m` on the host and on the firmware and compares every output; returns the count.
  // `iterations` > 1 runs that many inferences of one loaded program on both boards, so that
  // stateful ops compare after their state has moved on.
  size_t CompareWithHost(const testing::CaseModel& m, const std::string& name,
                         const compiler::CompileOptions& options = {}, int iterations = 1) {
    absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(m.model, options);
    EXPECT_TRUE(compiled.ok()) << compiled.status();
    if (!compiled.ok()) return 0;
    const std::string base = (dir_ / name).string();
    const std::string pte = base + ".pte";
    EXPECT_TRUE(testing::WriteFile(pte, compiled->pte));
    std::string inputs;
    for (size_t i = 0; i < m.inputs.size(); ++i) {
      const std::string file = base + ".in" + std::to_string(i);
      EXPECT_TRUE(testing::WriteFile(file, m.inputs[i]));
      inputs += " --input " + file;
    }
    if (iterations > 1) inputs += " --iterations " + std::to_string(iterations);
    const std::string host_out = base + "_host", fw_out = base + "_fw";
    const testing::CommandResult host =
        testing::RunCommand(run_ + " " + pte + inputs + " --outputs " + host_out);
    EXPECT_EQ(host.exit_code, 0) << host.output;
    const testing::CommandResult fw = testing::RunCommand(
        std::string(BOARDLAB_FIRMWARE_RUNNER) + " --elf " + BOARDLAB_FIRMWARE_ELF +
        " --icount off --timeout 120 -- " + pte + inputs + " --outputs " + fw_out);
    EXPECT_EQ(fw.exit_code, 0) << fw.output;
    size_t compared = 0;
    for (size_t k = 0; k < m.output_tensors.size(); ++k) {
      const std::string file = "/output" + std::to_string(k) + ".bin";
      const std::vector<uint8_t> expected = testing::ReadFile(host_out + file);
      EXPECT_FALSE(expected.empty()) << file;
      EXPECT_EQ(testing::ReadFile(fw_out + file), expected) << file << "\n" << fw.output;
      compared += expected.empty() ? 0 : 1;
    }
    return compared;
  }

  std::string run_;
  fs::path dir_;
};

// One QEMU run per batch of cases (inputs baked in; one model of every case would pass the
// firmware's output limit), one with run-time index, bool and scalar inputs. The stateful ops
// run three inferences in a row, so that their state carries over on the board too.
TEST_F(FirmwareOpsTest, EveryCaseGivesTheHostsOutputs) {
  const std::pair<const std::vector<testing::OpCase>*, int> batches[] = {
      {&testing::LayoutAndSelectionCases(), 1},
      {&testing::MathCases(), 1},
      {&testing::NormalizationCases(), 1},
      {&testing::TransposeConvCases(), 1},
      {&testing::SvdfCases(), 3},
      {&testing::DetectionPostprocessCases(), 1},
      {&testing::LstmCases(), 3},
      {&testing::SignalCases(), 3},
      {&testing::SignalFilterBankCases(), 3},  // spectral subtraction's estimate carries
      {&testing::SignalFftCases(), 1},
      {&testing::StreamCases(), 3},
      {&testing::CircularBufferCases(), 4},
      {&testing::Int16Cases(), 1}};
  size_t constant = 0, cases = 0, expected = 0;
  for (size_t i = 0; i < std::size(batches); ++i) {
    const auto& [batch, iterations] = batches[i];
    const testing::CaseModel m = testing::ConstantInputsModel(*batch);
    expected += m.output_tensors.size();
    constant += CompareWithHost(m, "batch" + std::to_string(i), {}, iterations);
    cases += batch->size();
  }
  EXPECT_EQ(cases, testing::AllOpCases().size());
  EXPECT_EQ(constant, expected);
  const size_t run_time =
      CompareWithHost(testing::CombinedCaseModel(RunTimeInputCases()), "run_time_inputs");
  EXPECT_EQ(run_time, 4u);
  std::printf(
      "[ firmware ] %zu outputs of %zu cases (inputs constant) and %zu of the run-time "
      "input cases equal the host's\n",
      constant, cases, run_time);
}

// TFLite Micro's CIRCULAR_BUFFER alone (it ends the inference between its runs, which would cut
// short the other cases of a combined model), every other inference without options, a RELU
// behind it. After 4 inferences (the last one ran) the firmware's buffer and RELU output equal the
// host's; after 3 (the last one ended early, boardlab-run's "no output yet") the buffer does. The
// RELU's bytes after an early end are no inference's output (the memory plan may share them with
// the input), so that run does not export them.
TEST_F(FirmwareOpsTest, CircularBufferCarriesAndEndsInferencesAsOnTheHost) {
  for (const int iterations : {4, 3}) {
    testing::CaseModel m;
    const testing::QuantParams q = testing::PerTensor(1.0f, 0);
    const int in = m.builder.AddTensor("input", {1, 1, 1, 3}, testing::TflType::kInt8, q);
    const int buffer = m.builder.AddTensor("buffer", {1, 4, 1, 3}, testing::TflType::kInt8, q);
    const int out = m.builder.AddTensor("relu", {1, 4, 1, 3}, testing::TflType::kInt8, q);
    m.builder.AddCustomOperator("CIRCULAR_BUFFER", {in}, {buffer});
    m.builder.AddOperator(19 /*RELU*/, {buffer}, {out});
    m.builder.SetInputs({in});
    m.output_tensors = iterations == 4 ? std::vector<int>{buffer, out} : std::vector<int>{buffer};
    m.builder.SetOutputs({m.output_tensors.begin(), m.output_tensors.end()});
    m.model = m.builder.Finish();
    m.input_tensors = {in};
    m.inputs = {{0x05, 0xfe, 0x7f}};
    EXPECT_EQ(CompareWithHost(m, "circular_buffer_" + std::to_string(iterations), {}, iterations),
              m.output_tensors.size());
  }
}

// Grouped convolutions (split on the NPU, whole on the CPU) and a one-channel depthwise with a
// depth multiplier (a convolution on the NPU): the firmware gives the host's bytes either way.
TEST_F(FirmwareOpsTest, GroupedAndSingleChannelConvolutionsGiveTheHostsOutputs) {
  testing::CaseModel m;
  m.model = testing::ConvGroupsModel();
  m.inputs = {std::vector<uint8_t>(9 * 7 * 8), std::vector<uint8_t>(8 * 8 * 6),
              std::vector<uint8_t>(12 * 10)};
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    for (size_t k = 0; k < m.inputs[i].size(); ++k) {
      m.inputs[i][k] = static_cast<uint8_t>(k * 89 + i * 31 + 7);
    }
  }
  m.output_tensors = {0, 1, 2};  // three outputs
  compiler::CompileOptions cpu_only;
  cpu_only.cpu_only = true;
  EXPECT_EQ(CompareWithHost(m, "conv_groups_npu"), 3u);
  EXPECT_EQ(CompareWithHost(m, "conv_groups_cpu", cpu_only), 3u);
}

// IF and WHILE (issue 13): the nested model runs a WHILE inside IF's then-branch (the loop turns
// three times for n = 2), the IF model takes its else-branch and the IF whose then-branch has a
// RELU6 fused into its ADD takes that branch; each in one firmware session, against the host's
// bytes (tests/runtime/control_flow_test.cc checks the host against the TFLite interpreter).
TEST_F(FirmwareOpsTest, ControlFlowGivesTheHostsOutputs) {
  testing::CaseModel nested;
  nested.model = testing::NestedControlFlowBuilder().Finish();
  std::vector<uint8_t> x(8);
  for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<uint8_t>(k * 23 + 5);
  nested.inputs = {{1}, {2}, x};
  nested.output_tensors = {0, 1};
  EXPECT_EQ(CompareWithHost(nested, "nested_control_flow"), 2u);
  testing::CaseModel if_model;
  if_model.model = testing::IfModelBuilder().Finish();
  if_model.inputs = {{0}, x};
  if_model.output_tensors = {0};
  EXPECT_EQ(CompareWithHost(if_model, "if_else_branch"), 1u);
  testing::CaseModel fused_branch;
  fused_branch.model = testing::IfWithAFusableBranchBuilder().Finish();
  fused_branch.inputs = {{1}, x};
  fused_branch.output_tensors = {0};
  EXPECT_EQ(CompareWithHost(fused_branch, "if_fused_then_branch"), 1u);
}

// One SIGNAL_DELAY subgraph (delay 3, frames of 4) called by two IFs that both run, plain and
// through a handle copy: one delay line on the firmware too. IF a feeds x = (x0, x1, x2, x3) to
// the primed line and gets (0, 0, 0, x0); IF b then gets (x1, x2, x3, x0), where a line of its
// own would give (0, 0, 0, x0) again.
TEST_F(FirmwareOpsTest, CallSitesOfOneSubgraphShareItsDelayAsOnTheHost) {
  size_t compared = 0;
  for (const bool through_handles : {false, true}) {
    testing::CaseModel m;
    m.model = testing::SharedDelayModelBuilder(through_handles).Finish();
    m.inputs = {{1}, {1}, {0x10, 0x00, 0x20, 0xff, 0x30, 0x80, 0x40, 0x7f}};
    m.output_tensors = {0, 1};
    const std::string name = through_handles ? "shared_delay_handles" : "shared_delay";
    compared += CompareWithHost(m, name);
    EXPECT_EQ(testing::ReadFile((dir_ / (name + "_fw") / "output1.bin").string()),
              (std::vector<uint8_t>{0x20, 0xff, 0x30, 0x80, 0x40, 0x7f, 0x10, 0x00}))
        << name;
  }
  EXPECT_EQ(compared, 4u);
}

// Resource variables and CALL_ONCE (issue 13): four inferences of one load on both boards, so
// that the init subgraph runs once and the variables carry over; the int8 counter's ADD runs on
// the (emulated) NPU between its read and its assignment. The host's outputs are checked against
// hand-derived ones and the TFLite interpreter in tests/runtime/resource_variable_test.cc.
TEST_F(FirmwareOpsTest, ResourceVariablesGiveTheHostsOutputs) {
  const std::pair<testing::TfliteBuilder, size_t> models[] = {
      {testing::CounterModelBuilder(testing::TflType::kInt8), 4},
      {testing::CounterModelBuilder(testing::TflType::kInt16), 8},
      {testing::FibonacciModelBuilder(), 4},
      {testing::ReadAssignReadModelBuilder(), 4}};
  size_t compared = 0;
  for (size_t i = 0; i < std::size(models); ++i) {
    testing::CaseModel m;
    m.model = models[i].first.Finish();
    std::vector<uint8_t> x(models[i].second);
    for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<uint8_t>(k * 37 + i * 11 + 3);
    if (i == 2) x = {0x00, 0x00, 0xA0, 0x40};  // float32 5.0
    m.inputs = {x};
    m.output_tensors = i == 3 ? std::vector<int>{0, 1} : std::vector<int>{0};
    compared += CompareWithHost(m, "resource_variables" + std::to_string(i), {}, 4);
  }
  EXPECT_EQ(compared, 5u);
}

// Resource handles passed through WHILE and IF (the loop body and the then-branch assign the
// variable main's VAR_HANDLE names; two IFs sharing their branches with different variables):
// four inferences of one load, the variable accumulating
// across them, against the host's bytes (tests/runtime/resource_variable_test.cc checks the host
// by hand and against the TFLite interpreter).
TEST_F(FirmwareOpsTest, ResourceHandlesThroughControlFlowGiveTheHostsOutputs) {
  testing::CaseModel loop;
  loop.model = testing::WhileAccumulatorModelBuilder().Finish();
  loop.inputs = {{0x03, 0x0b, 0xf4, 0x21}};  // 3, 11, -12, 33: the last saturates in a few turns
  loop.output_tensors = {0};
  testing::CaseModel branch;
  branch.model = testing::IfAssignModelBuilder().Finish();
  branch.inputs = {{1}, {0x05, 0xfa, 0x40, 0x00}};  // then-branch: adds x each inference
  branch.output_tensors = {0, 1};
  testing::CaseModel handle_only;  // a loop whose only state is the handle: max(x, 5)
  handle_only.model = testing::RaiseToFiveModelBuilder().Finish();
  handle_only.inputs = {{0xfd}};  // -3: the loop turns eight times
  handle_only.output_tensors = {0};
  // Two IFs over one then-branch (a loop inside) and else-branch, with "a" and "b": boardlab's
  // copies per variable. "a" accumulates 3x per inference, "b" stays at its zero point.
  testing::CaseModel shared;
  shared.model = testing::SharedBranchesModelBuilder(true).Finish();
  shared.inputs = {{1}, {0}, {0x05, 0xfa, 0x40, 0x00}};
  shared.output_tensors = {0, 1, 2};
  EXPECT_EQ(CompareWithHost(loop, "handle_through_while", {}, 4) +
                CompareWithHost(branch, "handle_through_if", {}, 4) +
                CompareWithHost(handle_only, "handle_only_loop", {}, 2) +
                CompareWithHost(shared, "shared_branches", {}, 4),
            7u);
}

// Handles whose variable depends on the run (IF branches returning "v"'s or "w"'s handle; a loop
// body handing on "w"'s handle in place of "v"'s; the caller's handle, a graph input), and
// handles as graph outputs: the handle holds TFLite Micro's resource id and the reads and
// assignments dispatch on it, four inferences of one load against the host's
// bytes (tests/runtime/resource_variable_test.cc checks the host by hand).
TEST_F(FirmwareOpsTest, ResourceHandlesChosenAtRunTimeGiveTheHostsOutputs) {
  size_t compared = 0;
  for (const uint8_t cond : {1, 0}) {  // with the chosen handle's and "v"'s ids as outputs
    testing::CaseModel branch;
    branch.model = testing::BranchChosenVariableModelBuilder(true).Finish();
    branch.inputs = {{cond}, {0x05, 0xfa, 0x40, 0x00}};
    branch.output_tensors = {0, 1, 2, 3, 4};
    compared += CompareWithHost(branch, "branch_chosen_variable" + std::to_string(cond), {}, 4);
  }
  for (const uint8_t id : {0, 1}) {  // the caller's handle: "w", then "v"
    testing::CaseModel callers;
    callers.model = testing::CallersHandleModelBuilder().Finish();
    callers.inputs = {{id, 0, 0, 0}, {0x05, 0xfa, 0x40, 0x00}};
    callers.output_tensors = {0, 1, 2};
    compared += CompareWithHost(callers, "callers_handle" + std::to_string(id), {}, 4);
  }
  testing::CaseModel loop;
  loop.model = testing::LoopSwitchedVariableModelBuilder().Finish();
  loop.inputs = {{0x03, 0x0b, 0xf4, 0x21}};
  loop.output_tensors = {0, 1, 2};
  compared += CompareWithHost(loop, "loop_switched_variable", {}, 4);
  EXPECT_EQ(compared, 19u);
}

}  // namespace
}  // namespace boardlab::firmware
