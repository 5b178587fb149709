#include "agent/process_board_executor.h"

#include <boost/asio/post.hpp>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/child_process.h"

namespace boardlab::agent {
namespace {

// Captured stdout is bounded: a profile JSON of a large model is a few hundred KiB.
constexpr size_t kMaxStdoutBytes = 64u << 20;

class ProcessBoardRun : public BoardRun {
 public:
  explicit ProcessBoardRun(std::shared_ptr<ChildProcess> child) : child_(std::move(child)) {}
  ~ProcessBoardRun() override { child_->Detach(); }
  void Cancel() override { child_->Kill(); }

 private:
  std::shared_ptr<ChildProcess> child_;
};

// What the callbacks of one run share.
struct RunState {
  BoardRunRequest request;
  RunnerBoard board;
  std::string stdout_text;
  std::vector<std::string> stderr_lines;
};

}  // namespace

ProcessBoardExecutor::ProcessBoardExecutor(boost::asio::io_context& io, std::string boardlab_run,
                                           RunnerBoard board)
    : io_(io), boardlab_run_(std::move(boardlab_run)), board_(board) {}

ProcessBoardExecutor::ProcessBoardExecutor(boost::asio::io_context& io, std::string boardlab_run,
                                           const SerialBoardConfig& serial)
    : io_(io),
      boardlab_run_(std::move(boardlab_run)),
      board_(RunnerBoard::kSerial),
      serial_(serial) {}

std::unique_ptr<BoardRun> ProcessBoardExecutor::Start(const BoardRunRequest& request,
                                                      LineCallback on_line, DoneCallback on_done) {
  auto state = std::make_shared<RunState>();
  state->request = request;
  state->board = board_;
  std::error_code ec;
  std::filesystem::create_directories(OutputsDir(request), ec);

  ChildOptions options;
  options.argv = RunnerCommand(boardlab_run_, board_, request, &serial_);
  const int timeout = std::max(1, request.timeout_seconds);
  // A board runner has its own deadline; the agent's comes later, as a backstop (serial: also
  // past the connect timeout, which boardlab-run spends before the run's timeout starts).
  options.timeout =
      std::chrono::seconds(timeout + (board_ == RunnerBoard::kSim ? 0 : kQemuBackstopSeconds) +
                           (board_ == RunnerBoard::kSerial ? serial_.connect_timeout_seconds : 0));
  boost::asio::post(
      io_, [on_line, text = absl::StrCat("boardlab-agent: running on ", request.board_id, ": ",
                                         absl::StrJoin(options.argv, " "))] { on_line(text); });

  // sim: stdout is the JSON document (kept, not streamed); qemu, serial: stdout is the console.
  auto on_stdout = [state, on_line](std::string line) {
    if (state->stdout_text.size() + line.size() < kMaxStdoutBytes) {
      absl::StrAppend(&state->stdout_text, line, "\n");
    }
    if (state->board != RunnerBoard::kSim) on_line(std::move(line));
  };
  auto on_stderr = [state, on_line](std::string line) {
    state->stderr_lines.push_back(line);
    on_line(std::move(line));
  };
  auto on_exit = [this, state, on_line, on_done](const ChildExit& exit) {
    BoardReport report = InterpretRunnerExit(state->board, state->request, exit, state->stdout_text,
                                             state->stderr_lines);
    on_line(absl::StrCat("boardlab-agent: ", v1::RunOutcome_Name(report.outcome), ": ",
                         report.message));
    // The firmware's console has no profile; its ETDump does. boardlab-run reads it back.
    if (state->board != RunnerBoard::kSim && !report.etdump_path.empty()) {
      StartProfileFromEtdump(std::move(report), on_done);
      return;
    }
    on_done(std::move(report));
  };
  return std::make_unique<ProcessBoardRun>(ChildProcess::Start(
      io_, std::move(options), std::move(on_stdout), std::move(on_stderr), std::move(on_exit)));
}

void ProcessBoardExecutor::StartProfileFromEtdump(BoardReport report, DoneCallback on_done) {
  ChildOptions options;
  options.argv = {boardlab_run_, "--inspect", report.etdump_path, "--profile", "json"};
  options.timeout = std::chrono::seconds(kProfileTimeoutSeconds);
  auto shared = std::make_shared<BoardReport>(std::move(report));
  auto json = std::make_shared<std::string>();
  ChildProcess::Start(
      io_, std::move(options),
      [json](std::string line) {
        if (json->size() + line.size() < kMaxStdoutBytes) absl::StrAppend(json.get(), line, "\n");
      },
      [](std::string) {},
      [shared, json, on_done](const ChildExit& exit) {
        // A profile that cannot be read costs the profile, not the verdict.
        if (exit.kind == ChildExit::Kind::kExited && exit.exit_code == 0) {
          shared->profile_json = *json;
        }
        on_done(std::move(*shared));
      });
}

}  // namespace boardlab::agent
