#pragma once

// Activation-arena planning: give every buffer an offset so that buffers that are live at the
// same time never overlap, and keep the peak (arena size) small.
//
// Usage:
//   GreedyMemoryPlanner planner;
//   RETURN_IF_ERROR(planner.AddBuffer(/*size=*/4096, /*first_use=*/0, /*last_use=*/3));
//   ...
//   RETURN_IF_ERROR(planner.Plan());
//   int64_t offset = planner.GetOffset(0);
//   RETURN_IF_ERROR(VerifyPlan(planner));  // independent check, whatever the strategy
//
// Buffers are numbered in the order they were added. Live ranges are inclusive execution steps.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace boardlab::compiler {

/// Offsets are multiples of this (the NPU and CMSIS-NN want 16-byte aligned tensors).
inline constexpr int64_t kArenaAlignment = 16;

/// Rounds `bytes` up to kArenaAlignment.
inline int64_t AlignArena(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

/// One buffer request: `size` bytes live from step `first_use` to `last_use` (inclusive).
struct BufferRequest {
  int64_t size = 0;
  int first_use = 0;
  int last_use = 0;
};

/// A memory-planning strategy. Implementations differ only in how they choose offsets; the
/// requests, the peak and the check are common.
class MemoryPlanner {
 public:
  virtual ~MemoryPlanner() = default;

  /// Adds a buffer; InvalidArgument when size < 0 or last_use < first_use or first_use < 0.
  virtual absl::Status AddBuffer(int64_t size, int first_use, int last_use) = 0;
  /// Computes the offsets of every buffer added so far. Call after the last AddBuffer.
  virtual absl::Status Plan() = 0;
  /// Offset of buffer `buffer` (0-based, in AddBuffer order); valid after Plan().
  virtual int64_t GetOffset(int buffer) const = 0;
  /// Arena bytes needed: max over buffers of offset + aligned size; valid after Plan().
  virtual int64_t PeakBytes() const = 0;
  virtual int BufferCount() const = 0;
  virtual const BufferRequest& GetBuffer(int buffer) const = 0;
};

/// Checks every pair of buffers that are live at the same step for overlapping byte ranges.
/// The error names both buffers with their live ranges and byte ranges.
absl::Status VerifyPlan(const MemoryPlanner& planner);

/// Max over steps of the sum of the (aligned) sizes of the buffers live at that step: no plan
/// can need less.
int64_t ArenaLowerBound(const std::vector<BufferRequest>& buffers);
int64_t ArenaLowerBound(const MemoryPlanner& planner);

}  // namespace boardlab::compiler
