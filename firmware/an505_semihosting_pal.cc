// Logging and abort of the semihosting build (QEMU mps2-an505): logs go to stderr over
// semihosting; abort stops QEMU with exit status 4 (runtime error). Strong definitions of the
// rt_pal_* symbols runtime/platform/minimal.cc leaves weak.

#include <stdio.h>
#include <stdlib.h>

#include "firmware/runner.h"
#include "runtime/platform/platform.h"

extern "C" {

void rt_pal_emit_log(RtPalLogLevel level, const char* file, int line, const char* message) {
  static const char kLevels[] = {'D', 'I', 'E', 'F'};
  const char tag = level >= kRtPalLogDebug && level <= kRtPalLogFatal ? kLevels[level] : '?';
  if (file != nullptr) {
    fprintf(stderr, "%c %s:%d] %s\n", tag, file, line, message);
  } else {
    fprintf(stderr, "%c] %s\n", tag, message);
  }
}

void rt_pal_abort(void) {
  fprintf(stderr, "boardlab-firmware: runtime abort\n");
  exit(boardlab::firmware::kExitRuntime);
}

}  // extern "C"
