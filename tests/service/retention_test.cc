// Retention on a live server: a finished job past its retention disappears with its blobs, while
// a job still on the server keeps what it refers to.

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/support/blob_client.h"
#include "proto/support/digest.h"
#include "tests/service/harness.h"

namespace boardlab::testing::service {
namespace {

// Starts a server with `retention_yaml` and an agent with one board, and runs one passing job.
absl::StatusOr<v1::Job> RunOneJob(ServiceLab& lab, const std::string& retention_yaml) {
  if (!lab.StartServer({.config_yaml = "retention:\n" + retention_yaml})) {
    return absl::InternalError("the server did not start");
  }
  if (!lab.StartAgent("a", 1)) return absl::InternalError("the agent did not start");
  ClientResult r =
      lab.RunClient({"submit", lab.WriteFile("fc.tflite", FastModel()), "--wait", "--json"});
  if (r.exit_code != 0) return absl::InternalError(absl::StrCat("the job failed: ", r.err));
  return ParseJobJson(r.out);
}

TEST(RetentionTest, ExpiredJobsAndTheirBlobsAreDeleted) {
  ServiceLab lab;
  // Jobs expire a second after they end; blobs after two seconds unused.
  absl::StatusOr<v1::Job> job = RunOneJob(lab,
                                          "  finished_jobs_seconds: 1\n"
                                          "  unused_blobs_seconds: 2\n"
                                          "  sweep_interval_seconds: 1\n");
  ASSERT_TRUE(job.ok()) << job.status();
  std::vector<v1::Digest> blobs = {job->spec().model(), job->files().artifact(),
                                   job->files().log()};
  api::BlobClient client(lab.Channel(), "");
  // On a loaded machine the first sweep may already have run when the client returns. A blob of
  // a job still on the server is never deleted, so blobs missing here are only right if the job
  // is gone too (it is asked after the blobs, so a sweep in between cannot fool it).
  auto missing = client.FindMissing(blobs);
  ASSERT_TRUE(missing.ok()) << missing.status();
  if (!missing->empty()) {
    ASSERT_EQ(lab.GetJob(job->id()).status().code(), absl::StatusCode::kNotFound)
        << missing->size() << " of the job's blobs are missing while the job is still kept";
  }

  EXPECT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<v1::Job> gone = lab.GetJob(job->id());
        return gone.status().code() == absl::StatusCode::kNotFound;
      },
      std::chrono::seconds(20), "the job to expire"));
  EXPECT_TRUE(WaitFor(
      [&] {
        auto now_missing = client.FindMissing(blobs);
        return now_missing.ok() && now_missing->size() == blobs.size();
      },
      std::chrono::seconds(20), "the job's blobs to be deleted"));
  ClientResult status = lab.RunClient({"status", job->id()});
  EXPECT_NE(status.exit_code, 0) << status;
  EXPECT_THAT(status.err, ::testing::HasSubstr(job->id())) << status;

  absl::StatusOr<std::string> metrics = lab.ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricSum(*metrics, "boardlab_retention_deleted_jobs_total"), 1);
  EXPECT_GE(MetricSum(*metrics, "boardlab_retention_deleted_blobs_total").value_or(0),
            static_cast<double>(blobs.size()));
  EXPECT_GT(MetricSum(*metrics, "boardlab_retention_deleted_bytes_total").value_or(0), 0);

  // The same model again: uploaded anew, compiled anew (the cache entry's artifact is gone),
  // and it passes.
  ClientResult again = lab.RunClient({"submit", lab.Path("fc.tflite"), "--wait"});
  EXPECT_EQ(again.exit_code, 0) << again;
}

TEST(RetentionTest, BlobsOfKeptJobsStay) {
  ServiceLab lab;
  // Jobs are kept for a month; blobs nothing refers to go after a second.
  absl::StatusOr<v1::Job> job = RunOneJob(lab,
                                          "  unused_blobs_seconds: 1\n"
                                          "  sweep_interval_seconds: 1\n");
  ASSERT_TRUE(job.ok()) << job.status();
  api::BlobClient client(lab.Channel(), "");
  absl::StatusOr<v1::Digest> orphan = client.Put("uploaded and never used");
  ASSERT_TRUE(orphan.ok()) << orphan.status();

  EXPECT_TRUE(WaitFor(
      [&] {
        auto missing = client.FindMissing({*orphan});
        return missing.ok() && missing->size() == 1;
      },
      std::chrono::seconds(20), "the unreferenced blob to be deleted"));
  auto missing = client.FindMissing(
      {job->spec().model(), job->files().artifact(), job->files().report(), job->files().log()});
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_TRUE(missing->empty()) << missing->size() << " blobs of a kept job were deleted";
  EXPECT_TRUE(lab.GetJob(job->id()).ok());
}

}  // namespace
}  // namespace boardlab::testing::service
