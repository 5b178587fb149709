// CI gates through the real processes (docs/ci.md): budgets judged by the server, so that the
// verdict `boardlab submit --wait` prints, `boardlab watch`, job.json and the stored job agree.

#include <fstream>
#include <sstream>
#include <string>

#include "boardlab/v1/job_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/support/digest.h"
#include "tests/service/harness.h"

namespace boardlab::testing::service {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class GatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(lab_.StartServer());
    ASSERT_TRUE(lab_.StartAgent("a", 1));
    model_ = lab_.WriteFile("fc.tflite", FastModel());
  }

  ServiceLab lab_;
  std::string model_;
};

TEST_F(GatesTest, GenerousBudgetsPassWithACheckLineEach) {
  const std::string out = lab_.Path("pass");
  ClientResult r = lab_.RunClient({"submit", model_, "--expect-reference", "--max-latency-us",
                                   "1000000", "--max-sram", "100000000", "--max-flash", "100000000",
                                   "--min-npu-macs", "0", "--wait", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r;
  for (const char* name : {"latency", "sram", "flash", "npu_macs"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("  budget ") + name + " ")) << r;
  }
  EXPECT_THAT(r.out, Not(HasSubstr(": FAIL"))) << r;
  absl::StatusOr<v1::Job> job = ParseJobJson(ReadText(out + "/job.json"));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS);
  ASSERT_EQ(job->budget_checks_size(), 4);
  for (const v1::BudgetCheck& check : job->budget_checks()) {
    EXPECT_TRUE(check.passed()) << check.ShortDebugString();
    EXPECT_TRUE(check.has_measured()) << check.ShortDebugString();
    EXPECT_GT(check.measured(), check.name() == "npu_macs" ? -1 : 0) << check.ShortDebugString();
  }
}

TEST_F(GatesTest, AFailedBudgetFailsTheJobAndEveryViewSaysSo) {
  const std::string out = lab_.Path("fail");
  ClientResult r = lab_.RunClient({"submit", model_, "--expect-reference", "--max-latency-us",
                                   "0.001", "--max-flash", "100000000", "--wait", "--out", out});
  ASSERT_EQ(r.exit_code, 1) << r;
  EXPECT_THAT(r.out, HasSubstr("budget failed: latency ")) << r;
  EXPECT_THAT(r.out, HasSubstr(" <= 0.001 us: FAIL")) << r;
  EXPECT_THAT(r.out, HasSubstr("  output 0: pass")) << "the outputs still match";
  absl::StatusOr<v1::Job> file_job = ParseJobJson(ReadText(out + "/job.json"));
  ASSERT_TRUE(file_job.ok()) << file_job.status();
  absl::StatusOr<v1::Job> stored = lab_.GetJob(file_job->id());
  ASSERT_TRUE(stored.ok()) << stored.status();
  for (const v1::Job* job : {&*file_job, &*stored}) {
    EXPECT_EQ(job->result(), v1::JOB_RESULT_FAIL);
    EXPECT_THAT(job->message(), HasSubstr("budget failed: latency"));
    ASSERT_EQ(job->budget_checks_size(), 2);
    EXPECT_FALSE(job->budget_checks(0).passed());
    EXPECT_TRUE(job->budget_checks(1).passed());
  }
  EXPECT_THAT(r.out, HasSubstr(" us (simulated RT700) <= 0.001 us: FAIL")) << r;
  EXPECT_EQ(file_job->budget_checks(0).clock(), "simulated RT700");
  ClientResult watch = lab_.RunClient({"watch", file_job->id()});
  EXPECT_EQ(watch.exit_code, 1) << watch;
  EXPECT_THAT(watch.out, HasSubstr("  budget latency ")) << watch;
  EXPECT_THAT(watch.out, HasSubstr("  budget flash ")) << watch;
}

TEST_F(GatesTest, TheServerRefusesBadBudgetsFromTheApi) {
  // The client checks its options; a caller of the API is checked by the server.
  ClientResult first = lab_.RunClient({"submit", model_, "--expect-reference", "--wait"});
  ASSERT_EQ(first.exit_code, 0) << first;  // the model is in the store now
  std::unique_ptr<v1::JobService::Stub> stub = v1::JobService::NewStub(lab_.Channel());
  v1::SubmitJobRequest request;
  const std::vector<uint8_t> model = FastModel();
  *request.mutable_spec()->mutable_model() =
      api::DigestOf(std::string_view(reinterpret_cast<const char*>(model.data()), model.size()));
  request.mutable_spec()->mutable_budgets()->set_min_npu_macs_percent(120);
  grpc::ClientContext context;
  v1::SubmitJobResponse response;
  grpc::Status status = stub->SubmitJob(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("min_npu_macs_percent"));
}

}  // namespace
}  // namespace boardlab::testing::service
