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
#include "tests/support/test_models.h"

namespace boardlab::cli {
namespace {

using ::testing::HasSubstr;

run::ProfileRow Row(size_t instruction, const std::string& op, bool npu, double cycles, double us) {
  run::ProfileRow row;
  row.instruction = instruction;
  row.op = op;
  row.npu = npu;
  row.cycles = cycles;
  row.ticks = cycles;
  row.us = us;
  return row;
}

// A simulated-clock profile: a CPU op, a delegate call with two NPU kernels, another CPU op.
run::Profile SampleProfile() {
  run::Profile profile;
  profile.clock = "sim";
  profile.iterations = 10;
  profile.rows.push_back(Row(0, "QUANTIZE 'input'", false, 1000, 2.0));
  run::ProfileRow delegate = Row(1, "delegate 0 (neutron)", true, 6000, 12.0);
  delegate.kernels.push_back(Row(0, "NPU kernel 0 CONV_2D", true, 4000, 8.0));
  delegate.kernels.push_back(Row(0, "NPU kernel 1 DEPTHWISE_CONV_2D", true, 2000, 4.0));
  profile.rows.push_back(delegate);
  profile.rows.push_back(Row(2, "SOFTMAX 'out'", false, 3000, 6.0));
  profile.total_us = 20.5;
  profile.total_cycles = 10250;
  return profile;
}

TEST(ParseProfileJson, ReadsWhatTheRuntimeWrites) {
  absl::StatusOr<ProfileView> view = ParseProfileJson(run::ProfileJson(SampleProfile()).dump());
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->clock, "sim");
  EXPECT_EQ(view->iterations, 10);
  EXPECT_DOUBLE_EQ(view->total_us, 20.5);
  EXPECT_EQ(view->total_cycles, 10250u);
  ASSERT_EQ(view->ops.size(), 3u);
  EXPECT_EQ(view->ops[0].op, "QUANTIZE 'input'");
  EXPECT_FALSE(view->ops[0].npu);
  EXPECT_EQ(view->ops[0].cycles, 1000u);
  EXPECT_DOUBLE_EQ(view->ops[0].percent, 10.0);  // 2 of the rows' 20 us
  EXPECT_TRUE(view->ops[1].npu);
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
  profile.clock = "wall";
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

TEST(PrintProfileTable, OneRowPerOpWithUnitCyclesMicrosecondsAndPercent) {
  absl::StatusOr<ProfileView> view = ParseProfileJson(run::ProfileJson(SampleProfile()).dump());
  ASSERT_TRUE(view.ok());
  std::ostringstream out;
  PrintProfileTable(*view, out);
  const std::string table = out.str();
  EXPECT_THAT(table, HasSubstr("profile (sim clock, average of 10 iterations):"));
  EXPECT_THAT(table, HasSubstr("unit"));
  EXPECT_THAT(table, HasSubstr("%"));
  std::istringstream lines(table);
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  ASSERT_EQ(rows.size(), 8u);  // title, header, 3 ops, 2 kernels, total
  EXPECT_THAT(rows[2],
              ::testing::MatchesRegex(R"( +0 +QUANTIZE 'input' +CPU +1000 +2\.00 +10\.0%)"));
  EXPECT_THAT(rows[3],
              ::testing::MatchesRegex(R"( +1 +delegate 0 \(neutron\) +NPU +6000 +12\.00 +60\.0%)"));
  EXPECT_THAT(rows[4],
              ::testing::MatchesRegex(R"( +NPU kernel 0 CONV_2D +NPU +4000 +8\.00 +40\.0%)"));
  EXPECT_THAT(rows[7], ::testing::MatchesRegex(R"( +total \(Method::execute\) +10250 +20\.50)"));
}

// The runtime names NPU kernels by debug id ("kernel <id>", runtime/cli/main.cc); the client
// names them after their source ops with the debug map and report the compiler wrote.
TEST(NameNpuKernels, NamesKernelsAfterTheirSourceOps) {
  std::vector<uint8_t> model = boardlab::testing::TinyDsCnn();
  auto compiled = compiler::Compile(model, compiler::CompileOptions());
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const auto map = nlohmann::json::parse(compiled->debug_map_json);
  const auto& mapped = map["delegates"][0]["kernels"];
  run::Profile profile;
  profile.clock = "sim";
  profile.iterations = 1;
  run::ProfileRow delegate = Row(0, "delegate 0 (BoardlabNeutronBackend)", true, 300, 3.0);
  for (int k = 0; k < 2; ++k) {
    std::string op = "kernel " + std::to_string(mapped[k]["id"].get<int>());
    delegate.kernels.push_back(Row(0, op, true, 100, 1.0));
  }
  delegate.kernels.push_back(Row(0, "kernel 999", true, 0, 0.0));
  profile.rows.push_back(delegate);
  absl::StatusOr<ProfileView> view = ParseProfileJson(run::ProfileJson(profile).dump());
  ASSERT_TRUE(view.ok()) << view.status();
  NameNpuKernels(*view, compiled->debug_map_json, compiled->report_json);
  const auto& kernels = view->ops[0].npu_kernels;
  EXPECT_EQ(kernels[0].op, "NPU kernel 0: CONV_2D #0");
  EXPECT_THAT(kernels[1].op, HasSubstr("NPU kernel 1: "));
  EXPECT_EQ(kernels[2].op, "kernel 999");  // not in the map: left alone
}

}  // namespace
}  // namespace boardlab::cli
