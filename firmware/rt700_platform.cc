// Board port for the MIMXRT700-EVK (STYLE.md rule 12): strong definitions of the rt_pal_* clock
// symbols that runtime/platform/minimal.cc leaves weak. Logging and abort are link_pal.cc's.
//
// Clock: the DWT cycle counter of core 0 (Armv8-M: DEMCR 0xE000EDFC bit 24 TRCENA; DWT_CTRL
// 0xE0001000 bit 0 CYCCNTENA, bit 25 NOCYCCNT; DWT_CYCCNT 0xE0001004). It is 32 bits wide (22 s
// at 192 MHz per wrap) and extended to 64 bits in software: every read compares with the
// previous one, which is enough because the runtime reads the clock at least once per kernel and
// the protocol loop every few milliseconds, and the watchdog (8 s) ends any longer silence.

#include "firmware/rt700_platform.h"

#include "runtime/platform/platform.h"

namespace {

constexpr uintptr_t kDemcr = 0xE000EDFCu;
constexpr uintptr_t kDwtCtrl = 0xE0001000u;
constexpr uintptr_t kDwtCyccnt = 0xE0001004u;
constexpr uint32_t kDemcrTrcena = 1u << 24;
constexpr uint32_t kDwtCyccntena = 1u << 0;
constexpr uint32_t kDwtNocyccnt = 1u << 25;

volatile uint32_t& Reg(uintptr_t address) { return *reinterpret_cast<volatile uint32_t*>(address); }

bool started = false;
uint32_t last_count = 0;
uint64_t elapsed = 0;
// Until the board support has measured it: the core clock NXP's device headers give as the
// default after boot (192 MHz), so that early timestamps are roughly right.
uint32_t core_hz = 192000000u;

}  // namespace

namespace boardlab::firmware {

bool StartCycleCounter() {
  Reg(kDemcr) |= kDemcrTrcena;
  if ((Reg(kDwtCtrl) & kDwtNocyccnt) != 0) return false;
  Reg(kDwtCyccnt) = 0;
  Reg(kDwtCtrl) |= kDwtCyccntena;
  return true;
}

uint32_t CycleCount() { return Reg(kDwtCyccnt); }

void SetCoreClockHz(uint32_t hz) {
  if (hz > 0) core_hz = hz;
}

uint32_t CoreClockHz() { return core_hz; }

runtime::etdump::ClockRecord Rt700ClockRecord() {
  runtime::etdump::ClockRecord clock;
  clock.kind = runtime::etdump::ClockKind::kDwtCycles;
  clock.ticks_per_second = core_hz;
  clock.core_hz = core_hz;
  return clock;
}

}  // namespace boardlab::firmware

extern "C" {

void rt_pal_init(void) {
  if (started) return;
  boardlab::firmware::StartCycleCounter();
  last_count = boardlab::firmware::CycleCount();
  elapsed = 0;
  started = true;
}

uint64_t rt_pal_current_ticks(void) {
  if (!started) rt_pal_init();
  const uint32_t now = boardlab::firmware::CycleCount();
  elapsed += static_cast<uint32_t>(now - last_count);  // modulo 2^32: one wrap at most
  last_count = now;
  return elapsed;
}

uint64_t rt_pal_ticks_to_ns(uint64_t ticks) {
  // ticks * 1e9 / hz without overflowing for any run shorter than a few centuries.
  const uint64_t seconds = ticks / core_hz;
  const uint64_t rest = ticks % core_hz;
  return seconds * 1000000000ull + rest * 1000000000ull / core_hz;
}

}  // extern "C"
