#pragma once

// Retention: finished jobs are kept for `retention.finished_jobs_seconds` after they end, then
// deleted with their events; a blob is deleted once no kept job refers to it and nobody has
// stored, uploaded, found (FindMissing) or submitted it for `retention.unused_blobs_seconds`.
// A sweep runs every `retention.sweep_interval_seconds` on a thread of its own.
//
// Usage:
//   Retention retention(config.retention, store, blobs, metrics);
//   retention.Pin(health_check_model);   // blobs the server itself needs
//   retention.Start();  ...  retention.Stop();

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "server/config.h"
#include "server/job_digests.h"
#include "server/metrics.h"
#include "server/store.h"
#include "server/tiered_blob_store.h"

namespace boardlab::server {

struct RetentionSweep {
  int64_t jobs = 0;
  BlobSweep blobs;
};

class Retention {
 public:
  Retention(const RetentionConfig& config, Store& store, TieredBlobStore& blobs, Metrics& metrics);
  ~Retention();
  Retention(const Retention&) = delete;
  Retention& operator=(const Retention&) = delete;

  /// Keeps this blob whatever refers to it (the health check's model, input and output).
  void Pin(const v1::Digest& digest);
  /// One sweep as of `now_ms`: expired jobs first, then the blobs nothing kept refers to.
  absl::StatusOr<RetentionSweep> Sweep(int64_t now_ms);
  /// Sweeps now and then every sweep interval until Stop().
  void Start();
  void Stop();

 private:
  void Run();
  absl::StatusOr<absl::flat_hash_set<std::string>> ReferencedBlobs();

  const RetentionConfig config_;
  Store& store_;
  TieredBlobStore& blobs_;
  Metrics& metrics_;
  std::mutex mutex_;
  std::condition_variable wake_;
  absl::flat_hash_set<std::string> pinned_;  // guarded by mutex_
  bool stopping_ = false;                    // guarded by mutex_
  std::thread thread_;
};

}  // namespace boardlab::server
