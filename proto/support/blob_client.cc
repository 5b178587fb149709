#include "proto/support/blob_client.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "proto/support/digest.h"
#include "proto/support/grpc_util.h"

namespace boardlab::api {
namespace {

// The encoded UploadChunk fields that come before the bytes: the digest (first chunk only), then
// the tag and length of `data`. Protobuf fields may be concatenated, so header + bytes is the
// chunk's wire form.
std::string ChunkHeader(const v1::Digest* digest, size_t data_bytes) {
  std::string header;
  if (digest != nullptr) {
    v1::UploadChunk first;
    *first.mutable_digest() = *digest;
    first.SerializeToString(&header);
  }
  google::protobuf::io::StringOutputStream stream(&header);
  google::protobuf::io::CodedOutputStream out(&stream);
  out.WriteTag(google::protobuf::internal::WireFormatLite::MakeTag(
      v1::UploadChunk::kDataFieldNumber,
      google::protobuf::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
  out.WriteVarint64(data_bytes);
  return header;
}

// One upload as a generic (byte-level) client stream, so that each chunk's bytes are sent from
// the caller's buffer as they are: the generated stub would copy them twice (into the message,
// then into its serialized form) before the kernel copies them once more.
class RawUploadCall {
 public:
  RawUploadCall(grpc::GenericStub& stub, grpc::ClientContext& context)
      : call_(stub.PrepareCall(
            &context, absl::StrCat("/", v1::ArtifactService::service_full_name(), "/Upload"),
            &queue_)) {
    call_->StartCall(this);
    started_ = Wait();
  }
  ~RawUploadCall() {
    queue_.Shutdown();
    void* tag;
    bool ok;
    while (queue_.Next(&tag, &ok)) {
    }
  }

  /// False when the stream is broken (Finish() says why).
  bool Write(const v1::Digest* digest, std::string_view bytes) {
    const std::string header = ChunkHeader(digest, bytes.size());
    const grpc::Slice slices[] = {
        grpc::Slice(header.data(), header.size()),                           // copied: a few bytes
        grpc::Slice(bytes.data(), bytes.size(), grpc::Slice::STATIC_SLICE),  // not copied
    };
    grpc::ByteBuffer message(slices, 2);
    call_->Write(message, this);
    return Wait();
  }

  grpc::Status Finish() {
    if (started_) {
      call_->WritesDone(this);
      Wait();
      grpc::ByteBuffer response;
      call_->Read(&response, this);
      Wait();
    }
    grpc::Status status;
    call_->Finish(&status, this);
    Wait();
    return status;
  }

  bool started() const { return started_; }

 private:
  // Every operation is waited for before the next starts: one tag is enough.
  bool Wait() {
    void* tag;
    bool ok = false;
    return queue_.Next(&tag, &ok) && ok;
  }

  grpc::CompletionQueue queue_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
  bool started_ = false;
};

}  // namespace

BlobClient::BlobClient(std::shared_ptr<grpc::Channel> channel, std::string token)
    : stub_(v1::ArtifactService::NewStub(channel)),
      generic_stub_(std::make_unique<grpc::GenericStub>(std::move(channel))),
      token_(std::move(token)) {}

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
  RawUploadCall call(*generic_stub_, context);
  // `bytes` outlives the call: every chunk is sent from it without a copy.
  size_t offset = 0;
  bool open = call.started();
  while (open) {
    const size_t n = std::min(kBlobChunkBytes, bytes.size() - offset);
    open = call.Write(offset == 0 ? &digest : nullptr, bytes.substr(offset, n));
    offset += n;
    if (offset >= bytes.size()) break;
  }
  return FromGrpcStatus(call.Finish());
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
