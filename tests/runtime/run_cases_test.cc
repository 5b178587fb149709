// Many cases in one run (runtime/cli/run_cases.h): how case files pair up in directories and in
// a manifest, every way a file can be wrong (each a clear message naming the file), and how the
// per-case verdicts add up.

#include "runtime/cli/run_cases.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace boardlab::run {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TensorInfo Tensor(runtime::ScalarType type, std::vector<int64_t> shape, size_t bytes) {
  TensorInfo t;
  t.type = type;
  t.shape = std::move(shape);
  t.bytes = bytes;
  return t;
}

// KWS-like: one int8 [1,4] input (4 bytes), one int8 [1,3] output of class scores (3 bytes).
ModelIo OneInOneOut() {
  return {{Tensor(runtime::ScalarType::kChar, {1, 4}, 4)},
          {Tensor(runtime::ScalarType::kChar, {1, 3}, 3)}};
}

// ADD-like: two inputs of 4 and 2 bytes, one output of 4 bytes.
ModelIo TwoInOneOut() {
  return {{Tensor(runtime::ScalarType::kChar, {1, 4}, 4),
           Tensor(runtime::ScalarType::kChar, {1, 2}, 2)},
          {Tensor(runtime::ScalarType::kChar, {2, 2}, 4)}};
}

class RunCasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("run_cases_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Writes `size` bytes to `relative` (directories made) and returns its path.
  std::string File(const std::string& relative, size_t size) {
    const fs::path path = dir_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << std::string(size, 'x');
    return path.string();
  }
  std::string Dir(const std::string& relative) {
    fs::create_directories(dir_ / relative);
    return (dir_ / relative).string();
  }
  std::string Text(const std::string& relative, const std::string& text) {
    std::ofstream(dir_ / relative) << text;
    return (dir_ / relative).string();
  }

  // ReadCaseDirectories; `error_` holds the message.
  bool Read(const std::string& inputs, const std::string& expected, const ModelIo& io) {
    error_.clear();
    return ReadCaseDirectories(inputs, expected, io, &cases_, &error_);
  }
  bool ReadManifest(const std::string& path, const ModelIo& io) {
    error_.clear();
    return ReadCaseManifest(path, io, &cases_, &error_);
  }

  fs::path dir_;
  std::vector<CaseFiles> cases_;
  std::string error_;
};

TEST_F(RunCasesTest, DirectoriesPairByNameInNameOrder) {
  File("in/yes.bin", 4);
  File("in/no.bin", 4);
  File("in/README.md", 10);   // not a case file
  File("in/.hidden.bin", 4);  // hidden
  File("out/no.bin", 3);
  File("out/yes.output.bin", 3);
  ASSERT_TRUE(Read(Dir("in"), Dir("out"), OneInOneOut())) << error_;
  ASSERT_EQ(cases_.size(), 2u);
  EXPECT_EQ(cases_[0].name, "no");
  EXPECT_EQ(cases_[0].inputs, std::vector<std::string>{(dir_ / "in/no.bin").string()});
  EXPECT_EQ(cases_[0].expected, std::vector<std::string>{(dir_ / "out/no.bin").string()});
  EXPECT_EQ(cases_[1].name, "yes");
  EXPECT_EQ(cases_[1].expected, std::vector<std::string>{(dir_ / "out/yes.output.bin").string()});
}

TEST_F(RunCasesTest, WithoutExpectedDirectoryCasesHaveNoExpectedOutputs) {
  File("in/a.bin", 4);
  ASSERT_TRUE(Read(Dir("in"), "", OneInOneOut())) << error_;
  ASSERT_EQ(cases_.size(), 1u);
  EXPECT_TRUE(cases_[0].expected.empty());
}

TEST_F(RunCasesTest, OneDirectoryHoldsInputsAndExpectedOutputsByTheirSuffix) {
  // The layout of the shared golden folder: seed1.input.bin next to seed1.output.bin.
  File("golden/seed1.input.bin", 4);
  File("golden/seed1.output.bin", 3);
  File("golden/seed2.input.bin", 4);
  File("golden/seed2.output.bin", 3);
  ASSERT_TRUE(Read(Dir("golden"), Dir("golden"), OneInOneOut())) << error_;
  ASSERT_EQ(cases_.size(), 2u);
  EXPECT_EQ(cases_[1].name, "seed2");
  EXPECT_THAT(cases_[1].inputs[0], HasSubstr("seed2.input.bin"));
  EXPECT_THAT(cases_[1].expected[0], HasSubstr("seed2.output.bin"));

  File("golden/seed3.bin", 4);  // input or expected output?
  EXPECT_FALSE(Read(Dir("golden"), Dir("golden"), OneInOneOut()));
  EXPECT_THAT(error_, HasSubstr("seed3.bin': inputs and expected outputs share"));
  EXPECT_THAT(error_, HasSubstr("NAME.input.bin and NAME.output.bin"));
}

TEST_F(RunCasesTest, ModelWithSeveralInputsTakesIndexedFiles) {
  File("in/a.input0.bin", 4);
  File("in/a.input1.bin", 2);
  File("out/a.bin", 4);
  ASSERT_TRUE(Read(Dir("in"), Dir("out"), TwoInOneOut())) << error_;
  ASSERT_EQ(cases_.size(), 1u);
  ASSERT_EQ(cases_[0].inputs.size(), 2u);
  EXPECT_THAT(cases_[0].inputs[1], HasSubstr("a.input1.bin"));

  File("in/b.input0.bin", 4);  // input 1 missing
  EXPECT_FALSE(Read(Dir("in"), Dir("out"), TwoInOneOut()));
  EXPECT_THAT(error_, HasSubstr("case 'b' has no input 1 in"));
  EXPECT_THAT(error_, HasSubstr("(b.input1.bin)"));
}

TEST_F(RunCasesTest, AnInputBeyondTheModelsInputsIsRefused) {
  File("in/a.input0.bin", 4);
  File("in/a.input1.bin", 4);
  EXPECT_FALSE(Read(Dir("in"), "", OneInOneOut()));
  EXPECT_THAT(error_,
              HasSubstr("a.input1.bin': the model has 1 input; a case's files are NAME.bin"));
  EXPECT_FALSE(Read(Dir("in"), "", TwoInOneOut()));  // a.input1.bin has 4 bytes, not 2
  EXPECT_THAT(error_, HasSubstr("a.input1.bin' has 4 bytes; input 1 of the model (int8 [1,2]) "
                                "takes 2"));
}

TEST_F(RunCasesTest, WrongSizeNamesFileTensorAndSize) {
  File("in/a.bin", 4);
  File("out/a.bin", 5);
  EXPECT_FALSE(Read(Dir("in"), Dir("out"), OneInOneOut()));
  EXPECT_THAT(error_, HasSubstr("out/a.bin' has 5 bytes; expected output 0 of the model "
                                "(int8 [1,3]) takes 3"));
}

TEST_F(RunCasesTest, ExpectedOutputWithoutInputAndInputWithoutExpectedOutput) {
  File("in/a.bin", 4);
  File("out/a.bin", 3);
  File("out/b.bin", 3);
  EXPECT_FALSE(Read(Dir("in"), Dir("out"), OneInOneOut()));
  EXPECT_THAT(error_, HasSubstr("out/b.bin': no case 'b' in the inputs"));

  fs::remove(dir_ / "out/b.bin");
  File("in/c.bin", 4);
  EXPECT_FALSE(Read(Dir("in"), Dir("out"), OneInOneOut()));
  EXPECT_THAT(error_, HasSubstr("case 'c' has no expected output in"));
  EXPECT_THAT(error_, HasSubstr("(c.bin or c.output.bin)"));
}

TEST_F(RunCasesTest, TwoFilesForOneSlotAreRefused) {
  File("in/a.bin", 4);
  File("in/a.input.bin", 4);
  EXPECT_FALSE(Read(Dir("in"), "", OneInOneOut()));
  EXPECT_THAT(error_, HasSubstr("are both input 0 of case 'a'"));
}

TEST_F(RunCasesTest, MissingAndEmptyDirectories) {
  EXPECT_FALSE(Read((dir_ / "absent").string(), "", OneInOneOut()));
  EXPECT_THAT(error_, HasSubstr("--inputs '"));
  EXPECT_THAT(error_, HasSubstr("absent': not a directory"));
  EXPECT_FALSE(Read(Dir("empty"), "", OneInOneOut()));
  EXPECT_THAT(error_, HasSubstr("no cases in"));
  File("in/a.bin", 4);
  EXPECT_FALSE(Read(Dir("in"), (dir_ / "absent").string(), OneInOneOut()));
  EXPECT_THAT(error_, HasSubstr("--expected '"));
}

TEST_F(RunCasesTest, MoreThanTheLimitIsRefused) {
  for (size_t i = 0; i <= kMaxCases; ++i) File("in/c" + std::to_string(i) + ".bin", 4);
  EXPECT_FALSE(Read(Dir("in"), "", OneInOneOut()));
  EXPECT_THAT(error_, HasSubstr("1001 cases in"));
  EXPECT_THAT(error_, HasSubstr("at most 1000"));
}

TEST_F(RunCasesTest, CaseNames) {
  EXPECT_EQ(InvalidCaseName("seed_1-a.b"), "");
  EXPECT_EQ(InvalidCaseName("with space"), "");
  EXPECT_THAT(InvalidCaseName(""), HasSubstr("needs a name"));
  EXPECT_THAT(InvalidCaseName(".x"), HasSubstr("not starting with '.'"));
  EXPECT_THAT(InvalidCaseName("a/b"), HasSubstr("without '/'"));
  EXPECT_THAT(InvalidCaseName("caf\xc3\xa9"), HasSubstr("printable ASCII"));
  EXPECT_THAT(InvalidCaseName(std::string(129, 'a')), HasSubstr("longer than 128"));
  File("in/caf\xc3\xa9.bin", 4);
  EXPECT_FALSE(Read(Dir("in"), "", OneInOneOut()));
  EXPECT_THAT(error_, HasSubstr("printable ASCII"));
}

TEST_F(RunCasesTest, ManifestResolvesPathsAgainstItsDirectoryAndTakesSeeds) {
  File("m/in/a.bin", 4);
  File("m/out/a.bin", 3);
  File("m/out/b.bin", 3);
  const std::string manifest =
      Text("m/cases.json",
           R"({"cases": [{"name": "a", "inputs": ["in/a.bin"], "expected": ["out/a.bin"]},
                    {"name": "b", "inputs": ["random:7"], "expected": ["out/b.bin"]}]})");
  ASSERT_TRUE(ReadManifest(manifest, OneInOneOut())) << error_;
  ASSERT_EQ(cases_.size(), 2u);
  EXPECT_EQ(cases_[0].inputs[0], (dir_ / "m/in/a.bin").string());
  EXPECT_EQ(cases_[1].inputs[0], "random:7");
  EXPECT_EQ(cases_[1].expected[0], (dir_ / "m/out/b.bin").string());

  // The manifest boardlab writes reads back as the same cases.
  const std::string again = Text("again.json", CaseManifestJson(cases_));
  std::vector<CaseFiles> read;
  ASSERT_TRUE(ReadCaseManifest(again, OneInOneOut(), &read, &error_)) << error_;
  EXPECT_EQ(read[1].inputs, cases_[1].inputs);
  EXPECT_EQ(read[0].expected, cases_[0].expected);
}

TEST_F(RunCasesTest, ManifestErrorsNameTheCase) {
  File("a.bin", 4);
  File("e.bin", 3);
  const struct {
    const char* json;
    const char* error;
  } kBad[] = {
      {"[1, 2]", "a cases manifest is a JSON object"},
      {"{\"cases\": [], \"x\": 1}", "a cases manifest is a JSON object"},
      {"{\"cases\": []}", "no cases in"},
      {"{\"cases\": [{\"inputs\": [\"a.bin\"]}]}", "case 0: each case is an object with"},
      {"{\"cases\": [{\"name\": \"a\", \"inputs\": [\"a.bin\"], \"colour\": 1}]}",
       "case 0: unknown key 'colour'"},
      {"{\"cases\": [{\"name\": \"a\", \"inputs\": [\"a.bin\", \"a.bin\"]}]}",
       "case 'a': 2 inputs given; the model has 1 input"},
      {"{\"cases\": [{\"name\": \"a\", \"inputs\": [\"random:x\"]}]}",
       "case 'a' input 0: 'random:x' is no random:SEED"},
      {"{\"cases\": [{\"name\": \"a\", \"inputs\": [\"gone.bin\"]}]}",
       "case 'a' input 0: cannot read"},
      {"{\"cases\": [{\"name\": \"a\", \"inputs\": [\"e.bin\"]}]}", "case 'a' input 0: '"},
      {"{\"cases\": [{\"name\": \"a\", \"inputs\": [\"a.bin\"]}, {\"name\": \"a\", \"inputs\": "
       "[\"a.bin\"]}]}",
       "case 'a' is given twice"},
      {"{\"cases\": [{\"name\": \"a\", \"inputs\": [\"a.bin\"], \"expected\": [\"e.bin\"]}, "
       "{\"name\": \"b\", \"inputs\": [\"a.bin\"]}]}",
       "give expected outputs for every case or for none"},
      {"{\"cases\": [{\"name\": \"a\", \"inputs\": \"a.bin\"}]}",
       "\"inputs\" must be a list of file names"},
  };
  for (const auto& bad : kBad) {
    EXPECT_FALSE(ReadManifest(Text("bad.json", bad.json), OneInOneOut())) << bad.json;
    EXPECT_THAT(error_, HasSubstr(bad.error)) << bad.json;
  }
  EXPECT_FALSE(ReadManifest((dir_ / "absent.json").string(), OneInOneOut()));
  EXPECT_THAT(error_, HasSubstr("cannot open it"));
}

TEST_F(RunCasesTest, ClassScoresAreOneVectorOutput) {
  EXPECT_TRUE(HasClassScores(OneInOneOut()));  // [1,3]
  ModelIo io = OneInOneOut();
  io.outputs[0].shape = {12};
  EXPECT_TRUE(HasClassScores(io));
  io.outputs[0].shape = {1, 1};
  EXPECT_FALSE(HasClassScores(io)) << "one score is no classification";
  io.outputs[0].shape = {2, 3};
  EXPECT_FALSE(HasClassScores(io)) << "a batch of two";
  io.outputs[0].shape = {1, 8, 8, 4};
  EXPECT_FALSE(HasClassScores(io)) << "a feature map";
  EXPECT_FALSE(HasClassScores(TwoInOneOut()));
  io = OneInOneOut();
  io.outputs.push_back(io.outputs[0]);
  EXPECT_FALSE(HasClassScores(io)) << "two outputs: which one holds the classes?";
}

TEST(ArgMaxTest, FirstOfTheLargestAndNoNaN) {
  EXPECT_EQ(ArgMax(std::string("\x01\x7f\x7f", 3), runtime::ScalarType::kChar), 1);
  EXPECT_EQ(ArgMax(std::string("\x01\x80", 2), runtime::ScalarType::kChar), 0);  // -128 < 1
  EXPECT_EQ(ArgMax(std::string("\x01\x80", 2), runtime::ScalarType::kByte), 1);  // 128 > 1
  const float values[] = {NAN, 1.0f, 3.0f};
  EXPECT_EQ(ArgMax(std::string(reinterpret_cast<const char*>(values), sizeof(values)),
                   runtime::ScalarType::kFloat),
            2);
  EXPECT_EQ(ArgMax("", runtime::ScalarType::kInt), -1);
}

CaseOutcome Outcome(const std::string& name, std::vector<OutputVerdict> outputs,
                    std::optional<int64_t> top1 = {}, std::optional<int64_t> expected = {},
                    std::optional<double> us = {}) {
  CaseOutcome c;
  c.name = name;
  c.outputs = std::move(outputs);
  c.top1 = top1;
  c.top1_expected = expected;
  c.us = us;
  return c;
}

OutputVerdict Checked(bool pass, double diff) {
  OutputVerdict v;
  v.checked = true;
  v.pass = pass;
  v.max_abs_diff = diff;
  v.elements = 12;
  v.mismatches = pass ? 0 : 3;
  return v;
}

TEST(CaseSummaryTest, AddsUpPassedMaxDiffTopOneAndSlowest) {
  const std::vector<CaseOutcome> outcomes = {
      Outcome("a", {Checked(true, 0)}, 3, 3, 600.0), Outcome("b", {Checked(false, 7)}, 5, 3, 612.5),
      Outcome("c", {Checked(true, 1)}, 2, 2, 601.0),
      Outcome("d", {Checked(true, 0)}, {}, {}, 599.0),  // no class scores
  };
  const CaseSummary s = Summarize(outcomes);
  EXPECT_EQ(s.cases, 4u);
  EXPECT_EQ(s.passed, 3u);
  EXPECT_EQ(s.verified, 4u);
  EXPECT_EQ(s.max_abs_diff, 7.0);
  EXPECT_EQ(s.max_abs_diff_case, "b");
  EXPECT_EQ(s.top1_compared, 3u);
  EXPECT_EQ(s.top1_agreed, 2u);
  EXPECT_EQ(s.slowest_us, 612.5);
  EXPECT_EQ(s.slowest_case, "b");
  EXPECT_EQ(DescribeSummary(s),
            "cases: 3 of 4 passed, max abs diff 7 (case b), top-1 agreement 66.7% (2 of 3)");
  EXPECT_EQ(DescribeCase(outcomes[1]),
            "case b: FAIL (output 0: max abs diff 7, 3 of 12 elements outside atol; top-1 5, "
            "expected 3) 612.50 us");
  EXPECT_EQ(DescribeCase(outcomes[0]),
            "case a: PASS (output 0: max abs diff 0; top-1 3 agrees) "
            "600.00 us");
}

// A summary read from a server's message need not add up (another version's counting); its
// derived counts stay at zero instead of wrapping around.
TEST(CaseSummaryTest, OneThatDoesNotAddUpDescribesNoWrappedCounts) {
  CaseSummary s;
  s.cases = 3;
  s.passed = 3;
  s.verified = 3;
  s.no_output = 2;
  EXPECT_EQ(s.failed(), 0u);
  EXPECT_EQ(s.unverified(), 0u);
  EXPECT_EQ(CasesVerdict(s), "pass");
  EXPECT_EQ(DescribeSummary(s), "cases: 3 of 3 passed, 2 no output yet");
}

// A case whose last inference a streaming op ended early times no whole inference: it is not
// the slowest, however long it took, and with no case of output there is no slowest at all.
TEST(CaseSummaryTest, SlowestIsOfTheCasesThatProducedOutput) {
  std::vector<CaseOutcome> outcomes = {Outcome("a", {}, {}, {}, 900.0),
                                       Outcome("b", {Checked(true, 0)}, {}, {}, 600.0),
                                       Outcome("c", {}, {}, {}, 950.0)};
  outcomes[0].no_output = true;
  outcomes[2].no_output = true;
  CaseSummary s = Summarize(outcomes);
  EXPECT_EQ(s.slowest_us, 600.0);
  EXPECT_EQ(s.slowest_case, "b");
  outcomes.erase(outcomes.begin() + 1);
  s = Summarize(outcomes);
  EXPECT_FALSE(s.slowest_us);
  EXPECT_EQ(s.slowest_case, "");
}

// Inferences that a streaming op ended early are timed apart from those that produced output:
// the line and the JSON say both; a case of early ends only has no time of output.
TEST(CaseSummaryTest, EarlyEndedInferencesAreTimedApart) {
  CaseOutcome mixed = Outcome("m", {Checked(true, 0)}, {}, {}, 600.0);
  mixed.early_inferences = 1;
  mixed.early_us = 40.0;
  mixed.early_ticks = 100;
  EXPECT_EQ(
      DescribeCase(mixed),
      "case m: PASS (output 0: max abs diff 0) 600.00 us; ended early: 1 inference, 40.00 us");
  const nlohmann::json entry = CaseJson(mixed);
  EXPECT_EQ(entry["total_us"], 600.0);
  EXPECT_EQ(entry["early_inferences"], 1);
  EXPECT_EQ(entry["early_total_us"], 40.0);
  EXPECT_EQ(entry["early_ticks"], 100);
  CaseOutcome early = Outcome("e", {}, {}, {}, std::nullopt);
  early.no_output = true;
  early.early_inferences = 3;
  early.early_us = 40.0;
  EXPECT_EQ(DescribeCase(early), "case e: NO OUTPUT YET; ended early: 3 inferences, 40.00 us");
  EXPECT_EQ(CaseJson(early)["total_us"], nullptr);
}

TEST(CaseSummaryTest, UnverifiedCasesPassAndUncomparableOutputsCountAsInfinite) {
  OutputVerdict wrong = Checked(false, 0);
  wrong.error = "expected 4 bytes, got 3";
  const std::vector<CaseOutcome> outcomes = {Outcome("u", {OutputVerdict{}}),
                                             Outcome("w", {wrong})};
  const CaseSummary s = Summarize(outcomes);
  EXPECT_EQ(s.passed, 1u);
  EXPECT_EQ(s.verified, 1u);
  ASSERT_TRUE(s.max_abs_diff.has_value());
  EXPECT_TRUE(std::isinf(*s.max_abs_diff));
  EXPECT_EQ(DescribeSummary(s), "cases: 1 of 2 passed (1 unverified), max abs diff inf (case w)");
  EXPECT_EQ(DescribeCase(outcomes[0]), "case u: UNVERIFIED");
  EXPECT_EQ(CaseJson(outcomes[1])["max_abs_diff"], nullptr) << "JSON has no infinity";
  EXPECT_EQ(SummaryJson(s)["failed"], 1);
}

TEST(CaseSummaryTest, TopOneOnlyForClassScoresWithAnExpectedOutput) {
  CaseOutcome c;
  JudgeTop1(OneInOneOut(), std::string("\x01\x05\x02", 3), std::string("\x09\x01\x02", 3), c);
  EXPECT_EQ(c.top1, 1);
  EXPECT_EQ(c.top1_expected, 0);
  CaseOutcome none;
  JudgeTop1(OneInOneOut(), std::string("\x01\x05\x02", 3), "", none);
  EXPECT_FALSE(none.top1.has_value());
  JudgeTop1(TwoInOneOut(), std::string("\x01\x05\x02\x00", 4), std::string("\x01\x05\x02\x00", 4),
            none);
  EXPECT_FALSE(none.top1.has_value());
}

}  // namespace
}  // namespace boardlab::run
