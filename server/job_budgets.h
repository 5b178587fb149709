#pragma once

// The budgets of a job (v1::Budgets: latency, SRAM, flash, NPU MACs) judged by the server when
// its run ends, so that the stored verdict, `boardlab watch` and job.json say the same. The
// checks themselves are runtime/cli/budget_checks.h, shared with boardlab-run.

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "boardlab/v1/types.pb.h"
#include "runtime/cli/budget_checks.h"

namespace boardlab::server {

run::BudgetLimits BudgetLimitsOf(const v1::Budgets& budgets);

/// InvalidArgument naming the budget when a limit is negative, not a number, or a percentage
/// above 100.
absl::Status ValidateBudgets(const v1::Budgets& budgets);

/// Sets job.budget_checks from the job's budgets: latency from job.inference_us (0 = the board's
/// clock gave no time) on the clock `clock_kind` (v1::RunResult.inference_clock;
/// run::MeasureLatency: a QEMU clock leaves it unmeasured, "" = not recorded), SRAM, flash and
/// NPU MACs from the compile report's text (nullopt when it could not be read, with
/// `report_error` as the reason). `no_output`: no inference of the run produced output (the
/// run's outcome is NO_OUTPUT), so the latency is not judged (run::NoLatencyToJudge). Returns
/// the failed budgets in one phrase for the verdict message, empty when all passed.
std::string JudgeBudgets(v1::Job& job, const std::optional<std::string>& report_json,
                         const std::string& report_error, const std::string& clock_kind = "",
                         bool no_output = false);

}  // namespace boardlab::server
