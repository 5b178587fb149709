// boardlab-run with many cases on one load (--inputs DIR --expected DIR, --cases MANIFEST, and
// --serve's "cases"), on the built binary: each case's outputs are those of a single run of its
// inputs, a wrong expected file fails only its case, the aggregate and the exit code say so, and
// options that do not go together are usage errors.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/core/random_bytes.h"
#include "tests/runtime/boardlab_run_test_base.h"
#include "tests/runtime/executor_test_support.h"
#include "tests/support/process.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"

namespace boardlab::runtime {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using RunResult = boardlab::testing::CommandResult;

class RunCasesCli : public testing::BoardlabRunTest {
 protected:
  RunCasesCli() : BoardlabRunTest("boardlab_run_cases") {}

  void SetUp() override {
    BoardlabRunTest::SetUp();
    if (IsSkipped()) return;
    // FULLY_CONNECTED [1,16] -> [1,10]: class scores.
    pte_ = Write("fc.pte", testing::CompilePte(boardlab::testing::SingleFullyConnected(),
                                               compiler::CompileOptions{}));
    fs::create_directories(dir_ / "in");
    fs::create_directories(dir_ / "expected");
    // Three cases: each input the bytes of random:<its letter>, its expected output the output
    // of a single run of that input.
    for (const char* name : {"a", "b", "c"}) {
      std::vector<uint8_t> input(16);
      FillRandomBytes(static_cast<uint64_t>(name[0]), input.data(), input.size());
      const std::string path = Write(std::string("in/") + name + ".bin", input);
      const std::string single = Path(std::string("single_") + name);
      const RunResult r = Run(pte_ + " --input " + path + " --outputs " + single);
      ASSERT_EQ(r.exit_code, 0) << r.output;
      fs::copy_file(single + "/output0.bin", dir_ / "expected" / (std::string(name) + ".bin"));
    }
  }

  std::string Write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = Path(name);
    EXPECT_TRUE(boardlab::testing::WriteFile(path, bytes));
    return path;
  }
  std::string Cases() const {
    return " --inputs " + Path("in") + " --expected " + Path("expected");
  }

  std::string pte_;
};

TEST_F(RunCasesCli, EachCaseGivesTheOutputsOfASingleRun) {
  const RunResult r =
      Run(pte_ + Cases() + " --outputs " + Path("out") + " --case-results " + Path("results.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("case a: PASS (output 0: max abs diff 0; top-1 "));
  EXPECT_THAT(r.output, HasSubstr("cases: 3 of 3 passed, max abs diff 0, top-1 agreement 100.0% "
                                  "(3 of 3)"));
  EXPECT_THAT(r.output, HasSubstr("profile (average of 3 runs: 3 cases x 1 iteration):"));
  for (const char* name : {"a", "b", "c"}) {
    EXPECT_EQ(boardlab::testing::ReadFile(Path(std::string("out/") + name + "/output0.bin")),
              boardlab::testing::ReadFile(Path(std::string("expected/") + name + ".bin")))
        << name;
  }
  std::ifstream in(Path("results.json"));
  const nlohmann::json results = nlohmann::json::parse(in);
  EXPECT_EQ(results["clock"], "rt700-sim-cycles");
  ASSERT_EQ(results["cases"].size(), 3u);
  EXPECT_EQ(results["cases"][1]["name"], "b");
  EXPECT_EQ(results["cases"][1]["verdict"], "pass");
  EXPECT_EQ(results["cases"][1]["top1"]["agrees"], true);
  EXPECT_GT(results["cases"][1]["total_us"].get<double>(), 0);
  EXPECT_EQ(results["case_summary"]["passed"], 3);
}

TEST_F(RunCasesCli, AWrongExpectedFileFailsItsCaseAndTheRun) {
  // Case b's expected output made to name another class.
  std::vector<uint8_t> wrong = boardlab::testing::ReadFile(Path("expected/b.bin"));
  const int top1 =
      static_cast<int>(std::max_element(wrong.begin(), wrong.end(),
                                        [](uint8_t x, uint8_t y) {
                                          return static_cast<int8_t>(x) < static_cast<int8_t>(y);
                                        }) -
                       wrong.begin());
  wrong[(top1 + 1) % wrong.size()] = 127;
  wrong[top1] = 0x80;
  Write("expected/b.bin", wrong);
  const RunResult r = Run(pte_ + Cases() + " --profile json", /*with_stderr=*/false);
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const nlohmann::json doc = nlohmann::json::parse(r.output);
  EXPECT_EQ(doc["verdict"], "fail");
  EXPECT_EQ(doc["cases"][0]["verdict"], "pass");
  EXPECT_EQ(doc["cases"][1]["verdict"], "fail");
  EXPECT_EQ(doc["cases"][1]["top1"]["agrees"], false);
  EXPECT_EQ(doc["case_summary"]["passed"], 2);
  EXPECT_EQ(doc["case_summary"]["failed"], 1);
  EXPECT_EQ(doc["case_summary"]["max_abs_diff_case"], "b");
  EXPECT_EQ(doc["case_summary"]["top1_agreed"], 2);
  EXPECT_EQ(doc["profile"]["iterations"], 3) << "one run per case, on one load";
  EXPECT_TRUE(doc["outputs"].empty());

  const RunResult table = Run(pte_ + Cases());
  EXPECT_EQ(table.exit_code, 1);
  EXPECT_THAT(table.output, HasSubstr("verdict: FAIL"));
  EXPECT_THAT(table.output, HasSubstr("case b: FAIL (output 0: max abs diff "));
  EXPECT_THAT(table.output, HasSubstr("cases: 2 of 3 passed, max abs diff "));
  EXPECT_THAT(table.output, HasSubstr("(case b), top-1 agreement 66.7% (2 of 3)"));
}

TEST_F(RunCasesCli, AManifestGivesTheSameCases) {
  std::ofstream(Path("cases.json"))
      << R"({"cases": [{"name": "a", "inputs": ["in/a.bin"], "expected": ["expected/a.bin"]},
                       {"name": "seeded", "inputs": ["random:98"], "expected": ["expected/b.bin"]}]})";
  const RunResult r = Run(pte_ + " --cases " + Path("cases.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;  // random:98 is case b's input ('b' = 98)
  EXPECT_THAT(r.output, HasSubstr("case seeded: PASS"));
  EXPECT_THAT(r.output, HasSubstr("cases: 2 of 2 passed"));
}

TEST_F(RunCasesCli, WithoutExpectedOutputsTheCasesAreUnverified) {
  const RunResult r = Run(pte_ + " --inputs " + Path("in"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("verdict: UNVERIFIED"));
  EXPECT_THAT(r.output, HasSubstr("cases: 3 of 3 passed (3 unverified)"));
}

TEST_F(RunCasesCli, ServeRunsACaseManifestOnOneLoad) {
  std::ofstream(Path("cases.json"))
      << "{\"cases\": [{\"name\": \"a\", \"inputs\": [\"" << Path("in/a.bin")
      << "\"], \"expected\": [\"" << Path("expected/a.bin") << "\"]}, {\"name\": \"c\", "
      << "\"inputs\": [\"" << Path("in/c.bin") << "\"], \"expected\": [\"" << Path("expected/b.bin")
      << "\"]}]}";
  std::ofstream(Path("requests")) << "{\"artifact\": \"" << pte_ << "\", \"cases\": \""
                                  << Path("cases.json") << "\", \"outputs\": \"" << Path("served")
                                  << "\"}\n"
                                  << "{\"artifact\": \"" << pte_ << "\", \"cases\": \""
                                  << Path("cases.json") << "\", \"inputs\": [\"random:1\"]}\n";
  const RunResult r = Run("--serve < " + Path("requests"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<nlohmann::json> results;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("result ", 0) == 0) results.push_back(nlohmann::json::parse(line.substr(7)));
  }
  ASSERT_EQ(results.size(), 2u) << r.output;
  EXPECT_EQ(results[0]["exit"], 1) << "case c is checked against b's expected output";
  const nlohmann::json& doc = results[0]["document"];
  EXPECT_EQ(doc["case_summary"]["passed"], 1);
  EXPECT_EQ(doc["cases"][1]["verdict"], "fail");
  EXPECT_EQ(doc["cases"][0]["outputs"][0]["path"], Path("served") + "/a/output0.bin");
  EXPECT_TRUE(fs::exists(Path("served/c/output0.bin")));
  EXPECT_EQ(results[1]["exit"], 2);
  EXPECT_THAT(results[1]["error"].get<std::string>(), HasSubstr("\"cases\" goes without"));
}

TEST_F(RunCasesCli, ModelWithTwoInputsTakesIndexedFiles) {
  const std::string add =
      Write("add.pte", testing::CompilePte(boardlab::testing::SingleOpModel(compiler::OpType::kAdd),
                                           compiler::CompileOptions{}));
  fs::create_directories(dir_ / "two");
  Write("two/x.input0.bin", std::vector<uint8_t>(128, 3));  // [1,4,4,8]
  Write("two/x.input1.bin", std::vector<uint8_t>(8, 5));    // [1,1,1,8]
  RunResult r = Run(add + " --inputs " + Path("two") + " --outputs " + Path("two_out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("case x: UNVERIFIED"));
  // The same inputs as a single run give the same output.
  ASSERT_EQ(Run(add + " --input " + Path("two/x.input0.bin") + " --input " +
                Path("two/x.input1.bin") + " --outputs " + Path("two_single"))
                .exit_code,
            0);
  EXPECT_EQ(boardlab::testing::ReadFile(Path("two_out/x/output0.bin")),
            boardlab::testing::ReadFile(Path("two_single/output0.bin")));

  Write("two/y.input0.bin", std::vector<uint8_t>(128, 1));  // no y.input1.bin
  r = Run(add + " --inputs " + Path("two"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("case 'y' has no input 1 in"));
  EXPECT_THAT(r.output, HasSubstr("(y.input1.bin)"));
}

TEST_F(RunCasesCli, BadCaseFilesAreUsageErrorsBeforeAnyRun) {
  Write("expected/d.bin", std::vector<uint8_t>(10, 0));  // no input d
  RunResult r = Run(pte_ + Cases());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("d.bin': no case 'd' in the inputs"));
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("verdict")));
  fs::remove(Path("expected/d.bin"));
  Write("in/a.bin", std::vector<uint8_t>(15, 0));
  r = Run(pte_ + Cases());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("a.bin' has 15 bytes; input 0 of the model (int8 [1,16]) takes 16"));
  r = Run(pte_ + " --inputs " + Path("nowhere"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("nowhere': not a directory"));
}

TEST_F(RunCasesCli, OptionsThatDoNotGoTogether) {
  const struct {
    std::string args;
    const char* error;
  } kBad[] = {
      {Cases() + " --input random:1", "--input gives the inputs of one run"},
      {Cases() + " --cases x.json", "--inputs and --cases both give the cases"},
      {" --cases x.json --expected e.bin", "--expected with --cases"},
      {" --case-results r.json", "--case-results needs --inputs or --cases"},
      {Cases() + " --expected " + Path("in"), "--expected names one directory"},
  };
  for (const auto& bad : kBad) {
    const RunResult r = Run(pte_ + bad.args);
    EXPECT_EQ(r.exit_code, 2) << bad.args << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(bad.error)) << bad.args;
  }
  EXPECT_EQ(Run("--serve --inputs " + Path("in") + " < /dev/null").exit_code, 2);
}

TEST_F(RunCasesCli, TheLatencyBudgetHoldsForTheSlowestCase) {
  RunResult r = Run(pte_ + Cases() + " --max-latency-us 1000000");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("budget latency "));
  r = Run(pte_ + Cases() + " --max-latency-us 0.001");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("budget failed: latency"));
  EXPECT_THAT(r.output, HasSubstr("cases: 3 of 3 passed")) << "the outputs still match";
}

}  // namespace
}  // namespace boardlab::runtime
