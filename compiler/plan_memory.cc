#include "compiler/plan_memory.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/greedy_memory_planner.h"

namespace boardlab::compiler {
namespace {

constexpr int kUnused = -1;
// The runtime's kernels read state as int16 or int32 arrays; 16 bytes suits every type.
constexpr int64_t kStateAlignment = 16;

// Live range of every tensor that needs arena storage; first_use == kUnused for the others.
std::vector<BufferRequest> LiveRanges(const Graph& graph) {
  const int last_step = std::max(0, static_cast<int>(graph.ops.size()) - 1);
  std::vector<BufferRequest> ranges(graph.tensors.size(), {0, kUnused, kUnused});
  auto touch = [&](int t, int step) {
    // Variables live in the state buffer for the whole program (PlaceState).
    if (t == kNoTensor || graph.tensors[t].is_constant || graph.tensors[t].is_variable) return;
    BufferRequest& r = ranges[t];
    r.first_use = r.first_use == kUnused ? step : std::min(r.first_use, step);
    r.last_use = std::max(r.last_use, step);
  };
  for (int t : graph.inputs) touch(t, 0);
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& op = graph.ops[i];
    if (op.dead) continue;
    for (int t : op.inputs) touch(t, static_cast<int>(i));
    for (int t : op.outputs) touch(t, static_cast<int>(i));
  }
  for (int t : graph.outputs) touch(t, last_step);
  // A called subgraph runs inside one step of the main graph (its IF or WHILE), maybe many times
  // (a loop) and from several call sites: its tensors live for the whole program, so that no
  // other tensor shares their bytes while a loop still needs them. Simple and correct; a planner
  // that knew the call sites' steps could share more.
  for (const Subgraph& sub : graph.subgraphs) {
    auto whole_program = [&](int t) {
      touch(t, 0);
      touch(t, last_step);
    };
    for (int t : sub.inputs) whole_program(t);
    for (int t : sub.outputs) whole_program(t);
    for (const Op& op : sub.ops) {
      for (int t : op.inputs) whole_program(t);
      for (int t : op.outputs) whole_program(t);
    }
  }
  for (size_t t = 0; t < graph.tensors.size(); ++t) ranges[t].size = graph.tensors[t].SizeBytes();
  return ranges;
}

// Every variable gets its own slot, in tensor order: state must not share bytes with anything.
void PlaceState(const Graph& graph, MemoryPlan& m) {
  m.state_offset.assign(graph.tensors.size(), -1);
  m.state_bytes = 0;
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    if (!graph.tensors[t].is_variable) continue;
    m.state_offset[t] = m.state_bytes;
    m.state_bytes +=
        (graph.tensors[t].SizeBytes() + kStateAlignment - 1) / kStateAlignment * kStateAlignment;
  }
}

// What stays in SRAM whatever happens to the weights: the activation arena and the state.
int64_t ActivationBytes(const MemoryPlan& m) { return m.arena_bytes + m.state_bytes; }

std::string FitMessage(const MemoryPlan& m, int64_t second, const char* what) {
  const std::string state =
      m.state_bytes > 0 ? absl::StrCat(" + variable state ", m.state_bytes) : "";
  return absl::StrCat("needs ", ActivationBytes(m) + second, " bytes of SRAM (arena ",
                      m.arena_bytes, state, " + ", what, " ", second, "), budget ",
                      m.sram_budget_bytes);
}

// Weights stream from flash through an SRAM scratch window. Two slots of the largest kernel's
// weights let the next kernel's prefetch overlap the current kernel's compute; when only one slot
// fits, prefetches wait for the kernel before them (slower, but the model still runs).
absl::Status PlaceInFlash(Compilation& c, int64_t weight_bytes, int64_t largest_kernel) {
  MemoryPlan& m = c.memory;
  if (c.board.flash_bytes < weight_bytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("does not fit: ", weight_bytes, " bytes of weights, but board '", c.board.name,
                     "' has ", c.board.flash_bytes, " bytes of external flash"));
  }
  int64_t scratch = 2 * largest_kernel;
  if (ActivationBytes(m) + scratch > m.sram_budget_bytes) scratch = largest_kernel;
  if (ActivationBytes(m) + scratch > m.sram_budget_bytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "does not fit with weights in flash: ", FitMessage(m, scratch, "weight scratch"),
        "; the scratch window must hold the largest kernel's weights"));
  }
  if (scratch < 2 * largest_kernel) {
    c.warnings.push_back(absl::StrCat("weight scratch is single-buffered (", scratch,
                                      " bytes): prefetches cannot overlap "
                                      "compute; ",
                                      ActivationBytes(m) + 2 * largest_kernel,
                                      " bytes of SRAM would double-buffer it"));
  }
  m.weights_in_flash = true;
  m.weight_scratch_bytes = scratch;
  m.sram_used_bytes = ActivationBytes(m) + scratch;
  return absl::OkStatus();
}

}  // namespace

WeightStats CountWeights(const Graph& graph) {
  WeightStats stats;
  std::vector<char> counted(graph.tensors.size(), 0);
  std::vector<const Op*> ops;
  for (const Op& op : graph.ops) ops.push_back(&op);
  for (const Subgraph& sub : graph.subgraphs) {
    for (const Op& op : sub.ops) ops.push_back(&op);
  }
  for (const Op* live : ops) {
    const Op& op = *live;
    if (op.dead || op.unit == Unit::kRemoved) continue;
    int64_t kernel_bytes = 0;
    for (int t : op.inputs) {
      if (t == kNoTensor || !graph.tensors[t].is_constant) continue;
      kernel_bytes += graph.tensors[t].SizeBytes();
      if (!counted[t]) stats.total_bytes += graph.tensors[t].SizeBytes();
      counted[t] = 1;
    }
    stats.largest_kernel_bytes = std::max(stats.largest_kernel_bytes, kernel_bytes);
  }
  return stats;
}

absl::Status PlanMemory(Compilation& c) {
  const std::vector<BufferRequest> ranges = LiveRanges(c.graph);
  GreedyMemoryPlanner planner;
  std::vector<int> buffer_of_tensor(ranges.size(), -1);
  for (size_t t = 0; t < ranges.size(); ++t) {
    if (ranges[t].first_use == kUnused) continue;
    if (absl::Status s = planner.AddBuffer(ranges[t].size, ranges[t].first_use, ranges[t].last_use);
        !s.ok()) {
      return s;
    }
    buffer_of_tensor[t] = planner.BufferCount() - 1;
  }
  if (absl::Status s = planner.Plan(); !s.ok()) return s;
  if (absl::Status s = VerifyPlan(planner); !s.ok()) return s;

  MemoryPlan& m = c.memory;
  m.tensor_offset.assign(ranges.size(), -1);
  for (size_t t = 0; t < ranges.size(); ++t) {
    if (buffer_of_tensor[t] >= 0) m.tensor_offset[t] = planner.GetOffset(buffer_of_tensor[t]);
  }
  m.arena_bytes = planner.PeakBytes();
  m.arena_lower_bound = ArenaLowerBound(planner);
  PlaceState(c.graph, m);
  const WeightStats weights = CountWeights(c.graph);
  return PlaceWeights(c, weights.total_bytes, weights.largest_kernel_bytes);
}

absl::Status PlaceWeights(Compilation& c, int64_t weight_bytes,
                          int64_t largest_kernel_weight_bytes) {
  MemoryPlan& m = c.memory;
  m.sram_budget_bytes = c.options.sram_budget.value_or(c.board.sram_budget_bytes);
  m.weight_bytes = weight_bytes;
  m.weights_in_flash = false;
  m.weight_scratch_bytes = 0;
  // The smallest window that works holds the largest kernel's weights once.
  m.min_weight_scratch_bytes = largest_kernel_weight_bytes;
  if (m.sram_budget_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid configuration of sram_budget=", m.sram_budget_bytes,
                     " (must be > 0: set --sram-budget or the board profile's sram_budget_bytes)"));
  }
  const bool fits_in_sram = ActivationBytes(m) + weight_bytes <= m.sram_budget_bytes;
  switch (c.options.weights) {
    case WeightsPlacement::kSram:
      if (!fits_in_sram) {
        return absl::FailedPreconditionError(absl::StrCat(
            "does not fit: ", FitMessage(m, weight_bytes, "weights"), "; use --weights flash"));
      }
      break;
    case WeightsPlacement::kFlash:
      return PlaceInFlash(c, weight_bytes, largest_kernel_weight_bytes);
    case WeightsPlacement::kAuto:
      if (!fits_in_sram) return PlaceInFlash(c, weight_bytes, largest_kernel_weight_bytes);
      break;
  }
  m.sram_used_bytes = ActivationBytes(m) + weight_bytes;
  return absl::OkStatus();
}

}  // namespace boardlab::compiler
