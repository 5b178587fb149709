// "No output yet" on the firmware under QEMU: a CIRCULAR_BUFFER model ends every other
// inference early (TFLite Micro's kTfLiteAbort). The semihosting firmware (--board qemu) and the
// board-link firmware (--board serial, protocol 5) both report such an inference as no output,
// not judged against the expected bytes, and judge the outputs of the next one again. The cases
// of one job share the loaded model and its frames on every board (protocol 6 for serial): the
// same verdicts and outputs as the sim board, and the next job starts afresh.
//
// QEMU is needed: the point is what the firmware itself reports. One boot per test.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "nlohmann/json.hpp"
#include "tests/firmware/firmware_available.h"
#include "tests/support/process.h"
#include "tests/support/qemu_board.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

namespace boardlab::firmware {
namespace {

namespace fs = std::filesystem;
using boardlab::testing::CommandResult;
using nlohmann::json;
using Bytes = std::vector<uint8_t>;

const Bytes kWrong(12, 0x7f);

class FirmwareNoOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("nooutput_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    absl::StatusOr<compiler::CompileResult> compiled =
        compiler::Compile(testing::CircularBufferModel(), {});
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    ASSERT_TRUE(testing::WriteFile(Path("cb.pte"), compiled->pte));
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // The manifest entry of case NAME with input `in` and expected output `expected`.
  json Case(const std::string& name, const Bytes& in, const Bytes& expected) {
    EXPECT_TRUE(testing::WriteFile(Path(name + ".in.bin"), in));
    EXPECT_TRUE(testing::WriteFile(Path(name + ".out.bin"), expected));
    return {{"name", name},
            {"inputs", {Path(name + ".in.bin")}},
            {"expected", {Path(name + ".out.bin")}}};
  }

  std::string Manifest(const json& cases) {
    const std::string text = json{{"cases", cases}}.dump();
    EXPECT_TRUE(testing::WriteFile(Path("cases.json"), Bytes(text.begin(), text.end())));
    return Path("cases.json");
  }

  // The four cases of one boot's worth of frames: a and c end early (their wrong expected bytes
  // are not judged); b and d pass only on a model that kept the frames of the cases before.
  json FourCases() {
    return {Case("a", {1, 2, 3}, kWrong),
            Case("b", {4, 5, 6}, {0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6}),
            Case("c", {7, 8, 9}, kWrong),
            Case("d", {10, 11, 12}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})};
  }

  fs::path dir_;
};

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// Semihosting firmware, one boot: four cases of one iteration each on the loaded model, so the
// first and third end early; their wrong expected bytes are not judged. Then a single run of one
// inference: NO_OUTPUT, exit 0.
TEST_F(FirmwareNoOutput, SemihostingFirmwareReportsCasesWithoutOutput) {
  const std::string why = WhyFirmwareCannotRun(BOARDLAB_FIRMWARE_ELF, NeedsRun::kYes);
  if (!why.empty()) GTEST_SKIP() << why;
  const json cases = FourCases();
  const std::string env = "BOARDLAB_FIRMWARE_ELF=" + std::string(BOARDLAB_FIRMWARE_ELF) +
                          " BOARDLAB_QEMU_RUNNER=" + BOARDLAB_FIRMWARE_RUNNER + " ";
  const std::string results = Path("results.json");
  const CommandResult r = testing::RunCommand(env + testing::RunBinary() + " --board qemu " +
                                              Path("cb.pte") + " --cases " + Manifest(cases) +
                                              " --case-results " + results + " --timeout 120");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("case a: NO_OUTPUT no inference produced output; ended early: 1 "
                          "inference, ticks "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("case b: PASS ticks "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("result: PASS (2 of 4 cases passed, 2 no output yet)"), std::string::npos)
      << r.output;
  const json doc = ReadJson(results);
  ASSERT_TRUE(doc.is_object()) << results;
  const char* verdicts[] = {"no_output", "pass", "no_output", "pass"};
  ASSERT_EQ(doc["cases"].size(), 4u) << doc;
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(doc["cases"][i]["verdict"], verdicts[i]) << doc;
  EXPECT_EQ(doc["case_summary"]["no_output"], 2);
  EXPECT_EQ(doc["case_summary"]["failed"], 0);
  // Each case's one inference is timed as what it was: a's ended early, b's produced output.
  const json& a = doc["cases"][0];
  const json& b = doc["cases"][1];
  EXPECT_EQ(a["ticks"], 0) << a;
  EXPECT_EQ(a["early_inferences"], 1) << a;
  EXPECT_GT(a["early_ticks"].get<uint64_t>(), 0u) << a;
  EXPECT_GT(b["ticks"].get<uint64_t>(), 0u) << b;
  EXPECT_EQ(b["early_inferences"], 0) << b;

  // One case of two iterations on a fresh model: an early end, then a whole inference, each
  // timed apart. (The timer's ticks of this small model are a few each, too coarse to tell the
  // two kinds apart; the board-link test below checks the means against each iteration's ticks.)
  const std::string one = Path("one.json");
  const json whole_case = Case("one", {1, 2, 3}, {0, 0, 0, 0, 0, 0, 1, 2, 3, 1, 2, 3});
  const std::string one_text = json{{"cases", {whole_case}}}.dump();
  ASSERT_TRUE(testing::WriteFile(one, Bytes(one_text.begin(), one_text.end())));
  const CommandResult two = testing::RunCommand(
      env + testing::RunBinary() + " --board qemu " + Path("cb.pte") + " --cases " + one +
      " --iterations 2 --case-results " + Path("two.json") + " --timeout 120");
  ASSERT_EQ(two.exit_code, 0) << two.output;
  EXPECT_NE(two.output.find("; ended early: 1 inference, ticks "), std::string::npos) << two.output;
  const json two_doc = ReadJson(Path("two.json"));
  ASSERT_TRUE(two_doc.is_object()) << two.output;
  const json& mixed = two_doc["cases"][0];
  EXPECT_GT(mixed["ticks"].get<uint64_t>(), 0u) << mixed;
  EXPECT_EQ(mixed["early_inferences"], 1) << mixed;
  EXPECT_GT(mixed["early_ticks"].get<uint64_t>(), 0u) << mixed;

  ASSERT_TRUE(testing::WriteFile(Path("in.bin"), Bytes{1, 2, 3}));
  ASSERT_TRUE(testing::WriteFile(Path("wrong.bin"), kWrong));
  const CommandResult single = testing::RunCommand(
      env + testing::RunBinary() + " --board qemu " + Path("cb.pte") + " --input " +
      Path("in.bin") + " --expected " + Path("wrong.bin") + " --iterations 1 --timeout 120");
  ASSERT_EQ(single.exit_code, 0) << single.output;
  EXPECT_NE(single.output.find("no output yet: a streaming op ended the last inference early "
                               "(0 of 1 inferences produced output)"),
            std::string::npos)
      << single.output;
  EXPECT_NE(single.output.find("result: NO_OUTPUT no inference produced output; ended early: 1 "
                               "inference, ticks "),
            std::string::npos)
      << single.output;
  ASSERT_TRUE(testing::WriteFile(Path("right.bin"), Bytes{0, 0, 0, 0, 0, 0, 1, 2, 3, 1, 2, 3}));
  const CommandResult whole = testing::RunCommand(
      env + testing::RunBinary() + " --board qemu " + Path("cb.pte") + " --input " +
      Path("in.bin") + " --expected " + Path("right.bin") + " --iterations 2 --timeout 120");
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  EXPECT_NE(whole.output.find("result: PASS ticks "), std::string::npos) << whole.output;
  EXPECT_NE(whole.output.find("; ended early: 1 inference, ticks "), std::string::npos)
      << whole.output;
}

// Board-link firmware, one boot: RESULT says "no output" after one inference (the wrong
// expected bytes not judged), and after two the outputs are judged: the right bytes pass, and
// wrong ones fail.
TEST_F(FirmwareNoOutput, BoardLinkFirmwareReportsNoOutputInItsResult) {
  const std::string why = WhyFirmwareCannotRun(BOARDLAB_FIRMWARE_AN505_ELF, NeedsRun::kYes);
  if (!why.empty()) GTEST_SKIP() << why;
  testing::QemuBoard board(dir_, BOARDLAB_QEMU_BOARD, BOARDLAB_FIRMWARE_AN505_ELF);
  ASSERT_TRUE(board.Start());
  ASSERT_TRUE(testing::WriteFile(Path("in.bin"), Bytes{1, 2, 3}));
  ASSERT_TRUE(testing::WriteFile(Path("wrong.bin"), kWrong));
  ASSERT_TRUE(testing::WriteFile(Path("right.bin"), Bytes{0, 0, 0, 0, 0, 0, 1, 2, 3, 1, 2, 3}));
  const auto run = [&](int iterations, const std::string& expected, const std::string& doc) {
    return testing::RunCommand(testing::RunBinary() + " --board serial --port " + board.port() +
                               " " + Path("cb.pte") + " --input " + Path("in.bin") +
                               " --expected " + Path(expected) + " --iterations " +
                               std::to_string(iterations) + " --json " + Path(doc));
  };

  const CommandResult early = run(1, "wrong.bin", "early.json");
  ASSERT_EQ(early.exit_code, 0) << early.output;
  EXPECT_NE(early.output.find("result: NO_OUTPUT no inference produced output; ended early: 1 "
                              "inference, ticks "),
            std::string::npos)
      << early.output;
  const json early_doc = ReadJson(Path("early.json"));
  EXPECT_EQ(early_doc["verdict"], "NO_OUTPUT") << early_doc;
  EXPECT_EQ(early_doc["result"]["inferences_with_output"], 0) << early_doc;
  EXPECT_EQ(early_doc["result"]["output_mean_ticks"], 0) << early_doc;
  EXPECT_EQ(early_doc["result"]["early_inferences"], 1) << early_doc;
  EXPECT_EQ(early_doc["result"]["early_ticks"], early_doc["result"]["mean_ticks"]) << early_doc;

  const CommandResult later = run(2, "right.bin", "later.json");
  ASSERT_EQ(later.exit_code, 0) << later.output;
  EXPECT_NE(later.output.find("result: PASS ticks "), std::string::npos) << later.output;
  const json later_doc = ReadJson(Path("later.json"));
  EXPECT_EQ(later_doc["verdict"], "PASS") << later_doc;
  EXPECT_EQ(later_doc["result"]["inferences_with_output"], 1) << later_doc;
  // The result line's time is the whole inference's (the second iteration's), the first's apart.
  const json& times = later_doc["result"];
  ASSERT_EQ(times["ticks"].size(), 2u) << later_doc;
  EXPECT_EQ(times["output_mean_ticks"], times["ticks"][1]) << later_doc;
  EXPECT_EQ(times["early_inferences"], 1) << later_doc;
  EXPECT_EQ(times["early_ticks"], times["ticks"][0]) << later_doc;
  EXPECT_NE(later.output.find("result: PASS ticks " + times["ticks"][1].dump() + " ns "),
            std::string::npos)
      << later.output;
  EXPECT_NE(later.output.find("; ended early: 1 inference, ticks " + times["ticks"][0].dump()),
            std::string::npos)
      << later.output;
  // Protocol 8: the spread of the times keeps the kinds apart too.
  EXPECT_EQ(times["ended_early"], json::array({true, false})) << later_doc;
  const std::string first = times["ticks"][0].dump(), second = times["ticks"][1].dump();
  EXPECT_NE(later.output.find("times: 2 iterations, produced output: ticks min " + second +
                              " mean " + second + " max " + second + "; ended early: ticks min " +
                              first + " mean " + first + " max " + first + "\n"),
            std::string::npos)
      << later.output;
  // The profile of the board's ETDump leaves the early end out as well.
  const CommandResult profiled = testing::RunCommand(
      testing::RunBinary() + " --board serial --port " + board.port() + " " + Path("cb.pte") +
          " --input " + Path("in.bin") + " --iterations 2 --profile json",
      /*with_stderr=*/false);
  ASSERT_EQ(profiled.exit_code, 0) << profiled.output;
  const json profiled_doc = json::parse(profiled.output, nullptr, false);
  ASSERT_TRUE(profiled_doc.is_object()) << profiled.output;
  const json& profile = profiled_doc["profile"];
  EXPECT_EQ(profile["iterations"], 2) << profiled.output;
  EXPECT_EQ(profile["ended_early_runs"], 1) << profiled.output;
  EXPECT_EQ(profile["averaged_runs"], 1) << profiled.output;

  const CommandResult wrong = run(2, "wrong.bin", "wrong.json");
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_NE(wrong.output.find("result: FAIL ticks "), std::string::npos) << wrong.output;
}

// Board-link firmware, one boot: the four cases of one job run as four RUNs that continue on the
// model the first one loaded (protocol 6), so their verdicts and outputs are the sim board's,
// which runs them on one loaded method. A second job on the same board starts afresh: its b
// passes only if its a was the first frame again.
TEST_F(FirmwareNoOutput, BoardLinkCasesKeepTheModelStateAsOnSimAndTheNextJobStartsAfresh) {
  const std::string why = WhyFirmwareCannotRun(BOARDLAB_FIRMWARE_AN505_ELF, NeedsRun::kYes);
  if (!why.empty()) GTEST_SKIP() << why;
  const std::string manifest = Manifest(FourCases());
  const CommandResult sim = testing::RunCommand(
      testing::RunBinary() + " --board sim " + Path("cb.pte") + " --cases " + manifest +
      " --case-results " + Path("sim.json") + " --outputs " + Path("sim"));
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  const json sim_doc = ReadJson(Path("sim.json"));
  ASSERT_TRUE(sim_doc.is_object()) << sim.output;

  testing::QemuBoard board(dir_, BOARDLAB_QEMU_BOARD, BOARDLAB_FIRMWARE_AN505_ELF);
  ASSERT_TRUE(board.Start());
  for (const std::string job : {"first", "second"}) {
    SCOPED_TRACE(job + " job");
    const CommandResult r =
        testing::RunCommand(testing::RunBinary() + " --board serial --port " + board.port() + " " +
                            Path("cb.pte") + " --cases " + manifest + " --case-results " +
                            Path(job + ".json") + " --outputs " + Path(job) + " --timeout 120");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json doc = ReadJson(Path(job + ".json"));
    ASSERT_TRUE(doc.is_object()) << r.output;
    ASSERT_EQ(doc["cases"].size(), 4u) << doc;
    const std::string verdicts[] = {"no_output", "pass", "no_output", "pass"};
    for (size_t i = 0; i < 4; ++i) {
      const std::string name = sim_doc["cases"][i]["name"];
      EXPECT_EQ(doc["cases"][i]["name"], name) << doc;
      EXPECT_EQ(doc["cases"][i]["verdict"], verdicts[i]) << doc;
      EXPECT_EQ(doc["cases"][i]["verdict"], sim_doc["cases"][i]["verdict"]) << doc << sim_doc;
      if (verdicts[i] == "pass") {
        EXPECT_EQ(testing::ReadFile(Path(job + "/" + name + "/output0.bin")),
                  testing::ReadFile(Path("sim/" + name + "/output0.bin")))
            << name;
      }
    }
    EXPECT_EQ(doc["case_summary"]["passed"], 2) << doc;
    EXPECT_EQ(doc["case_summary"]["no_output"], 2) << doc;
    EXPECT_NE(r.output.find("(cache hit), not sent"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace boardlab::firmware
