// agent/agent.h end to end: the real Agent (Asio loop, gRPC stream, artifact cache, job runner,
// boardlab-run or a fake runner) against an in-process fake server on a loopback port that
// implements AgentService and ArtifactService.

#include "agent/agent.h"

#include <grpcpp/grpcpp.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <thread>

#include "agent/process_board_executor.h"
#include "agent/retrying_blob_store.h"
#include "agent/serial_board_executor.h"
#include "boardlab/v1/artifact_service.grpc.pb.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/support/grpc_util.h"
#include "tests/agent/agent_test_support.h"
#include "tests/agent/hello_board.h"
#include "tests/support/test_paths.h"

namespace boardlab::agent {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
constexpr char kToken[] = "secret";

// AgentService + ArtifactService in memory. Every agent message is recorded; Welcome is sent
// on Hello; results are acknowledged when auto_ack is on.
class FakeServer final : public v1::AgentService::Service, public v1::ArtifactService::Service {
 public:
  explicit FakeServer(int port = 0) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(static_cast<v1::AgentService::Service*>(this));
    builder.RegisterService(static_cast<v1::ArtifactService::Service*>(this));
    server_ = builder.BuildAndStart();
  }
  ~FakeServer() override { Stop(); }
  void Stop() {
    if (server_ == nullptr) return;
    server_->Shutdown(std::chrono::system_clock::now() + milliseconds(100));
    server_->Wait();
    server_.reset();
  }
  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream) override {
    if (api::BearerToken(*context) != kToken) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "bad token");
    }
    v1::AgentMessage message;
    while (stream->Read(&message)) {
      std::unique_lock<std::mutex> lock(mutex_);
      messages_.push_back(message);
      if (message.has_hello()) {
        stream_ = stream;
        v1::ServerMessage welcome;
        welcome.mutable_welcome()->set_session_id("s");
        welcome.mutable_welcome()->set_heartbeat_interval_ms(100);
        welcome.mutable_welcome()->set_inline_logs(inline_logs_);
        welcome.mutable_welcome()->set_stage_lines(stage_lines_);
        stream->Write(welcome);
      }
      if (message.has_result() && auto_ack_) {
        v1::ServerMessage ack;
        ack.mutable_ack()->set_job_id(message.result().job_id());
        ack.mutable_ack()->set_attempt(message.result().attempt());
        stream->Write(ack);
      }
      changed_.notify_all();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (stream_ == stream) stream_ = nullptr;
    return grpc::Status::OK;
  }

  grpc::Status FindMissing(grpc::ServerContext*, const v1::FindMissingRequest* request,
                           v1::FindMissingResponse* response) override {
    for (const v1::Digest& d : request->digests()) {
      if (blobs_.Bytes(d).empty()) *response->add_missing() = d;
    }
    return grpc::Status::OK;
  }
  grpc::Status Upload(grpc::ServerContext*, grpc::ServerReader<v1::UploadChunk>* reader,
                      v1::UploadResponse* response) override {
    v1::UploadChunk chunk;
    std::string bytes;
    while (reader->Read(&chunk)) bytes += chunk.data();
    *response->mutable_digest() = blobs_.Add(bytes);
    return grpc::Status::OK;
  }
  grpc::Status Download(grpc::ServerContext*, const v1::DownloadRequest* request,
                        grpc::ServerWriter<v1::DownloadChunk>* writer) override {
    const std::string bytes = blobs_.Bytes(request->digest());
    if (bytes.empty()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such blob");
    v1::DownloadChunk chunk;
    chunk.set_data(bytes);
    chunk.set_total_bytes(static_cast<int64_t>(bytes.size()));
    writer->Write(chunk);
    return grpc::Status::OK;
  }

  // Pushes a message on the current stream; false when no agent is connected.
  bool Push(const v1::ServerMessage& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    return stream_ != nullptr && stream_->Write(message);
  }

  // Waits until `pred(messages)` holds; false on timeout.
  bool WaitFor(const std::function<bool(const std::vector<v1::AgentMessage>&)>& pred,
               milliseconds timeout = milliseconds(20000)) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return pred(messages_); });
  }
  std::optional<v1::RunResult> WaitForResult(const std::string& job,
                                             milliseconds timeout = milliseconds(20000)) {
    std::optional<v1::RunResult> found;
    WaitFor(
        [&](const std::vector<v1::AgentMessage>& ms) {
          for (const auto& m : ms) {
            if (m.has_result() && m.result().job_id() == job) found = m.result();
          }
          return found.has_value();
        },
        timeout);
    return found;
  }
  std::vector<v1::AgentMessage> messages() {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_;
  }
  void set_auto_ack(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto_ack_ = on;
  }
  // Whether Welcome says the server takes logs inline (set before the agent connects).
  void set_inline_logs(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    inline_logs_ = on;
  }
  // Whether Welcome says the server takes log lines with a stage (set before the agent connects).
  void set_stage_lines(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    stage_lines_ = on;
  }
  testing::FakeBlobStore& blobs() { return blobs_; }

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<v1::AgentMessage> messages_;
  grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream_ = nullptr;
  bool auto_ack_ = true;
  bool inline_logs_ = false;
  bool stage_lines_ = false;
  testing::FakeBlobStore blobs_;
};

class AgentTest : public ::testing::Test {
 protected:
  // Starts an agent with one sim board "t-sim-0" driven by `runner`, on its own thread.
  void StartAgent(const std::string& address, const std::string& runner,
                  const std::string& token = kToken) {
    BoardConfig board;
    board.id = "t-sim-0";
    board.type = "imxrt700-sim";
    board.driver = "sim";
    StartAgentWith(address, board,
                   std::make_unique<ProcessBoardExecutor>(io_, runner, RunnerBoard::kSim), token);
  }

  // Starts an agent on `server` with the real runner and runs one passing job "j1" on it.
  std::optional<v1::RunResult> RunOneJob(FakeServer& server, const std::string& runner) {
    const v1::Digest artifact = server.blobs().Add(testing::ConvPte());
    StartAgent(server.address(), runner);
    if (!server.WaitFor(HasHello) || !server.Push(Assignment("j1", artifact))) return std::nullopt;
    return server.WaitForResult("j1");
  }

  // Starts an agent with `board` driven by `executor`, on its own thread.
  void StartAgentWith(const std::string& address, const BoardConfig& board,
                      BoardExecutorPtr executor, const std::string& token = kToken) {
    channel_ = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    stub_ = v1::AgentService::NewStub(channel_);
    AgentCore::Options core_options;
    core_options.agent_id = "t";
    core_options.hostname = "host";
    core_options.version = "test";
    core_options.boards = {board};
    core_options.journal_path = dir_ / "journal";
    absl::StatusOr<std::unique_ptr<AgentCore>> core = AgentCore::Create(core_options);
    ASSERT_TRUE(core.ok()) << core.status();
    std::map<std::string, BoardExecutorPtr> executors;
    executors[board.id] = std::move(executor);
    Agent::Options options;
    options.token = token;
    options.state_dir = dir_.path().string();
    options.handle_signals = false;
    options.log = [](const std::string& line) { std::cerr << "[agent] " << line << "\n"; };
    RetryPolicy retry;
    retry.initial_delay = milliseconds(50);
    retry.max_delay = milliseconds(500);
    retry.max_attempts = 20;
    agent_ = std::make_unique<Agent>(io_, std::move(*core), std::move(executors),
                                     NewRetryingBlobStore(NewGrpcBlobStore(channel_, token), retry),
                                     *stub_, options);
    agent_->Start();
    io_.restart();  // a second agent of the test runs on the first one's stopped io_context
    thread_ = std::thread([this] { io_.run(); });
  }

  void StopAgent() {
    if (agent_ == nullptr) return;
    agent_->Shutdown();
    thread_.join();
    agent_.reset();
  }

  void TearDown() override { StopAgent(); }

  static v1::ServerMessage Assignment(const std::string& job, const v1::Digest& artifact) {
    v1::ServerMessage m;
    v1::Assignment& a = *m.mutable_assign();
    a.set_job_id(job);
    a.set_attempt(1);
    a.set_board_id("t-sim-0");
    *a.mutable_artifact() = artifact;
    a.add_inputs()->set_random_seed(7);
    a.set_iterations(1);
    a.set_timeout_seconds(30);
    return m;
  }

  static bool IsRunning(const std::vector<v1::AgentMessage>& ms) {
    for (const auto& m : ms) {
      if (m.has_stage() && m.stage().stage() == v1::JOB_STATE_RUNNING) return true;
    }
    return false;
  }

  static bool HasHello(const std::vector<v1::AgentMessage>& ms) {
    for (const auto& m : ms) {
      if (m.has_hello()) return true;
    }
    return false;
  }

  testing::ScratchDir dir_;
  boost::asio::io_context io_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::AgentService::Stub> stub_;
  std::unique_ptr<Agent> agent_;
  std::thread thread_;
};

TEST_F(AgentTest, RunsAJobWithTheRealRunner) {
  const std::string runner = boardlab::testing::RunBinary();
  if (runner.empty() || !std::filesystem::exists(runner)) GTEST_SKIP() << "no boardlab-run";
  FakeServer server;
  const v1::Digest artifact = server.blobs().Add(testing::ConvPte());
  StartAgent(server.address(), runner);
  ASSERT_TRUE(server.WaitFor(HasHello));
  const std::vector<v1::AgentMessage> hello = server.messages();
  EXPECT_EQ(hello[0].hello().agent_id(), "t");
  ASSERT_EQ(hello[0].hello().boards_size(), 1);
  EXPECT_EQ(hello[0].hello().boards(0).id(), "t-sim-0");

  ASSERT_TRUE(server.Push(Assignment("j1", artifact)));
  std::optional<v1::RunResult> result = server.WaitForResult("j1");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->outcome(), v1::RUN_OUTCOME_PASS) << result->message();
  EXPECT_EQ(result->board_id(), "t-sim-0");
  EXPECT_GT(result->inference_cycles(), 0u);
  ASSERT_EQ(result->outputs_size(), 1);
  EXPECT_EQ(server.blobs().Bytes(result->outputs(0)).size(), 8u * 8u * 4u);
  EXPECT_FALSE(server.blobs().Bytes(result->etdump()).empty());
  const nlohmann::json profile =
      nlohmann::json::parse(server.blobs().Bytes(result->profile()), nullptr, false);
  EXPECT_TRUE(profile.contains("profile")) << server.blobs().Bytes(result->profile());
  EXPECT_NE(server.blobs().Bytes(result->log()).find("running on t-sim-0"), std::string::npos);

  // Stages in order, logs live, heartbeats.
  std::vector<v1::JobState> stages;
  int log_lines = 0, heartbeats = 0;
  for (const auto& m : server.messages()) {
    if (m.has_stage()) stages.push_back(m.stage().stage());
    if (m.has_logs()) log_lines += m.logs().lines_size();
    if (m.has_heartbeat()) ++heartbeats;
  }
  EXPECT_EQ(stages, (std::vector<v1::JobState>{v1::JOB_STATE_LOADING, v1::JOB_STATE_RUNNING,
                                               v1::JOB_STATE_COLLECTING}));
  EXPECT_GT(log_lines, 0);
  for (const auto& m : server.messages()) {
    EXPECT_EQ(m.stage().lines_size(), 0) << "a server that did not ask for lines with stages";
  }
  server.WaitFor([](const auto& ms) {
    return std::count_if(ms.begin(), ms.end(), [](const auto& m) { return m.has_heartbeat(); }) > 1;
  });

  // The artifact is cached: a second job downloads nothing.
  const int gets_before = server.blobs().gets();
  ASSERT_TRUE(server.Push(Assignment("j2", artifact)));
  result = server.WaitForResult("j2");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->outcome(), v1::RUN_OUTCOME_PASS) << result->message();
  EXPECT_EQ(server.blobs().gets(), gets_before);
  (void)heartbeats;
}

// A server whose Welcome says inline_logs gets the log in the result instead of an upload.
TEST_F(AgentTest, LogGoesInlineWhenTheServerTakesIt) {
  const std::string runner = boardlab::testing::RunBinary();
  if (runner.empty() || !std::filesystem::exists(runner)) GTEST_SKIP() << "no boardlab-run";
  FakeServer server;
  server.set_inline_logs(true);
  std::optional<v1::RunResult> result = RunOneJob(server, runner);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->outcome(), v1::RUN_OUTCOME_PASS) << result->message();
  EXPECT_NE(result->log_text().find("running on t-sim-0"), std::string::npos);
  EXPECT_FALSE(result->has_log());
  ASSERT_EQ(result->outputs_size(), 1);  // the other files are uploaded as before
  EXPECT_EQ(server.blobs().Bytes(result->outputs(0)).size(), 8u * 8u * 4u);
}

// A server whose Welcome says stage_lines gets the board's lines with the stages, not in
// messages of their own (one commit on the server for a stage and its lines).
TEST_F(AgentTest, LogLinesGoWithTheStagesWhenTheServerTakesThem) {
  const std::string runner = boardlab::testing::RunBinary();
  if (runner.empty() || !std::filesystem::exists(runner)) GTEST_SKIP() << "no boardlab-run";
  FakeServer server;
  server.set_stage_lines(true);
  std::optional<v1::RunResult> result = RunOneJob(server, runner);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->outcome(), v1::RUN_OUTCOME_PASS) << result->message();
  std::vector<v1::JobState> stages;
  std::string sent;  // every line sent, with a stage or (a run slower than a log batch) alone
  std::string with_collecting;
  for (const auto& m : server.messages()) {
    for (const std::string& line : m.logs().lines()) sent += line + "\n";
    if (!m.has_stage()) continue;
    stages.push_back(m.stage().stage());
    for (const std::string& line : m.stage().lines()) sent += line + "\n";
    if (m.stage().stage() == v1::JOB_STATE_COLLECTING) with_collecting = m.stage().DebugString();
  }
  EXPECT_EQ(stages, (std::vector<v1::JobState>{v1::JOB_STATE_LOADING, v1::JOB_STATE_RUNNING,
                                               v1::JOB_STATE_COLLECTING}));
  // The run's last line comes with the stage that follows it, and no line is sent twice.
  EXPECT_NE(with_collecting.find("RUN_OUTCOME_PASS"), std::string::npos) << with_collecting;
  EXPECT_EQ(server.blobs().Bytes(result->log()), sent);
}

TEST_F(AgentTest, MissingArtifactIsABoardError) {
  FakeServer server;
  StartAgent(server.address(), "/bin/true");
  ASSERT_TRUE(server.WaitFor(HasHello));
  v1::Digest absent;
  absent.set_sha256(std::string(64, 'b'));
  ASSERT_TRUE(server.Push(Assignment("j1", absent)));
  std::optional<v1::RunResult> result = server.WaitForResult("j1");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->outcome(), v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_NE(result->message().find("Failed to obtain the artifact"), std::string::npos)
      << result->message();
}

TEST_F(AgentTest, CancelStopsTheRun) {
  FakeServer server;
  const v1::Digest artifact = server.blobs().Add("pte");
  StartAgent(server.address(), testing::WriteScript(dir_ / "hang.sh", "sleep 60\n"));
  ASSERT_TRUE(server.WaitFor(HasHello));
  ASSERT_TRUE(server.Push(Assignment("j1", artifact)));
  ASSERT_TRUE(server.WaitFor(IsRunning));
  v1::ServerMessage cancel;
  cancel.mutable_cancel()->set_job_id("j1");
  cancel.mutable_cancel()->set_attempt(1);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(server.Push(cancel));
  std::optional<v1::RunResult> result = server.WaitForResult("j1", milliseconds(5000));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->outcome(), v1::RUN_OUTCOME_CANCELLED);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.5);
}

TEST_F(AgentTest, ShutdownReportsTheRunAsABoardError) {
  FakeServer server;
  const v1::Digest artifact = server.blobs().Add("pte");
  StartAgent(server.address(), testing::WriteScript(dir_ / "hang.sh", "sleep 60\n"));
  ASSERT_TRUE(server.WaitFor(HasHello));
  ASSERT_TRUE(server.Push(Assignment("j1", artifact)));
  ASSERT_TRUE(server.WaitFor(IsRunning));
  const auto start = std::chrono::steady_clock::now();
  StopAgent();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 3.0);
  std::optional<v1::RunResult> result = server.WaitForResult("j1", milliseconds(1000));
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->outcome(), v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(result->message(), "the agent shut down during the run");
  // Acknowledged before the agent left: the journal is empty.
  absl::StatusOr<std::vector<JournalEntry>> journal = LoadJournal(dir_ / "journal");
  ASSERT_TRUE(journal.ok());
  EXPECT_TRUE(journal->empty());
}

TEST_F(AgentTest, ReconnectsAfterAServerRestartAndDeliversTheResult) {
  auto server = std::make_unique<FakeServer>();
  const int port = server->port();
  const std::string pte = "pte";
  const v1::Digest artifact = server->blobs().Add(pte);
  // A run that outlives the first server.
  StartAgent(server->address(),
             testing::WriteScript(dir_ / "slow.sh",
                                  "sleep 1\necho '{\"outputs\": [], \"profile\": {}}'\n"));
  ASSERT_TRUE(server->WaitFor(HasHello));
  ASSERT_TRUE(server->Push(Assignment("j1", artifact)));
  ASSERT_TRUE(server->WaitFor(IsRunning));
  server.reset();
  std::this_thread::sleep_for(milliseconds(1500));  // the run ends while no server is there
  server = std::make_unique<FakeServer>(port);
  ASSERT_EQ(server->port(), port);
  server->blobs().Add(pte);
  std::optional<v1::RunResult> result = server->WaitForResult("j1");
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->outcome(), v1::RUN_OUTCOME_PASS) << result->message();
  const std::vector<v1::AgentMessage> messages = server->messages();
  ASSERT_TRUE(messages[0].has_hello());
  ASSERT_EQ(messages[0].hello().in_flight_size(), 1);
  EXPECT_EQ(messages[0].hello().in_flight(0).job_id(), "j1");
}

// Where `pred` first holds in the server's messages; -1 when it never does.
int IndexOf(const std::vector<v1::AgentMessage>& ms,
            const std::function<bool(const v1::AgentMessage&)>& pred) {
  for (size_t i = 0; i < ms.size(); ++i) {
    if (pred(ms[i])) return static_cast<int>(i);
  }
  return -1;
}

std::function<bool(const v1::AgentMessage&)> IsCondition(v1::BoardCondition condition) {
  return [condition](const v1::AgentMessage& m) {
    return m.has_board_status() && m.board_status().board_id() == "t-evk-0" &&
           m.board_status().condition() == condition;
  };
}

// A serial board whose job ends in a board error: the server hears that the board is
// recovering before it hears the result, then that it is ready again, with no job in between.
// After an agent restart, a quarantine from before is in the Hello.
TEST_F(AgentTest, SerialBoardRecoveryReachesTheServer) {
  testing::HelloBoard hello_board(link::kProtocolVersion, "rt700");
  FakeServer server;
  const v1::Digest artifact = server.blobs().Add("an artifact");
  BoardConfig board;
  board.id = "t-evk-0";
  board.type = "imxrt700-evk";
  board.driver = "serial";
  board.serial.port = hello_board.port();
  board.serial.connect_timeout_seconds = 2;
  const std::string runner = testing::WriteScript(
      dir_ / "run.sh", "echo 'board error: the board was reset' >&2\nexit 4\n");
  BoardMetrics metrics("");
  StartAgentWith(
      server.address(), board,
      std::make_unique<SerialBoardExecutor>(io_, board, runner, &metrics, dir_ / "state"));
  ASSERT_TRUE(server.WaitFor(HasHello));
  v1::ServerMessage assign = Assignment("j1", artifact);
  assign.mutable_assign()->set_board_id("t-evk-0");
  ASSERT_TRUE(server.Push(assign));
  const auto is_result = [](const v1::AgentMessage& m) { return m.has_result(); };
  ASSERT_TRUE(server.WaitFor([&](const std::vector<v1::AgentMessage>& ms) {
    return IndexOf(ms, IsCondition(v1::BOARD_CONDITION_READY)) >= 0 && IndexOf(ms, is_result) >= 0;
  }));
  const std::vector<v1::AgentMessage> ms = server.messages();
  const int recovering = IndexOf(ms, IsCondition(v1::BOARD_CONDITION_RECOVERING));
  const int result = IndexOf(ms, is_result);
  const int ready = IndexOf(ms, IsCondition(v1::BOARD_CONDITION_READY));
  // Recovering before the result (the server must not schedule on the result alone); ready
  // once the probe answered, which may come before the job's files are uploaded.
  ASSERT_GE(recovering, 0);
  EXPECT_LT(recovering, result);
  EXPECT_LT(recovering, ready);
  EXPECT_EQ(ms[result].result().outcome(), v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(ms[recovering].board_status().reason(),
            "its last job ended in a board error: board error: the board was reset");
  StopAgent();

  BoardState saved;
  saved.quarantined = true;
  saved.quarantine_reason = "no answer after connecting again, reset";
  ASSERT_TRUE(SaveBoardState(BoardStatePath(dir_ / "state", "t-evk-0"), saved).ok());
  FakeServer restarted;
  absl::StatusOr<std::unique_ptr<SerialBoardExecutor>> executor =
      SerialBoardExecutor::Create(io_, board, runner, &metrics, dir_ / "state");
  ASSERT_TRUE(executor.ok()) << executor.status();
  StartAgentWith(restarted.address(), board, *std::move(executor));
  ASSERT_TRUE(restarted.WaitFor(HasHello));
  const v1::Hello hello = restarted.messages()[0].hello();
  ASSERT_EQ(hello.boards_size(), 1);
  EXPECT_EQ(hello.boards(0).condition(), v1::BOARD_CONDITION_QUARANTINED);
  EXPECT_EQ(hello.boards(0).condition_reason(), saved.quarantine_reason);
  StopAgent();
}

TEST_F(AgentTest, WrongTokenKeepsRetrying) {
  FakeServer server;
  StartAgent(server.address(), "/bin/true", "wrong");
  std::this_thread::sleep_for(milliseconds(800));
  EXPECT_FALSE(HasHello(server.messages()));
}

}  // namespace
}  // namespace boardlab::agent
