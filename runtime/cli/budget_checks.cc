#include "runtime/cli/budget_checks.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

#include "CLI/CLI.hpp"
#include "nlohmann/json.hpp"
#include "runtime/profiling/etdump/clock_record.h"

namespace boardlab::run {
namespace {

using nlohmann::json;
using runtime::etdump::ClockKind;

// The kind a profile's "clock" names (runtime::etdump::ClockKindName's words).
ClockKind ClockKindNamed(const std::string& name) {
  return runtime::etdump::ClockKindFromName(name.data(), name.size());
}

// Up to three decimals, without trailing zeros: 500, 612.5, 97.25, 0.001.
std::string NumberText(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.3f", value);
  std::string s = text;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string ValueText(double value, const std::string& unit) {
  return NumberText(value) + " " + unit;
}

// "612.5 us (simulated RT700)", or "not measured (reason)".
std::string MeasuredText(const BudgetCheck& check) {
  // A check without a figure passes only when it was not to be judged (NoLatencyToJudge).
  if (!check.measured && check.passed) return "not judged (" + check.detail + ")";
  if (!check.measured) return "not measured (" + check.detail + ")";
  return ValueText(*check.measured, check.unit) +
         (check.clock.empty() ? "" : " (" + check.clock + ")");
}

bool IsMinimum(const BudgetCheck& check) { return check.comparison == ">="; }

BudgetCheck MakeCheck(const char* name, const char* unit, const char* comparison, double limit,
                      const std::optional<double>& measured, const std::string& missing) {
  BudgetCheck check;
  check.name = name;
  check.unit = unit;
  check.comparison = comparison;
  check.limit = limit;
  check.measured = measured;
  if (!measured) {
    check.detail = missing;
    return check;
  }
  check.passed = IsMinimum(check) ? *measured >= limit : *measured <= limit;
  return check;
}

bool Negative(const std::optional<double>& value) { return value && !(*value >= 0); }

// A finite decimal number, the whole text.
std::optional<double> ParseNumber(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// The value at `path` in `doc`, or null when a key is missing.
const json* JsonAt(const json& doc, std::initializer_list<const char*> path) {
  const json* node = &doc;
  for (const char* key : path) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
  }
  return node;
}

}  // namespace

std::optional<double> JsonNumberAt(const json& doc, std::initializer_list<const char*> path) {
  const json* node = JsonAt(doc, path);
  if (node == nullptr || !node->is_number()) return std::nullopt;
  return node->get<double>();
}

std::optional<std::string> JsonStringAt(const json& doc, std::initializer_list<const char*> path) {
  const json* node = JsonAt(doc, path);
  if (node == nullptr || !node->is_string()) return std::nullopt;
  return node->get<std::string>();
}

std::string NotANonNegativeNumber(const std::string& text) {
  const std::optional<double> value = ParseNumber(text);
  if (value && *value >= 0) return "";
  return "'" + text + "' is not a number >= 0 (e.g. 2000 or 0.5)";
}

std::string NotAByteCount(const std::string& text) {
  int64_t bytes = 0;
  const char* end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(text.data(), end, bytes);
  if (!text.empty() && error == std::errc() && rest == end && bytes >= 0) return "";
  return "'" + text + "' is not a whole number of bytes >= 0 (e.g. 1048576)";
}

std::string NotAPercentage(const std::string& text) {
  const std::optional<double> value = ParseNumber(text);
  if (value && *value >= 0 && *value <= 100) return "";
  return "'" + text + "' is not a percentage from 0 to 100 (e.g. 90)";
}

void AddBudgetOptions(CLI::App& app, BudgetLimits& limits) {
  const auto check = [](std::string (*problem)(const std::string&), const char* name) {
    return CLI::Validator([problem](std::string& text) { return problem(text); }, name);
  };
  // Callbacks rather than std::optional targets: CLI11 2.1 converts only plain values.
  app.add_option_function<double>(
         "--max-latency-us", [&limits](const double& us) { limits.max_latency_us = us; },
         "budget: the mean inference time on the board's clock at most N us")
      ->check(check(&NotANonNegativeNumber, "N"));
  app.add_option_function<int64_t>(
         "--max-sram", [&limits](const int64_t& bytes) { limits.max_sram_bytes = bytes; },
         "budget: the model's SRAM (arena + weights or weight window) at most BYTES")
      ->check(check(&NotAByteCount, "BYTES"));
  app.add_option_function<int64_t>(
         "--max-flash", [&limits](const int64_t& bytes) { limits.max_flash_bytes = bytes; },
         "budget: the artifact (what is stored in flash) at most BYTES")
      ->check(check(&NotAByteCount, "BYTES"));
  app.add_option_function<double>(
         "--min-npu-macs", [&limits](const double& pct) { limits.min_npu_macs_percent = pct; },
         "budget: at least PCT percent of the model's MACs on the NPU (0-100)")
      ->check(check(&NotAPercentage, "PCT"));
}

std::string InvalidBudget(const BudgetLimits& limits) {
  if (Negative(limits.max_latency_us)) return "max_latency_us must be a number >= 0";
  if (limits.max_sram_bytes && *limits.max_sram_bytes < 0) return "max_sram_bytes must be >= 0";
  if (limits.max_flash_bytes && *limits.max_flash_bytes < 0) return "max_flash_bytes must be >= 0";
  if (Negative(limits.min_npu_macs_percent) ||
      (limits.min_npu_macs_percent && *limits.min_npu_macs_percent > 100)) {
    return "min_npu_macs_percent must be a number in [0, 100]";
  }
  return "";
}

BudgetMeasurements MeasurementsFromReport(std::string_view report_json) {
  BudgetMeasurements measured;
  const json report = json::parse(report_json, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded() || !report.is_object()) {
    measured.report_missing = "the compile report is not JSON";
    return measured;
  }
  measured.report_missing = "not in the compile report";
  measured.sram_bytes = JsonNumberAt(report, {"memory", "sram_used_bytes"});
  measured.flash_bytes = JsonNumberAt(report, {"artifact_bytes"});
  measured.npu_macs_percent = JsonNumberAt(report, {"totals", "npu_macs_percent"});
  return measured;
}

std::string LatencyClockName(const std::string& clock_kind) {
  if (clock_kind.empty()) return "clock not recorded";
  switch (ClockKindNamed(clock_kind)) {
    case ClockKind::kSimCycles:
      return "simulated RT700";
    case ClockKind::kSimNpuCycles:
      return "simulated RT700 NPU";
    case ClockKind::kDwtCycles:
      return "DWT cycles on the board";
    case ClockKind::kHostWall:
      return "host wall clock";
    case ClockKind::kQemuIcount:
      return "QEMU instruction count";
    case ClockKind::kQemuVirtualTime:
      return "QEMU virtual time";
    case ClockKind::kUnknown:
      break;
  }
  // "unknown" (ClockKindName's), or a serial board's timer in its own words.
  return clock_kind == "unknown" ? "clock not recorded" : clock_kind;
}

std::string InferenceClockText(const std::string& clock_kind) {
  if (clock_kind.empty() || clock_kind == "unknown") return "clock not recorded";
  std::string text = "clock: " + LatencyClockName(clock_kind);
  // QEMU's figures are the emulator's, not the board's: say so next to the number.
  if (clock_kind == "qemu-icount" || clock_kind == "qemu-virtual-time") {
    text += ", not the board's time";
  }
  return text;
}

namespace {

// Why a clock of this kind gives no board time (QEMU's), or null when it does.
const char* ClockGivesNoTime(const std::string& clock_kind) {
  switch (ClockKindNamed(clock_kind)) {
    case ClockKind::kQemuIcount:
      return "a QEMU board counts instructions, not time";
    case ClockKind::kQemuVirtualTime:
      return "QEMU's virtual time follows the host, not the board";
    default:
      return nullptr;
  }
}

}  // namespace

void MeasureLatency(double us, const std::string& clock_kind, BudgetMeasurements& measured) {
  if (const char* why = ClockGivesNoTime(clock_kind)) {
    measured.latency_missing = why;
    return;
  }
  if (!(us > 0)) return;
  measured.latency_us = us;
  if (!clock_kind.empty()) measured.latency_clock = LatencyClockName(clock_kind);
}

void NoLatencyToJudge(const std::string& clock_kind, BudgetMeasurements& measured) {
  if (ClockGivesNoTime(clock_kind) != nullptr) return;  // that failure stays: see the header
  measured.latency_us.reset();
  measured.latency_not_judged = "no inference produced output yet";
}

std::vector<BudgetCheck> CheckBudgets(const BudgetLimits& limits,
                                      const BudgetMeasurements& measured) {
  std::vector<BudgetCheck> checks;
  if (limits.max_latency_us) {
    checks.push_back(MakeCheck("latency", "us", "<=", *limits.max_latency_us, measured.latency_us,
                               measured.latency_missing));
    if (measured.latency_us) checks.back().clock = measured.latency_clock;
    if (!measured.latency_not_judged.empty()) {
      checks.back().passed = true;
      checks.back().detail = measured.latency_not_judged;
    }
  }
  if (limits.max_sram_bytes) {
    checks.push_back(MakeCheck("sram", "bytes", "<=", static_cast<double>(*limits.max_sram_bytes),
                               measured.sram_bytes, measured.report_missing));
  }
  if (limits.max_flash_bytes) {
    checks.push_back(MakeCheck("flash", "bytes", "<=", static_cast<double>(*limits.max_flash_bytes),
                               measured.flash_bytes, measured.report_missing));
  }
  if (limits.min_npu_macs_percent) {
    checks.push_back(MakeCheck("npu_macs", "%", ">=", *limits.min_npu_macs_percent,
                               measured.npu_macs_percent, measured.report_missing));
  }
  return checks;
}

bool AllPassed(const std::vector<BudgetCheck>& checks) {
  for (const BudgetCheck& check : checks) {
    if (!check.passed) return false;
  }
  return true;
}

std::string DescribeCheck(const BudgetCheck& check) {
  return check.name + " " + MeasuredText(check) + " " + check.comparison + " " +
         ValueText(check.limit, check.unit) + ": " + (check.passed ? "pass" : "FAIL");
}

std::string FailedBudgetsMessage(const std::vector<BudgetCheck>& checks) {
  std::string message;
  for (const BudgetCheck& check : checks) {
    if (check.passed) continue;
    message += message.empty() ? "budget failed: " : "; ";
    message += check.name + " " + MeasuredText(check);
    if (check.measured)
      message += (IsMinimum(check) ? " < " : " > ") + ValueText(check.limit, check.unit);
  }
  return message;
}

}  // namespace boardlab::run
