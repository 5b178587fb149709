#include "agent/serving_board_executor.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "agent/child_process.h"
#include "agent/runner_output.h"

namespace boardlab::agent {
namespace {

// A runner's answer carries the profile JSON on one line; it is bounded like a one-shot run's
// stdout.
constexpr size_t kMaxAnswerBytes = 64u << 20;

// One run on the runner.
struct ServeRun {
  ServeRun(boost::asio::io_context& io, BoardRunRequest r, LineCallback line, DoneCallback done)
      : request(std::move(r)), on_line(std::move(line)), on_done(std::move(done)), deadline(io) {}
  BoardRunRequest request;
  LineCallback on_line;
  DoneCallback on_done;
  boost::asio::steady_timer deadline;
  ChildExit::Kind kill_reason = ChildExit::Kind::kExited;  // kTimedOut, kKilled: ours
};

}  // namespace

struct ServingBoardExecutor::Runner {
  std::shared_ptr<ChildProcess> child;
  std::shared_ptr<ServeRun> run;  // the run it works on, if any
  bool usable = true;             // false once it was killed or ended: the next run needs another

  // Kills the runner for `reason`; on_exit reports the run.
  void Kill(ChildExit::Kind reason) {
    if (run != nullptr && run->kill_reason == ChildExit::Kind::kExited) run->kill_reason = reason;
    usable = false;
    child->Kill();
  }

  void Finish(BoardReport report) {
    std::shared_ptr<ServeRun> done = std::move(run);
    run = nullptr;
    done->deadline.cancel();
    done->on_line(absl::StrCat("boardlab-agent: ", v1::RunOutcome_Name(report.outcome), ": ",
                               report.message));
    done->on_done(std::move(report));
  }

  void OnLine(std::string line) {
    if (run == nullptr) return;  // nothing asked for: nobody to tell
    if (line.compare(0, sizeof(kServeResultPrefix) - 1, kServeResultPrefix) == 0) {
      return Finish(InterpretServeResult(run->request, line));
    }
    run->on_line(std::move(line));
  }

  void OnExit(const ChildExit& exit) {
    usable = false;
    if (run == nullptr) return;
    ChildExit how = exit;
    if (run->kill_reason != ChildExit::Kind::kExited) how.kind = run->kill_reason;
    if (how.kind != ChildExit::Kind::kExited) {
      return Finish(InterpretRunnerExit(RunnerBoard::kSim, run->request, how, "", {}));
    }
    BoardReport report;
    report.message = absl::StrCat("boardlab-run --serve ended without answering (exit status ",
                                  how.exit_code, ")");
    Finish(std::move(report));
  }
};

namespace {

class ServeBoardRun : public BoardRun {
 public:
  ServeBoardRun(std::shared_ptr<ServingBoardExecutor::Runner> runner, std::shared_ptr<ServeRun> run)
      : runner_(std::move(runner)), run_(std::move(run)) {}
  // Dropped before its report: the runner may be mid-run, so it goes (without a report).
  ~ServeBoardRun() override {
    if (runner_->run != run_) return;
    runner_->run = nullptr;
    runner_->usable = false;
    run_->deadline.cancel();
    runner_->child->Detach();
  }
  void Cancel() override {
    if (runner_->run == run_) runner_->Kill(ChildExit::Kind::kKilled);
  }

 private:
  std::shared_ptr<ServingBoardExecutor::Runner> runner_;
  std::shared_ptr<ServeRun> run_;
};

}  // namespace

ServingBoardExecutor::ServingBoardExecutor(boost::asio::io_context& io, std::string boardlab_run)
    : io_(io), boardlab_run_(std::move(boardlab_run)) {}

ServingBoardExecutor::~ServingBoardExecutor() {
  if (runner_ != nullptr) runner_->child->Detach();
}

pid_t ServingBoardExecutor::runner_pid() const {
  return runner_ != nullptr && runner_->usable ? runner_->child->pid() : -1;
}

void ServingBoardExecutor::StartRunner() {
  auto runner = std::make_shared<Runner>();
  ChildOptions options;
  options.argv = {boardlab_run_, "--serve", "--board", "sim"};
  options.stdin_pipe = true;
  options.max_stdout_line = kMaxAnswerBytes;
  // The callbacks hold the runner until it has exited (ChildProcess drops them then).
  auto on_line = [runner](std::string line) { runner->OnLine(std::move(line)); };
  runner->child = ChildProcess::Start(io_, std::move(options), on_line, on_line,
                                      [runner](const ChildExit& exit) { runner->OnExit(exit); });
  runner_ = std::move(runner);
}

std::unique_ptr<BoardRun> ServingBoardExecutor::Start(const BoardRunRequest& request,
                                                      LineCallback on_line, DoneCallback on_done) {
  if (runner_ == nullptr || !runner_->usable) StartRunner();
  auto run = std::make_shared<ServeRun>(io_, request, std::move(on_line), std::move(on_done));
  runner_->run = run;
  const std::string line = ServeRequestLine(request);
  boost::asio::post(
      io_, [run, text = absl::StrCat("boardlab-agent: running on ", request.board_id, ": ",
                                     boardlab_run_, " --serve <<< ",
                                     line.substr(0, line.size() - 1))] { run->on_line(text); });
  run->deadline.expires_after(std::chrono::seconds(std::max(1, request.timeout_seconds)));
  run->deadline.async_wait(
      [weak = std::weak_ptr<Runner>(runner_), run](const boost::system::error_code& ec) {
        auto runner = weak.lock();
        if (!ec && runner != nullptr && runner->run == run)
          runner->Kill(ChildExit::Kind::kTimedOut);
      });
  runner_->child->Write(line);
  return std::make_unique<ServeBoardRun>(runner_, std::move(run));
}

}  // namespace boardlab::agent
