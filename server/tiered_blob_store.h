#pragma once

// A blob store that keeps small blobs in the Store's database and the rest in files.
//
//   TieredBlobStore blobs(*std::move(file_store), *sqlite_store);
//   blobs.Put(log_text);   // a row in the database, no file
//
// A job leaves a few small blobs (its log, and outputs, ETDump and profile when they are new). A
// file each cost more CPU than the rest of the job's bookkeeping on ext4, where allocating an
// inode scans for recently deleted ones; a row in the WAL-journalled database costs a page
// write. Blobs written as files before this store existed are still found there. PathOf() writes
// a small blob out as a file once, for callers that hand a path to another program.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "server/blob_store.h"
#include "server/file_blob_store.h"
#include "server/store.h"

namespace boardlab::server {

class TieredBlobStore : public BlobStore {
 public:
  /// Blobs up to this size go to the database.
  static constexpr int64_t kSmallBlobBytes = 64 << 10;

  /// `store` must outlive this. Counts the small blobs' bytes.
  TieredBlobStore(std::unique_ptr<FileBlobStore> files, Store& store);

  bool Has(const v1::Digest& digest) const override;
  absl::StatusOr<std::unique_ptr<BlobWriter>> StartWrite(const v1::Digest& digest) override;
  absl::StatusOr<v1::Digest> Put(std::string_view bytes) override;
  absl::StatusOr<std::string> Read(const v1::Digest& digest) const override;
  absl::StatusOr<std::string> PathOf(const v1::Digest& digest) const override;
  int64_t TotalBytes() const override;
  void Touch(const v1::Digest& digest) override;
  /// Deletes the blobs, small and large, that `keep` does not claim and nobody stored or touched
  /// since `unused_since_ms`.
  absl::StatusOr<BlobSweep> DeleteUnused(const KeepBlob& keep, int64_t unused_since_ms);

  /// Stores checked bytes of a small blob (its writer's Commit).
  absl::Status PutSmall(const std::string& sha256, std::string_view bytes);

 private:
  /// Whether a small blob's use must be written: not when this store wrote it less than
  /// kTouchPrecisionMs ago (the database would leave such a row alone anyway).
  bool TouchDue(const std::string& sha256, int64_t now_ms);

  std::unique_ptr<FileBlobStore> files_;
  Store& store_;
  std::atomic<int64_t> small_bytes_{0};
  std::mutex touched_mutex_;
  std::map<std::string, int64_t> touched_ms_;  // small blob -> when its use was last written
};

}  // namespace boardlab::server
