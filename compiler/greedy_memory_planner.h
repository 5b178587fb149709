#pragma once

// Greedy best-fit memory planner (the strategy of tflite-micro's GreedyMemoryPlanner and Vela's
// greedy allocator, written anew).
//
// Algorithm: buffers are placed one at a time in decreasing size order (ties: earlier first use,
// then lower index, so the plan is deterministic). For each buffer, the already placed buffers
// whose live ranges overlap it are sorted by offset; the gaps between them (and the space above
// the last one) are candidate positions at 16-byte aligned offsets. The buffer goes into the gap
// that fits it with the least waste; when no gap between buffers fits, it goes above the highest
// overlapping buffer. Buffers whose live ranges are disjoint may share bytes. Cost: O(n^2 log n),
// fine for the few hundred tensors of an MCU model.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "compiler/memory_planner.h"

namespace boardlab::compiler {

class GreedyMemoryPlanner : public MemoryPlanner {
 public:
  absl::Status AddBuffer(int64_t size, int first_use, int last_use) override;
  absl::Status Plan() override;
  int64_t GetOffset(int buffer) const override { return offsets_[buffer]; }
  int64_t PeakBytes() const override { return peak_; }
  int BufferCount() const override { return static_cast<int>(buffers_.size()); }
  const BufferRequest& GetBuffer(int buffer) const override { return buffers_[buffer]; }

 private:
  // Offset for `buffer` given the buffers placed so far (`placed`, indices into buffers_).
  int64_t FindOffset(int buffer, const std::vector<int>& placed) const;

  std::vector<BufferRequest> buffers_;
  std::vector<int64_t> offsets_;
  int64_t peak_ = 0;
};

}  // namespace boardlab::compiler
