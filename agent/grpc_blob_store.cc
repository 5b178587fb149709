#include <grpcpp/grpcpp.h>

#include "agent/blob_store.h"
#include "proto/support/blob_client.h"

namespace boardlab::agent {
namespace {

class GrpcBlobStore : public BlobStore {
 public:
  GrpcBlobStore(std::shared_ptr<grpc::Channel> channel, std::string token)
      : client_(std::move(channel), std::move(token)) {}
  absl::StatusOr<std::string> Get(const v1::Digest& digest) override { return client_.Get(digest); }
  absl::StatusOr<v1::Digest> Put(std::string_view bytes) override { return client_.Put(bytes); }

 private:
  api::BlobClient client_;  // its stub is thread-safe
};

}  // namespace

BlobStorePtr NewGrpcBlobStore(std::shared_ptr<grpc::Channel> channel, std::string token) {
  return std::make_unique<GrpcBlobStore>(std::move(channel), std::move(token));
}

}  // namespace boardlab::agent
