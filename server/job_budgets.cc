#include "server/job_budgets.h"

#include "absl/strings/str_cat.h"

namespace boardlab::server {

run::BudgetLimits BudgetLimitsOf(const v1::Budgets& budgets) {
  run::BudgetLimits limits;
  if (budgets.has_max_latency_us()) limits.max_latency_us = budgets.max_latency_us();
  if (budgets.has_max_sram_bytes()) limits.max_sram_bytes = budgets.max_sram_bytes();
  if (budgets.has_max_flash_bytes()) limits.max_flash_bytes = budgets.max_flash_bytes();
  if (budgets.has_min_npu_macs_percent()) {
    limits.min_npu_macs_percent = budgets.min_npu_macs_percent();
  }
  return limits;
}

absl::Status ValidateBudgets(const v1::Budgets& budgets) {
  const std::string invalid = run::InvalidBudget(BudgetLimitsOf(budgets));
  if (invalid.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("budgets: ", invalid));
}

std::string JudgeBudgets(v1::Job& job, const std::optional<std::string>& report_json,
                         const std::string& report_error, const std::string& clock_kind,
                         bool no_output) {
  job.clear_budget_checks();
  const run::BudgetLimits limits = BudgetLimitsOf(job.spec().budgets());
  if (limits.empty()) return "";
  run::BudgetMeasurements measured;
  if (report_json) {
    measured = run::MeasurementsFromReport(*report_json);
  } else {
    measured.report_missing = report_error;
  }
  run::MeasureLatency(job.inference_us(), clock_kind, measured);
  if (no_output) run::NoLatencyToJudge(clock_kind, measured);
  const std::vector<run::BudgetCheck> checks = run::CheckBudgets(limits, measured);
  for (const run::BudgetCheck& check : checks) {
    v1::BudgetCheck& out = *job.add_budget_checks();
    out.set_name(check.name);
    out.set_unit(check.unit);
    out.set_comparison(check.comparison);
    out.set_limit(check.limit);
    if (check.measured) out.set_measured(*check.measured);
    out.set_passed(check.passed);
    out.set_detail(check.detail);
    out.set_clock(check.clock);
  }
  return run::FailedBudgetsMessage(checks);
}

}  // namespace boardlab::server
