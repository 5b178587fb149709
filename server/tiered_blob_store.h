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
//
// Blobs never change (their name is their hash), so a small blob this store has seen stored, with
// a use the database recorded, is taken for present without asking the database again (a job
// asked about its model, inputs and compiled files about eight times, each a round trip), while
// no retention sweep can delete it: for KnownPresentMs() after that use. A blob this store's own
// sweep deletes is forgotten at once; a sweep of another replica on the same database deletes
// only blobs unused for the whole unused period, of which KnownPresentMs() is at most half.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "server/blob_store.h"
#include "server/file_blob_store.h"
#include "server/store.h"

namespace boardlab::server {

/// At most this long a blob is taken for present without asking the database again, also when
/// this replica deletes no blobs (another replica's retention may).
inline constexpr int64_t kMaxKnownPresentMs = 600'000;

/// How long after a recorded use a small blob is taken for present, for a retention that deletes
/// blobs unused for `unused_blobs_seconds` (0: never): half of that (the other half is room for
/// the clocks of replicas that differ and for a sweep in progress), at most kMaxKnownPresentMs.
int64_t KnownPresentMs(int64_t unused_blobs_seconds);

class TieredBlobStore : public BlobStore {
 public:
  /// Blobs up to this size go to the database.
  static constexpr int64_t kSmallBlobBytes = 64 << 10;

  /// `store` must outlive this. Counts the small blobs' bytes. `known_present_ms`: see
  /// KnownPresentMs() (0: always ask the database).
  TieredBlobStore(std::unique_ptr<FileBlobStore> files, Store& store,
                  int64_t known_present_ms = kMaxKnownPresentMs);

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
  /// What this store knows of a small blob.
  struct Seen {
    int64_t size = -1;             // its size, once read or written here
    int64_t used_ms = 0;           // its use as the database recorded it (0: none seen)
    int64_t touch_written_ms = 0;  // when this store last wrote its use
  };

  /// Whether a small blob's use must be written: not when this store wrote it less than
  /// kTouchPrecisionMs ago (the database would leave such a row alone anyway).
  bool TouchDue(const std::string& sha256, int64_t now_ms);
  /// Whether `digest` names a small blob seen stored, with a recorded use recent enough that no
  /// retention sweep can have deleted it.
  bool KnownPresent(const v1::Digest& digest) const;
  /// Records what was learnt of a small blob (-1: not known); `used_ms` < 0 forgets it.
  void Remember(const std::string& sha256, int64_t size, int64_t used_ms) const;
  /// Drops what is too old to be of use (under seen_mutex_): bounds the map by the blobs used
  /// within kMaxKnownPresentMs.
  void PruneSeen(int64_t now_ms) const;

  std::unique_ptr<FileBlobStore> files_;
  Store& store_;
  const int64_t known_present_ms_;
  std::atomic<int64_t> small_bytes_{0};
  mutable std::mutex seen_mutex_;
  mutable std::map<std::string, Seen> seen_;  // small blobs, by SHA-256
};

}  // namespace boardlab::server
