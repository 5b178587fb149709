// Default port layer for hosts (Linux, macOS): CLOCK_MONOTONIC nanoseconds, stderr logging,
// abort(). Every function is weak so a test or a board file can replace one of them alone.

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/platform/platform.h"

extern "C" {

__attribute__((weak)) void rt_pal_init(void) {}

__attribute__((weak)) uint64_t rt_pal_current_ticks(void) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Ticks are already nanoseconds here.
__attribute__((weak)) uint64_t rt_pal_ticks_to_ns(uint64_t ticks) { return ticks; }

__attribute__((weak)) void rt_pal_emit_log(RtPalLogLevel level, const char* file, int line,
                                           const char* message) {
  static const char kLevels[] = {'D', 'I', 'E', 'F'};
  const char tag = level >= kRtPalLogDebug && level <= kRtPalLogFatal ? kLevels[level] : '?';
  if (file != nullptr) {
    fprintf(stderr, "%c %s:%d] %s\n", tag, file, line, message);
  } else {
    fprintf(stderr, "%c] %s\n", tag, message);
  }
}

__attribute__((weak)) void rt_pal_abort(void) { abort(); }

}  // extern "C"
