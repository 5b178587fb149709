#include "proto/support/case_results.h"

namespace boardlab::api {

run::CaseOutcome CaseOutcomeOf(const v1::CaseResult& result) {
  run::CaseOutcome outcome;
  outcome.name = result.name();
  for (const v1::OutputCheck& check : result.checks()) {
    if (check.index() < 0) continue;
    const auto index = static_cast<size_t>(check.index());
    if (outcome.outputs.size() <= index) outcome.outputs.resize(index + 1);
    run::OutputVerdict& verdict = outcome.outputs[index];
    verdict.checked = true;
    verdict.pass = check.passed();
    verdict.max_abs_diff = check.max_abs_diff();
  }
  if (result.has_top1() && result.has_top1_expected()) {
    outcome.top1 = result.top1();
    outcome.top1_expected = result.top1_expected();
  }
  if (result.inference_us() > 0) outcome.us = result.inference_us();
  outcome.ticks = result.ticks();
  outcome.no_output = result.no_output();
  return outcome;
}

v1::CaseSummary SummarizeCases(const google::protobuf::RepeatedPtrField<v1::CaseResult>& cases) {
  std::vector<run::CaseOutcome> outcomes;
  for (const v1::CaseResult& result : cases) outcomes.push_back(CaseOutcomeOf(result));
  const run::CaseSummary summary = run::Summarize(outcomes);
  v1::CaseSummary out;
  out.set_cases(static_cast<int32_t>(summary.cases));
  out.set_passed(static_cast<int32_t>(summary.passed));
  out.set_no_output(static_cast<int32_t>(summary.no_output));
  out.set_verified(static_cast<int32_t>(summary.verified));
  if (summary.max_abs_diff) out.set_max_abs_diff(*summary.max_abs_diff);
  out.set_max_abs_diff_case(summary.max_abs_diff_case);
  out.set_top1_compared(static_cast<int32_t>(summary.top1_compared));
  out.set_top1_agreed(static_cast<int32_t>(summary.top1_agreed));
  if (summary.slowest_us) out.set_slowest_us(*summary.slowest_us);
  out.set_slowest_case(summary.slowest_case);
  return out;
}

run::CaseSummary SummaryOf(const v1::CaseSummary& summary) {
  run::CaseSummary out;
  out.cases = static_cast<size_t>(summary.cases());
  out.passed = static_cast<size_t>(summary.passed());
  out.no_output = static_cast<size_t>(summary.no_output());
  out.verified = static_cast<size_t>(summary.verified());
  if (summary.has_max_abs_diff()) out.max_abs_diff = summary.max_abs_diff();
  out.max_abs_diff_case = summary.max_abs_diff_case();
  out.top1_compared = static_cast<size_t>(summary.top1_compared());
  out.top1_agreed = static_cast<size_t>(summary.top1_agreed());
  if (summary.has_slowest_us()) out.slowest_us = summary.slowest_us();
  out.slowest_case = summary.slowest_case();
  return out;
}

std::string SlowestCaseText(const v1::Job& job) {
  if (job.cases_size() == 0) return "";
  const int no_output = job.case_summary().no_output();
  return "slowest of " + std::to_string(job.cases_size() - no_output) + " cases" +
         (no_output > 0 ? " with output" : "") + ": " + job.case_summary().slowest_case();
}

std::string IterationsText(const v1::Job& job) {
  const std::string iterations = std::to_string(job.spec().run().iterations()) + " iterations";
  if (job.cases_size() == 0) return "mean of " + iterations;
  return "mean of the inferences with output of " + iterations;
}

}  // namespace boardlab::api
