// Many cases in one job through the real processes (docs/client.md, "Many cases in one job"):
// `boardlab submit --inputs DIR --expected DIR` on a live server with one sim board, the KWS
// model and TFLM's golden outputs. A wrong expected file fails its case only; the verdict, the
// aggregate, the exit code, job.json, `--out`, `boardlab status` and the JUnit report say so;
// the board loads the artifact once; bad directories are refused before anything is uploaded.

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/harness.h"
#include "tests/support/process.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_paths.h"

namespace boardlab::testing::service {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadText(const std::string& path) {
  const std::vector<uint8_t> bytes = ReadFile(path);
  return std::string(bytes.begin(), bytes.end());
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class CasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::optional<std::string> model = SharedModelPath("mlperf-tiny/kws_dscnn_int8.tflite");
    golden_ = (fs::path(SharedModelsDir()).parent_path() / "golden" / "kws_dscnn_int8").string();
    if (!model || !fs::is_regular_file(golden_ + "/seed4.output.bin")) {
      GTEST_SKIP() << "shared KWS model or its golden files absent: " << SharedModelsDir();
    }
    model_ = *model;
    ASSERT_TRUE(lab_.StartServer());
    ASSERT_TRUE(lab_.StartAgent("a", 1));
    // Five cases: the four golden ones and seed1's input once more under another name (its file
    // is uploaded once: the store is content-addressed).
    in_ = lab_.Path("in");
    expected_ = lab_.Path("expected");
    fs::create_directories(in_);
    fs::create_directories(expected_);
    for (int k = 1; k <= 4; ++k) Copy("seed" + std::to_string(k), "seed" + std::to_string(k));
    Copy("seed1", "seed1_again");
  }

  // Case `name` with the golden input and expected output of `golden_case`.
  void Copy(const std::string& golden_case, const std::string& name) {
    fs::copy_file(golden_ + "/" + golden_case + ".input.bin", in_ + "/" + name + ".bin",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(golden_ + "/" + golden_case + ".output.bin", expected_ + "/" + name + ".bin",
                  fs::copy_options::overwrite_existing);
  }

  ServiceLab lab_;
  std::string model_, golden_, in_, expected_;
};

TEST_F(CasesTest, AWrongExpectedFileFailsItsCaseAndEveryViewSaysSo) {
  // seed3 checked against seed1's output: another class (top-1 11, not 9).
  fs::copy_file(golden_ + "/seed1.output.bin", expected_ + "/seed3.bin",
                fs::copy_options::overwrite_existing);
  const std::string out = lab_.Path("out");
  const std::string junit = lab_.Path("junit.xml");
  ClientResult r =
      lab_.RunClient({"submit", model_, "--inputs", in_, "--expected", expected_,
                      "--max-latency-us", "100000", "--wait", "--out", out, "--junit", junit},
                     std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 1) << r;
  // Four inputs and three expected outputs: seed1_again shares seed1's files, seed3 its output.
  EXPECT_THAT(r.err, HasSubstr("case files: 7 distinct, 7 to upload")) << r;
  EXPECT_THAT(r.out, HasSubstr("FAIL   job ")) << r;
  EXPECT_THAT(r.out, HasSubstr("1 of 5 cases failed: seed3 (output 0: max abs diff ")) << r;
  EXPECT_THAT(r.out, HasSubstr("  case seed1: PASS (output 0: max abs diff 0; top-1 11 agrees)"))
      << r;
  EXPECT_THAT(r.out, HasSubstr("  case seed3: FAIL (output 0: max abs diff ")) << r;
  EXPECT_THAT(r.out, HasSubstr("top-1 9, expected 11)")) << r;
  EXPECT_THAT(r.out, HasSubstr("  cases: 4 of 5 passed, max abs diff ")) << r;
  EXPECT_THAT(r.out, HasSubstr("(case seed3), top-1 agreement 80.0% (4 of 5)")) << r;
  EXPECT_THAT(r.out, HasSubstr("  budget latency ")) << r;
  EXPECT_THAT(r.out, HasSubstr("(slowest of 5 cases: ")) << r;

  absl::StatusOr<v1::Job> job = ParseJobJson(ReadText(out + "/job.json"));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_FAIL);
  ASSERT_EQ(job->cases_size(), 5);
  // In name order: seed1, seed1_again, seed2, seed3, seed4.
  EXPECT_EQ(job->cases(1).name(), "seed1_again");
  EXPECT_EQ(job->cases(3).name(), "seed3");
  EXPECT_FALSE(job->cases(3).passed());
  EXPECT_EQ(job->cases(3).top1(), 9);
  EXPECT_EQ(job->cases(3).top1_expected(), 11);
  EXPECT_TRUE(job->cases(1).passed());
  EXPECT_EQ(job->case_summary().cases(), 5);
  EXPECT_EQ(job->case_summary().passed(), 4);
  EXPECT_EQ(job->case_summary().top1_agreed(), 4);
  EXPECT_EQ(job->case_summary().max_abs_diff_case(), "seed3");
  EXPECT_GT(job->inference_us(), 0);
  EXPECT_EQ(job->inference_us(), job->case_summary().slowest_us());
  ASSERT_EQ(job->budget_checks_size(), 1);
  EXPECT_TRUE(job->budget_checks(0).passed());
  EXPECT_EQ(job->files().outputs_size(), 0);
  // The board's outputs, per case: TFLM's golden bytes (seed3's too: only its expected was wrong).
  for (const char* name : {"seed1", "seed2", "seed3", "seed4", "seed1_again"}) {
    const std::string golden_case = std::string(name) == "seed1_again" ? "seed1" : name;
    EXPECT_EQ(ReadFile(out + "/cases/" + name + "/output0.bin"),
              ReadFile(golden_ + "/" + golden_case + ".output.bin"))
        << name;
  }
  // One load on the board: one request to the sim runner for all five cases, each case one run.
  absl::StatusOr<std::vector<v1::JobEvent>> events = lab_.Events(job->id());
  ASSERT_TRUE(events.ok()) << events.status();
  std::string log;
  for (const v1::JobEvent& event : *events) log += event.log() + "\n";
  EXPECT_EQ(Count(log, "boardlab-run --serve <<< "), 1u) << log;
  EXPECT_THAT(ReadText(out + "/profile.json"), HasSubstr("\"iterations\": 5"));

  ClientResult status = lab_.RunClient({"status", job->id()});
  EXPECT_EQ(status.exit_code, 1) << status;
  EXPECT_THAT(status.out, HasSubstr("cases: 4 of 5 passed")) << status;

  const std::string xml = ReadText(junit);
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"case seed3\""));
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"case seed1_again\""));
  EXPECT_THAT(xml, HasSubstr("<property name=\"cases_passed\" value=\"4/5\"/>"));
  EXPECT_THAT(xml, HasSubstr("<property name=\"top1_agreement_percent\" value=\"80.0\"/>"));
  const CommandResult valid =
      RunCommand("xmllint --noout --schema " + RepoDir() + "/tests/cli/junit.xsd " + junit);
  EXPECT_EQ(valid.exit_code, 0) << valid.output;
}

TEST_F(CasesTest, ExpectReferenceComparesEveryCaseWithTheReferenceRun) {
  ClientResult r =
      lab_.RunClient({"submit", model_, "--inputs", in_, "--expect-reference", "--wait", "--json"},
                     std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r;
  absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message();
  EXPECT_EQ(job->message(), "5 cases: outputs match (atol 0)");
  // The server filled in each case's expected output from the CPU-only reference run: TFLM's
  // golden bytes.
  ASSERT_EQ(job->spec().run().cases_size(), 5);
  absl::StatusOr<std::vector<v1::JobEvent>> events = lab_.Events(job->id());
  ASSERT_TRUE(events.ok()) << events.status();
  bool logged = false;
  for (const v1::JobEvent& event : *events) {
    logged =
        logged || event.log().find("reference outputs computed on the host") != std::string::npos;
  }
  EXPECT_TRUE(logged);
  const v1::CaseSummary& summary = job->case_summary();
  EXPECT_EQ(summary.cases(), 5);
  EXPECT_EQ(summary.passed(), 5);
  EXPECT_EQ(summary.verified(), 5);
  EXPECT_EQ(summary.max_abs_diff(), 0);
  EXPECT_EQ(summary.top1_agreed(), 5);
  const std::string out = lab_.Path("ref_out");
  ClientResult watch = lab_.RunClient({"watch", job->id(), "--out", out});
  EXPECT_EQ(watch.exit_code, 0) << watch;
  for (int k = 1; k <= 4; ++k) {
    const std::string name = "seed" + std::to_string(k);
    EXPECT_EQ(ReadFile(out + "/cases/" + name + "/output0.bin"),
              ReadFile(golden_ + "/" + name + ".output.bin"))
        << name;
  }
}

TEST_F(CasesTest, BadDirectoriesAreRefusedBeforeAnythingIsUploaded) {
  fs::resize_file(expected_ + "/seed2.bin", 11);
  ClientResult r = lab_.RunClient({"submit", model_, "--inputs", in_, "--expected", expected_});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("seed2.bin' has 11 bytes; expected output 0 of the model "
                               "(int8 [1,12]) takes 12"))
      << r;
  fs::remove(expected_ + "/seed2.bin");
  r = lab_.RunClient({"submit", model_, "--inputs", in_, "--expected", expected_});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("case 'seed2' has no expected output in")) << r;
  r = lab_.RunClient({"submit", model_, "--inputs", lab_.Path("absent")});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, HasSubstr("absent': not a directory")) << r;
  r = lab_.RunClient({"submit", model_, "--inputs", in_, "--input", "random:1"});
  EXPECT_EQ(r.exit_code, 2) << r;
  EXPECT_THAT(r.err, Not(HasSubstr("uploading"))) << r;
  absl::StatusOr<std::vector<v1::Job>> jobs = lab_.ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_TRUE(jobs->empty()) << "no job was submitted";
  absl::StatusOr<std::string> metrics = lab_.ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(MetricSum(*metrics, "boardlab_blob_uploaded_bytes_total").value_or(0), 0)
      << "nothing was uploaded";
}

}  // namespace
}  // namespace boardlab::testing::service
