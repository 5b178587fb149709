#pragma once

// The per-op profile boardlab-run prints, shared by a live run (built from the events of the
// run), --inspect and --board qemu (built from an ETDump file): one row per KernelCall /
// DelegateCall instruction, NPU kernels nested under their DELEGATE_CALL. Printed as a table or
// as JSON. Every view says which clock its numbers count and where each kernel ran, so that the
// Cortex-M33's time under QEMU is never shown as the NPU's.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace boardlab::run {

/// The clock of a profile: runtime/profiling/etdump/clock_record.h, as strings and numbers so
/// that the client can print it without the runtime.
struct ProfileClock {
  std::string kind = "unknown";  // ClockKindName: "rt700-sim-cycles", "qemu-icount", ...
  double ticks_per_second = 0;   // non-delegate events; 0 = unknown
  int icount_shift = -1;         // qemu-icount
  double core_hz = 0;            // 0 = unknown
  std::string delegate_kind;     // "" = delegate events tick on `kind` too
  double delegate_ticks_per_second = 0;
  bool legacy = false;        // from an older boardlab-run's tick-rate events
  bool rate_assumed = false;  // kind unknown; ticks_per_second given by the user (--target)
};

/// One line for people: "simulated RT700 cycles (host simulator timing model, CPU at 325 MHz)",
/// "QEMU instructions (icount shift 0), not Cortex-M33 cycles", "clock unknown ...".
std::string ClockLabel(const ProfileClock& clock);

/// The count column of a profile on `clock`: "cycles", "instructions" or "ticks".
std::string CountName(const ProfileClock& clock);

struct ProfileRow {
  size_t instruction = 0;
  std::string op;      // label: operator, "delegate p (backend)" or "NPU kernel k ..."
  bool npu = false;    // placed in an NPU partition by the compiler
  std::string ran_on;  // ExecutionUnitName: "cpu", "npu", "npu-emulated-cortex-m33", "unknown"
  double ticks = 0;    // average per iteration, in the row's clock
  // Times the instruction ran per averaged iteration: a loop body's ops run more than once, an
  // IF branch not taken not at all. -1 = unknown (NPU kernel rows).
  double calls = -1;
  double cycles = -1;        // -1 = unknown (or not a cycle clock)
  double instructions = -1;  // qemu-icount: instruction count; -1 otherwise
  double us = -1;            // -1 = unknown (the clock's rate is not known)
  // From the debug map when known: TFLite source ops, layer (tensor) name, ids, the op it was
  // lowered from ("CONV_2D #0") and its multiply-accumulates (-1 = unknown).
  std::vector<int32_t> source_ops;
  int32_t subgraph = 0;  // > 0: source_ops index that TFLite subgraph (called by IF or WHILE)
  std::string layer;
  std::string source_name;
  int64_t macs = -1;
  int32_t debug_id = -1;            // NPU kernel: delegate debug id
  int32_t kernel = -1;              // NPU kernel: index in its partition
  std::vector<ProfileRow> kernels;  // NPU kernels inside a delegate call
};

struct Profile {
  ProfileClock clock;
  int iterations = 0;        // Execute runs seen
  int ended_early = 0;       // of those, the runs a streaming op ended early (AveragesRun)
  double total_ticks = 0;    // Method::execute
  double total_us = -1;      // -1 = unknown
  double total_cycles = -1;  // -1 = unknown
  double total_instructions = -1;
  std::vector<ProfileRow> rows;
};

/// Whether a profile averages a run: an inference a streaming op ended early ran part of the
/// chain, so averaged in it would make every row and the total look faster than a whole
/// inference. Such runs are left out, unless every run ended early (then they are all there is).
bool AveragesRun(const Profile& profile, bool run_ended_early);

/// The number of runs the rows and the total average.
int AveragedRuns(const Profile& profile);

/// "" when no run ended early; else what the averages leave out, for a header:
/// "; 1 of 2 ended early by a streaming op, left out" or "; every one ended early by a streaming
/// op: part of the chain each".
std::string EndedEarlyNote(const Profile& profile);

/// Fills a row's cycles / instructions / us from its average `ticks` on `clock` (the delegate
/// clock for NPU kernel rows when `delegate` is true).
void SetCounts(const ProfileClock& clock, bool delegate, ProfileRow& row);

/// Sets the profile's totals from the average Method::execute `ticks` on its clock.
void SetTotal(double ticks, Profile& profile);

/// Prints `header` then the table (instruction, op, ran on, count, us, % of the rows' total, and
/// calls per iteration when some instruction did not run exactly once per iteration).
void PrintProfileTable(const Profile& profile, const std::string& header);

/// {"clock", "clock_label", "count_unit" (CountName), "ticks_per_second", ["icount_shift"],
/// ["core_hz"], ["delegate_clock", "delegate_ticks_per_second"], "iterations" (runs seen),
/// "ended_early_runs", "averaged_runs" (AveragesRun), "total_ticks",
/// "total_us", "total_cycles", ["total_instructions"], "ops": [{instruction, op, unit (the
/// compiler's placement, NPU or CPU), ran_on, ticks, calls, cycles, [instructions], us, percent,
/// [source_ops, subgraph, layer, source_name, macs, debug_id, kernel], npu_kernels: [...]}]}.
/// Unknown numbers are null; subgraph only for an op of a subgraph IF or WHILE calls.
nlohmann::json ProfileJson(const Profile& profile);

}  // namespace boardlab::run
