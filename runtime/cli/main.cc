// boardlab-run: loads a .pte artifact, runs it on the host (CPU kernels + the software NPU
// backend), checks the outputs against expected bytes and prints a per-op profile. With
// --board qemu it runs the same command line on boardlab-firmware under QEMU mps2-an505 instead
// (runtime/cli/qemu_board.h) and streams the firmware's console; with --profile it then prints
// the per-op profile of the firmware's ETDump. Every profile names its clock and where each
// kernel ran.
//
//   boardlab-run model.pte --input in.bin --expected out.bin --atol 1 --profile table
//   boardlab-run --board qemu model.pte --input in.bin --expected out.bin --timeout 60
//   boardlab-run --board qemu model.pte --profile table --debug-map model.json
//
// Exit codes: 0 pass (or nothing to verify), 1 outputs mismatch, 2 usage (bad options, unreadable
// or wrongly sized input/expected files), 3 invalid artifact, 4 runtime error.
//
// random:SEED inputs are bytes of the splitmix64 stream seeded with SEED (each 64-bit output
// taken little-endian), so any tool can reproduce them.

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "compiler/target_spec.h"
#include "nlohmann/json.hpp"
#include "runtime/cli/aligned_buffer.h"
#include "runtime/cli/budget_checks.h"
#include "runtime/cli/debug_map_names.h"
#include "runtime/cli/input_spec.h"
#include "runtime/cli/inspect.h"
#include "runtime/cli/profile_collector.h"
#include "runtime/cli/profile_table.h"
#include "runtime/cli/qemu_board.h"
#include "runtime/cli/run_cases.h"
#include "runtime/cli/serial_board.h"
#include "runtime/cli/timeline_files.h"
#include "runtime/core/error.h"
#include "runtime/executor/backend_registry.h"
#include "runtime/executor/kernel.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/link/host_transport.h"
#include "runtime/npu/npu_backend.h"
#include "runtime/platform/platform.h"
#include "runtime/profiling/etdump/clock_record.h"
#include "runtime/profiling/etdump/etdump_writer.h"
#include "runtime/sim/sim_clock.h"
#include "runtime/timing/timing_model.h"
#include "runtime/verify/output_verifier.h"

namespace {

namespace rt = boardlab::runtime;
using boardlab::run::CaseFiles;
using boardlab::run::CaseOutcome;
using boardlab::run::ModelIo;
using boardlab::run::Profile;
using boardlab::run::ProfileRow;
using nlohmann::json;

constexpr int kExitPass = 0;
constexpr int kExitMismatch = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInvalidArtifact = 3;
constexpr int kExitRuntime = 4;

struct Args {
  std::string artifact;
  std::vector<std::string> inputs;
  std::vector<std::string> expected;
  double atol = 0;
  int iterations = 1;
  std::string etdump;
  std::string outputs_dir;
  std::string profile = "table";
  std::string clock = "sim";
  std::string target;
  std::string inspect;
  std::string debug_map;
  size_t persistent_bytes = 16u << 20;
  size_t temp_bytes = 4u << 20;
  size_t etdump_bytes = 4u << 20;
  std::string board = "sim";
  double timeout_seconds = 300;
  std::string icount = "0";
  bool serve = false;
  boardlab::run::SerialRunOptions serial;  // --port, --baud, --json, ... (--board serial)
  std::string trace;                       // Chrome trace JSON of the run's timeline
  std::string timeline;                    // SVG picture of it
  boardlab::run::BudgetLimits budgets;     // --max-latency-us, --max-sram, ... (sim runs)
  std::string report;                      // compile report for the SRAM and NPU MACs budgets
  // Many cases on one load (runtime/cli/run_cases.h): --inputs DIR (with --expected DIR) or
  // --cases MANIFEST; --case-results FILE gets their verdicts as JSON.
  std::string inputs_dir;
  std::string cases_manifest;
  std::string case_results;
};

bool HasCases(const Args& args) { return !args.inputs_dir.empty() || !args.cases_manifest.empty(); }

int Fail(int code, const std::string& message) {
  std::cerr << "boardlab-run: " << message << "\n";
  return code;
}

std::string RuntimeError(rt::Error e) {
  return std::string(rt::ToString(e)) + ": " + rt::LastErrorMessage();
}

bool ReadFile(const std::string& path, std::vector<uint8_t>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

bool WriteFile(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

using Buffer = boardlab::run::AlignedBuffer;

uint32_t Fnv1a32(const uint8_t* data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  return h;
}

const char* TypeName(rt::ScalarType t) { return boardlab::run::ScalarTypeName(t); }

std::vector<int32_t> Shape(const rt::TensorView& t) { return {t.dims, t.dims + t.rank}; }

std::string ShapeString(const rt::TensorView& t) {
  std::string s = "[";
  for (int32_t i = 0; i < t.rank; ++i) {
    if (i > 0) s += ',';
    s += std::to_string(t.dims[i]);  // on its own: GCC 12 -O3 misreads "," + string as overlap
  }
  return s + "]";
}

// The first `n` elements as numbers (JSON, so floats stay floats).
json FirstValues(const rt::TensorView& t, size_t n) {
  json values = json::array();
  n = std::min<size_t>(n, static_cast<size_t>(t.NumElements()));
  for (size_t i = 0; i < n; ++i) {
    switch (t.type) {
      case rt::ScalarType::kByte:
      case rt::ScalarType::kBool:
        values.push_back(t.As<uint8_t>()[i]);
        break;
      case rt::ScalarType::kChar:
        values.push_back(t.As<int8_t>()[i]);
        break;
      case rt::ScalarType::kShort:
        values.push_back(t.As<int16_t>()[i]);
        break;
      case rt::ScalarType::kInt:
        values.push_back(t.As<int32_t>()[i]);
        break;
      case rt::ScalarType::kLong:
        values.push_back(t.As<int64_t>()[i]);
        break;
      case rt::ScalarType::kUInt32:
        values.push_back(t.As<uint32_t>()[i]);
        break;
      case rt::ScalarType::kUInt64:
        values.push_back(t.As<uint64_t>()[i]);
        break;
      case rt::ScalarType::kFloat:
        values.push_back(t.As<float>()[i]);
        break;
    }
  }
  return values;
}

// Reads the "timing" object of a target spec (compiler/targets/*.json), the same fields the
// compiler's cost model reads; fields absent keep TimingParams' defaults.
// The timing constants come from the same target spec the compiler uses (one loader, one file).
bool ReadTimingParams(const std::string& target, rt::timing::TimingParams& p, std::string& error) {
  absl::StatusOr<boardlab::compiler::TargetSpec> spec = boardlab::compiler::LoadTargetSpec(target);
  if (!spec.ok()) {
    error = "--target " + target + ": " + std::string(spec.status().message());
    return false;
  }
  p = spec->timing;
  return true;
}

std::string OpName(const rt::InstructionInfo& info) {
  std::string name = info.name == nullptr ? "?" : info.name;
  if (info.kind == rt::InstructionKind::kDelegateCall) {
    return "delegate " + std::to_string(info.delegate_index) + " (" + name + ")";
  }
  if (name.rfind("boardlab::", 0) == 0) name = name.substr(10);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".out") == 0) {
    name.resize(name.size() - 4);
  }
  return name;
}

// The clock of a host run: simulated RT700 cycles, or host time with the NPU backend's simulated
// NPU cycles for its kernels (--clock wall).
rt::etdump::ClockRecord HostClockRecord(bool sim, const rt::timing::TimingParams& params) {
  rt::etdump::ClockRecord clock;
  if (sim) {
    clock.kind = rt::etdump::ClockKind::kSimCycles;
    clock.ticks_per_second = static_cast<uint64_t>(params.cpu_clock_hz + 0.5);
    clock.core_hz = clock.ticks_per_second;
    return clock;
  }
  clock.kind = rt::etdump::ClockKind::kHostWall;
  clock.ticks_per_second =
      static_cast<uint64_t>(1e15 / static_cast<double>(rt_pal_ticks_to_ns(1000000)) + 0.5);
  clock.delegate_kind = rt::etdump::ClockKind::kSimNpuCycles;
  clock.delegate_ticks_per_second = static_cast<uint64_t>(params.npu_clock_hz + 0.5);
  return clock;
}

bool RunEndedEarly(const std::vector<boardlab::run::CollectedEvent>& run) {
  return std::any_of(run.begin(), run.end(), [](const boardlab::run::CollectedEvent& e) {
    return e.name == rt::kEndedEarlyEvent;
  });
}

Profile BuildProfile(const rt::Method& method, const boardlab::run::ProfileCollector& collector,
                     const boardlab::run::ProfileClock& clock, rt::ExecutionUnit npu_unit) {
  Profile profile;
  profile.clock = clock;
  const auto& runs = collector.runs();
  profile.iterations = static_cast<int>(runs.size());
  std::vector<bool> ended_early;
  for (const auto& run : runs) ended_early.push_back(RunEndedEarly(run));
  profile.ended_early = static_cast<int>(std::count(ended_early.begin(), ended_early.end(), true));
  const double n = std::max(1, boardlab::run::AveragedRuns(profile));
  // Ticks per instruction (and per NPU kernel id inside it), summed over the averaged runs.
  std::map<size_t, double> instr_ticks;
  std::map<size_t, double> instr_calls;
  std::map<size_t, std::map<int32_t, double>> kernel_ticks;
  double total_ticks = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    if (!boardlab::run::AveragesRun(profile, ended_early[r])) continue;
    const auto& run = runs[r];
    for (const boardlab::run::CollectedEvent& e : run) {
      if (e.name.empty()) {
        kernel_ticks[static_cast<size_t>(e.instruction)][e.delegate_id] += e.duration();
      } else if (e.name == "OPERATOR_CALL" || e.name == "DELEGATE_CALL") {
        instr_ticks[static_cast<size_t>(e.instruction)] += e.duration();
        instr_calls[static_cast<size_t>(e.instruction)] += 1;
      } else if (e.name == "Method::execute") {
        total_ticks += e.duration();
      }
    }
  }
  const std::string npu_ran_on = rt::ExecutionUnitName(npu_unit);
  for (size_t i = 0; i < method.num_instructions(); ++i) {
    const rt::InstructionInfo info = method.instruction_info(i);
    if (info.kind != rt::InstructionKind::kKernelCall &&
        info.kind != rt::InstructionKind::kDelegateCall) {
      continue;
    }
    ProfileRow row;
    row.instruction = i;
    row.op = OpName(info);
    row.npu = info.kind == rt::InstructionKind::kDelegateCall;
    row.ran_on = row.npu ? npu_ran_on : rt::ExecutionUnitName(rt::ExecutionUnit::kCpu);
    row.ticks = instr_ticks[i] / n;
    row.calls = instr_calls[i] / n;
    boardlab::run::SetCounts(clock, /*delegate=*/false, row);
    if (row.cycles < 0 && row.npu && method.LastDelegateCycles(i) > 0) {
      row.cycles = static_cast<double>(method.LastDelegateCycles(i));  // simulated NPU cycles
    }
    for (const auto& [id, ticks] : kernel_ticks[i]) {
      ProfileRow k;
      k.instruction = i;
      k.op = "kernel " + std::to_string(id);
      k.npu = true;
      k.ran_on = npu_ran_on;
      k.ticks = ticks / n;
      k.debug_id = id;
      boardlab::run::SetCounts(clock, /*delegate=*/true, k);
      row.kernels.push_back(k);
    }
    profile.rows.push_back(row);
  }
  boardlab::run::SetTotal(total_ticks / n, profile);
  return profile;
}

void AddOptions(CLI::App& app, Args& args) {
  app.add_option("artifact", args.artifact, ".pte artifact to run (not with --inspect)");
  app.add_option("--board", args.board,
                 "where to run: sim (this process, simulated RT700 timing), qemu "
                 "(boardlab-firmware on QEMU mps2-an505, Cortex-M33) or serial (a board that "
                 "speaks the board link protocol on --port)")
      ->check(CLI::IsMember({"sim", "qemu", "serial"}));
  app.add_option("--timeout", args.timeout_seconds,
                 "--board qemu: kill the firmware after this many seconds; --board serial: give "
                 "up when the result takes longer (exit 4)")
      ->check(CLI::PositiveNumber);
  app.add_option(
      "--port", args.serial.port,
      "--board serial: the board's serial port (/dev/serial/by-id/...) or tcp:HOST:PORT");
  app.add_option("--baud", args.serial.baud, "--board serial: baud rate of a serial port")
      ->default_val(921600);
  app.add_option("--connect-timeout", args.serial.connect_timeout_seconds,
                 "--board serial: wait this long for the board's HELLO")
      ->default_val(10)
      ->check(CLI::PositiveNumber);
  app.add_option("--json", args.serial.json,
                 "--board serial: write the run (board facts, transfer, result, link statistics) "
                 "as JSON here");
  app.add_option("--test-fault", args.serial.test_fault,
                 "--board serial, for recovery tests: make the board hang, hang-without-watchdog, "
                 "hardfault or reset after the run instead of answering");
  app.add_flag("--artifact-in-slot", args.serial.artifact_in_slot,
               "--board serial: the flash tool wrote the artifact into the board's model slot "
               "(e.g. XSPI flash): it is not sent, the board checks its SHA-256 and runs it there");
  app.add_option("--icount", args.icount,
                 "--board qemu: QEMU -icount shift (the firmware then prints deterministic "
                 "instruction counts), or off");
  app.add_option("--input", args.inputs,
                 "input i (in order): FILE.bin with the tensor's raw bytes, or random:SEED "
                 "(splitmix64 bytes); inputs not given are random:<index>");
  app.add_option("--expected", args.expected,
                 "expected raw bytes of output i (in order); with --inputs: the directory of the "
                 "cases' expected outputs");
  app.add_option("--inputs", args.inputs_dir,
                 "many cases on one load: a directory of NAME.bin input files (NAME.input<i>.bin "
                 "for a model with several inputs), paired by name with --expected DIR");
  app.add_option("--cases", args.cases_manifest,
                 "many cases on one load, listed in a JSON manifest: {\"cases\": [{\"name\", "
                 "\"inputs\": [...], \"expected\": [...]}]}");
  app.add_option("--case-results", args.case_results,
                 "with --inputs or --cases: write the per-case verdicts and the aggregate as JSON");
  app.add_option("--atol", args.atol, "absolute tolerance per element (int8: |a-b| <= atol)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--iterations", args.iterations, "runs to average the profile over")
      ->check(CLI::PositiveNumber);
  app.add_option("--etdump", args.etdump, "write an ExecuTorch ETDump (.etdp) here");
  app.add_option("--outputs", args.outputs_dir, "write raw outputs to DIR/output<i>.bin");
  app.add_option("--profile", args.profile,
                 "profile format: table or json (--board qemu or serial: the profile of the "
                 "ETDump the board wrote, printed only when asked for)")
      ->check(CLI::IsMember({"table", "json"}));
  app.add_option("--clock", args.clock,
                 "profile clock: sim (simulated RT700 cycles) or wall (host time)")
      ->check(CLI::IsMember({"sim", "wall"}));
  app.add_option("--target", args.target,
                 "target spec (a name such as imxrt700, or a .json file) for the timing model")
      ->default_val("imxrt700");
  app.add_option("--persistent-bytes", args.persistent_bytes, "persistent memory pool size");
  app.add_option("--temp-bytes", args.temp_bytes, "kernel scratch pool size");
  app.add_option("--etdump-bytes", args.etdump_bytes, "ETDump buffer size");
  app.add_flag("--serve", args.serve,
               "run many artifacts: one JSON request per line on stdin, one result line on "
               "stdout (docs/agent.md, the sim driver)");
  app.add_option("--inspect", args.inspect,
                 "print the profile of an ETDump (.etdp) file instead of running an artifact");
  app.add_option("--trace", args.trace,
                 "write the run's timeline as a Chrome trace (Perfetto UI, chrome://tracing)");
  app.add_option("--timeline", args.timeline, "write the run's timeline as an SVG picture");
  app.add_option("--debug-map", args.debug_map,
                 "the compiler's debug map (boardlab-compile --debug-map): the profile names CPU "
                 "ops and NPU kernels after their TFLite source ops (not with --serve)");
  boardlab::run::AddBudgetOptions(app, args.budgets);
  app.add_option("--report", args.report,
                 "the compile report (boardlab-compile --report) that --max-sram and "
                 "--min-npu-macs read");
}

// The budget options: only a sim run (whose clock is the board's) checks them.
constexpr std::initializer_list<const char*> kBudgetOptions = {
    "--max-latency-us", "--max-sram", "--max-flash", "--min-npu-macs", "--report"};

// What a sim run's budgets measure besides its latency: the artifact's size (what is stored in
// flash) and, from --report, the SRAM and the NPU's share of MACs. Read before the run, so that a
// bad report costs no run. Returns kExitPass or kExitUsage (reported).
int ReadBudgetMeasurements(const Args& args, boardlab::run::BudgetMeasurements& measured) {
  if (args.budgets.empty()) {
    return args.report.empty() ? kExitPass : Fail(kExitUsage, "--report is read for a budget only");
  }
  if (args.clock != "sim" && args.budgets.max_latency_us) {
    return Fail(kExitUsage, "--max-latency-us needs --clock sim (the board's simulated time)");
  }
  const bool needs_report = args.budgets.max_sram_bytes || args.budgets.min_npu_macs_percent;
  if (needs_report && args.report.empty()) {
    return Fail(kExitUsage,
                "--max-sram and --min-npu-macs need --report (boardlab-compile --report FILE)");
  }
  if (!args.report.empty()) {
    std::vector<uint8_t> bytes;
    if (!ReadFile(args.report, bytes)) {
      return Fail(kExitUsage, "reading compile report '" + args.report + "': cannot open it");
    }
    const std::string text(bytes.begin(), bytes.end());
    if (!json::accept(text)) {
      return Fail(kExitUsage, "'" + args.report + "' is not a compile report (not JSON)");
    }
    measured = boardlab::run::MeasurementsFromReport(text);
  }
  std::error_code error;
  const uintmax_t artifact_bytes = std::filesystem::file_size(args.artifact, error);
  if (!error) measured.flash_bytes = static_cast<double>(artifact_bytes);
  return kExitPass;
}

// The cases of --inputs DIR [--expected DIR] or --cases FILE, checked against the tensors of
// the artifact in `artifact`. Returns kExitPass, or the exit code with `error`.
int ResolveCases(const Args& args, const std::vector<uint8_t>& artifact, ModelIo& io,
                 std::vector<CaseFiles>& cases, std::string& error) {
  if (!boardlab::run::ReadArtifactIo(artifact.data(), artifact.size(), &io, &error)) {
    error = "invalid artifact '" + args.artifact + "': " + error;
    return kExitInvalidArtifact;
  }
  const bool ok =
      args.cases_manifest.empty()
          ? boardlab::run::ReadCaseDirectories(
                args.inputs_dir, args.expected.empty() ? "" : args.expected[0], io, &cases, &error)
          : boardlab::run::ReadCaseManifest(args.cases_manifest, io, &cases, &error);
  return ok ? kExitPass : kExitUsage;
}

// The same for a board run: the artifact read from its file.
int ResolveBoardCases(const Args& args, boardlab::run::BoardRunOptions& options) {
  if (!HasCases(args)) return kExitPass;
  std::vector<uint8_t> bytes;
  if (!ReadFile(args.artifact, bytes)) {
    return Fail(kExitUsage, "reading artifact '" + args.artifact + "': cannot open it");
  }
  ModelIo io;
  std::string error;
  if (const int code = ResolveCases(args, bytes, io, options.cases, error); code != kExitPass) {
    return Fail(code, error);
  }
  options.case_results = args.case_results;
  return kExitPass;
}

json BudgetChecksJson(const std::vector<boardlab::run::BudgetCheck>& checks) {
  json list = json::array();
  for (const boardlab::run::BudgetCheck& check : checks) {
    list.push_back({{"name", check.name},
                    {"unit", check.unit},
                    {"comparison", check.comparison},
                    {"limit", check.limit},
                    {"measured", check.measured ? json(*check.measured) : json(nullptr)},
                    {"passed", check.passed},
                    {"detail", check.detail},
                    {"clock", check.clock}});
  }
  return list;
}

// Reads the debug map at `path` (a JSON object). Returns kExitPass, or kExitUsage (cannot be
// read) / kExitInvalidArtifact (not a JSON object) with `error` naming the file.
int ReadDebugMap(const std::string& path, json& map, std::string& error) {
  std::vector<uint8_t> bytes;
  if (!ReadFile(path, bytes)) {
    error = "reading debug map '" + path + "': cannot open it";
    return kExitUsage;
  }
  map = json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (map.is_discarded() || !map.is_object()) {
    error = "'" + path + "': the debug map is not a JSON object";
    return kExitInvalidArtifact;
  }
  return kExitPass;
}

// Reads an ETDump into its profile, named after `map` (null: no map). Returns kExitPass, or
// kExitUsage (cannot be read) / kExitInvalidArtifact (not an ETDump) with `error` naming it.
int ReadEtdumpProfile(const std::string& etdump_path, const json& map,
                      const boardlab::run::InspectOptions& options,
                      boardlab::run::Inspection& inspection, std::string& error) {
  std::vector<uint8_t> etdp;
  if (!ReadFile(etdump_path, etdp)) {
    error = "reading ETDump '" + etdump_path + "': cannot open it";
    return kExitUsage;
  }
  // Flatbuffers wants the buffer aligned like the largest scalar it holds.
  Buffer aligned(etdp.size());
  std::copy(etdp.begin(), etdp.end(), aligned.data());
  std::string why;
  std::optional<boardlab::run::Inspection> result =
      boardlab::run::InspectEtdump({aligned.data(), aligned.size()}, map, options, &why);
  if (!result) {
    error = "'" + etdump_path + "': " + why;
    return kExitInvalidArtifact;
  }
  inspection = std::move(*result);
  return kExitPass;
}

bool WantsTimeline(const Args& args) { return !args.trace.empty() || !args.timeline.empty(); }

// --trace / --timeline (runtime/cli/timeline_files.h): a bad path is a usage error before any run.
bool TimelinePathsWritable(const Args& args) {
  const std::string error = boardlab::run::UnwritableTimelinePath({args.trace, args.timeline});
  if (!error.empty()) Fail(kExitUsage, error);
  return error.empty();
}

int WriteTimeline(const Args& args, const std::string& etdump_path, const json& map,
                  const std::string& source, int failure_code) {
  std::string error;
  if (!boardlab::run::WriteTimelineFilesOf(etdump_path, map, source, {args.trace, args.timeline},
                                           &error)) {
    return Fail(failure_code, "timeline: " + error);
  }
  return kExitPass;
}

// --inspect: the profile of an ETDump file, named through the debug map when given. A file that
// records no clock shows raw ticks; an explicit --target supplies a rate to assume for it.
int Inspect(const CLI::App& app, const Args& args) {
  boardlab::run::InspectOptions options;
  if (app.count("--target") > 0) {
    rt::timing::TimingParams params;
    std::string error;
    if (!ReadTimingParams(args.target, params, error)) return Fail(kExitUsage, error);
    options.assumed_ticks_per_second = params.cpu_clock_hz;
  }
  json map;
  std::string error;
  if (!args.debug_map.empty()) {
    if (int code = ReadDebugMap(args.debug_map, map, error); code != kExitPass) {
      return Fail(code, error);
    }
  }
  boardlab::run::Inspection inspection;
  if (int code = ReadEtdumpProfile(args.inspect, map, options, inspection, error);
      code != kExitPass) {
    return Fail(code, error);
  }
  if (args.profile == "json") {
    json doc = {{"etdump", args.inspect},
                {"profile", boardlab::run::ProfileJson(inspection.profile)}};
    if (!args.debug_map.empty()) doc["debug_map"] = args.debug_map;
    std::cout << doc.dump(2) << "\n";
  } else {
    boardlab::run::PrintProfileTable(inspection.profile, inspection.header);
  }
  if (WantsTimeline(args)) {
    return WriteTimeline(args, args.inspect, map, args.inspect, kExitInvalidArtifact);
  }
  return kExitPass;
}

// The debug map of a run (--debug-map), read before the run so that a bad one costs no run.
bool ReadRunDebugMap(const Args& args, json& map) {
  std::string error;
  if (args.debug_map.empty() || ReadDebugMap(args.debug_map, map, error) == kExitPass) return true;
  Fail(kExitUsage, error);
  return false;
}

// A temporary file name for the firmware's ETDump when the user did not ask for one; the file is
// removed with this object.
class TemporaryEtdump {
 public:
  TemporaryEtdump() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "boardlab-run-XXXXXX.etdp").string();
    const int fd = ::mkstemps(pattern.data(), 5);
    if (fd >= 0) {
      ::close(fd);
      path_ = pattern;
    }
  }
  ~TemporaryEtdump() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TemporaryEtdump(const TemporaryEtdump&) = delete;
  TemporaryEtdump& operator=(const TemporaryEtdump&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The options every board takes, from the command line.
void CopyBoardRunOptions(const Args& args, boardlab::run::BoardRunOptions& options) {
  options.artifact = args.artifact;
  options.inputs = args.inputs;
  options.expected = args.expected;
  options.atol = args.atol;
  options.iterations = args.iterations;
  options.etdump = args.etdump;
  options.outputs_dir = args.outputs_dir;
  options.timeout_seconds = args.timeout_seconds;
}

// A board writes its ETDump to `etdump`: when a view needs it and --etdump was not given, to the
// temporary file. False when that file could not be made.
bool UseTemporaryEtdump(bool needed, const TemporaryEtdump& temporary, std::string& etdump) {
  if (!needed || !etdump.empty()) return true;
  etdump = temporary.path();
  return !etdump.empty();
}

// --trace / --timeline after a board run. Only a finished run (pass, unverified or mismatch) has
// an ETDump to draw; false when drawing it failed (reported).
bool FinishedRunTimelineWritten(const Args& args, int run_code, const std::string& etdump,
                                const json& map, const std::string& source) {
  if (!WantsTimeline(args) || (run_code != kExitPass && run_code != kExitMismatch)) return true;
  return WriteTimeline(args, etdump, map, source, kExitRuntime) == kExitPass;
}

// Exit 2 when one of `options` was given: a board (fixed pools, its own clock) does not take them.
int RefuseOptions(const CLI::App& app, const std::string& board,
                  std::initializer_list<const char*> options) {
  for (const char* option : options) {
    if (app.count(option) > 0) {
      return Fail(kExitUsage, std::string(option) + " is not supported with --board " + board);
    }
  }
  return kExitPass;
}

// True when the board compared outputs with expected ones: a single run's --expected, or the
// cases' expected outputs (given for every case or for none, run_cases.h).
bool ComparedOutputs(const boardlab::run::BoardRunOptions& options) {
  return options.cases.empty() ? !options.expected.empty()
                               : !options.cases.front().expected.empty();
}

// --profile after a run on a board (qemu, serial): the per-op profile of the ETDump the board
// wrote, with its clock and where each kernel ran, as a table after the console or as the JSON
// document alone on stdout. Only a finished run (pass, unverified or mismatch) has a profile.
int PrintBoardProfile(const Args& args, int code, const boardlab::run::BoardRunOptions& options,
                      const json& map, const std::string& board) {
  if (code != kExitPass && code != kExitMismatch) return code;
  boardlab::run::Inspection inspection;
  std::string error;
  if (ReadEtdumpProfile(options.etdump, map, {}, inspection, error) != kExitPass) {
    return Fail(kExitRuntime, "board error: the " + board + " board's ETDump: " + error);
  }
  if (args.profile == "json") {
    json doc = {{"artifact", args.artifact},
                {"board", board},
                {"verdict", code == kExitMismatch      ? "fail"
                            : ComparedOutputs(options) ? "pass"
                                                       : "unverified"},
                {"profile", boardlab::run::ProfileJson(inspection.profile)}};
    if (!args.etdump.empty()) doc["etdump"] = args.etdump;
    if (!args.debug_map.empty()) doc["debug_map"] = args.debug_map;
    std::cout << doc.dump(2) << "\n";
  } else {
    boardlab::run::PrintProfileTable(inspection.profile, inspection.header);
  }
  return code;
}

// --board qemu: the same command line on boardlab-firmware under QEMU (runtime/cli/qemu_board.h).
// With --profile the per-op profile of the firmware's ETDump follows: after the console (table),
// or alone on stdout (json; the console then goes to stderr).
int RunQemu(const CLI::App& app, const Args& args) {
  // The firmware has fixed pools and its own clock.
  if (const int code = RefuseOptions(
          app, "qemu",
          {"--clock", "--target", "--persistent-bytes", "--temp-bytes", "--etdump-bytes"});
      code != kExitPass) {
    return code;
  }
  if (args.icount.empty() ||
      (args.icount != "off" && args.icount.find_first_not_of("0123456789") != std::string::npos)) {
    return Fail(kExitUsage, "--icount takes a shift (0-10) or off");
  }
  const bool profile = app.count("--profile") > 0;
  if (!args.debug_map.empty() && !profile && !WantsTimeline(args)) {
    return Fail(kExitUsage,
                "--debug-map is only used with --inspect, --profile, --trace or --timeline");
  }
  if (!TimelinePathsWritable(args)) return kExitUsage;
  json map;
  if (!ReadRunDebugMap(args, map)) return kExitUsage;
  boardlab::run::QemuRunOptions options;
  CopyBoardRunOptions(args, options);
  if (const int code = ResolveBoardCases(args, options); code != kExitPass) return code;
  options.icount = args.icount;
  options.console_to_stderr = profile && args.profile == "json";
  const TemporaryEtdump temporary;
  if (!UseTemporaryEtdump(profile || WantsTimeline(args), temporary, options.etdump)) {
    return Fail(kExitRuntime, "cannot create a temporary file for the firmware's ETDump");
  }
  const int code = boardlab::run::RunOnQemu(options);
  if (!FinishedRunTimelineWritten(args, code, options.etdump, map, args.artifact + " on qemu")) {
    return kExitRuntime;
  }
  if (!profile) return code;
  return PrintBoardProfile(args, code, options, map, "qemu");
}

// What one run produced: the message of a failed run (exit codes 2-4), or its verdict, the
// outputs' summary and the profile. Nothing is printed while it runs (--serve answers in JSON).
struct RunOutput {
  std::string error;
  std::string verdict;  // pass, fail, unverified or no_output
  json outputs = json::array();
  // Iterations that ran the whole chain (Method::produced_outputs); a streaming op such as
  // TFLite Micro's CIRCULAR_BUFFER ends the others early, without an error.
  int inferences_with_output = 0;
  // Per iteration in run order: whether it produced output (its case's time is split by it).
  std::vector<bool> produced_output;
  Profile profile;
  // A single run's inference time: the mean of its iterations that produced output (what the
  // latency budget judges), and apart those a streaming op ended early (as a case's).
  CaseOutcome times;
  size_t persistent_bytes = 0;
  std::vector<CaseOutcome> cases;  // --inputs / --cases: per case (outputs then stays empty)

  int Fail(int code, std::string message) {
    error = std::move(message);
    return code;
  }
};

// The sim clock is process-wide; a run installs its own and removes it on every return, so that
// no later run (--serve) reads a clock that no longer exists.
class SimClockInstallation {
 public:
  explicit SimClockInstallation(rt::sim::SimClock* clock) : installed_(clock != nullptr) {
    if (installed_) rt::sim::SimClock::Install(clock);
  }
  ~SimClockInstallation() {
    if (installed_) rt::sim::SimClock::Install(nullptr);
  }
  SimClockInstallation(const SimClockInstallation&) = delete;
  SimClockInstallation& operator=(const SimClockInstallation&) = delete;

 private:
  bool installed_;
};

// The inputs (FILE.bin or random:SEED, sized as the tensors) and the expected outputs' bytes.
int ReadInputs(const Args& args, const rt::Method& method,
               std::vector<std::vector<uint8_t>>& input_data,
               std::vector<std::vector<uint8_t>>& expected, RunOutput& out) {
  input_data.assign(method.num_inputs(), {});
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    const rt::TensorView& t = *method.input(i);
    const size_t bytes = static_cast<size_t>(t.NumBytes());
    const std::string spec =
        i < args.inputs.size() ? args.inputs[i] : "random:" + std::to_string(i);
    std::vector<uint8_t> data;
    std::string error;
    if (!boardlab::run::ReadInputSpec(spec, i, bytes, TypeName(t.type) + ShapeString(t), &data,
                                      &error)) {
      return out.Fail(kExitUsage, error);
    }
    input_data[i] = std::move(data);
  }
  if (args.inputs.size() > method.num_inputs()) {
    return out.Fail(kExitUsage, std::to_string(args.inputs.size()) +
                                    " --input given, the model has " +
                                    std::to_string(method.num_inputs()) + " inputs");
  }
  if (args.expected.size() > method.num_outputs()) {
    return out.Fail(kExitUsage, std::to_string(args.expected.size()) +
                                    " --expected given, the model has " +
                                    std::to_string(method.num_outputs()) + " outputs");
  }
  expected.assign(args.expected.size(), {});
  for (size_t i = 0; i < args.expected.size(); ++i) {
    if (!ReadFile(args.expected[i], expected[i])) {
      return out.Fail(kExitUsage,
                      "reading expected file '" + args.expected[i] + "': cannot open it");
    }
  }
  return kExitPass;
}

// Each output's summary, checked against `expected` and written to --outputs when asked.
int CollectOutputs(const Args& args, rt::Method& method,
                   const std::vector<std::vector<uint8_t>>& expected, RunOutput& out) {
  bool all_pass = true;
  for (size_t i = 0; i < method.num_outputs(); ++i) {
    const rt::TensorView& t = *method.GetOutput(i);
    const size_t bytes = static_cast<size_t>(t.NumBytes());
    const auto* data = static_cast<const uint8_t*>(t.data);
    char checksum[16];
    std::snprintf(checksum, sizeof(checksum), "%08" PRIx32, Fnv1a32(data, bytes));
    json o = {{"index", i},     {"type", TypeName(t.type)},   {"shape", Shape(t)},
              {"bytes", bytes}, {"first", FirstValues(t, 8)}, {"fnv1a32", checksum}};
    if (i < expected.size()) {
      rt::OutputComparison c;
      const rt::Error e =
          rt::CompareOutput(t, {expected[i].data(), expected[i].size()}, args.atol, &c);
      if (e != rt::Error::kOk) {
        o["verification"] = {{"pass", false}, {"error", rt::LastErrorMessage()}};
        all_pass = false;
      } else {
        o["verification"] = {{"pass", c.pass},
                             {"max_abs_diff", c.max_abs_diff},
                             {"mismatches", c.mismatches},
                             {"elements", c.num_elements}};
        all_pass = all_pass && c.pass;
      }
    }
    if (!args.outputs_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(args.outputs_dir, ec);
      const std::string path =
          (std::filesystem::path(args.outputs_dir) / ("output" + std::to_string(i) + ".bin"))
              .string();
      if (!WriteFile(path, data, bytes)) {
        return out.Fail(kExitRuntime, "writing output file '" + path + "' failed");
      }
      o["path"] = path;
    }
    out.outputs.push_back(o);
  }
  out.verdict = expected.empty() ? "unverified" : all_pass ? "pass" : "fail";
  return kExitPass;
}

// `iterations` runs of the method, the inputs set again before each: the memory plan may reuse
// an input's arena bytes once the input has been read, as TFLite Micro's does.
int ExecuteIterations(int iterations, const std::vector<std::vector<uint8_t>>& input_data,
                      rt::Method& method, RunOutput& out) {
  for (int it = 0; it < iterations; ++it) {
    for (size_t i = 0; i < input_data.size(); ++i) {
      const std::vector<uint8_t>& data = input_data[i];
      if (rt::Error e = method.SetInput(i, data.data(), data.size()); e != rt::Error::kOk) {
        return out.Fail(kExitRuntime, RuntimeError(e));
      }
    }
    if (rt::Error e = method.Execute(); e != rt::Error::kOk) {
      return out.Fail(kExitRuntime, "execute: " + RuntimeError(e));
    }
    if (method.produced_outputs()) ++out.inferences_with_output;
    out.produced_output.push_back(method.produced_outputs());
  }
  return kExitPass;
}

// The mean Method::execute ticks of a case's runs (from `first_run` on, one per iteration) that
// produced output, or of those a streaming op ended early (`with_output` false), and how many.
struct RunsMean {
  double ticks = 0;
  size_t runs = 0;
};
RunsMean MeanExecuteTicks(const boardlab::run::ProfileCollector& collector, size_t first_run,
                          const std::vector<bool>& produced_output, bool with_output) {
  double total = 0;
  RunsMean mean;
  for (size_t i = 0; i < produced_output.size() && first_run + i < collector.runs().size(); ++i) {
    if (produced_output[i] != with_output) continue;
    ++mean.runs;
    for (const boardlab::run::CollectedEvent& e : collector.runs()[first_run + i]) {
      if (e.name == "Method::execute") total += static_cast<double>(e.duration());
    }
  }
  if (mean.runs > 0) mean.ticks = total / static_cast<double>(mean.runs);
  return mean;
}

// The microseconds of `ticks` on `clock`, or nullopt when the clock gives no time.
std::optional<double> MicrosecondsOf(double ticks, const boardlab::run::ProfileClock& clock) {
  ProfileRow time;
  time.ticks = ticks;
  boardlab::run::SetCounts(clock, /*delegate=*/false, time);
  if (time.us < 0) return std::nullopt;
  return time.us;
}

// A case's time on `clock`: the mean of its inferences that produced output, and apart the
// mean of those a streaming op ended early (they run part of the chain: averaged in, they would
// make the model look faster than any whole inference).
void SetCaseTimes(const boardlab::run::ProfileCollector& collector, size_t first_run,
                  const std::vector<bool>& produced_output,
                  const boardlab::run::ProfileClock& clock, CaseOutcome& outcome) {
  const RunsMean full = MeanExecuteTicks(collector, first_run, produced_output, true);
  const RunsMean early = MeanExecuteTicks(collector, first_run, produced_output, false);
  if (full.runs > 0) {
    outcome.ticks = static_cast<uint64_t>(full.ticks + 0.5);
    outcome.us = MicrosecondsOf(full.ticks, clock);
  }
  outcome.early_inferences = static_cast<uint32_t>(early.runs);
  if (early.runs > 0) {
    outcome.early_ticks = static_cast<uint64_t>(early.ticks + 0.5);
    outcome.early_us = MicrosecondsOf(early.ticks, clock);
  }
}

// What one case's run gave: its outputs' verdicts and top-1.
CaseOutcome CaseOutcomeOf(const CaseFiles& c, const ModelIo& io, const rt::Method& method,
                          const std::vector<std::vector<uint8_t>>& expected, const json& outputs) {
  CaseOutcome outcome;
  outcome.name = c.name;
  outcome.outputs = boardlab::run::OutputVerdictsOf(outputs);
  outcome.detail = outputs;
  if (!expected.empty() && method.num_outputs() > 0) {
    const rt::TensorView& t = *method.GetOutput(0);
    boardlab::run::JudgeTop1(
        io, {static_cast<const char*>(t.data), static_cast<size_t>(t.NumBytes())},
        {reinterpret_cast<const char*>(expected[0].data()), expected[0].size()}, outcome);
  }
  return outcome;
}

// Every case on the loaded method: its inputs, args.iterations runs, its outputs checked and
// written to --outputs DIR/NAME/. A case that cannot run stops the run (exit 2-4).
int RunCasesOnMethod(const Args& args, const std::vector<CaseFiles>& cases, const ModelIo& io,
                     rt::Method& method, const boardlab::run::ProfileCollector& collector,
                     const boardlab::run::ProfileClock& clock, RunOutput& out) {
  for (const CaseFiles& c : cases) {
    Args case_args = args;
    case_args.inputs = c.inputs;
    case_args.expected = c.expected;
    if (!args.outputs_dir.empty()) {
      case_args.outputs_dir = (std::filesystem::path(args.outputs_dir) / c.name).string();
    }
    RunOutput case_out;
    std::vector<std::vector<uint8_t>> input_data, expected;
    const size_t first_run = collector.runs().size();
    int code = ReadInputs(case_args, method, input_data, expected, case_out);
    if (code == kExitPass) code = ExecuteIterations(args.iterations, input_data, method, case_out);
    // As a single run's: a case whose last inference ended early is not judged (its outputs
    // are an earlier case's, or the arena's zeros).
    const bool no_output = code == kExitPass && !method.produced_outputs();
    if (no_output) expected.clear();
    if (code == kExitPass) code = CollectOutputs(case_args, method, expected, case_out);
    if (code != kExitPass) return out.Fail(code, "case '" + c.name + "': " + case_out.error);
    out.inferences_with_output += case_out.inferences_with_output;
    out.cases.push_back(CaseOutcomeOf(c, io, method, expected, case_out.outputs));
    SetCaseTimes(collector, first_run, case_out.produced_output, clock, out.cases.back());
    out.cases.back().no_output = no_output;
  }
  out.verdict = boardlab::run::CasesVerdict(boardlab::run::Summarize(out.cases));
  return kExitPass;
}

// The runtime library is built without RTTI, so NpuBackend and EtdumpWriter have no typeinfo
// for UBSan's vptr check to reference; the check is off for the code that owns them.
__attribute__((no_sanitize("vptr"))) int RunArtifact(const Args& args, RunOutput& out) {
  rt_pal_init();
  std::vector<uint8_t> file;
  if (!ReadFile(args.artifact, file)) {
    return out.Fail(kExitUsage, "reading artifact '" + args.artifact + "': cannot open it");
  }
  // The cases are checked against the model before anything runs.
  ModelIo io;
  std::vector<CaseFiles> cases;
  if (HasCases(args)) {
    std::string error;
    if (const int code = ResolveCases(args, file, io, cases, error); code != kExitPass) {
      return out.Fail(code, error);
    }
  }
  Buffer artifact(file.size());
  std::copy(file.begin(), file.end(), artifact.data());
  rt::Result<rt::Program> program = rt::Program::Load({artifact.data(), artifact.size()});
  if (!program.ok()) {
    return out.Fail(kExitInvalidArtifact,
                    "invalid artifact '" + args.artifact + "': " + RuntimeError(program.error()));
  }

  rt::timing::TimingParams params;
  if (std::string error; !ReadTimingParams(args.target, params, error)) {
    return out.Fail(kExitUsage, error);
  }
  const bool sim = args.clock == "sim";
  boardlab::runtime::sim::SimClock sim_clock(params);
  rt::KernelLookupFn lookup = rt::FindKernel;
  rt::MethodOptions options;
  // Uninstalled on every return: --serve runs many artifacts in this process.
  const SimClockInstallation installation(sim ? &sim_clock : nullptr);
  if (sim) {
    rt::sim::SimKernelLookup::SetBase(rt::FindKernel);
    lookup = &rt::sim::SimKernelLookup::Find;
    options.clock = &rt::sim::SimClock::Read;
  }
  rt::npu::NpuBackend npu(params, sim ? &sim_clock : nullptr);
  rt::BackendRegistry backends;
  if (rt::Error e = backends.Register(&npu); e != rt::Error::kOk) {
    return out.Fail(kExitRuntime, RuntimeError(e));
  }

  // Memory: planned buffers exactly as the artifact says, pools as the options say.
  rt::Result<size_t> num_planned = program->NumPlannedBuffers("forward");
  if (!num_planned.ok()) {
    return out.Fail(kExitInvalidArtifact, "invalid artifact: " + RuntimeError(num_planned.error()));
  }
  std::vector<std::unique_ptr<Buffer>> planned_storage;
  std::vector<rt::Span<uint8_t>> planned;
  for (size_t i = 0; i < *num_planned; ++i) {
    rt::Result<size_t> size = program->PlannedBufferSize("forward", i);
    if (!size.ok()) {
      return out.Fail(kExitInvalidArtifact, "invalid artifact: " + RuntimeError(size.error()));
    }
    planned_storage.push_back(std::make_unique<Buffer>(*size));
    planned.emplace_back(planned_storage.back()->data(), *size);
  }
  Buffer persistent_pool(args.persistent_bytes);
  Buffer temp_pool(args.temp_bytes);
  rt::MemoryAllocator persistent(persistent_pool.data(), persistent_pool.size());
  rt::MemoryAllocator temp(temp_pool.data(), temp_pool.size());
  rt::MemoryManager memory(&persistent, {planned.data(), planned.size()}, &temp);

  std::unique_ptr<Buffer> etdump_buffer;
  std::unique_ptr<rt::etdump::EtdumpWriter> etdump;
  if (!args.etdump.empty()) {
    etdump_buffer = std::make_unique<Buffer>(args.etdump_bytes);
    etdump =
        std::make_unique<rt::etdump::EtdumpWriter>(etdump_buffer->data(), etdump_buffer->size());
  }
  boardlab::run::ProfileCollector collector(etdump.get());

  rt::Result<rt::Method> method =
      program->LoadMethod("forward", memory, backends, &collector, lookup, options);
  if (!method.ok()) {
    const rt::Error e = method.error();
    const bool bad_artifact =
        e == rt::Error::kInvalidProgram || e == rt::Error::kIncompatibleVersion;
    return out.Fail(bad_artifact ? kExitInvalidArtifact : kExitRuntime,
                    "loading method 'forward': " + RuntimeError(e));
  }

  // The clock, recorded in the "Default" block (boardlab::run::InspectEtdump reads it back).
  const rt::etdump::ClockRecord clock = HostClockRecord(sim, params);
  if (etdump != nullptr) rt::etdump::WriteClockRecord(*etdump, clock);

  const boardlab::run::ProfileClock profile_clock = boardlab::run::ProfileClockFrom(clock);
  if (HasCases(args)) {
    if (const int code = RunCasesOnMethod(args, cases, io, *method, collector, profile_clock, out);
        code != kExitPass) {
      return code;
    }
  } else {
    std::vector<std::vector<uint8_t>> input_data;
    std::vector<std::vector<uint8_t>> expected;
    const size_t first_run = collector.runs().size();
    int code = ReadInputs(args, *method, input_data, expected, out);
    if (code == kExitPass) code = ExecuteIterations(args.iterations, input_data, *method, out);
    if (code == kExitPass) {
      SetCaseTimes(collector, first_run, out.produced_output, profile_clock, out.times);
    }
    // The last inference ended early: its outputs are an earlier one's (or the arena's zeros),
    // so they are shown but not judged. Not a failure: the model is waiting for more input.
    if (code == kExitPass && !method->produced_outputs()) expected.clear();
    if (code == kExitPass) code = CollectOutputs(args, *method, expected, out);
    if (code == kExitPass && !method->produced_outputs()) out.verdict = "no_output";
    if (code != kExitPass) return code;
  }
  if (etdump != nullptr) {
    rt::Result<rt::Span<const uint8_t>> bytes = etdump->Finish();
    if (!bytes.ok())
      return out.Fail(kExitRuntime, "finishing the ETDump: " + RuntimeError(bytes.error()));
    if (!WriteFile(args.etdump, bytes->data(), bytes->size())) {
      return out.Fail(kExitRuntime, "writing ETDump '" + args.etdump + "' failed");
    }
  }

  out.profile = BuildProfile(*method, collector, profile_clock, npu.ran_on());
  out.persistent_bytes = method->persistent_bytes();
  return out.verdict == "fail" ? kExitMismatch : kExitPass;
}

// The --profile json document of a run; with cases also "cases" and "case_summary".
json RunDocument(const Args& args, const RunOutput& out) {
  json document = {{"artifact", args.artifact},
                   {"verdict", out.verdict},
                   {"atol", args.atol},
                   {"persistent_bytes", out.persistent_bytes},
                   {"inferences_with_output", out.inferences_with_output},
                   {"iterations", args.iterations},
                   {"outputs", out.outputs},
                   {"profile", boardlab::run::ProfileJson(out.profile)}};
  if (HasCases(args)) {
    const json results = boardlab::run::CaseResultsJson(out.cases, out.profile.clock.kind);
    document["cases"] = results["cases"];
    document["case_summary"] = results["case_summary"];
  } else {
    document.update(boardlab::run::TimesJson(out.times));
  }
  return document;
}

// A single run whose iterations did not all produce output: the inference time is the mean of
// those that did (as the profile's rows and total), the early ends' apart.
void PrintInferenceTime(const Args& args, const RunOutput& out) {
  const CaseOutcome& t = out.times;
  if (t.early_inferences == 0) return;
  const int with_output = args.iterations - static_cast<int>(t.early_inferences);
  std::string time = "none (no inference produced output)";
  if (with_output > 0) {
    char text[64];
    if (t.us) {
      std::snprintf(text, sizeof(text), "%.2f us", *t.us);
    } else {
      std::snprintf(text, sizeof(text), "%" PRIu64 " ticks", t.ticks);
    }
    time = std::string(text) + " (mean of the " + std::to_string(with_output) + " of " +
           std::to_string(args.iterations) + " inferences that produced output)";
  }
  std::printf("inference time: %s; %s\n", time.c_str(), boardlab::run::EarlyEndedText(t).c_str());
}

void PrintRunTable(const Args& args, const RunOutput& out) {
  if (out.verdict == "unverified") {
    std::printf("verdict: UNVERIFIED (no --expected outputs)\n");
  } else if (out.verdict == "no_output" && HasCases(args)) {
    std::printf(
        "verdict: NO OUTPUT YET (a streaming op ended every case's last inference early; no "
        "output was checked)\n");
  } else if (out.verdict == "no_output") {
    std::printf(
        "verdict: NO OUTPUT YET (a streaming op ended the last inference early, as TFLite "
        "Micro's CIRCULAR_BUFFER does until its next run; %d of %d inferences produced output; "
        "the outputs below are not this inference's and were not checked)\n",
        out.inferences_with_output, args.iterations);
  } else {
    std::printf("verdict: %s (atol %g)\n", out.verdict == "pass" ? "PASS" : "FAIL", args.atol);
  }
  if (HasCases(args)) {
    std::printf("%s", boardlab::run::CasesText(out.cases).c_str());
    const size_t runs = out.cases.size() * static_cast<size_t>(args.iterations);
    boardlab::run::PrintProfileTable(
        out.profile, "profile (average of " + std::to_string(runs) +
                         " runs: " + std::to_string(out.cases.size()) + " cases x " +
                         std::to_string(args.iterations) + " iteration" +
                         (args.iterations == 1 ? "" : "s") +
                         boardlab::run::EndedEarlyNote(out.profile) + "):");
    return;
  }
  std::printf("outputs:\n");
  for (const json& o : out.outputs) {
    std::string first;
    for (const json& v : o["first"]) {
      if (!first.empty()) first += ' ';
      first += v.dump();
    }
    std::printf("  output %zu: %s %s first [%s%s] fnv1a32 %s\n", o["index"].get<size_t>(),
                o["type"].get<std::string>().c_str(), o["shape"].dump().c_str(), first.c_str(),
                o["first"].size() < o["bytes"].get<size_t>() ? " ..." : "",
                o["fnv1a32"].get<std::string>().c_str());
    if (o.contains("verification")) {
      const json& v = o["verification"];
      if (v.contains("error")) {
        std::printf("    FAIL: %s\n", v["error"].get<std::string>().c_str());
      } else {
        std::printf("    %s: max abs diff %g, %zu of %zu elements outside atol\n",
                    v["pass"].get<bool>() ? "pass" : "FAIL", v["max_abs_diff"].get<double>(),
                    v["mismatches"].get<size_t>(), v["elements"].get<size_t>());
      }
    }
  }
  boardlab::run::PrintProfileTable(
      out.profile, "profile (average of " + std::to_string(args.iterations) + " iteration" +
                       (args.iterations == 1 ? "" : "s") +
                       boardlab::run::EndedEarlyNote(out.profile) + "):");
  PrintInferenceTime(args, out);
}

int Run(const Args& args) {
  json map;
  if (!ReadRunDebugMap(args, map) || !TimelinePathsWritable(args)) return kExitUsage;
  // A timeline is drawn from the run's ETDump: a temporary one when --etdump was not given.
  const TemporaryEtdump temporary;
  Args run_args = args;
  if (!UseTemporaryEtdump(WantsTimeline(args), temporary, run_args.etdump)) {
    return Fail(kExitRuntime, "cannot create a temporary ETDump");
  }
  boardlab::run::BudgetMeasurements measured;
  if (ReadBudgetMeasurements(args, measured) != kExitPass) return kExitUsage;
  RunOutput out;
  int code = RunArtifact(run_args, out);
  if (!out.error.empty()) return Fail(code, out.error);
  boardlab::run::NameFromDebugMap(map, out.profile);
  // The latency budget holds for inferences that produced output: with cases the slowest case's
  // mean, else the mean of the iterations that did; when no inference did, there is no latency
  // to judge.
  const std::optional<double> slowest = boardlab::run::Summarize(out.cases).slowest_us;
  const std::optional<double> latency = HasCases(args) ? slowest : out.times.us;
  boardlab::run::MeasureLatency(latency.value_or(0), out.profile.clock.kind, measured);
  if (out.verdict == "no_output") {
    boardlab::run::NoLatencyToJudge(out.profile.clock.kind, measured);
  }
  const std::vector<boardlab::run::BudgetCheck> budgets =
      boardlab::run::CheckBudgets(args.budgets, measured);
  if (args.profile == "json") {
    json document = RunDocument(args, out);
    if (!budgets.empty()) document["budgets"] = BudgetChecksJson(budgets);
    std::cout << document.dump(2) << "\n";
  } else {
    PrintRunTable(args, out);
    for (const boardlab::run::BudgetCheck& check : budgets) {
      std::printf("budget %s\n", boardlab::run::DescribeCheck(check).c_str());
    }
  }
  if (!boardlab::run::AllPassed(budgets)) {
    Fail(kExitMismatch, boardlab::run::FailedBudgetsMessage(budgets));
    code = kExitMismatch;
  }
  if (std::string error; !args.case_results.empty() &&
                         !boardlab::run::WriteCaseResults(args.case_results, out.cases,
                                                          out.profile.clock.kind, &error)) {
    return Fail(kExitRuntime, error);
  }
  if (WantsTimeline(args) && WriteTimeline(args, run_args.etdump, map, args.artifact + " on sim",
                                           kExitRuntime) != kExitPass) {
    return kExitRuntime;
  }
  return code;
}

// One --serve request: a JSON object with the run's options, e.g. {"artifact": "m.pte",
// "inputs": ["random:0"], "expected": ["o.bin"], "atol": 1, "iterations": 1, "etdump": "r.etdp",
// "outputs": "dir"}. Unknown keys are usage errors, so that an agent's typo is not ignored.
int ParseServeRequest(const std::string& line, Args& args, RunOutput& out) {
  try {
    const json request = json::parse(line);
    if (!request.is_object()) return out.Fail(kExitUsage, "request: not a JSON object");
    for (const auto& [key, value] : request.items()) {
      if (key == "artifact") {
        args.artifact = value.get<std::string>();
      } else if (key == "inputs") {
        args.inputs = value.get<std::vector<std::string>>();
      } else if (key == "expected") {
        args.expected = value.get<std::vector<std::string>>();
      } else if (key == "atol") {
        args.atol = value.get<double>();
      } else if (key == "iterations") {
        args.iterations = value.get<int>();
      } else if (key == "etdump") {
        args.etdump = value.get<std::string>();
      } else if (key == "outputs") {
        args.outputs_dir = value.get<std::string>();
      } else if (key == "cases") {
        args.cases_manifest = value.get<std::string>();
      } else {
        return out.Fail(kExitUsage, "request: unknown key '" + key +
                                        "' (known: artifact, inputs, expected, atol, "
                                        "iterations, etdump, outputs, cases)");
      }
    }
  } catch (const json::exception& e) {
    return out.Fail(kExitUsage, std::string("request: ") + e.what());
  }
  if (args.artifact.empty()) return out.Fail(kExitUsage, "request: no artifact");
  if (HasCases(args) && (!args.inputs.empty() || !args.expected.empty())) {
    return out.Fail(kExitUsage, "request: \"cases\" goes without \"inputs\" and \"expected\"");
  }
  if (args.iterations < 1 || args.atol < 0) {
    return out.Fail(kExitUsage, "request: iterations must be >= 1 and atol >= 0");
  }
  return kExitPass;
}

// --serve: the sim driver's persistent runner (the agent saves a process start per job). Each
// request line is answered by one line `result {"exit": CODE, "document": {--profile json}}`, or
// `result {"exit": CODE, "error": MESSAGE}` for exit codes 2-4. stderr goes to stdout, so that a
// run's log lines (the runtime's, the error) come before its result in one ordered stream. A
// crash or a hang ends only this process; the agent starts another. Returns at the end of stdin.
int Serve(const Args& defaults) {
  ::dup2(STDOUT_FILENO, STDERR_FILENO);
  for (std::string line; std::getline(std::cin, line);) {
    if (line.empty()) continue;
    Args args = defaults;
    RunOutput out;
    int code = ParseServeRequest(line, args, out);
    if (code == kExitPass) code = RunArtifact(args, out);
    json result = {{"exit", code}};
    if (out.error.empty()) {
      result["document"] = RunDocument(args, out);
    } else {
      std::fprintf(stderr, "boardlab-run: %s\n", out.error.c_str());
      result["error"] = out.error;
    }
    // Paths and messages need not be UTF-8; the line must stay JSON.
    const std::string text =
        "result " + result.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  }
  return kExitPass;
}

// --board serial: the options a board takes (the same as --board qemu's) go to RunOnSerialBoard.
int RunSerial(const CLI::App& app, Args& args) {
  if (const int code = RefuseOptions(app, "serial",
                                     {"--clock", "--target", "--persistent-bytes", "--temp-bytes",
                                      "--etdump-bytes", "--icount"});
      code != kExitPass) {
    return code;
  }
  const bool profile = app.count("--profile") > 0;
  if (!args.debug_map.empty() && !profile && !WantsTimeline(args)) {
    return Fail(kExitUsage,
                "--debug-map is only used with --profile, --trace or --timeline on --board serial");
  }
  if (args.serial.port.empty()) {
    return Fail(kExitUsage, "--board serial needs --port (a serial device or tcp:HOST:PORT)");
  }
  if (args.serial.port.rfind("tcp:", 0) != 0 &&
      !boardlab::link::IsSupportedBaudRate(args.serial.baud)) {
    return Fail(kExitUsage, "--baud " + std::to_string(args.serial.baud) +
                                " is not a standard rate (9600 ... 4000000)");
  }
  if (!args.serial.test_fault.empty() && !boardlab::run::IsTestFaultName(args.serial.test_fault)) {
    return Fail(kExitUsage,
                "--test-fault takes none, hang, hang-without-watchdog, hardfault or "
                "reset");
  }
  json map;
  if (!TimelinePathsWritable(args) || !ReadRunDebugMap(args, map)) return kExitUsage;
  CopyBoardRunOptions(args, args.serial);
  if (const int code = ResolveBoardCases(args, args.serial); code != kExitPass) return code;
  args.serial.console_to_stderr = profile && args.profile == "json";
  // The board sends its ETDump over the link; the profile and the timeline are read from it on
  // the host.
  const TemporaryEtdump temporary;
  if (!UseTemporaryEtdump(profile || WantsTimeline(args), temporary, args.serial.etdump)) {
    return Fail(kExitRuntime, "cannot create a temporary file for the board's ETDump");
  }
  const int code = boardlab::run::RunOnSerialBoard(args.serial);
  if (!FinishedRunTimelineWritten(args, code, args.serial.etdump, map,
                                  args.artifact + " on " + args.serial.port)) {
    return kExitRuntime;
  }
  if (!profile) return code;
  return PrintBoardProfile(args, code, args.serial, map, "serial");
}

// --inputs / --cases, and what goes with them. Returns kExitPass or kExitUsage (reported).
int CheckCaseOptions(const CLI::App& app, const Args& args) {
  const bool directories = !args.inputs_dir.empty();
  const bool manifest = !args.cases_manifest.empty();
  if (!directories && !manifest) {
    return args.case_results.empty() ? kExitPass
                                     : Fail(kExitUsage, "--case-results needs --inputs or --cases");
  }
  if (directories && manifest) {
    return Fail(kExitUsage, "--inputs and --cases both give the cases; give one of them");
  }
  if (app.count("--input") > 0) {
    return Fail(kExitUsage,
                "--input gives the inputs of one run; with --inputs or --cases each case has its "
                "own");
  }
  if (manifest && !args.expected.empty()) {
    return Fail(kExitUsage,
                "--expected with --cases: the manifest lists each case's expected "
                "outputs");
  }
  if (directories && args.expected.size() > 1) {
    return Fail(kExitUsage, "with --inputs, --expected names one directory of expected outputs");
  }
  if (args.serve || !args.inspect.empty()) {
    return Fail(kExitUsage,
                "--inputs and --cases run an artifact (--serve takes \"cases\" in "
                "its requests)");
  }
  return kExitPass;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"boardlab-run: run a boardlab .pte artifact on the host and check its outputs"};
  Args args;
  AddOptions(app, args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (args.board != "sim" || args.serve || !args.inspect.empty()) {
    for (const char* option : kBudgetOptions) {
      if (app.count(option) > 0) {
        return Fail(kExitUsage, std::string(option) +
                                    " is checked on a run with --board sim only (not --serve, "
                                    "--inspect, qemu or serial)");
      }
    }
  }
  if (CheckCaseOptions(app, args) != kExitPass) return kExitUsage;
  if (args.serve) {
    if (!args.artifact.empty() || !args.inspect.empty() || args.board != "sim" ||
        !args.debug_map.empty() || WantsTimeline(args)) {
      return Fail(kExitUsage,
                  "--serve reads its runs from stdin; no artifact, --inspect, --debug-map, "
                  "--trace, --timeline or qemu");
    }
    return Serve(args);
  }
  if (!args.inspect.empty()) {
    if (!args.artifact.empty()) {
      return Fail(kExitUsage, "--inspect reads an ETDump; it takes no artifact");
    }
    if (!TimelinePathsWritable(args)) return kExitUsage;
    return Inspect(app, args);
  }
  if (args.artifact.empty()) {
    return Fail(kExitUsage, "an artifact is required (or --inspect FILE.etdp); see --help");
  }
  if (args.board == "qemu") return RunQemu(app, args);
  if (args.board == "serial") return RunSerial(app, args);
  for (const char* option :
       {"--port", "--baud", "--connect-timeout", "--json", "--test-fault", "--artifact-in-slot"}) {
    if (app.count(option) > 0) {
      return Fail(kExitUsage, std::string(option) + " is only used with --board serial");
    }
  }
  if (app.count("--timeout") > 0 || app.count("--icount") > 0) {
    return Fail(kExitUsage, "--timeout and --icount are only used with --board qemu or serial");
  }
  return Run(args);
}
