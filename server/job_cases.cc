#include "server/job_cases.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/cli/run_cases.h"

namespace boardlab::server {
namespace {

absl::Status CaseError(const v1::RunCase& c, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("case '", c.name(), "': ", what));
}

}  // namespace

absl::Status ValidateCases(const v1::RunSpec& run) {
  if (run.cases_size() == 0) return absl::OkStatus();
  if (run.cases_size() > static_cast<int>(run::kMaxCases)) {
    return absl::InvalidArgumentError(absl::StrCat(run.cases_size(), " cases; a job takes at most ",
                                                   run::kMaxCases,
                                                   ": split them into several jobs"));
  }
  if (run.inputs_size() > 0 || run.expected_size() > 0) {
    return absl::InvalidArgumentError(
        "give the inputs and expected outputs in cases, or in inputs and expected, not both");
  }
  std::set<std::string> names;
  const bool verified = run.cases(0).expected_size() > 0;
  for (const v1::RunCase& c : run.cases()) {
    if (std::string why = run::InvalidCaseName(c.name()); !why.empty()) {
      return absl::InvalidArgumentError(why);
    }
    if (!names.insert(c.name()).second) return CaseError(c, "the name is given twice");
    for (int i = 0; i < c.inputs_size(); ++i) {
      if (c.inputs(i).source_case() == v1::InputSpec::SOURCE_NOT_SET) {
        return CaseError(c, absl::StrCat("input ", i, " has neither a blob nor a seed"));
      }
    }
    if ((c.expected_size() > 0) != verified) {
      return CaseError(c, "give expected outputs for every case or for none");
    }
  }
  if (verified && run.expect_reference()) {
    return absl::InvalidArgumentError("give expected outputs or expect_reference, not both");
  }
  return absl::OkStatus();
}

absl::Status CheckCasesFitModel(const v1::RunSpec& run, const std::vector<int64_t>& input_bytes,
                                const std::vector<int64_t>& output_bytes) {
  for (const v1::RunCase& c : run.cases()) {
    if (c.inputs_size() != static_cast<int>(input_bytes.size())) {
      return CaseError(
          c, absl::StrCat(c.inputs_size(), " inputs given; the model has ", input_bytes.size()));
    }
    if (c.expected_size() > 0 && c.expected_size() != static_cast<int>(output_bytes.size())) {
      return CaseError(c, absl::StrCat(c.expected_size(), " expected outputs given; the model has ",
                                       output_bytes.size(), " outputs"));
    }
    for (int i = 0; i < c.inputs_size(); ++i) {
      if (c.inputs(i).has_blob() && c.inputs(i).blob().size_bytes() != input_bytes[i]) {
        return CaseError(c,
                         absl::StrCat("input ", i, " has ", c.inputs(i).blob().size_bytes(),
                                      " bytes; the model's input ", i, " needs ", input_bytes[i]));
      }
    }
    for (int i = 0; i < c.expected_size(); ++i) {
      if (c.expected(i).size_bytes() != output_bytes[i]) {
        return CaseError(c,
                         absl::StrCat("expected output ", i, " has ", c.expected(i).size_bytes(),
                                      " bytes; the model's output ", i, " has ", output_bytes[i]));
      }
    }
  }
  return absl::OkStatus();
}

std::vector<v1::Digest> CaseBlobs(const v1::RunSpec& run) {
  std::vector<v1::Digest> blobs;
  std::set<std::string> seen;
  const auto add = [&](const v1::Digest& digest) {
    if (seen.insert(digest.sha256()).second) blobs.push_back(digest);
  };
  for (const v1::RunCase& c : run.cases()) {
    for (const v1::InputSpec& input : c.inputs()) {
      if (input.has_blob()) add(input.blob());
    }
    for (const v1::Digest& expected : c.expected()) add(expected);
  }
  return blobs;
}

}  // namespace boardlab::server
