#include "cli/junit.h"

#include <libxml/xmlwriter.h>

#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cli/exit_codes.h"
#include "cli/file_io.h"
#include "cli/tables.h"
#include "proto/support/case_results.h"
#include "runtime/cli/budget_checks.h"
#include "runtime/cli/run_cases.h"
#include "runtime/cli/xml_chars.h"

namespace boardlab::cli {
namespace {

// Board logs and messages may hold any bytes; the report must still parse.
std::string XmlSafe(std::string_view text) {
  std::string safe;
  safe.reserve(text.size());
  for (std::string_view c : run::XmlChars(text)) safe.append(c);
  return safe;
}

const xmlChar* X(const char* text) { return reinterpret_cast<const xmlChar*>(text); }

// xmlTextWriter over a memory buffer; every call's result is folded into ok().
class XmlWriter {
 public:
  XmlWriter() : buffer_(xmlBufferCreate()), writer_(xmlNewTextWriterMemory(buffer_, 0)) {
    if (writer_ == nullptr) ok_ = false;
    if (ok_) Check(xmlTextWriterSetIndent(writer_, 1));
    if (ok_) Check(xmlTextWriterStartDocument(writer_, nullptr, "UTF-8", nullptr));
  }
  ~XmlWriter() {
    if (writer_ != nullptr) xmlFreeTextWriter(writer_);
    xmlBufferFree(buffer_);
  }
  XmlWriter(const XmlWriter&) = delete;
  XmlWriter& operator=(const XmlWriter&) = delete;

  void Start(const char* element) {
    if (ok_) Check(xmlTextWriterStartElement(writer_, X(element)));
  }
  void Attribute(const char* name, std::string_view value) {
    if (ok_) Check(xmlTextWriterWriteAttribute(writer_, X(name), X(XmlSafe(value).c_str())));
  }
  void Text(std::string_view text) {
    if (ok_) Check(xmlTextWriterWriteString(writer_, X(XmlSafe(text).c_str())));
  }
  void End() {
    if (ok_) Check(xmlTextWriterEndElement(writer_));
  }
  /// The document, or "" when libxml2 failed (out of memory).
  std::string Finish() {
    if (ok_) Check(xmlTextWriterEndDocument(writer_));
    if (ok_) Check(xmlTextWriterFlush(writer_));
    if (!ok_) return "";
    return std::string(reinterpret_cast<const char*>(xmlBufferContent(buffer_)),
                       static_cast<size_t>(xmlBufferLength(buffer_)));
  }

 private:
  void Check(int result) { ok_ = ok_ && result >= 0; }

  xmlBufferPtr buffer_;
  xmlTextWriterPtr writer_;
  bool ok_ = true;
};

std::string SecondsText(double seconds) { return absl::StrFormat("%.3f", seconds); }

struct Totals {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
};

Totals CountCases(const std::vector<GateSuite>& suites) {
  Totals totals;
  for (const GateSuite& suite : suites) {
    totals.seconds += suite.seconds;
    for (const GateCase& test : suite.cases) {
      ++totals.tests;
      if (!test.passed) ++(test.error ? totals.errors : totals.failures);
      if (test.passed && test.skipped) ++totals.skipped;
    }
  }
  return totals;
}

void WriteCounts(XmlWriter& xml, const Totals& totals) {
  xml.Attribute("tests", absl::StrCat(totals.tests));
  xml.Attribute("failures", absl::StrCat(totals.failures));
  xml.Attribute("errors", absl::StrCat(totals.errors));
  xml.Attribute("skipped", absl::StrCat(totals.skipped));
  xml.Attribute("time", SecondsText(totals.seconds));
}

void WriteCase(XmlWriter& xml, const GateSuite& suite, const GateCase& test) {
  xml.Start("testcase");
  xml.Attribute("name", test.name);
  xml.Attribute("classname", suite.classname);
  xml.Attribute("time", SecondsText(test.seconds));
  if (!test.passed) {
    xml.Start(test.error ? "error" : "failure");
    xml.Attribute("message", test.message);
    xml.Attribute("type", test.error ? "error" : "failure");
    if (!test.text.empty()) xml.Text(test.text);
    xml.End();
  } else if (test.skipped) {
    xml.Start("skipped");
    xml.Attribute("message", test.message);
    xml.End();
  }
  xml.End();
}

void WriteSuite(XmlWriter& xml, const GateSuite& suite) {
  xml.Start("testsuite");
  xml.Attribute("name", suite.name);
  Totals totals = CountCases({suite});
  WriteCounts(xml, totals);
  if (suite.timestamp_ms > 0) {
    xml.Attribute("timestamp",
                  absl::FormatTime("%Y-%m-%dT%H:%M:%S", absl::FromUnixMillis(suite.timestamp_ms),
                                   absl::UTCTimeZone()));
  }
  if (!suite.properties.empty()) {
    xml.Start("properties");
    for (const auto& [name, value] : suite.properties) {
      xml.Start("property");
      xml.Attribute("name", name);
      xml.Attribute("value", value);
      xml.End();
    }
    xml.End();
  }
  for (const GateCase& test : suite.cases) WriteCase(xml, suite, test);
  if (!suite.system_out.empty()) {
    xml.Start("system-out");
    xml.Text(suite.system_out);
    xml.End();
  }
  xml.End();
}

// The job's own case: did it run on a board at all?
GateCase RunCase(const v1::Job& job) {
  GateCase run;
  run.name = "run";
  if (job.submit_time_ms() > 0 && job.end_time_ms() > 0) {
    run.seconds = (job.end_time_ms() - job.submit_time_ms()) / 1000.0;
  }
  const bool ran = job.result() == v1::JOB_RESULT_PASS || job.result() == v1::JOB_RESULT_FAIL ||
                   job.result() == v1::JOB_RESULT_NO_OUTPUT;
  if (ran) return run;
  run.passed = false;
  run.error = true;
  run.message = VerdictName(job.result()) + (job.message().empty() ? "" : ": " + job.message());
  return run;
}

}  // namespace

GateSuite JobSuite(const v1::Job& job) {
  GateSuite suite;
  const std::string& model = job.spec().name();
  suite.name = absl::StrCat("boardlab job ", job.id(), model.empty() ? "" : " (" + model + ")");
  suite.classname = absl::StrCat("boardlab.", model.empty() ? job.id() : model);
  suite.timestamp_ms = job.submit_time_ms();
  if (job.submit_time_ms() > 0 && job.end_time_ms() > 0) {
    suite.seconds = (job.end_time_ms() - job.submit_time_ms()) / 1000.0;
  }
  suite.properties = {{"job", job.id()},
                      {"verdict", VerdictName(job.result())},
                      {"board", job.board_id()},
                      {"board_type", job.spec().selector().board_type()}};
  if (job.inference_us() > 0) {
    suite.properties.emplace_back("inference_us", absl::StrFormat("%.3f", job.inference_us()));
    // The figure means nothing without what timed it (a simulator's model, QEMU instructions).
    suite.properties.emplace_back("inference_clock", run::LatencyClockName(job.inference_clock()));
  }
  suite.cases.push_back(RunCase(job));
  // A single run without output yet: its outputs were not compared, which a CI server should
  // show as such, not as a pass. (A many-case job says it per case below.)
  if (job.result() == v1::JOB_RESULT_NO_OUTPUT && job.cases_size() == 0) {
    GateCase outputs;
    outputs.name = "outputs";
    outputs.skipped = true;
    outputs.message = job.message().empty() ? "no output yet" : job.message();
    suite.cases.push_back(std::move(outputs));
  }
  for (const v1::OutputCheck& check : job.checks()) {
    GateCase output;
    output.name = absl::StrCat("output ", check.index());
    output.passed = check.passed();
    if (!check.passed()) {
      output.message =
          absl::StrCat("max abs diff ", check.max_abs_diff(), " > atol ", job.spec().run().atol());
    }
    suite.cases.push_back(std::move(output));
  }
  for (const v1::CaseResult& result : job.cases()) {
    GateCase c;
    c.name = "case " + result.name();
    c.passed = result.passed() || result.no_output();
    c.skipped = result.no_output();
    if (!result.passed()) c.message = run::DescribeCase(api::CaseOutcomeOf(result));
    suite.cases.push_back(std::move(c));
  }
  if (job.cases_size() > 0) {
    const v1::CaseSummary& summary = job.case_summary();
    suite.properties.emplace_back("cases_passed",
                                  absl::StrCat(summary.passed(), "/", summary.cases()));
    if (summary.no_output() > 0) {
      suite.properties.emplace_back("cases_no_output", absl::StrCat(summary.no_output()));
    }
    if (summary.has_max_abs_diff()) {
      suite.properties.emplace_back("max_abs_diff", absl::StrCat(summary.max_abs_diff()));
    }
    if (summary.top1_compared() > 0) {
      suite.properties.emplace_back(
          "top1_agreement_percent",
          absl::StrFormat("%.1f", 100.0 * summary.top1_agreed() / summary.top1_compared()));
    }
  }
  for (const v1::BudgetCheck& check : job.budget_checks()) {
    GateCase budget;
    budget.name = "budget " + check.name();
    budget.passed = check.passed();
    if (!check.passed()) budget.message = BudgetCheckText(check);
    // What timed the latency (a simulator's model is no silicon figure), pass or fail.
    if (!check.clock().empty())
      suite.properties.emplace_back(check.name() + "_clock", check.clock());
    suite.cases.push_back(std::move(budget));
  }
  std::ostringstream verdict;
  PrintVerdict(job, verdict);
  suite.system_out = verdict.str();
  return suite;
}

std::string JunitXml(const std::vector<GateSuite>& suites) {
  XmlWriter xml;
  xml.Start("testsuites");
  xml.Attribute("name", "boardlab");
  WriteCounts(xml, CountCases(suites));
  for (const GateSuite& suite : suites) WriteSuite(xml, suite);
  xml.End();
  return xml.Finish();
}

absl::Status WriteJunitFile(const std::string& path, const std::vector<GateSuite>& suites) {
  const std::string xml = JunitXml(suites);
  if (xml.empty()) {
    return absl::InternalError(absl::StrCat("cannot write '", path, "': libxml2 failed"));
  }
  return WriteFileBytes(path, xml);
}

}  // namespace boardlab::cli
