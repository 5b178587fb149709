#pragma once

// SHA-256 on a thread of its own. Hashing a large upload takes about as long as receiving it and
// writing it to disk together (1.8 GB/s for SHA-256 on our CI machine's cores); with the hash on
// a second thread the two halves overlap. The bytes are handed over, not copied: Update() swaps
// the caller's chunk for a buffer that has already been hashed.
//
// Usage:
//   BackgroundSha256 hash;
//   while (reader->Read(&chunk)) { Write(chunk.data()); hash.Update(*chunk.mutable_data()); }
//   std::string hex = hash.FinishHex();

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proto/support/digest.h"

namespace boardlab::server {

class BackgroundSha256 {
 public:
  BackgroundSha256();
  /// Stops the thread; what is still queued is dropped.
  ~BackgroundSha256();
  BackgroundSha256(const BackgroundSha256&) = delete;
  BackgroundSha256& operator=(const BackgroundSha256&) = delete;

  /// Takes the bytes of `chunk`, leaving it empty, with a spare buffer of about the same capacity
  /// when one is free (so that the next chunk is received without a new allocation). Blocks while
  /// two chunks are waiting, which bounds the memory an upload holds.
  void Update(std::string& chunk);
  /// Waits until every chunk is hashed; lowercase hex of the hash. Call once.
  std::string FinishHex();

 private:
  void Run();
  void Stop();

  api::Sha256 hash_;  // used by the thread only, until it has been joined
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> pending_;  // guarded by mutex_
  std::vector<std::string> spare_;   // guarded by mutex_
  bool closing_ = false;             // guarded by mutex_
  std::thread thread_;
};

}  // namespace boardlab::server
