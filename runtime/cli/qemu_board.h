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
#include <vector>

namespace boardlab::run {

struct QemuRunOptions {
  std::string artifact;
  std::vector<std::string> inputs;    // FILE or random:SEED; missing ones become random:<index>
  std::vector<std::string> expected;  // expected raw bytes of output i
  double atol = 0;
  int iterations = 1;
  std::string etdump;              // ETDump file to write (empty: none)
  std::string outputs_dir;         // DIR/output<i>.bin (empty: none)
  std::string icount = "0";        // -icount shift, or "off"
  double timeout_seconds = 300;    // the firmware is killed after this long
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
