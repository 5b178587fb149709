#include "tests/cli/fake_boardlab_server.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "cli/app.h"
#include "proto/support/digest.h"
#include "proto/support/grpc_util.h"

namespace boardlab::cli::testing {
namespace {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

v1::JobEvent StateEvent(v1::JobState state) {
  v1::JobEvent event;
  event.set_state(state);
  return event;
}

}  // namespace

// --- FakeArtifactService ---

void FakeArtifactService::RecordToken(const grpc::ServerContext& context) {
  tokens_.push_back(api::BearerToken(context));
}

grpc::Status FakeArtifactService::FindMissing(grpc::ServerContext* context,
                                              const v1::FindMissingRequest* request,
                                              v1::FindMissingResponse* response) {
  std::lock_guard lock(mutex_);
  RecordToken(*context);
  std::vector<std::string> asked;
  for (const v1::Digest& digest : request->digests()) {
    asked.push_back(digest.sha256());
    if (!blobs_.contains(digest.sha256())) *response->add_missing() = digest;
  }
  find_missing_calls_.push_back(asked);
  return grpc::Status::OK;
}

grpc::Status FakeArtifactService::Upload(grpc::ServerContext* context,
                                         grpc::ServerReader<v1::UploadChunk>* reader,
                                         v1::UploadResponse* response) {
  v1::UploadChunk chunk;
  v1::Digest digest;
  std::string bytes;
  while (reader->Read(&chunk)) {
    if (chunk.has_digest()) digest = chunk.digest();
    bytes += chunk.data();
  }
  if (api::Sha256Hex(bytes) != digest.sha256() ||
      static_cast<int64_t>(bytes.size()) != digest.size_bytes()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bytes do not match the digest");
  }
  std::lock_guard lock(mutex_);
  RecordToken(*context);
  response->set_already_present(blobs_.contains(digest.sha256()));
  blobs_[digest.sha256()] = bytes;
  uploaded_.push_back(digest.sha256());
  *response->mutable_digest() = digest;
  return grpc::Status::OK;
}

grpc::Status FakeArtifactService::Download(grpc::ServerContext* context,
                                           const v1::DownloadRequest* request,
                                           grpc::ServerWriter<v1::DownloadChunk>* writer) {
  std::string bytes;
  {
    std::lock_guard lock(mutex_);
    RecordToken(*context);
    const auto it = blobs_.find(request->digest().sha256());
    if (it == blobs_.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such blob");
    bytes = it->second;
  }
  v1::DownloadChunk chunk;
  chunk.set_total_bytes(static_cast<int64_t>(bytes.size()));
  chunk.set_data(bytes);
  writer->Write(chunk);
  return grpc::Status::OK;
}

v1::Digest FakeArtifactService::Preload(const std::string& bytes) {
  std::lock_guard lock(mutex_);
  blobs_[api::Sha256Hex(bytes)] = bytes;
  return api::DigestOf(bytes);
}

std::vector<std::string> FakeArtifactService::uploaded() const {
  std::lock_guard lock(mutex_);
  return uploaded_;
}

std::vector<std::vector<std::string>> FakeArtifactService::find_missing_calls() const {
  std::lock_guard lock(mutex_);
  return find_missing_calls_;
}

std::vector<std::string> FakeArtifactService::tokens() const {
  std::lock_guard lock(mutex_);
  return tokens_;
}

// --- FakeJobService ---

std::vector<v1::JobEvent> FakeJobService::ScriptEvents(const v1::Job& job) const {
  std::vector<v1::JobEvent> events = {StateEvent(v1::JOB_STATE_COMPILING),
                                      StateEvent(v1::JOB_STATE_QUEUED),
                                      StateEvent(v1::JOB_STATE_ASSIGNED),
                                      StateEvent(v1::JOB_STATE_LOADING),
                                      v1::JobEvent(),
                                      StateEvent(v1::JOB_STATE_RUNNING),
                                      StateEvent(v1::JOB_STATE_COLLECTING),
                                      v1::JobEvent()};
  events[4].set_log("board sim-0: artifact loaded");
  *events[7].mutable_finished() = job;
  const int64_t start = NowMs();
  for (size_t i = 0; i < events.size(); ++i) {
    events[i].set_job_id(job.id());
    events[i].set_seq(static_cast<int64_t>(i) + 1);
    events[i].set_time_ms(start + 250 * static_cast<int64_t>(i));
    if (i >= 2) {
      events[i].set_board_id("sim-0");
      events[i].set_attempt(1);
    }
  }
  return events;
}

grpc::Status FakeJobService::SubmitJob(grpc::ServerContext*, const v1::SubmitJobRequest* request,
                                       v1::SubmitJobResponse* response) {
  std::lock_guard lock(mutex_);
  submits_.push_back(*request);
  if (failing_submits_ > 0) {
    --failing_submits_;
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the fake is restarting");
  }
  const auto known = job_by_request_.find(request->request_id());
  if (!request->request_id().empty() && known != job_by_request_.end()) {
    response->set_deduplicated(true);
    *response->mutable_job() = jobs_[known->second];
    return grpc::Status::OK;
  }
  v1::Job job = outcome_;
  job.set_id("job-" + std::to_string(jobs_.size() + 1));
  job.set_request_id(request->request_id());
  *job.mutable_spec() = request->spec();
  job.set_state(v1::JOB_STATE_DONE);
  job.set_submit_time_ms(NowMs());
  job.set_end_time_ms(job.submit_time_ms() + 1750);
  events_[job.id()] = ScriptEvents(job);
  jobs_[job.id()] = job;
  job_by_request_[request->request_id()] = job.id();
  *response->mutable_job() = job;
  response->mutable_job()->set_state(v1::JOB_STATE_COMPILING);
  return grpc::Status::OK;
}

grpc::Status FakeJobService::GetJob(grpc::ServerContext*, const v1::GetJobRequest* request,
                                    v1::Job* response) {
  std::lock_guard lock(mutex_);
  const auto it = jobs_.find(request->job_id());
  if (it == jobs_.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such job");
  *response = it->second;
  return grpc::Status::OK;
}

grpc::Status FakeJobService::WatchJob(grpc::ServerContext*, const v1::WatchJobRequest* request,
                                      grpc::ServerWriter<v1::JobEvent>* writer) {
  std::vector<v1::JobEvent> events;
  int64_t drop_after = -1;
  {
    std::lock_guard lock(mutex_);
    watch_after_seqs_.push_back(request->after_seq());
    if (fail_all_watches_) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the fake is down");
    }
    const auto it = events_.find(request->job_id());
    if (it == events_.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such job");
    events = it->second;
    std::swap(drop_after, drop_after_seq_);
  }
  for (const v1::JobEvent& event : events) {
    if (event.seq() <= request->after_seq()) continue;
    writer->Write(event);
    if (event.seq() == drop_after) {
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the fake dropped the stream");
    }
  }
  return grpc::Status::OK;
}

grpc::Status FakeJobService::CancelJob(grpc::ServerContext*, const v1::CancelJobRequest* request,
                                       v1::Job* response) {
  std::lock_guard lock(mutex_);
  const auto it = jobs_.find(request->job_id());
  if (it == jobs_.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such job");
  it->second.set_result(v1::JOB_RESULT_CANCELLED);
  *response = it->second;
  return grpc::Status::OK;
}

grpc::Status FakeJobService::ListJobs(grpc::ServerContext*, const v1::ListJobsRequest* request,
                                      v1::ListJobsResponse* response) {
  std::lock_guard lock(mutex_);
  for (auto it = jobs_.rbegin(); it != jobs_.rend(); ++it) {
    if (response->jobs_size() >= request->page_size()) break;
    *response->add_jobs() = it->second;
  }
  return grpc::Status::OK;
}

void FakeJobService::FailSubmits(int count) {
  std::lock_guard lock(mutex_);
  failing_submits_ = count;
}

void FakeJobService::SetOutcome(const v1::Job& outcome) {
  std::lock_guard lock(mutex_);
  outcome_ = outcome;
}

void FakeJobService::DropFirstWatchAfter(int64_t seq) {
  std::lock_guard lock(mutex_);
  drop_after_seq_ = seq;
}

void FakeJobService::FailAllWatches() {
  std::lock_guard lock(mutex_);
  fail_all_watches_ = true;
}

std::vector<v1::SubmitJobRequest> FakeJobService::submits() const {
  std::lock_guard lock(mutex_);
  return submits_;
}

std::vector<int64_t> FakeJobService::watch_after_seqs() const {
  std::lock_guard lock(mutex_);
  return watch_after_seqs_;
}

int FakeJobService::job_count() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(jobs_.size());
}

// --- FakeBoardlabServer ---

FakeBoardlabServer::FakeBoardlabServer() {
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&jobs_);
  builder.RegisterService(&artifacts_);
  server_ = builder.BuildAndStart();
  address_ = "127.0.0.1:" + std::to_string(port);
}

FakeBoardlabServer::~FakeBoardlabServer() { server_->Shutdown(); }

std::string WriteTestFile(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

int RunBoardlabForTest(const std::vector<std::string>& args, const std::string& server) {
  std::vector<std::string> words = {"boardlab", "--server", server};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const std::string& word : words) argv.push_back(word.c_str());
  return RunBoardlab(static_cast<int>(argv.size()), argv.data());
}

CapturedRun RunCaptured(const std::vector<std::string>& args, const std::string& server) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  CapturedRun run;
  run.code = RunBoardlabForTest(args, server);
  run.out = ::testing::internal::GetCapturedStdout();
  run.err = ::testing::internal::GetCapturedStderr();
  return run;
}

}  // namespace boardlab::cli::testing
