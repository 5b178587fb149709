#include "server/web/job_page.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "proto/support/case_results.h"
#include "proto/support/job_files.h"
#include "runtime/cli/budget_checks.h"
#include "server/web/html.h"
#include "server/web/page_layout.h"

namespace boardlab::server::web {
namespace {

using nlohmann::json;

constexpr int kLogLines = 200;

std::string Fact(const std::string& term, const std::string& html) {
  return absl::StrCat("<dt>", term, "</dt><dd>", html, "</dd>");
}

std::string Duration(int64_t ms) {
  if (ms < 1000) return absl::StrCat(ms, " ms");
  if (ms < 60'000) return absl::StrFormat("%.1f s", ms / 1000.0);
  return absl::StrFormat("%dm%02ds", ms / 60'000, (ms / 1000) % 60);
}

std::string InferenceText(const v1::Job& job) {
  if (job.inference_us() <= 0) return "-";
  std::string out = absl::StrFormat("%.1f us", job.inference_us());
  // A many-case job's figure is its slowest case's, as the client says (what a budget judges).
  if (job.cases_size() > 0) {
    absl::StrAppend(&out, " (", HtmlEscape(api::SlowestCaseText(job)), ")");
  } else if (job.inference_cycles() > 0) {
    absl::StrAppend(&out, ", ", job.inference_cycles(), " cycles");
  }
  if (job.spec().run().iterations() > 1) {
    absl::StrAppend(&out, " (", api::IterationsText(job), ")");
  }
  // A simulated or emulated figure must not pass for the board's time.
  absl::StrAppend(&out, " (", HtmlEscape(run::InferenceClockText(job.inference_clock())), ")");
  return out;
}

std::string Facts(const v1::Job& job, int64_t now_ms) {
  const v1::JobSpec& spec = job.spec();
  std::string out = "<dl class=\"facts\">";
  out += Fact("Tenant", HtmlEscape(job.tenant()));
  out += Fact("Name", spec.name().empty() ? "-" : HtmlEscape(spec.name()));
  out += Fact("Model", absl::StrCat("<code>", HtmlEscape(spec.model().sha256()), "</code> (",
                                    BytesText(spec.model().size_bytes()), ")"));
  const std::string& type = spec.selector().board_type();
  out += Fact("Board type", type.empty() ? "default" : HtmlEscape(type));
  out += Fact("Board", job.board_id().empty() ? "-"
                                              : absl::StrCat(HtmlEscape(job.board_id()),
                                                             " (attempt ", job.attempt(), ")"));
  if (job.queue_position() > 0) {
    out += Fact("Queue", absl::StrCat(job.queue_position(), " of ", job.queue_length()));
  }
  out += Fact("Submitted", absl::StrCat(TimeText(job.submit_time_ms()), " (",
                                        AgeText(job.submit_time_ms(), now_ms), " ago)"));
  out += Fact("Started", TimeText(job.start_time_ms()));
  out += Fact("Ended", TimeText(job.end_time_ms()));
  if (job.end_time_ms() > 0 && job.submit_time_ms() > 0) {
    out += Fact("Took", Duration(job.end_time_ms() - job.submit_time_ms()));
  }
  if (job.state() == v1::JOB_STATE_DONE) {
    out += Fact("Compile", job.compile_cache_hit() ? "cache hit" : "compiled");
  }
  out += Fact("Inference", InferenceText(job));
  return out + "</dl>\n";
}

const Column kCheck{"Check"}, kResult{"Result"}, kMeasured{"Measured", Column::kNumber},
    kLimit{"Limit", Column::kNumber}, kDetail{"Detail"};

std::string PassFail(bool passed) { return Badge(passed ? "pass" : "FAIL"); }

// A limit or a measurement as people write it: 1000000, 612.5, 0.25.
std::string Number(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  return absl::StrFormat("%.6g", value);
}

std::string Integer(double value) { return absl::StrCat(static_cast<int64_t>(value)); }

std::string OutputRow(const v1::OutputCheck& check, int atol) {
  return absl::StrCat("<tr>", Cell(kCheck, absl::StrCat("output ", check.index())),
                      Cell(kResult, PassFail(check.passed())),
                      Cell(kMeasured, absl::StrCat("max abs diff ", check.max_abs_diff())),
                      Cell(kLimit, absl::StrCat("&lt;= ", atol)), Cell(kDetail, ""), "</tr>\n");
}

std::string BudgetRow(const v1::BudgetCheck& check) {
  const std::string unit = HtmlEscape(check.unit());
  std::string detail = HtmlEscape(check.detail());
  if (!check.clock().empty()) {
    absl::StrAppend(&detail, detail.empty() ? "" : "; ", "clock: ", HtmlEscape(check.clock()));
  }
  return absl::StrCat(
      "<tr>", Cell(kCheck, HtmlEscape(check.name())), Cell(kResult, PassFail(check.passed())),
      Cell(kMeasured, check.has_measured() ? absl::StrCat(Number(check.measured()), " ", unit)
                                           : "not measured"),
      Cell(kLimit,
           absl::StrCat(HtmlEscape(check.comparison()), " ", Number(check.limit()), " ", unit)),
      Cell(kDetail, detail), "</tr>\n");
}

std::string ChecksSection(const v1::Job& job) {
  std::string out = "<section><h2>Checks</h2>\n";
  if (job.checks().empty() && job.budget_checks().empty()) {
    return out + "<p class=\"muted\">No checks: the job has not run on a board.</p></section>\n";
  }
  std::string rows;
  for (const v1::OutputCheck& check : job.checks()) {
    rows += OutputRow(check, job.spec().run().atol());
  }
  for (const v1::BudgetCheck& check : job.budget_checks()) rows += BudgetRow(check);
  return out + CardsTable({kCheck, kResult, kMeasured, kLimit, kDetail}, rows) + "</section>\n";
}

const Column kCase{"Case", Column::kLongName}, kMaxDiff{"Max abs diff", Column::kNumber},
    kTop1{"Top-1 (expected)"}, kMeanTime{"Inference", Column::kNumber}, kOutputs{"Outputs"};

std::string CaseResultBadge(const run::CaseOutcome& outcome) {
  if (outcome.no_output) return Badge("NO_OUTPUT");
  if (!outcome.verified()) return Badge("UNVERIFIED");
  return PassFail(outcome.passed());
}

std::string CaseOutputLinks(const std::string& job_id, const v1::CaseResult& c) {
  std::vector<std::string> links;
  for (int i = 0; i < c.outputs_size(); ++i) {
    const std::string name = api::CaseOutputFileName(c.name(), i);
    links.push_back(absl::StrCat("<a href=\"/jobs/", UrlEncode(job_id), "/files/", UrlEncode(name),
                                 "\">", HtmlEscape(name), "</a>"));
  }
  return links.empty() ? "-" : absl::StrJoin(links, "<br>");
}

std::string CaseRow(const std::string& job_id, const v1::CaseResult& c) {
  const run::CaseOutcome outcome = api::CaseOutcomeOf(c);
  const std::optional<double> diff = outcome.max_abs_diff();
  const std::string top1 = outcome.top1 && outcome.top1_expected
                               ? absl::StrCat(*outcome.top1, " (", *outcome.top1_expected, ")")
                               : "-";
  return absl::StrCat("<tr>", Cell(kCase, HtmlEscape(c.name())),
                      Cell(kResult, CaseResultBadge(outcome)),
                      Cell(kMaxDiff, diff ? Number(*diff) : "-"), Cell(kTop1, top1),
                      Cell(kMeanTime, outcome.us ? absl::StrFormat("%.1f us", *outcome.us) : "-"),
                      Cell(kOutputs, CaseOutputLinks(job_id, c)), "</tr>\n");
}

// A many-case job: the aggregate as `boardlab watch` prints it, then every case (a page is read,
// not scrolled past, so unlike the terminal no passing case is left out).
std::string CasesSection(const v1::Job& job) {
  if (job.cases().empty()) return "";
  std::string rows;
  for (const v1::CaseResult& c : job.cases()) rows += CaseRow(job.id(), c);
  std::string clock;
  if (job.case_summary().has_slowest_us()) {
    clock = absl::StrCat(
        "<p class=\"muted\">Inference is each case's mean of its inferences that produced "
        "output (",
        HtmlEscape(run::InferenceClockText(job.inference_clock())), ").</p>");
  }
  return absl::StrCat(
      "<section><h2>Cases</h2>\n<p>",
      HtmlEscape(run::DescribeSummary(api::SummaryOf(job.case_summary()))), "</p>\n", clock,
      CardsTable({kCase, kResult, kMaxDiff, kTop1, kMeanTime, kOutputs}, rows), "</section>\n");
}

// Report fields, read without trusting their types (a report is a file like any other).
std::string Text(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number()) return it->dump();
  return "";
}

double NumberOf(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0;
}

const Column kIndex{"#", Column::kNumber}, kOp{"Op"}, kOpName{"Tensor", Column::kLongName},
    kUnit{"Unit"}, kPartition{"Partition", Column::kNumber}, kMacs{"MACs", Column::kNumber},
    kCycles{"Est. cycles", Column::kNumber}, kMicros{"Est. us", Column::kNumber},
    kReason{"Why on the CPU"};

// "3" for an op of the main graph; "1:0" for op 0 of subgraph 1, which IF or WHILE calls.
std::string OpIndexText(const json& op) {
  const std::string subgraph = Text(op, "subgraph");
  return subgraph.empty() ? Text(op, "index") : absl::StrCat(subgraph, ":", Text(op, "index"));
}

std::string OpRow(const json& op) {
  const std::string unit = Text(op, "unit");
  const double partition = NumberOf(op, "partition");
  return absl::StrCat(
      "<tr>", Cell(kIndex, HtmlEscape(OpIndexText(op))), Cell(kOp, HtmlEscape(Text(op, "type"))),
      Cell(kOpName, HtmlEscape(Text(op, "name"))), Cell(kUnit, unit.empty() ? "-" : Badge(unit)),
      Cell(kPartition, partition >= 0 && unit == "NPU" ? Integer(partition) : "-"),
      Cell(kMacs, Integer(NumberOf(op, "macs"))), Cell(kCycles, Integer(NumberOf(op, "cycles"))),
      Cell(kMicros, absl::StrFormat("%.1f", NumberOf(op, "us"))),
      Cell(kReason, HtmlEscape(Text(op, "reason"))), "</tr>\n");
}

std::string PartitionSummary(const json& report) {
  const json totals = report.value("totals", json::object());
  const json memory = report.value("memory", json::object());
  if (!totals.is_object() || !memory.is_object()) return "";
  return absl::StrFormat(
      "<p>Ops: %s on the NPU in %s partition(s), %s on the CPU; %.1f%% of %s MACs on the "
      "NPU. Estimated latency %.1f us on %s.</p><p>SRAM %s of %s (arena %s, weights %s in "
      "%s).</p>\n",
      Integer(NumberOf(totals, "npu_ops")), Integer(NumberOf(totals, "npu_partitions")),
      Integer(NumberOf(totals, "cpu_ops")), NumberOf(totals, "npu_macs_percent"),
      Integer(NumberOf(totals, "macs")), NumberOf(totals, "estimated_latency_us"),
      HtmlEscape(Text(report, "target")),
      BytesText(static_cast<int64_t>(NumberOf(memory, "sram_used_bytes"))),
      BytesText(static_cast<int64_t>(NumberOf(memory, "sram_budget_bytes"))),
      BytesText(static_cast<int64_t>(NumberOf(memory, "arena_bytes"))),
      BytesText(static_cast<int64_t>(NumberOf(memory, "weight_bytes"))),
      HtmlEscape(Text(memory, "weights_placement")));
}

std::string TimelineSection(const JobPageData& data) {
  std::string out = "<section><h2>Timeline</h2>\n";
  if (data.timeline_svg.empty()) {
    return absl::StrCat(out, "<p class=\"muted\">", HtmlEscape(data.timeline_note),
                        "</p></section>\n");
  }
  return absl::StrCat(out,
                      "<p class=\"muted\">Hover a slice for its op, unit and cycles; "
                      "<code>trace.json</code> below opens in Perfetto.</p>"
                      "<div class=\"scroll timeline\">",
                      data.timeline_svg, "</div></section>\n");
}

const Column kFile{"File", Column::kLongName}, kSize{"Size", Column::kNumber};

std::string FilesSection(const JobPageData& data) {
  std::string rows;
  const std::string base = absl::StrCat("/jobs/", UrlEncode(data.job.id()), "/files/");
  for (const JobFileLink& file : data.files) {
    absl::StrAppend(&rows, "<tr>",
                    Cell(kFile, absl::StrCat("<a href=\"", base, UrlEncode(file.name), "\">",
                                             HtmlEscape(file.name), "</a>")),
                    Cell(kSize, file.size_bytes >= 0 ? BytesText(file.size_bytes) : "-"),
                    "</tr>\n");
  }
  return absl::StrCat("<section><h2>Files</h2>\n", PlainTable({kFile, kSize}, rows),
                      "</section>\n");
}

std::string LogSection(const std::string& log_text) {
  if (log_text.empty()) return "";
  int omitted = 0;
  const std::string tail = LogTail(log_text, kLogLines, &omitted);
  return absl::StrCat(
      "<section><h2>Board log</h2><details><summary>log.txt",
      omitted > 0 ? absl::StrCat(" (last ", kLogLines, " lines; ", omitted, " before them)") : "",
      "</summary><pre class=\"log\">", HtmlEscape(tail), "</pre></details></section>\n");
}

}  // namespace

std::string PartitionSection(const json& report) {
  std::string out = "<section><h2>Partition</h2>\n";
  const json ops = report.is_object() ? report.value("ops", json()) : json();
  if (!ops.is_array()) {
    return out +
           "<p class=\"muted\">No compile report: the model was not compiled.</p>"
           "</section>\n";
  }
  std::string rows;
  for (const json& op : ops) {
    if (op.is_object()) rows += OpRow(op);
  }
  return absl::StrCat(
      out, PartitionSummary(report),
      CardsTable({kIndex, kOp, kOpName, kUnit, kPartition, kMacs, kCycles, kMicros, kReason}, rows),
      "</section>\n");
}

std::string LogTail(const std::string& text, int max_lines, int* omitted) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();  // the last line's newline
  *omitted = std::max(0, static_cast<int>(lines.size()) - max_lines);
  return absl::StrJoin(lines.begin() + *omitted, lines.end(), "\n");
}

std::string JobPageBody(const JobPageData& data) {
  const v1::Job& job = data.job;
  const std::string verdict = VerdictText(job.result());
  std::string out =
      absl::StrCat("<h1>Job ", HtmlEscape(job.id()), " ",
                   verdict.empty() ? Badge(JobStateText(job.state())) : Badge(verdict), "</h1>\n");
  if (!job.message().empty()) {
    // A run without output yet did not fail: its message explains, it does not alarm.
    const bool fine =
        job.result() == v1::JOB_RESULT_PASS || job.result() == v1::JOB_RESULT_NO_OUTPUT;
    absl::StrAppend(&out, "<p class=\"", fine ? "" : "error", "\">", HtmlEscape(job.message()),
                    "</p>\n");
  }
  absl::StrAppend(&out, Facts(job, data.now_ms), ChecksSection(job), CasesSection(job),
                  PartitionSection(data.report), TimelineSection(data), FilesSection(data),
                  LogSection(data.log_text));
  return out;
}

}  // namespace boardlab::server::web
