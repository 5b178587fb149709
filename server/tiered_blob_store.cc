#include "server/tiered_blob_store.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "proto/support/digest.h"
#include "server/clock.h"

namespace boardlab::server {
namespace {

// Digests of unknown size (0) may name either kind of blob.
bool MaybeSmall(const v1::Digest& digest) {
  return digest.size_bytes() <= TieredBlobStore::kSmallBlobBytes;
}

class SmallBlobWriter : public CheckedBlobWriter {
 public:
  SmallBlobWriter(TieredBlobStore& store, v1::Digest digest)
      : CheckedBlobWriter(std::move(digest)), store_(store) {
    bytes_.reserve(static_cast<size_t>(this->digest().size_bytes()));
  }

 private:
  absl::Status Keep(std::string_view bytes) override {
    bytes_.append(bytes);
    return absl::OkStatus();
  }
  absl::Status Store() override { return store_.PutSmall(digest().sha256(), bytes_); }

  TieredBlobStore& store_;
  std::string bytes_;
};

}  // namespace

int64_t KnownPresentMs(int64_t unused_blobs_seconds) {
  if (unused_blobs_seconds <= 0) return kMaxKnownPresentMs;
  return std::min(unused_blobs_seconds * 1000 / 2, kMaxKnownPresentMs);
}

TieredBlobStore::TieredBlobStore(std::unique_ptr<FileBlobStore> files, Store& store,
                                 int64_t known_present_ms)
    : files_(std::move(files)), store_(store), known_present_ms_(known_present_ms) {
  absl::StatusOr<int64_t> bytes = store_.BlobBytes();
  small_bytes_ = bytes.ok() ? *bytes : 0;
}

bool TieredBlobStore::Has(const v1::Digest& digest) const {
  if (!CheckDigest(digest).ok()) return false;
  if (MaybeSmall(digest)) {
    if (KnownPresent(digest)) return true;
    absl::StatusOr<int64_t> size = store_.BlobSize(digest.sha256());
    if (size.ok() && *size >= 0) {
      Remember(digest.sha256(), *size, 0);
      return digest.size_bytes() == 0 || *size == digest.size_bytes();
    }
  }
  return files_->Has(digest);
}

absl::StatusOr<std::unique_ptr<BlobWriter>> TieredBlobStore::StartWrite(const v1::Digest& digest) {
  if (absl::Status ok = CheckDigest(digest); !ok.ok()) return ok;
  if (!MaybeSmall(digest)) return files_->StartWrite(digest);
  return std::make_unique<SmallBlobWriter>(*this, digest);
}

absl::StatusOr<v1::Digest> TieredBlobStore::Put(std::string_view bytes) {
  if (static_cast<int64_t>(bytes.size()) > kSmallBlobBytes) return files_->Put(bytes);
  v1::Digest digest = api::DigestOf(bytes);
  if (Has(digest)) {
    Touch(digest);
    return digest;
  }
  if (absl::Status ok = PutSmall(digest.sha256(), bytes); !ok.ok()) return ok;
  return digest;
}

absl::Status TieredBlobStore::PutSmall(const std::string& sha256, std::string_view bytes) {
  const int64_t now = NowMs();  // the store records its use at this moment or later
  if (absl::Status ok = store_.PutBlob(sha256, bytes); !ok.ok()) return ok;
  Remember(sha256, static_cast<int64_t>(bytes.size()), now);
  {
    std::lock_guard lock(seen_mutex_);
    seen_[sha256].touch_written_ms = now;
  }
  // Concurrent uploads of one blob may both count it; the figure is a metric.
  small_bytes_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

absl::StatusOr<std::string> TieredBlobStore::Read(const v1::Digest& digest) const {
  if (absl::Status ok = CheckDigest(digest); !ok.ok()) return ok;
  if (MaybeSmall(digest)) {
    absl::StatusOr<std::optional<std::string>> bytes = store_.GetBlob(digest.sha256());
    if (!bytes.ok()) return bytes.status();
    if (bytes->has_value()) return **std::move(bytes);
  }
  return files_->Read(digest);
}

absl::StatusOr<std::string> TieredBlobStore::PathOf(const v1::Digest& digest) const {
  absl::StatusOr<std::string> path = files_->PathOf(digest);
  if (path.ok() || !MaybeSmall(digest)) return path;
  absl::StatusOr<std::optional<std::string>> bytes = store_.GetBlob(digest.sha256());
  if (!bytes.ok()) return bytes.status();
  if (!bytes->has_value()) return path;  // NotFound
  // Written out once; the file store finds it from then on.
  absl::StatusOr<v1::Digest> stored = files_->Put(**bytes);
  if (!stored.ok()) return stored.status();
  return files_->PathOf(*stored);
}

int64_t TieredBlobStore::TotalBytes() const { return files_->TotalBytes() + small_bytes_.load(); }

void TieredBlobStore::Touch(const v1::Digest& digest) {
  if (!CheckDigest(digest).ok()) return;
  const int64_t now = NowMs();
  if (MaybeSmall(digest) && TouchDue(digest.sha256(), now)) {
    absl::StatusOr<int64_t> used = store_.TouchBlob(digest.sha256(), now);
    if (used.ok()) Remember(digest.sha256(), -1, *used);  // -1: not stored (any more)
  }
  files_->Touch(digest);
}

// A submit touches its model, inputs and compiled files several times: without this, each touch
// was a database round trip (and a statement the database runs) that changed nothing.
bool TieredBlobStore::TouchDue(const std::string& sha256, int64_t now_ms) {
  std::lock_guard lock(seen_mutex_);
  Seen& seen = seen_[sha256];
  if (seen.touch_written_ms != 0 && now_ms - seen.touch_written_ms < kTouchPrecisionMs) {
    return false;
  }
  seen.touch_written_ms = now_ms;
  PruneSeen(now_ms);
  return true;
}

bool TieredBlobStore::KnownPresent(const v1::Digest& digest) const {
  std::lock_guard lock(seen_mutex_);
  auto it = seen_.find(digest.sha256());
  if (it == seen_.end()) return false;
  const Seen& seen = it->second;
  return seen.size >= 0 && (digest.size_bytes() == 0 || seen.size == digest.size_bytes()) &&
         seen.used_ms > 0 && NowMs() - seen.used_ms < known_present_ms_;
}

void TieredBlobStore::Remember(const std::string& sha256, int64_t size, int64_t used_ms) const {
  std::lock_guard lock(seen_mutex_);
  Seen& seen = seen_[sha256];
  if (used_ms < 0) {  // gone: what was known of it is not true any more
    seen.size = -1;
    seen.used_ms = 0;
    return;
  }
  if (size >= 0) seen.size = size;
  seen.used_ms = std::max(seen.used_ms, used_ms);
  PruneSeen(NowMs());
}

void TieredBlobStore::PruneSeen(int64_t now_ms) const {
  if (seen_.size() % 1024 != 0) return;
  const int64_t useful_ms = std::max(known_present_ms_, kTouchPrecisionMs);
  std::erase_if(seen_, [&](const auto& entry) {
    return now_ms - std::max(entry.second.used_ms, entry.second.touch_written_ms) >= useful_ms;
  });
}

absl::StatusOr<BlobSweep> TieredBlobStore::DeleteUnused(const KeepBlob& keep,
                                                        int64_t unused_since_ms) {
  absl::StatusOr<std::vector<std::string>> unused = store_.BlobsUnusedSince(unused_since_ms);
  if (!unused.ok()) return unused.status();
  BlobSweep sweep;
  for (const std::string& sha256 : *unused) {
    if (keep(sha256)) continue;
    // Checked again as it is deleted: a touch since the listing keeps it.
    absl::StatusOr<int64_t> bytes = store_.DeleteBlobUnusedSince(sha256, unused_since_ms);
    if (!bytes.ok()) return bytes.status();
    if (*bytes < 0) continue;
    small_bytes_ -= *bytes;
    Remember(sha256, -1, -1);
    sweep.blobs++;
    sweep.bytes += *bytes;
    sweep.deleted.push_back(sha256);
  }
  BlobSweep files = files_->DeleteUnused(keep, unused_since_ms);
  sweep.blobs += files.blobs;
  sweep.bytes += files.bytes;
  sweep.deleted.insert(sweep.deleted.end(), files.deleted.begin(), files.deleted.end());
  return sweep;
}

}  // namespace boardlab::server
