#pragma once

// Reconnect delays: exponential backoff with full jitter between a floor and a cap
// (100 ms -> 5 s by default), reset once a connection is welcomed.
//
//   Backoff backoff;
//   auto delay = backoff.Next();   // random in [initial, min(cap, initial * 2^n)]
//   backoff.Reset();

#include <chrono>
#include <cstdint>
#include <random>

namespace boardlab::agent {

class Backoff {
 public:
  explicit Backoff(std::chrono::milliseconds initial = std::chrono::milliseconds(100),
                   std::chrono::milliseconds cap = std::chrono::seconds(5),
                   uint64_t seed = std::random_device{}());

  /// The delay before the next attempt; grows with each call until Reset().
  std::chrono::milliseconds Next();
  void Reset() { attempt_ = 0; }
  int attempt() const { return attempt_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds cap_;
  int attempt_ = 0;
  std::mt19937_64 random_;
};

}  // namespace boardlab::agent
