#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "proto/support/digest.h"
#include "server/background_sha256.h"
#include "server/blob_store.h"

namespace boardlab::server {

/// InvalidArgument unless `digest` names a SHA-256 (64 lowercase hex characters, a file name
/// that cannot escape the store) and a size that is not negative.
absl::Status CheckDigest(const v1::Digest& digest);

/// A BlobWriter that counts and hashes the bytes it is given and checks both against the
/// announced digest at Commit(); subclasses keep the bytes and store them once checked. Blobs
/// above 1 MiB are hashed on a second thread while the caller keeps the bytes and receives more.
class CheckedBlobWriter : public BlobWriter {
 public:
  explicit CheckedBlobWriter(v1::Digest digest);
  absl::Status Append(std::string_view bytes) final;
  absl::Status Take(std::string& chunk) final;
  absl::Status Commit() final;

 protected:
  const v1::Digest& digest() const { return digest_; }

 private:
  virtual absl::Status Keep(std::string_view bytes) = 0;
  /// Called once the size and hash matched.
  virtual absl::Status Store() = 0;

  /// Counts `size` more bytes; ResourceExhausted past the announced size.
  absl::Status Count(size_t size);

  v1::Digest digest_;
  api::Sha256 hash_;                              // small blobs
  std::unique_ptr<BackgroundSha256> background_;  // large ones
  int64_t written_ = 0;
};

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
  /// Sets the blob file's modification time, retention's "last used", to now.
  void Touch(const v1::Digest& digest) override;
  /// Deletes the blobs `keep` does not claim whose files were last modified before
  /// `unused_since_ms`.
  BlobSweep DeleteUnused(const KeepBlob& keep, int64_t unused_since_ms);

  /// Called by writers when a new blob lands.
  void AddBytes(int64_t bytes) { total_bytes_ += bytes; }
  std::string FinalPath(const std::string& sha256) const;
  /// A new name under `<root>/tmp`, unique across the processes and hosts that share the root.
  std::string TempPath();

 private:
  explicit FileBlobStore(std::string root);
  std::string root_;
  const std::string temp_prefix_;  // unique among the replicas that share `root_`
  std::atomic<int64_t> total_bytes_{0};
  std::atomic<uint64_t> temp_counter_{0};
};

}  // namespace boardlab::server
