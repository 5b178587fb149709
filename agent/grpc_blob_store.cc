#include <grpcpp/grpcpp.h>

#include <set>

#include "agent/blob_store.h"
#include "proto/support/blob_client.h"
#include "proto/support/digest.h"

namespace boardlab::agent {
namespace {

class GrpcBlobStore : public BlobStore {
 public:
  GrpcBlobStore(std::shared_ptr<grpc::Channel> channel, std::string token)
      : client_(std::move(channel), std::move(token)) {}
  absl::StatusOr<std::string> Get(const v1::Digest& digest) override { return client_.Get(digest); }
  absl::StatusOr<v1::Digest> Put(std::string_view bytes) override { return client_.Put(bytes); }

  // One FindMissing for all of them, then one Upload per missing blob (each digest once).
  absl::StatusOr<std::vector<v1::Digest>> PutAll(
      const std::vector<std::string_view>& blobs) override {
    std::vector<v1::Digest> digests;
    for (std::string_view bytes : blobs) digests.push_back(api::DigestOf(bytes));
    absl::StatusOr<std::vector<v1::Digest>> missing = client_.FindMissing(digests);
    if (!missing.ok()) return missing.status();
    std::set<std::string> uploaded;
    for (const v1::Digest& want : *missing) {
      if (!uploaded.insert(want.sha256()).second) continue;
      for (size_t i = 0; i < digests.size(); ++i) {
        if (digests[i].sha256() != want.sha256()) continue;
        if (absl::Status ok = client_.Upload(digests[i], blobs[i]); !ok.ok()) return ok;
        break;
      }
    }
    return digests;
  }

 private:
  api::BlobClient client_;  // its stub is thread-safe
};

}  // namespace

BlobStorePtr NewGrpcBlobStore(std::shared_ptr<grpc::Channel> channel, std::string token) {
  return std::make_unique<GrpcBlobStore>(std::move(channel), std::move(token));
}

}  // namespace boardlab::agent
