#pragma once

// The content-addressed blob store: models, inputs, expected outputs, compiled artifacts, reports,
// outputs and ETDumps, each stored once under the SHA-256 of its bytes.
//
// Usage:
//   BlobStorePtr blobs = std::make_unique<FileBlobStore>("/var/lib/boardlab/blobs");
//   auto writer = blobs->StartWrite(digest);   // streamed upload, checked at Commit()
//   writer->Append(chunk); ... RETURN_IF_ERROR(writer->Commit());   // or Take(chunk)

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "boardlab/v1/types.pb.h"

namespace boardlab::server {

/// Receives one blob in pieces. Nothing becomes visible until Commit() has checked the size and
/// hash; a writer destroyed without Commit() leaves no trace.
class BlobWriter {
 public:
  virtual ~BlobWriter() = default;
  /// Errors: ResourceExhausted when the bytes exceed the announced size.
  virtual absl::Status Append(std::string_view bytes) = 0;
  /// Append() for a chunk the caller gives up: a writer may keep its bytes (and hash them on
  /// another thread) rather than copy them. Leaves `chunk` empty, possibly holding a spare buffer.
  virtual absl::Status Take(std::string& chunk) {
    absl::Status ok = Append(chunk);
    chunk.clear();
    return ok;
  }
  /// Errors: InvalidArgument when the size or the SHA-256 differ from the announced digest.
  virtual absl::Status Commit() = 0;
};

/// A use of a blob is recorded with this precision (Touch() within it writes nothing), so that
/// every submit of the same model does not cost a write.
inline constexpr int64_t kTouchPrecisionMs = 60'000;

/// What a retention sweep deleted.
struct BlobSweep {
  int64_t blobs = 0;
  int64_t bytes = 0;
  std::vector<std::string> deleted;  // their SHA-256s
};

/// Says whether retention must keep the blob with this SHA-256 (a kept job refers to it).
using KeepBlob = std::function<bool(const std::string& sha256)>;

class BlobStore {
 public:
  virtual ~BlobStore() = default;
  /// Marks a blob as in use now, for stores that delete blobs unused for long (a client that found
  /// a blob present relies on it staying for its submit).
  virtual void Touch(const v1::Digest& /*digest*/) {}
  virtual bool Has(const v1::Digest& digest) const = 0;
  /// Errors: InvalidArgument for a malformed digest.
  virtual absl::StatusOr<std::unique_ptr<BlobWriter>> StartWrite(const v1::Digest& digest) = 0;
  /// Stores bytes in one call; returns their digest.
  virtual absl::StatusOr<v1::Digest> Put(std::string_view bytes) = 0;
  /// Errors: NotFound.
  virtual absl::StatusOr<std::string> Read(const v1::Digest& digest) const = 0;
  /// The path of a stored blob (for streaming it out); NotFound when absent.
  virtual absl::StatusOr<std::string> PathOf(const v1::Digest& digest) const = 0;
  virtual int64_t TotalBytes() const = 0;
};

using BlobStorePtr = std::unique_ptr<BlobStore>;

}  // namespace boardlab::server
