// Bad requests against a live server: the exact gRPC status code, a message that names the
// problem, and the client's exit code.

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/support/blob_client.h"
#include "proto/support/digest.h"
#include "tests/service/harness.h"

namespace boardlab::testing::service {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMaxBlobBytes = 4096;

class BadRequestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        lab_.StartServer({.config_yaml = absl::StrCat("max_blob_bytes: ", kMaxBlobBytes, "\n")}));
    ASSERT_TRUE(lab_.StartAgent("a", 1));
    model_ = lab_.WriteFile("fc.tflite", FastModel());
    ASSERT_LT(static_cast<int64_t>(FastModel().size()), kMaxBlobBytes);
  }

  // SubmitJob with the uploaded fast model, `edit` applied to the spec.
  grpc::Status Submit(const std::function<void(v1::JobSpec&)>& edit) {
    api::BlobClient blobs(lab_.Channel(), "");
    const std::vector<uint8_t> bytes = FastModel();
    absl::StatusOr<v1::Digest> digest = blobs.Put(std::string(bytes.begin(), bytes.end()));
    EXPECT_TRUE(digest.ok()) << digest.status();
    v1::SubmitJobRequest request;
    *request.mutable_spec()->mutable_model() = digest.value_or(v1::Digest());
    edit(*request.mutable_spec());
    auto stub = v1::JobService::NewStub(lab_.Channel());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::SubmitJobResponse response;
    return stub->SubmitJob(&context, request, &response);
  }

  ServiceLab lab_;
  std::string model_;
};

TEST_F(BadRequestTest, UnknownDigestIsNotFound) {
  const v1::Digest unknown = api::DigestOf("these bytes were never uploaded");
  grpc::Status status = Submit([&](v1::JobSpec& spec) { *spec.mutable_model() = unknown; });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr(unknown.sha256()));
  EXPECT_THAT(status.error_message(), HasSubstr("not in the artifact store"));

  // An unknown expected output is named as such.
  status = Submit([&](v1::JobSpec& spec) { *spec.mutable_run()->add_expected() = unknown; });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("expected output 0"));

  // Download of an unknown blob.
  api::BlobClient blobs(lab_.Channel(), "");
  absl::StatusOr<std::string> got = blobs.Get(unknown);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound) << got.status();
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(unknown.sha256()));
}

TEST_F(BadRequestTest, OversizedUploadIsResourceExhausted) {
  api::BlobClient blobs(lab_.Channel(), "");
  const std::string big(kMaxBlobBytes + 1, 'x');
  absl::Status status = blobs.Upload(api::DigestOf(big), big);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(absl::StrCat(kMaxBlobBytes)));
  EXPECT_THAT(std::string(status.message()), HasSubstr("limit"));

  // A client that announces a small blob and then sends more is cut off the same way.
  v1::Digest lying = api::DigestOf(big);
  lying.set_size_bytes(16);
  status = blobs.Upload(lying, big);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("more than the announced 16 bytes"));

  // Nothing was stored.
  absl::StatusOr<std::vector<v1::Digest>> missing = blobs.FindMissing({api::DigestOf(big)});
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->size(), 1u);

  // The client reports it as a bad request (exit 2) and says why.
  const std::string big_model = lab_.WriteFile("big.tflite", big);
  ClientResult r = lab_.RunClient({"submit", big_model, "--wait"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("limit")) << r;
}

TEST_F(BadRequestTest, CorruptUploadIsInvalidArgument) {
  api::BlobClient blobs(lab_.Channel(), "");
  const std::string announced(64, 'a');
  const std::string sent(64, 'b');
  const v1::Digest digest = api::DigestOf(announced);
  absl::Status status = blobs.Upload(digest, sent);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(digest.sha256()));
  EXPECT_THAT(std::string(status.message()), HasSubstr(api::Sha256Hex(sent)));
  EXPECT_THAT(std::string(status.message()), HasSubstr("corrupt"));

  // Short of the announced size.
  status = blobs.Upload(digest, announced.substr(0, 10));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("got 10 bytes"));

  // Not a SHA-256 at all.
  v1::Digest bogus;
  bogus.set_sha256("../../etc/passwd");
  bogus.set_size_bytes(4);
  status = blobs.Upload(bogus, "abcd");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("not a SHA-256"));

  absl::StatusOr<std::vector<v1::Digest>> missing = blobs.FindMissing({digest});
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->size(), 1u) << "a corrupt upload was stored";
}

TEST_F(BadRequestTest, MalformedModelEndsInCompileErrorExitThree) {
  const std::string garbage = lab_.WriteFile("garbage.tflite", std::string(1000, '\x5a'));
  ClientResult r = lab_.RunClient({"submit", garbage, "--wait", "--json"});
  EXPECT_EQ(r.exit_code, 3) << r;
  absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
  ASSERT_TRUE(job.ok()) << job.status() << "\n" << r;
  EXPECT_EQ(job->state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(job->result(), v1::JOB_RESULT_COMPILE_ERROR);
  EXPECT_FALSE(job->message().empty());
  EXPECT_EQ(job->attempt(), 0) << "a model that does not compile went to a board";
}

// The request, not the model, is wrong: INVALID_REQUEST (exit 2, not COMPILE_ERROR's 3), never
// on a board; once the model is in the compile cache, the submit itself is refused.
TEST_F(BadRequestTest, AnInputOfTheWrongSizeIsAnInvalidRequestExitTwo) {
  const std::string input = lab_.WriteFile("short.bin", std::string(15, '\x01'));
  ClientResult r = lab_.RunClient({"submit", model_, "--input", input, "--wait", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r;
  absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
  ASSERT_TRUE(job.ok()) << job.status() << "\n" << r;
  EXPECT_EQ(job->result(), v1::JOB_RESULT_INVALID_REQUEST);
  EXPECT_EQ(job->message(), "input 0 has 15 bytes; the model's input 0 needs 16");
  EXPECT_EQ(job->attempt(), 0) << "a job with a wrong input went to a board";

  r = lab_.RunClient({"submit", model_, "--input", input, "--wait"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("input 0 has 15 bytes; the model's input 0 needs 16")) << r;
  absl::StatusOr<std::vector<v1::Job>> jobs = lab_.ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->size(), 1u) << "the refused submit created a job";
}

TEST_F(BadRequestTest, InvalidOptionsAreInvalidArgumentExitTwo) {
  grpc::Status status = Submit([](v1::JobSpec& spec) { spec.mutable_run()->set_atol(300); });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("atol 300"));

  status = Submit([](v1::JobSpec& spec) { spec.mutable_run()->set_iterations(-1); });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("iterations -1"));

  status = Submit([](v1::JobSpec& spec) { spec.mutable_compile()->set_target("no-such-target"); });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("no-such-target"));

  status = Submit([](v1::JobSpec& spec) { spec.set_priority(1000000); });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("priority"));

  ClientResult r = lab_.RunClient({"submit", model_, "--target", "no-such-target", "--wait"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("no-such-target")) << r;
  r = lab_.RunClient({"submit", model_, "--priority", "1000000", "--wait"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("priority")) << r;

  absl::StatusOr<std::vector<v1::Job>> jobs = lab_.ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_TRUE(jobs->empty()) << "a refused request made a job";
}

TEST_F(BadRequestTest, UnknownBoardTypeIsFailedPreconditionExitTwo) {
  grpc::Status status =
      Submit([](v1::JobSpec& spec) { spec.mutable_selector()->set_board_type("nosuch"); });
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("no board of type 'nosuch'"));
  EXPECT_THAT(status.error_message(), HasSubstr("imxrt700-sim"));

  ClientResult r = lab_.RunClient({"submit", model_, "--board-type", "nosuch", "--wait"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("no board of type 'nosuch'")) << r;
  // A pinned board that does not exist, likewise.
  r = lab_.RunClient({"submit", model_, "--board", "nosuch-sim-9", "--wait"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("nosuch-sim-9")) << r;
}

// A tenant at its limit of unfinished jobs: RESOURCE_EXHAUSTED naming the limit, exit 2.
TEST(TenantLimitTest, ASubmitOverTheLimitIsRefusedWithItsReason) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer({.config_yaml = "max_unfinished_jobs_per_tenant: 1\n"}));
  ASSERT_TRUE(lab.StartAgent("a", 1));
  ClientResult hold = lab.RunClient({"board", "maintenance", "a-sim-0", "on"});
  ASSERT_EQ(hold.exit_code, 0) << hold;
  const std::string model = lab.WriteFile("fc.tflite", FastModel());
  ClientResult waiting = lab.RunClient({"submit", model});  // stays queued: no board serves
  ASSERT_EQ(waiting.exit_code, 0) << waiting;

  ClientResult refused = lab.RunClient({"submit", model});
  EXPECT_EQ(refused.exit_code, 2) << refused;
  EXPECT_THAT(refused.err, HasSubstr("max_unfinished_jobs_per_tenant")) << refused;
  // What can run now: the board is in maintenance and one job waits for its type.
  ASSERT_TRUE(lab.WaitForJobs(1, v1::JOB_STATE_QUEUED, std::chrono::seconds(30)));
  ClientResult boards = lab.RunClient({"boards"});
  EXPECT_THAT(boards.out, HasSubstr("imxrt700-sim     1 board: 1 maintenance; 1 job queued"))
      << boards;

  ASSERT_EQ(lab.RunClient({"board", "maintenance", "a-sim-0", "off"}).exit_code, 0);
  ASSERT_TRUE(lab.WaitForJobs(1, v1::JOB_STATE_DONE, std::chrono::seconds(30)));
  ClientResult after = lab.RunClient({"submit", model, "--wait"});
  EXPECT_EQ(after.exit_code, 0) << after;
}

}  // namespace
}  // namespace boardlab::testing::service

namespace boardlab::testing::service {
namespace {

// Uploads of several chunks are hashed on a second thread of the server: they round-trip intact,
// and a corrupt or overlong one is refused the same way.
TEST(LargeUploadTest, RoundTripsAndRefusesCorruptOrOverlongUploads) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  api::BlobClient blobs(lab.Channel(), "");
  std::string bytes(9 << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 167) ^ (i >> 11));
  const v1::Digest digest = api::DigestOf(bytes);

  std::string corrupt = bytes;
  corrupt[5 << 20] ^= 1;  // in the second chunk
  absl::Status status = blobs.Upload(digest, corrupt);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(api::Sha256Hex(corrupt)));
  EXPECT_THAT(std::string(status.message()), HasSubstr("corrupt"));

  v1::Digest short_digest = digest;
  short_digest.set_size_bytes(2 << 20);
  status = blobs.Upload(short_digest, bytes);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(absl::StrCat("more than the announced ", 2 << 20, " bytes")));

  absl::StatusOr<std::vector<v1::Digest>> missing = blobs.FindMissing({digest});
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->size(), 1u) << "a corrupt or overlong upload was stored";

  ASSERT_TRUE(blobs.Upload(digest, bytes).ok());
  absl::StatusOr<std::string> downloaded = blobs.Get(digest);
  ASSERT_TRUE(downloaded.ok()) << downloaded.status();
  EXPECT_TRUE(*downloaded == bytes) << "the downloaded blob differs from the uploaded one";
}

// BlobClient sends each chunk's bytes from the caller's buffer through a hand-framed message:
// empty blobs, one byte, exactly one chunk and one byte more all arrive as they were sent.
TEST(LargeUploadTest, BlobsOfEveryShapeRoundTrip) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  api::BlobClient blobs(lab.Channel(), "");
  for (size_t size : {size_t{0}, size_t{1}, api::kBlobChunkBytes, api::kBlobChunkBytes + 1}) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i * 31 + size);
    const v1::Digest digest = api::DigestOf(bytes);
    ASSERT_TRUE(blobs.Upload(digest, bytes).ok()) << size << " bytes";
    absl::StatusOr<std::string> downloaded = blobs.Get(digest);
    ASSERT_TRUE(downloaded.ok()) << size << " bytes: " << downloaded.status();
    EXPECT_TRUE(*downloaded == bytes) << size << " bytes came back different";
  }
}

TEST(LargeUploadTest, AnUploadToNoServerIsUnavailable) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  auto channel = lab.Channel();
  lab.KillServer();
  api::BlobClient blobs(channel, "");
  const std::string bytes(100, 'x');
  absl::Status status = blobs.Upload(api::DigestOf(bytes), bytes);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
}

}  // namespace
}  // namespace boardlab::testing::service
