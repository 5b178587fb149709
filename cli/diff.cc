#include "cli/diff.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "boardlab/v1/job_service.grpc.pb.h"
#include "cli/exit_codes.h"
#include "cli/file_io.h"
#include "cli/job_files.h"
#include "cli/profile_view.h"
#include "cli/tables.h"
#include "nlohmann/json.hpp"
#include "proto/support/grpc_util.h"
#include "runtime/cli/budget_checks.h"
#include "runtime/cli/model_io.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor_view.h"
#include "runtime/verify/output_verifier.h"

namespace boardlab::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// The compile report's memory figures the diff compares.
constexpr const char* kMemoryFields[] = {"arena_bytes", "weight_bytes", "weight_scratch_bytes",
                                         "sram_used_bytes"};

// A JSON document, or null when the text is empty or not JSON (a file the job lacks).
json ParseOrNull(const std::string& text) {
  if (text.empty()) return nullptr;
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return doc.is_discarded() ? json(nullptr) : doc;
}

// The optional file `name` in `dir`: "" when it is not there.
std::string ReadOptional(const fs::path& dir, const std::string& name) {
  if (!fs::is_regular_file(dir / name)) return "";
  absl::StatusOr<std::string> bytes = ReadFileBytes((dir / name).string(), name);
  return bytes.ok() ? *std::move(bytes) : "";
}

// Where the snapshot keeps the job file `name` (ListJobFiles' names), or null for a file the
// diff does not read (the artifact, the ETDump, the log).
std::string* SnapshotFile(JobSnapshot& snapshot, absl::string_view name) {
  if (name == "report.json") return &snapshot.report_json;
  if (name == "profile.json") return &snapshot.profile_json;
  if (name == "debug_map.json") return &snapshot.debug_map_json;
  size_t index = 0;
  if (absl::ConsumePrefix(&name, "output") && absl::ConsumeSuffix(&name, ".bin") &&
      absl::SimpleAtoi(name, &index) && index < snapshot.outputs.size()) {
    return &snapshot.outputs[index];
  }
  return nullptr;
}

// Whether `object` has `key` with a value of another type than the diff reads there.
bool NotNumber(const json& object, const char* key) {
  return object.contains(key) && !object[key].is_number();
}
bool NotString(const json& object, const char* key) {
  return object.contains(key) && !object[key].is_string();
}

// The problem of the report's "memory" (ReportProblem), or "".
std::string MemoryProblem(const json& memory) {
  if (!memory.is_object()) return "memory is not an object";
  if (NotString(memory, "weights_placement")) return "memory.weights_placement is not a string";
  for (const char* key : kMemoryFields) {
    if (NotNumber(memory, key)) return absl::StrCat("memory.", key, " is not a number");
  }
  return "";
}

// The problem of the report's "ops" (ReportProblem), or "".
std::string OpsProblem(const json& ops) {
  if (!ops.is_array()) return "ops is not an array";
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].is_object()) return absl::StrCat("ops[", i, "] is not an object");
    if (NotNumber(ops[i], "index")) return absl::StrCat("ops[", i, "].index is not a number");
    for (const char* key : {"type", "unit", "reason"}) {
      if (NotString(ops[i], key)) return absl::StrCat("ops[", i, "].", key, " is not a string");
    }
  }
  return "";
}

// What is wrong with the compile report where the diff reads it ("ops[2].unit is not a
// string"), or "" when nothing is (an empty text: the job has no report). The reads below are
// guarded and would show a bad field as absent; a report with one is named as broken instead of
// diffed on guesses.
std::string ReportProblem(const std::string& report_json) {
  if (report_json.empty()) return "";
  const json report = json::parse(report_json, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded()) return "not JSON";
  if (!report.is_object()) return "not a JSON object";
  if (NotNumber(report, "artifact_bytes")) return "artifact_bytes is not a number";
  if (report.contains("memory")) {
    if (std::string problem = MemoryProblem(report["memory"]); !problem.empty()) return problem;
  }
  return report.contains("ops") ? OpsProblem(report["ops"]) : "";
}

// --- outputs -------------------------------------------------------------------------------

// The output's element type as the profile document lists it; int8 otherwise.
std::string OutputType(const json& profile, size_t index) {
  if (!profile.is_object() || !profile.contains("outputs") || !profile["outputs"].is_array()) {
    return "int8";
  }
  for (const json& output : profile["outputs"]) {
    if (run::JsonNumberAt(output, {"index"}) == static_cast<double>(index)) {
      return run::JsonStringAt(output, {"type"}).value_or("int8");
    }
  }
  return "int8";
}

// Output `index` of A and B compared as the on-board verifier compares outputs
// (runtime/verify/output_verifier.h, atol 0): NaN in both is equal.
OutputDiff CompareOutput(const JobSnapshot& a, const JobSnapshot& b, const json& b_profile,
                         size_t index) {
  OutputDiff diff;
  diff.index = static_cast<int>(index);
  diff.type = OutputType(b_profile, index);
  if (index >= a.outputs.size() || index >= b.outputs.size()) {
    diff.not_comparable = index >= a.outputs.size() ? "only in B" : "only in A";
    return diff;
  }
  const std::string& x = a.outputs[index];
  const std::string& y = b.outputs[index];
  if (x.size() != y.size()) {
    diff.not_comparable = absl::StrFormat("sizes differ: %d vs %d bytes", x.size(), y.size());
    return diff;
  }
  runtime::TensorView view;
  view.type = run::ScalarTypeNamed(diff.type);
  const size_t element_bytes = static_cast<size_t>(runtime::ElementSize(view.type));
  if (x.size() % element_bytes != 0 || x.size() / element_bytes > INT32_MAX) {
    diff.not_comparable =
        absl::StrFormat("%d bytes are not a whole number of %s elements", x.size(), diff.type);
    return diff;
  }
  view.rank = 1;
  view.dims[0] = static_cast<int32_t>(x.size() / element_bytes);
  view.data = const_cast<char*>(x.data());
  runtime::OutputComparison compared;
  const runtime::Span<const uint8_t> expected(reinterpret_cast<const uint8_t*>(y.data()), y.size());
  if (runtime::CompareOutput(view, expected, /*atol=*/0, &compared) != runtime::Error::kOk) {
    diff.not_comparable = "the verifier cannot compare them";
    return diff;
  }
  diff.elements = static_cast<int64_t>(compared.num_elements);
  diff.differing_elements = static_cast<int64_t>(compared.mismatches);
  // A NaN against a number: the largest possible difference.
  diff.max_abs_diff = std::isnan(compared.max_abs_diff) ? INFINITY : compared.max_abs_diff;
  diff.top1_a = run::ArgMax(x, view.type);
  diff.top1_b = run::ArgMax(y, view.type);
  return diff;
}

bool OutputDiffers(const OutputDiff& diff) {
  return !diff.not_comparable.empty() || diff.differing_elements > 0;
}

// --- latency per operator ------------------------------------------------------------------

// "NPU kernel 2: CONV_2D #2" -> "CONV_2D #2": kernels are numbered per compile, the source ops
// they came from are what two compiles share.
std::string SourceOpKey(const std::string& label) {
  if (absl::StartsWith(label, "NPU kernel ")) {
    const size_t colon = label.find(": ");
    if (colon != std::string::npos) return label.substr(colon + 2);
  }
  return label;
}

// The snapshot's profile named through the debug map, read once for the per-op latency and the
// clock; nullopt when the job has none or it does not parse.
std::optional<ProfileView> ProfileOf(const JobSnapshot& snapshot) {
  if (snapshot.profile_json.empty()) return std::nullopt;
  absl::StatusOr<ProfileView> view = ParseProfileJson(snapshot.profile_json);
  if (!view.ok()) return std::nullopt;
  if (!snapshot.debug_map_json.empty()) {
    NameOps(*view, snapshot.debug_map_json, snapshot.report_json);
  }
  return *std::move(view);
}

// One source operator's mean µs in a profile, and where its rows ran.
struct OpTime {
  double us = 0;
  std::set<std::string> ran_on;
  std::string RanOn() const { return ran_on.empty() ? "-" : absl::StrJoin(ran_on, "+"); }
};

// Per source operator (CPU rows and NPU kernel rows); empty when the profile is missing or its
// clock gives no time.
std::map<std::string, OpTime> OpTimes(const std::optional<ProfileView>& view) {
  std::map<std::string, OpTime> times;
  if (!view) return times;
  const auto add = [&times](const ProfileOp& row) {
    if (!row.us) return;
    OpTime& time = times[SourceOpKey(row.op)];
    time.us += *row.us;
    time.ran_on.insert(row.ran_on.empty() ? "unknown" : row.ran_on);
  };
  for (const ProfileOp& op : view->ops) {
    if (op.npu_kernels.empty()) add(op);
    for (const ProfileOp& kernel : op.npu_kernels) add(kernel);
  }
  return times;
}

std::vector<OpLatencyDiff> DiffOps(const std::optional<ProfileView>& a,
                                   const std::optional<ProfileView>& b) {
  std::map<std::string, OpLatencyDiff> by_op;
  for (const auto& [op, time] : OpTimes(a)) {
    by_op[op].op = op;
    by_op[op].a_us = time.us;
    by_op[op].a_ran_on = time.RanOn();
  }
  for (const auto& [op, time] : OpTimes(b)) {
    by_op[op].op = op;
    by_op[op].b_us = time.us;
    by_op[op].b_ran_on = time.RanOn();
  }
  std::vector<OpLatencyDiff> ops;
  for (auto& [name, op] : by_op) ops.push_back(std::move(op));
  std::stable_sort(ops.begin(), ops.end(), [](const OpLatencyDiff& x, const OpLatencyDiff& y) {
    return std::fabs(x.change_us()) > std::fabs(y.change_us());
  });
  return ops;
}

// --- placement and memory ------------------------------------------------------------------

struct Placement {
  std::string type;
  std::string unit;
  std::string reason;
};

// Source op index -> placement, from the compile report's "ops".
std::map<int64_t, Placement> Placements(const json& report, int& cpu_ops) {
  std::map<int64_t, Placement> placements;
  cpu_ops = 0;
  if (!report.is_object() || !report.contains("ops") || !report["ops"].is_array()) {
    return placements;
  }
  for (const json& op : report["ops"]) {
    if (!op.is_object() || !op.contains("index") || !op["index"].is_number()) continue;
    Placement placement{run::JsonStringAt(op, {"type"}).value_or("?"),
                        run::JsonStringAt(op, {"unit"}).value_or("-"),
                        run::JsonStringAt(op, {"reason"}).value_or("")};
    if (placement.unit == "CPU") ++cpu_ops;
    // An op of a subgraph IF or WHILE calls has its own index space and always runs on the CPU:
    // counted, but keyed apart from the main graph's op of the same index it could never move.
    if (run::JsonNumberAt(op, {"subgraph"}).value_or(0) > 0) continue;
    placements[op["index"].get<int64_t>()] = std::move(placement);
  }
  return placements;
}

void DiffPlacements(const json& a_report, const json& b_report, JobDiff& diff) {
  const std::map<int64_t, Placement> a = Placements(a_report, diff.a_cpu_ops);
  const std::map<int64_t, Placement> b = Placements(b_report, diff.b_cpu_ops);
  std::map<int64_t, std::pair<const Placement*, const Placement*>> both;
  for (const auto& [index, placement] : a) both[index].first = &placement;
  for (const auto& [index, placement] : b) both[index].second = &placement;
  for (const auto& [index, pair] : both) {
    const std::string from = pair.first ? pair.first->unit : "-";
    const std::string to = pair.second ? pair.second->unit : "-";
    if (from == to) continue;
    PlacementMove move;
    move.index = index;
    move.type = pair.second ? pair.second->type : pair.first->type;
    move.from = from;
    move.to = to;
    if (pair.second && to == "CPU") move.reason = pair.second->reason;
    diff.moves.push_back(std::move(move));
  }
}

void DiffMemory(const json& a, const json& b, JobDiff& diff) {
  for (const char* name : kMemoryFields) {
    diff.memory.push_back(
        {name, run::JsonNumberAt(a, {"memory", name}), run::JsonNumberAt(b, {"memory", name})});
  }
  diff.memory.push_back({"artifact_bytes", run::JsonNumberAt(a, {"artifact_bytes"}),
                         run::JsonNumberAt(b, {"artifact_bytes"})});
  const auto placement = [](const json& report) {
    return run::JsonStringAt(report, {"memory", "weights_placement"}).value_or("-");
  };
  diff.weights_placement_a = placement(a);
  diff.weights_placement_b = placement(b);
}

std::optional<double> Latency(const v1::Job& job) {
  if (job.inference_us() > 0) return job.inference_us();
  return std::nullopt;
}

// --- printing ------------------------------------------------------------------------------

std::string Signed(double value) { return absl::StrFormat("%+.2f", value); }

void PrintOutputs(const JobDiff& diff, std::ostream& out) {
  out << "outputs:\n";
  if (diff.outputs.empty()) out << "  none in either job\n";
  for (const OutputDiff& o : diff.outputs) {
    if (!o.not_comparable.empty()) {
      out << absl::StrFormat("  output %d: not comparable (%s)\n", o.index, o.not_comparable);
      continue;
    }
    out << absl::StrFormat("  output %d (%s, %d elements): max abs diff %g, top-1 %s (%d vs %d)\n",
                           o.index, o.type, o.elements, o.max_abs_diff,
                           o.top1_a == o.top1_b ? "agrees" : "DIFFERS", o.top1_a, o.top1_b);
  }
}

void PrintLatency(const JobDiff& diff, std::ostream& out) {
  out << "latency: ";
  // A change between two clocks (a simulator's model and an instruction count) means nothing.
  if (!diff.a_latency_us || !diff.b_latency_us || diff.a_clock != diff.b_clock) {
    out << (diff.a_latency_us ? absl::StrFormat("%.2f us", *diff.a_latency_us) : "unknown")
        << " -> "
        << (diff.b_latency_us ? absl::StrFormat("%.2f us", *diff.b_latency_us) : "unknown") << "\n";
  } else {
    const double change = *diff.b_latency_us - *diff.a_latency_us;
    out << absl::StrFormat("%.2f us -> %.2f us (%+.2f us, %+.1f%%)\n", *diff.a_latency_us,
                           *diff.b_latency_us, change, 100.0 * change / *diff.a_latency_us);
  }
  out << (diff.a_clock == diff.b_clock ? "  clock: " + diff.a_clock + " (both)\n"
                                       : "  clock: A " + diff.a_clock + ", B " + diff.b_clock +
                                             " (DIFFER: not comparable)\n");
  if (diff.ops.empty()) return;
  out << absl::StrFormat("  %-40s %12s %12s %10s  %s\n", "op", "A us", "B us", "change",
                         "ran on (A -> B)");
  constexpr size_t kShown = 20;
  for (size_t i = 0; i < diff.ops.size() && i < kShown; ++i) {
    const OpLatencyDiff& op = diff.ops[i];
    out << absl::StrFormat(
        "  %-40s %12s %12s %10s  %s\n", op.op, op.a_us ? absl::StrFormat("%.2f", *op.a_us) : "-",
        op.b_us ? absl::StrFormat("%.2f", *op.b_us) : "-", Signed(op.change_us()),
        op.a_ran_on == op.b_ran_on ? op.a_ran_on : op.a_ran_on + " -> " + op.b_ran_on);
  }
  if (diff.ops.size() > kShown) {
    out << absl::StrFormat("  ... %d more (--json lists all)\n", diff.ops.size() - kShown);
  }
}

void PrintPlacement(const JobDiff& diff, std::ostream& out) {
  out << absl::StrFormat("placement: %d -> %d operators on the CPU", diff.a_cpu_ops,
                         diff.b_cpu_ops);
  out << (diff.moves.empty() ? ", none moved\n" : "\n");
  for (const PlacementMove& move : diff.moves) {
    out << absl::StrFormat("  %s #%d: %s -> %s", move.type, move.index, move.from, move.to);
    if (!move.reason.empty()) out << " (" << move.reason << ")";
    out << "\n";
  }
}

void PrintMemory(const JobDiff& diff, std::ostream& out) {
  out << "memory:\n";
  for (const MemoryChange& m : diff.memory) {
    out << absl::StrFormat("  %-22s %12s -> %-12s", m.name,
                           m.a ? absl::StrFormat("%.0f", *m.a) : "-",
                           m.b ? absl::StrFormat("%.0f", *m.b) : "-");
    if (m.a && m.b && *m.a != *m.b) out << absl::StrFormat(" (%+.0f)", *m.b - *m.a);
    out << "\n";
  }
  if (diff.weights_placement_a != diff.weights_placement_b) {
    out << absl::StrFormat("  weights in %s -> %s\n", diff.weights_placement_a,
                           diff.weights_placement_b);
  }
}

json OptionalJson(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

std::string ClocksDifferMessage(const JobDiff& diff) {
  return absl::StrFormat(
      "A's latency is on %s, B's on %s: latencies on different clocks cannot be compared",
      diff.a_clock, diff.b_clock);
}

GateCase Gate(const std::string& name, bool passed, const std::string& message) {
  GateCase gate;
  gate.name = name;
  gate.passed = passed;
  gate.message = message;
  return gate;
}

}  // namespace

absl::StatusOr<JobSnapshot> LoadSnapshotFromDirectory(const std::string& dir) {
  const fs::path folder(dir);
  absl::StatusOr<std::string> job_json =
      ReadFileBytes((folder / "job.json").string(), "job record");
  if (!job_json.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", dir, "' is not a `boardlab --out` directory: ", job_json.status().message()));
  }
  JobSnapshot snapshot;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // written by a newer client
  if (!google::protobuf::util::JsonStringToMessage(*job_json, &snapshot.job, options).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", (folder / "job.json").string(), "' is not a job record"));
  }
  snapshot.source = absl::StrCat(dir, " (job ", snapshot.job.id(), ")");
  snapshot.report_json = ReadOptional(folder, "report.json");
  if (const std::string problem = ReportProblem(snapshot.report_json); !problem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", (folder / "report.json").string(), "' is not a readable compile report: ", problem));
  }
  snapshot.profile_json = ReadOptional(folder, "profile.json");
  snapshot.debug_map_json = ReadOptional(folder, "debug_map.json");
  for (int i = 0; i < snapshot.job.files().outputs_size(); ++i) {
    snapshot.outputs.push_back(ReadOptional(folder, absl::StrCat("output", i, ".bin")));
  }
  return snapshot;
}

absl::StatusOr<JobSnapshot> LoadSnapshotOfJob(api::BlobClient& blobs, const v1::Job& job) {
  JobSnapshot snapshot;
  snapshot.source = "job " + job.id();
  snapshot.job = job;
  snapshot.outputs.resize(job.files().outputs_size());
  for (const JobFile& file : ListJobFiles(job)) {
    std::string* into = SnapshotFile(snapshot, file.name);
    if (into == nullptr) continue;
    absl::StatusOr<std::string> bytes = blobs.Get(file.digest);
    if (!bytes.ok()) {
      return absl::Status(bytes.status().code(),
                          absl::StrCat("downloading ", file.name, " of job ", job.id(), ": ",
                                       bytes.status().message()));
    }
    *into = *std::move(bytes);
  }
  if (const std::string problem = ReportProblem(snapshot.report_json); !problem.empty()) {
    return absl::DataLossError(
        absl::StrCat("the compile report of job ", job.id(), " is not readable: ", problem));
  }
  return snapshot;
}

absl::StatusOr<JobSnapshot> LoadSnapshot(const Connection& connection, const std::string& what) {
  if (fs::is_directory(what)) return LoadSnapshotFromDirectory(what);
  if (absl::StrContains(what, "/")) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", what, "' is neither a directory nor a job id"));
  }
  std::unique_ptr<v1::JobService::Stub> stub = v1::JobService::NewStub(connection.channel);
  v1::GetJobRequest request;
  request.set_job_id(what);
  v1::Job job;
  const absl::Status status = UnaryCall(connection, [&](grpc::ClientContext& context) {
    return stub->GetJob(&context, request, &job);
  });
  if (!status.ok()) return status;
  if (job.state() != v1::JOB_STATE_DONE) {
    return absl::FailedPreconditionError(absl::StrCat("job ", what, " is not done yet (",
                                                      StateName(job.state()), "); `boardlab watch ",
                                                      what, "` waits for it"));
  }
  api::BlobClient blobs(connection.channel, connection.token);
  return LoadSnapshotOfJob(blobs, job);
}

JobDiff DiffJobs(const JobSnapshot& a, const JobSnapshot& b) {
  JobDiff diff;
  diff.a_source = a.source;
  diff.b_source = b.source;
  const json b_profile = ParseOrNull(b.profile_json);  // the outputs' types
  for (size_t i = 0; i < std::max(a.outputs.size(), b.outputs.size()); ++i) {
    diff.outputs.push_back(CompareOutput(a, b, b_profile, i));
  }
  diff.a_latency_us = Latency(a.job);
  diff.b_latency_us = Latency(b.job);
  const std::optional<ProfileView> a_view = ProfileOf(a);
  const std::optional<ProfileView> b_view = ProfileOf(b);
  diff.a_clock = run::LatencyClockName(a_view ? a_view->clock : "");
  diff.b_clock = run::LatencyClockName(b_view ? b_view->clock : "");
  diff.ops = DiffOps(a_view, b_view);
  const json a_report = ParseOrNull(a.report_json);
  const json b_report = ParseOrNull(b.report_json);
  DiffPlacements(a_report, b_report, diff);
  DiffMemory(a_report, b_report, diff);
  return diff;
}

int GatesExitCode(const JobDiff& diff, const DiffGates& asked, const std::vector<GateCase>& gates,
                  std::string& error) {
  if (asked.fail_if_slower_percent && diff.a_latency_us && diff.b_latency_us &&
      diff.a_clock != diff.b_clock) {
    error = "--fail-if-slower: " + ClocksDifferMessage(diff);
    return kExitUsage;
  }
  for (const GateCase& gate : gates) {
    if (!gate.passed) return kExitFail;
  }
  return kExitPass;
}

std::vector<GateCase> JudgeGates(const JobDiff& diff, const DiffGates& gates) {
  std::vector<GateCase> cases;
  if (gates.fail_if_slower_percent) {
    const double limit = *gates.fail_if_slower_percent;
    if (!diff.a_latency_us || !diff.b_latency_us) {
      GateCase gate = Gate("slower", false, "latency unknown in A or B: cannot compare");
      gate.error = true;
      cases.push_back(gate);
    } else if (diff.a_clock != diff.b_clock) {
      GateCase gate = Gate("slower", false, ClocksDifferMessage(diff));
      gate.error = true;
      cases.push_back(gate);
    } else {
      const double percent = 100.0 * (*diff.b_latency_us - *diff.a_latency_us) / *diff.a_latency_us;
      cases.push_back(
          Gate("slower", percent <= limit,
               absl::StrFormat("latency %.2f us -> %.2f us (%+.1f%%, limit +%g%%)",
                               *diff.a_latency_us, *diff.b_latency_us, percent, limit)));
    }
  }
  if (gates.fail_if_outputs_differ) {
    std::string differing;
    for (const OutputDiff& o : diff.outputs) {
      if (!OutputDiffers(o)) continue;
      absl::StrAppend(&differing, differing.empty() ? "" : "; ", "output ", o.index, ": ",
                      o.not_comparable.empty() ? absl::StrFormat("max abs diff %g", o.max_abs_diff)
                                               : o.not_comparable);
    }
    cases.push_back(Gate("outputs differ", differing.empty(),
                         differing.empty() ? "outputs are identical" : differing));
  }
  if (gates.fail_if_cpu_ops_added) {
    std::string added;
    for (const PlacementMove& move : diff.moves) {
      if (move.to != "CPU") continue;
      absl::StrAppend(&added, added.empty() ? "" : "; ", move.type, " #", move.index, " ",
                      move.from, " -> CPU", move.reason.empty() ? "" : " (" + move.reason + ")");
    }
    const bool passed = added.empty() && diff.b_cpu_ops <= diff.a_cpu_ops;
    cases.push_back(Gate("cpu ops added", passed,
                         absl::StrFormat("%d -> %d operators on the CPU%s", diff.a_cpu_ops,
                                         diff.b_cpu_ops, added.empty() ? "" : ": " + added)));
  }
  return cases;
}

void PrintDiff(const JobDiff& diff, const std::vector<GateCase>& gates, std::ostream& out) {
  out << "diff A " << diff.a_source << "\n     B " << diff.b_source << "\n";
  PrintOutputs(diff, out);
  PrintLatency(diff, out);
  PrintPlacement(diff, out);
  PrintMemory(diff, out);
  if (gates.empty()) return;
  out << "gates:\n";
  for (const GateCase& gate : gates) {
    out << absl::StrFormat("  %-15s %s: %s\n", gate.name, gate.passed ? "pass" : "FAIL",
                           gate.message);
  }
}

std::string DiffJson(const JobDiff& diff, const std::vector<GateCase>& gates) {
  json doc = {{"a", diff.a_source},
              {"b", diff.b_source},
              {"a_latency_us", OptionalJson(diff.a_latency_us)},
              {"b_latency_us", OptionalJson(diff.b_latency_us)},
              {"a_clock", diff.a_clock},
              {"b_clock", diff.b_clock},
              {"a_cpu_ops", diff.a_cpu_ops},
              {"b_cpu_ops", diff.b_cpu_ops},
              {"weights_placement", {diff.weights_placement_a, diff.weights_placement_b}}};
  doc["outputs"] = json::array();
  for (const OutputDiff& o : diff.outputs) {
    doc["outputs"].push_back({{"index", o.index},
                              {"type", o.type},
                              {"elements", o.elements},
                              {"comparable", o.not_comparable.empty()},
                              {"not_comparable", o.not_comparable},
                              {"max_abs_diff", o.max_abs_diff},
                              {"top1_a", o.top1_a},
                              {"top1_b", o.top1_b},
                              {"top1_agrees", o.top1_a == o.top1_b}});
  }
  doc["ops"] = json::array();
  for (const OpLatencyDiff& op : diff.ops) {
    doc["ops"].push_back({{"op", op.op},
                          {"a_us", OptionalJson(op.a_us)},
                          {"b_us", OptionalJson(op.b_us)},
                          {"change_us", op.change_us()},
                          {"a_ran_on", op.a_ran_on},
                          {"b_ran_on", op.b_ran_on}});
  }
  doc["moves"] = json::array();
  for (const PlacementMove& move : diff.moves) {
    doc["moves"].push_back({{"index", move.index},
                            {"type", move.type},
                            {"from", move.from},
                            {"to", move.to},
                            {"reason", move.reason}});
  }
  doc["memory"] = json::object();
  for (const MemoryChange& m : diff.memory) {
    doc["memory"][m.name] = {{"a", OptionalJson(m.a)}, {"b", OptionalJson(m.b)}};
  }
  doc["gates"] = json::array();
  for (const GateCase& gate : gates) {
    doc["gates"].push_back(
        {{"name", gate.name}, {"passed", gate.passed}, {"message", gate.message}});
  }
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

GateSuite DiffSuite(const JobDiff& diff, const std::vector<GateCase>& gates) {
  GateSuite suite;
  suite.name = "boardlab diff " + diff.a_source + " -> " + diff.b_source;
  suite.classname = "boardlab.diff";
  suite.properties = {{"a", diff.a_source},
                      {"b", diff.b_source},
                      {"a_clock", diff.a_clock},
                      {"b_clock", diff.b_clock}};
  for (GateCase gate : gates) {
    if (gate.passed) gate.message.clear();
    suite.cases.push_back(std::move(gate));
  }
  std::ostringstream text;
  PrintDiff(diff, gates, text);
  suite.system_out = text.str();
  return suite;
}

int RunDiff(const Connection& connection, const DiffArgs& args) {
  absl::StatusOr<JobSnapshot> a = LoadSnapshot(connection, args.a);
  if (!a.ok()) return FailWithStatus(a.status(), "reading A (" + args.a + ")", connection.server);
  absl::StatusOr<JobSnapshot> b = LoadSnapshot(connection, args.b);
  if (!b.ok()) return FailWithStatus(b.status(), "reading B (" + args.b + ")", connection.server);
  const JobDiff diff = DiffJobs(*a, *b);
  const std::vector<GateCase> gates = JudgeGates(diff, args.gates);
  if (args.json) {
    std::cout << DiffJson(diff, gates) << "\n";
  } else {
    PrintDiff(diff, gates, std::cout);
  }
  std::cout.flush();
  if (!args.junit.empty()) {
    const absl::Status written = WriteJunitFile(args.junit, {DiffSuite(diff, gates)});
    if (!written.ok())
      return FailWithStatus(written, "writing the JUnit report", connection.server);
  }
  std::string error;
  const int code = GatesExitCode(diff, args.gates, gates, error);
  if (code == kExitUsage) {
    return FailWithStatus(absl::InvalidArgumentError(error), "diffing", connection.server);
  }
  return code;
}

}  // namespace boardlab::cli
