// The server's side of budgets (server/job_budgets.h): limits from the API are validated, and the
// checks of a job that ran are judged from its inference time and its compile report.

#include "server/job_budgets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace boardlab::server {
namespace {

using ::testing::HasSubstr;

constexpr char kReport[] = R"({"artifact_bytes": 4000, "memory": {"sram_used_bytes": 2048},
                               "totals": {"npu_macs_percent": 87.5}})";

v1::Job JobWithBudgets(double latency, int64_t sram, int64_t flash, double npu) {
  v1::Job job;
  v1::Budgets& budgets = *job.mutable_spec()->mutable_budgets();
  budgets.set_max_latency_us(latency);
  budgets.set_max_sram_bytes(sram);
  budgets.set_max_flash_bytes(flash);
  budgets.set_min_npu_macs_percent(npu);
  job.set_inference_us(612.5);
  return job;
}

TEST(JobBudgets, ValidLimitsPassValidation) {
  EXPECT_TRUE(ValidateBudgets(v1::Budgets()).ok());
  EXPECT_TRUE(ValidateBudgets(JobWithBudgets(0, 0, 0, 100).spec().budgets()).ok());
}

TEST(JobBudgets, BadLimitsAreInvalidArguments) {
  for (const v1::Job& job :
       {JobWithBudgets(-1, 1, 1, 1), JobWithBudgets(1, -1, 1, 1), JobWithBudgets(1, 1, -1, 1),
        JobWithBudgets(1, 1, 1, 100.01), JobWithBudgets(1, 1, 1, -3)}) {
    absl::Status status = ValidateBudgets(job.spec().budgets());
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << job.ShortDebugString();
    EXPECT_THAT(std::string(status.message()), HasSubstr("budgets: "));
  }
}

TEST(JobBudgets, PassingChecksAreRecorded) {
  v1::Job job = JobWithBudgets(700, 2048, 4000, 80);
  EXPECT_EQ(JudgeBudgets(job, std::string(kReport), ""), "");
  ASSERT_EQ(job.budget_checks_size(), 4);
  const v1::BudgetCheck& latency = job.budget_checks(0);
  EXPECT_EQ(latency.name(), "latency");
  EXPECT_EQ(latency.unit(), "us");
  EXPECT_EQ(latency.comparison(), "<=");
  EXPECT_EQ(latency.limit(), 700);
  EXPECT_EQ(latency.measured(), 612.5);
  EXPECT_TRUE(latency.passed());
  EXPECT_EQ(job.budget_checks(3).comparison(), ">=");
  EXPECT_EQ(job.budget_checks(3).measured(), 87.5);
}

TEST(JobBudgets, FailedChecksMakeTheMessage) {
  v1::Job job = JobWithBudgets(600, 2048, 3999, 90);
  EXPECT_EQ(JudgeBudgets(job, std::string(kReport), ""),
            "budget failed: latency 612.5 us > 600 us; flash 4000 bytes > 3999 bytes; npu_macs "
            "87.5 % < 90 %");
  EXPECT_FALSE(job.budget_checks(0).passed());
  EXPECT_TRUE(job.budget_checks(1).passed());
}

TEST(JobBudgets, WithoutAReportOrATimeTheChecksFailUnmeasured) {
  v1::Job job = JobWithBudgets(1e9, 1 << 30, 1 << 30, 0);
  job.set_inference_us(0);
  const std::string message = JudgeBudgets(job, std::nullopt, "compile report unreadable: gone");
  EXPECT_THAT(message, HasSubstr("latency not measured (the board's clock gives no time)"));
  EXPECT_THAT(message, HasSubstr("sram not measured (compile report unreadable: gone)"));
  for (const v1::BudgetCheck& check : job.budget_checks()) {
    EXPECT_FALSE(check.has_measured());
    EXPECT_FALSE(check.passed());
  }
}

TEST(JobBudgets, TheLatencyNamesTheClockThatTimedIt) {
  v1::Job job = JobWithBudgets(600, 1 << 30, 1 << 30, 0);
  EXPECT_EQ(JudgeBudgets(job, std::string(kReport), "", "rt700-sim-cycles"),
            "budget failed: latency 612.5 us (simulated RT700) > 600 us");
  EXPECT_EQ(job.budget_checks(0).clock(), "simulated RT700");
  EXPECT_EQ(job.budget_checks(1).clock(), "") << "only the latency has a clock";
}

TEST(JobBudgets, AQemuInstructionCountIsNoLatency) {
  v1::Job job = JobWithBudgets(1e9, 1 << 30, 1 << 30, 0);
  EXPECT_EQ(JudgeBudgets(job, std::string(kReport), "", "qemu-icount"),
            "budget failed: latency not measured (a QEMU board counts instructions, not time)");
  EXPECT_FALSE(job.budget_checks(0).has_measured());
  EXPECT_FALSE(job.budget_checks(0).passed());
  EXPECT_TRUE(job.budget_checks(1).passed());
}

TEST(JobBudgets, AJobWithoutBudgetsHasNoChecks) {
  v1::Job job;
  job.set_inference_us(5);
  EXPECT_EQ(JudgeBudgets(job, std::string(kReport), ""), "");
  EXPECT_EQ(job.budget_checks_size(), 0);
}

// A run whose every inference ended early (NO_OUTPUT) is not judged on its latency: the check
// passes without a figure, while the compile report's budgets are judged as ever.
TEST(JobBudgets, NoOutputRunHasNoLatencyJudged) {
  v1::Job job = JobWithBudgets(600, 2048, 3999, 80);  // 612.5 us would fail the latency
  EXPECT_EQ(JudgeBudgets(job, std::string(kReport), "", "rt700-sim-cycles", /*no_output=*/true),
            "budget failed: flash 4000 bytes > 3999 bytes");
  ASSERT_EQ(job.budget_checks_size(), 4);
  const v1::BudgetCheck& latency = job.budget_checks(0);
  EXPECT_TRUE(latency.passed());
  EXPECT_FALSE(latency.has_measured());
  EXPECT_EQ(latency.detail(), "no inference produced output yet");
}

}  // namespace
}  // namespace boardlab::server
