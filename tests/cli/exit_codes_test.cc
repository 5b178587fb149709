// The exit codes CI jobs branch on (docs/client.md).

#include "cli/exit_codes.h"

#include <gtest/gtest.h>

namespace boardlab::cli {
namespace {

TEST(ExitCodeForResult, FollowsTheVerdict) {
  EXPECT_EQ(ExitCodeForResult(v1::JOB_RESULT_PASS), 0);
  EXPECT_EQ(ExitCodeForResult(v1::JOB_RESULT_FAIL), 1);
  EXPECT_EQ(ExitCodeForResult(v1::JOB_RESULT_COMPILE_ERROR), 3);
  EXPECT_EQ(ExitCodeForResult(v1::JOB_RESULT_RUN_ERROR), 4);
  EXPECT_EQ(ExitCodeForResult(v1::JOB_RESULT_INFRA_ERROR), 5);
  EXPECT_EQ(ExitCodeForResult(v1::JOB_RESULT_QUEUE_TIMEOUT), 5);
  EXPECT_EQ(ExitCodeForResult(v1::JOB_RESULT_CANCELLED), 6);
  // Not a failure: the model waits for more input (boardlab-run exits 0 too).
  EXPECT_EQ(ExitCodeForResult(v1::JOB_RESULT_NO_OUTPUT), 0);
  EXPECT_EQ(ExitCodeForResult(v1::JOB_RESULT_UNSPECIFIED), 5);
  EXPECT_EQ(ExitCodeForResult(static_cast<v1::JobResult>(99)), 5);  // a newer server's verdict
}

TEST(ExitCodeForStatus, CallerErrorsAreTwoServiceErrorsFive) {
  EXPECT_EQ(ExitCodeForStatus(absl::OkStatus()), 0);
  EXPECT_EQ(ExitCodeForStatus(absl::InvalidArgumentError("")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::NotFoundError("")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::FailedPreconditionError("")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::UnauthenticatedError("")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::PermissionDeniedError("")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::ResourceExhaustedError("")), 2);
  EXPECT_EQ(ExitCodeForStatus(absl::UnavailableError("")), 5);
  EXPECT_EQ(ExitCodeForStatus(absl::DeadlineExceededError("")), 5);
  EXPECT_EQ(ExitCodeForStatus(absl::InternalError("")), 5);
  EXPECT_EQ(ExitCodeForStatus(absl::UnknownError("")), 5);
  EXPECT_EQ(ExitCodeForStatus(absl::DataLossError("")), 5);
  EXPECT_EQ(ExitCodeForStatus(absl::CancelledError("")), 6);
}

TEST(VerdictName, NamesEveryResult) {
  EXPECT_EQ(VerdictName(v1::JOB_RESULT_PASS), "PASS");
  EXPECT_EQ(VerdictName(v1::JOB_RESULT_QUEUE_TIMEOUT), "QUEUE_TIMEOUT");
  EXPECT_EQ(VerdictName(v1::JOB_RESULT_NO_OUTPUT), "NO_OUTPUT");
  EXPECT_EQ(VerdictName(v1::JOB_RESULT_UNSPECIFIED), "UNKNOWN");
}

TEST(FailWithStatus, SaysWhatFailedAndWhatToDo) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(FailWithStatus(absl::UnauthenticatedError("no token"), "submitting the job", "h:1"), 2);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "boardlab: submitting the job: no token; pass a valid token with --token or "
            "BOARDLAB_TOKEN\n");
}

TEST(FailWithStatus, NoHintWhenTheServerAlreadySaysWhatToDo) {
  ::testing::internal::CaptureStderr();
  FailWithStatus(absl::UnauthenticatedError("no bearer token: pass --token"), "listing jobs",
                 "h:1");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "boardlab: listing jobs: no bearer token: pass --token\n");
}

}  // namespace
}  // namespace boardlab::cli
