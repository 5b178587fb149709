#pragma once

// The per-op profile of a finished job, read from the JSON blob the agent stores (the document
// `boardlab-run --profile json` prints, or only its "profile" member; the shape is written by
// boardlab::run::ProfileJson in runtime/cli/profile_table.cc).
//
// Usage:
//   ASSIGN_OR_RETURN(ProfileView profile, ParseProfileJson(blob));
//   PrintProfileTable(profile, std::cout);   // cli/tables.h

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace boardlab::cli {

struct ProfileOp {
  int64_t instruction = -1;        // -1 for an NPU kernel row
  std::string op;                  // "CONV_2D 'conv1'", "delegate 0 (neutron)", "NPU kernel 3 ..."
  bool npu = false;                // placed in an NPU partition by the compiler
  std::string ran_on;              // "cpu", "npu", "npu-emulated-cortex-m33"; "unknown" when absent
  std::optional<uint64_t> cycles;  // unknown on a clock that does not count cycles
  std::optional<uint64_t> instructions;  // QEMU instruction counts (clock "qemu-icount")
  double ticks = 0;                      // raw, in the profile's clock
  std::optional<double> us;              // average per iteration; unknown without a clock rate
  double percent = 0;                    // of the sum of the instruction rows
  std::optional<double> calls;           // runs per iteration; unknown in older profiles
  std::vector<ProfileOp> npu_kernels;
};

struct ProfileView {
  std::string clock;        // "rt700-sim-cycles", "qemu-icount", ...; "sim"/"wall" in old profiles
  std::string clock_label;  // what the numbers count, for people
  std::string count_unit;   // the count column: "cycles", "instructions" or "ticks"
  int64_t iterations = 0;   // runs seen
  int64_t ended_early_runs = 0;    // of those, ended early by a streaming op (0 in older profiles)
  std::optional<double> total_us;  // Method::execute
  std::optional<uint64_t> total_cycles;
  std::optional<uint64_t> total_instructions;
  double total_ticks = 0;
  std::vector<ProfileOp> ops;
};

/// Parses a profile blob. Errors: InvalidArgument naming what is missing or malformed. Profiles
/// written before clocks were recorded (no "clock_label") get a label saying the clock was not
/// recorded, and rows without "ran_on" say "unknown": their "sim" label was also given to QEMU
/// ticks, so it proves nothing.
absl::StatusOr<ProfileView> ParseProfileJson(std::string_view text);

/// Names the rows after their source operators, from the compiler's debug map and report: CPU
/// rows by the map's cpu_ops entry of their instruction ("DEPTHWISE_CONV_2D #1"), NPU kernel rows
/// (the runtime reports "kernel <debug id>" or "NPU kernel id <debug id>") by their kernels[]
/// entry and the report's op types: "NPU kernel 2: CONV_2D #2". Rows that cannot be mapped, and
/// malformed documents, leave the names as they were.
void NameOps(ProfileView& view, std::string_view debug_map_json, std::string_view report_json);

}  // namespace boardlab::cli
