#pragma once

// The cases of a many-case job (v1::RunSpec.cases, docs/client.md "Many cases in one job"): what
// the server checks at submit and after compiling. The aggregate it stores with the job is
// proto/support/case_results.h's SummarizeCases.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "boardlab/v1/types.pb.h"

namespace boardlab::server {

/// InvalidArgument when the cases cannot be run as given: more than run::kMaxCases, together
/// with the single-run inputs or expected outputs, a bad or repeated name, an input without a
/// blob or seed, expected outputs for some cases only, or with expect_reference.
absl::Status ValidateCases(const v1::RunSpec& run);

/// InvalidArgument naming the case when one does not give every input of the model, gives
/// expected outputs other than one per model output, or a blob of the wrong size.
absl::Status CheckCasesFitModel(const v1::RunSpec& run, const std::vector<int64_t>& input_bytes,
                                const std::vector<int64_t>& output_bytes);

/// Every digest the cases name (inputs with a blob, expected outputs), each once.
std::vector<v1::Digest> CaseBlobs(const v1::RunSpec& run);

}  // namespace boardlab::server
