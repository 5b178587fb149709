#pragma once

#include <atomic>
#include <string>

#include "server/blob_store.h"

namespace boardlab::server {

/// Blobs as files `<root>/<first two hex digits>/<sha256>`; writes go to `<root>/tmp` and are
/// renamed into place, so a crash never leaves a partial blob under a real name.
class FileBlobStore : public BlobStore {
 public:
  /// Creates `root` if needed and counts the bytes already there.
  static absl::StatusOr<std::unique_ptr<FileBlobStore>> Open(const std::string& root);

  bool Has(const v1::Digest& digest) const override;
  absl::StatusOr<std::unique_ptr<BlobWriter>> StartWrite(const v1::Digest& digest) override;
  absl::StatusOr<v1::Digest> Put(std::string_view bytes) override;
  absl::StatusOr<std::string> Read(const v1::Digest& digest) const override;
  absl::StatusOr<std::string> PathOf(const v1::Digest& digest) const override;
  int64_t TotalBytes() const override { return total_bytes_.load(); }

  /// Called by writers when a new blob lands.
  void AddBytes(int64_t bytes) { total_bytes_ += bytes; }
  std::string FinalPath(const std::string& sha256) const;
  std::string TempPath();

 private:
  explicit FileBlobStore(std::string root) : root_(std::move(root)) {}
  std::string root_;
  std::atomic<int64_t> total_bytes_{0};
  std::atomic<uint64_t> temp_counter_{0};
};

}  // namespace boardlab::server
