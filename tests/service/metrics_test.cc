// /metrics of a live server after real jobs: valid for promtool, and the counts add up.

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/service/harness.h"
#include "tests/support/process.h"

namespace boardlab::testing::service {
namespace {

constexpr char kPromtool[] = "/usr/bin/promtool";

TEST(MetricsTest, PromtoolAcceptsLiveMetricsAndTheCountsMatchTheJobs) {
  // deploy/install-deps installs promtool: its absence is a broken machine, not a reason to skip.
  ASSERT_EQ(::access(kPromtool, X_OK), 0)
      << kPromtool << " is missing: run the dependency install script (it installs prometheus)";
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ASSERT_TRUE(lab.StartAgent("a", 2));
  ASSERT_NE(lab.metrics_port(), 0);
  const std::string model = lab.WriteFile("fc.tflite", FastModel());

  constexpr int kPasses = 3;
  for (int i = 0; i < kPasses; ++i) {
    ClientResult r = lab.RunClient(
        {"submit", model, "--input", absl::StrCat("random:", i), "--expect-reference", "--wait"});
    ASSERT_EQ(r.exit_code, 0) << r;
  }
  // One wrong expected output: FAIL (exit 1).
  ClientResult reference =
      lab.RunClient({"submit", model, "--input", "random:0", "--expect-reference", "--wait",
                     "--out", lab.Path("ref")});
  ASSERT_EQ(reference.exit_code, 0) << reference;
  ClientResult fail = SubmitWithWrongExpectedOutput(lab, model, lab.Path("ref/output0.bin"));
  ASSERT_EQ(fail.exit_code, 1) << fail;
  // One model that does not compile (exit 3).
  ClientResult broken = SubmitModelThatDoesNotCompile(lab);
  ASSERT_EQ(broken.exit_code, 3) << broken;

  absl::StatusOr<std::string> metrics = lab.ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  const std::string file = lab.WriteFile("metrics.txt", *metrics);
  CommandResult check = RunCommand(absl::StrCat(kPromtool, " check metrics < '", file, "'"));
  EXPECT_EQ(check.exit_code, 0) << "promtool check metrics:\n" << check.output;

  const int passes = kPasses + 1;  // and the reference job
  EXPECT_EQ(MetricSum(*metrics, "boardlab_jobs_finished_total", {{"result", "pass"}}), passes);
  EXPECT_EQ(MetricSum(*metrics, "boardlab_jobs_finished_total", {{"result", "fail"}}), 1);
  EXPECT_EQ(MetricSum(*metrics, "boardlab_jobs_finished_total", {{"result", "compile_error"}}), 1);
  EXPECT_EQ(MetricSum(*metrics, "boardlab_jobs_finished_total"), passes + 2);
  EXPECT_EQ(MetricSum(*metrics, "boardlab_jobs_submitted_total"), passes + 2);
  EXPECT_EQ(MetricSum(*metrics, "boardlab_agents_connected"), 1);
  EXPECT_EQ(MetricSum(*metrics, "boardlab_boards", {{"state", "idle"}}), 2);
  EXPECT_EQ(MetricSum(*metrics, "boardlab_boards", {{"state", "busy"}}).value_or(0), 0);
  EXPECT_EQ(MetricSum(*metrics, "boardlab_scheduler_queue_depth").value_or(0), 0);
  // Every job that reached a board waited in the queue once.
  EXPECT_EQ(MetricSum(*metrics, "boardlab_scheduler_queue_wait_seconds_count"), passes + 1);
  // Nothing is left unfinished.
  EXPECT_EQ(MetricSum(*metrics, "boardlab_jobs").value_or(0), 0);
  // The same model compiled once; the other jobs hit the cache (or joined the compile).
  EXPECT_GE(MetricSum(*metrics, "boardlab_compile_cache_requests_total", {{"outcome", "hit"}})
                .value_or(0),
            1);
  EXPECT_GT(MetricSum(*metrics, "boardlab_blob_store_bytes").value_or(0), 0);
  EXPECT_GT(MetricSum(*metrics, "boardlab_blob_uploaded_bytes_total").value_or(0), 0);
}

}  // namespace
}  // namespace boardlab::testing::service
