#include "runtime/cli/serial_board.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <random>

#include "nlohmann/json.hpp"
#include "runtime/cli/input_spec.h"
#include "runtime/cli/model_io.h"
#include "runtime/cli/run_cases.h"
#include "runtime/link/host_session.h"
#include "runtime/link/host_transport.h"

namespace boardlab::run {
namespace {

namespace link = boardlab::link;
using nlohmann::json;

constexpr int kExitUsage = 2;
constexpr int kExitInvalidArtifact = 3;
constexpr int kExitRuntime = 4;

struct TestFaultName {
  const char* name;
  link::TestFault fault;
};
constexpr TestFaultName kTestFaults[] = {
    {"none", link::TestFault::kNone},
    {"hang", link::TestFault::kHang},
    {"hang-without-watchdog", link::TestFault::kHangWithoutWatchdog},
    {"hardfault", link::TestFault::kHardFault},
    {"reset", link::TestFault::kReset},
};

int Fail(int code, const std::string& message) {
  std::cout.flush();
  std::cerr << "boardlab-run: " << message << "\n";
  return code;
}

bool ReadFile(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

bool WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

std::string Hex(const link::Digest& d) {
  char text[2 * link::kDigestBytes + 1];
  return d.ToHex(text);
}

// The job's bytes: the artifact, every input (files or random:SEED, missing ones
// random:<index>), the expected outputs. Returns the exit code of a failure, or -1.
// One run's inputs (files or random:SEED, missing ones random:<index>) and expected outputs
// into `job`. Returns the exit code of a failure, or -1.
int ReadRunFiles(const ModelIo& model, const std::vector<std::string>& inputs,
                 const std::vector<std::string>& expected, link::HostJob& job) {
  job.inputs.clear();
  job.expected.clear();
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const std::string spec = i < inputs.size() ? inputs[i] : "random:" + std::to_string(i);
    std::vector<uint8_t> data;
    std::string error;
    if (!ReadInputSpec(spec, i, model.inputs[i].bytes, model.inputs[i].Describe(), &data, &error)) {
      return Fail(kExitUsage, error);
    }
    job.inputs.push_back(std::move(data));
  }
  for (const std::string& path : expected) {
    std::vector<uint8_t> data;
    if (!ReadFile(path, data)) {
      return Fail(kExitUsage, "reading expected file '" + path + "': cannot open it");
    }
    job.expected.push_back(std::move(data));
  }
  return -1;
}

int PrepareJob(const SerialRunOptions& options, ModelIo& model, link::HostJob& job) {
  if (!ReadFile(options.artifact, job.artifact)) {
    return Fail(kExitUsage, "reading artifact '" + options.artifact + "': cannot open it");
  }
  job.artifact_in_slot = options.artifact_in_slot;
  std::string error;
  if (!ReadArtifactIo(job.artifact.data(), job.artifact.size(), &model, &error)) {
    return Fail(kExitInvalidArtifact, "invalid artifact '" + options.artifact + "': " + error);
  }
  if (options.inputs.size() > model.inputs.size()) {
    return Fail(kExitUsage, std::to_string(options.inputs.size()) +
                                " --input given, the model has " +
                                std::to_string(model.inputs.size()) + " inputs");
  }
  if (options.expected.size() > model.outputs.size()) {
    return Fail(kExitUsage, std::to_string(options.expected.size()) +
                                " --expected given, the model has " +
                                std::to_string(model.outputs.size()) + " outputs");
  }
  if (model.inputs.size() > link::kMaxTensors || model.outputs.size() > link::kMaxTensors) {
    return Fail(kExitUsage, "--board serial: a board takes at most " +
                                std::to_string(link::kMaxTensors) + " inputs and outputs");
  }
  // The cases' own files are read as each case runs.
  if (options.cases.empty()) {
    if (const int code = ReadRunFiles(model, options.inputs, options.expected, job); code >= 0) {
      return code;
    }
  }
  job.iterations = static_cast<uint32_t>(options.iterations);
  job.atol = options.atol;
  job.want_outputs = true;
  job.want_etdump = !options.etdump.empty();
  job.run_timeout_seconds = options.timeout_seconds;
  for (const TestFaultName& t : kTestFaults) {
    if (options.test_fault == t.name) job.test_fault = t.fault;
  }
  return -1;
}

json HelloJson(const link::Hello& h) {
  json regions = json::array();
  for (uint8_t i = 0; i < h.num_regions; ++i) {
    regions.push_back(
        {{"name", h.regions[i].name}, {"base", h.regions[i].base}, {"size", h.regions[i].size}});
  }
  json cached = json::array();
  for (uint8_t i = 0; i < h.num_cached; ++i) {
    cached.push_back({{"sha256", Hex(h.cached[i].digest)}, {"size", h.cached[i].size}});
  }
  return {{"board", h.board},
          {"firmware_version", h.firmware_version},
          {"build_id", h.build_id},
          {"protocol_version", h.protocol_version},
          {"max_payload", h.max_payload},
          {"clock", h.clock},
          {"ticks_per_second", h.ticks_per_second},
          {"core_hz", h.core_hz},
          {"icount_shift", h.icount_shift},
          {"npu", h.npu},
          {"reset_cause", link::ResetCauseName(h.reset_cause)},
          {"regions", regions},
          {"artifact_cache", {{"capacity", h.cache_capacity}, {"artifacts", cached}}},
          {"model_slot", {{"base", h.model_slot_base}, {"size", h.model_slot_size}}}};
}

json LinkJson(const link::LinkStats& s, int board_resets) {
  return {{"frames_sent", s.frames_sent},
          {"frames_received", s.frames_received},
          {"bytes_sent", s.bytes_sent},
          {"bytes_received", s.bytes_received},
          {"messages_sent", s.messages_sent},
          {"messages_received", s.messages_received},
          {"retransmissions", s.retransmissions},
          {"timeouts", s.timeouts},
          {"naks_sent", s.naks_sent},
          {"naks_received", s.naks_received},
          {"duplicates", s.duplicates},
          {"out_of_order", s.out_of_order},
          {"resyncs", s.decoder.resyncs},
          {"skipped_bytes", s.decoder.skipped_bytes},
          {"header_errors", s.decoder.header_errors},
          {"crc_errors", s.decoder.crc_errors},
          {"oversize", s.decoder.oversize},
          {"board_resets", board_resets}};
}

json FaultJson(const link::Fault& f) {
  return {{"cause", link::ResetCauseName(f.cause)},
          {"pc", f.pc},
          {"lr", f.lr},
          {"sp", f.sp},
          {"xpsr", f.xpsr},
          {"cfsr", f.cfsr},
          {"hfsr", f.hfsr},
          {"mmfar", f.mmfar},
          {"bfar", f.bfar},
          {"r0", f.r0},
          {"r1", f.r1},
          {"r2", f.r2},
          {"r3", f.r3},
          {"r12", f.r12},
          {"exc_return", f.exc_return}};
}

// The console: stdout, or stderr when stdout carries the profile's JSON document.
FILE* Console(const SerialRunOptions& options) {
  return options.console_to_stderr ? stderr : stdout;
}

void PrintHello(FILE* out, const link::Hello& h) {
  std::fprintf(out,
               "board: %s firmware %s build %s, board link protocol %u, max payload %u bytes\n",
               h.board, h.firmware_version, h.build_id, unsigned{h.protocol_version},
               unsigned{h.max_payload});
  std::fprintf(out, "board: clock %s, %" PRIu64 " ticks/s", h.clock, h.ticks_per_second);
  if (h.core_hz > 0) std::fprintf(out, ", core %" PRIu64 " Hz", h.core_hz);
  if (h.icount_shift >= 0) std::fprintf(out, ", QEMU -icount shift %d", int{h.icount_shift});
  std::fprintf(out, "; NPU %s\n", h.npu);
  std::fprintf(out, "board: memory");
  for (uint8_t i = 0; i < h.num_regions; ++i) {
    std::fprintf(out, "%s %s 0x%08" PRIx32 " %" PRIu32 " bytes", i == 0 ? "" : ",",
                 h.regions[i].name, h.regions[i].base, h.regions[i].size);
  }
  std::fprintf(out, "; artifact cache %" PRIu32 " bytes holding %u artifact%s", h.cache_capacity,
               unsigned{h.num_cached}, h.num_cached == 1 ? "" : "s");
  if (h.model_slot_size > 0) {
    std::fprintf(out, "; model slot 0x%08" PRIx32 " %" PRIu32 " bytes", h.model_slot_base,
                 h.model_slot_size);
  }
  std::fprintf(out, "\n");
  std::fprintf(out, "board: last reset: %s\n", link::ResetCauseName(h.reset_cause));
}

void PrintFault(FILE* out, const link::Fault& f) {
  std::fprintf(out,
               "board: FAULT record of the last reset (%s): pc 0x%08" PRIx32 " lr 0x%08" PRIx32
               " sp 0x%08" PRIx32 " xpsr 0x%08" PRIx32 " cfsr 0x%08" PRIx32 " hfsr 0x%08" PRIx32
               " mmfar 0x%08" PRIx32 " bfar 0x%08" PRIx32 "\n",
               link::ResetCauseName(f.cause), f.pc, f.lr, f.sp, f.xpsr, f.cfsr, f.hfsr, f.mmfar,
               f.bfar);
}

// The outputs as --board qemu's firmware prints them (on `out`, after `indent`), written to
// `outputs_dir` (empty: not written); false on a write error.
bool ReportOutputs(FILE* out, const std::string& outputs_dir, const char* indent,
                   const link::HostJobReport& report, json& outputs) {
  const link::Result& r = report.result;
  for (uint8_t i = 0; i < r.num_outputs; ++i) {
    const link::OutputCheck& o = r.outputs[i];
    std::fprintf(out, "%soutput %u: %" PRIu32 " bytes fnv1a32 %08" PRIx32, indent, unsigned{i},
                 o.bytes, o.fnv1a32);
    json entry = {{"index", i}, {"bytes", o.bytes}, {"fnv1a32", o.fnv1a32}};
    if (o.checked) {
      std::fprintf(out, " %s: max abs diff %g, %" PRIu32 " of %" PRIu32 " elements outside atol\n",
                   o.pass ? "pass" : "FAIL", o.max_abs_diff, o.mismatches, o.elements);
      entry["verification"] = {{"pass", o.pass != 0},
                               {"max_abs_diff", o.max_abs_diff},
                               {"mismatches", o.mismatches},
                               {"elements", o.elements}};
    } else {
      std::fprintf(out, "\n");
    }
    if (!outputs_dir.empty() && i < report.outputs.size()) {
      std::error_code ec;
      std::filesystem::create_directories(outputs_dir, ec);
      const std::string path =
          (std::filesystem::path(outputs_dir) / ("output" + std::to_string(i) + ".bin")).string();
      if (!WriteFile(path, report.outputs[i])) {
        Fail(kExitRuntime, "writing output file '" + path + "' failed");
        return false;
      }
      entry["path"] = path;
    }
    outputs.push_back(entry);
  }
  return true;
}

// The nanoseconds of `ticks` of the board's timer (0 when HELLO gave no rate).
uint64_t Nanoseconds(const link::Hello& h, uint64_t ticks) {
  const double ns_per_tick =
      h.ticks_per_second > 0 ? 1e9 / static_cast<double>(h.ticks_per_second) : 0;
  return static_cast<uint64_t>(static_cast<double>(ticks) * ns_per_tick + 0.5);
}

// Of a RESULT's iterations, those a streaming op ended early.
uint32_t EarlyInferences(const link::Result& r) {
  return r.iterations - std::min(r.inferences_with_output, r.iterations);
}

// "ticks 123 ns 4567[ instructions 4567]" of a mean of `ticks`.
std::string TimeText(const link::Hello& h, uint64_t ticks) {
  const uint64_t ns = Nanoseconds(h, ticks);
  std::string text = "ticks " + std::to_string(ticks) + " ns " + std::to_string(ns);
  // Under QEMU -icount every instruction takes 2^shift virtual ns.
  if (h.icount_shift >= 0) text += " instructions " + std::to_string(ns >> h.icount_shift);
  return text;
}

// The time of a case on the board's timer, of the inferences that produced output and apart of
// those that ended early (protocol 7): microseconds when the timer counts time (not under QEMU
// -icount, where it counts instructions).
void SetCaseTime(const link::Hello& h, const link::Result& r, CaseOutcome& outcome) {
  outcome.early_inferences = EarlyInferences(r);
  const uint32_t with_output = r.iterations - outcome.early_inferences;
  if (with_output > 0) outcome.ticks = r.output_mean_ticks;
  if (outcome.early_inferences > 0) outcome.early_ticks = r.early_mean_ticks;
  if (h.icount_shift >= 0 || h.ticks_per_second == 0) return;
  const double us_per_tick = 1e6 / static_cast<double>(h.ticks_per_second);
  if (with_output > 0) outcome.us = static_cast<double>(r.output_mean_ticks) * us_per_tick;
  if (outcome.early_inferences > 0) {
    outcome.early_us = static_cast<double>(r.early_mean_ticks) * us_per_tick;
  }
}

// The run's time apart for the inferences that produced output and those a streaming op ended
// early, in the names of a case's (run_cases.h TimesJson), but for the mean ticks of output:
// "ticks" is each iteration's list here, so that one is "output_mean_ticks".
void AddTimes(const link::Hello& h, const link::Result& r, json& result) {
  CaseOutcome times;
  SetCaseTime(h, r, times);
  json fields = boardlab::run::TimesJson(times);
  result["output_mean_ticks"] = fields["ticks"];
  fields.erase("ticks");
  result.update(fields);
}

bool EndedEarly(const link::Result& r, uint16_t time) {
  return (r.early_times_mask >> time & 1) != 0;
}

// "ticks min A mean B max C" of the per-iteration times of one kind (ended early or not), the
// mean from RESULT's; "none" when no time is of that kind.
std::string TimesOfKind(const link::Result& r, bool early, uint64_t mean) {
  uint64_t low = UINT64_MAX, high = 0;
  for (uint16_t i = 0; i < r.num_times; ++i) {
    if (EndedEarly(r, i) != early) continue;
    low = std::min(low, r.ticks[i]);
    high = std::max(high, r.ticks[i]);
  }
  if (low > high) return "none";
  return "ticks min " + std::to_string(low) + " mean " + std::to_string(mean) + " max " +
         std::to_string(high);
}

// "times: 3 iterations, ticks min A mean B max C": the spread of the per-iteration times; when a
// streaming op ended some early, those that produced output and those apart (a partial chain's
// time as the minimum would pass for the model's fastest inference).
std::string TimesLine(const link::Result& r) {
  std::string line = "times: " + std::to_string(r.iterations) + " iterations, ";
  if (EarlyInferences(r) == 0) {
    line += TimesOfKind(r, false, r.mean_ticks);
  } else {
    line += "produced output: " + TimesOfKind(r, false, r.output_mean_ticks) +
            "; ended early: " + TimesOfKind(r, true, r.early_mean_ticks);
  }
  if (r.num_times < r.iterations) line += " (min/max of the first ones)";
  return line;
}

// "result: PASS ticks T ns N[; ended early: 1 inference, ticks T ns N] (per inference, CLOCK)":
// the time first is the mean of the inferences that produced output (what agents read as the
// inference time); when none did, the line says so and gives only the early ends' time.
void PrintResultLine(FILE* out, const link::Hello& h, const link::Result& r, json& doc) {
  if (r.verdict == link::Verdict::kNoOutput) {
    std::fprintf(out,
                 "no output yet: a streaming op ended the last inference early (%" PRIu32
                 " of %" PRIu32 " inferences produced output); the outputs were not checked\n",
                 r.inferences_with_output, r.iterations);
  }
  const uint32_t early = EarlyInferences(r);
  const uint32_t with_output = r.iterations - early;
  std::string line = std::string("result: ") + link::VerdictName(r.verdict) + " ";
  line += with_output > 0 ? TimeText(h, r.output_mean_ticks) : "no inference produced output";
  if (early > 0) {
    line += "; ended early: " + std::to_string(early) +
            (early == 1 ? " inference, " : " inferences, ") + TimeText(h, r.early_mean_ticks);
  }
  if (h.icount_shift >= 0) {
    line += " (per inference, icount shift " + std::to_string(int{h.icount_shift}) + ")";
  } else {
    line += std::string(" (per inference, ") + h.clock + ")";
  }
  std::fprintf(out, "%s\n", line.c_str());
  const uint64_t ns = Nanoseconds(h, r.mean_ticks);
  json result = {{"iterations", r.iterations},
                 {"inferences_with_output", r.inferences_with_output},
                 {"mean_ticks", r.mean_ticks},
                 {"mean_ns", ns}};
  if (h.icount_shift >= 0) result["instructions"] = ns >> h.icount_shift;
  AddTimes(h, r, result);
  json ticks = json::array();
  json ended_early = json::array();
  for (uint16_t i = 0; i < r.num_times; ++i) {
    ticks.push_back(r.ticks[i]);
    ended_early.push_back(EndedEarly(r, i));
  }
  if (r.num_times > 1) std::fprintf(out, "%s\n", TimesLine(r).c_str());
  result["ticks"] = ticks;
  result["ended_early"] = ended_early;
  doc["result"] = result;
}

void PrintLinkStats(FILE* out, const link::LinkStats& s, int board_resets) {
  std::fprintf(out,
               "link: frames sent %u received %u, bytes sent %" PRIu64 " received %" PRIu64
               ", retransmissions %u, timeouts %u, naks sent %u received %u, crc errors %u, header "
               "errors %u, resyncs %u, skipped bytes %u, duplicates %u, out of order %u, board "
               "resets %d\n",
               s.frames_sent, s.frames_received, s.bytes_sent, s.bytes_received, s.retransmissions,
               s.timeouts, s.naks_sent, s.naks_received, s.decoder.crc_errors,
               s.decoder.header_errors, s.decoder.resyncs, s.decoder.skipped_bytes, s.duplicates,
               s.out_of_order, board_resets);
}

bool WriteJson(const std::string& path, const json& doc) {
  if (path.empty()) return true;
  std::ofstream out(path, std::ios::trunc);
  out << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  return static_cast<bool>(out);
}

// What the run of many cases gave: each case's outcome, the ETDump of the first case, and the
// first case's report (its artifact transfer; later cases find the artifact in the board's cache).
struct SerialCases {
  std::vector<CaseOutcome> outcomes;
  std::vector<uint8_t> etdump;
  link::HostJobReport first;
  int code = 0;  // 0 pass, 1 a case failed, 2-4 the run stopped (message printed)
  // Why the run stopped, for programs (--json "error_kind"): "model_not_held" when the board
  // no longer held the model the job's first case loaded (reset, or another job came).
  std::string error_kind;
};

// One case in the session: its files read, run, its outputs printed and written to
// --outputs DIR/NAME/. Returns -1, or the exit code that ends the run (status: a board error).
int RunOneCase(const SerialRunOptions& options, const ModelIo& model, const CaseFiles& c,
               link::HostSession& session, link::HostJob& job, SerialCases& run,
               absl::Status& status) {
  if (const int code = ReadRunFiles(model, c.inputs, c.expected, job); code >= 0) return code;
  job.want_etdump = !options.etdump.empty() && run.outcomes.empty();
  // The first case loads the model; the others continue on it, so a streaming op's state
  // carries from case to case as on the sim and qemu boards.
  job.continue_loaded_model = !run.outcomes.empty();
  link::HostJobReport report;
  status = session.RunJob(job, &report);
  if (run.outcomes.empty()) run.first = report;
  if (!status.ok()) return kExitRuntime;
  if (report.result.exit_code > 1) {
    if (report.result.verdict == link::Verdict::kModelNotHeld) run.error_kind = "model_not_held";
    return Fail(report.result.exit_code, "case '" + c.name + "': " + report.result.message);
  }
  FILE* const out = Console(options);
  std::fprintf(out, "case %s:\n", c.name.c_str());
  json outputs = json::array();
  const std::string dir = options.outputs_dir.empty()
                              ? ""
                              : (std::filesystem::path(options.outputs_dir) / c.name).string();
  if (!ReportOutputs(out, dir, "  ", report, outputs)) return kExitRuntime;
  CaseOutcome outcome;
  outcome.name = c.name;
  outcome.outputs = OutputVerdictsOf(outputs);
  outcome.detail = outputs;
  outcome.no_output = report.result.verdict == link::Verdict::kNoOutput;
  if (!job.expected.empty() && !report.outputs.empty() && !outcome.no_output) {
    const std::vector<uint8_t>& out0 = report.outputs[0];
    JudgeTop1(model, {reinterpret_cast<const char*>(out0.data()), out0.size()},
              {reinterpret_cast<const char*>(job.expected[0].data()), job.expected[0].size()},
              outcome);
  }
  SetCaseTime(report.hello, report.result, outcome);
  if (job.want_etdump) run.etdump = report.etdump;
  run.outcomes.push_back(std::move(outcome));
  return -1;
}

// Every case in one session: the board's artifact cache holds the artifact after the first case,
// so later cases send only their inputs and expected outputs, and run on the model the first
// case loaded (protocol 6). Stops at the first case the board could not run.
SerialCases RunCases(const SerialRunOptions& options, const ModelIo& model,
                     link::HostSession& session, link::HostJob& job, absl::Status& status) {
  SerialCases run;
  for (const CaseFiles& c : options.cases) {
    const int code = RunOneCase(options, model, c, session, job, run, status);
    if (code >= 0) {
      run.code = code;
      return run;
    }
  }
  run.code = Summarize(run.outcomes).failed() > 0 ? 1 : 0;
  return run;
}

// The end of a run of many cases: the summary, the first case's ETDump, --json and
// --case-results. Returns the exit code.
int FinishCases(const SerialRunOptions& options, const link::Hello& hello, SerialCases& run,
                json& doc) {
  const json results =
      CaseResultsJson(run.outcomes, hello.icount_shift >= 0 ? std::string("qemu-icount")
                                                            : std::string(hello.clock));
  doc["exit"] = run.code;
  doc["cases"] = results["cases"];
  doc["case_summary"] = results["case_summary"];
  if (!run.error_kind.empty()) doc["error_kind"] = run.error_kind;
  if (run.code > 1) {
    WriteJson(options.json, doc);
    return run.code;
  }
  std::fprintf(Console(options), "%s", CasesText(run.outcomes).c_str());
  if (!options.etdump.empty()) {
    if (run.etdump.empty() || !WriteFile(options.etdump, run.etdump)) {
      return Fail(kExitRuntime, "writing ETDump '" + options.etdump + "' failed" +
                                    (run.etdump.empty() ? " (the board sent none)" : ""));
    }
    doc["etdump"] = {{"path", options.etdump}, {"bytes", run.etdump.size()}};
  }
  std::string error;
  if (!options.case_results.empty() &&
      !WriteCaseResults(options.case_results, run.outcomes, results["clock"].get<std::string>(),
                        &error)) {
    return Fail(kExitRuntime, error);
  }
  if (!WriteJson(options.json, doc)) {
    return Fail(kExitRuntime, "writing '" + options.json + "' failed");
  }
  return run.code;
}

// A job number for the board (protocol 6), never 0: random, so that a continuing RUN cannot
// meet the model of another host's job on a shared board.
uint32_t NewJobId() {
  std::random_device random;
  std::uniform_int_distribution<uint32_t> any(1, UINT32_MAX);
  return any(random);
}

}  // namespace

bool IsTestFaultName(const std::string& name) {
  return std::any_of(std::begin(kTestFaults), std::end(kTestFaults),
                     [&](const TestFaultName& t) { return name == t.name; });
}

int RunOnSerialBoard(const SerialRunOptions& options) {
  link::HostJob job;
  ModelIo model;
  if (const int code = PrepareJob(options, model, job); code >= 0) return code;
  job.job_id = NewJobId();

  json doc = {{"port", options.port}, {"artifact", options.artifact}};
  std::string error;
  std::unique_ptr<link::ByteStream> stream =
      link::OpenByteStream(options.port, options.baud, &error);
  if (stream == nullptr) {
    doc["exit"] = kExitRuntime;
    doc["error"] = "board error: " + error;
    WriteJson(options.json, doc);
    return Fail(kExitRuntime, "board error: " + error);
  }
  link::HostSessionOptions session_options;
  session_options.connect_timeout_ms = static_cast<int>(options.connect_timeout_seconds * 1000);
  FILE* const out = Console(options);
  link::HostCallbacks callbacks;
  callbacks.on_log = [out](const link::Log& log) {
    static const char kLevels[] = {'D', 'I', 'E', 'F'};
    std::fprintf(out, "board log: %c] %s\n", log.level < 4 ? kLevels[log.level] : '?', log.text);
    std::fflush(out);
  };
  callbacks.on_fault = [out](const link::Fault& f) { PrintFault(out, f); };
  callbacks.on_progress = [out](const std::string& message) {
    std::fprintf(out, "%s\n", message.c_str());
    std::fflush(out);
  };
  link::HostSession session(*stream, session_options, callbacks);
  link::HostJobReport report;
  SerialCases cases;
  absl::Status status = session.Connect();
  if (status.ok()) {
    PrintHello(out, session.hello());
    std::fflush(out);
    if (options.cases.empty()) {
      status = session.RunJob(job, &report);
    } else {
      cases = RunCases(options, model, session, job, status);
      report = cases.first;
    }
  }
  if (session.connected()) doc["board"] = HelloJson(session.hello());
  doc["transfer"] = {
      {"sha256", Hex(report.artifact_digest)},
      {"bytes", job.artifact.size()},
      {"cache_hit", report.artifact_cache_hit},
      {"in_model_slot", report.artifact_in_slot},
      {"bytes_sent", report.artifact_bytes_sent},
      {"seconds", report.artifact_seconds},
      {"bytes_per_second",
       report.artifact_seconds > 0 ? report.artifact_bytes_sent / report.artifact_seconds : 0.0}};
  json faults = json::array();
  for (const link::Fault& f : report.faults) faults.push_back(FaultJson(f));
  doc["faults"] = faults;
  const link::LinkStats stats = session.link_stats();
  doc["link"] = LinkJson(stats, session.board_resets());

  if (!status.ok()) {
    PrintLinkStats(out, stats, session.board_resets());
    const std::string message = "board error: " + std::string(status.message());
    doc["exit"] = kExitRuntime;
    doc["error"] = message;
    WriteJson(options.json, doc);
    return Fail(kExitRuntime, message);
  }

  if (!options.cases.empty()) {
    PrintLinkStats(out, stats, session.board_resets());
    return FinishCases(options, session.hello(), cases, doc);
  }
  const link::Result& result = report.result;
  doc["exit"] = result.exit_code;
  doc["verdict"] = link::VerdictName(result.verdict);
  doc["run_seconds"] = report.run_seconds;
  if (result.exit_code > 1) {
    PrintLinkStats(out, stats, session.board_resets());
    doc["error"] = result.message;
    WriteJson(options.json, doc);
    return Fail(result.exit_code, result.message);
  }
  json outputs = json::array();
  if (!ReportOutputs(out, options.outputs_dir, "", report, outputs)) return kExitRuntime;
  doc["outputs"] = outputs;
  if (!options.etdump.empty()) {
    if (report.etdump.empty() || !WriteFile(options.etdump, report.etdump)) {
      return Fail(kExitRuntime, "writing ETDump '" + options.etdump + "' failed" +
                                    (report.etdump.empty() ? " (the board sent none)" : ""));
    }
    doc["etdump"] = {{"path", options.etdump}, {"bytes", report.etdump.size()}};
  }
  std::fprintf(out, "%s\n", result.message);  // the board's memory use
  PrintResultLine(out, report.hello, result, doc);
  PrintLinkStats(out, stats, session.board_resets());
  if (!WriteJson(options.json, doc)) {
    return Fail(kExitRuntime, "writing '" + options.json + "' failed");
  }
  return result.exit_code;
}

}  // namespace boardlab::run
