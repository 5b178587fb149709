// agent/process_board_executor.h and agent/child_process.h: fake runner scripts for the
// process handling (lines, timeouts, cancel, crashes), the real boardlab-run for the results.

#include "agent/process_board_executor.h"

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/profiling/etdump/clock_record.h"
#include "runtime/profiling/etdump/etdump_writer.h"
#include "tests/agent/agent_test_support.h"
#include "tests/support/test_paths.h"

namespace boardlab::agent {
namespace {

using std::chrono::steady_clock;

class ProcessExecutorTest : public testing::ExecutorTest {
 protected:
  BoardReport Run(const std::string& runner, const BoardRunRequest& request,
                  RunnerBoard board = RunnerBoard::kSim,
                  std::function<void(BoardRun&)> during = nullptr) {
    ProcessBoardExecutor executor(io_, runner, board);
    return RunOn(executor, request, std::move(during));
  }
};

TEST_F(ProcessExecutorTest, StreamsStderrAndKeepsSimStdout) {
  const std::string runner = testing::WriteScript(
      dir_ / "runner.sh",
      "echo 'starting' >&2\n"
      "printf 'no newline at the end' >&2\n"
      "echo '{\"outputs\": [], \"profile\": {\"total_us\": 3.5, \"total_cycles\": 7}}'\n"
      "exit 0\n");
  const BoardReport r = Run(runner, Request());
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_PASS) << r.message;
  EXPECT_EQ(r.message, "ran; no expected outputs to compare");
  EXPECT_EQ(r.inference_cycles, 7u);
  EXPECT_TRUE(HasLine("boardlab-agent: running on sim-0: " + runner));
  EXPECT_TRUE(HasLine("starting"));
  EXPECT_TRUE(HasLine("no newline at the end"));
  EXPECT_FALSE(HasLine("total_us"));  // the JSON is the profile, not the log
  EXPECT_TRUE(HasLine("boardlab-agent: RUN_OUTCOME_PASS"));
}

TEST_F(ProcessExecutorTest, HangingRunIsKilledAtTheTimeout) {
  // The runner's child keeps the pipes open too: the whole group must go.
  const std::string runner =
      testing::WriteScript(dir_ / "hang.sh", "echo started >&2\nsleep 60 &\nsleep 60\n");
  BoardRunRequest request = Request();
  request.timeout_seconds = 1;
  const auto start = steady_clock::now();
  const BoardReport r = Run(runner, request);
  const double seconds = std::chrono::duration<double>(steady_clock::now() - start).count();
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(r.message, "timed out after 1s; boardlab-run killed");
  EXPECT_LT(seconds, 5.0);
  EXPECT_TRUE(HasLine("started"));
}

TEST_F(ProcessExecutorTest, CancelKillsWithinASecond) {
  const std::string runner = testing::WriteScript(dir_ / "hang.sh", "sleep 60\n");
  steady_clock::time_point cancelled;
  boost::asio::steady_timer timer(io_);
  const BoardReport r = Run(runner, Request(), RunnerBoard::kSim, [&](BoardRun& run) {
    timer.expires_after(std::chrono::milliseconds(200));
    timer.async_wait([&](const boost::system::error_code&) {
      cancelled = steady_clock::now();
      run.Cancel();
    });
  });
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_CANCELLED);
  EXPECT_LT(std::chrono::duration<double>(steady_clock::now() - cancelled).count(), 1.0);
}

TEST_F(ProcessExecutorTest, CrashIsABoardError) {
  const std::string runner = testing::WriteScript(dir_ / "crash.sh", "kill -SEGV $$\n");
  const BoardReport r = Run(runner, Request());
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(r.message, "boardlab-run died of signal 11 (SIGSEGV)");
}

TEST_F(ProcessExecutorTest, MissingRunnerIsABoardError) {
  const BoardReport r = Run(dir_ / "absent", Request());
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_NE(r.message.find("cannot start boardlab-run: cannot run"), std::string::npos)
      << r.message;
}

TEST_F(ProcessExecutorTest, QemuStreamsTheConsole) {
  const std::string runner = testing::WriteScript(
      dir_ / "qemu.sh",
      "echo 'output 0: 4 bytes fnv1a32 00000000 pass: max abs diff 0, 0 of 4 elements outside "
      "atol'\n"
      "echo 'result: PASS ticks 1 ns 2000 instructions 2000 (per inference, icount shift 0)'\n");
  BoardRunRequest request = Request();
  request.expected = {"/x"};
  const BoardReport r = Run(runner, request, RunnerBoard::kQemu);
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_PASS) << r.message;
  EXPECT_TRUE(HasLine("result: PASS"));
  EXPECT_DOUBLE_EQ(r.inference_us, 2.0);
  ASSERT_EQ(r.checks.size(), 1u);
}

// The real boardlab-run on a compiled single-conv model.
class RealRunnerTest : public ProcessExecutorTest {
 protected:
  void SetUp() override {
    runner_ = testing::RealRunnerWithModel(dir_);
    if (runner_.empty()) GTEST_SKIP() << "boardlab-run is not built";
  }
  std::string runner_;
};

TEST_F(RealRunnerTest, PassThenFailAgainstExpectedOutputs) {
  BoardRunRequest request = Request();
  request.inputs = {"random:7"};
  request.iterations = 2;
  BoardReport first = Run(runner_, request);
  ASSERT_EQ(first.outcome, v1::RUN_OUTCOME_PASS) << first.message;
  ASSERT_EQ(first.output_paths.size(), 1u);
  EXPECT_FALSE(first.etdump_path.empty());
  EXPECT_GT(first.inference_cycles, 0u);
  EXPECT_GT(first.inference_us, 0.0);
  EXPECT_NE(first.profile_json.find("\"ops\""), std::string::npos);
  // The sim board's profile says what it measured: simulated RT700 cycles, the NPU model.
  const nlohmann::json profile = nlohmann::json::parse(first.profile_json)["profile"];
  EXPECT_EQ(profile["clock"], "rt700-sim-cycles");
  EXPECT_EQ(profile["ops"][0]["ran_on"], "npu");
  std::string output = testing::ReadText(first.output_paths[0]);
  ASSERT_EQ(output.size(), 8u * 8u * 4u);

  testing::WriteText(dir_ / "expected.bin", output);
  output[3] = static_cast<char>(output[3] ^ 0x04);
  testing::WriteText(dir_ / "changed.bin", output);
  request.expected = {dir_ / "expected.bin"};
  BoardReport pass = Run(runner_, request);
  EXPECT_EQ(pass.outcome, v1::RUN_OUTCOME_PASS) << pass.message;
  ASSERT_EQ(pass.checks.size(), 1u);
  EXPECT_TRUE(pass.checks[0].passed());
  EXPECT_EQ(pass.checks[0].max_abs_diff(), 0);

  request.expected = {dir_ / "changed.bin"};
  request.atol = 1;
  BoardReport fail = Run(runner_, request);
  EXPECT_EQ(fail.outcome, v1::RUN_OUTCOME_FAIL) << fail.message;
  ASSERT_EQ(fail.checks.size(), 1u);
  EXPECT_FALSE(fail.checks[0].passed());
  EXPECT_EQ(fail.checks[0].max_abs_diff(), 4);
  EXPECT_EQ(fail.message, "output 0 differs: max abs diff 4 > atol 1");
}

// A firmware ETDump as boardlab-firmware writes it under QEMU -icount: its clock record and one
// NPU kernel that the software engine ran on the Cortex-M33.
std::string QemuEtdump() {
  std::vector<uint8_t> buffer(16 * 1024);
  runtime::etdump::EtdumpWriter w(buffer.data(), buffer.size());
  w.BeginRun("Default");
  runtime::etdump::ClockRecord clock;
  clock.kind = runtime::etdump::ClockKind::kQemuIcount;
  clock.ticks_per_second = 20000000;
  clock.icount_shift = 0;
  runtime::etdump::WriteClockRecord(w, clock);
  w.BeginRun("Execute");
  const uint8_t metadata[2] = {0,
                               static_cast<uint8_t>(runtime::ExecutionUnit::kNpuEmulatedCortexM33)};
  w.LogDelegateEvent(10, 0, 0, 100, 400, metadata, 2);
  w.LogProfileEvent("DELEGATE_CALL", 0, 0, 90, 410);
  w.LogProfileEvent("Method::execute", -1, -1, 80, 420);
  auto bytes = w.Finish();
  EXPECT_TRUE(bytes.ok());
  return std::string(bytes->begin(), bytes->end());
}

// The qemu driver reads its profile back from the firmware's ETDump with boardlab-run --inspect:
// the profile it stores names the QEMU clock and says the NPU kernels ran on the Cortex-M33.
TEST_F(RealRunnerTest, QemuProfileNamesItsClockAndWhereKernelsRan) {
  const std::string etdp = dir_ / "firmware.etdp";
  testing::WriteText(etdp, QemuEtdump());
  // A stand-in for `boardlab-run --board qemu` that leaves the firmware's ETDump where it is
  // asked to; the real boardlab-run does the --inspect.
  const std::string runner =
      testing::WriteScript(dir_ / "qemu_board.sh", "if [ \"$1\" = --inspect ]; then exec " +
                                                       runner_ + R"( "$@"; fi
while [ $# -gt 0 ]; do
  if [ "$1" = --etdump ]; then cp )" + etdp + R"( "$2"; fi
  shift
done
echo 'result: UNVERIFIED ticks 330 ns 16500 instructions 16500 (per inference, icount shift 0)'
)");
  const BoardReport r = Run(runner, Request(), RunnerBoard::kQemu);
  ASSERT_EQ(r.outcome, v1::RUN_OUTCOME_PASS) << r.message;
  ASSERT_FALSE(r.profile_json.empty());
  const nlohmann::json profile = nlohmann::json::parse(r.profile_json)["profile"];
  EXPECT_EQ(profile["clock"], "qemu-icount");
  EXPECT_EQ(profile["clock_label"], "QEMU instructions (icount shift 0), not Cortex-M33 cycles");
  ASSERT_EQ(profile["ops"].size(), 1u);
  const nlohmann::json& kernel = profile["ops"][0]["npu_kernels"][0];
  EXPECT_EQ(kernel["ran_on"], "npu-emulated-cortex-m33");
  EXPECT_TRUE(kernel["cycles"].is_null());
  EXPECT_EQ(kernel["instructions"], 300 * 50);
}

TEST_F(RealRunnerTest, GarbageArtifactIsAModelError) {
  testing::WriteText(dir_ / "model.pte", std::string(100, 'A'));
  const BoardReport r = Run(runner_, Request());
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_MODEL_ERROR);
  EXPECT_NE(r.message.find("invalid artifact"), std::string::npos) << r.message;
}

TEST_F(RealRunnerTest, WrongSizedInputIsABoardError) {
  testing::WriteText(dir_ / "in.bin", "short");
  BoardRunRequest request = Request();
  request.inputs = {dir_ / "in.bin"};
  const BoardReport r = Run(runner_, request);
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_NE(r.message.find("has 5 bytes"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace boardlab::agent
