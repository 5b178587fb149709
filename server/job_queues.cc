#include "server/job_queues.h"

namespace boardlab::server {

void JobQueues::Add(const std::string& board_type, const Place& job, const std::string& tenant) {
  TypeQueue& queue = queues_[board_type];
  if (queue.jobs.insert({-int64_t{job.priority}, job.number}).second) queue.tenants[tenant]++;
}

bool JobQueues::Remove(const std::string& board_type, const Place& job, const std::string& tenant) {
  auto it = queues_.find(board_type);
  if (it == queues_.end() || it->second.jobs.erase({-int64_t{job.priority}, job.number}) == 0) {
    return false;
  }
  auto& tenants = it->second.tenants;
  if (--tenants[tenant] <= 0) tenants.erase(tenant);
  return true;
}

const JobQueues::TypeQueue* JobQueues::Find(const std::string& board_type) const {
  auto it = queues_.find(board_type);
  return it == queues_.end() ? nullptr : &it->second;
}

size_t JobQueues::Length(const std::string& board_type) const {
  const TypeQueue* queue = Find(board_type);
  return queue == nullptr ? 0 : queue->jobs.size();
}

size_t JobQueues::TotalLength() const {
  size_t total = 0;
  for (const auto& [type, queue] : queues_) total += queue.jobs.size();
  return total;
}

std::map<std::string, int> JobQueues::Lengths(const std::string& board_type) const {
  std::map<std::string, int> lengths;
  for (const auto& [type, queue] : queues_) {
    if (!queue.jobs.empty() && (board_type.empty() || type == board_type)) {
      lengths[type] = static_cast<int>(queue.jobs.size());
    }
  }
  return lengths;
}

size_t JobQueues::TenantCount(const std::string& board_type) const {
  const TypeQueue* queue = Find(board_type);
  return queue == nullptr ? 0 : queue->tenants.size();
}

std::map<int64_t, int32_t> JobQueues::Positions(const std::string& board_type,
                                                const std::set<int64_t>& numbers) const {
  std::map<int64_t, int32_t> positions;
  if (numbers.empty()) return positions;
  int32_t position = 0;
  Visit(board_type, [&](const Place& job) {
    ++position;
    if (numbers.count(job.number)) positions[job.number] = position;
    return positions.size() < numbers.size();
  });
  return positions;
}

}  // namespace boardlab::server
