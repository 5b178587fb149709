// submit against the in-process fake server: only missing blobs are uploaded, the request id
// makes a repeated submit return the first job, UNAVAILABLE is retried with the same id.

#include "cli/submit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "proto/support/digest.h"
#include "tests/cli/fake_boardlab_server.h"

namespace boardlab::cli {
namespace {

GlobalOptions ServerOnly(const std::string& address) {
  GlobalOptions options;
  options.server = address;
  return options;
}

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr RetryPolicy kFastRetry{4, std::chrono::milliseconds(1), std::chrono::milliseconds(4)};

class SubmitTest : public testing::CliTest {
 protected:
  SubmitTest() {
    model_ = testing::WriteTestFile("submit_model.tflite", "model bytes");
    input_ = testing::WriteTestFile("submit_input.bin", "input bytes");
    expected_ = testing::WriteTestFile("submit_expected.bin", "expected bytes");
    v1::Job pass;
    pass.set_result(v1::JOB_RESULT_PASS);
    server_.jobs().SetOutcome(pass);
  }

  std::string model_, input_, expected_;
};

TEST_F(SubmitTest, PrepareBuildsTheSpecFromTheArguments) {
  SubmitArgs args;
  args.model = model_;
  args.inputs = {input_, "random:7"};
  args.expected = {expected_};
  args.atol = 2;
  args.iterations = 5;
  args.tags = {"ram=64M"};
  args.labels = {"ci=nightly"};
  args.board_type = "imxrt700-sim";
  args.cpu_only = true;
  absl::StatusOr<PreparedSubmit> prepared = PrepareSubmit(args);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const v1::JobSpec& spec = prepared->request.spec();
  EXPECT_EQ(spec.model().sha256(), api::Sha256Hex(std::string("model bytes")));
  EXPECT_EQ(spec.model().size_bytes(), 11);
  EXPECT_EQ(spec.name(), "submit_model.tflite");
  EXPECT_EQ(spec.compile().target(), "imxrt700");
  EXPECT_TRUE(spec.compile().cpu_only());
  ASSERT_EQ(spec.run().inputs_size(), 2);
  EXPECT_EQ(spec.run().inputs(0).blob().sha256(), api::Sha256Hex(std::string("input bytes")));
  EXPECT_EQ(spec.run().inputs(1).random_seed(), 7u);
  ASSERT_EQ(spec.run().expected_size(), 1);
  EXPECT_EQ(spec.run().atol(), 2);
  EXPECT_EQ(spec.run().iterations(), 5);
  EXPECT_EQ(spec.selector().board_type(), "imxrt700-sim");
  EXPECT_EQ(spec.selector().tags(0).key(), "ram");
  EXPECT_EQ(spec.labels(0).value(), "nightly");
  EXPECT_FALSE(prepared->request.request_id().empty());
  EXPECT_EQ(prepared->blobs.size(), 3u);
}

TEST_F(SubmitTest, OnlyALimitMakesABudgetsMessage) {
  // Without one the server reads no compile report when the job ends (server/lab_agents.cc).
  SubmitArgs args;
  args.model = model_;
  args.expected = {expected_};
  absl::StatusOr<PreparedSubmit> prepared = PrepareSubmit(args);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_FALSE(prepared->request.spec().has_budgets());
  args.budgets.max_flash_bytes = 4096;
  prepared = PrepareSubmit(args);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  ASSERT_TRUE(prepared->request.spec().has_budgets());
  EXPECT_EQ(prepared->request.spec().budgets().max_flash_bytes(), 4096);
}

TEST_F(SubmitTest, UploadsOnlyTheBlobsTheStoreLacksOnce) {
  server_.artifacts().Preload("model bytes");
  ASSERT_EQ(Run({"--token", "t0k", "submit", model_, "--input", input_, "--input", "random:3",
                 "--input", input_, "--expected", expected_}),
            0)
      << err_;
  const std::string input_sha = api::Sha256Hex(std::string("input bytes"));
  const std::string expected_sha = api::Sha256Hex(std::string("expected bytes"));
  EXPECT_THAT(server_.artifacts().uploaded(), UnorderedElementsAre(input_sha, expected_sha));
  ASSERT_EQ(server_.artifacts().find_missing_calls().size(), 1u);
  EXPECT_EQ(server_.artifacts().find_missing_calls()[0].size(), 4u);
  EXPECT_THAT(err_, HasSubstr("uploading input '" + input_ + "'"));
  EXPECT_THAT(err_, ::testing::Not(HasSubstr("uploading model")));
  for (const std::string& token : server_.artifacts().tokens()) EXPECT_EQ(token, "t0k");
  EXPECT_EQ(out_, "job-1\n");  // without --wait: the job id, for scripts
  EXPECT_EQ(server_.jobs().submits()[0].spec().run().inputs(1).random_seed(), 3u);
}

TEST_F(SubmitTest, TheSameRequestIdReturnsTheFirstJob) {
  ASSERT_EQ(Run({"submit", model_, "--request-id", "ci-build-77"}), 0) << err_;
  EXPECT_EQ(out_, "job-1\n");
  ASSERT_EQ(Run({"submit", model_, "--request-id", "ci-build-77"}), 0) << err_;
  EXPECT_EQ(out_, "job-1\n");
  EXPECT_THAT(err_, HasSubstr("already submitted as job job-1"));
  EXPECT_EQ(server_.jobs().job_count(), 1);
  // Without --request-id every submit is a new job with a fresh id.
  ASSERT_EQ(Run({"submit", model_}), 0);
  ASSERT_EQ(Run({"submit", model_}), 0);
  const auto submits = server_.jobs().submits();
  ASSERT_EQ(submits.size(), 4u);
  EXPECT_NE(submits[2].request_id(), submits[3].request_id());
  EXPECT_EQ(server_.jobs().job_count(), 3);
}

TEST_F(SubmitTest, RetriesUnavailableWithTheSameRequestId) {
  server_.jobs().FailSubmits(2);
  SubmitArgs args;
  args.model = model_;
  absl::StatusOr<PreparedSubmit> prepared = PrepareSubmit(args);
  ASSERT_TRUE(prepared.ok());
  absl::StatusOr<Connection> connection = Connect(ServerOnly(server_.address()));
  ASSERT_TRUE(connection.ok());
  absl::StatusOr<v1::SubmitJobResponse> response =
      SubmitWithRetry(*connection, prepared->request, kFastRetry);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->job().id(), "job-1");
  const auto submits = server_.jobs().submits();
  ASSERT_EQ(submits.size(), 3u);
  for (const v1::SubmitJobRequest& submit : submits) {
    EXPECT_EQ(submit.request_id(), prepared->request.request_id());
  }
}

TEST_F(SubmitTest, GivesUpAfterTheRetryBudgetWithExitFive) {
  server_.jobs().FailSubmits(100);
  absl::StatusOr<Connection> connection = Connect(ServerOnly(server_.address()));
  ASSERT_TRUE(connection.ok());
  SubmitArgs args;
  args.model = model_;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunSubmit(*connection, args, kFastRetry), 5);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("boardlab: submitting the job: the fake is restarting"));
  EXPECT_EQ(server_.jobs().submits().size(), static_cast<size_t>(kFastRetry.attempts));
}

TEST_F(SubmitTest, JsonPrintsTheJob) {
  ASSERT_EQ(Run({"submit", model_, "--json", "--label", "ci=1"}), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("\"id\":\"job-1\""));
  EXPECT_THAT(out_, HasSubstr("\"name\":\"submit_model.tflite\""));
}

TEST_F(SubmitTest, UploadMissingBlobsSkipsPresentOnes) {
  server_.artifacts().Preload("b");
  absl::StatusOr<Connection> connection = Connect(ServerOnly(server_.address()));
  ASSERT_TRUE(connection.ok());
  api::BlobClient blobs(connection->channel, "");
  std::vector<LocalBlob> local = {{"a", "a", api::DigestOf("a")}, {"b", "b", api::DigestOf("b")}};
  std::ostringstream progress;
  ASSERT_TRUE(UploadMissingBlobs(blobs, local, kFastRetry, progress).ok());
  EXPECT_THAT(server_.artifacts().uploaded(), ElementsAre(api::Sha256Hex(std::string("a"))));
  EXPECT_EQ(progress.str(), "uploading a (1 B)\n");
}

}  // namespace
}  // namespace boardlab::cli
