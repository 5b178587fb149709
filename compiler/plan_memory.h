#pragma once

// Memory-planning stage: activation arena offsets from live ranges, then where the weights go
// (SRAM or external flash with a prefetch scratch window).
//
// Usage (compiler/driver.cc):
//   RETURN_IF_ERROR(PlanMemory(c));                 // arena + weights from the graph's constants
//   ... NPU lowering adds NPU-ordered weights and requantisation tables ...
//   RETURN_IF_ERROR(PlaceWeights(c, lowered_bytes, largest_lowered_kernel_bytes));

#include <cstdint>

#include "absl/status/status.h"
#include "compiler/compilation.h"

namespace boardlab::compiler {

/// Constant bytes the live ops read (each tensor counted once) and the largest constant bytes a
/// single op reads (the unit of weight prefetch).
struct WeightStats {
  int64_t total_bytes = 0;
  int64_t largest_kernel_bytes = 0;
};
WeightStats CountWeights(const Graph& graph);

/// Plans the activation arena of `c.graph` (ops in execution order; graph inputs live from step
/// 0, graph outputs to the last step; constants and variable tensors excluded) with the greedy
/// planner, verifies the plan, fills c.memory.tensor_offset / arena_bytes / arena_lower_bound,
/// gives every variable (state) tensor its own slot of the state buffer (state_offset /
/// state_bytes), then calls PlaceWeights with CountWeights(c.graph).
absl::Status PlanMemory(Compilation& c);

/// Decides where `weight_bytes` of weights live, after PlanMemory has sized the arena. The
/// budget is c.options.sram_budget, else c.board.sram_budget_bytes. The arena and the state are
/// always in SRAM. kSram: arena + state + weights must fit; kFlash: weights go to flash (which
/// must hold them), and the arena, the state and a double-buffered
/// scratch window of 2 x `largest_kernel_weight_bytes` must fit; kAuto: SRAM when it fits, else
/// flash. Fills weight_bytes, weights_in_flash, (min_)weight_scratch_bytes, sram_budget_bytes
/// and sram_used_bytes. FailedPrecondition, with the numbers, when nothing fits.
absl::Status PlaceWeights(Compilation& c, int64_t weight_bytes,
                          int64_t largest_kernel_weight_bytes);

}  // namespace boardlab::compiler
