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
  int64_t instruction = -1;  // -1 for an NPU kernel row
  std::string op;            // "CONV_2D 'conv1'", "delegate 0 (neutron)", "NPU kernel 3 ..."
  bool npu = false;
  std::optional<uint64_t> cycles;  // unknown on a wall clock
  double us = 0;                   // average per iteration
  double percent = 0;              // of the sum of the instruction rows
  std::vector<ProfileOp> npu_kernels;
};

struct ProfileView {
  std::string clock;  // "sim" or "wall"
  int64_t iterations = 0;
  double total_us = 0;  // Method::execute
  std::optional<uint64_t> total_cycles;
  std::vector<ProfileOp> ops;
};

/// Parses a profile blob. Errors: InvalidArgument naming what is missing or malformed.
absl::StatusOr<ProfileView> ParseProfileJson(std::string_view text);

/// Names NPU kernel rows (the runtime reports "kernel <debug id>") after their source operators,
/// from the compiler's debug map and report: "NPU kernel 2: CONV_2D #2". Rows that cannot be
/// mapped, and malformed documents, leave the names as they were.
void NameNpuKernels(ProfileView& view, std::string_view debug_map_json,
                    std::string_view report_json);

}  // namespace boardlab::cli
