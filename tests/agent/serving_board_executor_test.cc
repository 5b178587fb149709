// agent/serving_board_executor.h: fake `--serve` scripts for the process handling (answers,
// crashes, hangs, cancel), the real boardlab-run --serve for runs on one runner.

#include "agent/serving_board_executor.h"

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>

#include "gtest/gtest.h"
#include "tests/agent/agent_test_support.h"
#include "tests/support/test_paths.h"

namespace boardlab::agent {
namespace {

using std::chrono::steady_clock;

// Answers every request with a passing run of 7 cycles, after a log line.
constexpr char kAnsweringRunner[] =
    "while read line; do\n"
    "  echo 'a log line'\n"
    "  echo 'result {\"exit\": 0, \"document\": {\"outputs\": [], \"profile\": {\"total_us\": "
    "3.5, \"total_cycles\": 7}}}'\n"
    "done\n";

class ServingExecutorTest : public testing::ExecutorTest {
 protected:
  BoardReport Run(ServingBoardExecutor& executor, const BoardRunRequest& request,
                  std::function<void(BoardRun&)> during = nullptr) {
    return RunOn(executor, request, std::move(during));
  }
};

TEST_F(ServingExecutorTest, OneRunnerAnswersRunAfterRun) {
  ServingBoardExecutor executor(io_, testing::WriteScript(dir_ / "serve.sh", kAnsweringRunner));
  const BoardReport first = Run(executor, Request());
  EXPECT_EQ(first.outcome, v1::RUN_OUTCOME_PASS) << first.message;
  EXPECT_EQ(first.inference_cycles, 7u);
  EXPECT_NE(first.profile_json.find("total_cycles"), std::string::npos);
  EXPECT_TRUE(HasLine("boardlab-agent: running on sim-0: "));
  EXPECT_TRUE(HasLine("a log line"));
  EXPECT_FALSE(HasLine("result {"));  // the answer is the report, not the log
  EXPECT_TRUE(HasLine("boardlab-agent: RUN_OUTCOME_PASS"));
  const pid_t pid = executor.runner_pid();
  EXPECT_GT(pid, 0);
  EXPECT_EQ(Run(executor, Request()).outcome, v1::RUN_OUTCOME_PASS);
  EXPECT_EQ(executor.runner_pid(), pid);
}

TEST_F(ServingExecutorTest, CrashIsABoardErrorAndTheNextRunGetsANewRunner) {
  ServingBoardExecutor executor(
      io_,
      testing::WriteScript(dir_ / "serve.sh", "read line\necho 'about to crash'\nkill -SEGV $$\n"));
  const BoardReport r = Run(executor, Request());
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(r.message, "boardlab-run died of signal 11 (SIGSEGV)");
  EXPECT_TRUE(HasLine("about to crash"));
  EXPECT_EQ(executor.runner_pid(), -1);
  EXPECT_EQ(Run(executor, Request()).outcome, v1::RUN_OUTCOME_BOARD_ERROR);
}

TEST_F(ServingExecutorTest, EndWithoutAnAnswerIsABoardError) {
  ServingBoardExecutor executor(io_,
                                testing::WriteScript(dir_ / "serve.sh", "read line\nexit 0\n"));
  const BoardReport r = Run(executor, Request());
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(r.message, "boardlab-run --serve ended without answering (exit status 0)");
}

TEST_F(ServingExecutorTest, HangingRunIsKilledAtTheTimeout) {
  // The runner's child keeps the pipes open too: the whole group must go.
  ServingBoardExecutor executor(io_,
                                testing::WriteScript(dir_ / "serve.sh", "read line\nsleep 60\n"));
  BoardRunRequest request = Request();
  request.timeout_seconds = 1;
  const auto start = steady_clock::now();
  const BoardReport r = Run(executor, request);
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_EQ(r.message, "timed out after 1s; boardlab-run killed");
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(10));
}

TEST_F(ServingExecutorTest, CancelKillsWithinASecond) {
  ServingBoardExecutor executor(io_,
                                testing::WriteScript(dir_ / "serve.sh", "read line\nsleep 60\n"));
  const auto start = steady_clock::now();
  const BoardReport r = Run(executor, Request(), [](BoardRun& run) { run.Cancel(); });
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_CANCELLED);
  EXPECT_LT(steady_clock::now() - start, std::chrono::seconds(2));
}

TEST_F(ServingExecutorTest, MissingRunnerIsABoardError) {
  ServingBoardExecutor executor(io_, dir_ / "absent");
  const BoardReport r = Run(executor, Request());
  EXPECT_EQ(r.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_NE(r.message.find("cannot start boardlab-run"), std::string::npos) << r.message;
}

// The real boardlab-run --serve on a compiled single-conv model.
class RealServingTest : public ServingExecutorTest {
 protected:
  void SetUp() override {
    runner_ = testing::RealRunnerWithModel(dir_);
    if (runner_.empty()) GTEST_SKIP() << "boardlab-run is not built";
  }
  std::string runner_;
};

TEST_F(RealServingTest, PassFailAndModelErrorOnOneRunner) {
  ServingBoardExecutor executor(io_, runner_);
  BoardRunRequest request = Request();
  request.inputs = {"random:7"};
  request.iterations = 2;
  const BoardReport first = Run(executor, request);
  ASSERT_EQ(first.outcome, v1::RUN_OUTCOME_PASS) << first.message;
  ASSERT_EQ(first.output_paths.size(), 1u);
  EXPECT_FALSE(first.etdump_path.empty());
  EXPECT_GT(first.inference_cycles, 0u);
  EXPECT_NE(first.profile_json.find("\"ops\""), std::string::npos);
  std::string output = testing::ReadText(first.output_paths[0]);
  ASSERT_EQ(output.size(), 8u * 8u * 4u);
  const pid_t pid = executor.runner_pid();

  output[3] = static_cast<char>(output[3] ^ 0x04);
  testing::WriteText(dir_ / "changed.bin", output);
  request.expected = {dir_ / "changed.bin"};
  request.atol = 1;
  const BoardReport fail = Run(executor, request);
  EXPECT_EQ(fail.outcome, v1::RUN_OUTCOME_FAIL) << fail.message;
  EXPECT_EQ(fail.message, "output 0 differs: max abs diff 4 > atol 1");

  testing::WriteText(dir_ / "garbage.pte", std::string(100, 'A'));
  BoardRunRequest garbage = Request();
  garbage.artifact_path = dir_ / "garbage.pte";
  const BoardReport invalid = Run(executor, garbage);
  EXPECT_EQ(invalid.outcome, v1::RUN_OUTCOME_MODEL_ERROR);
  EXPECT_NE(invalid.message.find("invalid artifact"), std::string::npos) << invalid.message;
  EXPECT_TRUE(HasLine("boardlab-run: invalid artifact"));

  testing::WriteText(dir_ / "in.bin", "short");
  BoardRunRequest short_input = Request();
  short_input.inputs = {dir_ / "in.bin"};
  const BoardReport rejected = Run(executor, short_input);
  EXPECT_EQ(rejected.outcome, v1::RUN_OUTCOME_BOARD_ERROR);
  EXPECT_NE(rejected.message.find("has 5 bytes"), std::string::npos) << rejected.message;

  EXPECT_EQ(Run(executor, Request()).outcome, v1::RUN_OUTCOME_PASS);
  EXPECT_EQ(executor.runner_pid(), pid);  // model errors do not cost the runner
}

}  // namespace
}  // namespace boardlab::agent
