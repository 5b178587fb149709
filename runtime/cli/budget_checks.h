#pragma once

// Budgets: the limits a model must keep besides matching outputs (latency, SRAM, flash, the
// share of MACs on the NPU), judged the same way by boardlab-run, the server and the boardlab
// client. A budget is a check with its measured value, its limit and pass/fail; a budget that
// could not be measured fails, so that a gate never passes unseen.
//
// Usage:
//   BudgetLimits limits;
//   AddBudgetOptions(app, limits);              // --max-latency-us, --max-sram, ...
//   BudgetMeasurements measured = MeasurementsFromReport(report_json_text);
//   measured.latency_us = 612.5;
//   for (const BudgetCheck& check : CheckBudgets(limits, measured)) puts(DescribeCheck(check));

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace CLI {
class App;
}

namespace boardlab::run {

struct BudgetLimits {
  std::optional<double> max_latency_us;
  std::optional<int64_t> max_sram_bytes;
  std::optional<int64_t> max_flash_bytes;
  std::optional<double> min_npu_macs_percent;  // 0..100

  bool empty() const {
    return !max_latency_us && !max_sram_bytes && !max_flash_bytes && !min_npu_macs_percent;
  }
};

/// What was measured; nullopt = not known (the check then fails with `*_missing` as its reason).
struct BudgetMeasurements {
  std::optional<double> latency_us;        // mean inference time on the board's clock
  std::string latency_clock;               // which clock gave latency_us (LatencyClockName)
  std::optional<double> sram_bytes;        // compile report: memory.sram_used_bytes
  std::optional<double> flash_bytes;       // the artifact's size (compile report: artifact_bytes)
  std::optional<double> npu_macs_percent;  // compile report: totals.npu_macs_percent
  std::string latency_missing = "the board's clock gives no time";
  /// Not empty: the latency is not judged, for this reason (no inference produced output); the
  /// check then passes without a figure instead of failing (NoLatencyToJudge).
  std::string latency_not_judged;
  std::string report_missing = "no compile report";
};

struct BudgetCheck {
  std::string name;        // "latency", "sram", "flash", "npu_macs"
  std::string unit;        // "us", "bytes", "%"
  std::string comparison;  // "<=" (a maximum) or ">=" (a minimum), as v1::BudgetCheck has it
  double limit = 0;
  std::optional<double> measured;
  bool passed = false;
  std::string detail;  // why it was not measured; empty otherwise
  std::string clock;   // latency: the clock that timed it ("simulated RT700"); "" = not recorded
};

/// The command-line options of the budgets, with their checks (each a non-negative number,
/// the percentage at most 100): --max-latency-us N, --max-sram BYTES, --max-flash BYTES,
/// --min-npu-macs PCT. `limits` must outlive `app`'s parse.
void AddBudgetOptions(CLI::App& app, BudgetLimits& limits);

/// What is wrong with an option's value, or "" when it is fine (CLI11 validators use them, so
/// that the message says what to give): a number >= 0 ("2000", "0.5"), a whole number of bytes
/// >= 0 ("1048576"), a percentage from 0 to 100.
std::string NotANonNegativeNumber(const std::string& text);
std::string NotAByteCount(const std::string& text);
std::string NotAPercentage(const std::string& text);

/// Empty when the limits are valid, else a message naming the budget (for limits that did not
/// come through AddBudgetOptions, e.g. over the API).
std::string InvalidBudget(const BudgetLimits& limits);

/// The number at `path` in `doc` (e.g. {"memory", "sram_used_bytes"} of a compile report), or
/// nullopt when a key is missing or the value is not a number.
std::optional<double> JsonNumberAt(const nlohmann::json& doc,
                                   std::initializer_list<const char*> path);

/// The string at `path` in `doc`, or nullopt when a key is missing or the value is not a string.
std::optional<std::string> JsonStringAt(const nlohmann::json& doc,
                                        std::initializer_list<const char*> path);

/// SRAM, flash and NPU MACs from a compile report (report.json of boardlab-compile --report);
/// fields the report lacks, or a text that is not a report, stay unmeasured with the reason.
BudgetMeasurements MeasurementsFromReport(std::string_view report_json);

/// The clock of a latency in a few words, from a profile's "clock" (ClockKindName):
/// "simulated RT700" for "rt700-sim-cycles", "DWT cycles on the board", "host wall clock",
/// "QEMU instruction count", ..., "clock not recorded" for "".
std::string LatencyClockName(const std::string& clock_kind);

/// What timed a job's inference time, for people, next to the number (boardlab's tables and
/// the server's web pages): "clock: simulated RT700", "clock: QEMU instruction count, not the
/// board's time", "clock not recorded" (Job.inference_clock).
std::string InferenceClockText(const std::string& clock_kind);

/// Sets measured.latency_us from a run's mean inference time `us` and the kind of the clock
/// that timed it (a profile's "clock"; "" when the run recorded none). QEMU's clocks count
/// instructions or follow the host, not the board, so their latency stays unmeasured with the
/// reason; so does a time <= 0 (the clock gave none).
void MeasureLatency(double us, const std::string& clock_kind, BudgetMeasurements& measured);

/// For a run in which no inference produced output (a streaming op such as CIRCULAR_BUFFER ended
/// every one early: the job is NO_OUTPUT): such an inference's time is no measure of the model's
/// latency, so the latency budget is not judged. Its check passes without a figure, saying
/// why (`latency not judged (no inference produced output yet) <= 700 us: pass`), as the
/// outputs of such a run are neither passed nor failed. A clock that gives no time at all
/// (QEMU's, by `clock_kind` as for MeasureLatency) still fails the check: that board can never
/// judge it.
void NoLatencyToJudge(const std::string& clock_kind, BudgetMeasurements& measured);

/// One check per limit set, in the order latency, sram, flash, npu_macs.
std::vector<BudgetCheck> CheckBudgets(const BudgetLimits& limits,
                                      const BudgetMeasurements& measured);

/// True when every check passed (also when there are none).
bool AllPassed(const std::vector<BudgetCheck>& checks);

/// "latency 612.5 us (simulated RT700) <= 500 us: FAIL", "npu_macs 97.3 % >= 90 %: pass",
/// "sram not measured (no compile report) <= 524288 bytes: FAIL".
std::string DescribeCheck(const BudgetCheck& check);

/// The failed checks in one phrase for a verdict message: "budget failed: latency 612.5 us > 500
/// us; sram not measured (no compile report)". Empty when all passed.
std::string FailedBudgetsMessage(const std::vector<BudgetCheck>& checks);

}  // namespace boardlab::run
