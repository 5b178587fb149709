#include "agent/backoff.h"

#include <algorithm>

namespace boardlab::agent {

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds cap, uint64_t seed)
    : initial_(initial), cap_(std::max(cap, initial)), random_(seed) {}

std::chrono::milliseconds Backoff::Next() {
  // The ceiling doubles per attempt; the delay is drawn between the floor and it, so that many
  // agents cut off by one server restart do not reconnect in lockstep.
  int64_t ceiling = initial_.count();
  for (int i = 0; i < attempt_ && ceiling < cap_.count(); ++i) ceiling *= 2;
  ceiling = std::min<int64_t>(ceiling, cap_.count());
  if (attempt_ < 62) ++attempt_;
  std::uniform_int_distribution<int64_t> pick(initial_.count(), ceiling);
  return std::chrono::milliseconds(pick(random_));
}

}  // namespace boardlab::agent
