// A server with bearer tokens (configured by their SHA-256): no token or a wrong one is
// UNAUTHENTICATED (client exit 2), the right one runs jobs, and tenants do not see each other.

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/support/digest.h"
#include "proto/support/grpc_util.h"
#include "tests/service/harness.h"

namespace boardlab::testing::service {
namespace {

using ::testing::HasSubstr;

constexpr char kClientToken[] = "ci-token-5f1e";
constexpr char kOtherToken[] = "dev-token-0a9c";
constexpr char kAgentToken[] = "agent-token-77b2";
constexpr char kAdminToken[] = "admin-token-31d4";

std::string TokensConfig() {
  return TokensYaml({{kClientToken, "ci", "client"},
                     {kOtherToken, "dev", "client"},
                     {kAgentToken, "lab", "agent"},
                     {kAdminToken, "lab", "admin"}});
}

TEST(AuthTest, TokenlessAndUnknownTokensAreRefusedAndTheRightOneRuns) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer({.config_yaml = TokensConfig()}));
  lab.SetApiToken(kAdminToken);  // for the harness's own calls
  ASSERT_TRUE(lab.StartAgent("a", 1, kAgentToken));
  const std::string model = lab.WriteFile("fc.tflite", FastModel());

  // The API: exact codes.
  auto stub = v1::JobService::NewStub(lab.Channel());
  {
    grpc::ClientContext context;
    v1::ListJobsRequest request;
    v1::ListJobsResponse response;
    grpc::Status status = stub->ListJobs(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("no bearer token"));
  }
  {
    grpc::ClientContext context;
    api::AddBearerToken(context, "not-a-token");
    v1::ListJobsRequest request;
    v1::ListJobsResponse response;
    grpc::Status status = stub->ListJobs(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("not known"));
  }
  {
    // A client token may not act as an agent.
    auto agents = v1::AgentService::NewStub(lab.Channel());
    grpc::ClientContext context;
    api::AddBearerToken(context, kClientToken);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    auto stream = agents->Connect(&context);
    stream->WritesDone();
    grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  }

  // The client: exit 2 with a message that says what to do.
  ClientResult r = lab.RunClient({"submit", model, "--wait"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("no bearer token")) << r;
  r = lab.RunClient({"jobs"}, std::chrono::seconds(60), "wrong-token");
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("not known")) << r;

  r = lab.RunClient({"submit", model, "--expect-reference", "--wait", "--json"},
                    std::chrono::seconds(60), kClientToken);
  ASSERT_EQ(r.exit_code, 0) << r;
  absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message();
  EXPECT_EQ(job->tenant(), "ci");

  // Another tenant cannot see the job.
  r = lab.RunClient({"status", job->id()}, std::chrono::seconds(60), kOtherToken);
  EXPECT_EQ(r.exit_code, 2) << r;
  r = lab.RunClient({"status", job->id(), "--json"}, std::chrono::seconds(60), kClientToken);
  EXPECT_EQ(r.exit_code, 0) << r;
}

}  // namespace
}  // namespace boardlab::testing::service
