// Board port for QEMU mps2-an505 (STYLE.md rule 12): strong definitions of the rt_pal_* clock
// symbols that runtime/platform/minimal.cc leaves weak, shared by both an505 builds.
//
// Clock: CMSDK APB timer 0 at its Secure address. It counts down at 20 MHz of *virtual* time
// (50 ns per tick). Under `qemu-system-arm -icount shift=N` each guest instruction takes 2^N
// virtual ns, so the tick count is a deterministic instruction count (instructions = ticks * 50
// / 2^N); without -icount it follows host time and varies from run to run. The counter is only
// 32 bits wide (214 s of virtual time per wrap), so it is extended to 64 bits in software: every
// read compares with the previous one, which is enough because the runtime reads the clock at
// least once per kernel, and no kernel runs for 214 virtual seconds.
//
// Logging and abort differ between the builds: an505_semihosting_pal.cc (stderr, exit status)
// and link_pal.cc (LOG messages, reset).

#include "firmware/an505_platform.h"
#include "runtime/platform/platform.h"

namespace {

struct CmsdkTimer {
  volatile uint32_t ctrl;    // +0x0, bit 0 = enable
  volatile uint32_t value;   // +0x4, current count (counts down)
  volatile uint32_t reload;  // +0x8, loaded when value reaches 0
};

CmsdkTimer* Timer0() { return reinterpret_cast<CmsdkTimer*>(boardlab::firmware::kTimer0Base); }

bool initialised = false;
uint32_t last_value = 0;  // timer value at the previous read
uint64_t elapsed = 0;     // ticks counted up to last_value

}  // namespace

namespace boardlab::firmware {

runtime::etdump::ClockRecord BoardClockRecord(int icount_shift) {
  runtime::etdump::ClockRecord clock;
  clock.kind = icount_shift >= 0 ? runtime::etdump::ClockKind::kQemuIcount
                                 : runtime::etdump::ClockKind::kQemuVirtualTime;
  clock.ticks_per_second = 1000000000u / kTimerNsPerTick;  // of virtual time
  clock.icount_shift = icount_shift;
  return clock;
}

}  // namespace boardlab::firmware

extern "C" {

void rt_pal_init(void) {
  if (initialised) return;
  CmsdkTimer* t = Timer0();
  t->ctrl = 0;
  t->reload = 0xFFFFFFFFu;
  t->value = 0xFFFFFFFFu;
  t->ctrl = 1;
  last_value = t->value;
  elapsed = 0;
  initialised = true;
}

uint64_t rt_pal_current_ticks(void) {
  if (!initialised) rt_pal_init();
  const uint32_t now = Timer0()->value;
  // Down-counter: the ticks since the last read are last - now, modulo 2^32 (reload is
  // 0xFFFFFFFF, so a wrap is exactly the 32-bit modular difference).
  elapsed += static_cast<uint32_t>(last_value - now);
  last_value = now;
  return elapsed;
}

uint64_t rt_pal_ticks_to_ns(uint64_t ticks) { return ticks * boardlab::firmware::kTimerNsPerTick; }

}  // extern "C"
