#pragma once

// The state one compilation carries from stage to stage (compiler/driver.cc runs them in order).
// Each stage reads what the earlier ones produced and fills its own part.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir.h"
#include "compiler/target_spec.h"

namespace boardlab::compiler {

enum class WeightsPlacement : uint8_t { kAuto, kSram, kFlash };
enum class FormatConversion : uint8_t { kNpu, kCpu };

struct CompileOptions {
  std::string target = "imxrt700";  // name or path of a target spec
  std::string board;                // name or path of a board profile; empty = target default
  WeightsPlacement weights = WeightsPlacement::kAuto;
  std::optional<int64_t> sram_budget;  // overrides the board profile's budget
  FormatConversion format_conversion = FormatConversion::kNpu;
  std::vector<OpType> no_npu;  // op types forced onto the CPU
  bool cpu_only = false;
};

/// Where the memory planner put things. Offsets are bytes from the start of their region.
struct MemoryPlan {
  /// Activation arena: every non-constant tensor that needs storage gets an offset (16-byte
  /// aligned); -1 for tensors without arena storage (constants, tensors aliased away).
  std::vector<int64_t> tensor_offset;  // indexed by graph tensor
  int64_t arena_bytes = 0;             // planned peak
  int64_t arena_lower_bound = 0;       // max bytes live at any step (no plan can beat it)
  /// Variable (state) tensors: each its own 16-byte aligned slot in the state buffer, which no
  /// other tensor reuses, so that the state survives from one inference to the next; -1 for
  /// every other tensor.
  std::vector<int64_t> state_offset;  // indexed by graph tensor
  int64_t state_bytes = 0;
  /// Weights: all constant bytes the program carries (after lowering: NPU-ordered weights and
  /// requantisation tables included).
  int64_t weight_bytes = 0;
  bool weights_in_flash = false;
  /// With weights in flash: the SRAM window weights are prefetched into (double-buffered), and
  /// the smallest window that works (the largest single kernel's weights, twice).
  int64_t weight_scratch_bytes = 0;
  int64_t min_weight_scratch_bytes = 0;
  int64_t sram_budget_bytes = 0;
  int64_t sram_used_bytes = 0;  // arena + state + (weights in SRAM ? weights : scratch)
};

struct OpCost {
  uint64_t cycles = 0;  // at the unit's clock (NPU ops: NPU clock; CPU ops: CPU clock)
  double microseconds = 0;
  double utilization = 0;  // NPU ops: useful MACs / peak
};

struct Compilation {
  CompileOptions options;
  TargetSpec target;
  BoardProfile board;
  Graph graph;
  std::vector<std::string> warnings;
  int num_partitions = 0;
  MemoryPlan memory;
  std::vector<OpCost> op_costs;  // indexed by op
  /// One run of each op of each called subgraph: entry k - 1 is TFLite subgraph k, indexed by op.
  /// Not part of total_microseconds: how often a subgraph runs is only known at run time.
  std::vector<std::vector<OpCost>> subgraph_op_costs;
  double total_microseconds = 0;
};

}  // namespace boardlab::compiler
