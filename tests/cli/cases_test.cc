// Many cases in one job on the client's side: `submit --inputs DIR --expected DIR` and `--cases`
// build RunSpec.cases from real .tflite models' tensors, refuse bad case files before any call
// to the server, and the verdict, `--out` and JUnit show each case and the aggregate.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/junit.h"
#include "cli/model_io_tflite.h"
#include "cli/submit.h"
#include "cli/tables.h"
#include "proto/support/case_results.h"
#include "proto/support/digest.h"
#include "tests/cli/fake_boardlab_server.h"
#include "tests/support/process.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

namespace boardlab::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string ModelFile(const std::string& name, const std::vector<uint8_t>& bytes) {
  return testing::WriteTestFile(name, std::string(bytes.begin(), bytes.end()));
}

class SubmitCasesTest : public testing::CliTest {
 protected:
  void SetUp() override {
    // FULLY_CONNECTED [1,16] -> [1,10].
    model_ = ModelFile("cases_fc.tflite", boardlab::testing::SingleFullyConnected());
    dir_ =
        fs::path(testing::WriteTestFile("cases_marker", "")).parent_path() /
        ("cases_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    File("in/a.bin", std::string(16, 'a'));
    File("in/b.bin", std::string(16, 'b'));
    File("exp/a.bin", std::string(10, 'A'));
    File("exp/b.bin", std::string(10, 'A'));  // the same bytes as a's
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string File(const std::string& relative, const std::string& bytes) {
    const fs::path path = dir_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }
  std::string Path(const std::string& relative) const { return (dir_ / relative).string(); }

  std::string model_;
  fs::path dir_;
};

TEST_F(SubmitCasesTest, DirectoriesBecomeTheJobsCases) {
  SubmitArgs args;
  args.model = model_;
  args.inputs_dir = Path("in");
  args.expected = {Path("exp")};
  absl::StatusOr<PreparedSubmit> prepared = PrepareSubmit(args);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const v1::RunSpec& run = prepared->request.spec().run();
  EXPECT_EQ(run.inputs_size(), 0);
  EXPECT_EQ(run.expected_size(), 0);
  ASSERT_EQ(run.cases_size(), 2);
  EXPECT_EQ(run.cases(0).name(), "a");
  EXPECT_EQ(run.cases(1).name(), "b");
  EXPECT_EQ(run.cases(1).inputs(0).blob().sha256(), api::Sha256Hex(std::string(16, 'b')));
  EXPECT_EQ(run.cases(1).expected(0).sha256(), run.cases(0).expected(0).sha256());
  for (const LocalBlob& blob : prepared->blobs) {
    EXPECT_EQ(blob.case_file, blob.what.rfind("model", 0) != 0) << blob.what;
  }
}

TEST_F(SubmitCasesTest, SubmitUploadsEachDistinctCaseFileOnceInOneLine) {
  ASSERT_EQ(Run({"submit", model_, "--inputs", Path("in"), "--expected", Path("exp")}), 0) << err_;
  // model, two inputs, one expected output (both cases expect the same bytes).
  EXPECT_EQ(server_.artifacts().uploaded().size(), 4u);
  EXPECT_THAT(err_, HasSubstr("case files: 3 distinct, 3 to upload (42 B)"));
  EXPECT_THAT(err_, Not(HasSubstr("uploading input")));
  ASSERT_EQ(server_.jobs().submits().size(), 1u);
  EXPECT_EQ(server_.jobs().submits()[0].spec().run().cases_size(), 2);
}

TEST_F(SubmitCasesTest, ManifestAndExpectReference) {
  const std::string manifest =
      File("cases.json", R"({"cases": [{"name": "x", "inputs": ["in/a.bin"]},
                                       {"name": "y", "inputs": ["random:4"]}]})");
  ASSERT_EQ(Run({"submit", model_, "--cases", manifest, "--expect-reference"}), 0) << err_;
  const std::vector<v1::SubmitJobRequest> submits = server_.jobs().submits();
  ASSERT_EQ(submits.size(), 1u);
  const v1::RunSpec& run = submits[0].spec().run();
  EXPECT_TRUE(run.expect_reference());
  ASSERT_EQ(run.cases_size(), 2);
  EXPECT_EQ(run.cases(1).inputs(0).random_seed(), 4u);
  EXPECT_EQ(run.cases(1).expected_size(), 0);
}

TEST_F(SubmitCasesTest, BadCaseFilesAreRefusedBeforeAnyCall) {
  File("exp/b.bin", std::string(9, 'A'));
  EXPECT_EQ(Run({"submit", model_, "--inputs", Path("in"), "--expected", Path("exp")}), 2);
  EXPECT_THAT(err_, HasSubstr("exp/b.bin' has 9 bytes; expected output 0 of the model "
                              "(int8 [1,10]) takes 10"));
  File("exp/b.bin", std::string(10, 'A'));
  File("exp/c.bin", std::string(10, 'A'));
  EXPECT_EQ(Run({"submit", model_, "--inputs", Path("in"), "--expected", Path("exp")}), 2);
  EXPECT_THAT(err_, HasSubstr("exp/c.bin': no case 'c' in the inputs"));
  EXPECT_EQ(Run({"submit", model_, "--inputs", Path("in"), "--expected", Path("exp"), Path("in")}),
            2);
  EXPECT_THAT(err_, HasSubstr("--expected names one directory"));
  fs::remove(Path("exp/b.bin"));
  fs::remove(Path("exp/c.bin"));
  EXPECT_EQ(Run({"submit", model_, "--inputs", Path("in"), "--expected", Path("exp")}), 2);
  EXPECT_THAT(err_, HasSubstr("case 'b' has no expected output in"));
  fs::create_directories(Path("empty"));
  EXPECT_EQ(Run({"submit", model_, "--inputs", Path("empty")}), 2);
  EXPECT_THAT(err_, HasSubstr("no cases in"));
  File("bad.json", R"({"cases": [{"name": "a", "inputs": ["in/a.bin"], "colour": 1}]})");
  EXPECT_EQ(Run({"submit", model_, "--cases", Path("bad.json")}), 2);
  EXPECT_THAT(err_, HasSubstr("case 0: unknown key 'colour'"));
  File("broken.json", "{\"cases\": [");
  EXPECT_EQ(Run({"submit", model_, "--cases", Path("broken.json")}), 2);
  EXPECT_THAT(err_, HasSubstr("broken.json': a cases manifest is a JSON object"));
  const std::string not_a_model = testing::WriteTestFile("cases_garbage.tflite", "garbage");
  EXPECT_EQ(Run({"submit", not_a_model, "--inputs", Path("in")}), 2);
  EXPECT_THAT(err_, HasSubstr("is not a TFLite model; its case files cannot be checked"));
  // Options that do not go together (CLI11 refuses them).
  EXPECT_EQ(Run({"submit", model_, "--inputs", Path("in"), "--input", "random:1"}), 2);
  EXPECT_EQ(Run({"submit", model_, "--inputs", Path("in"), "--cases", Path("cases.json")}), 2);
  EXPECT_EQ(Run({"submit", model_, "--cases", Path("cases.json"), "--expected", Path("exp")}), 2);
  EXPECT_TRUE(server_.artifacts().find_missing_calls().empty()) << "nothing asked or uploaded";
  EXPECT_TRUE(server_.artifacts().uploaded().empty());
  EXPECT_TRUE(server_.jobs().submits().empty());
}

TEST(ModelIoTfliteTest, ModelWithTwoInputs) {
  const std::vector<uint8_t> add = boardlab::testing::SingleOpModel(compiler::OpType::kAdd);
  absl::StatusOr<run::ModelIo> io = ReadTfliteIo(std::string(add.begin(), add.end()), "add");
  ASSERT_TRUE(io.ok()) << io.status();
  ASSERT_EQ(io->inputs.size(), 2u);
  EXPECT_EQ(io->inputs[0].Describe(), "int8 [1,4,4,8]");
  EXPECT_EQ(io->inputs[0].bytes, 128u);
  EXPECT_EQ(io->inputs[1].bytes, 8u);
  ASSERT_EQ(io->outputs.size(), 1u);
  EXPECT_EQ(io->outputs[0].bytes, 128u);
}

// A finished many-case job as the server stores it.
v1::Job CasesJob(int cases, int failing) {
  v1::Job job;
  job.set_id("j00000009");
  job.mutable_spec()->set_name("kws.tflite");
  job.set_state(v1::JOB_STATE_DONE);
  job.set_result(failing > 0 ? v1::JOB_RESULT_FAIL : v1::JOB_RESULT_PASS);
  for (int i = 0; i < cases; ++i) {
    v1::CaseResult* c = job.add_cases();
    c->set_name(i == failing - 1 ? "odd <&> name" : "case" + std::to_string(i));
    const bool failed = i < failing;
    c->set_passed(!failed);
    v1::OutputCheck* check = c->add_checks();
    check->set_passed(!failed);
    check->set_max_abs_diff(failed ? 7 : 0);
    c->set_top1(failed ? 5 : 3);
    c->set_top1_expected(3);
    c->set_inference_us(619.76);
  }
  v1::CaseSummary* summary = job.mutable_case_summary();
  summary->set_cases(cases);
  summary->set_passed(cases - failing);
  summary->set_verified(cases);
  summary->set_max_abs_diff(failing > 0 ? 7 : 0);
  summary->set_max_abs_diff_case(failing > 0 ? "case0" : "case0");
  summary->set_top1_compared(cases);
  summary->set_top1_agreed(cases - failing);
  summary->set_slowest_us(619.76);
  summary->set_slowest_case("case0");
  job.set_inference_us(619.76);
  return job;
}

TEST(CasesVerdictTest, EachCaseAndTheAggregate) {
  std::ostringstream out;
  PrintVerdict(CasesJob(3, 1), out);
  EXPECT_THAT(out.str(), HasSubstr("  case odd <&> name: FAIL (output 0: max abs diff 7; top-1 5, "
                                   "expected 3) 619.76 us"));
  EXPECT_THAT(out.str(),
              HasSubstr("  case case1: PASS (output 0: max abs diff 0; top-1 3 agrees)"));
  EXPECT_THAT(out.str(), HasSubstr("  cases: 2 of 3 passed, max abs diff 7 (case case0), top-1 "
                                   "agreement 66.7% (2 of 3)"));
  EXPECT_THAT(out.str(), HasSubstr("inference: 619.8 us (slowest of 3 cases: case0)"));
}

// Cases whose last inference ended early time no whole inference: the latency line counts
// only the cases with output, whose slowest the latency budget judges.
TEST(CasesVerdictTest, TheLatencyLineCountsTheCasesWithOutput) {
  v1::Job job = CasesJob(3, 0);
  job.mutable_cases(0)->set_no_output(true);
  job.mutable_cases(0)->set_passed(false);
  job.mutable_case_summary()->set_no_output(1);
  job.mutable_case_summary()->set_passed(2);
  job.mutable_case_summary()->set_slowest_case("case1");
  std::ostringstream out;
  PrintVerdict(job, out);
  EXPECT_THAT(out.str(), HasSubstr("inference: 619.8 us (slowest of 2 cases with output: case1)"));
}

TEST(CasesVerdictTest, ManyCasesListOnlyTheFailingOnes) {
  std::ostringstream out;
  PrintVerdict(CasesJob(50, 2), out);
  EXPECT_THAT(out.str(), HasSubstr("  case case0: FAIL"));
  EXPECT_THAT(out.str(), Not(HasSubstr("  case case7: PASS")));
  EXPECT_THAT(out.str(), HasSubstr("(48 passing cases not listed; job.json lists every case)"));
}

// A case whose last inference ended early neither passed nor failed: with many cases it is
// not listed among the failing ones.
TEST(CasesVerdictTest, ManyCasesLeaveOutTheCasesWithoutOutput) {
  v1::Job job = CasesJob(50, 2);
  for (const int i : {10, 11, 12}) {
    v1::CaseResult* c = job.mutable_cases(i);
    c->set_no_output(true);
    c->set_passed(false);
    c->clear_checks();
    c->clear_top1();
  }
  *job.mutable_case_summary() = api::SummarizeCases(job.cases());
  std::ostringstream out;
  PrintVerdict(job, out);
  EXPECT_THAT(out.str(), HasSubstr("  case case0: FAIL"));
  EXPECT_THAT(out.str(), Not(HasSubstr("NO OUTPUT YET")));
  EXPECT_THAT(
      out.str(),
      HasSubstr("(45 passing and 3 no-output cases not listed; job.json lists every case)"));
  EXPECT_THAT(out.str(), HasSubstr("cases: 45 of 50 passed, 3 no output yet"));
}

TEST(CasesVerdictTest, JunitHasATestcasePerCaseAndValidates) {
  const std::string xml = JunitXml({JobSuite(CasesJob(3, 1))});
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"case odd &lt;&amp;&gt; name\""));
  EXPECT_THAT(xml, HasSubstr("<property name=\"cases_passed\" value=\"2/3\"/>"));
  EXPECT_THAT(xml, HasSubstr("<property name=\"top1_agreement_percent\" value=\"66.7\"/>"));
  EXPECT_THAT(xml, HasSubstr("tests=\"4\" failures=\"1\""));  // run + 3 cases
  const std::string path = testing::WriteTestFile("cases_junit.xml", xml);
  const boardlab::testing::CommandResult valid = boardlab::testing::RunCommand(
      "xmllint --noout --schema " + boardlab::testing::RepoDir() + "/tests/cli/junit.xsd " + path);
  EXPECT_EQ(valid.exit_code, 0) << valid.output;
}

}  // namespace
}  // namespace boardlab::cli
