#pragma once

// The `sim` board driver: one persistent `boardlab-run --serve` per board, so that a job costs a
// request line rather than a process start. The runner is still a child process in its own
// group, so a crashing or hanging run cannot take the agent down: when the runner dies, hangs
// past the run's timeout or the run is cancelled, the agent kills the group, reports the run
// (BOARD_ERROR, CANCELLED) and starts a new runner for the next run.
//
//   ServingBoardExecutor sim(io, "/usr/bin/boardlab-run");
//   auto run = sim.Start(request, on_line, on_done);   // starts the runner on first use
//
// Protocol (runtime/cli/main.cc Serve()): one JSON request per line on the runner's stdin
// (ServeRequestLine); it answers with log lines and then one `result {...}` line on stdout
// (InterpretServeResult). The qemu driver stays ProcessBoardExecutor: QEMU's start dominates.

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "agent/board_executor.h"

namespace boardlab::agent {

class ServingBoardExecutor : public BoardExecutor {
 public:
  /// `io` runs the runner's I/O and must outlive this executor.
  ServingBoardExecutor(boost::asio::io_context& io, std::string boardlab_run);
  /// Kills the runner.
  ~ServingBoardExecutor() override;

  std::unique_ptr<BoardRun> Start(const BoardRunRequest& request, LineCallback on_line,
                                  DoneCallback on_done) override;
  /// Its reports name the files listed in the runner's answer.
  bool ReportsOnlyItsOwnFiles() const override { return true; }

  /// The current runner's pid, -1 when there is none (tests: one runner serves many runs).
  pid_t runner_pid() const;

  struct Runner;  // one boardlab-run --serve process and the run it works on

 private:
  void StartRunner();

  boost::asio::io_context& io_;
  std::string boardlab_run_;
  std::shared_ptr<Runner> runner_;
};

}  // namespace boardlab::agent
