#pragma once

// The agent's view of the server's artifact store: fetch blobs by digest, store results. The
// gRPC implementation wraps api::BlobClient; tests use an in-memory fake. Calls block (they
// run on the agent's transfer threads, never on its event loop) and may be made from several
// threads at once.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "boardlab/v1/types.pb.h"

namespace grpc {
class Channel;
}

namespace boardlab::agent {

class BlobStore {
 public:
  virtual ~BlobStore() = default;
  /// The blob's bytes, checked against the digest. Errors: NotFound, DataLoss, Unavailable.
  virtual absl::StatusOr<std::string> Get(const v1::Digest& digest) = 0;
  /// Stores `bytes` (uploading only when the store lacks them) and returns their digest.
  virtual absl::StatusOr<v1::Digest> Put(std::string_view bytes) = 0;
  /// Stores several blobs and returns their digests in order. The gRPC store asks which are
  /// missing in one call (a job's outputs, ETDump and profile are often stored already); this
  /// default puts them one by one.
  virtual absl::StatusOr<std::vector<v1::Digest>> PutAll(
      const std::vector<std::string_view>& blobs) {
    std::vector<v1::Digest> digests;
    for (std::string_view bytes : blobs) {
      absl::StatusOr<v1::Digest> digest = Put(bytes);
      if (!digest.ok()) return digest.status();
      digests.push_back(*std::move(digest));
    }
    return digests;
  }
};

using BlobStorePtr = std::unique_ptr<BlobStore>;

/// ArtifactService over `channel` with bearer `token`.
BlobStorePtr NewGrpcBlobStore(std::shared_ptr<grpc::Channel> channel, std::string token);

}  // namespace boardlab::agent
