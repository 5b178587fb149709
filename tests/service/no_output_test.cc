// "No output yet" through the real processes: a CIRCULAR_BUFFER model (every other inference
// ends early, as TFLite Micro's kTfLiteAbort) submitted to a live server with one sim board.
// A job whose last inference ended early is NO_OUTPUT (exit 0), its wrong expected output not
// judged, and every view says so: the client's text and JSON, the JUnit report (a skipped
// case, valid for the schema), the job's WatchJob events and /metrics (promtool accepts it).
// With one more iteration the outputs are judged again; in a many-case job only the cases that
// ended early are "no output".

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/harness.h"
#include "tests/support/process.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

namespace boardlab::testing::service {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Bytes = std::vector<uint8_t>;

constexpr char kPromtool[] = "/usr/bin/promtool";

const Bytes kWrong(12, 0x7f);
// The buffer after two inferences of input {1,2,3}: the input in its last two slots.
const Bytes kAfterTwo = {0, 0, 0, 0, 0, 0, 1, 2, 3, 1, 2, 3};

std::string ReadText(const std::string& path) {
  const std::vector<uint8_t> bytes = ReadFile(path);
  return std::string(bytes.begin(), bytes.end());
}

class NoOutputServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(lab_.StartServer());
    ASSERT_TRUE(lab_.StartAgent("a", 1));
    model_ = lab_.WriteFile("cb.tflite", CircularBufferModel());
    input_ = lab_.WriteFile("in.bin", Bytes{1, 2, 3});
  }

  // `boardlab submit MODEL ARGS... --wait --junit junit.xml`, then the report checked against
  // the JUnit schema; the report's text is returned in `xml`.
  ClientResult SubmitWithJunit(std::vector<std::string> args, std::string& xml) {
    const std::string junit = lab_.Path("junit.xml");
    args.insert(args.begin(), {"submit", model_});
    args.insert(args.end(), {"--wait", "--junit", junit});
    ClientResult r = lab_.RunClient(args, std::chrono::seconds(120));
    xml = ReadText(junit);
    const CommandResult valid =
        RunCommand("xmllint --noout --schema " + RepoDir() + "/tests/cli/junit.xsd " + junit);
    EXPECT_EQ(valid.exit_code, 0) << valid.output;
    return r;
  }

  ServiceLab lab_;
  std::string model_, input_;
};

TEST_F(NoOutputServiceTest, EarlyEndedInferenceIsNoOutputInEveryView) {
  ASSERT_EQ(::access(kPromtool, X_OK), 0) << kPromtool << " is missing: run deploy/install-deps.sh";
  const std::string wrong = lab_.WriteFile("wrong.bin", kWrong);
  std::string xml;
  ClientResult r = SubmitWithJunit({"--input", input_, "--expected", wrong}, xml);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("NO_OUTPUT job ")) << r;
  EXPECT_THAT(r.out, HasSubstr("no output yet: a streaming op ended the last inference early"))
      << r;

  ClientResult json = lab_.RunClient({"jobs", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json;
  EXPECT_THAT(json.out, HasSubstr("\"result\":\"JOB_RESULT_NO_OUTPUT\"")) << json;
  absl::StatusOr<std::vector<v1::Job>> jobs = lab_.ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  const v1::Job job = jobs->front();
  EXPECT_EQ(job.result(), v1::JOB_RESULT_NO_OUTPUT);
  EXPECT_EQ(job.checks_size(), 0) << "the outputs of an inference that ended early were judged";

  // WatchJob: the final event carries the verdict.
  absl::StatusOr<std::vector<v1::JobEvent>> events = lab_.Events(job.id());
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_FALSE(events->empty());
  ASSERT_TRUE(events->back().has_finished());
  EXPECT_EQ(events->back().finished().result(), v1::JOB_RESULT_NO_OUTPUT);

  EXPECT_THAT(xml, HasSubstr("<skipped message=\"no output yet")) << xml;
  EXPECT_THAT(xml, HasSubstr("skipped=\"1\"")) << xml;

  absl::StatusOr<std::string> metrics = lab_.ScrapeMetrics();
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  const std::string file = lab_.WriteFile("metrics.txt", *metrics);
  const CommandResult check = RunCommand(absl::StrCat(kPromtool, " check metrics < '", file, "'"));
  EXPECT_EQ(check.exit_code, 0) << "promtool check metrics:\n" << check.output;
  EXPECT_EQ(MetricSum(*metrics, "boardlab_jobs_finished_total", {{"result", "no_output"}}), 1);

  // Two iterations: the second runs the buffer, and its outputs are judged again.
  const std::string right = lab_.WriteFile("right.bin", kAfterTwo);
  ClientResult pass = lab_.RunClient(
      {"submit", model_, "--input", input_, "--expected", right, "--iterations", "2", "--wait"},
      std::chrono::seconds(120));
  EXPECT_EQ(pass.exit_code, 0) << pass;
  EXPECT_THAT(pass.out, HasSubstr("PASS   job ")) << pass;
  ClientResult fail = lab_.RunClient(
      {"submit", model_, "--input", input_, "--expected", wrong, "--iterations", "2", "--wait"},
      std::chrono::seconds(120));
  EXPECT_EQ(fail.exit_code, 1) << fail;
}

// Cases run on one load: the first of each pair ends early. Those are "no output" (not judged
// against their wrong expected bytes), the job passes on the others.
TEST_F(NoOutputServiceTest, ManyCaseJobJudgesOnlyTheCasesWithOutput) {
  const std::string in = lab_.Path("in"), expected = lab_.Path("expected");
  fs::create_directories(in);
  fs::create_directories(expected);
  ASSERT_TRUE(WriteFile(in + "/a.bin", Bytes{1, 2, 3}));
  ASSERT_TRUE(WriteFile(expected + "/a.bin", kWrong));
  ASSERT_TRUE(WriteFile(in + "/b.bin", Bytes{1, 2, 3}));
  ASSERT_TRUE(WriteFile(expected + "/b.bin", kAfterTwo));
  std::string xml;
  ClientResult r = SubmitWithJunit({"--inputs", in, "--expected", expected}, xml);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("case a: NO OUTPUT YET")) << r;
  EXPECT_THAT(r.out, HasSubstr("cases: 1 of 2 passed, 1 no output yet")) << r;
  absl::StatusOr<std::vector<v1::Job>> jobs = lab_.ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_FALSE(jobs->empty());
  const v1::Job& job = jobs->front();
  EXPECT_EQ(job.result(), v1::JOB_RESULT_PASS) << job.message();
  ASSERT_EQ(job.cases_size(), 2);
  EXPECT_TRUE(job.cases(0).no_output());
  EXPECT_FALSE(job.cases(0).passed());
  EXPECT_EQ(job.cases(0).checks_size(), 0);
  EXPECT_FALSE(job.cases(1).no_output());
  EXPECT_TRUE(job.cases(1).passed());
  EXPECT_EQ(job.case_summary().no_output(), 1);
  EXPECT_EQ(job.case_summary().passed(), 1);
  EXPECT_THAT(xml, HasSubstr("<property name=\"cases_no_output\" value=\"1\"/>")) << xml;
}

}  // namespace
}  // namespace boardlab::testing::service
