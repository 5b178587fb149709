#pragma once

// Client side of ArtifactService: find what the store lacks, upload it in chunks, download by
// digest. Used by the `boardlab` client and by agents (artifacts in, outputs and ETDumps out).
//
// Usage:
//   BlobClient blobs(channel, token);
//   ASSIGN_OR_RETURN(v1::Digest model, blobs.Put(model_bytes));   // uploads only when missing
//   ASSIGN_OR_RETURN(std::string pte, blobs.Get(job.files().artifact()));

#include <grpcpp/generic/generic_stub.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "boardlab/v1/artifact_service.grpc.pb.h"

namespace boardlab::api {

inline constexpr size_t kBlobChunkBytes = 4 << 20;

class BlobClient {
 public:
  /// `channel` is shared; `token` is sent as the bearer token on every call.
  BlobClient(std::shared_ptr<grpc::Channel> channel, std::string token);

  /// The digests among `digests` the store does not have.
  absl::StatusOr<std::vector<v1::Digest>> FindMissing(const std::vector<v1::Digest>& digests);

  /// Uploads `bytes` under `digest` (which must be theirs) in kBlobChunkBytes chunks.
  absl::Status Upload(const v1::Digest& digest, std::string_view bytes);

  /// Hashes `bytes`, uploads them when the store lacks them, returns their digest.
  absl::StatusOr<v1::Digest> Put(std::string_view bytes);

  /// Downloads a blob and checks its SHA-256. Errors: NotFound, DataLoss (hash mismatch).
  absl::StatusOr<std::string> Get(const v1::Digest& digest);

 private:
  std::unique_ptr<v1::ArtifactService::Stub> stub_;
  std::unique_ptr<grpc::GenericStub> generic_stub_;  // Upload() sends bytes without copies
  std::string token_;
};

}  // namespace boardlab::api
