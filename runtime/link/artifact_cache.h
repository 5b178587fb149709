#pragma once

// The board's artifact cache (docs/board-protocol.md, "Artifact cache"): the last artifacts the
// board received, named by their SHA-256 digest, in one memory region the board gives it. HELLO
// lists them, so that a host sends an artifact only when the board does not hold it. When a new
// artifact needs room, the least recently used ones are evicted and the rest moved together
// (compaction) if the free space is fragmented. At most kMaxCachedArtifacts entries; every
// artifact starts at a 64-byte boundary (Program::Load wants max_align_t, kernels 16).
//
//   ArtifactCache cache(region, region_size);
//   uint8_t* dst = cache.Reserve(digest, size);   // null: larger than the region
//   ... write the bytes, check the digest ...
//   cache.Commit();                               // or Abort()
//   const uint8_t* bytes = cache.Find(digest, &size);

#include <stddef.h>
#include <stdint.h>

#include "runtime/link/messages.h"

namespace boardlab::link {

class ArtifactCache {
 public:
  static constexpr size_t kAlignment = 64;

  /// `region` (not owned; aligned to kAlignment) must outlive the cache.
  ArtifactCache(uint8_t* region, size_t size);

  size_t capacity() const { return size_; }
  /// The bytes of the artifact named `digest`, or null. Counts as a use.
  const uint8_t* Find(const Digest& digest, size_t* size);
  /// Room for `size` bytes of the artifact `digest` (a cached copy of it is dropped first), or
  /// null when `size` exceeds the region. Entries may move: pointers from Find are invalid
  /// afterwards. The new entry is invisible until Commit().
  uint8_t* Reserve(const Digest& digest, size_t size);
  void Commit();
  void Abort();
  /// The committed entries, most recently used first; returns how many were written.
  size_t List(CachedArtifact* out, size_t max) const;
  size_t count() const;

 private:
  struct Entry {
    Digest digest;
    size_t offset;
    size_t size;
    uint32_t last_use;
    bool live;
  };
  static size_t Rounded(size_t n) { return (n + kAlignment - 1) & ~(kAlignment - 1); }
  // Live entries' indices sorted by offset; returns their number.
  size_t SortedByOffset(int* order) const;
  // First gap of `bytes` or more; false when none.
  bool FindGap(size_t bytes, size_t* offset) const;
  size_t FreeBytes() const;
  int FreeSlot() const;
  void EvictLeastRecentlyUsed();
  void Compact();

  uint8_t* region_;
  size_t size_;
  Entry entries_[kMaxCachedArtifacts] = {};
  int pending_ = -1;  // the reserved entry, invisible to Find and List until Commit
  uint32_t uses_ = 0;
};

}  // namespace boardlab::link
