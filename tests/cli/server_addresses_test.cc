// Several server replicas behind one --server (proto/support/grpc_util.h ChannelTarget,
// MakeChannel): the address lists gRPC's own resolver takes, the clear errors for lists it
// cannot, and calls that go to the replica that is up when the first listed one is not.

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/support/grpc_util.h"
#include "tests/cli/fake_boardlab_server.h"
#include "tests/support/free_port.h"

namespace boardlab::cli {
namespace {

using ::testing::HasSubstr;

TEST(ServerAddressesTest, OneAddressIsLeftToGrpcsDnsResolver) {
  EXPECT_EQ(*api::ChannelTarget("lab.example.com:7400"), "lab.example.com:7400");
  EXPECT_EQ(*api::ChannelTarget("127.0.0.1:7400"), "127.0.0.1:7400");
}

TEST(ServerAddressesTest, ListsOfIpAddressesBecomeGrpcAddressUris) {
  EXPECT_EQ(*api::ChannelTarget("127.0.0.1:7400,10.1.2.3:7401"),
            "ipv4:127.0.0.1:7400,10.1.2.3:7401");
  EXPECT_EQ(*api::ChannelTarget("[::1]:7400,[fd00::5]:7400"), "ipv6:[::1]:7400,[fd00::5]:7400");
}

TEST(ServerAddressesTest, ListsGrpcCannotResolveAreRefusedWithTheReason) {
  absl::StatusOr<std::string> name = api::ChannelTarget("lab-a:7400,127.0.0.1:7400");
  EXPECT_EQ(name.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(name.status().message(), HasSubstr("'lab-a:7400' is not an IP address"));
  EXPECT_THAT(name.status().message(), HasSubstr("one DNS name with several addresses"));
  absl::StatusOr<std::string> mixed = api::ChannelTarget("127.0.0.1:7400,[::1]:7400");
  EXPECT_THAT(mixed.status().message(), HasSubstr("mixes IPv4 and IPv6"));
  absl::StatusOr<std::string> empty = api::ChannelTarget("127.0.0.1:7400,");
  EXPECT_THAT(empty.status().message(), HasSubstr("'' is not HOST:PORT"));
  absl::StatusOr<std::string> no_port = api::ChannelTarget("127.0.0.1,127.0.0.2:7400");
  EXPECT_THAT(no_port.status().message(), HasSubstr("'127.0.0.1' is not HOST:PORT"));
  api::ChannelOptions options;
  options.address = "lab-a:1,lab-b:2";
  EXPECT_EQ(api::MakeChannel(options).status().code(), absl::StatusCode::kInvalidArgument);
}

// The first replica listed is down: both policies (the client's round robin, the agent's first
// that answers) reach the second.
TEST(ServerAddressesTest, CallsReachAReplicaThatIsUpWhenTheFirstIsDown) {
  testing::FakeBoardlabServer live;
  const std::string down = "127.0.0.1:" + std::to_string(boardlab::testing::FreeLoopbackPort());
  for (bool round_robin : {true, false}) {
    api::ChannelOptions options;
    options.address = down + "," + live.address();
    options.round_robin = round_robin;
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = api::MakeChannel(options);
    ASSERT_TRUE(channel.ok()) << channel.status();
    auto stub = v1::JobService::NewStub(*channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    context.set_wait_for_ready(true);
    v1::ListJobsRequest request;
    v1::ListJobsResponse response;
    grpc::Status status = stub->ListJobs(&context, request, &response);
    EXPECT_TRUE(status.ok()) << (round_robin ? "round robin: " : "first that answers: ")
                             << status.error_message();
  }
}

TEST(ServerAddressesTest, SubmitAndWaitGoThroughAListOfReplicas) {
  testing::FakeBoardlabServer live;
  v1::Job pass;
  pass.set_result(v1::JOB_RESULT_PASS);
  live.jobs().SetOutcome(pass);
  const std::string model = testing::WriteTestFile("replicas_model.tflite", "model bytes");
  const std::string down = "127.0.0.1:" + std::to_string(boardlab::testing::FreeLoopbackPort());
  testing::CapturedRun run =
      testing::RunCaptured({"submit", model, "--wait"}, down + "," + live.address());
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(live.jobs().job_count(), 1);
}

}  // namespace
}  // namespace boardlab::cli
