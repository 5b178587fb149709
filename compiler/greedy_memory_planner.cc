#include "compiler/greedy_memory_planner.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace boardlab::compiler {
namespace {

bool LiveTogether(const BufferRequest& a, const BufferRequest& b) {
  return a.first_use <= b.last_use && b.first_use <= a.last_use;
}

}  // namespace

absl::Status GreedyMemoryPlanner::AddBuffer(int64_t size, int first_use, int last_use) {
  if (size < 0 || first_use < 0 || last_use < first_use) {
    return absl::InvalidArgumentError(absl::StrCat("AddBuffer: invalid buffer ", buffers_.size(),
                                                   " (size ", size, ", live ", first_use, "..",
                                                   last_use, ")"));
  }
  buffers_.push_back({size, first_use, last_use});
  offsets_.push_back(-1);  // unplanned until Plan()
  return absl::OkStatus();
}

int64_t GreedyMemoryPlanner::FindOffset(int buffer, const std::vector<int>& placed) const {
  const BufferRequest& request = buffers_[buffer];
  const int64_t size = AlignArena(request.size);
  std::vector<int> neighbours;
  for (int other : placed) {
    if (LiveTogether(request, buffers_[other])) neighbours.push_back(other);
  }
  std::sort(neighbours.begin(), neighbours.end(),
            [this](int a, int b) { return offsets_[a] < offsets_[b]; });
  // Walk the neighbours bottom-up; `cursor` is the lowest free byte above everything seen so far.
  int64_t cursor = 0;
  int64_t best_offset = -1;
  int64_t best_waste = std::numeric_limits<int64_t>::max();
  for (int other : neighbours) {
    const int64_t gap = offsets_[other] - cursor;
    if (gap >= size && gap - size < best_waste) {
      best_waste = gap - size;
      best_offset = cursor;
    }
    cursor = std::max(cursor, offsets_[other] + AlignArena(buffers_[other].size));
  }
  return best_offset >= 0 ? best_offset : cursor;
}

absl::Status GreedyMemoryPlanner::Plan() {
  std::vector<int> order(buffers_.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first: big buffers fix the layout, small ones fill the holes between them.
  std::stable_sort(order.begin(), order.end(), [this](int a, int b) {
    if (buffers_[a].size != buffers_[b].size) return buffers_[a].size > buffers_[b].size;
    return buffers_[a].first_use < buffers_[b].first_use;
  });
  std::vector<int> placed;
  placed.reserve(order.size());
  peak_ = 0;
  for (int buffer : order) {
    offsets_[buffer] = FindOffset(buffer, placed);
    placed.push_back(buffer);
    peak_ = std::max(peak_, offsets_[buffer] + AlignArena(buffers_[buffer].size));
  }
  return absl::OkStatus();
}

absl::Status VerifyPlan(const MemoryPlanner& planner) {
  const int n = planner.BufferCount();
  for (int a = 0; a < n; ++a) {
    if (planner.GetOffset(a) < 0 || planner.GetOffset(a) % kArenaAlignment != 0) {
      return absl::InternalError(absl::StrCat("VerifyPlan: buffer ", a, " has offset ",
                                              planner.GetOffset(a), " (unplanned or unaligned)"));
    }
  }
  for (int a = 0; a < n; ++a) {
    const BufferRequest& ra = planner.GetBuffer(a);
    const int64_t a_begin = planner.GetOffset(a);
    const int64_t a_end = a_begin + ra.size;
    for (int b = a + 1; b < n; ++b) {
      const BufferRequest& rb = planner.GetBuffer(b);
      const int64_t b_begin = planner.GetOffset(b);
      const int64_t b_end = b_begin + rb.size;
      if (!LiveTogether(ra, rb) || a_end <= b_begin || b_end <= a_begin) continue;
      return absl::InternalError(
          absl::StrCat("VerifyPlan: buffer ", a, " (live ", ra.first_use, "..", ra.last_use,
                       ", bytes [", a_begin, ", ", a_end, ")) overlaps buffer ", b, " (live ",
                       rb.first_use, "..", rb.last_use, ", bytes [", b_begin, ", ", b_end, "))"));
    }
  }
  return absl::OkStatus();
}

int64_t ArenaLowerBound(const std::vector<BufferRequest>& buffers) {
  int last_step = -1;
  for (const BufferRequest& b : buffers) last_step = std::max(last_step, b.last_use);
  // Difference array over steps: +size where a buffer starts, -size after it ends.
  std::vector<int64_t> delta(static_cast<size_t>(last_step) + 2, 0);
  for (const BufferRequest& b : buffers) {
    delta[b.first_use] += AlignArena(b.size);
    delta[b.last_use + 1] -= AlignArena(b.size);
  }
  int64_t live = 0;
  int64_t bound = 0;
  for (int64_t d : delta) {
    live += d;
    bound = std::max(bound, live);
  }
  return bound;
}

int64_t ArenaLowerBound(const MemoryPlanner& planner) {
  std::vector<BufferRequest> buffers;
  for (int i = 0; i < planner.BufferCount(); ++i) buffers.push_back(planner.GetBuffer(i));
  return ArenaLowerBound(buffers);
}

}  // namespace boardlab::compiler
