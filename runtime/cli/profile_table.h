#pragma once

// The per-op profile boardlab-run prints, shared by a live run (built from the events of the
// run) and --inspect (built from an ETDump file): one row per KernelCall / DelegateCall
// instruction, NPU kernels nested under their DELEGATE_CALL. Printed as a table or as JSON.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace boardlab::run {

struct ProfileRow {
  size_t instruction = 0;
  std::string op;  // label: operator, "delegate p (backend)" or "NPU kernel k ..."
  bool npu = false;
  double ticks = 0;    // average per iteration
  double cycles = -1;  // -1 = unknown
  double us = 0;
  // From the debug map when known (--inspect): TFLite source ops, layer (tensor) name, ids.
  std::vector<int32_t> source_ops;
  std::string layer;
  int32_t debug_id = -1;            // NPU kernel: delegate debug id
  int32_t kernel = -1;              // NPU kernel: index in its partition
  std::vector<ProfileRow> kernels;  // NPU kernels inside a delegate call
};

struct Profile {
  std::string clock;         // "sim" or "wall"
  int iterations = 0;        // Execute runs averaged
  double total_us = 0;       // Method::execute
  double total_cycles = -1;  // -1 = unknown
  std::vector<ProfileRow> rows;
};

/// Sum of the instruction rows' microseconds (the 100 % of the "%" column).
double RowsTotalUs(const Profile& profile);

/// Prints `header` then the table (instruction, op, unit, cycles, us, % of the rows' total).
void PrintProfileTable(const Profile& profile, const std::string& header);

/// {"clock", "iterations", "total_us", "total_cycles", "ops": [{instruction, op, unit, cycles,
/// us, percent, [source_ops, layer], npu_kernels: [...]}]}.
nlohmann::json ProfileJson(const Profile& profile);

}  // namespace boardlab::run
