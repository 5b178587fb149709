#pragma once

// The gRPC face of the Lab (STYLE.md rule 20): each handler authenticates the caller, converts the
// request, calls the Lab or the blob store, and maps the status back. Nothing here decides
// anything about jobs or boards.

#include <grpcpp/grpcpp.h>

#include "boardlab/v1/agent_service.grpc.pb.h"
#include "boardlab/v1/artifact_service.grpc.pb.h"
#include "boardlab/v1/board_service.grpc.pb.h"
#include "boardlab/v1/job_service.grpc.pb.h"
#include "server/auth.h"
#include "server/blob_store.h"
#include "server/lab.h"
#include "server/metrics.h"

namespace boardlab::server {

/// What every handler needs; all must outlive the services.
struct ServiceContext {
  Lab& lab;
  Store& store;  // blob grants (tenant scoping of the artifact store)
  BlobStore& blobs;
  const Authenticator& auth;
  Metrics& metrics;
  const ServerConfig& config;
};

class JobServiceImpl final : public v1::JobService::Service {
 public:
  explicit JobServiceImpl(ServiceContext context) : c_(context) {}
  grpc::Status SubmitJob(grpc::ServerContext* context, const v1::SubmitJobRequest* request,
                         v1::SubmitJobResponse* response) override;
  grpc::Status GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                      v1::Job* response) override;
  grpc::Status WatchJob(grpc::ServerContext* context, const v1::WatchJobRequest* request,
                        grpc::ServerWriter<v1::JobEvent>* writer) override;
  grpc::Status CancelJob(grpc::ServerContext* context, const v1::CancelJobRequest* request,
                         v1::Job* response) override;
  grpc::Status ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override;

 private:
  ServiceContext c_;
};

class ArtifactServiceImpl final : public v1::ArtifactService::Service {
 public:
  explicit ArtifactServiceImpl(ServiceContext context) : c_(context) {}
  grpc::Status FindMissing(grpc::ServerContext* context, const v1::FindMissingRequest* request,
                           v1::FindMissingResponse* response) override;
  grpc::Status Upload(grpc::ServerContext* context, grpc::ServerReader<v1::UploadChunk>* reader,
                      v1::UploadResponse* response) override;
  grpc::Status Download(grpc::ServerContext* context, const v1::DownloadRequest* request,
                        grpc::ServerWriter<v1::DownloadChunk>* writer) override;

 private:
  ServiceContext c_;
};

class BoardServiceImpl final : public v1::BoardService::Service {
 public:
  explicit BoardServiceImpl(ServiceContext context) : c_(context) {}
  grpc::Status ListBoards(grpc::ServerContext* context, const v1::ListBoardsRequest* request,
                          v1::ListBoardsResponse* response) override;
  grpc::Status GetBoard(grpc::ServerContext* context, const v1::GetBoardRequest* request,
                        v1::Board* response) override;
  grpc::Status Reserve(grpc::ServerContext* context, const v1::ReserveRequest* request,
                       v1::ReserveResponse* response) override;
  grpc::Status Release(grpc::ServerContext* context, const v1::ReleaseRequest* request,
                       v1::Board* response) override;
  grpc::Status SetMaintenance(grpc::ServerContext* context,
                              const v1::SetMaintenanceRequest* request,
                              v1::Board* response) override;

 private:
  ServiceContext c_;
};

class AgentServiceImpl final : public v1::AgentService::Service {
 public:
  explicit AgentServiceImpl(ServiceContext context) : c_(context) {}
  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream) override;

 private:
  ServiceContext c_;
};

}  // namespace boardlab::server
