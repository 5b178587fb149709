#pragma once

// A Lab over a real SQLite store, blob store and compile workers in a temporary directory, with
// fake agent sessions that record what the server sends them. Tests drive agents by hand: they
// answer assignments with stage events and results, or stay silent.

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/blob_access.h"
#include "server/compile_service.h"
#include "server/file_blob_store.h"
#include "server/lab.h"
#include "server/metrics.h"
#include "server/sqlite_store.h"
#include "tests/support/test_models.h"

namespace boardlab::server::testing {

// The sum of a counter's series, or of a histogram's sample counts, in `metrics`.
inline double Total(const Metrics& metrics, const std::string& name) {
  double total = 0;
  for (const prometheus::MetricFamily& family : metrics.registry()->Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      total += family.type == prometheus::MetricType::Histogram
                   ? static_cast<double>(metric.histogram.sample_count)
                   : metric.counter.value;
    }
  }
  return total;
}

class FakeSession : public AgentSession {
 public:
  void Send(const v1::ServerMessage& message) override {
    std::lock_guard lock(mutex_);
    sent_.push_back(message);
    changed_.notify_all();
  }
  void Close() override {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  bool closed() {
    std::lock_guard lock(mutex_);
    return closed_;
  }
  std::vector<v1::ServerMessage> sent() {
    std::lock_guard lock(mutex_);
    return sent_;
  }
  /// The assignments received so far.
  std::vector<v1::Assignment> Assignments() {
    std::vector<v1::Assignment> out;
    for (const auto& m : sent()) {
      if (m.has_assign()) out.push_back(m.assign());
    }
    return out;
  }
  /// Waits up to 10 s until `count` assignments have arrived; returns the last.
  std::optional<v1::Assignment> WaitAssignment(size_t count = 1) {
    std::unique_lock lock(mutex_);
    auto have = [&] {
      size_t n = 0;
      for (const auto& m : sent_) n += m.has_assign();
      return n >= count;
    };
    if (!changed_.wait_for(lock, std::chrono::seconds(10), have)) return std::nullopt;
    std::optional<v1::Assignment> last;
    for (const auto& m : sent_) {
      if (m.has_assign()) last = m.assign();
    }
    return last;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<v1::ServerMessage> sent_;
  bool closed_ = false;
};

class LabTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("lab_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    config_.heartbeat_interval_ms = 1000;
    config_.compile_workers = 1;
  }

  void TearDown() override {
    StopLab();
    std::filesystem::remove_all(dir_);
  }

  void StartLab() {
    auto store = SqliteStore::Open((dir_ / "boardlab.db").string());
    ASSERT_TRUE(store.ok()) << store.status();
    StartLabOver(*std::move(store));
  }

  /// The Lab over `store` (a SQLite one, or another replica's PostgreSQL store), with its blobs
  /// and compile workers in dir_.
  void StartLabOver(std::unique_ptr<Store> store) {
    store_ = std::move(store);
    auto blobs = FileBlobStore::Open((dir_ / "blobs").string());
    ASSERT_TRUE(blobs.ok()) << blobs.status();
    blobs_ = *std::move(blobs);
    metrics_ = std::make_unique<Metrics>();
    compiles_ =
        std::make_unique<CompileService>(config_.compile_workers, *store_, *blobs_, *metrics_);
    lab_ = std::make_unique<Lab>(config_, *store_, *blobs_, *compiles_, *metrics_);
    ASSERT_TRUE(lab_->Recover().ok());
    lab_->RequestRecoveredCompiles();
  }

  void StopLab() {
    if (compiles_) compiles_->Stop();
    lab_.reset();
    compiles_.reset();
    metrics_.reset();
    blobs_.reset();
    store_.reset();
  }

  void RestartLab() {
    StopLab();
    StartLab();
  }

  /// Connects an agent with boards `<agent>-b<i>` of `type`; returns its session id.
  std::string Connect(const std::string& agent, int boards, std::shared_ptr<FakeSession>& session,
                      const std::string& type = "imxrt700-sim",
                      std::vector<v1::InFlightJob> in_flight = {}) {
    v1::Hello hello;
    hello.set_agent_id(agent);
    for (int i = 0; i < boards; ++i) {
      auto* board = hello.add_boards();
      board->set_id(agent + "-b" + std::to_string(i));
      board->set_type(type);
    }
    for (auto& job : in_flight) *hello.add_in_flight() = job;
    session = std::make_shared<FakeSession>();
    auto id = lab_->AgentHello(hello, session);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : "";
  }

  /// Stores a blob as if each of the tests' client tenants had uploaded it (docs/security.md:
  /// a client may reference only blobs its tenant holds).
  v1::Digest PutBlob(const std::vector<uint8_t>& bytes) {
    auto digest =
        blobs_->Put(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    EXPECT_TRUE(digest.ok());
    for (const char* tenant : {"default", "t", "team", "other", "alpha", "beta", "x"}) {
      EXPECT_TRUE(store_->GrantBlob(tenant, digest->sha256()).ok());
    }
    return *digest;
  }

  /// The health check of quarantined boards: `artifact` (any compiled one) with a made-up input
  /// and expected output.
  void SetGoldenCheck(const v1::Digest& artifact) {
    CompileRecord golden;
    golden.artifact = artifact;
    lab_->SetHealthCheck(golden, PutBlob(std::vector<uint8_t>(16, 1)),
                         PutBlob(std::vector<uint8_t>(10, 2)));
  }

  /// A 16-input, 10-output fully connected model (compiles in milliseconds).
  /// A result's blob as an agent uploads it (ArtifactService.Upload): stored, and recorded as an
  /// agent's upload, which a result needs for its tenant to be granted the blob.
  v1::Digest PutAsAgent(const std::string& bytes) {
    absl::StatusOr<v1::Digest> digest = blobs_->Put(bytes);
    EXPECT_TRUE(digest.ok()) << digest.status();
    if (!digest.ok()) return v1::Digest();
    EXPECT_TRUE(store_->GrantBlob(kAgentUploads, digest->sha256()).ok());
    return *digest;
  }
  v1::Digest PutModel() { return PutBlob(boardlab::testing::SingleFullyConnected()); }

  v1::SubmitJobRequest Request(const v1::Digest& model, int priority = 0) {
    v1::SubmitJobRequest request;
    *request.mutable_spec()->mutable_model() = model;
    request.mutable_spec()->set_priority(priority);
    return request;
  }

  v1::Job Submit(const v1::SubmitJobRequest& request, const std::string& tenant = "default") {
    auto response = lab_->Submit(Caller{tenant, Role::kAdmin}, request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->job() : v1::Job();
  }

  v1::Job Get(const std::string& id) {
    auto job = lab_->GetJob(Caller{"admin", Role::kAdmin}, id);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : v1::Job();
  }

  /// Polls until the job is in `state` (10 s at most).
  v1::Job WaitState(const std::string& id, v1::JobState state) {
    v1::Job job;
    for (int i = 0; i < 1000; ++i) {
      job = Get(id);
      if (job.state() == state) return job;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "job " << id << " never reached " << v1::JobState_Name(state) << "; it is "
                  << v1::JobState_Name(job.state());
    return job;
  }

  /// Polls until the job has left COMPILING.
  void WaitCompiled(const std::string& id) {
    for (int i = 0; i < 1000 && Get(id).state() == v1::JOB_STATE_COMPILING; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  void Send(const std::string& session, const v1::AgentMessage& message) {
    lab_->AgentMessage(session, message);
  }

  void Stage(const std::string& session, const v1::Assignment& a, v1::JobState stage) {
    v1::AgentMessage m;
    m.mutable_stage()->set_job_id(a.job_id());
    m.mutable_stage()->set_attempt(a.attempt());
    m.mutable_stage()->set_stage(stage);
    Send(session, m);
  }

  void Result(const std::string& session, const v1::Assignment& a, v1::RunOutcome outcome,
              const std::string& message = "", const std::string& log_text = "",
              const std::string& inference_clock = "") {
    v1::AgentMessage m;
    auto* r = m.mutable_result();
    r->set_job_id(a.job_id());
    r->set_attempt(a.attempt());
    r->set_board_id(a.board_id());
    r->set_outcome(outcome);
    r->set_message(message);
    r->set_inference_us(12.5);
    r->set_inference_clock(inference_clock);
    r->set_log_text(log_text);
    Send(session, m);
  }

  void Heartbeat(const std::string& session) {
    v1::AgentMessage m;
    m.mutable_heartbeat()->set_time_ms(1);
    Send(session, m);
  }

  std::filesystem::path dir_;
  ServerConfig config_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<FileBlobStore> blobs_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<CompileService> compiles_;
  std::unique_ptr<Lab> lab_;
};

}  // namespace boardlab::server::testing
