#pragma once

// The agent's local cache of blobs by digest (artifacts, inputs, expected outputs), in
// `<state_dir>/cache/<sha256>`. A hit is re-hashed before use, so a corrupted file is fetched
// again rather than run; a miss is downloaded (BlobStore checks the hash) and written under a
// temporary name, then renamed, so that a crash never leaves a partial file under a digest.
//
//   ArtifactCache cache(state_dir + "/cache", blobs);
//   absl::StatusOr<std::string> path = cache.Fetch(assignment.artifact());

#include <atomic>
#include <string>

#include "absl/status/statusor.h"
#include "agent/blob_store.h"

namespace boardlab::agent {

class ArtifactCache {
 public:
  /// `store` must outlive the cache. Thread-safe.
  ArtifactCache(std::string dir, BlobStore& store);

  /// Local path of the blob, downloading it on a miss. Errors: InvalidArgument for a malformed
  /// digest, the store's errors ("Failed to obtain blob <digest>: ..."), Internal for disk errors.
  absl::StatusOr<std::string> Fetch(const v1::Digest& digest);

  /// Number of downloads so far (tests, logs).
  int downloads() const { return downloads_.load(); }

 private:
  std::string dir_;
  BlobStore& store_;
  std::atomic<int> downloads_{0};
  std::atomic<int> temp_counter_{0};
};

}  // namespace boardlab::agent
