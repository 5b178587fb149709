#pragma once

// The `sim` and `qemu` board drivers, and the run step of `serial` (serial_board_executor.h):
// boardlab-run in a child process (ChildProcess), so that a crashing or hanging run cannot take the
// agent down. sim runs `boardlab-run --board sim
// --profile json` (simulated RT700 cycles); qemu runs `boardlab-run --board qemu --timeout N`
// (boardlab-firmware under qemu-system-arm), streams the firmware console, and reads the per-op
// profile back from the firmware's ETDump.
//
//   ProcessBoardExecutor sim(io, "/usr/bin/boardlab-run", RunnerBoard::kSim);
//   auto run = sim.Start(request, on_line, on_done);

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "agent/board_executor.h"
#include "agent/runner_output.h"

namespace boardlab::agent {

/// Extra time the agent gives a qemu run beyond boardlab-run's own --timeout before it kills
/// the runner itself.
inline constexpr int kQemuBackstopSeconds = 15;

/// Time allowed for reading a qemu run's profile back from its ETDump.
inline constexpr int kProfileTimeoutSeconds = 30;

class ProcessBoardExecutor : public BoardExecutor {
 public:
  /// `io` runs the child's I/O and must outlive this executor and its runs.
  ProcessBoardExecutor(boost::asio::io_context& io, std::string boardlab_run, RunnerBoard board);
  /// kSerial: `boardlab-run --board serial` on `serial`'s port.
  ProcessBoardExecutor(boost::asio::io_context& io, std::string boardlab_run,
                       const SerialBoardConfig& serial);

  std::unique_ptr<BoardRun> Start(const BoardRunRequest& request, LineCallback on_line,
                                  DoneCallback on_done) override;

 private:
  /// qemu: `boardlab-run --inspect ETDUMP --profile json` fills report.profile_json, then
  /// on_done(report).
  void StartProfileFromEtdump(BoardReport report, DoneCallback on_done);

  boost::asio::io_context& io_;
  std::string boardlab_run_;
  RunnerBoard board_;
  SerialBoardConfig serial_;  // kSerial only
};

}  // namespace boardlab::agent
