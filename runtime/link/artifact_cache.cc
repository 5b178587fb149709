#include "runtime/link/artifact_cache.h"

#include <string.h>

namespace boardlab::link {

ArtifactCache::ArtifactCache(uint8_t* region, size_t size) : region_(region), size_(size) {}

const uint8_t* ArtifactCache::Find(const Digest& digest, size_t* size) {
  for (int i = 0; i < static_cast<int>(kMaxCachedArtifacts); ++i) {
    Entry& e = entries_[i];
    if (e.live && i != pending_ && e.digest == digest) {
      e.last_use = ++uses_;
      *size = e.size;
      return region_ + e.offset;
    }
  }
  return nullptr;
}

size_t ArtifactCache::SortedByOffset(int* order) const {
  size_t n = 0;
  for (int i = 0; i < static_cast<int>(kMaxCachedArtifacts); ++i) {
    if (!entries_[i].live) continue;
    size_t at = n++;
    while (at > 0 && entries_[order[at - 1]].offset > entries_[i].offset) {
      order[at] = order[at - 1];
      --at;
    }
    order[at] = i;
  }
  return n;
}

bool ArtifactCache::FindGap(size_t bytes, size_t* offset) const {
  int order[kMaxCachedArtifacts];
  const size_t n = SortedByOffset(order);
  size_t start = 0;
  for (size_t k = 0; k <= n; ++k) {
    const size_t end = k < n ? entries_[order[k]].offset : size_;
    if (end >= start && end - start >= bytes) {
      *offset = start;
      return true;
    }
    if (k < n) start = entries_[order[k]].offset + Rounded(entries_[order[k]].size);
  }
  return false;
}

size_t ArtifactCache::FreeBytes() const {
  size_t used = 0;
  for (const Entry& e : entries_) used += e.live ? Rounded(e.size) : 0;
  return used >= size_ ? 0 : size_ - used;
}

int ArtifactCache::FreeSlot() const {
  for (int i = 0; i < static_cast<int>(kMaxCachedArtifacts); ++i) {
    if (!entries_[i].live) return i;
  }
  return -1;
}

void ArtifactCache::EvictLeastRecentlyUsed() {
  int victim = -1;
  for (int i = 0; i < static_cast<int>(kMaxCachedArtifacts); ++i) {
    if (entries_[i].live && (victim < 0 || entries_[i].last_use < entries_[victim].last_use)) {
      victim = i;
    }
  }
  if (victim >= 0) entries_[victim].live = false;
}

void ArtifactCache::Compact() {
  int order[kMaxCachedArtifacts];
  const size_t n = SortedByOffset(order);
  size_t next = 0;
  for (size_t k = 0; k < n; ++k) {
    Entry& e = entries_[order[k]];
    if (e.offset != next) memmove(region_ + next, region_ + e.offset, e.size);
    e.offset = next;
    next += Rounded(e.size);
  }
}

uint8_t* ArtifactCache::Reserve(const Digest& digest, size_t size) {
  Abort();
  for (Entry& e : entries_) {
    if (e.live && e.digest == digest) e.live = false;  // replaced by the new copy
  }
  const size_t bytes = Rounded(size);
  if (bytes > size_ || bytes < size) return nullptr;
  size_t offset = 0;
  // Each round evicts or compacts, so this ends: with no entries left the whole region is free.
  while (FreeSlot() < 0 || !FindGap(bytes, &offset)) {
    if (FreeSlot() >= 0 && FreeBytes() >= bytes) {
      Compact();
    } else {
      EvictLeastRecentlyUsed();
    }
  }
  pending_ = FreeSlot();
  entries_[pending_] = Entry{digest, offset, size, ++uses_, true};
  return region_ + offset;
}

void ArtifactCache::Commit() { pending_ = -1; }

void ArtifactCache::Abort() {
  if (pending_ >= 0) entries_[pending_].live = false;
  pending_ = -1;
}

size_t ArtifactCache::List(CachedArtifact* out, size_t max) const {
  // Newest first: repeatedly the most recently used entry older than the last one listed (uses
  // are distinct, so none is listed twice).
  size_t n = 0;
  uint32_t below = UINT32_MAX;
  while (n < max) {
    int best = -1;
    for (int i = 0; i < static_cast<int>(kMaxCachedArtifacts); ++i) {
      const Entry& e = entries_[i];
      if (!e.live || i == pending_ || e.last_use >= below) continue;
      if (best < 0 || e.last_use > entries_[best].last_use) best = i;
    }
    if (best < 0) break;
    out[n++] = CachedArtifact{entries_[best].digest, static_cast<uint32_t>(entries_[best].size)};
    below = entries_[best].last_use;
  }
  return n;
}

size_t ArtifactCache::count() const {
  size_t n = 0;
  for (int i = 0; i < static_cast<int>(kMaxCachedArtifacts); ++i) {
    n += entries_[i].live && i != pending_ ? 1 : 0;
  }
  return n;
}

}  // namespace boardlab::link
