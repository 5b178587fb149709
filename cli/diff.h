#pragma once

// `boardlab diff A B`: what changed between two jobs (A the baseline, B the candidate), each a
// job id on the server or a `--out` directory (read offline): the outputs (max abs diff per
// output, top-1 agreement), the latency in total and per operator (sorted by change), the
// operators that moved between the NPU and the CPU with the compiler's reason, and the memory
// (arena, weights, SRAM, artifact). CI gates turn the differences into an exit code:
// --fail-if-slower PCT, --fail-if-outputs-differ, --fail-if-cpu-ops-added.
//
// Usage:
//   ASSIGN_OR_RETURN(JobSnapshot a, LoadSnapshotFromDirectory("baseline-out"));
//   ASSIGN_OR_RETURN(JobSnapshot b, LoadSnapshot(connection, "j00000042"));
//   JobDiff diff = DiffJobs(a, b);
//   PrintDiff(diff, std::cout);
//   std::vector<GateCase> gates = JudgeGates(diff, DiffGates{.fail_if_slower_percent = 5});

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "boardlab/v1/types.pb.h"
#include "cli/connection.h"
#include "cli/junit.h"
#include "proto/support/blob_client.h"

namespace boardlab::cli {

/// What a diff reads of one job. Files the job lacks are empty.
struct JobSnapshot {
  std::string source;  // "job j00000001" or "out/ (job j00000001)"
  v1::Job job;
  std::string report_json;           // the compile report
  std::string profile_json;          // the boardlab-run --profile json document (outputs' types)
  std::string debug_map_json;        // names the profile's rows
  std::vector<std::string> outputs;  // raw bytes of each output
};

/// Reads job.json and the files next to it (report.json, profile.json, debug_map.json,
/// output<i>.bin) from a `boardlab ... --out DIR` directory. Errors: InvalidArgument when DIR has
/// no readable job.json.
absl::StatusOr<JobSnapshot> LoadSnapshotFromDirectory(const std::string& dir);

/// The job's files from the artifact store. Errors: those of BlobClient::Get, naming the file.
absl::StatusOr<JobSnapshot> LoadSnapshotOfJob(api::BlobClient& blobs, const v1::Job& job);

/// A directory when `what` is one, else a job id fetched from the server.
absl::StatusOr<JobSnapshot> LoadSnapshot(const Connection& connection, const std::string& what);

struct OutputDiff {
  int index = 0;
  std::string type;  // element type read from the profile ("int8" when it does not say)
  int64_t elements = 0;
  std::string not_comparable;      // why the outputs cannot be compared (sizes differ, missing)
  double max_abs_diff = 0;         // INFINITY: a NaN against a number
  int64_t differing_elements = 0;  // elements that are not equal (NaN in both is equal)
  int64_t top1_a = -1;             // index of the largest element
  int64_t top1_b = -1;
};

struct OpLatencyDiff {
  std::string op;  // "CONV_2D #0", as the debug map names it
  std::optional<double> a_us;
  std::optional<double> b_us;
  // Where it really ran in each job ("cpu", "npu", "npu-emulated-cortex-m33"; several joined
  // with "+"); "-" when the job's profile has no such op.
  std::string a_ran_on = "-";
  std::string b_ran_on = "-";
  double change_us() const { return b_us.value_or(0) - a_us.value_or(0); }
};

struct PlacementMove {
  int64_t index = 0;  // source (TFLite) operator index
  std::string type;   // "CONV_2D"
  std::string from;   // "NPU", "CPU" or "-" (absent)
  std::string to;
  std::string reason;  // the compiler's reason for a CPU placement in B
};

struct MemoryChange {
  std::string name;  // "arena_bytes", "weight_bytes", "sram_used_bytes", "artifact_bytes"
  std::optional<double> a;
  std::optional<double> b;
};

struct JobDiff {
  std::string a_source;
  std::string b_source;
  std::vector<OutputDiff> outputs;
  std::optional<double> a_latency_us;  // the jobs' mean inference time; nullopt = unknown
  std::optional<double> b_latency_us;
  std::string a_clock;  // what timed the latency (run::LatencyClockName of the profile's clock)
  std::string b_clock;
  std::vector<OpLatencyDiff> ops;  // sorted by |change|, largest first
  std::vector<PlacementMove> moves;
  int a_cpu_ops = 0;
  int b_cpu_ops = 0;
  std::vector<MemoryChange> memory;
  std::string weights_placement_a;  // "sram" or "flash"
  std::string weights_placement_b;
};

JobDiff DiffJobs(const JobSnapshot& a, const JobSnapshot& b);

struct DiffGates {
  std::optional<double> fail_if_slower_percent;
  bool fail_if_outputs_differ = false;
  bool fail_if_cpu_ops_added = false;
  bool any() const {
    return fail_if_slower_percent || fail_if_outputs_differ || fail_if_cpu_ops_added;
  }
};

/// One case per gate asked for: "slower", "outputs differ", "cpu ops added".
std::vector<GateCase> JudgeGates(const JobDiff& diff, const DiffGates& gates);

/// The exit code of the judged gates: kExitPass, kExitFail when one failed, kExitUsage when
/// --fail-if-slower compared latencies on different clocks (a simulator's timing model against a
/// board's, say), which no limit makes meaningful; `error` then says so.
int GatesExitCode(const JobDiff& diff, const DiffGates& asked, const std::vector<GateCase>& gates,
                  std::string& error);

/// The diff for people; `gates` follow when there are any.
void PrintDiff(const JobDiff& diff, const std::vector<GateCase>& gates, std::ostream& out);

/// The diff as one JSON object (the machine-readable twin of PrintDiff).
std::string DiffJson(const JobDiff& diff, const std::vector<GateCase>& gates);

/// The JUnit suite of a diff: one testcase per gate.
GateSuite DiffSuite(const JobDiff& diff, const std::vector<GateCase>& gates);

struct DiffArgs {
  std::string a;
  std::string b;
  DiffGates gates;
  bool json = false;
  std::string junit;
};

/// `boardlab diff A B`: 0 when every gate passed (or none was asked for), 1 when one failed, 2
/// for bad arguments, 5 when a job cannot be fetched.
int RunDiff(const Connection& connection, const DiffArgs& args);

}  // namespace boardlab::cli
