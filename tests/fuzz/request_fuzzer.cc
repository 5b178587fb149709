// libFuzzer target for the server's request handling: bytes become one call of any RPC, as any
// caller, handed to the real handlers in-process (Lab, SQLite store, blob store and compile
// workers in a temporary directory, through an in-process gRPC channel). The state carries over
// from input to input, so the fuzzer can build up agents, boards, blobs and jobs and then poke
// at them. Anything but a gRPC status (a crash, a sanitizer report, a hang) is a finding.
//
// Input: [RPC index][caller index][payload]. Unary RPCs parse the payload as their request;
// Upload and AgentService.Connect read it as a series of messages, each preceded by a 2-byte
// little-endian length. BOARDLAB_WRITE_REQUEST_SEEDS=DIR writes seed inputs to DIR and exits.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/support/digest.h"
#include "proto/support/grpc_util.h"
#include "server/auth.h"
#include "server/compile_service.h"
#include "server/file_blob_store.h"
#include "server/lab.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/services.h"
#include "server/sqlite_store.h"
#include "server/tiered_blob_store.h"
#include "tests/support/test_models.h"

namespace boardlab::server {
namespace {

constexpr auto kCallDeadline = std::chrono::milliseconds(50);
constexpr const char* kTokens[] = {"", "not-a-token", "client-ci", "client-dev", "agent", "admin"};
constexpr int kNumCallers = sizeof(kTokens) / sizeof(kTokens[0]);

ServerConfig FuzzConfig(const std::string& dir) {
  ServerConfig config;
  config.data_dir = dir;
  config.compile_workers = 1;
  config.max_unfinished_jobs_per_tenant = 500;  // bounds the memory a long run can fill
  config.max_blob_bytes = 1 << 16;
  auto token = [](const char* secret, const char* tenant, Role role) {
    return TokenConfig{api::Sha256Hex(secret), tenant, role};
  };
  config.tokens = {token("client-ci", "ci", Role::kClient),
                   token("client-dev", "dev", Role::kClient), token("agent", "lab", Role::kAgent),
                   token("admin", "lab", Role::kAdmin)};
  return config;
}

// The whole server minus its listening port, built once per fuzzer process.
class InProcessServer {
 public:
  InProcessServer() : dir_(MakeDir()), config_(FuzzConfig(dir_)) {
    store_ = *SqliteStore::Open(dir_ + "/boardlab.db");
    blobs_ = std::make_unique<TieredBlobStore>(*FileBlobStore::Open(dir_ + "/blobs"), *store_);
    compiles_ =
        std::make_unique<CompileService>(config_.compile_workers, *store_, *blobs_, metrics_);
    lab_ = std::make_unique<Lab>(config_, *store_, *blobs_, *compiles_, metrics_);
    auth_ = std::make_unique<Authenticator>(config_.tokens, /*agent_certificates=*/false);
    ServiceContext context{*lab_, *store_, *blobs_, *auth_, metrics_, config_};
    jobs_ = std::make_unique<JobServiceImpl>(context);
    artifacts_ = std::make_unique<ArtifactServiceImpl>(context);
    boards_ = std::make_unique<BoardServiceImpl>(context);
    agents_ = std::make_unique<AgentServiceImpl>(context);
    grpc::ServerBuilder builder;
    builder.RegisterService(jobs_.get());
    builder.RegisterService(artifacts_.get());
    builder.RegisterService(boards_.get());
    builder.RegisterService(agents_.get());
    server_ = builder.BuildAndStart();
    channel_ = server_->InProcessChannel(grpc::ChannelArguments());
  }

  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  Lab& lab() { return *lab_; }

 private:
  static std::string MakeDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "boardlab-request-fuzz.XXXXXX").string();
    std::string dir = mkdtemp(pattern.data());
    static std::string to_remove = dir;
    std::atexit([] {
      std::error_code error;
      std::filesystem::remove_all(to_remove, error);
    });
    return dir;
  }

  std::string dir_;
  ServerConfig config_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<TieredBlobStore> blobs_;
  Metrics metrics_;
  std::unique_ptr<CompileService> compiles_;
  std::unique_ptr<Lab> lab_;
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<JobServiceImpl> jobs_;
  std::unique_ptr<ArtifactServiceImpl> artifacts_;
  std::unique_ptr<BoardServiceImpl> boards_;
  std::unique_ptr<AgentServiceImpl> agents_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

InProcessServer& Server() {
  static InProcessServer* server = new InProcessServer();  // lives until the process exits
  return *server;
}

void Prepare(grpc::ClientContext& context, int caller) {
  api::AddBearerToken(context, kTokens[caller]);
  context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
}

// Splits `payload` into messages of type M, each preceded by a 2-byte little-endian length.
template <typename M>
std::vector<M> Frames(const uint8_t* data, size_t size) {
  std::vector<M> messages;
  while (size >= 2) {
    size_t length = data[0] | (size_t{data[1]} << 8);
    data += 2;
    size -= 2;
    length = std::min(length, size);
    M message;
    if (message.ParseFromArray(data, static_cast<int>(length))) messages.push_back(message);
    data += length;
    size -= length;
  }
  return messages;
}

template <typename Request, typename Response, typename Call>
void Unary(const uint8_t* data, size_t size, int caller, Call call) {
  Request request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return;
  grpc::ClientContext context;
  Prepare(context, caller);
  Response response;
  call(&context, request, &response);
}

using Rpc = std::function<void(const uint8_t*, size_t, int)>;

std::vector<Rpc> Rpcs() {
  auto channel = Server().channel();
  std::shared_ptr<v1::JobService::Stub> jobs = v1::JobService::NewStub(channel);
  std::shared_ptr<v1::ArtifactService::Stub> artifacts = v1::ArtifactService::NewStub(channel);
  std::shared_ptr<v1::BoardService::Stub> boards = v1::BoardService::NewStub(channel);
  std::shared_ptr<v1::AgentService::Stub> agents = v1::AgentService::NewStub(channel);
  return {
      [jobs](const uint8_t* d, size_t n, int c) {
        Unary<v1::SubmitJobRequest, v1::SubmitJobResponse>(
            d, n, c, [&](auto... a) { return jobs->SubmitJob(a...); });
      },
      [jobs](const uint8_t* d, size_t n, int c) {
        Unary<v1::GetJobRequest, v1::Job>(d, n, c, [&](auto... a) { return jobs->GetJob(a...); });
      },
      [jobs](const uint8_t* d, size_t n, int c) {
        v1::WatchJobRequest request;
        if (!request.ParseFromArray(d, static_cast<int>(n))) return;
        grpc::ClientContext context;
        Prepare(context, c);
        auto reader = jobs->WatchJob(&context, request);
        v1::JobEvent event;
        while (reader->Read(&event)) {
        }
        reader->Finish();
      },
      [jobs](const uint8_t* d, size_t n, int c) {
        Unary<v1::CancelJobRequest, v1::Job>(d, n, c,
                                             [&](auto... a) { return jobs->CancelJob(a...); });
      },
      [jobs](const uint8_t* d, size_t n, int c) {
        Unary<v1::ListJobsRequest, v1::ListJobsResponse>(
            d, n, c, [&](auto... a) { return jobs->ListJobs(a...); });
      },
      [artifacts](const uint8_t* d, size_t n, int c) {
        Unary<v1::FindMissingRequest, v1::FindMissingResponse>(
            d, n, c, [&](auto... a) { return artifacts->FindMissing(a...); });
      },
      [artifacts](const uint8_t* d, size_t n, int c) {
        grpc::ClientContext context;
        Prepare(context, c);
        v1::UploadResponse response;
        auto writer = artifacts->Upload(&context, &response);
        for (const auto& chunk : Frames<v1::UploadChunk>(d, n)) {
          if (!writer->Write(chunk)) break;
        }
        writer->WritesDone();
        writer->Finish();
      },
      [artifacts](const uint8_t* d, size_t n, int c) {
        v1::DownloadRequest request;
        if (!request.ParseFromArray(d, static_cast<int>(n))) return;
        grpc::ClientContext context;
        Prepare(context, c);
        auto reader = artifacts->Download(&context, request);
        v1::DownloadChunk chunk;
        while (reader->Read(&chunk)) {
        }
        reader->Finish();
      },
      [boards](const uint8_t* d, size_t n, int c) {
        Unary<v1::ListBoardsRequest, v1::ListBoardsResponse>(
            d, n, c, [&](auto... a) { return boards->ListBoards(a...); });
      },
      [boards](const uint8_t* d, size_t n, int c) {
        Unary<v1::GetBoardRequest, v1::Board>(d, n, c,
                                              [&](auto... a) { return boards->GetBoard(a...); });
      },
      [boards](const uint8_t* d, size_t n, int c) {
        Unary<v1::ReserveRequest, v1::ReserveResponse>(
            d, n, c, [&](auto... a) { return boards->Reserve(a...); });
      },
      [boards](const uint8_t* d, size_t n, int c) {
        Unary<v1::ReleaseRequest, v1::Board>(d, n, c,
                                             [&](auto... a) { return boards->Release(a...); });
      },
      [boards](const uint8_t* d, size_t n, int c) {
        Unary<v1::SetMaintenanceRequest, v1::Board>(
            d, n, c, [&](auto... a) { return boards->SetMaintenance(a...); });
      },
      [agents](const uint8_t* d, size_t n, int c) {
        grpc::ClientContext context;
        Prepare(context, c);
        auto stream = agents->Connect(&context);
        for (const auto& message : Frames<v1::AgentMessage>(d, n)) {
          if (!stream->Write(message)) break;
        }
        stream->WritesDone();
        v1::ServerMessage answer;
        while (stream->Read(&answer)) {
        }
        stream->Finish();
      },
  };
}

// Seed inputs: an agent with a board, a model upload, a submit of it, and one call of every
// other RPC on the objects these create.
std::string Input(int rpc, int caller, const std::string& payload) {
  return std::string(1, static_cast<char>(rpc)) + static_cast<char>(caller) + payload;
}

std::string Framed(const google::protobuf::Message& message) {
  std::string bytes = message.SerializeAsString();
  std::string frame(2, '\0');
  frame[0] = static_cast<char>(bytes.size() & 0xff);
  frame[1] = static_cast<char>(bytes.size() >> 8);
  return frame + bytes;
}

void WriteSeeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::vector<uint8_t> model_bytes =
      testing::SingleFullyConnected({.in_shape = {1, 8}, .units = 4});
  const std::string model(model_bytes.begin(), model_bytes.end());
  const v1::Digest digest = api::DigestOf(model);

  v1::AgentMessage hello;
  hello.mutable_hello()->set_agent_id("fuzz-agent");
  v1::BoardInfo* board = hello.mutable_hello()->add_boards();
  board->set_id("fuzz-board");
  board->set_type("imxrt700-sim");
  v1::UploadChunk chunk;
  *chunk.mutable_digest() = digest;
  chunk.set_data(model);
  v1::SubmitJobRequest submit;
  *submit.mutable_spec()->mutable_model() = digest;
  submit.mutable_spec()->mutable_selector()->set_board_type("imxrt700-sim");
  v1::GetJobRequest get;
  get.set_job_id("j1");
  v1::FindMissingRequest find;
  *find.add_digests() = digest;
  v1::DownloadRequest download;
  *download.mutable_digest() = digest;
  v1::ReserveRequest reserve;
  reserve.set_board_id("fuzz-board");
  v1::SetMaintenanceRequest maintenance;
  maintenance.set_board_id("fuzz-board");
  maintenance.set_on(true);

  const std::vector<std::pair<std::string, std::string>> seeds = {
      {"connect", Input(13, 4, Framed(hello))},
      {"upload", Input(6, 2, Framed(chunk))},
      {"submit", Input(0, 2, submit.SerializeAsString())},
      {"get", Input(1, 2, get.SerializeAsString())},
      {"watch", Input(2, 3, get.SerializeAsString())},
      {"cancel", Input(3, 5, get.SerializeAsString())},
      {"list", Input(4, 2, "")},
      {"find", Input(5, 3, find.SerializeAsString())},
      {"download", Input(7, 4, download.SerializeAsString())},
      {"boards", Input(8, 2, "")},
      {"reserve", Input(10, 2, reserve.SerializeAsString())},
      {"maintenance", Input(12, 5, maintenance.SerializeAsString())},
  };
  for (const auto& [name, bytes] : seeds)
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

}  // namespace
}  // namespace boardlab::server

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("BOARDLAB_WRITE_REQUEST_SEEDS")) {
    boardlab::server::WriteSeeds(dir);
    std::exit(0);
  }
  boardlab::server::SetLogOutput(nullptr);
  boardlab::server::Server();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<boardlab::server::Rpc> rpcs = boardlab::server::Rpcs();
  if (size < 2) return 0;
  const auto& rpc = rpcs[data[0] % rpcs.size()];
  rpc(data + 2, size - 2, data[1] % boardlab::server::kNumCallers);
  boardlab::server::Server().lab().Tick();
  return 0;
}
