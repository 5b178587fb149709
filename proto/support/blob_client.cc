#include "proto/support/blob_client.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "proto/support/digest.h"
#include "proto/support/grpc_util.h"

namespace boardlab::api {

BlobClient::BlobClient(std::shared_ptr<grpc::Channel> channel, std::string token)
    : stub_(v1::ArtifactService::NewStub(std::move(channel))), token_(std::move(token)) {}

absl::StatusOr<std::vector<v1::Digest>> BlobClient::FindMissing(
    const std::vector<v1::Digest>& digests) {
  grpc::ClientContext context;
  AddBearerToken(context, token_);
  v1::FindMissingRequest request;
  for (const auto& digest : digests) *request.add_digests() = digest;
  v1::FindMissingResponse response;
  grpc::Status status = stub_->FindMissing(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return std::vector<v1::Digest>(response.missing().begin(), response.missing().end());
}

absl::Status BlobClient::Upload(const v1::Digest& digest, std::string_view bytes) {
  grpc::ClientContext context;
  AddBearerToken(context, token_);
  v1::UploadResponse response;
  auto writer = stub_->Upload(&context, &response);
  size_t offset = 0;
  // One message for every chunk: its data buffer is reused instead of freshly allocated (and
  // page-faulted in) 4 MiB at a time.
  v1::UploadChunk chunk;
  *chunk.mutable_digest() = digest;
  do {
    if (offset != 0) chunk.clear_digest();
    size_t n = std::min(kBlobChunkBytes, bytes.size() - offset);
    chunk.set_data(bytes.data() + offset, n);
    offset += n;
    // A failed write means the server closed the stream; Finish() says why.
    if (!writer->Write(chunk)) break;
  } while (offset < bytes.size());
  writer->WritesDone();
  return FromGrpcStatus(writer->Finish());
}

absl::StatusOr<v1::Digest> BlobClient::Put(std::string_view bytes) {
  v1::Digest digest = DigestOf(bytes);
  auto missing = FindMissing({digest});
  if (!missing.ok()) return missing.status();
  if (!missing->empty()) {
    absl::Status uploaded = Upload(digest, bytes);
    if (!uploaded.ok()) return uploaded;
  }
  return digest;
}

absl::StatusOr<std::string> BlobClient::Get(const v1::Digest& digest) {
  grpc::ClientContext context;
  AddBearerToken(context, token_);
  v1::DownloadRequest request;
  *request.mutable_digest() = digest;
  auto reader = stub_->Download(&context, request);
  std::string bytes;
  v1::DownloadChunk chunk;
  while (reader->Read(&chunk)) {
    if (bytes.empty() && chunk.total_bytes() > 0) {
      bytes.reserve(static_cast<size_t>(chunk.total_bytes()));
    }
    bytes += chunk.data();
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return FromGrpcStatus(status);
  if (Sha256Hex(bytes) != digest.sha256()) {
    return absl::DataLossError(
        absl::StrCat("download of ", digest.sha256(), ": the bytes received do not match it"));
  }
  return bytes;
}

}  // namespace boardlab::api
