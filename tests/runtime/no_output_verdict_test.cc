// boardlab-run on a model whose CIRCULAR_BUFFER ends inferences early (TFLite Micro's
// kTfLiteAbort): an inference that produced no output is "no output yet", exit 0, its outputs
// not judged against --expected; once an inference runs to the end, the outputs are judged again.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/runtime/boardlab_run_test_base.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"

namespace boardlab::runtime::testing {
namespace {

using boardlab::testing::CommandResult;
using Bytes = std::vector<uint8_t>;

class NoOutputVerdict : public BoardlabRunTest {
 protected:
  NoOutputVerdict() : BoardlabRunTest("boardlab_no_output") {}

  void SetUp() override {
    BoardlabRunTest::SetUp();
    if (IsSkipped()) return;
    absl::StatusOr<compiler::CompileResult> compiled =
        compiler::Compile(boardlab::testing::CircularBufferModel(), {});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    ASSERT_TRUE(boardlab::testing::WriteFile(Path("cb.pte"), compiled->pte));
    ASSERT_TRUE(boardlab::testing::WriteFile(Path("in.bin"), Bytes{1, 2, 3}));
  }

  CommandResult RunWith(int iterations, const Bytes& expected, const std::string& profile) {
    EXPECT_TRUE(boardlab::testing::WriteFile(Path("expected.bin"), expected));
    return Run(Path("cb.pte") + " --input " + Path("in.bin") + " --expected " +
                   Path("expected.bin") + " --iterations " + std::to_string(iterations) +
                   " --profile " + profile,
               /*with_stderr=*/profile != "json");
  }

  // The --profile json document of a run that exited 0; null when it did not or is no JSON.
  nlohmann::json JsonRun(int iterations, const Bytes& expected) {
    const CommandResult run = RunWith(iterations, expected, "json");
    EXPECT_EQ(run.exit_code, 0) << run.output;
    nlohmann::json doc = nlohmann::json::parse(run.output, nullptr, false);
    EXPECT_TRUE(doc.is_object()) << run.output;
    return run.exit_code == 0 && doc.is_object() ? doc : nlohmann::json();
  }
};

TEST_F(NoOutputVerdict, AnInferenceThatEndedEarlyIsNotJudged) {
  const Bytes wrong(12, 0x7f);
  const CommandResult table = RunWith(1, wrong, "table");
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("verdict: NO OUTPUT YET"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("0 of 1 inferences produced output"), std::string::npos)
      << table.output;
  const nlohmann::json doc = JsonRun(1, wrong);
  ASSERT_FALSE(doc.is_null());
  EXPECT_EQ(doc["verdict"], "no_output");
  EXPECT_EQ(doc["inferences_with_output"], 0);
  EXPECT_EQ(doc["iterations"], 1);
}

// The second inference runs the buffer: both inputs are in its last two slots, and a wrong
// expectation fails again.
TEST_F(NoOutputVerdict, TheNextInferenceIsJudgedAgain) {
  const Bytes buffer = {0, 0, 0, 0, 0, 0, 1, 2, 3, 1, 2, 3};
  const nlohmann::json doc = JsonRun(2, buffer);
  ASSERT_FALSE(doc.is_null());
  EXPECT_EQ(doc["verdict"], "pass");
  EXPECT_EQ(doc["inferences_with_output"], 1);
  Bytes wrong = buffer;
  wrong[0] = 9;
  EXPECT_NE(RunWith(2, wrong, "table").exit_code, 0);
}

// A single run of two iterations, the first ended early by the buffer, the second a whole
// inference: its time is the whole inference's alone, as the same inferences give as a case
// (whose time is of its inferences that produced output), and the early end's is reported
// apart. The latency budget judges the whole inference's time: a limit at the mean of both
// iterations fails. The profile averages the whole inference alone too, live and read back from
// the run's ETDump. The RELU after the buffer makes an early end faster.
TEST_F(NoOutputVerdict, ASingleRunTimesItsEarlyEndedInferencesApart) {
  absl::StatusOr<compiler::CompileResult> compiled =
      compiler::Compile(boardlab::testing::CircularBufferReluModel(), {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(boardlab::testing::WriteFile(Path("cbr.pte"), compiled->pte));
  const Bytes buffer = {0, 0, 0, 0, 0, 0, 1, 2, 3, 1, 2, 3};
  ASSERT_TRUE(boardlab::testing::WriteFile(Path("expected.bin"), buffer));
  const std::string run = Path("cbr.pte") + " --input " + Path("in.bin") + " --expected " +
                          Path("expected.bin") + " --iterations 2";
  const CommandResult single_run = Run(run + " --profile json --etdump " + Path("cbr.etdp"), false);
  const nlohmann::json single = nlohmann::json::parse(single_run.output, nullptr, false);
  ASSERT_TRUE(single.is_object()) << single_run.output;
  ASSERT_TRUE(single["total_us"].is_number() && single["early_total_us"].is_number()) << single;
  const double mean_of_both =
      (single["total_us"].get<double>() + single["early_total_us"].get<double>()) / 2;
  char limit[64];
  std::snprintf(limit, sizeof(limit), " --max-latency-us %.17g", mean_of_both);
  const CommandResult judged = Run(run + limit);
  EXPECT_EQ(judged.exit_code, 1) << judged.output;
  EXPECT_NE(judged.output.find("budget failed: latency "), std::string::npos) << judged.output;
  EXPECT_NE(judged.output.find("inference time: "), std::string::npos) << judged.output;
  EXPECT_NE(judged.output.find(" (mean of the 1 of 2 inferences that produced output); ended "
                               "early: 1 inference, "),
            std::string::npos)
      << judged.output;
  const std::string manifest =
      nlohmann::json{
          {"cases",
           {{{"name", "a"}, {"inputs", {Path("in.bin")}}, {"expected", {Path("expected.bin")}}}}}}
          .dump();
  ASSERT_TRUE(
      boardlab::testing::WriteFile(Path("a.json"), Bytes(manifest.begin(), manifest.end())));
  const CommandResult case_run =
      Run(Path("cbr.pte") + " --cases " + Path("a.json") + " --iterations 2 --profile json", false);
  const nlohmann::json as_case = nlohmann::json::parse(case_run.output, nullptr, false);
  ASSERT_TRUE(as_case.is_object()) << case_run.output;
  const nlohmann::json& c = as_case["cases"][0];
  ASSERT_TRUE(c["total_us"].is_number()) << c;

  EXPECT_EQ(single["verdict"], "pass") << single;
  EXPECT_EQ(single["total_us"], c["total_us"]) << single;
  EXPECT_EQ(single["ticks"], c["ticks"]) << single;
  EXPECT_EQ(single["early_inferences"], 1) << single;
  EXPECT_EQ(single["early_total_us"], c["early_total_us"]) << single;
  EXPECT_EQ(single["early_ticks"], c["early_ticks"]) << single;
  EXPECT_LT(mean_of_both, single["total_us"].get<double>()) << single;

  const nlohmann::json& profile = single["profile"];
  EXPECT_EQ(profile["iterations"], 2) << profile;
  EXPECT_EQ(profile["ended_early_runs"], 1) << profile;
  EXPECT_EQ(profile["averaged_runs"], 1) << profile;
  EXPECT_EQ(profile["total_us"], single["total_us"]) << profile;
  const CommandResult inspected =
      Run("--inspect " + Path("cbr.etdp") + " --profile json", /*with_stderr=*/false);
  const nlohmann::json read_back = nlohmann::json::parse(inspected.output, nullptr, false);
  ASSERT_TRUE(read_back.is_object()) << inspected.output;
  EXPECT_EQ(read_back["profile"]["ended_early_runs"], 1) << read_back;
  EXPECT_EQ(read_back["profile"]["averaged_runs"], 1) << read_back;
  EXPECT_EQ(read_back["profile"]["total_ticks"], profile["total_ticks"]) << read_back;
  const CommandResult table = Run(run + " --profile table");
  EXPECT_NE(table.output.find("profile (average of 2 iterations; 1 of 2 ended early by a "
                              "streaming op, left out):"),
            std::string::npos)
      << table.output;
}

// No iteration produced output: no inference time (null, not a mean of the early ends), the
// early ends apart, and the text says so.
TEST_F(NoOutputVerdict, ASingleRunWithoutOutputHasNoInferenceTime) {
  const nlohmann::json doc = JsonRun(1, Bytes(12, 0));
  ASSERT_FALSE(doc.is_null());
  EXPECT_TRUE(doc["total_us"].is_null()) << doc;
  EXPECT_EQ(doc["ticks"], 0) << doc;
  EXPECT_EQ(doc["early_inferences"], 1) << doc;
  EXPECT_TRUE(doc["early_total_us"].is_number()) << doc;
  // The profile has nothing but the early end to average, and says so.
  EXPECT_EQ(doc["profile"]["averaged_runs"], 1) << doc;
  EXPECT_EQ(doc["profile"]["ended_early_runs"], 1) << doc;
  EXPECT_EQ(doc["profile"]["total_us"], doc["early_total_us"]) << doc;
  const CommandResult table = RunWith(1, Bytes(12, 0), "table");
  EXPECT_NE(table.output.find("(average of 1 iteration; every one ended early by a streaming "
                              "op: part of the chain each):"),
            std::string::npos)
      << table.output;
  EXPECT_NE(table.output.find("inference time: none (no inference produced output); ended "
                              "early: 1 inference, "),
            std::string::npos)
      << table.output;
}

// --cases on one loaded model: the buffer keeps its frames from case to case, so with one
// iteration per case every other case ends early. Those cases are "no output yet", not judged
// against their (wrong) expected bytes; the others are judged on the whole buffer.
class NoOutputCases : public NoOutputVerdict {
 protected:
  // Case NAME with input `in` and expected output `expected`, in the manifest `cases`.
  void AddCase(const std::string& name, const Bytes& in, const Bytes& expected,
               nlohmann::json& cases) {
    ASSERT_TRUE(boardlab::testing::WriteFile(Path(name + ".in.bin"), in));
    ASSERT_TRUE(boardlab::testing::WriteFile(Path(name + ".out.bin"), expected));
    cases.push_back({{"name", name},
                     {"inputs", {Path(name + ".in.bin")}},
                     {"expected", {Path(name + ".out.bin")}}});
  }

  CommandResult RunCases(const nlohmann::json& cases, const std::string& profile) {
    const std::string text = nlohmann::json{{"cases", cases}}.dump();
    EXPECT_TRUE(boardlab::testing::WriteFile(Path("cases.json"), Bytes(text.begin(), text.end())));
    return Run(Path("cb.pte") + " --cases " + Path("cases.json") + " --profile " + profile,
               /*with_stderr=*/profile != "json");
  }
};

TEST_F(NoOutputCases, CasesThatEndedEarlyAreNotJudged) {
  const Bytes wrong(12, 0x7f);
  nlohmann::json cases = nlohmann::json::array();
  AddCase("a", {1, 2, 3}, wrong, cases);
  AddCase("b", {4, 5, 6}, {0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6}, cases);
  AddCase("c", {7, 8, 9}, wrong, cases);
  AddCase("d", {10, 11, 12}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, cases);
  const CommandResult table = RunCases(cases, "table");
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("case a: NO OUTPUT YET"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("case b: PASS"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("case c: NO OUTPUT YET"), std::string::npos) << table.output;
  EXPECT_NE(table.output.find("cases: 2 of 4 passed, 2 no output yet"), std::string::npos)
      << table.output;

  const CommandResult run = RunCases(cases, "json");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json doc = nlohmann::json::parse(run.output, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << run.output;
  EXPECT_EQ(doc["verdict"], "pass");
  ASSERT_EQ(doc["cases"].size(), 4u);
  const char* verdicts[] = {"no_output", "pass", "no_output", "pass"};
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(doc["cases"][i]["verdict"], verdicts[i]) << i;
  EXPECT_FALSE(doc["cases"][0]["outputs"][0].contains("verification")) << doc["cases"][0];
  EXPECT_EQ(doc["case_summary"]["no_output"], 2);
  EXPECT_EQ(doc["case_summary"]["failed"], 0);
  EXPECT_EQ(doc["inferences_with_output"], 2);

  // A wrong expectation on a case that ran still fails the run.
  AddCase("e", {13, 14, 15}, wrong, cases);
  AddCase("f", {16, 17, 18}, wrong, cases);
  const CommandResult failed = RunCases(cases, "table");
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_NE(failed.output.find("case e: NO OUTPUT YET"), std::string::npos) << failed.output;
  EXPECT_NE(failed.output.find("case f: FAIL"), std::string::npos) << failed.output;
}

// No case produced output: the run's verdict is no output yet, exit 0.
TEST_F(NoOutputCases, RunWhoseOnlyCaseEndedEarlyHasNoOutputYet) {
  nlohmann::json cases = nlohmann::json::array();
  AddCase("first", {1, 2, 3}, Bytes(12, 0x7f), cases);
  const CommandResult run = RunCases(cases, "json");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json doc = nlohmann::json::parse(run.output, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << run.output;
  EXPECT_EQ(doc["verdict"], "no_output");
  EXPECT_EQ(doc["case_summary"]["no_output"], 1);
  const CommandResult table = RunCases(cases, "table");
  EXPECT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("verdict: NO OUTPUT YET"), std::string::npos) << table.output;
}

// A case whose iterations mix an inference that ended early with one that ran to the end: its
// time is the whole inference's alone, the early one's is reported apart. On the sim clock the
// same two inferences as two cases of one iteration each give the figures to compare with; the
// model's RELU after the buffer makes an early end take less time than a whole inference.
TEST_F(NoOutputCases, ACaseTimesItsEarlyEndedInferencesApart) {
  absl::StatusOr<compiler::CompileResult> compiled =
      compiler::Compile(boardlab::testing::CircularBufferReluModel(), {});
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_TRUE(boardlab::testing::WriteFile(Path("cb.pte"), compiled->pte));
  nlohmann::json cases = nlohmann::json::array();
  AddCase("a", {1, 2, 3}, {0, 0, 0, 0, 0, 0, 1, 2, 3, 1, 2, 3}, cases);
  std::string text = nlohmann::json{{"cases", cases}}.dump();
  ASSERT_TRUE(boardlab::testing::WriteFile(Path("one.json"), Bytes(text.begin(), text.end())));
  const CommandResult mixed_run = Run(
      Path("cb.pte") + " --cases " + Path("one.json") + " --iterations 2 --profile json", false);
  const nlohmann::json mixed = nlohmann::json::parse(mixed_run.output, nullptr, false);
  ASSERT_TRUE(mixed.is_object()) << mixed_run.output;
  AddCase("b", {1, 2, 3}, {0, 0, 0, 0, 0, 0, 1, 2, 3, 1, 2, 3}, cases);
  const CommandResult apart_run = RunCases(cases, "json");
  const nlohmann::json apart = nlohmann::json::parse(apart_run.output, nullptr, false);
  ASSERT_TRUE(apart.is_object()) << apart_run.output;
  const nlohmann::json& early = apart["cases"][0];
  const nlohmann::json& full = apart["cases"][1];
  ASSERT_TRUE(full["total_us"].is_number()) << full;
  ASSERT_TRUE(early["early_total_us"].is_number()) << early;
  // The two kinds differ, so a mean of both would be neither.
  ASSERT_NE(full["total_us"], early["early_total_us"]);

  const nlohmann::json& c = mixed["cases"][0];
  EXPECT_EQ(c["verdict"], "pass") << c;
  EXPECT_EQ(c["total_us"], full["total_us"]) << c;
  EXPECT_EQ(c["ticks"], full["ticks"]) << c;
  EXPECT_EQ(c["early_inferences"], 1) << c;
  EXPECT_EQ(c["early_total_us"], early["early_total_us"]) << c;
  EXPECT_EQ(mixed["case_summary"]["slowest_us"], full["total_us"]);
  EXPECT_TRUE(early["total_us"].is_null()) << early;  // no inference of it produced output

  const CommandResult table =
      Run(Path("cb.pte") + " --cases " + Path("one.json") + " --iterations 2");
  EXPECT_NE(table.output.find("; ended early: 1 inference, "), std::string::npos) << table.output;
}

// A latency budget judges only inferences that produced output: the slowest case of output
// (b, although a, which ended early, took as long), and no latency at all when no inference
// produced output (the check passes, saying so; the run stays NO_OUTPUT, exit 0).
TEST_F(NoOutputCases, LatencyBudgetJudgesOnlyInferencesWithOutput) {
  nlohmann::json cases = nlohmann::json::array();
  AddCase("a", {1, 2, 3}, Bytes(12, 0x7f), cases);
  AddCase("b", {4, 5, 6}, {0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6}, cases);
  std::string text = nlohmann::json{{"cases", cases}}.dump();
  ASSERT_TRUE(boardlab::testing::WriteFile(Path("two.json"), Bytes(text.begin(), text.end())));
  const CommandResult judged =
      Run(Path("cb.pte") + " --cases " + Path("two.json") + " --max-latency-us 0.001");
  EXPECT_EQ(judged.exit_code, 1) << judged.output;
  EXPECT_NE(judged.output.find("budget failed: latency "), std::string::npos) << judged.output;
  const CommandResult json_run = Run(
      Path("cb.pte") + " --cases " + Path("two.json") + " --max-latency-us 0.001 --profile json",
      /*with_stderr=*/false);
  const nlohmann::json doc = nlohmann::json::parse(json_run.output, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << json_run.output;
  EXPECT_EQ(doc["case_summary"]["slowest_case"], "b") << doc["case_summary"];

  cases.erase(1);
  text = nlohmann::json{{"cases", cases}}.dump();
  ASSERT_TRUE(boardlab::testing::WriteFile(Path("one.json"), Bytes(text.begin(), text.end())));
  const CommandResult none =
      Run(Path("cb.pte") + " --cases " + Path("one.json") + " --max-latency-us 0.001");
  EXPECT_EQ(none.exit_code, 0) << none.output;
  EXPECT_NE(none.output.find("budget latency not judged (no inference produced output yet) <= "
                             "0.001 us: pass"),
            std::string::npos)
      << none.output;
  const CommandResult single =
      Run(Path("cb.pte") + " --input " + Path("in.bin") + " --iterations 1 --max-latency-us 0.001");
  EXPECT_EQ(single.exit_code, 0) << single.output;
  EXPECT_NE(single.output.find("budget latency not judged"), std::string::npos) << single.output;
}

}  // namespace
}  // namespace boardlab::runtime::testing
