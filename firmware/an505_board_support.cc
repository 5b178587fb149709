#include "firmware/an505_board_support.h"

#include "firmware/an505_platform.h"
#include "firmware/link_board.h"
#include "runtime/platform/platform.h"

namespace boardlab::firmware {
namespace {

struct CmsdkUart {
  volatile uint32_t data;       // +0x00
  volatile uint32_t state;      // +0x04
  volatile uint32_t ctrl;       // +0x08
  volatile uint32_t intstatus;  // +0x0C, write 1 to clear
  volatile uint32_t bauddiv;    // +0x10
};
struct CmsdkTimer {
  volatile uint32_t ctrl;       // +0x0: bit 0 enable, bit 3 interrupt enable
  volatile uint32_t value;      // +0x4
  volatile uint32_t reload;     // +0x8
  volatile uint32_t intstatus;  // +0xC, write 1 to clear
};
struct CmsdkWatchdog {
  volatile uint32_t load;     // +0x0
  volatile uint32_t value;    // +0x4
  volatile uint32_t control;  // +0x8: bit 0 interrupt + counter enable, bit 1 reset enable
  volatile uint32_t intclr;   // +0xC: any write clears the interrupt and reloads
};

constexpr uintptr_t kUart0Base = 0x50200000u;
constexpr uintptr_t kTimer1Base = 0x50001000u;
constexpr uintptr_t kWatchdogBase = 0x50081000u;
constexpr uintptr_t kWatchdogLock = kWatchdogBase + 0xC00u;
constexpr uint32_t kWatchdogUnlock = 0x1ACCE551u;
constexpr uintptr_t kBoardInfoWord = 0x30007FF0u;
constexpr uint32_t kBoardInfoMagic = 0x31514C42u;  // "BLQ1" little-endian

constexpr uint32_t kStateTxFull = 1u << 0;
constexpr uint32_t kStateRxFull = 1u << 1;
constexpr uint32_t kStateRxOverrun = 1u << 3;
constexpr uint32_t kCtrlTxEnable = 1u << 0;
constexpr uint32_t kCtrlRxEnable = 1u << 1;
constexpr uint32_t kCtrlRxInterrupt = 1u << 3;
constexpr uint32_t kIntRx = 1u << 1;
// 20 MHz / 21 ~ 952 kbaud, the nearest divisor to 921,600 (QEMU ignores the rate; a real
// CMSDK UART on this clock would use it).
constexpr uint32_t kBaudDivisor = 21;

constexpr uint32_t kTicksPerMs = 20000;  // the APB clock, 20 MHz
constexpr uint32_t kWakeMs = 5;          // timer 1's period: the resolution of Read timeouts
constexpr uint32_t kTimer1Irq = 4;       // NVIC ISER0 bit
constexpr uint32_t kUart0RxIrq = 32;     // NVIC ISER1 bit 0

volatile uint32_t& Nvic(uintptr_t offset, uint32_t irq) {
  return *reinterpret_cast<volatile uint32_t*>(0xE000E000u + offset + 4 * (irq / 32));
}
void NvicEnable(uint32_t irq) { Nvic(0x100, irq) = 1u << (irq % 32); }
void NvicClearPending(uint32_t irq) { Nvic(0x280, irq) = 1u << (irq % 32); }

CmsdkUart& Uart() { return *reinterpret_cast<CmsdkUart*>(kUart0Base); }
CmsdkTimer& Timer1() { return *reinterpret_cast<CmsdkTimer*>(kTimer1Base); }
CmsdkWatchdog& Watchdog() { return *reinterpret_cast<CmsdkWatchdog*>(kWatchdogBase); }

void StartWatchdog(uint32_t ms) {
  *reinterpret_cast<volatile uint32_t*>(kWatchdogLock) = kWatchdogUnlock;
  Watchdog().load = ms * kTicksPerMs;
  Watchdog().control = 3;  // count, interrupt (NMI) on the first expiry, reset on the second
}

int8_t IcountShiftFromQemu() {
  const volatile uint32_t* word = reinterpret_cast<const volatile uint32_t*>(kBoardInfoWord);
  return word[0] == kBoardInfoMagic && word[1] <= 10 ? static_cast<int8_t>(word[1]) : -1;
}

}  // namespace

void An505BoardSupport::Init(const link::MemoryRegion* regions, uint8_t num_regions) {
  rt_pal_init();
  TakeResetRecord();

  // Interrupts stay masked: pending ones only wake WFI.
  __asm volatile("cpsid i" ::: "memory");
  CmsdkUart& uart = Uart();
  uart.bauddiv = kBaudDivisor;
  uart.ctrl = kCtrlTxEnable | kCtrlRxEnable | kCtrlRxInterrupt;
  NvicEnable(kUart0RxIrq);
  CmsdkTimer& timer = Timer1();
  timer.ctrl = 0;
  timer.reload = kWakeMs * kTicksPerMs;
  timer.value = timer.reload;
  timer.ctrl = 1u | (1u << 3);  // enable, interrupt enable
  NvicEnable(kTimer1Irq);
  StartWatchdog(kWatchdogMs);

  info_.board = "an505";
  info_.firmware_version = BOARDLAB_FIRMWARE_VERSION;
  info_.build_id = BOARDLAB_FIRMWARE_BUILD_ID;
  info_.clock = "cmsdk-timer0 (qemu virtual time)";
  info_.ticks_per_second = 1000000000ull / kTimerNsPerTick;
  info_.core_hz = 0;
  info_.icount_shift = IcountShiftFromQemu();
  info_.npu = "emulated on cortex-m33";
  info_.regions = regions;
  info_.num_regions = num_regions;
}

void An505BoardSupport::Drain() {
  CmsdkUart& uart = Uart();
  uint32_t state;
  while (((state = uart.state) & kStateRxFull) != 0) {
    // A full ring loses the byte; the link retransmits.
    if (!ring_.Push(static_cast<uint8_t>(uart.data))) ++overruns_;
  }
  if ((state & kStateRxOverrun) != 0) {
    ++overruns_;
    uart.state = kStateRxOverrun;  // write 1 to clear
  }
}

void An505BoardSupport::WaitForEvent(uint32_t timeout_ms) {
  // Timer 1 ticks every kWakeMs (set up in Init) and wakes WFI; the UART's receive interrupt
  // wakes it at once. Both stay pending-only (PRIMASK): no handler runs.
  CmsdkUart& uart = Uart();
  CmsdkTimer& timer = Timer1();
  const uint32_t start = Milliseconds();
  for (;;) {
    Drain();
    if (!ring_.empty() || Milliseconds() - start >= timeout_ms) return;
    // Cleared before the last look at the UART: a byte arriving after it pends the interrupt
    // again, so WFI cannot sleep through it.
    uart.intstatus = kIntRx;
    NvicClearPending(kUart0RxIrq);
    timer.intstatus = 1;
    NvicClearPending(kTimer1Irq);
    if ((uart.state & kStateRxFull) != 0) continue;
    __asm volatile("wfi" ::: "memory");
  }
}

size_t An505BoardSupport::Read(uint8_t* data, size_t size, uint32_t timeout_ms) {
  Drain();
  if (ring_.empty() && timeout_ms > 0) WaitForEvent(timeout_ms);
  return ring_.Pop(data, size);
}

void An505BoardSupport::Write(const uint8_t* data, size_t size) {
  CmsdkUart& uart = Uart();
  for (size_t i = 0; i < size; ++i) {
    while ((uart.state & kStateTxFull) != 0) Drain();  // keep receiving while the line is busy
    uart.data = data[i];
  }
}

uint32_t An505BoardSupport::Milliseconds() {
  return static_cast<uint32_t>(rt_pal_current_ticks() / kTicksPerMs);
}

void An505BoardSupport::FeedWatchdog() { Watchdog().intclr = 1; }

void An505BoardSupport::SetWatchdogPeriod(uint32_t ms) { StartWatchdog(ms); }

bool An505BoardSupport::StopWatchdog() {
  Watchdog().control = 0;
  return true;
}

// The model slot: the top 6 MB of PSRAM, above the bulk pool (the .psram section, 10 MB in this
// ELF: firmware/CMakeLists.txt). No section of its own: QEMU zero-fills every ELF segment at each
// reset, which would collide with the `-device loader` that qemu-board.sh --model puts there.
constexpr uintptr_t kModelSlotBase = 0x80A00000u;
constexpr size_t kModelSlotBytes = 6u << 20;
constexpr uintptr_t kPsramBase = 0x80000000u;
static_assert(kPsramBase + BOARDLAB_BULK_POOL_BYTES <= kModelSlotBase,
              "the bulk pool reaches into the model slot");
static_assert(kModelSlotBase + kModelSlotBytes == kPsramBase + (16u << 20),
              "the model slot ends with PSRAM");

LinkBoard StartLinkBoard() {
  // QEMU mps2-an505 (link.ld): 4 MB code RAM, 4 MB data RAM, 16 MB PSRAM: 10 MB bulk pool, whose
  // top holds the artifact cache (3 MB), the job area (1 MB) and the reorder buffer, then the
  // 6 MB model slot (qemu-board.sh --model).
  static const link::MemoryRegion regions[] = {
      {"code", 0x10000000u, 4u << 20},
      {"ram", 0x38000000u, 4u << 20},
      {"psram", kPsramBase, 10u << 20},
      {"psram model slot", kModelSlotBase, kModelSlotBytes},
  };
  static An505BoardSupport board;
  board.Init(regions, sizeof(regions) / sizeof(regions[0]));
  LinkBoard out;
  out.support = &board;
  out.cache_bytes = 3u << 20;
  out.job_bytes = 1u << 20;
  out.receive_window = 8;
  out.model_slot = reinterpret_cast<const uint8_t*>(kModelSlotBase);
  out.model_slot_bytes = kModelSlotBytes;
  out.clock = BoardClockRecord(board.info().icount_shift);
  return out;
}

}  // namespace boardlab::firmware
