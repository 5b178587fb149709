#pragma once

// Many input/expected pairs ("cases") in one run of one loaded model: how boardlab-run and the
// boardlab client find them (--inputs DIR --expected DIR, or a --cases manifest), check them
// against the model's tensors before anything runs or is uploaded, and how the per-case
// verdicts add up to the aggregate (docs/client.md, "Many cases in one job").
//
//   std::vector<CaseFiles> cases;
//   std::string error;
//   if (!ReadCaseDirectories("in/", "expected/", io, &cases, &error)) ...   // a usage error
//   std::vector<CaseOutcome> outcomes;
//   ... run each case, JudgeCase(...) its outputs ...
//   std::puts(DescribeSummary(Summarize(outcomes)).c_str());
//   // cases: 4 of 5 passed, max abs diff 7 (case seed2), top-1 agreement 80.0% (4 of 5)
//
// Directory layout: the case name is the file name without ".bin". A file is input i of case
// NAME when it is NAME.input<i>.bin, or NAME.input.bin / NAME.bin for input 0; expected output
// i likewise NAME.output<i>.bin, NAME.output.bin or NAME.bin. Only *.bin files count (files
// starting with '.' neither); in the inputs directory the NAME.output*.bin files are skipped
// and in the expected directory the NAME.input*.bin files, so both may be one directory (then
// plain NAME.bin files are ambiguous and refused).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"
#include "runtime/cli/model_io.h"

namespace boardlab::run {

/// Cases one job or run takes at most.
inline constexpr size_t kMaxCases = 1000;

struct CaseFiles {
  std::string name;
  std::vector<std::string> inputs;    // FILE or random:SEED, one per model input, in order
  std::vector<std::string> expected;  // FILE per model output, in order; empty: none to compare
};

/// Empty when `name` may name a case, else why not: 1 to 128 printable ASCII characters, not
/// starting with '.' and without '/' or '\' (a case's outputs go to a directory of its name).
std::string InvalidCaseName(std::string_view name);

/// The cases of `--inputs inputs_dir [--expected expected_dir]` (expected_dir may be empty: no
/// expected outputs), sorted by name, every file checked against `io`: each case has a file for
/// every input (and, with expected_dir, every output) of the right size, and every expected
/// file belongs to a case. False, with `error` naming the file and what to do, otherwise.
bool ReadCaseDirectories(const std::string& inputs_dir, const std::string& expected_dir,
                         const ModelIo& io, std::vector<CaseFiles>* cases, std::string* error);

/// The cases of a manifest file (docs/client.md): {"cases": [{"name": "yes_0", "inputs":
/// ["in/yes_0.bin"], "expected": ["out/yes_0.bin"]}, ...]}; an input may be "random:SEED";
/// relative paths are relative to the manifest's directory; "expected" is given for every case
/// or for none. Checked against `io` as ReadCaseDirectories does.
bool ReadCaseManifest(const std::string& path, const ModelIo& io, std::vector<CaseFiles>* cases,
                      std::string* error);

/// The manifest of `cases`, the format ReadCaseManifest reads (one line, no trailing newline).
std::string CaseManifestJson(const std::vector<CaseFiles>& cases);

/// True when the model's outputs are class scores, for which top-1 agreement is reported: one
/// output whose shape is [N] or [1,N] with N > 1.
bool HasClassScores(const ModelIo& io);

/// One output of a case as the board's verifier judged it.
struct OutputVerdict {
  bool checked = false;  // an expected output was given
  bool pass = false;
  double max_abs_diff = 0;
  uint64_t mismatches = 0;
  uint64_t elements = 0;
  std::string error;  // the verifier could not compare (e.g. wrong size); then !pass
};

/// The verdicts of boardlab-run's per-output JSON entries, from their "verification" objects
/// ({"pass", "max_abs_diff", "mismatches", "elements"} or {"pass": false, "error"}).
std::vector<OutputVerdict> OutputVerdictsOf(const nlohmann::json& outputs);

/// boardlab-run's per-output JSON entries for `verdicts` ({"index", "verification"}), the
/// inverse of OutputVerdictsOf.
nlohmann::json OutputsJson(const std::vector<OutputVerdict>& verdicts);

struct CaseOutcome {
  std::string name;
  std::vector<OutputVerdict> outputs;
  /// Top-1 class of the board's and of the expected output (class-score models with an
  /// expected output only).
  std::optional<int64_t> top1, top1_expected;
  /// Mean time of the case's inferences that produced output, on the board's clock (what the
  /// latency budget judges); nullopt: none did, or the clock gives no time.
  std::optional<double> us;
  uint64_t ticks = 0;  // the same in the clock's ticks (0: none produced output)
  /// The inferences a streaming op ended early, apart (boards that time each kind; 0 where the
  /// board reports one mean of all): how many, and their mean time and ticks.
  uint32_t early_inferences = 0;
  std::optional<double> early_us;
  uint64_t early_ticks = 0;
  nlohmann::json detail;  // per output, as a single run's "outputs" entries; null: made
                          // from `outputs` (OutputsJson)
  /// The case's last inference ended early (a streaming op such as CIRCULAR_BUFFER waits for
  /// more input): its outputs are not this case's, so none was checked. Neither passed nor
  /// failed.
  bool no_output = false;

  bool verified() const;
  /// Every checked output passed (an unverified case passes); false for a no_output case.
  bool passed() const;
  /// The largest max abs diff of its checked outputs (infinity for an output that could not
  /// be compared); nullopt when nothing was checked.
  std::optional<double> max_abs_diff() const;
};

/// Sets `outcome.top1` / `top1_expected` when `io` has class scores and an expected output was
/// given: the arg max of the board's output 0 and of the expected bytes.
void JudgeTop1(const ModelIo& io, std::string_view output0, std::string_view expected0,
               CaseOutcome& outcome);

struct CaseSummary {
  size_t cases = 0;
  size_t passed = 0;
  size_t no_output = 0;  // cases whose last inference ended early (neither passed nor failed)
  size_t verified = 0;
  // Saturating: a summary read from another version's message may not add up.
  size_t failed() const { return Rest(passed + no_output); }
  size_t unverified() const { return Rest(verified + no_output); }
  std::optional<double> max_abs_diff;  // over every case and checked output
  std::string max_abs_diff_case;       // the case it comes from (the first on a tie)
  size_t top1_compared = 0;            // cases with a top-1 of both
  size_t top1_agreed = 0;
  // The largest mean inference time of a case that produced output (what a latency budget
  // judges); absent when no case did, or the clock gave no time.
  std::optional<double> slowest_us;
  std::string slowest_case;

 private:
  size_t Rest(size_t counted) const { return cases > counted ? cases - counted : 0; }
};

CaseSummary Summarize(const std::vector<CaseOutcome>& outcomes);

/// The verdict of a run of cases: "fail" when a case failed, else "no_output" when no case
/// produced output, else "unverified" when no case was checked, else "pass".
std::string CasesVerdict(const CaseSummary& summary);

/// "cases: 4 of 5 passed, max abs diff 7 (case seed2), top-1 agreement 80.0% (4 of 5)".
std::string DescribeSummary(const CaseSummary& summary);

/// "case seed2: FAIL (output 0: max abs diff 7, 3 of 12 elements outside atol; top-1 5,
/// expected 3) 612.50 us"; inferences that ended early are timed apart: "... 612.50 us; ended
/// early: 1 inference, 40.00 us".
std::string DescribeCase(const CaseOutcome& outcome);

/// "ended early: 3 inferences, 40.00 us" (without the time when the clock gives none).
std::string EarlyEndedText(const CaseOutcome& outcome);

/// The time fields of a case's entry, also those of a single run's document: "total_us" and
/// "ticks" (the inferences that produced output; null and 0 when none did), "early_inferences",
/// "early_total_us" and "early_ticks" (those a streaming op ended early).
nlohmann::json TimesJson(const CaseOutcome& outcome);

/// The documents' "cases" entry and "case_summary" (docs/runtime.md). A case's "total_us" and
/// "ticks" are the mean of its inferences that produced output; "early_inferences",
/// "early_total_us" and "early_ticks" those of the inferences that ended early.
nlohmann::json CaseJson(const CaseOutcome& outcome);
nlohmann::json SummaryJson(const CaseSummary& summary);

/// What --case-results writes (and the agent reads): {"clock": the clock that timed the cases
/// (a ClockKindName, or a serial board's timer), "cases": [CaseJson...], "case_summary": ...}.
nlohmann::json CaseResultsJson(const std::vector<CaseOutcome>& outcomes, const std::string& clock);

/// One DescribeCase line per case, then the DescribeSummary line, each ending in a newline.
std::string CasesText(const std::vector<CaseOutcome>& outcomes);

/// Writes CaseResultsJson to `path`; false, with `error`, when it cannot.
bool WriteCaseResults(const std::string& path, const std::vector<CaseOutcome>& outcomes,
                      const std::string& clock, std::string* error);

}  // namespace boardlab::run
