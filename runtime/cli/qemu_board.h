#pragma once

// boardlab-run --board qemu: runs an artifact on boardlab-firmware.elf under QEMU mps2-an505
// (Cortex-M33, firmware/README.md) through firmware/run-qemu.sh, with the options boardlab-run
// and the firmware share. The firmware's console is streamed to stdout (or stderr) as it comes.
//
//   boardlab::run::QemuRunOptions options;
//   options.artifact = "kws.pte";
//   int exit_code = boardlab::run::RunOnQemu(options);
//
// The firmware ELF and the runner are the paths CMake baked in, overridden by the environment
// variables BOARDLAB_FIRMWARE_ELF and BOARDLAB_QEMU_RUNNER.

#include <string>

#include "runtime/cli/board_run_options.h"

namespace boardlab::run {

struct QemuRunOptions : BoardRunOptions {
  std::string icount = "0";        // -icount shift, or "off"
  bool console_to_stderr = false;  // the firmware's console on stderr (stdout kept for JSON)
};

/// The firmware ELF and runner script that RunOnQemu uses (environment first, then CMake's).
std::string FirmwareElfPath();
std::string QemuRunnerPath();

/// Runs the artifact on the firmware and returns boardlab-run's exit code: the firmware's verdict
/// 0 pass / unverified, 1 mismatch, 2 usage, 3 invalid artifact, 4 runtime error; 4 as well for a
/// board error (no ELF or runner, a CPU fault, a timeout, QEMU killed by a signal).
int RunOnQemu(const QemuRunOptions& options);

}  // namespace boardlab::run
