#pragma once

// The cases of a many-case job as the API carries them (v1::CaseResult, v1::CaseSummary) and as
// runtime/cli/run_cases.h judges and words them, so that the server's aggregate and the lines
// the client prints are the ones boardlab-run prints for the same cases.
//
//   *job.mutable_case_summary() = api::SummarizeCases(job.cases());          // server
//   out << run::DescribeCase(api::CaseOutcomeOf(job.cases(0)));              // client
//   out << run::DescribeSummary(api::SummaryOf(job.case_summary()));

#include <google/protobuf/repeated_ptr_field.h>

#include <string>

#include "boardlab/v1/types.pb.h"
#include "runtime/cli/run_cases.h"

namespace boardlab::api {

/// The outcome of one case: its output checks, top-1 and time (0 us: the clock gave none).
run::CaseOutcome CaseOutcomeOf(const v1::CaseResult& result);

/// run::Summarize over the cases, as the API's message.
v1::CaseSummary SummarizeCases(const google::protobuf::RepeatedPtrField<v1::CaseResult>& cases);

/// The message back as run_cases.h's summary (for DescribeSummary).
run::CaseSummary SummaryOf(const v1::CaseSummary& summary);

/// Which case a many-case job's inference_us is, as the client and the web page show it next to
/// the figure: "slowest of 3 cases: case0", or "slowest of 2 cases with output: case1" when
/// some case produced no output (the latency budget judges only the cases with output). Empty
/// for a job without cases.
std::string SlowestCaseText(const v1::Job& job);

/// What a job's inference_us is the mean of, when it ran more than one iteration: "mean of 3
/// iterations"; a many-case job's cases time only their inferences that produced output: "mean
/// of the inferences with output of 3 iterations".
std::string IterationsText(const v1::Job& job);

}  // namespace boardlab::api
