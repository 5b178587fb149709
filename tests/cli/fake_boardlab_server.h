#pragma once

// An in-process fake of the boardlab server for client tests: JobService and ArtifactService
// on 127.0.0.1:<free port>, with knobs for the failures the client must survive (UNAVAILABLE
// submits, a watch stream dropped mid-job) and records of what the client sent.
//
// Usage:
//   FakeBoardlabServer server;
//   server.jobs().SetOutcome(FinishedJobFor(...));
//   int code = RunBoardlabForTest({"submit", "m.tflite", "--wait"}, server.address());

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "boardlab/v1/artifact_service.grpc.pb.h"
#include "boardlab/v1/job_service.grpc.pb.h"
#include "gtest/gtest.h"

namespace boardlab::cli::testing {

class FakeArtifactService : public v1::ArtifactService::Service {
 public:
  grpc::Status FindMissing(grpc::ServerContext* context, const v1::FindMissingRequest* request,
                           v1::FindMissingResponse* response) override;
  grpc::Status Upload(grpc::ServerContext* context, grpc::ServerReader<v1::UploadChunk>* reader,
                      v1::UploadResponse* response) override;
  grpc::Status Download(grpc::ServerContext* context, const v1::DownloadRequest* request,
                        grpc::ServerWriter<v1::DownloadChunk>* writer) override;

  /// Stores `bytes` as if uploaded earlier; returns their digest.
  v1::Digest Preload(const std::string& bytes);
  /// SHA-256s of the blobs uploaded through Upload, in order.
  std::vector<std::string> uploaded() const;
  /// The digests each FindMissing call asked about.
  std::vector<std::vector<std::string>> find_missing_calls() const;
  /// The bearer tokens ("authorization" metadata) of all calls.
  std::vector<std::string> tokens() const;

 private:
  void RecordToken(const grpc::ServerContext& context);

  mutable std::mutex mutex_;
  std::map<std::string, std::string> blobs_;  // sha256 -> bytes
  std::vector<std::string> uploaded_;
  std::vector<std::vector<std::string>> find_missing_calls_;
  std::vector<std::string> tokens_;
};

class FakeJobService : public v1::JobService::Service {
 public:
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

  /// The next `count` SubmitJob calls fail with UNAVAILABLE (after recording the request).
  void FailSubmits(int count);
  /// How submitted jobs end: result, message, files, checks... of the `finished` event's job.
  /// Its id, spec and state are filled in per job.
  void SetOutcome(const v1::Job& outcome);
  /// The first WatchJob stream breaks with UNAVAILABLE after the event with this seq.
  void DropFirstWatchAfter(int64_t seq);
  /// Every WatchJob call fails with UNAVAILABLE.
  void FailAllWatches();

  std::vector<v1::SubmitJobRequest> submits() const;
  std::vector<int64_t> watch_after_seqs() const;
  int job_count() const;

 private:
  // The events of a job that runs to the outcome: states, a log line, then `finished`.
  std::vector<v1::JobEvent> ScriptEvents(const v1::Job& job) const;

  mutable std::mutex mutex_;
  int failing_submits_ = 0;
  int64_t drop_after_seq_ = -1;
  bool fail_all_watches_ = false;
  v1::Job outcome_;
  std::map<std::string, std::string> job_by_request_;  // request id -> job id
  std::map<std::string, v1::Job> jobs_;
  std::map<std::string, std::vector<v1::JobEvent>> events_;
  std::vector<v1::SubmitJobRequest> submits_;
  std::vector<int64_t> watch_after_seqs_;
};

/// Both services on 127.0.0.1 with a port picked by the OS; stopped on destruction.
class FakeBoardlabServer {
 public:
  FakeBoardlabServer();
  ~FakeBoardlabServer();

  std::string address() const { return address_; }
  FakeJobService& jobs() { return jobs_; }
  FakeArtifactService& artifacts() { return artifacts_; }

 private:
  FakeJobService jobs_;
  FakeArtifactService artifacts_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

/// Writes `bytes` to a file `name` under the test's temporary folder; returns its path.
std::string WriteTestFile(const std::string& name, const std::string& bytes);

/// Runs `boardlab --server <server> <args...>` in-process; returns the exit code.
int RunBoardlabForTest(const std::vector<std::string>& args, const std::string& server);

/// What one in-process run left: the exit code and what it printed.
struct CapturedRun {
  int code = -1;
  std::string out;
  std::string err;
};

/// RunBoardlabForTest with stdout and stderr captured.
CapturedRun RunCaptured(const std::vector<std::string>& args, const std::string& server);

/// A test of the CLI against a fake server.
class CliTest : public ::testing::Test {
 protected:
  /// Runs the CLI against `server_`; returns the exit code, stdout in `out_`, stderr in `err_`.
  int Run(const std::vector<std::string>& args) {
    CapturedRun run = RunCaptured(args, server_.address());
    out_ = run.out;
    err_ = run.err;
    return run.code;
  }

  FakeBoardlabServer server_;
  std::string out_, err_;
};

}  // namespace boardlab::cli::testing
