#include "server/services.h"

#include <condition_variable>
#include <deque>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "proto/support/digest.h"
#include "proto/support/grpc_util.h"
#include "server/blob_access.h"
#include "server/clock.h"
#include "server/file_blob_store.h"
#include "server/log.h"

namespace boardlab::server {
namespace {

using api::ToGrpcStatus;

constexpr int64_t kWatchPollMs = 1000;
constexpr size_t kDownloadChunkBytes = 1 << 20;
// Feeds the upload's chunks, starting with `chunk` (already read), to `writer`; commits. The
// writer takes each chunk's bytes over (a large blob's are hashed on a second thread).
absl::Status Receive(grpc::ServerReader<v1::UploadChunk>& reader, v1::UploadChunk& chunk,
                     BlobWriter& writer, Metrics& metrics) {
  do {
    const size_t size = chunk.data().size();  // Take() leaves the chunk empty
    if (absl::Status ok = writer.Take(*chunk.mutable_data()); !ok.ok()) return ok;
    metrics.BlobsUploaded(static_cast<double>(size));
  } while (reader.Read(&chunk));
  return writer.Commit();
}

// The audit trail of a shared lab: one structured log line ("msg":"audit") per change a caller
// makes to jobs and boards, saying who (tenant and role), what and on which object.
void Audit(const Caller& caller, const std::string& action, const std::string& object,
           const std::string& detail = "") {
  LogInfo("audit", {{"action", action},
                    {"tenant", caller.tenant},
                    {"role", RoleName(caller.role)},
                    {"object", object},
                    {"detail", detail}});
}

// With mTLS configured a presented certificate has been verified during the handshake (one that
// does not verify ends the connection), so its presence is what counts.
bool HasVerifiedCertificate(const grpc::ServerContext& context) {
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  return auth != nullptr && auth->IsPeerAuthenticated() &&
         !auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME).empty();
}

absl::StatusOr<Caller> Authenticate(const ServiceContext& c, const grpc::ServerContext& context,
                                    Access needed) {
  CallCredentials credentials;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("x-boardlab-tenant"); it != metadata.end()) {
    credentials.tenant_header.assign(it->second.data(), it->second.size());
  }
  credentials.token = api::BearerToken(context);
  credentials.verified_certificate = HasVerifiedCertificate(context);
  return c.auth.Authenticate(credentials, needed);
}

// The server's end of an agent stream. Reads happen on the handler's thread; writes on a thread
// of their own, so the Lab can queue messages under its lock without waiting for the network.
class StreamSession : public AgentSession, public std::enable_shared_from_this<StreamSession> {
 public:
  StreamSession(grpc::ServerContext* context,
                grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream)
      : context_(context), stream_(stream) {}

  void Start() {
    writer_ = std::thread([self = shared_from_this()] { self->WriteLoop(); });
  }

  void Send(const v1::ServerMessage& message) override {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    outbox_.push_back(message);
    wake_.notify_one();
  }

  // Ends the stream: the handler's blocked Read() returns false.
  void Close() override {
    Stop();
    context_->TryCancel();
  }

  void Stop() {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    wake_.notify_one();
  }

  void Join() {
    if (writer_.joinable()) writer_.join();
  }

 private:
  void WriteLoop() {
    for (;;) {
      v1::ServerMessage message;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopped_ || !outbox_.empty(); });
        if (outbox_.empty()) return;  // stopped with nothing left to say
        message = std::move(outbox_.front());
        outbox_.pop_front();
      }
      if (!stream_->Write(message)) return;
    }
  }

  grpc::ServerContext* context_;
  grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<v1::ServerMessage> outbox_;
  bool stopped_ = false;
  std::thread writer_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// JobService.

grpc::Status JobServiceImpl::SubmitJob(grpc::ServerContext* context,
                                       const v1::SubmitJobRequest* request,
                                       v1::SubmitJobResponse* response) {
  auto caller = Authenticate(c_, *context, Access::kJobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  auto submitted = c_.lab.Submit(*caller, *request);
  if (!submitted.ok()) return ToGrpcStatus(submitted.status());
  if (!submitted->deduplicated()) {
    const v1::JobSpec& spec = submitted->job().spec();
    Audit(*caller, "submit", submitted->job().id(),
          absl::StrCat("model ", spec.model().sha256().substr(0, 12), ", board type ",
                       spec.selector().board_type(), ", priority ", spec.priority()));
  }
  *response = *std::move(submitted);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                                    v1::Job* response) {
  auto caller = Authenticate(c_, *context, Access::kJobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  auto job = c_.lab.GetJob(*caller, request->job_id());
  if (!job.ok()) return ToGrpcStatus(job.status());
  *response = *std::move(job);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::WatchJob(grpc::ServerContext* context,
                                      const v1::WatchJobRequest* request,
                                      grpc::ServerWriter<v1::JobEvent>* writer) {
  auto caller = Authenticate(c_, *context, Access::kJobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  int64_t seq = request->after_seq();
  while (!context->IsCancelled()) {
    auto events = c_.lab.WaitEvents(*caller, request->job_id(), seq, NowMs() + kWatchPollMs);
    if (!events.ok()) return ToGrpcStatus(events.status());
    for (const auto& event : *events) {
      // A watcher that went away stops here; the job goes on without it.
      if (!writer->Write(event)) return grpc::Status::OK;
      seq = event.seq();
      if (event.has_finished()) return grpc::Status::OK;
    }
  }
  return grpc::Status(grpc::StatusCode::CANCELLED, "the watcher went away");
}

grpc::Status JobServiceImpl::CancelJob(grpc::ServerContext* context,
                                       const v1::CancelJobRequest* request, v1::Job* response) {
  auto caller = Authenticate(c_, *context, Access::kJobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  auto job = c_.lab.Cancel(*caller, request->job_id());
  if (!job.ok()) return ToGrpcStatus(job.status());
  Audit(*caller, "cancel", request->job_id());
  *response = *std::move(job);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::ListJobs(grpc::ServerContext* context,
                                      const v1::ListJobsRequest* request,
                                      v1::ListJobsResponse* response) {
  auto caller = Authenticate(c_, *context, Access::kJobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  auto jobs = c_.lab.ListJobs(*caller, *request);
  if (!jobs.ok()) return ToGrpcStatus(jobs.status());
  *response = *std::move(jobs);
  return grpc::Status::OK;
}

// ---------------------------------------------------------------------------------------------
// ArtifactService.

grpc::Status ArtifactServiceImpl::FindMissing(grpc::ServerContext* context,
                                              const v1::FindMissingRequest* request,
                                              v1::FindMissingResponse* response) {
  auto caller = Authenticate(c_, *context, Access::kBlobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  for (const auto& digest : request->digests()) {
    if (!api::IsValidSha256Hex(digest.sha256())) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("'", digest.sha256(), "' is not a SHA-256 digest"));
    }
    // A client is told "missing" for another tenant's blob and proves it holds the bytes by
    // uploading them; an agent likewise for a blob no agent uploaded (its results' blobs are
    // granted to the job's tenant only when an agent held their bytes).
    absl::StatusOr<bool> visible = caller->is_agent()
                                       ? AgentUploaded(c_.store, digest.sha256())
                                       : TenantMayUse(c_.store, *caller, digest.sha256());
    if (!visible.ok()) return ToGrpcStatus(visible.status());
    if (!*visible || !c_.blobs.Has(digest)) {
      *response->add_missing() = digest;
    } else {
      c_.blobs.Touch(digest);  // the caller counts on it staying for its submit
    }
  }
  return grpc::Status::OK;
}

grpc::Status ArtifactServiceImpl::Upload(grpc::ServerContext* context,
                                         grpc::ServerReader<v1::UploadChunk>* reader,
                                         v1::UploadResponse* response) {
  auto caller = Authenticate(c_, *context, Access::kBlobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  v1::UploadChunk chunk;
  if (!reader->Read(&chunk) || !chunk.has_digest()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "upload: the first chunk must carry the blob's digest");
  }
  const v1::Digest digest = chunk.digest();
  if (digest.size_bytes() > c_.config.max_blob_bytes) {
    return grpc::Status(
        grpc::StatusCode::RESOURCE_EXHAUSTED,
        absl::StrCat("upload: ", digest.size_bytes(), " bytes is above the server's limit of ",
                     c_.config.max_blob_bytes, " bytes per blob"));
  }
  *response->mutable_digest() = digest;
  absl::StatusOr<bool> owned = caller->is_agent()
                                   ? AgentUploaded(c_.store, digest.sha256())
                                   : TenantMayUse(c_.store, *caller, digest.sha256());
  if (!owned.ok()) return ToGrpcStatus(owned.status());
  const bool stored = c_.blobs.Has(digest);
  if (stored && *owned) {
    c_.blobs.Touch(digest);
    response->set_already_present(true);
    return grpc::Status::OK;
  }
  // Stored for another tenant: the bytes are checked against the digest and not kept twice.
  auto writer = stored ? absl::StatusOr<std::unique_ptr<BlobWriter>>(MakePossessionCheck(digest))
                       : c_.blobs.StartWrite(digest);
  if (!writer.ok()) return ToGrpcStatus(writer.status());
  absl::Status received = Receive(*reader, chunk, **writer, c_.metrics);
  if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "upload cancelled");
  if (!received.ok()) return ToGrpcStatus(received);
  if (stored) c_.blobs.Touch(digest);
  // Agents' uploads become the job tenant's when the agent reports its result (an admin may
  // run an agent too; it may grant anything anyway).
  const std::string grantee = caller->role == Role::kClient ? caller->tenant : kAgentUploads;
  if (absl::Status ok = c_.store.GrantBlob(grantee, digest.sha256()); !ok.ok()) {
    return ToGrpcStatus(ok);
  }
  c_.metrics.BlobStoreBytes(static_cast<double>(c_.blobs.TotalBytes()));
  return grpc::Status::OK;
}

grpc::Status ArtifactServiceImpl::Download(grpc::ServerContext* context,
                                           const v1::DownloadRequest* request,
                                           grpc::ServerWriter<v1::DownloadChunk>* writer) {
  auto caller = Authenticate(c_, *context, Access::kBlobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  const std::string& sha256 = request->digest().sha256();
  if (absl::Status ok = CheckDigest(request->digest()); !ok.ok()) return ToGrpcStatus(ok);
  absl::StatusOr<bool> readable =
      caller->is_agent() ? c_.lab.AgentMayRead(sha256) : TenantMayUse(c_.store, *caller, sha256);
  if (!readable.ok()) return ToGrpcStatus(readable.status());
  if (!*readable) {
    // Word for word what a missing blob gets.
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("blob ", sha256, " is not in the store"));
  }
  auto path = c_.blobs.PathOf(request->digest());
  if (!path.ok()) return ToGrpcStatus(path.status());
  std::ifstream in(*path, std::ios::binary | std::ios::ate);
  if (!in) return grpc::Status(grpc::StatusCode::INTERNAL, "the blob cannot be read");
  int64_t total = in.tellg();
  in.seekg(0);
  std::string buffer(kDownloadChunkBytes, '\0');
  bool first = true;
  do {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    v1::DownloadChunk chunk;
    chunk.set_data(buffer.data(), static_cast<size_t>(in.gcount()));
    if (first) chunk.set_total_bytes(total);
    first = false;
    if (!writer->Write(chunk))
      return grpc::Status(grpc::StatusCode::CANCELLED, "download cancelled");
  } while (in);
  return grpc::Status::OK;
}

// ---------------------------------------------------------------------------------------------
// BoardService.

grpc::Status BoardServiceImpl::ListBoards(grpc::ServerContext* context,
                                          const v1::ListBoardsRequest* request,
                                          v1::ListBoardsResponse* response) {
  auto caller = Authenticate(c_, *context, Access::kJobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  for (auto& board : c_.lab.ListBoards(request->board_type())) *response->add_boards() = board;
  for (const auto& [type, n] : c_.lab.QueuedJobs(request->board_type())) {
    (*response->mutable_queued_jobs())[type] = n;
  }
  return grpc::Status::OK;
}

grpc::Status BoardServiceImpl::GetBoard(grpc::ServerContext* context,
                                        const v1::GetBoardRequest* request, v1::Board* response) {
  auto caller = Authenticate(c_, *context, Access::kJobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  auto board = c_.lab.GetBoard(request->board_id());
  if (!board.ok()) return ToGrpcStatus(board.status());
  *response = *std::move(board);
  return grpc::Status::OK;
}

grpc::Status BoardServiceImpl::Reserve(grpc::ServerContext* context,
                                       const v1::ReserveRequest* request,
                                       v1::ReserveResponse* response) {
  auto caller = Authenticate(c_, *context, Access::kJobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  auto reserved = c_.lab.Reserve(*caller, *request);
  if (!reserved.ok()) return ToGrpcStatus(reserved.status());
  Audit(*caller, request->lease_id().empty() ? "reserve" : "renew", request->board_id(),
        absl::StrCat("lease ", reserved->lease_id(), " until ",
                     reserved->board().lease_expires_ms(), " ms"));
  *response = *std::move(reserved);
  return grpc::Status::OK;
}

grpc::Status BoardServiceImpl::Release(grpc::ServerContext* context,
                                       const v1::ReleaseRequest* request, v1::Board* response) {
  auto caller = Authenticate(c_, *context, Access::kJobs);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  auto board = c_.lab.Release(*caller, *request);
  if (!board.ok()) return ToGrpcStatus(board.status());
  Audit(*caller, "release", request->board_id(), absl::StrCat("lease ", request->lease_id()));
  *response = *std::move(board);
  return grpc::Status::OK;
}

grpc::Status BoardServiceImpl::SetMaintenance(grpc::ServerContext* context,
                                              const v1::SetMaintenanceRequest* request,
                                              v1::Board* response) {
  auto caller = Authenticate(c_, *context, Access::kAdmin);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  auto board = c_.lab.SetMaintenance(*request);
  if (!board.ok()) return ToGrpcStatus(board.status());
  Audit(*caller, request->on() ? "maintenance on" : "maintenance off", request->board_id(),
        request->reason());
  *response = *std::move(board);
  return grpc::Status::OK;
}

// ---------------------------------------------------------------------------------------------
// AgentService.

grpc::Status AgentServiceImpl::Connect(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream) {
  auto caller = Authenticate(c_, *context, Access::kAgent);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  v1::AgentMessage message;
  if (!stream->Read(&message) || !message.has_hello()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "an agent stream must start with a Hello message");
  }
  auto session = std::make_shared<StreamSession>(context, stream);
  session->Start();
  auto session_id = c_.lab.AgentHello(message.hello(), session);
  if (!session_id.ok()) {
    session->Stop();
    session->Join();
    return ToGrpcStatus(session_id.status());
  }
  while (stream->Read(&message)) c_.lab.AgentMessage(*session_id, message);
  c_.lab.AgentGone(*session_id);
  session->Stop();
  session->Join();
  return grpc::Status::OK;
}

}  // namespace boardlab::server
