#pragma once

// The cases of a many-case job as the API carries them (v1::CaseResult, v1::CaseSummary) and as
// runtime/cli/run_cases.h judges and words them, so that the server's aggregate and the lines
// the client prints are the ones boardlab-run prints for the same cases.
//
//   *job.mutable_case_summary() = api::SummarizeCases(job.cases());          // server
//   out << run::DescribeCase(api::CaseOutcomeOf(job.cases(0)));              // client
//   out << run::DescribeSummary(api::SummaryOf(job.case_summary()));

#include <google/protobuf/repeated_ptr_field.h>

#include "boardlab/v1/types.pb.h"
#include "runtime/cli/run_cases.h"

namespace boardlab::api {

/// The outcome of one case: its output checks, top-1 and time (0 us: the clock gave none).
run::CaseOutcome CaseOutcomeOf(const v1::CaseResult& result);

/// run::Summarize over the cases, as the API's message.
v1::CaseSummary SummarizeCases(const google::protobuf::RepeatedPtrField<v1::CaseResult>& cases);

/// The message back as run_cases.h's summary (for DescribeSummary).
run::CaseSummary SummaryOf(const v1::CaseSummary& summary);

}  // namespace boardlab::api
