#pragma once

// The port layer (STYLE.md rule 12): five C functions the runtime calls for time, logging and
// fatal errors. posix.cc (hosts) and minimal.cc (bare metal without an OS) define them as weak
// symbols; a board file (e.g. the RT700 port, using the DWT cycle counter) overrides any of them
// with strong definitions, without touching the runtime.
//
//   rt_pal_init();                            // once, before any other runtime call
//   uint64_t t0 = rt_pal_current_ticks();
//   ...
//   uint64_t ns = rt_pal_ticks_to_ns(rt_pal_current_ticks() - t0);

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Log severities for rt_pal_emit_log.
typedef enum {
  kRtPalLogDebug = 0,
  kRtPalLogInfo = 1,
  kRtPalLogError = 2,
  kRtPalLogFatal = 3,
} RtPalLogLevel;

/// Initialises the platform (clock, log sink). Idempotent; safe to call more than once.
void rt_pal_init(void);

/// A monotonic tick counter. The unit is the platform's (POSIX: nanoseconds; RT700: CPU
/// cycles); rt_pal_ticks_to_ns converts. ETDump stores these ticks raw.
uint64_t rt_pal_current_ticks(void);

/// Converts a tick count (or a difference of two) to nanoseconds.
uint64_t rt_pal_ticks_to_ns(uint64_t ticks);

/// Emits one log line. `file` may be null; `message` is a NUL-terminated string that the callee
/// must not keep.
void rt_pal_emit_log(RtPalLogLevel level, const char* file, int line, const char* message);

/// Stops the program after an unrecoverable error. Never returns.
void rt_pal_abort(void);

#ifdef __cplusplus
}  // extern "C"
#endif
