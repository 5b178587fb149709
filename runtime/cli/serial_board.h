#pragma once

// boardlab-run --board serial: runs an artifact on any board that speaks the board link protocol
// (docs/board-protocol.md) on a serial port or a TCP socket: a MIMXRT700-EVK on its debug UART,
// a board behind ser2net, or the an505 protocol firmware under QEMU (firmware/qemu-board.sh).
// Same options and exit codes as --board sim; the artifact is sent only when the board's cache
// does not hold it. Prints the board's HELLO facts, its log lines, the outputs, the verdict and
// the link statistics (the console); --json writes all of it as one document. boardlab-run's
// --profile then prints the per-op profile of the ETDump the board sent.
//
//   boardlab::run::SerialRunOptions options;
//   options.port = "tcp:127.0.0.1:5555";
//   options.artifact = "kws.pte";
//   int exit_code = boardlab::run::RunOnSerialBoard(options);

#include <string>

#include "runtime/cli/board_run_options.h"

namespace boardlab::run {

struct SerialRunOptions : BoardRunOptions {
  std::string port;  // a serial device path, or tcp:HOST:PORT
  int baud = 921600;
  double connect_timeout_seconds = 10;
  std::string json;        // write the run's JSON document here (empty: none)
  std::string test_fault;  // none, hang, hang-without-watchdog, hardfault, reset
  // The flash tool wrote the artifact into the board's model slot: name it (MODEL_SLOT), the
  // board checks its SHA-256 and runs it in place; it is not sent.
  bool artifact_in_slot = false;
  bool console_to_stderr = false;  // the console on stderr (stdout kept for --profile json)
};

/// The TestFault names --test-fault takes.
bool IsTestFaultName(const std::string& name);

/// Runs the artifact on the board and returns boardlab-run's exit code: the board's verdict
/// 0 pass / unverified, 1 mismatch, 2 usage, 3 invalid artifact, 4 runtime error; 4 as well for
/// a board error (cannot open the port, no HELLO, connection lost, board reset during the run,
/// no result within the timeout), with a "board error:" message.
int RunOnSerialBoard(const SerialRunOptions& options);

}  // namespace boardlab::run
