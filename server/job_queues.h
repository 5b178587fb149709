#pragma once

// The scheduler's queues: the queued jobs of each board type in the order they are offered to a
// free board (highest priority first, then the oldest), and per type the tenants with jobs in
// the queue, which fair share needs to know cheaply. Jobs are named by their number; the Lab
// owns the jobs themselves. Not thread-safe: the Lab's lock guards it.

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace boardlab::server {

class JobQueues {
 public:
  /// A queued job as the queue knows it.
  struct Place {
    int32_t priority = 0;
    int64_t number = 0;
  };

  void Add(const std::string& board_type, const Place& job, const std::string& tenant);
  /// False when the job was not queued (nothing changes).
  bool Remove(const std::string& board_type, const Place& job, const std::string& tenant);

  size_t Length(const std::string& board_type) const;
  size_t TotalLength() const;
  /// Queue lengths by board type (all types when `board_type` is empty); empty queues left out.
  std::map<std::string, int> Lengths(const std::string& board_type) const;
  /// How many different tenants have jobs queued for `board_type`.
  size_t TenantCount(const std::string& board_type) const;

  /// Calls `visit` on the queued jobs of `board_type` in scheduling order until it returns false.
  /// A template, not a std::function: the scheduler calls it for every free board on every event.
  template <typename Visitor>
  void Visit(const std::string& board_type, Visitor&& visit) const {
    const TypeQueue* queue = Find(board_type);
    if (queue == nullptr) return;
    for (const auto& [negative_priority, number] : queue->jobs) {
      if (!visit(Place{static_cast<int32_t>(-negative_priority), number})) return;
    }
  }
  /// The 1-based places of those `numbers` that are queued for `board_type`, found in one walk
  /// that stops at the last of them.
  std::map<int64_t, int32_t> Positions(const std::string& board_type,
                                       const std::set<int64_t>& numbers) const;

 private:
  // (-priority, number): a set orders it as the scheduler offers it.
  using Queue = std::set<std::pair<int64_t, int64_t>>;
  struct TypeQueue {
    Queue jobs;
    std::map<std::string, int> tenants;  // tenant -> its jobs in `jobs`
  };
  const TypeQueue* Find(const std::string& board_type) const;

  std::map<std::string, TypeQueue> queues_;
};

}  // namespace boardlab::server
