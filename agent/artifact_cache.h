#pragma once

// The agent's local cache of blobs by digest (artifacts, inputs, expected outputs), in
// `<state_dir>/cache/<sha256>`. A hit is hashed before its first use by this process, so a
// corrupted file is fetched again rather than run; after that, a hit whose file is unchanged
// (inode, size, modification time) is used without reading it again, which saves reading and
// hashing the artifact for every job; a miss is downloaded (BlobStore checks the hash) and written
// under a temporary name, then renamed, so that a crash never leaves a partial file under a digest.
//
//   ArtifactCache cache(state_dir + "/cache", blobs);
//   absl::StatusOr<std::string> path = cache.Fetch(assignment.artifact());

#include <sys/types.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
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
  struct FileStamp {
    ino_t inode;
    off_t size;
    time_t mtime_s;
    long mtime_ns;
    bool operator==(const FileStamp&) const = default;
  };
  static std::optional<FileStamp> StampOf(const std::string& path);
  /// Remembers that `path` held the blob `sha256` as the file is now.
  void Verified(const std::string& sha256, const std::string& path);
  /// True when `path` is unchanged since it was verified.
  bool StillVerified(const std::string& sha256, const std::string& path) const;

  std::string dir_;
  BlobStore& store_;
  std::atomic<int> downloads_{0};
  std::atomic<int> temp_counter_{0};
  mutable std::mutex mutex_;
  std::map<std::string, FileStamp> verified_;  // by sha256
};

}  // namespace boardlab::agent
