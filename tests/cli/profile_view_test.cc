// The profile table from the JSON the runtime writes: the samples are made by the runtime's own
// printer (boardlab::run::ProfileJson, runtime/cli/profile_table.cc, compiled into this test), so
// a change of its shape breaks this test instead of the client.

#include "cli/profile_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "cli/tables.h"
#include "compiler/driver.h"
#include "nlohmann/json.hpp"
#include "runtime/cli/profile_table.h"
#include "tests/support/control_flow_models.h"
#include "tests/support/test_models.h"

namespace boardlab::cli {
namespace {

using ::testing::HasSubstr;

run::ProfileRow Row(size_t instruction, const std::string& op, bool npu, double cycles, double us) {
  run::ProfileRow row;
  row.instruction = instruction;
  row.op = op;
  row.npu = npu;
  row.ran_on = npu ? "npu" : "cpu";
  row.cycles = cycles;
  row.ticks = cycles;
  row.us = us;
  return row;
}

run::ProfileClock SimClock() {
  run::ProfileClock clock;
  clock.kind = "rt700-sim-cycles";
  clock.ticks_per_second = 500e6;
  clock.core_hz = 500e6;
  return clock;
}

// A simulated-clock profile: a CPU op, a delegate call with two NPU kernels, another CPU op.
run::Profile SampleProfile() {
  run::Profile profile;
  profile.clock = SimClock();
  profile.iterations = 10;
  profile.rows.push_back(Row(0, "QUANTIZE 'input'", false, 1000, 2.0));
  run::ProfileRow delegate = Row(1, "delegate 0 (neutron)", true, 6000, 12.0);
  delegate.kernels.push_back(Row(0, "NPU kernel 0 CONV_2D", true, 4000, 8.0));
  delegate.kernels.push_back(Row(0, "NPU kernel 1 DEPTHWISE_CONV_2D", true, 2000, 4.0));
  profile.rows.push_back(delegate);
  profile.rows.push_back(Row(2, "SOFTMAX 'out'", false, 3000, 6.0));
  profile.total_ticks = 10250;
  profile.total_us = 20.5;
  profile.total_cycles = 10250;
  return profile;
}

// The firmware's profile under QEMU: instruction counts, NPU kernels run on the Cortex-M33.
run::Profile QemuProfile() {
  run::Profile profile;
  profile.clock.kind = "qemu-icount";
  profile.clock.ticks_per_second = 20e6;
  profile.clock.icount_shift = 0;
  profile.iterations = 1;
  run::ProfileRow delegate = Row(0, "delegate 0 (BoardlabNeutronBackend)", true, -1, -1);
  delegate.ran_on = "npu-emulated-cortex-m33";
  delegate.ticks = 100;
  run::SetCounts(profile.clock, false, delegate);
  run::ProfileRow kernel = delegate;
  kernel.op = "NPU kernel id 10";
  kernel.ticks = 90;
  run::SetCounts(profile.clock, true, kernel);
  delegate.kernels.push_back(kernel);
  profile.rows.push_back(delegate);
  run::ProfileRow cpu = Row(1, "softmax", false, -1, -1);
  cpu.ticks = 100;
  run::SetCounts(profile.clock, false, cpu);
  profile.rows.push_back(cpu);
  profile.total_ticks = 200;
  profile.total_instructions = 200 * 50;
  return profile;
}

std::vector<std::string> Lines(const std::string& text) {
  std::istringstream lines(text);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(line);
  return rows;
}

TEST(ParseProfileJson, ReadsWhatTheRuntimeWrites) {
  absl::StatusOr<ProfileView> view = ParseProfileJson(run::ProfileJson(SampleProfile()).dump());
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->clock, "rt700-sim-cycles");
  EXPECT_EQ(view->clock_label,
            "simulated RT700 cycles (host simulator timing model, CPU at 500 MHz)");
  EXPECT_EQ(view->count_unit, "cycles");
  EXPECT_EQ(view->iterations, 10);
  EXPECT_EQ(view->total_us, 20.5);
  EXPECT_EQ(view->total_cycles, 10250u);
  ASSERT_EQ(view->ops.size(), 3u);
  EXPECT_EQ(view->ops[0].op, "QUANTIZE 'input'");
  EXPECT_FALSE(view->ops[0].npu);
  EXPECT_EQ(view->ops[0].ran_on, "cpu");
  EXPECT_EQ(view->ops[0].cycles, 1000u);
  EXPECT_FALSE(view->ops[0].instructions.has_value());
  EXPECT_DOUBLE_EQ(view->ops[0].percent, 10.0);  // 2 of the rows' 20 us
  EXPECT_TRUE(view->ops[1].npu);
  EXPECT_EQ(view->ops[1].ran_on, "npu");
  EXPECT_EQ(view->ops[1].instruction, 1);
  ASSERT_EQ(view->ops[1].npu_kernels.size(), 2u);
  EXPECT_EQ(view->ops[1].npu_kernels[1].op, "NPU kernel 1 DEPTHWISE_CONV_2D");
  EXPECT_DOUBLE_EQ(view->ops[1].npu_kernels[0].percent, 40.0);
  EXPECT_EQ(view->ops[2].instruction, 2);
}

TEST(ParseProfileJson, ReadsBoardlabRunsWholeDocument) {
  // boardlab-run --profile json prints the profile inside a document with the verdict.
  nlohmann::json document = {
      {"artifact", "m.pte"}, {"verdict", "pass"}, {"profile", run::ProfileJson(SampleProfile())}};
  absl::StatusOr<ProfileView> view = ParseProfileJson(document.dump(2));
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->ops.size(), 3u);
}

TEST(ParseProfileJson, WallClockHasNoCycles) {
  run::Profile profile = SampleProfile();
  profile.clock.kind = "host-wall";
  profile.total_cycles = -1;
  for (run::ProfileRow& row : profile.rows) row.cycles = -1;
  absl::StatusOr<ProfileView> view = ParseProfileJson(run::ProfileJson(profile).dump());
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_FALSE(view->total_cycles.has_value());
  EXPECT_FALSE(view->ops[0].cycles.has_value());
}

TEST(ParseProfileJson, RejectsWhatIsNotAProfile) {
  EXPECT_FALSE(ParseProfileJson("not json").ok());
  EXPECT_FALSE(ParseProfileJson("{}").ok());
  EXPECT_FALSE(ParseProfileJson(R"({"ops": 3})").ok());
  EXPECT_FALSE(ParseProfileJson(R"({"ops": [{"unit": "CPU"}]})").ok());
  EXPECT_FALSE(ParseProfileJson(R"({"ops": [7]})").ok());
}

// Profiles stored before clocks were recorded: "sim" was also written for QEMU ticks, so the
// view does not vouch for it.
TEST(ParseProfileJson, AnOldProfileSaysItsClockWasNotRecorded) {
  absl::StatusOr<ProfileView> view = ParseProfileJson(R"({"clock": "sim", "iterations": 1,
      "total_us": 5.0, "total_cycles": 10,
      "ops": [{"instruction": 0, "op": "conv_2d", "unit": "CPU", "cycles": 10, "us": 5.0,
               "percent": 100.0}]})");
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->clock_label,
            "clock not recorded (a profile from before clocks were labelled, marked 'sim')");
  EXPECT_EQ(view->count_unit, "cycles");
  EXPECT_EQ(view->ops[0].ran_on, "unknown");
  std::ostringstream out;
  PrintProfileTable(*view, out);
  EXPECT_THAT(out.str(), HasSubstr("clock: clock not recorded"));
  EXPECT_THAT(out.str(), ::testing::ContainsRegex(R"(conv_2d +unknown +10 +5\.00 +100\.0%)"));
}

TEST(PrintProfileTable, OneRowPerOpWithClockRanOnCyclesMicrosecondsAndPercent) {
  absl::StatusOr<ProfileView> view = ParseProfileJson(run::ProfileJson(SampleProfile()).dump());
  ASSERT_TRUE(view.ok());
  std::ostringstream out;
  PrintProfileTable(*view, out);
  const std::vector<std::string> rows = Lines(out.str());
  ASSERT_EQ(rows.size(), 9u);  // title, clock, header, 3 ops, 2 kernels, total
  EXPECT_EQ(rows[0], "profile (average of 10 iterations):");
  EXPECT_EQ(rows[1],
            "  clock: simulated RT700 cycles (host simulator timing model, CPU at 500 MHz)");
  EXPECT_THAT(rows[2], ::testing::MatchesRegex(R"( +# +op +ran on +cycles +us +%)"));
  EXPECT_THAT(rows[3],
              ::testing::MatchesRegex(R"( +0 +QUANTIZE 'input' +cpu +1000 +2\.00 +10\.0%)"));
  EXPECT_THAT(rows[4],
              ::testing::MatchesRegex(R"( +1 +delegate 0 \(neutron\) +npu +6000 +12\.00 +60\.0%)"));
  EXPECT_THAT(rows[5],
              ::testing::MatchesRegex(R"( +NPU kernel 0 CONV_2D +npu +4000 +8\.00 +40\.0%)"));
  EXPECT_THAT(rows[8], ::testing::MatchesRegex(R"( +total \(Method::execute\) +10250 +20\.50)"));
}

// A profile that left early-ended runs out says so in its title, and one whose instructions ran
// other than once per iteration (a loop body) grows a calls column; the others keep the plain
// table (above).
TEST(PrintProfileTable, SaysWhatItLeftOutAndHowOftenLoopedOpsRan) {
  run::Profile profile = SampleProfile();
  profile.ended_early = 4;
  for (run::ProfileRow& row : profile.rows) row.calls = row.instruction == 2 ? 3 : 1;
  absl::StatusOr<ProfileView> view = ParseProfileJson(run::ProfileJson(profile).dump());
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->ended_early_runs, 4);
  std::ostringstream out;
  PrintProfileTable(*view, out);
  const std::vector<std::string> rows = Lines(out.str());
  ASSERT_EQ(rows.size(), 9u);
  EXPECT_EQ(rows[0],
            "profile (average of 10 iterations; 4 of 10 ended early by a streaming op, left "
            "out):");
  EXPECT_THAT(rows[2], ::testing::MatchesRegex(R"( +# +op +ran on +cycles +us +% +calls)"));
  EXPECT_THAT(rows[3], ::testing::MatchesRegex(R"( +0 +QUANTIZE 'input' .* +1)"));
  EXPECT_THAT(rows[5], ::testing::MatchesRegex(R"( +NPU kernel 0 CONV_2D .*%)"));  // no calls
  EXPECT_THAT(rows[7], ::testing::MatchesRegex(R"( +2 +SOFTMAX 'out' .* +3)"));
}

// QEMU's counts are instructions of the emulated Cortex-M33, NPU kernels included: the table
// says so and has no cycles and no time for them.
TEST(PrintProfileTable, QemuInstructionsAreNeverShownAsNpuCycles) {
  absl::StatusOr<ProfileView> view = ParseProfileJson(run::ProfileJson(QemuProfile()).dump());
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->clock, "qemu-icount");
  EXPECT_EQ(view->count_unit, "instructions");
  ASSERT_EQ(view->ops.size(), 2u);
  EXPECT_EQ(view->ops[0].ran_on, "npu-emulated-cortex-m33");
  EXPECT_FALSE(view->ops[0].npu_kernels[0].cycles.has_value());
  EXPECT_FALSE(view->ops[0].npu_kernels[0].us.has_value());
  EXPECT_EQ(view->ops[0].npu_kernels[0].instructions, 90u * 50u);
  std::ostringstream out;
  PrintProfileTable(*view, out);
  const std::vector<std::string> rows = Lines(out.str());
  ASSERT_EQ(rows.size(), 7u);  // title, clock, header, 2 ops, 1 kernel, total
  EXPECT_EQ(rows[1], "  clock: QEMU instructions (icount shift 0), not Cortex-M33 cycles");
  EXPECT_THAT(rows[2], ::testing::MatchesRegex(R"( +# +op +ran on +instructions +us +%)"));
  EXPECT_THAT(rows[3], ::testing::MatchesRegex(
                           R"( +0 +delegate 0 \(BoardlabNeutronBackend\) +npu-emulated-cortex-m33 )"
                           R"(+5000 +- +50\.0%)"));
  EXPECT_THAT(rows[4], ::testing::MatchesRegex(
                           R"( +NPU kernel id 10 +npu-emulated-cortex-m33 +4500 +- +45\.0%)"));
  EXPECT_THAT(rows[5], ::testing::MatchesRegex(R"( +1 +softmax +cpu +5000 +- +50\.0%)"));
  EXPECT_THAT(rows[6], ::testing::MatchesRegex(R"( +total \(Method::execute\) +10000 +-)"));
  for (size_t i = 2; i < rows.size(); ++i) {
    EXPECT_THAT(rows[i], ::testing::Not(HasSubstr("cycles")));
    EXPECT_THAT(rows[i], ::testing::Not(HasSubstr(" npu ")));
  }
}

// The runtime names NPU kernels by debug id ("kernel <id>", runtime/cli/main.cc) and CPU ops by
// their kernel ("depthwise_conv_2d"); the client names them after their source ops with the debug
// map and report the compiler wrote.
TEST(NameOps, NamesKernelsAndCpuOpsAfterTheirSourceOps) {
  std::vector<uint8_t> model = boardlab::testing::TinyDsCnn();
  compiler::CompileOptions options;
  options.no_npu = {compiler::OpType::kDepthwiseConv2D};
  auto compiled = compiler::Compile(model, options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const auto map = nlohmann::json::parse(compiled->debug_map_json);
  const auto& delegate_map = map["delegates"][0];
  const auto& mapped = delegate_map["kernels"];
  const auto& cpu_op = map["cpu_ops"][0];
  run::Profile profile;
  profile.clock = SimClock();
  profile.iterations = 1;
  run::ProfileRow delegate = Row(delegate_map["instruction"].get<size_t>(),
                                 "delegate 0 (BoardlabNeutronBackend)", true, 300, 3.0);
  for (size_t k = 0; k < mapped.size(); ++k) {
    std::string op =
        (k == 0 ? "kernel " : "NPU kernel id ") + std::to_string(mapped[k]["id"].get<int>());
    delegate.kernels.push_back(Row(0, op, true, 100, 1.0));
  }
  delegate.kernels.push_back(Row(0, "kernel 999", true, 0, 0.0));
  profile.rows.push_back(delegate);
  profile.rows.push_back(
      Row(cpu_op["instruction"].get<size_t>(), "depthwise_conv_2d", false, 100, 1.0));
  absl::StatusOr<ProfileView> view = ParseProfileJson(run::ProfileJson(profile).dump());
  ASSERT_TRUE(view.ok()) << view.status();
  NameOps(*view, compiled->debug_map_json, compiled->report_json);
  const auto& kernels = view->ops[0].npu_kernels;
  EXPECT_EQ(kernels[0].op, "NPU kernel 0: CONV_2D #0");
  if (mapped.size() > 1) {
    EXPECT_THAT(kernels[1].op, HasSubstr("NPU kernel 1: "));  // named from "NPU kernel id <id>"
  }
  EXPECT_EQ(kernels.back().op, "kernel 999");  // not in the map: left alone
  EXPECT_EQ(view->ops[1].op, cpu_op["name"].get<std::string>());
  EXPECT_THAT(view->ops[1].op, HasSubstr("DEPTHWISE_CONV_2D #"));
}

// The main graph's ADD #0 runs on the NPU; subgraph 2's RELU #0 has the same index in its own
// subgraph and must not lend the kernel its name.
TEST(NameOps, AKernelIsNamedAfterTheMainGraphsOpNotASubgraphsOfTheSameIndex) {
  auto compiled = compiler::Compile(boardlab::testing::IfModelBuilder().Finish(), {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const auto map = nlohmann::json::parse(compiled->debug_map_json);
  const auto& kernel = map["delegates"][0]["kernels"][0];
  run::Profile profile;
  profile.clock = SimClock();
  profile.iterations = 1;
  run::ProfileRow delegate = Row(0, "delegate 0 (BoardlabNeutronBackend)", true, 300, 3.0);
  delegate.kernels.push_back(
      Row(0, "kernel " + std::to_string(kernel["id"].get<int>()), true, 100, 1.0));
  profile.rows.push_back(delegate);
  absl::StatusOr<ProfileView> view = ParseProfileJson(run::ProfileJson(profile).dump());
  ASSERT_TRUE(view.ok()) << view.status();
  NameOps(*view, compiled->debug_map_json, compiled->report_json);
  EXPECT_EQ(view->ops[0].npu_kernels[0].op, "NPU kernel 0: ADD #0");
}

}  // namespace
}  // namespace boardlab::cli
