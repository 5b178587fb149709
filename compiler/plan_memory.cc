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

// Live ranges of every tensor that needs arena storage (first_use == kUnused for the others), on
// a timeline of steps. An ordinary op takes one step. A call (IF, WHILE, CALL_ONCE) spans the
// subgraphs it calls, laid out one after another inside it: each subgraph's inputs are written at
// its first step (the chain copies them in), its ops follow, its outputs are read at its last
// step (copied out), and the call's own tensors live across the whole span. A subgraph's tensors
// need not outlive one run of it: the chain (chain_expansion.cc) rewrites its inputs before every
// run and keeps a WHILE's loop state in the WHILE's outputs, which span the loop. So a branch's or
// loop body's tensors can share bytes with tensors dead around the call, and a loop's condition
// with its body. A subgraph called from several places gets the union of its spans.
class LiveRangeBuilder {
 public:
  explicit LiveRangeBuilder(const Graph& graph)
      : graph_(graph), ranges_(graph.tensors.size(), {0, kUnused, kUnused}) {}

  std::vector<BufferRequest> Build() && {
    for (int t : graph_.inputs) Touch(t, 0, 0);
    const int last_step = std::max(0, LayOut(graph_.ops, 0) - 1);
    for (int t : graph_.outputs) Touch(t, last_step, last_step);
    for (size_t t = 0; t < graph_.tensors.size(); ++t) {
      ranges_[t].size = graph_.tensors[t].SizeBytes();
    }
    return std::move(ranges_);
  }

 private:
  void Touch(int t, int first, int last) {
    // Variables live in the state buffer for the whole program (PlaceState).
    if (t == kNoTensor || graph_.tensors[t].is_constant || graph_.tensors[t].is_variable) return;
    BufferRequest& r = ranges_[t];
    r.first_use = r.first_use == kUnused ? first : std::min(r.first_use, first);
    r.last_use = std::max(r.last_use, last);
  }

  // Lays `ops` out from `step` on; returns the first step after them.
  int LayOut(const std::vector<Op>& ops, int step) {
    for (const Op& op : ops) {
      if (op.dead) continue;
      const int first = step;
      const int last = LayOutCallees(op, step + 1) - 1;
      for (int t : op.inputs) Touch(t, first, last);
      for (int t : op.outputs) Touch(t, first, last);
      step = last + 1;
    }
    return step;
  }

  // Lays out what `op` calls from `step` on (nothing for an op that calls nothing); returns the
  // step after the call's last one.
  int LayOutCallees(const Op& op, int step) {
    for (int callee : Callees(op)) {
      const Subgraph& sub = graph_.subgraph(callee);
      for (int t : sub.inputs) Touch(t, step, step);
      const int last = LayOut(sub.ops, step + 1);
      for (int t : sub.outputs) Touch(t, last, last);
      step = last + 1;
    }
    return step;
  }

  static std::vector<int> Callees(const Op& op) {
    if (op.type == OpType::kIf || op.type == OpType::kWhile) {
      const auto& o = op.opts<ControlFlowOptions>();
      return {o.first, o.second};
    }
    if (op.type == OpType::kCallOnce) return {op.opts<ControlFlowOptions>().first};
    return {};
  }

  const Graph& graph_;
  std::vector<BufferRequest> ranges_;
};

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
  const std::vector<BufferRequest> ranges = LiveRangeBuilder(c.graph).Build();
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
