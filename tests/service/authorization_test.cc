// The authorization matrix: every RPC x every caller (no token, unknown token, client of the
// owning tenant, client of another tenant, agent, admin), against a live server, checked cell by
// cell against the table in docs/security.md, which the test reads from the file. A change of
// behaviour or of the documented table that the other does not follow fails here.

#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/support/digest.h"
#include "proto/support/grpc_util.h"
#include "server/auth.h"
#include "tests/service/harness.h"
#include "tests/service/security_tables.h"

namespace boardlab::testing::service {
namespace {

constexpr char kClientToken[] = "ci-token-5f1e";
constexpr char kOtherToken[] = "dev-token-0a9c";
constexpr char kAgentToken[] = "agent-token-77b2";
constexpr char kAdminToken[] = "admin-token-31d4";

// The table's columns, in its order, with the token each one calls with.
struct Principal {
  std::string column;
  std::string token;
};
const std::vector<Principal>& Principals() {
  static const std::vector<Principal> principals = {
      {"no token", ""},         {"wrong token", "not-a-token"},
      {"client", kClientToken}, {"other tenant", kOtherToken},
      {"agent", kAgentToken},   {"admin", kAdminToken}};
  return principals;
}

std::string TokensConfig() {
  return TokensYaml({{kClientToken, "ci", "client"},
                     {kOtherToken, "dev", "client"},
                     {kAgentToken, "lab", "agent"},
                     {kAdminToken, "lab", "admin"}});
}

std::string CodeName(grpc::StatusCode code) {
  static const std::map<grpc::StatusCode, std::string> names = {
      {grpc::StatusCode::OK, "OK"},
      {grpc::StatusCode::CANCELLED, "CANCELLED"},
      {grpc::StatusCode::INVALID_ARGUMENT, "INVALID_ARGUMENT"},
      {grpc::StatusCode::NOT_FOUND, "NOT_FOUND"},
      {grpc::StatusCode::FAILED_PRECONDITION, "FAILED_PRECONDITION"},
      {grpc::StatusCode::PERMISSION_DENIED, "PERMISSION_DENIED"},
      {grpc::StatusCode::UNAUTHENTICATED, "UNAUTHENTICATED"},
      {grpc::StatusCode::UNAVAILABLE, "UNAVAILABLE"},
      {grpc::StatusCode::DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED"}};
  auto it = names.find(code);
  return it == names.end() ? absl::StrCat("code ", static_cast<int>(code)) : it->second;
}

// What the first tenant ("ci") owns, and the stubs to reach the server.
class AuthorizationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(lab_.StartServer({.config_yaml = TokensConfig()}));
    lab_.SetApiToken(kAdminToken);
    ASSERT_TRUE(lab_.StartAgent("a", 2, kAgentToken));
    jobs_ = v1::JobService::NewStub(lab_.Channel());
    artifacts_ = v1::ArtifactService::NewStub(lab_.Channel());
    boards_ = v1::BoardService::NewStub(lab_.Channel());
    agents_ = v1::AgentService::NewStub(lab_.Channel());

    std::vector<uint8_t> model = FastModel();
    model_bytes_.assign(model.begin(), model.end());
    model_ = api::DigestOf(model_bytes_);
    probe_bytes_ = "bytes the first tenant uploads, and the others upload again";
    probe_ = api::DigestOf(probe_bytes_);
    ASSERT_EQ(Upload(kClientToken, model_, model_bytes_).error_code(), grpc::StatusCode::OK);
    ASSERT_EQ(Upload(kClientToken, probe_, probe_bytes_).error_code(), grpc::StatusCode::OK);
    v1::SubmitJobResponse submitted;
    ASSERT_TRUE(Submit(kClientToken, &submitted).ok());
    job_id_ = submitted.job().id();
    absl::StatusOr<v1::Job> done = lab_.WaitForJobDone(job_id_, std::chrono::seconds(60));
    ASSERT_TRUE(done.ok()) << done.status();
    ASSERT_EQ(done->result(), v1::JOB_RESULT_PASS) << done->message();
  }

  void Prepare(grpc::ClientContext& context, const std::string& token) {
    api::AddBearerToken(context, token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  }

  grpc::Status Upload(const std::string& token, const v1::Digest& digest, const std::string& bytes,
                      v1::UploadResponse* response = nullptr) {
    grpc::ClientContext context;
    Prepare(context, token);
    v1::UploadResponse ignored;
    auto writer = artifacts_->Upload(&context, response ? response : &ignored);
    v1::UploadChunk chunk;
    *chunk.mutable_digest() = digest;
    chunk.set_data(bytes);
    writer->Write(chunk);
    writer->WritesDone();
    return writer->Finish();
  }

  grpc::Status Submit(const std::string& token, v1::SubmitJobResponse* response) {
    grpc::ClientContext context;
    Prepare(context, token);
    v1::SubmitJobRequest request;
    *request.mutable_spec()->mutable_model() = model_;
    request.mutable_spec()->mutable_selector()->set_board_type("imxrt700-sim");
    request.mutable_spec()->mutable_run()->add_inputs()->set_random_seed(1);
    return jobs_->SubmitJob(&context, request, response);
  }

  grpc::Status Reserve(const std::string& token, const std::string& lease_id,
                       std::string* granted = nullptr) {
    grpc::ClientContext context;
    Prepare(context, token);
    v1::ReserveRequest request;
    request.set_board_id(kBoard);
    request.set_lease_id(lease_id);
    request.set_ttl_seconds(60);
    v1::ReserveResponse response;
    grpc::Status status = boards_->Reserve(&context, request, &response);
    if (granted != nullptr) *granted = response.lease_id();
    return status;
  }

  grpc::Status Release(const std::string& token, const std::string& lease_id) {
    grpc::ClientContext context;
    Prepare(context, token);
    v1::ReleaseRequest request;
    request.set_board_id(kBoard);
    request.set_lease_id(lease_id);
    v1::Board board;
    return boards_->Release(&context, request, &board);
  }

  // The first tenant's lease on kBoard, for the callers that act on it.
  std::string ClientLease() {
    std::string lease;
    EXPECT_EQ(Reserve(kClientToken, "", &lease).error_code(), grpc::StatusCode::OK);
    return lease;
  }

  // One cell: makes the RPC as `p` and describes the answer in the table's words.
  std::string Observe(const std::string& rpc, const Principal& p);
  std::map<std::string, std::function<std::string(const Principal&)>> Calls();

  static constexpr char kBoard[] = "a-sim-1";
  ServiceLab lab_;
  std::unique_ptr<v1::JobService::Stub> jobs_;
  std::unique_ptr<v1::ArtifactService::Stub> artifacts_;
  std::unique_ptr<v1::BoardService::Stub> boards_;
  std::unique_ptr<v1::AgentService::Stub> agents_;
  std::string model_bytes_;
  v1::Digest model_;
  std::string probe_bytes_;
  v1::Digest probe_;
  std::string job_id_;
};

std::map<std::string, std::function<std::string(const Principal&)>> AuthorizationTest::Calls() {
  auto code = [](const grpc::Status& status) { return CodeName(status.error_code()); };
  auto with_note = [code](const grpc::Status& status, const std::string& note) {
    return status.ok() ? absl::StrCat("OK, ", note) : code(status);
  };
  std::map<std::string, std::function<std::string(const Principal&)>> calls;
  calls["JobService.SubmitJob"] = [&, code](const Principal& p) {
    v1::SubmitJobResponse response;
    return code(Submit(p.token, &response));
  };
  calls["JobService.GetJob"] = [&, code](const Principal& p) {
    grpc::ClientContext context;
    Prepare(context, p.token);
    v1::GetJobRequest request;
    request.set_job_id(job_id_);
    v1::Job job;
    return code(jobs_->GetJob(&context, request, &job));
  };
  calls["JobService.WatchJob"] = [&, code](const Principal& p) {
    grpc::ClientContext context;
    Prepare(context, p.token);
    v1::WatchJobRequest request;
    request.set_job_id(job_id_);
    auto reader = jobs_->WatchJob(&context, request);
    v1::JobEvent event;
    while (reader->Read(&event)) {
    }
    return code(reader->Finish());
  };
  calls["JobService.CancelJob"] = [&, code](const Principal& p) {
    grpc::ClientContext context;
    Prepare(context, p.token);
    v1::CancelJobRequest request;
    request.set_job_id(job_id_);
    v1::Job job;
    return code(jobs_->CancelJob(&context, request, &job));
  };
  calls["JobService.ListJobs"] = [&, with_note](const Principal& p) {
    grpc::ClientContext context;
    Prepare(context, p.token);
    v1::ListJobsRequest request;
    v1::ListJobsResponse response;
    grpc::Status status = jobs_->ListJobs(&context, request, &response);
    bool listed = false;
    for (const auto& job : response.jobs()) listed = listed || job.id() == job_id_;
    return with_note(status, listed ? "listed" : "not listed");
  };
  calls["ArtifactService.FindMissing"] = [&, with_note](const Principal& p) {
    grpc::ClientContext context;
    Prepare(context, p.token);
    v1::FindMissingRequest request;
    *request.add_digests() = model_;
    v1::FindMissingResponse response;
    grpc::Status status = artifacts_->FindMissing(&context, request, &response);
    return with_note(status, response.missing_size() > 0 ? "missing" : "present");
  };
  calls["ArtifactService.Upload"] = [&, with_note](const Principal& p) {
    v1::UploadResponse response;
    grpc::Status status = Upload(p.token, probe_, probe_bytes_, &response);
    return with_note(status, response.already_present() ? "already present" : "bytes checked");
  };
  calls["ArtifactService.Download"] = [&, code](const Principal& p) {
    grpc::ClientContext context;
    Prepare(context, p.token);
    v1::DownloadRequest request;
    *request.mutable_digest() = model_;
    auto reader = artifacts_->Download(&context, request);
    std::string bytes;
    v1::DownloadChunk chunk;
    while (reader->Read(&chunk)) bytes += chunk.data();
    grpc::Status status = reader->Finish();
    if (status.ok() && bytes != model_bytes_) return std::string("OK, wrong bytes");
    return code(status);
  };
  calls["BoardService.ListBoards"] = [&, code](const Principal& p) {
    grpc::ClientContext context;
    Prepare(context, p.token);
    v1::ListBoardsResponse response;
    return code(boards_->ListBoards(&context, v1::ListBoardsRequest(), &response));
  };
  calls["BoardService.GetBoard"] = [&, code](const Principal& p) {
    grpc::ClientContext context;
    Prepare(context, p.token);
    v1::GetBoardRequest request;
    request.set_board_id(kBoard);
    v1::Board board;
    return code(boards_->GetBoard(&context, request, &board));
  };
  calls["BoardService.Reserve"] = [&, code](const Principal& p) {
    // The client reserves the idle board; everyone else tries to renew the client's lease.
    if (p.token == kClientToken) {
      std::string lease;
      grpc::Status status = Reserve(p.token, "", &lease);
      Release(kClientToken, lease);
      return code(status);
    }
    std::string lease = ClientLease();
    grpc::Status status = Reserve(p.token, lease);
    EXPECT_TRUE(Release(kClientToken, lease).ok());
    return code(status);
  };
  calls["BoardService.Release"] = [&, code](const Principal& p) {
    std::string lease = ClientLease();
    grpc::Status status = Release(p.token, lease);
    if (!status.ok()) {
      EXPECT_TRUE(Release(kClientToken, lease).ok());
    }
    return code(status);
  };
  calls["BoardService.SetMaintenance"] = [&, code](const Principal& p) {
    grpc::ClientContext context;
    Prepare(context, p.token);
    v1::SetMaintenanceRequest request;
    request.set_board_id(kBoard);
    request.set_on(true);
    request.set_reason("authorization test");
    v1::Board board;
    grpc::Status status = boards_->SetMaintenance(&context, request, &board);
    if (status.ok()) {
      grpc::ClientContext off_context;
      Prepare(off_context, kAdminToken);
      request.set_on(false);
      EXPECT_TRUE(boards_->SetMaintenance(&off_context, request, &board).ok());
    }
    return code(status);
  };
  calls["AgentService.Connect"] = [&, code](const Principal& p) {
    // An agent without boards: the server answers its Hello with a Welcome.
    grpc::ClientContext context;
    Prepare(context, p.token);
    auto stream = agents_->Connect(&context);
    v1::AgentMessage hello;
    hello.mutable_hello()->set_agent_id(absl::StrCat("probe-", p.column));
    stream->Write(hello);
    v1::ServerMessage answer;
    if (stream->Read(&answer) && answer.has_welcome()) {
      context.TryCancel();
      stream->Finish();
      return std::string("OK");
    }
    stream->WritesDone();
    return code(stream->Finish());
  };
  return calls;
}

std::string AuthorizationTest::Observe(const std::string& rpc, const Principal& p) {
  auto calls = Calls();
  auto it = calls.find(rpc);
  if (it == calls.end()) return "no call for this RPC in the test";
  return it->second(p);
}

TEST_F(AuthorizationTest, EveryRpcAndCallerAnswersAsDocsSecurityMdSays) {
  absl::StatusOr<DocTable> table = ReadSecurityTable("RPC");
  ASSERT_TRUE(table.ok()) << table.status();
  // The table covers exactly the server's RPCs, and its role columns agree with RoleAllows.
  std::set<std::string> documented;
  for (const auto& [rpc, row] : *table) documented.insert(rpc);
  std::set<std::string> served;
  for (const auto& entry : server::RpcAccessTable()) served.insert(entry.rpc);
  EXPECT_EQ(documented, served);
  for (const auto& entry : server::RpcAccessTable()) {
    const auto& row = (*table)[entry.rpc];
    for (auto [column, role] : {std::pair{"client", server::Role::kClient},
                                {"agent", server::Role::kAgent},
                                {"admin", server::Role::kAdmin}}) {
      EXPECT_EQ(row.at(column) != "PERMISSION_DENIED", server::RoleAllows(role, entry.access))
          << entry.rpc << " for " << column;
    }
  }

  int cells = 0;
  for (const auto& [rpc, row] : *table) {
    for (const Principal& p : Principals()) {
      SCOPED_TRACE(absl::StrCat(rpc, " as ", p.column));
      ASSERT_TRUE(row.contains(p.column)) << "docs/security.md has no column '" << p.column << "'";
      EXPECT_EQ(Observe(rpc, p), row.at(p.column));
      ++cells;
    }
  }
  EXPECT_EQ(cells, static_cast<int>(served.size() * Principals().size()));
}

// What the other tenant can do once it has proved it holds the bytes, and what wrong bytes get.
TEST_F(AuthorizationTest, UploadingTheBytesGrantsAnotherTenantTheBlobWrongBytesDoNot) {
  auto download = [&](const std::string& token) {
    grpc::ClientContext context;
    Prepare(context, token);
    v1::DownloadRequest request;
    *request.mutable_digest() = model_;
    auto reader = artifacts_->Download(&context, request);
    v1::DownloadChunk chunk;
    while (reader->Read(&chunk)) {
    }
    return reader->Finish().error_code();
  };
  EXPECT_EQ(download(kOtherToken), grpc::StatusCode::NOT_FOUND);
  std::string wrong = model_bytes_;
  wrong[wrong.size() / 2] ^= 1;
  grpc::Status status = Upload(kOtherToken, model_, wrong);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(download(kOtherToken), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(Upload(kOtherToken, model_, model_bytes_).ok());
  EXPECT_EQ(download(kOtherToken), grpc::StatusCode::OK);
  v1::SubmitJobResponse submitted;
  EXPECT_TRUE(Submit(kOtherToken, &submitted).ok());
  EXPECT_EQ(submitted.job().tenant(), "dev");
  // The job's artifact is the other tenant's too once its job has compiled it.
  absl::StatusOr<v1::Job> done =
      lab_.WaitForJobDone(submitted.job().id(), std::chrono::seconds(60));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->result(), v1::JOB_RESULT_PASS) << done->message();
  grpc::ClientContext context;
  Prepare(context, kOtherToken);
  v1::DownloadRequest request;
  *request.mutable_digest() = done->files().etdump();
  auto reader = artifacts_->Download(&context, request);
  v1::DownloadChunk chunk;
  while (reader->Read(&chunk)) {
  }
  EXPECT_TRUE(reader->Finish().ok());
}

}  // namespace
}  // namespace boardlab::testing::service
