#include "agent/runner_output.h"

#include <string.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace boardlab::agent {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kRunnerPrefix[] = "boardlab-run: ";
constexpr char kBoardErrorPrefix[] = "board error: ";

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The runner's own last error line ("boardlab-run: <message>"), without the prefix.
std::string RunnerError(const std::vector<std::string>& stderr_lines) {
  for (auto it = stderr_lines.rbegin(); it != stderr_lines.rend(); ++it) {
    if (StartsWith(*it, kRunnerPrefix) && !StartsWith(*it, "boardlab-run: board qemu:")) {
      return it->substr(sizeof(kRunnerPrefix) - 1);
    }
  }
  for (auto it = stderr_lines.rbegin(); it != stderr_lines.rend(); ++it) {
    if (!it->empty()) return *it;
  }
  return "";
}

// The firmware's console error ("result: ERROR" is preceded by the message) for qemu runs.
std::string LastNonEmpty(const std::vector<std::string>& lines) {
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!it->empty() && !StartsWith(*it, "result:") && !StartsWith(*it, "memory:")) return *it;
  }
  return "";
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string AtolText(const BoardRunRequest& request) { return absl::StrCat("atol ", request.atol); }

void CollectFiles(const BoardRunRequest& request, BoardReport& report) {
  std::error_code ec;
  for (int i = 0;; ++i) {
    const fs::path path = fs::path(OutputsDir(request)) / absl::StrCat("output", i, ".bin");
    if (!fs::is_regular_file(path, ec)) break;
    report.output_paths.push_back(path.string());
  }
  if (fs::is_regular_file(EtdumpPath(request), ec)) report.etdump_path = EtdumpPath(request);
}

// The files a --serve run wrote, as its answer names them: the runner overwrites the previous
// run's files in place (the agent does not empty the work directory between served runs, which
// spares the file system a create and a delete per file and run), so only the answer tells this
// run's files from leftovers. A completed run (exit 0 or 1) has written its ETDump.
void CollectServedFiles(const BoardRunRequest& request, const json& document, BoardReport& report) {
  if (document.contains("outputs")) {
    for (const json& o : document.at("outputs")) {
      if (o.contains("path") && o.at("path").is_string()) {
        report.output_paths.push_back(o.at("path").get<std::string>());
      }
    }
  }
  std::error_code ec;
  if (fs::is_regular_file(EtdumpPath(request), ec)) report.etdump_path = EtdumpPath(request);
}

// A verification's max abs diff as OutputCheck keeps it (int32): a float output's difference
// is cut to the int range (a cast of a larger double would be undefined), and one that is not a
// number (null: a NaN against a number, or missing) is -1.
int MaxAbsDiffOf(const json& verification) {
  const auto diff = verification.find("max_abs_diff");
  if (diff == verification.end() || !diff->is_number()) return -1;
  return static_cast<int>(std::clamp(diff->get<double>(), -1.0, double{INT32_MAX}));
}

// One entry of a document's "cases" (runtime/cli/run_cases.h CaseJson).
CaseReport ReadCase(const json& entry) {
  CaseReport c;
  c.result.set_name(entry.at("name").get<std::string>());
  const std::string verdict = entry.value("verdict", "fail");
  c.result.set_no_output(verdict == "no_output");
  c.result.set_passed(verdict != "fail" && verdict != "no_output");
  for (const json& o : entry.at("outputs")) {
    if (o.contains("path") && o.at("path").is_string()) {
      c.output_paths.push_back(o.at("path").get<std::string>());
    }
    if (!o.contains("verification")) continue;
    const json& v = o.at("verification");
    v1::OutputCheck* check = c.result.add_checks();
    check->set_index(o.at("index").get<int>());
    check->set_passed(v.value("pass", false));
    check->set_max_abs_diff(MaxAbsDiffOf(v));
  }
  if (entry.contains("total_us") && entry.at("total_us").is_number()) {
    c.result.set_inference_us(entry.at("total_us").get<double>());
  }
  c.result.set_ticks(entry.value("ticks", uint64_t{0}));
  if (entry.contains("top1")) {
    c.result.set_top1(entry.at("top1").at("class").get<int64_t>());
    c.result.set_top1_expected(entry.at("top1").at("expected").get<int64_t>());
  }
  return c;
}

// A many-case document's "cases" (sim: the --profile json document; qemu and serial: the
// --case-results file): each case, and the slowest case's time as the run's.
void ReadCases(const json& doc, BoardReport& report) {
  report.cases.clear();
  for (const json& entry : doc.at("cases")) report.cases.push_back(ReadCase(entry));
  report.no_output = !report.cases.empty() &&
                     std::all_of(report.cases.begin(), report.cases.end(),
                                 [](const CaseReport& c) { return c.result.no_output(); });
  const json& summary = doc.at("case_summary");
  report.inference_us = summary.contains("slowest_us") && summary.at("slowest_us").is_number()
                            ? summary.at("slowest_us").get<double>()
                            : 0;
  if (doc.contains("clock") && doc.at("clock").is_string()) {
    report.inference_clock = doc.at("clock").get<std::string>();
  }
}

// Qemu and serial many-case runs: the --case-results file boardlab-run wrote.
void ReadCaseResults(const BoardRunRequest& request, BoardReport& report, std::string& error) {
  std::ifstream in(CaseResultsPath(request));
  const json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    error = "boardlab-run wrote no readable case results (" + CaseResultsPath(request) + ")";
    return;
  }
  try {
    ReadCases(doc, report);
  } catch (const json::exception& e) {
    error = absl::StrCat("cannot read boardlab-run's case results: ", e.what());
  }
}

// A serial board's refusal of a case that continues the job (boardlab-run's --json document says
// "error_kind": "model_not_held", from the board's RESULT verdict): the board lost the model
// the job's first case loaded, e.g. it was reset or another job ran on it between the cases.
bool BoardLostTheJobsModel(const BoardRunRequest& request) {
  std::ifstream in(RunJsonPath(request));
  const json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  return doc.is_object() && doc.value("error_kind", "") == "model_not_held";
}

// A single run's time (runtime/cli/run_cases.h TimesJson): the mean of the inferences that
// produced output (the profile's total too, but when no inference produced output the profile
// averages the early ends). None produced output: no time (0).
void ReadSingleRunTime(const json& doc, BoardReport& report) {
  const json& us = doc.at("total_us");
  report.inference_us = us.is_number() ? us.get<double>() : 0;
  // On a cycle clock (the profile has cycles) the ticks are cycles.
  if (report.inference_cycles > 0) {
    report.inference_cycles = us.is_number() ? doc.at("ticks").get<uint64_t>() : 0;
  }
}

// Sim: checks and timing from the --profile json document (runtime/cli/main.cc RunDocument()),
// whose text is the profile blob.
void ReadSimDocument(const json& doc, BoardReport& report, std::string& error) {
  try {
    report.no_output = doc.value("verdict", "") == "no_output";
    if (doc.contains("outputs")) {
      for (const json& o : doc.at("outputs")) {
        if (!o.contains("verification")) continue;
        const json& v = o.at("verification");
        v1::OutputCheck check;
        check.set_index(o.at("index").get<int>());
        check.set_passed(v.value("pass", false));
        check.set_max_abs_diff(MaxAbsDiffOf(v));
        report.checks.push_back(check);
      }
    }
    if (doc.contains("profile")) {
      const json& p = doc.at("profile");
      // Unknown figures are null (a clock without a known rate, a clock that does not count
      // cycles).
      if (p.contains("total_us") && p.at("total_us").is_number()) {
        report.inference_us = p.at("total_us").get<double>();
      }
      if (p.contains("clock") && p.at("clock").is_string()) {
        report.inference_clock = p.at("clock").get<std::string>();
      }
      if (p.contains("total_cycles") && p.at("total_cycles").is_number()) {
        report.inference_cycles = p.at("total_cycles").get<uint64_t>();
      }
    }
    if (doc.contains("early_inferences")) ReadSingleRunTime(doc, report);
    if (doc.contains("cases")) ReadCases(doc, report);
  } catch (const json::exception& e) {
    error = absl::StrCat("cannot read boardlab-run's profile JSON: ", e.what());
  }
}

// Sim, one process per run: boardlab-run --profile json prints the document on stdout.
void ReadSimJson(const std::string& stdout_text, BoardReport& report, std::string& error) {
  try {
    ReadSimDocument(json::parse(stdout_text), report, error);
  } catch (const json::exception& e) {
    error = absl::StrCat("cannot read boardlab-run's profile JSON: ", e.what());
    return;
  }
  if (error.empty()) report.profile_json = stdout_text;
}

// The clock of a console result line, from its "(per inference, ...)" ending: QEMU's
// instruction count under -icount, QEMU's host-paced time without it (the qemu firmware says
// "no icount", the an505 board behind a serial port names its timer "... (qemu virtual time)"),
// or the timer a serial board names (runtime/cli/serial_board.cc); "" when the line names none.
std::string ConsoleClock(const std::string& result_line) {
  constexpr std::string_view kPerInference = "(per inference, ";
  const size_t start = result_line.rfind(kPerInference);
  const size_t end = result_line.rfind(')');
  if (start == std::string::npos || end == std::string::npos || end < start) return "";
  const std::string said =
      result_line.substr(start + kPerInference.size(), end - start - kPerInference.size());
  if (absl::StartsWith(said, "icount shift")) return "qemu-icount";
  if (absl::StartsWith(said, "no icount") || absl::StrContains(said, "qemu virtual time")) {
    return "qemu-virtual-time";
  }
  return said;
}

// Qemu: the firmware console (firmware/main.cc):
//   output 0: 256 bytes fnv1a32 1234abcd pass: max abs diff 0, 0 of 256 elements outside atol
//   result: PASS ticks 123 ns 456789 instructions 456789 (per inference, icount shift 0)
// The result line's time is the mean of the inferences that produced output; those a streaming
// op ended early follow apart ("...; ended early: 1 inference, ticks ..."), and when none produced
// output the line has only those: "result: NO_OUTPUT no inference produced output; ended early:
// ...".
void ReadQemuConsole(const std::string& stdout_text, BoardReport& report) {
  for (const std::string& line : SplitLines(stdout_text)) {
    unsigned long index = 0, bytes = 0;
    char checksum[16] = {0}, verdict[8] = {0};
    double diff = 0;
    if (std::sscanf(line.c_str(), "output %lu: %lu bytes fnv1a32 %15s %7[^:]: max abs diff %lf",
                    &index, &bytes, checksum, verdict, &diff) == 5) {
      v1::OutputCheck check;
      check.set_index(static_cast<int>(index));
      check.set_passed(strcmp(verdict, "pass") == 0);
      check.set_max_abs_diff(static_cast<int>(diff));
      report.checks.push_back(check);
      continue;
    }
    unsigned long long ticks = 0, ns = 0;
    char result[16] = {0};
    const int read =
        std::sscanf(line.c_str(), "result: %15s ticks %llu ns %llu", result, &ticks, &ns);
    // The verdict alone: no inference produced output, so the line has no time of one (the
    // early ends' time follows "ended early:", which is not the inference time).
    if (read == 3 || (read == 1 && absl::StrContains(line, "(per inference, "))) {
      report.inference_us = read == 3 ? static_cast<double>(ns) / 1e3 : 0;
      report.inference_clock = ConsoleClock(line);
      report.no_output = strcmp(result, "NO_OUTPUT") == 0;
    }
  }
}

// "1 of 4 cases failed: seed2 (output 0: max abs diff 255 > atol 0)", at most three named.
std::string CasesFailMessage(const BoardReport& report, const BoardRunRequest& request) {
  constexpr int kNamed = 3;
  int failed = 0;
  std::string named;
  for (const CaseReport& c : report.cases) {
    if (c.result.passed()) continue;
    if (++failed > kNamed) continue;
    std::string why;
    for (const v1::OutputCheck& check : c.result.checks()) {
      if (check.passed()) continue;
      absl::StrAppend(&why, why.empty() ? "" : ", ", "output ", check.index(), ": max abs diff ",
                      check.max_abs_diff(), " > ", AtolText(request));
    }
    absl::StrAppend(&named, named.empty() ? "" : "; ", c.result.name(), why.empty() ? "" : " (",
                    why, why.empty() ? "" : ")");
  }
  return absl::StrCat(failed, " of ", report.cases.size(), " cases failed: ", named,
                      failed > kNamed ? "; ..." : "");
}

// The message of a run whose last inference (every case's) ended early.
std::string NoOutputMessage(const BoardReport& report, const BoardRunRequest& request) {
  const std::string why =
      "a streaming op ended the last inference early (it waits for more input, as TFLite "
      "Micro's CIRCULAR_BUFFER does); outputs not compared";
  if (request.cases_manifest.empty()) return "no output yet: " + why;
  return absl::StrCat("no output yet in any of ", report.cases.size(),
                      report.cases.size() == 1 ? " case: " : " cases: ", why);
}

// The message of a run that passed (exit 0).
std::string PassMessage(const BoardReport& report, const BoardRunRequest& request) {
  if (!request.cases_manifest.empty()) {
    const std::string cases =
        absl::StrCat(report.cases.size(), report.cases.size() == 1 ? " case" : " cases");
    const auto no_output = std::count_if(report.cases.begin(), report.cases.end(),
                                         [](const CaseReport& c) { return c.result.no_output(); });
    const std::string unjudged =
        no_output == 0 ? "" : absl::StrCat(" (", no_output, " with no output yet, not compared)");
    return request.cases_verified
               ? absl::StrCat(cases, ": outputs match (", AtolText(request), ")", unjudged)
               : absl::StrCat(cases, " ran; no expected outputs to compare", unjudged);
  }
  return request.expected.empty() ? "ran; no expected outputs to compare"
                                  : absl::StrCat("outputs match (", AtolText(request), ")");
}

std::string FailMessage(const BoardReport& report, const BoardRunRequest& request) {
  if (!report.cases.empty()) return CasesFailMessage(report, request);
  std::string message;
  for (const v1::OutputCheck& c : report.checks) {
    if (c.passed()) continue;
    absl::StrAppend(&message, message.empty() ? "" : "; ", "output ", c.index(),
                    " differs: max abs diff ", c.max_abs_diff(), " > ", AtolText(request));
  }
  return message.empty() ? "outputs differ from the expected ones" : message;
}

// Outcome and message of a runner that exited with `exit_code`; `runner_error` is its own error
// message, `console_error` the qemu firmware's last console line (empty for sim).
void InterpretExitCode(RunnerBoard board, const BoardRunRequest& request, int exit_code,
                       const std::string& runner_error, const std::string& console_error,
                       const std::string& json_error, BoardReport& report) {
  report.outcome = v1::RUN_OUTCOME_BOARD_ERROR;
  switch (exit_code) {
    case 0:
      report.outcome = report.no_output ? v1::RUN_OUTCOME_NO_OUTPUT : v1::RUN_OUTCOME_PASS;
      report.message =
          report.no_output ? NoOutputMessage(report, request) : PassMessage(report, request);
      break;
    case 1:
      report.outcome = v1::RUN_OUTCOME_FAIL;
      report.message = FailMessage(report, request);
      break;
    case 2:
      // A board error either way (another board may run the job), but only the lost model is the
      // board's doing; the other refusals are the agent's files.
      report.message =
          board == RunnerBoard::kSerial && BoardLostTheJobsModel(request)
              ? absl::StrCat(
                    "board error: the board lost the model this job loaded between its cases (it "
                    "was reset, or another job ran on it): ",
                    runner_error)
              : absl::StrCat("boardlab-run rejected the run (agent or download problem): ",
                             runner_error);
      break;
    case 3:
      report.outcome = v1::RUN_OUTCOME_MODEL_ERROR;
      report.message = runner_error.empty() ? "invalid artifact" : runner_error;
      break;
    case 4:
      if (StartsWith(runner_error, kBoardErrorPrefix)) {
        report.message = runner_error;
      } else {
        report.outcome = v1::RUN_OUTCOME_MODEL_ERROR;
        report.message = runner_error;
        if (board == RunnerBoard::kQemu && !console_error.empty()) report.message = console_error;
        if (report.message.empty()) report.message = "the model failed at run time";
      }
      break;
    default:
      report.message = absl::StrCat("boardlab-run exited with status ", exit_code,
                                    runner_error.empty() ? "" : ": ", runner_error);
      break;
  }
  if (!json_error.empty() &&
      (report.outcome == v1::RUN_OUTCOME_PASS || report.outcome == v1::RUN_OUTCOME_NO_OUTPUT)) {
    report.outcome = v1::RUN_OUTCOME_BOARD_ERROR;
    report.message = json_error;
  }
}

}  // namespace

std::string OutputsDir(const BoardRunRequest& request) {
  return (fs::path(request.work_dir) / "outputs").string();
}

std::string EtdumpPath(const BoardRunRequest& request) {
  return (fs::path(request.work_dir) / "run.etdp").string();
}

std::string RunJsonPath(const BoardRunRequest& request) {
  return (fs::path(request.work_dir) / "run.json").string();
}

std::string CaseResultsPath(const BoardRunRequest& request) {
  return (fs::path(request.work_dir) / "case-results.json").string();
}

std::vector<std::string> RunnerCommand(const std::string& boardlab_run, RunnerBoard board,
                                       const BoardRunRequest& request,
                                       const SerialBoardConfig* serial) {
  const char* board_name = board == RunnerBoard::kSim    ? "sim"
                           : board == RunnerBoard::kQemu ? "qemu"
                                                         : "serial";
  std::vector<std::string> argv = {boardlab_run, request.artifact_path, "--board", board_name};
  if (board == RunnerBoard::kSerial && serial != nullptr) {
    argv.insert(argv.end(), {"--port", serial->port, "--baud", std::to_string(serial->baud),
                             "--connect-timeout", std::to_string(serial->connect_timeout_seconds),
                             "--json", RunJsonPath(request)});
    if (!request.test_fault.empty()) argv.insert(argv.end(), {"--test-fault", request.test_fault});
    if (request.artifact_in_slot) argv.push_back("--artifact-in-slot");
  }
  for (const std::string& input : request.inputs) {
    argv.push_back("--input");
    argv.push_back(input);
  }
  for (const std::string& expected : request.expected) {
    argv.push_back("--expected");
    argv.push_back(expected);
  }
  if (!request.cases_manifest.empty()) {
    argv.insert(argv.end(), {"--cases", request.cases_manifest});
    // Qemu and serial print their cases on the console; the agent reads them from this file.
    if (board != RunnerBoard::kSim)
      argv.insert(argv.end(), {"--case-results", CaseResultsPath(request)});
  }
  if (!request.expected.empty() || request.cases_verified) {
    argv.push_back("--atol");
    argv.push_back(std::to_string(request.atol));
  }
  argv.push_back("--iterations");
  argv.push_back(std::to_string(std::max(1, request.iterations)));
  argv.push_back("--etdump");
  argv.push_back(EtdumpPath(request));
  argv.push_back("--outputs");
  argv.push_back(OutputsDir(request));
  if (board == RunnerBoard::kSim) {
    argv.push_back("--profile");
    argv.push_back("json");
  } else {
    // boardlab-run stops QEMU itself (serial: gives up on the board) at this deadline and says
    // "board error: ... timed out"; the agent's own deadline is a little later, as a backstop.
    argv.push_back("--timeout");
    argv.push_back(std::to_string(std::max(1, request.timeout_seconds)));
  }
  return argv;
}

std::string ServeRequestLine(const BoardRunRequest& request) {
  json line = {{"artifact", request.artifact_path},
               {"atol", request.atol},
               {"iterations", std::max(1, request.iterations)},
               {"etdump", EtdumpPath(request)},
               {"outputs", OutputsDir(request)}};
  if (request.cases_manifest.empty()) {
    line["inputs"] = request.inputs;
    line["expected"] = request.expected;
  } else {
    line["cases"] = request.cases_manifest;
  }
  return line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

BoardReport InterpretServeResult(const BoardRunRequest& request, const std::string& line) {
  int exit_code = -1;
  std::string error;
  json document;
  try {
    json result = json::parse(line.substr(std::min(line.size(), sizeof(kServeResultPrefix) - 1)));
    exit_code = result.at("exit").get<int>();
    if (result.contains("error")) error = result.at("error").get<std::string>();
    if (result.contains("document")) document = std::move(result.at("document"));
  } catch (const json::exception& e) {
    BoardReport report;
    report.message = absl::StrCat("cannot read boardlab-run --serve's answer: ", e.what());
    return report;
  }
  BoardReport report;
  std::string json_error;
  if (exit_code == 0 || exit_code == 1) {
    if (!document.is_object()) {
      json_error = "boardlab-run --serve answered without its profile JSON";
    } else {
      ReadSimDocument(document, report, json_error);
      // The same bytes as a one-shot run's stdout, so that equal runs store one profile blob.
      if (json_error.empty()) {
        report.profile_json = document.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
        CollectServedFiles(request, document, report);
      }
    }
  }
  InterpretExitCode(RunnerBoard::kSim, request, exit_code, error, "", json_error, report);
  return report;
}

BoardReport InterpretRunnerExit(RunnerBoard board, const BoardRunRequest& request,
                                const ChildExit& exit, const std::string& stdout_text,
                                const std::vector<std::string>& stderr_lines) {
  BoardReport report;
  report.outcome = v1::RUN_OUTCOME_BOARD_ERROR;
  switch (exit.kind) {
    case ChildExit::Kind::kStartFailed:
      report.message = absl::StrCat("cannot start boardlab-run: ", exit.error);
      return report;
    case ChildExit::Kind::kTimedOut:
      report.message =
          absl::StrCat("timed out after ", request.timeout_seconds, "s; boardlab-run killed");
      return report;
    case ChildExit::Kind::kKilled:
      report.outcome = v1::RUN_OUTCOME_CANCELLED;
      report.message = "cancelled; boardlab-run killed";
      return report;
    case ChildExit::Kind::kSignaled:
      report.message = exit.error.empty()
                           ? absl::StrCat("boardlab-run ", DescribeChildExit(exit, 0))
                           : absl::StrCat("boardlab-run: ", exit.error);
      return report;
    case ChildExit::Kind::kExited:
      break;
  }

  std::string json_error;
  const bool ran = exit.exit_code == 0 || exit.exit_code == 1;
  if (board == RunnerBoard::kSim) {
    if (ran) ReadSimJson(stdout_text, report, json_error);
  } else if (!request.cases_manifest.empty()) {
    if (ran) ReadCaseResults(request, report, json_error);
  } else {
    ReadQemuConsole(stdout_text, report);  // --board serial prints the same output/result lines
  }
  CollectFiles(request, report);
  InterpretExitCode(board, request, exit.exit_code, RunnerError(stderr_lines),
                    board == RunnerBoard::kQemu ? LastNonEmpty(SplitLines(stdout_text)) : "",
                    json_error, report);
  return report;
}

}  // namespace boardlab::agent
