#pragma once

// The agent's view of the server's artifact store: fetch blobs by digest, store results. The
// gRPC implementation wraps api::BlobClient; tests use an in-memory fake. Calls block (they
// run on the agent's transfer threads, never on its event loop) and may be made from several
// threads at once.

#include <memory>
#include <string>
#include <string_view>

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
};

using BlobStorePtr = std::unique_ptr<BlobStore>;

/// ArtifactService over `channel` with bearer `token`.
BlobStorePtr NewGrpcBlobStore(std::shared_ptr<grpc::Channel> channel, std::string token);

}  // namespace boardlab::agent
