#pragma once

// JUnit XML test reports of CI gates (`--junit FILE` on submit, watch and diff), the format
// GitLab, Jenkins and GitHub's test-report actions display: one <testsuite> per job (or diff),
// one <testcase> per check (the run itself, each output, each budget, each diff gate). A check
// that failed is a <failure>; a check that could not be made (the job never ran) is an <error>.
//
// Usage:
//   RETURN_IF_ERROR(WriteJunitFile("report.xml", {JobSuite(job)}));

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "boardlab/v1/types.pb.h"

namespace boardlab::cli {

struct GateCase {
  std::string name;  // "output 0", "budget latency", "run"
  bool passed = true;
  bool error = false;  // not passed because the check could not be made
  // Passed but not judged (<skipped>): the run gave no output to compare ("no output yet").
  bool skipped = false;
  std::string message;  // one line: what failed (attribute of <failure>/<error>)
  std::string text;     // the longer story (body of <failure>/<error>), may be empty
  double seconds = 0;
};

struct GateSuite {
  std::string name;          // "boardlab job j00000001 (kws.tflite)"
  std::string classname;     // testcase classname: "boardlab.kws.tflite"
  int64_t timestamp_ms = 0;  // when it started; 0 = unknown (attribute left out)
  double seconds = 0;
  std::vector<std::pair<std::string, std::string>> properties;
  std::vector<GateCase> cases;
  std::string system_out;  // e.g. the verdict block as the terminal shows it
};

/// The suite of a finished job: "run" (an <error> unless the job ran on a board: PASS or FAIL),
/// one case per output check and one per budget check.
GateSuite JobSuite(const v1::Job& job);

/// The document: <testsuites> with the totals, then each suite. Text that is not valid in XML
/// 1.0 (control characters, invalid UTF-8) is replaced by '?', so the file always parses.
std::string JunitXml(const std::vector<GateSuite>& suites);

/// Writes JunitXml to `path`. Errors: Internal "cannot write '<path>': ...".
absl::Status WriteJunitFile(const std::string& path, const std::vector<GateSuite>& suites);

}  // namespace boardlab::cli
