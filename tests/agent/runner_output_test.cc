// agent/runner_output.h: boardlab-run's command line, exit codes, JSON and console read back.

#include "agent/runner_output.h"

#include <algorithm>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/agent/agent_test_support.h"

namespace boardlab::agent {
namespace {

BoardRunRequest Request(const std::string& work_dir) {
  BoardRunRequest r;
  r.board_id = "sim-0";
  r.artifact_path = "/c/a.pte";
  r.inputs = {"/c/in0", "random:7"};
  r.expected = {"/c/exp0"};
  r.atol = 1;
  r.iterations = 3;
  r.timeout_seconds = 30;
  r.work_dir = work_dir;
  return r;
}

ChildExit Exited(int code) {
  ChildExit e;
  e.kind = ChildExit::Kind::kExited;
  e.exit_code = code;
  return e;
}

TEST(RunnerOutput, SimCommandLine) {
  const std::vector<std::string> argv =
      RunnerCommand("/bin/boardlab-run", RunnerBoard::kSim, Request("/w"));
  const std::vector<std::string> expected = {
      "/bin/boardlab-run", "/c/a.pte", "--board",    "sim",         "--input",   "/c/in0",
      "--input",           "random:7", "--expected", "/c/exp0",     "--atol",    "1",
      "--iterations",      "3",        "--etdump",   "/w/run.etdp", "--outputs", "/w/outputs",
      "--profile",         "json"};
  EXPECT_EQ(argv, expected);
}

TEST(RunnerOutput, QemuCommandLineHasTheTimeoutAndNoProfile) {
  const std::vector<std::string> argv =
      RunnerCommand("/bin/boardlab-run", RunnerBoard::kQemu, Request("/w"));
  EXPECT_EQ(argv[3], "qemu");
  EXPECT_EQ(argv[argv.size() - 2], "--timeout");
  EXPECT_EQ(argv.back(), "30");
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--profile"), argv.end());
}

TEST(RunnerOutput, SerialCommandLineCarriesTheTestFaultOnlyWhenSet) {
  SerialBoardConfig serial;
  serial.port = "tcp:127.0.0.1:5555";
  serial.connect_timeout_seconds = 5;
  BoardRunRequest request = Request("/w");
  std::vector<std::string> argv =
      RunnerCommand("/bin/boardlab-run", RunnerBoard::kSerial, request, &serial);
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--test-fault"), argv.end());
  request.test_fault = "hang";
  argv = RunnerCommand("/bin/boardlab-run", RunnerBoard::kSerial, request, &serial);
  auto at = std::find(argv.begin(), argv.end(), "--test-fault");
  ASSERT_NE(at, argv.end());
  EXPECT_EQ(*(at + 1), "hang");
  // The sim board has no such option: a test fault never reaches its command line.
  argv = RunnerCommand("/bin/boardlab-run", RunnerBoard::kSim, request);
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--test-fault"), argv.end());
}

constexpr char kSimJson[] = R"({
  "artifact": "a.pte", "verdict": "fail", "atol": 1.0, "persistent_bytes": 10,
  "outputs": [
    {"index": 0, "verification": {"pass": true, "max_abs_diff": 1.0, "mismatches": 0}},
    {"index": 1, "verification": {"pass": false, "max_abs_diff": 7.0, "mismatches": 3}},
    {"index": 2}
  ],
  "profile": {"clock": "sim", "iterations": 3, "total_us": 12.5, "total_cycles": 4321, "ops": []}
})";

// Two outputs and an ETDump, as a run leaves them in its work directory.
void WriteRunFiles(const testing::ScratchDir& dir) {
  std::filesystem::create_directories(dir / "outputs");
  testing::WriteText(dir / "outputs/output0.bin", "x");
  testing::WriteText(dir / "outputs/output1.bin", "y");
  testing::WriteText(dir / "run.etdp", "e");
}

TEST(RunnerOutput, SimJsonGivesChecksAndFigures) {
  testing::ScratchDir dir;
  WriteRunFiles(dir);
  const BoardReport r =
      InterpretRunnerExit(RunnerBoard::kSim, Request(dir.path().string()), Exited(1), kSimJson, {});
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_FAIL);
  EXPECT_EQ(r.message, "output 1 differs: max abs diff 7 > atol 1");
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_TRUE(r.checks[0].passed());
  EXPECT_EQ(r.checks[1].index(), 1);
  EXPECT_FALSE(r.checks[1].passed());
  EXPECT_EQ(r.checks[1].max_abs_diff(), 7);
  EXPECT_DOUBLE_EQ(r.inference_us, 12.5);
  EXPECT_EQ(r.inference_cycles, 4321u);
  EXPECT_EQ(r.profile_json, kSimJson);
  ASSERT_EQ(r.output_paths.size(), 2u);
  EXPECT_EQ(r.output_paths[1], dir / "outputs/output1.bin");
  EXPECT_EQ(r.etdump_path, dir / "run.etdp");
}

// A profile whose clock has no known rate or does not count cycles has null figures: the run
// still passes, with the figures unknown.
TEST(RunnerOutput, NullProfileFiguresAreUnknownNotAnError) {
  testing::ScratchDir dir;
  const std::string json = R"({"outputs": [],
      "profile": {"clock": "qemu-icount", "total_us": null, "total_cycles": null, "ops": []}})";
  const BoardReport r =
      InterpretRunnerExit(RunnerBoard::kSim, Request(dir.path().string()), Exited(0), json, {});
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_PASS) << r.message;
  EXPECT_DOUBLE_EQ(r.inference_us, 0.0);
  EXPECT_EQ(r.inference_cycles, 0u);
  EXPECT_EQ(r.profile_json, json);
}

// A single run whose iterations mixed early ends with whole inferences: its time (and cycles, on
// a cycle clock) is the document's mean of the inferences that produced output, not the
// profile's mean of all; when none produced output there is no time.
TEST(RunnerOutput, ASingleRunIsTimedByItsInferencesThatProducedOutput) {
  testing::ScratchDir dir;
  const std::string mixed = R"({"verdict": "pass", "outputs": [],
      "total_us": 10.0, "ticks": 3250, "early_inferences": 1, "early_total_us": 2.0,
      "early_ticks": 650, "profile": {"clock": "rt700-sim-cycles", "total_us": 6.0,
      "total_cycles": 1950, "ops": []}})";
  const BoardReport r =
      InterpretRunnerExit(RunnerBoard::kSim, Request(dir.path().string()), Exited(0), mixed, {});
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_PASS) << r.message;
  EXPECT_DOUBLE_EQ(r.inference_us, 10.0);
  EXPECT_EQ(r.inference_cycles, 3250u);

  const std::string none = R"({"verdict": "no_output", "outputs": [],
      "total_us": null, "ticks": 0, "early_inferences": 2, "early_total_us": 2.0,
      "early_ticks": 650, "profile": {"clock": "rt700-sim-cycles", "total_us": 2.0,
      "total_cycles": 650, "ops": []}})";
  const BoardReport n =
      InterpretRunnerExit(RunnerBoard::kSim, Request(dir.path().string()), Exited(0), none, {});
  EXPECT_EQ(n.outcome, v1::RUN_OUTCOME_NO_OUTPUT) << n.message;
  EXPECT_DOUBLE_EQ(n.inference_us, 0.0);
  EXPECT_EQ(n.inference_cycles, 0u);
}

// A served run's work directory keeps the previous run's files: only those the answer names
// are this run's, and an answer without a completed run names none.
TEST(RunnerOutput, ServeAnswerNamesItsOwnFiles) {
  testing::ScratchDir dir;
  WriteRunFiles(dir);  // output1.bin is a leftover of an earlier run
  const BoardRunRequest request = Request(dir.path().string());
  const std::string output0 = dir / "outputs/output0.bin";
  const BoardReport pass = InterpretServeResult(
      request, "result {\"exit\": 0, \"document\": {\"outputs\": [{\"index\": 0, \"path\": \"" +
                   output0 + "\"}], \"profile\": {}}}");
  EXPECT_EQ(pass.outcome, v1::RUN_OUTCOME_PASS) << pass.message;
  EXPECT_EQ(pass.output_paths, std::vector<std::string>{output0});
  EXPECT_EQ(pass.etdump_path, dir / "run.etdp");
  const BoardReport failed =
      InterpretServeResult(request, "result {\"exit\": 4, \"error\": \"execute: kernel failed\"}");
  EXPECT_EQ(failed.outcome, v1::RUN_OUTCOME_MODEL_ERROR);
  EXPECT_TRUE(failed.output_paths.empty());
  EXPECT_TRUE(failed.etdump_path.empty());
}

TEST(RunnerOutput, ExitCodesMapToOutcomes) {
  const BoardRunRequest request = Request("/nonexistent");
  const std::vector<std::string> err = {"boardlab-run: reading input file 'x': cannot open it"};
  const auto outcome = [&](int code, const std::vector<std::string>& lines) {
    return InterpretRunnerExit(RunnerBoard::kSim, request, Exited(code), "{}", lines);
  };
  EXPECT_EQ(outcome(0, {}).outcome, v1::RUN_OUTCOME_PASS);
  EXPECT_EQ(outcome(0, {}).message, "outputs match (atol 1)");
  EXPECT_EQ(outcome(1, {}).outcome, v1::RUN_OUTCOME_FAIL);
  EXPECT_EQ(outcome(2, err).outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(outcome(2, err).message,
            "boardlab-run rejected the run (agent or download problem): reading input file 'x': "
            "cannot open it");
  EXPECT_EQ(outcome(3, {"boardlab-run: invalid artifact 'a': truncated"}).outcome,
            v1::RUN_OUTCOME_MODEL_ERROR);
  EXPECT_EQ(outcome(3, {"boardlab-run: invalid artifact 'a': truncated"}).message,
            "invalid artifact 'a': truncated");
  EXPECT_EQ(outcome(4, {"boardlab-run: execute: kernel failed"}).outcome,
            v1::RUN_OUTCOME_MODEL_ERROR);
  EXPECT_EQ(outcome(4, {"boardlab-run: board error: the firmware hit a CPU fault"}).outcome,
            v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(outcome(9, {}).outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(outcome(9, {}).message, "boardlab-run exited with status 9");
  // A passing run whose JSON cannot be read is not a pass.
  const BoardReport garbled =
      InterpretRunnerExit(RunnerBoard::kSim, request, Exited(0), "{not json", {});
  EXPECT_EQ(garbled.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_NE(garbled.message.find("profile JSON"), std::string::npos);
}

TEST(RunnerOutput, KilledRuns) {
  const BoardRunRequest request = Request("/nonexistent");
  ChildExit e;
  e.kind = ChildExit::Kind::kTimedOut;
  BoardReport r = InterpretRunnerExit(RunnerBoard::kSim, request, e, "", {});
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(r.message, "timed out after 30s; boardlab-run killed");
  e.kind = ChildExit::Kind::kKilled;
  EXPECT_EQ(InterpretRunnerExit(RunnerBoard::kSim, request, e, "", {}).outcome,
            v1::RUN_OUTCOME_CANCELLED);
  e.kind = ChildExit::Kind::kSignaled;
  e.signal = 11;
  r = InterpretRunnerExit(RunnerBoard::kSim, request, e, "", {});
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(r.message, "boardlab-run died of signal 11 (SIGSEGV)");
}

TEST(RunnerOutput, QemuConsoleGivesChecksAndTime) {
  const std::string console =
      "boardlab-firmware: loading\n"
      "output 0: 256 bytes fnv1a32 1234abcd pass: max abs diff 0, 0 of 256 elements outside "
      "atol\n"
      "output 1: 16 bytes fnv1a32 0000abcd FAIL: max abs diff 5, 2 of 16 elements outside atol\n"
      "memory: RAM pool 1 of 2 bytes used\n"
      "result: FAIL ticks 100 ns 250000 instructions 250000 (per inference, icount shift 0)\n";
  const BoardReport r =
      InterpretRunnerExit(RunnerBoard::kQemu, Request("/nonexistent"), Exited(1), console, {});
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_FAIL);
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_TRUE(r.checks[0].passed());
  EXPECT_FALSE(r.checks[1].passed());
  EXPECT_EQ(r.checks[1].max_abs_diff(), 5);
  EXPECT_DOUBLE_EQ(r.inference_us, 250.0);
  EXPECT_TRUE(r.profile_json.empty());
}

// A run whose last inference ended early: the sim document's verdict, the qemu and serial
// console's result line. Exit 0 as for a pass, but the outcome is NO_OUTPUT.
TEST(RunnerOutput, NoOutputYetIsItsOwnOutcome) {
  testing::ScratchDir dir;
  const std::string sim = R"({"verdict": "no_output", "outputs": [{"index": 0}],
      "profile": {"clock": "rt700-sim-cycles", "total_us": 1.5, "ops": []}})";
  const BoardReport from_sim =
      InterpretRunnerExit(RunnerBoard::kSim, Request(dir.path().string()), Exited(0), sim, {});
  EXPECT_EQ(from_sim.outcome, v1::RUN_OUTCOME_NO_OUTPUT);
  EXPECT_NE(from_sim.message.find("no output yet: a streaming op ended the last inference early"),
            std::string::npos)
      << from_sim.message;
  EXPECT_TRUE(from_sim.checks.empty());
  const std::string console =
      "output 0: 12 bytes fnv1a32 1234abcd\n"
      "no output yet: a streaming op ended the last inference early (0 of 1 inferences produced "
      "output); the outputs were not checked\n"
      "result: NO_OUTPUT ticks 1 ns 2000 instructions 2000 (per inference, icount shift 0)\n";
  for (const RunnerBoard board : {RunnerBoard::kQemu, RunnerBoard::kSerial}) {
    const BoardReport r =
        InterpretRunnerExit(board, Request("/nonexistent"), Exited(0), console, {});
    EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_NO_OUTPUT);
    EXPECT_TRUE(r.checks.empty());
  }
  // No inference produced output: the line has no inference time, only the early ends' apart.
  const std::string none =
      "result: NO_OUTPUT no inference produced output; ended early: 2 inferences, ticks 1 ns "
      "2000 instructions 2000 (per inference, icount shift 0)\n";
  for (const RunnerBoard board : {RunnerBoard::kQemu, RunnerBoard::kSerial}) {
    const BoardReport r = InterpretRunnerExit(board, Request("/nonexistent"), Exited(0), none, {});
    EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_NO_OUTPUT);
    EXPECT_DOUBLE_EQ(r.inference_us, 0.0);
    EXPECT_EQ(r.inference_clock, "qemu-icount");
  }
  // Some did: the time is theirs, the early ends' follows apart.
  const BoardReport mixed = InterpretRunnerExit(
      RunnerBoard::kSerial, Request("/nonexistent"), Exited(0),
      "result: PASS ticks 5 ns 5000; ended early: 1 inference, ticks 1 ns 1000 (per inference, "
      "DWT cycles)\n",
      {});
  EXPECT_EQ(mixed.outcome, v1::RUN_OUTCOME_PASS);
  EXPECT_DOUBLE_EQ(mixed.inference_us, 5.0);
  EXPECT_EQ(mixed.inference_clock, "DWT cycles");
  // The same run with a real result line is a pass.
  const BoardReport pass = InterpretRunnerExit(
      RunnerBoard::kQemu, Request("/nonexistent"), Exited(0),
      "result: PASS ticks 1 ns 2000 instructions 2000 (per inference, icount shift 0)\n", {});
  EXPECT_EQ(pass.outcome, v1::RUN_OUTCOME_PASS);
}

// The clock that timed inference_us goes to the server with it: the profile's for a sim run,
// the console's "(per inference, ...)" for QEMU and serial boards.
TEST(RunnerOutput, TheRunNamesTheClockOfItsTime) {
  testing::ScratchDir dir;
  const std::string sim = R"({"outputs": [],
      "profile": {"clock": "rt700-sim-cycles", "total_us": 612.5, "ops": []}})";
  EXPECT_EQ(InterpretRunnerExit(RunnerBoard::kSim, Request(dir.path().string()), Exited(0), sim, {})
                .inference_clock,
            "rt700-sim-cycles");
  const std::pair<std::string, std::string> consoles[] = {
      {"result: PASS ticks 1 ns 2000 instructions 2000 (per inference, icount shift 0)",
       "qemu-icount"},
      {"result: PASS ticks 1 ns 2000 (per inference, no icount: host time)", "qemu-virtual-time"},
      {"result: PASS ticks 1 ns 2000 (per inference, cmsdk-timer0)", "cmsdk-timer0"},
      // The an505 board behind a serial port without -icount (firmware/an505_board_support.cc):
      // QEMU's host-paced time, which the server must not judge a latency budget on.
      {"result: PASS ticks 1 ns 2000 (per inference, cmsdk-timer0 (qemu virtual time))",
       "qemu-virtual-time"},
      {"result: PASS ticks 1 ns 2000", ""},
  };
  for (const auto& [line, clock] : consoles) {
    const BoardReport r = InterpretRunnerExit(RunnerBoard::kQemu, Request("/nonexistent"),
                                              Exited(0), line + "\n", {});
    EXPECT_DOUBLE_EQ(r.inference_us, 2.0) << line;
    EXPECT_EQ(r.inference_clock, clock) << line;
  }
}

}  // namespace
}  // namespace boardlab::agent

namespace boardlab::agent {
namespace {

// A many-case run: the manifest replaces the inputs and expected outputs on every board.
BoardRunRequest CasesRequest(const std::string& work_dir) {
  BoardRunRequest r = Request(work_dir);
  r.inputs.clear();
  r.expected.clear();
  r.cases_manifest = work_dir + "/cases.json";
  r.cases_verified = true;
  return r;
}

// A serial board that no longer holds the model the job's first case loaded refuses the next
// case (boardlab-run exits 2; its --json document says why): a board error that says so, not
// the agent's files.
TEST(RunnerOutput, ASerialBoardThatLostTheJobsModelIsABoardErrorThatSaysSo) {
  testing::ScratchDir dir;
  const BoardRunRequest request = CasesRequest(dir.path().string());
  const std::vector<std::string> err = {
      "boardlab-run: case 'b': not run: RUN continues job 7 on artifact sha256 0a1b..., but the "
      "board holds no model that job loaded (the board was reset, or another job or artifact "
      "came since)"};
  std::ofstream(RunJsonPath(request)) << R"({"exit": 2, "error_kind": "model_not_held"})";
  const BoardReport lost =
      InterpretRunnerExit(RunnerBoard::kSerial, request, Exited(2), "case a:\n", err);
  EXPECT_EQ(lost.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(lost.message,
            "board error: the board lost the model this job loaded between its cases (it was "
            "reset, or another job ran on it): " +
                err[0].substr(std::string("boardlab-run: ").size()));

  // Without the document's word it stays a refusal of the agent's files.
  std::ofstream(RunJsonPath(request)) << R"({"exit": 2})";
  const BoardReport refused =
      InterpretRunnerExit(RunnerBoard::kSerial, request, Exited(2), "", {"boardlab-run: x"});
  EXPECT_EQ(refused.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(refused.message, "boardlab-run rejected the run (agent or download problem): x");
}

// Two cases as boardlab-run's documents give them (runtime/cli/run_cases.h CaseJson): a passes,
// b's output 0 is 7 off and names another class.
constexpr char kCasesJson[] = R"("cases": [
    {"name": "a", "verdict": "pass", "max_abs_diff": 0, "total_us": 610.5, "ticks": 198413,
     "outputs": [{"index": 0, "path": "/w/outputs/a/output0.bin",
                  "verification": {"pass": true, "max_abs_diff": 0}}],
     "top1": {"class": 3, "expected": 3, "agrees": true}},
    {"name": "b", "verdict": "fail", "max_abs_diff": 7, "total_us": 612.5, "ticks": 199063,
     "outputs": [{"index": 0, "path": "/w/outputs/b/output0.bin",
                  "verification": {"pass": false, "max_abs_diff": 7}}],
     "top1": {"class": 5, "expected": 3, "agrees": false}}],
  "case_summary": {"cases": 2, "passed": 1, "slowest_us": 612.5, "slowest_case": "b"})";

void ExpectTwoCases(const BoardReport& r) {
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_FAIL);
  EXPECT_EQ(r.message, "1 of 2 cases failed: b (output 0: max abs diff 7 > atol 1)");
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].result.name(), "a");
  EXPECT_TRUE(r.cases[0].result.passed());
  EXPECT_FALSE(r.cases[1].result.passed());
  ASSERT_EQ(r.cases[1].result.checks_size(), 1);
  EXPECT_EQ(r.cases[1].result.checks(0).max_abs_diff(), 7);
  EXPECT_EQ(r.cases[1].result.top1(), 5);
  EXPECT_EQ(r.cases[1].result.top1_expected(), 3);
  EXPECT_EQ(r.cases[1].result.ticks(), 199063u);
  EXPECT_EQ(r.cases[1].output_paths, std::vector<std::string>{"/w/outputs/b/output0.bin"});
  EXPECT_DOUBLE_EQ(r.inference_us, 612.5) << "the slowest case's";
  EXPECT_TRUE(r.checks.empty());
}

TEST(RunnerOutputCases, EveryBoardRunsTheManifest) {
  for (RunnerBoard board : {RunnerBoard::kSim, RunnerBoard::kQemu}) {
    const std::vector<std::string> argv =
        RunnerCommand("/bin/boardlab-run", board, CasesRequest("/w"));
    EXPECT_EQ(std::find(argv.begin(), argv.end(), "--input"), argv.end());
    const auto cases = std::find(argv.begin(), argv.end(), "--cases");
    ASSERT_NE(cases, argv.end());
    EXPECT_EQ(*(cases + 1), "/w/cases.json");
    EXPECT_NE(std::find(argv.begin(), argv.end(), "--atol"), argv.end());
    const bool results = std::find(argv.begin(), argv.end(), "--case-results") != argv.end();
    EXPECT_EQ(results, board != RunnerBoard::kSim) << "sim answers with its document";
  }
  const std::string line = ServeRequestLine(CasesRequest("/w"));
  EXPECT_NE(line.find("\"cases\":\"/w/cases.json\""), std::string::npos) << line;
  EXPECT_EQ(line.find("\"inputs\""), std::string::npos) << line;
}

TEST(RunnerOutputCases, ServedDocumentGivesEachCase) {
  const std::string answer =
      std::string("result {\"exit\": 1, \"document\": {\"outputs\": [], \"profile\": ") +
      "{\"clock\": \"rt700-sim-cycles\", \"total_us\": 611.5}, " + kCasesJson + "}}";
  const BoardReport r = InterpretServeResult(CasesRequest("/w"), answer);
  ExpectTwoCases(r);
  EXPECT_EQ(r.inference_clock, "rt700-sim-cycles");
}

TEST(RunnerOutputCases, QemuCaseResultsFile) {
  testing::ScratchDir dir;
  const BoardRunRequest request = CasesRequest(dir.path().string());
  std::ofstream(CaseResultsPath(request)) << "{\"clock\": \"qemu-icount\", " << kCasesJson << "}";
  const BoardReport r = InterpretRunnerExit(RunnerBoard::kQemu, request, Exited(1),
                                            "case a: PASS ticks 1 ns 1\n", {});
  ExpectTwoCases(r);
  EXPECT_EQ(r.inference_clock, "qemu-icount");

  // A run that says it ran but left no results is the board's failure, not a pass.
  testing::ScratchDir empty;
  const BoardReport lost = InterpretRunnerExit(
      RunnerBoard::kQemu, CasesRequest(empty.path().string()), Exited(0), "", {});
  EXPECT_EQ(lost.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_NE(lost.message.find("no readable case results"), std::string::npos) << lost.message;
}

TEST(RunnerOutputCases, PassingCasesSaySoInOneLine) {
  testing::ScratchDir dir;
  BoardRunRequest request = CasesRequest(dir.path().string());
  std::ofstream(CaseResultsPath(request))
      << R"({"clock": "qemu-icount", "cases": [{"name": "a", "verdict": "pass", "outputs": []}],
            "case_summary": {"cases": 1, "passed": 1, "slowest_us": null}})";
  BoardReport r = InterpretRunnerExit(RunnerBoard::kQemu, request, Exited(0), "", {});
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_PASS);
  EXPECT_EQ(r.message, "1 case: outputs match (atol 1)");
  request.cases_verified = false;
  r = InterpretRunnerExit(RunnerBoard::kQemu, request, Exited(0), "", {});
  EXPECT_EQ(r.message, "1 case ran; no expected outputs to compare");
}

// A case whose last inference ended early is no output: not passed, not a failure. The run is
// NO_OUTPUT only when every case is; otherwise the others decide, and the message counts it.
TEST(RunnerOutputCases, CasesWithoutOutputAreNeitherPassedNorFailed) {
  testing::ScratchDir dir;
  const BoardRunRequest request = CasesRequest(dir.path().string());
  std::ofstream(CaseResultsPath(request)) << R"({"clock": "qemu-icount", "cases": [
               {"name": "a", "verdict": "no_output", "outputs": [{"index": 0}]},
               {"name": "b", "verdict": "pass", "outputs": []}],
            "case_summary": {"cases": 2, "passed": 1, "no_output": 1, "slowest_us": null}})";
  BoardReport r = InterpretRunnerExit(RunnerBoard::kQemu, request, Exited(0), "", {});
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_PASS);
  EXPECT_EQ(r.message, "2 cases: outputs match (atol 1) (1 with no output yet, not compared)");
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_TRUE(r.cases[0].result.no_output());
  EXPECT_FALSE(r.cases[0].result.passed());
  EXPECT_FALSE(r.cases[1].result.no_output());

  std::ofstream(CaseResultsPath(request), std::ios::trunc) << R"({"clock": "qemu-icount", "cases": [
               {"name": "a", "verdict": "no_output", "outputs": [{"index": 0}]}],
            "case_summary": {"cases": 1, "passed": 0, "no_output": 1, "slowest_us": null}})";
  r = InterpretRunnerExit(RunnerBoard::kQemu, request, Exited(0), "", {});
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_NO_OUTPUT);
  EXPECT_NE(r.message.find("no output yet in any of 1 case"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace boardlab::agent

namespace boardlab::agent {
namespace {

// A float output whose difference is NaN against a number (JSON null) or beyond int32 is still
// a mismatch with a figure, not a document the agent cannot read (a board error, retried).
TEST(RunnerOutput, DifferencesJsonCannotHoldOrIntCannotHoldAreStillAMismatch) {
  testing::ScratchDir dir;
  const std::string json = R"({"outputs": [
      {"index": 0, "verification": {"pass": false, "max_abs_diff": null}},
      {"index": 1, "verification": {"pass": false, "max_abs_diff": 1e30}}],
      "profile": {"clock": "rt700-sim-cycles", "total_us": 1.0}})";
  const BoardReport r =
      InterpretRunnerExit(RunnerBoard::kSim, Request(dir.path().string()), Exited(1), json, {});
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_FAIL) << r.message;
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_EQ(r.checks[0].max_abs_diff(), -1);
  EXPECT_EQ(r.checks[1].max_abs_diff(), INT32_MAX);
}

}  // namespace
}  // namespace boardlab::agent
