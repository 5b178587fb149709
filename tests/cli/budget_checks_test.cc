// Budgets (runtime/cli/budget_checks.h): each limit is a check with its measured value, its
// limit and pass/fail; an unmeasured value fails. boardlab-run checks them on a sim run; the
// client sends them with the job and prints the server's checks.

#include "runtime/cli/budget_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli/submit.h"
#include "cli/tables.h"
#include "nlohmann/json.hpp"
#include "tests/cli/fake_boardlab_server.h"
#include "tests/support/process.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

namespace boardlab::run {
namespace {

using ::testing::HasSubstr;

constexpr char kReport[] = R"({"artifact_bytes": 4000, "memory": {"sram_used_bytes": 2048},
                               "totals": {"npu_macs_percent": 87.5}})";

BudgetLimits AllLimits(double latency, int64_t sram, int64_t flash, double npu) {
  BudgetLimits limits;
  limits.max_latency_us = latency;
  limits.max_sram_bytes = sram;
  limits.max_flash_bytes = flash;
  limits.min_npu_macs_percent = npu;
  return limits;
}

BudgetMeasurements Measured() {
  BudgetMeasurements measured = MeasurementsFromReport(kReport);
  measured.latency_us = 612.5;
  return measured;
}

TEST(BudgetChecks, ReadsTheReportsFigures) {
  const BudgetMeasurements measured = MeasurementsFromReport(kReport);
  EXPECT_EQ(measured.sram_bytes, 2048);
  EXPECT_EQ(measured.flash_bytes, 4000);
  EXPECT_EQ(measured.npu_macs_percent, 87.5);
  EXPECT_FALSE(measured.latency_us.has_value());
}

TEST(BudgetChecks, EachPassesAtItsLimit) {
  const std::vector<BudgetCheck> checks =
      CheckBudgets(AllLimits(612.5, 2048, 4000, 87.5), Measured());
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_TRUE(AllPassed(checks));
  EXPECT_EQ(DescribeCheck(checks[0]), "latency 612.5 us <= 612.5 us: pass");
  EXPECT_EQ(DescribeCheck(checks[1]), "sram 2048 bytes <= 2048 bytes: pass");
  EXPECT_EQ(DescribeCheck(checks[2]), "flash 4000 bytes <= 4000 bytes: pass");
  EXPECT_EQ(DescribeCheck(checks[3]), "npu_macs 87.5 % >= 87.5 %: pass");
  EXPECT_EQ(FailedBudgetsMessage(checks), "");
}

TEST(BudgetChecks, EachFailsPastItsLimitAlone) {
  const BudgetLimits passing = AllLimits(1000, 4096, 8000, 50);
  BudgetLimits latency = passing, sram = passing, flash = passing, npu = passing;
  latency.max_latency_us = 600;
  sram.max_sram_bytes = 2047;
  flash.max_flash_bytes = 3999;
  npu.min_npu_macs_percent = 90;
  const std::vector<std::pair<BudgetLimits, std::string>> cases = {
      {latency, "budget failed: latency 612.5 us > 600 us"},
      {sram, "budget failed: sram 2048 bytes > 2047 bytes"},
      {flash, "budget failed: flash 4000 bytes > 3999 bytes"},
      {npu, "budget failed: npu_macs 87.5 % < 90 %"}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::vector<BudgetCheck> checks = CheckBudgets(cases[i].first, Measured());
    ASSERT_EQ(checks.size(), 4u);
    for (size_t j = 0; j < checks.size(); ++j) {
      EXPECT_EQ(checks[j].passed, i != j) << DescribeCheck(checks[j]);
    }
    EXPECT_THAT(DescribeCheck(checks[i]), HasSubstr(": FAIL"));
    EXPECT_EQ(FailedBudgetsMessage(checks), cases[i].second);
  }
}

TEST(BudgetChecks, AnUnmeasuredValueFailsWithTheReason) {
  BudgetMeasurements measured = MeasurementsFromReport("not json");
  const std::vector<BudgetCheck> checks =
      CheckBudgets(AllLimits(1e9, 1 << 30, 1 << 30, 0), measured);
  ASSERT_EQ(checks.size(), 4u);
  for (const BudgetCheck& check : checks) EXPECT_FALSE(check.passed) << DescribeCheck(check);
  EXPECT_EQ(DescribeCheck(checks[0]),
            "latency not measured (the board's clock gives no time) <= 1000000000 us: FAIL");
  EXPECT_EQ(DescribeCheck(checks[1]),
            "sram not measured (the compile report is not JSON) <= 1073741824 bytes: FAIL");
}

TEST(BudgetChecks, OnlyTheLimitsGivenAreChecked) {
  BudgetLimits limits;
  EXPECT_TRUE(limits.empty());
  EXPECT_TRUE(CheckBudgets(limits, Measured()).empty());
  limits.max_flash_bytes = 1;
  const std::vector<BudgetCheck> checks = CheckBudgets(limits, Measured());
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].name, "flash");
}

TEST(BudgetChecks, OptionValuesSayWhatToGive) {
  EXPECT_EQ(NotANonNegativeNumber("0.5"), "");
  EXPECT_EQ(NotANonNegativeNumber("2000"), "");
  EXPECT_EQ(NotAByteCount("1048576"), "");
  EXPECT_EQ(NotAPercentage("100"), "");
  EXPECT_EQ(NotANonNegativeNumber("-1"), "'-1' is not a number >= 0 (e.g. 2000 or 0.5)");
  EXPECT_EQ(NotAByteCount("512K"), "'512K' is not a whole number of bytes >= 0 (e.g. 1048576)");
  EXPECT_EQ(NotAPercentage("101"), "'101' is not a percentage from 0 to 100 (e.g. 90)");
  for (const char* bad : {"", " 1", "nan", "inf", "1e999", "5us"}) {
    EXPECT_NE(NotANonNegativeNumber(bad), "") << bad;
  }
  for (const char* bad : {"", "-1", "1.5", "1e3", "99999999999999999999"}) {
    EXPECT_NE(NotAByteCount(bad), "") << bad;
  }
}

TEST(BudgetChecks, InvalidLimitsAreNamed) {
  EXPECT_EQ(InvalidBudget(AllLimits(1, 2, 3, 100)), "");
  EXPECT_THAT(InvalidBudget(AllLimits(-1, 2, 3, 4)), HasSubstr("max_latency_us"));
  EXPECT_THAT(InvalidBudget(AllLimits(std::nan(""), 2, 3, 4)), HasSubstr("max_latency_us"));
  EXPECT_THAT(InvalidBudget(AllLimits(1, -2, 3, 4)), HasSubstr("max_sram_bytes"));
  EXPECT_THAT(InvalidBudget(AllLimits(1, 2, -3, 4)), HasSubstr("max_flash_bytes"));
  EXPECT_THAT(InvalidBudget(AllLimits(1, 2, 3, 100.5)), HasSubstr("min_npu_macs_percent"));
  EXPECT_THAT(InvalidBudget(AllLimits(1, 2, 3, -0.5)), HasSubstr("min_npu_macs_percent"));
}

}  // namespace
}  // namespace boardlab::run

namespace boardlab::cli {
namespace {

using ::testing::HasSubstr;

TEST(SubmitBudgets, TheLimitsTravelInTheSpec) {
  SubmitArgs args;
  args.model = testing::WriteTestFile("budget.tflite", "model bytes");
  args.budgets.max_latency_us = 500;
  args.budgets.max_sram_bytes = 0;  // a limit of 0 is still a limit
  args.budgets.min_npu_macs_percent = 90;
  absl::StatusOr<PreparedSubmit> prepared = PrepareSubmit(args);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const v1::Budgets& budgets = prepared->request.spec().budgets();
  EXPECT_TRUE(budgets.has_max_latency_us());
  EXPECT_EQ(budgets.max_latency_us(), 500);
  EXPECT_TRUE(budgets.has_max_sram_bytes());
  EXPECT_EQ(budgets.max_sram_bytes(), 0);
  EXPECT_FALSE(budgets.has_max_flash_bytes());
  EXPECT_EQ(budgets.min_npu_macs_percent(), 90);
}

TEST(SubmitBudgets, BadValuesAreUsageErrorsBeforeAnyCall) {
  testing::FakeBoardlabServer server;
  const std::string model = testing::WriteTestFile("budget_bad.tflite", "model bytes");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-latency-us", "-5"}, "--max-latency-us"},
      {{"--max-latency-us", "fast"}, "--max-latency-us"},
      {{"--max-sram", "-1"}, "--max-sram"},
      {{"--max-sram", "512K"}, "--max-sram"},
      {{"--max-flash", "1.5"}, "--max-flash"},
      {{"--min-npu-macs", "101"}, "--min-npu-macs"},
      {{"--min-npu-macs", "-1"}, "--min-npu-macs"},
      {{"--min-npu-macs", "most"}, "--min-npu-macs"}};
  for (const auto& [options, named] : cases) {
    std::vector<std::string> args = {"submit", model};
    args.insert(args.end(), options.begin(), options.end());
    testing::CapturedRun run = testing::RunCaptured(args, server.address());
    EXPECT_EQ(run.code, 2) << options[1];
    EXPECT_THAT(run.err, HasSubstr(named + ": '" + options[1] + "' is not a")) << run.err;
    EXPECT_THAT(run.err, HasSubstr("boardlab submit --help")) << run.err;
  }
  EXPECT_EQ(server.jobs().job_count(), 0);
}

// A failed job whose latency check measured `us` against a limit of 500 us.
v1::Job JobWithLatencyCheck(double us) {
  v1::Job job;
  job.set_id("j1");
  job.set_result(v1::JOB_RESULT_FAIL);
  v1::BudgetCheck* latency = job.add_budget_checks();
  latency->set_name("latency");
  latency->set_unit("us");
  latency->set_comparison("<=");
  latency->set_limit(500);
  latency->set_measured(us);
  return job;
}

TEST(SubmitBudgets, TheVerdictShowsEachCheck) {
  v1::Job job = JobWithLatencyCheck(612.5);
  v1::BudgetCheck* npu = job.add_budget_checks();
  npu->set_name("npu_macs");
  npu->set_unit("%");
  npu->set_comparison(">=");
  npu->set_limit(50);
  npu->set_measured(87.5);
  npu->set_passed(true);
  std::ostringstream out;
  PrintVerdict(job, out);
  EXPECT_THAT(out.str(), HasSubstr("  budget latency 612.5 us <= 500 us: FAIL\n"));
  EXPECT_THAT(out.str(), HasSubstr("  budget npu_macs 87.5 % >= 50 %: pass\n"));
}

TEST(SubmitBudgets, TheVerdictNamesTheLatencyClock) {
  v1::Job job = JobWithLatencyCheck(619.76);
  job.mutable_budget_checks(0)->set_clock("simulated RT700");
  std::ostringstream out;
  PrintVerdict(job, out);
  EXPECT_THAT(out.str(),
              HasSubstr("  budget latency 619.76 us (simulated RT700) <= 500 us: FAIL\n"));
}

TEST(BudgetChecks, QemuClocksLeaveTheLatencyUnmeasured) {
  run::BudgetLimits limits;
  limits.max_latency_us = 1000;
  for (const char* kind : {"qemu-icount", "qemu-virtual-time"}) {
    run::BudgetMeasurements measured;
    run::MeasureLatency(400, kind, measured);
    const std::vector<run::BudgetCheck> checks = run::CheckBudgets(limits, measured);
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_FALSE(checks[0].measured) << kind;
    EXPECT_FALSE(checks[0].passed) << kind;
    EXPECT_THAT(run::DescribeCheck(checks[0]), HasSubstr("latency not measured (")) << kind;
    EXPECT_THAT(run::DescribeCheck(checks[0]), HasSubstr("QEMU")) << kind;
  }
  run::BudgetMeasurements sim;
  run::MeasureLatency(400, "rt700-sim-cycles", sim);
  EXPECT_EQ(run::DescribeCheck(run::CheckBudgets(limits, sim)[0]),
            "latency 400 us (simulated RT700) <= 1000 us: pass");
  EXPECT_EQ(run::FailedBudgetsMessage(run::CheckBudgets(limits, sim)), "");
}

// A run in which no inference produced output has no latency to judge: the check passes without
// a figure and says why, whatever the early-ended inference took (or when no case gave a time).
// A QEMU clock still fails it: no run on that board could be judged.
TEST(BudgetChecks, NoInferenceWithOutputLeavesTheLatencyNotJudged) {
  run::BudgetLimits limits;
  limits.max_latency_us = 100;
  for (const double us : {400.0, 0.0}) {
    run::BudgetMeasurements measured;
    run::MeasureLatency(us, "rt700-sim-cycles", measured);
    run::NoLatencyToJudge("rt700-sim-cycles", measured);
    const std::vector<run::BudgetCheck> checks = run::CheckBudgets(limits, measured);
    ASSERT_EQ(checks.size(), 1u);
    EXPECT_FALSE(checks[0].measured) << us;
    EXPECT_TRUE(checks[0].passed) << us;
    EXPECT_EQ(run::DescribeCheck(checks[0]),
              "latency not judged (no inference produced output yet) <= 100 us: pass");
    EXPECT_EQ(run::FailedBudgetsMessage(checks), "");
  }
  run::BudgetMeasurements qemu;
  run::MeasureLatency(400, "qemu-icount", qemu);
  run::NoLatencyToJudge("qemu-icount", qemu);
  const std::vector<run::BudgetCheck> checks = run::CheckBudgets(limits, qemu);
  EXPECT_FALSE(checks[0].passed);
  EXPECT_THAT(run::DescribeCheck(checks[0]), HasSubstr("latency not measured (a QEMU board"));
}

// boardlab-run checks the same budgets on a sim run: exit 1 when one fails, and the checks in
// its JSON document.
class RunBudgetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (boardlab::testing::RunBinary().empty()) GTEST_SKIP() << "boardlab-run is not built";
    dir_ = ::testing::TempDir() + "/run_budgets_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
    const std::vector<uint8_t> model = boardlab::testing::SingleConv2D({});
    std::ofstream(dir_ + "/m.tflite", std::ios::binary)
        .write(reinterpret_cast<const char*>(model.data()),
               static_cast<std::streamsize>(model.size()));
    const boardlab::testing::CommandResult compiled = boardlab::testing::RunCommand(
        boardlab::testing::CompilerBinary() + " " + dir_ + "/m.tflite -o " + dir_ +
        "/m.pte --report " + dir_ + "/report.json --quiet");
    ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
  }

  boardlab::testing::CommandResult Run(const std::string& options) {
    return boardlab::testing::RunCommand(boardlab::testing::RunBinary() + " " + dir_ + "/m.pte " +
                                         options);
  }

  // The "budgets" of the --profile json document of a run with `budget_options`.
  nlohmann::json JsonBudgets(const std::string& budget_options, int expected_exit) {
    boardlab::testing::CommandResult r = boardlab::testing::RunCommand(
        boardlab::testing::RunBinary() + " " + dir_ + "/m.pte --profile json " + budget_options,
        /*with_stderr=*/false);
    EXPECT_EQ(r.exit_code, expected_exit) << r.output;
    return nlohmann::json::parse(r.output)["budgets"];
  }

  std::string dir_;
};

TEST_F(RunBudgetsTest, GenerousBudgetsPass) {
  boardlab::testing::CommandResult r =
      Run("--report " + dir_ +
          "/report.json --max-latency-us 1000000 --max-sram 100000000 --max-flash 100000000 "
          "--min-npu-macs 0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("budget latency "));
  EXPECT_THAT(r.output, HasSubstr(" <= 1000000 us: pass"));
  EXPECT_THAT(r.output, HasSubstr("budget sram "));
  EXPECT_THAT(r.output, HasSubstr("budget flash "));
  EXPECT_THAT(r.output, HasSubstr("budget npu_macs "));
}

TEST_F(RunBudgetsTest, EachTightBudgetFailsTheRun) {
  for (const char* option : {"--max-latency-us 0.01", "--max-sram 1", "--max-flash 1",
                             "--min-npu-macs 100 --cpu-only-report"}) {
    std::string options = option;
    if (options.find("--cpu-only-report") != std::string::npos) {
      // A CPU-only compile has no MACs on the NPU.
      const boardlab::testing::CommandResult compiled = boardlab::testing::RunCommand(
          boardlab::testing::CompilerBinary() + " " + dir_ + "/m.tflite -o " + dir_ +
          "/cpu.pte --cpu-only --report " + dir_ + "/cpu.json --quiet");
      ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
      options = "--min-npu-macs 100 --report " + dir_ + "/cpu.json";
    } else {
      options += " --report " + dir_ + "/report.json";
    }
    boardlab::testing::CommandResult r = Run(options + " --profile json");
    EXPECT_EQ(r.exit_code, 1) << option << r.output;
    EXPECT_THAT(r.output, HasSubstr("budget failed: ")) << option;
  }
}

TEST_F(RunBudgetsTest, JsonListsTheChecks) {
  const nlohmann::json budgets = JsonBudgets("--max-flash 1", 1);
  ASSERT_EQ(budgets.size(), 1u);
  EXPECT_EQ(budgets[0]["name"], "flash");
  EXPECT_EQ(budgets[0]["measured"], std::filesystem::file_size(dir_ + "/m.pte"));
  EXPECT_EQ(budgets[0]["passed"], false);
}

TEST_F(RunBudgetsTest, TheLatencyNamesTheSimulatorClock) {
  const nlohmann::json budgets = JsonBudgets("--max-latency-us 1e9", 0);
  ASSERT_EQ(budgets.size(), 1u);
  EXPECT_EQ(budgets[0]["clock"], "simulated RT700");
}

TEST_F(RunBudgetsTest, BadUseIsAUsageError) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--max-sram 10", "need --report"},
      {"--min-npu-macs 101", "--min-npu-macs"},
      {"--max-latency-us -3", "--max-latency-us"},
      {"--max-flash lots", "--max-flash"},
      {"--max-latency-us 5 --clock wall", "--clock sim"},
      {"--report " + dir_ + "/nothing.json --max-sram 1", "cannot open"},
      {"--report " + dir_ + "/m.tflite --max-sram 1", "not a compile report"},
      {"--board qemu --max-flash 1", "--board sim only"}};
  for (const auto& [options, message] : cases) {
    boardlab::testing::CommandResult r = Run(options);
    EXPECT_EQ(r.exit_code, 2) << options << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(message)) << options;
  }
}

}  // namespace
}  // namespace boardlab::cli
