#pragma once

// Facts about the QEMU mps2-an505 board the firmware relies on (shared/reference/local-tools.md
// section 6). The exit codes (the QEMU process exit status) are runner.h's.

#include <stddef.h>
#include <stdint.h>

#include "runtime/profiling/etdump/clock_record.h"

namespace boardlab::firmware {

/// CMSDK APB timer 0, Secure alias. Counts down at 20 MHz of virtual time.
inline constexpr uintptr_t kTimer0Base = 0x50000000u;
inline constexpr uint64_t kTimerNsPerTick = 50;

/// What the board clock (rt_pal_current_ticks, timer 0) counts, for the ETDump: QEMU
/// instructions under `-icount shift=icount_shift`, or virtual time paced by the host when
/// icount_shift < 0 (run without -icount). The core clock of an emulated M33 is unknown.
runtime::etdump::ClockRecord BoardClockRecord(int icount_shift);

}  // namespace boardlab::firmware
