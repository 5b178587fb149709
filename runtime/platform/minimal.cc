// Port layer for bare metal with nothing known about the board: no clock (ticks stay 0, so
// profiles are empty rather than wrong), logging dropped, abort spins. Not part of the host
// build (runtime/CMakeLists.txt compiles posix.cc); MCU builds compile this file instead and a
// board file overrides the weak symbols it can do better (the RT700 port reads the DWT cycle
// counter in rt_pal_current_ticks).

#include "runtime/platform/platform.h"

extern "C" {

__attribute__((weak)) void rt_pal_init(void) {}

__attribute__((weak)) uint64_t rt_pal_current_ticks(void) { return 0; }

__attribute__((weak)) uint64_t rt_pal_ticks_to_ns(uint64_t ticks) { return ticks; }

__attribute__((weak)) void rt_pal_emit_log(RtPalLogLevel, const char*, int, const char*) {}

// Spinning keeps the failure visible to a debugger; there is no OS to return to.
__attribute__((weak)) void rt_pal_abort(void) {
  for (;;) {
  }
}

}  // extern "C"
