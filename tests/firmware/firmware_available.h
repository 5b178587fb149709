#pragma once

// Whether the firmware QEMU tests can run on this machine, and if not, why: the skip message.

#include <filesystem>
#include <string>

#include "tests/support/test_paths.h"

namespace boardlab::firmware {

enum class NeedsRun { kNo, kYes };

/// "" when QEMU is installed, `elf` was built and (when asked) boardlab-run too.
inline std::string WhyFirmwareCannotRun(const std::string& elf, NeedsRun needs_run) {
  if (!BOARDLAB_QEMU_FOUND) return "qemu-system-arm is not installed";
  if (!std::filesystem::exists(elf)) return "no " + elf;
  if (needs_run == NeedsRun::kYes && testing::RunBinary().empty()) {
    return "boardlab-run is not built";
  }
  return "";
}

}  // namespace boardlab::firmware
