#pragma once

// How the agent talks to boardlab-run: the command line it builds for a board run, and how it
// reads the run's exit status, its --profile json document (sim) or the firmware console (qemu)
// back into a BoardReport; for the persistent `boardlab-run --serve` (sim), the request line and
// the reading of its result line. Pure functions, so that every mapping is unit tested.
//
// Exit codes (runtime/cli/main.cc): 0 pass, 1 mismatch, 2 usage, 3 invalid artifact, 4 runtime
// error. 2 means the agent handed over bad files (a bug or a broken download): BOARD_ERROR.
// 3 and 4 are the model's fault: MODEL_ERROR, except a qemu "board error:" (no firmware, CPU
// fault, QEMU timeout), which is the board's: BOARD_ERROR.

#include <string>
#include <vector>

#include "agent/board_executor.h"
#include "agent/child_process.h"
#include "agent/config.h"

namespace boardlab::agent {

// kSerial: `boardlab-run --board serial` on a board link port; its console is read as qemu's.
enum class RunnerBoard { kSim, kQemu, kSerial };

/// Files the runner writes below request.work_dir.
std::string OutputsDir(const BoardRunRequest& request);       // work_dir/outputs
std::string EtdumpPath(const BoardRunRequest& request);       // work_dir/run.etdp
std::string RunJsonPath(const BoardRunRequest& request);      // work_dir/run.json (serial)
std::string CaseResultsPath(const BoardRunRequest& request);  // work_dir/case-results.json

/// argv for `boardlab_run` running `request` on `board`; `serial` is required for kSerial.
std::vector<std::string> RunnerCommand(const std::string& boardlab_run, RunnerBoard board,
                                       const BoardRunRequest& request,
                                       const SerialBoardConfig* serial = nullptr);

/// The `boardlab-run --serve` request line (JSON and '\n') for `request`.
std::string ServeRequestLine(const BoardRunRequest& request);

/// A --serve answer starts with this; other lines on its stdout are log lines.
inline constexpr char kServeResultPrefix[] = "result ";

/// The report of a --serve answer (`line` starts with kServeResultPrefix): the same mapping as
/// InterpretRunnerExit with the answer's "exit" as the exit code.
BoardReport InterpretServeResult(const BoardRunRequest& request, const std::string& line);

/// The report of a finished runner. `stdout_text` is the runner's whole stdout (the JSON
/// document for sim, the console for qemu); `stderr_lines` its stderr.
BoardReport InterpretRunnerExit(RunnerBoard board, const BoardRunRequest& request,
                                const ChildExit& exit, const std::string& stdout_text,
                                const std::vector<std::string>& stderr_lines);

}  // namespace boardlab::agent
