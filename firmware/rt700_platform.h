#pragma once

// The rt700 board's clock (rt700_platform.cc): the Cortex-M33's DWT cycle counter, at the core
// clock the boot ROM left, which the board support measures once at boot against the 1 MHz
// low-power oscillator (LPOSC) through the watchdog's counter. The firmware does not set up
// clocks: the figure is the boot ROM's clock, not the 324 MHz NXP's demos run at.

#include <stdint.h>

#include "runtime/profiling/etdump/clock_record.h"

namespace boardlab::firmware {

/// Enables the DWT cycle counter (DEMCR.TRCENA, DWT_CTRL.CYCCNTENA); false when the core has none.
bool StartCycleCounter();
/// The raw 32-bit counter.
uint32_t CycleCount();
/// Sets the core clock rt_pal_ticks_to_ns and the clock record use (Hz, > 0).
void SetCoreClockHz(uint32_t hz);
uint32_t CoreClockHz();

/// What the ETDump's ticks count: DWT cycles at the measured core clock.
runtime::etdump::ClockRecord Rt700ClockRecord();

}  // namespace boardlab::firmware
