#pragma once

#include <chrono>
#include <cstdint>

namespace boardlab::server {

/// Wall-clock milliseconds since the Unix epoch (job timestamps, leases, timeouts).
inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace boardlab::server
