#include "firmware/rt700_board_support.h"

#include "firmware/link_board.h"
#include "firmware/rt700_lpuart_baud.h"
#include "firmware/rt700_platform.h"
#include "runtime/platform/platform.h"

// The debug UART's rate (firmware/CMakeLists.txt: BOARDLAB_RT700_BAUD). The MCU-Link VCOM
// follows whatever rate the host opens the port with.
#ifndef BOARDLAB_RT700_BAUD
#define BOARDLAB_RT700_BAUD 921600u
#endif

namespace boardlab::firmware {
namespace {

volatile uint32_t& Reg(uintptr_t address) { return *reinterpret_cast<volatile uint32_t*>(address); }

// Reset and clock control (rt700_board_support.h has the facts and their sources).
constexpr uintptr_t kRstctl0 = 0x50000000u;
constexpr uintptr_t kPrstctl0Clear = kRstctl0 + 0x70u;
constexpr uintptr_t kPrstctl2Clear = kRstctl0 + 0x78u;
constexpr uintptr_t kClkctl0 = 0x50001000u;
constexpr uintptr_t kPscctl1 = kClkctl0 + 0x14u;
constexpr uintptr_t kPscctl2 = kClkctl0 + 0x18u;
constexpr uintptr_t kPscctl5 = kClkctl0 + 0x24u;
constexpr uintptr_t kSetOffset = 0x30u;  // PSCCTLn_SET = PSCCTLn + 0x30
constexpr uintptr_t kWwdt0ClockSelect = kClkctl0 + 0x720u;
constexpr uintptr_t kFcclk0Select = kClkctl0 + 0x800u;
constexpr uintptr_t kFcclk0DividerRegister = kClkctl0 + 0x804u;
constexpr uintptr_t kFlexcomm0ClockSelect = kClkctl0 + 0x808u;
constexpr uint32_t kSelectEnable = 1u << 2;
constexpr uint32_t kDividerReset = 1u << 29;
constexpr uint32_t kDividerBusy = 1u << 31;

constexpr uint32_t kIopctl0Bit = 1u << 6;  // PRSTCTL0 and (bit 3) PSCCTL5
constexpr uint32_t kIopctl0ClockBit = 1u << 3;
constexpr uint32_t kFlexcomm0Bit = 1u << 30;   // PRSTCTL2 and PSCCTL1
constexpr uint32_t kWwdt0ClockBit = 1u << 19;  // PSCCTL2

// Pins: LP_FLEXCOMM0 P0 = PIO0_31 (RXD, input buffer on), P1 = PIO1_0 (TXD), function 1.
constexpr uintptr_t kIopctl0 = 0x50004000u;
constexpr uintptr_t PinRegister(uint32_t port, uint32_t pin) {
  return kIopctl0 + port * 0x80u + pin * 4u;
}
constexpr uint32_t kPinFunction1 = 1u;
constexpr uint32_t kPinInputBuffer = 1u << 6;

// The UART's functional clock: FRO0 (300 MHz after reset) / 10 = 30 MHz, as NXP's SDK sets up
// the EVK's debug console.
constexpr uint32_t kFro0Hz = 300000000u;
constexpr uint32_t kFcclk0Divider = 10;
constexpr uint32_t kUartClockHz = kFro0Hz / kFcclk0Divider;
constexpr LpuartBaud kBaud = ChooseLpuartBaud(kUartClockHz, BOARDLAB_RT700_BAUD);
static_assert(kBaud.osr != 0 && kBaud.error_ppm <= 20000,
              "BOARDLAB_RT700_BAUD is not within 2 % of a rate the 30 MHz LPUART clock gives");

constexpr uintptr_t kFlexcomm0 = 0x50110000u;
constexpr uintptr_t kPselid = kFlexcomm0 + 0xFF8u;
constexpr uint32_t kPerselUart = 1u;
constexpr uintptr_t kUartGlobal = kFlexcomm0 + 0x08u;
constexpr uintptr_t kUartBaud = kFlexcomm0 + 0x10u;
constexpr uintptr_t kUartStat = kFlexcomm0 + 0x14u;
constexpr uintptr_t kUartCtrl = kFlexcomm0 + 0x18u;
constexpr uintptr_t kUartData = kFlexcomm0 + 0x1Cu;
constexpr uintptr_t kUartFifo = kFlexcomm0 + 0x28u;
constexpr uint32_t kGlobalReset = 1u << 1;
constexpr uint32_t kStatTdre = 1u << 23;
constexpr uint32_t kStatRdrf = 1u << 21;
// Overrun (19), noise (18), framing (17), parity (16).
constexpr uint32_t kStatErrors = (1u << 19) | (1u << 18) | (1u << 17) | (1u << 16);
constexpr uint32_t kCtrlTe = 1u << 19;
constexpr uint32_t kCtrlRe = 1u << 18;
constexpr uint32_t kFifoEnables = (1u << 7) | (1u << 3);
constexpr uint32_t kFifoFlush = (1u << 15) | (1u << 14);

// The windowed watchdog: LPOSC (1 MHz) / 4 = 250 kHz.
constexpr uintptr_t kWwdt0 = 0x5000E000u;
constexpr uintptr_t kWdMod = kWwdt0 + 0x0u;
constexpr uintptr_t kWdTc = kWwdt0 + 0x4u;
constexpr uintptr_t kWdFeed = kWwdt0 + 0x8u;
constexpr uintptr_t kWdTv = kWwdt0 + 0xCu;
constexpr uintptr_t kWdWarnint = kWwdt0 + 0x14u;
constexpr uint32_t kWdEnable = 1u << 0;
constexpr uint32_t kWdReset = 1u << 1;
constexpr uint32_t kWdTicksPerSecond = 250000u;
constexpr uint32_t kWdWarnTicks = 1023;  // warning 4 ms before the reset: room to record
constexpr uint32_t kWwdt0Irq = 42;

void Feed() {
  // The two writes must not be separated by another access to the watchdog.
  __asm volatile("cpsid i" ::: "memory");
  Reg(kWdFeed) = 0xAAu;
  Reg(kWdFeed) = 0x55u;
  __asm volatile("cpsie i" ::: "memory");
}

void LoadWatchdogPeriod(uint32_t ms) {
  Reg(kWdTc) = ms * (kWdTicksPerSecond / 1000u);
  Feed();  // loads the new period
}

void EnableClock(uintptr_t pscctl, uint32_t bit) {
  Reg(pscctl + kSetOffset) = bit;
  while ((Reg(pscctl) & bit) == 0) {
  }
}

void StartWatchdog() {
  EnableClock(kPscctl2, kWwdt0ClockBit);
  Reg(kWwdt0ClockSelect) = kSelectEnable | 0u;  // LPOSC
  Reg(kWdWarnint) = kWdWarnTicks;
  Reg(kWdTc) = Rt700BoardSupport::kWatchdogMs * (kWdTicksPerSecond / 1000u);
  Reg(kWdMod) = kWdEnable | kWdReset;  // once set, neither can be cleared until a reset
  Feed();                              // starts the count
  // The warning interrupt records the interrupted PC (link_faults.c) before the reset.
  Reg(0xE000E100u + 4u * (kWwdt0Irq / 32u)) = 1u << (kWwdt0Irq % 32u);
  __asm volatile("cpsie i" ::: "memory");
}

// The core clock as the boot ROM left it: DWT cycles over 10 ms of the watchdog's counter (LPOSC,
// whose accuracy bounds the figure's). 0 when the counter does not move.
uint32_t MeasureCoreClockHz() {
  constexpr uint32_t kTicks = kWdTicksPerSecond / 100u;
  const uint32_t start_tv = Reg(kWdTv);
  const uint32_t start_cycles = CycleCount();
  uint32_t tv = start_tv;
  for (uint32_t spins = 0; start_tv - tv < kTicks; ++spins) {
    if (spins > 100000000u) return 0;
    tv = Reg(kWdTv);
  }
  const uint64_t cycles = static_cast<uint32_t>(CycleCount() - start_cycles);
  return static_cast<uint32_t>(cycles * kWdTicksPerSecond / (start_tv - tv));
}

void StartDebugUart() {
  EnableClock(kPscctl5, kIopctl0ClockBit);
  Reg(kPrstctl0Clear) = kIopctl0Bit;
  Reg(PinRegister(0, 31)) = kPinFunction1 | kPinInputBuffer;
  Reg(PinRegister(1, 0)) = kPinFunction1;

  Reg(kFcclk0Select) = kSelectEnable | 1u;  // FRO0
  Reg(kFcclk0DividerRegister) = kDividerReset;
  Reg(kFcclk0DividerRegister) = kFcclk0Divider - 1u;
  while ((Reg(kFcclk0DividerRegister) & kDividerBusy) != 0) {
  }
  Reg(kFlexcomm0ClockSelect) = kSelectEnable | 0u;  // FCCLK0
  EnableClock(kPscctl1, kFlexcomm0Bit);
  Reg(kPrstctl2Clear) = kFlexcomm0Bit;

  Reg(kPselid) = kPerselUart;
  Reg(kUartGlobal) = kGlobalReset;
  Reg(kUartGlobal) = 0;
  Reg(kUartBaud) = kBaud.Register();
  Reg(kUartFifo) = kFifoEnables | kFifoFlush;
  Reg(kUartStat) = kStatErrors;
  Reg(kUartCtrl) = kCtrlTe | kCtrlRe;  // 8 data bits, no parity, 1 stop bit
}

// Non-cacheable window for the NPU's weight scratch (the linker script's NCACHE region): an
// Armv8-M MPU region with Normal, non-cacheable memory attributes; everything else keeps the
// default map (PRIVDEFENA).
extern "C" uint8_t __ncache_start__[];
extern "C" uint8_t __ncache_end__[];

void MapNonCacheableScratch() {
  constexpr uintptr_t kMpuCtrl = 0xE000ED94u;
  constexpr uintptr_t kMpuRnr = 0xE000ED98u;
  constexpr uintptr_t kMpuRbar = 0xE000ED9Cu;
  constexpr uintptr_t kMpuRlar = 0xE000EDA0u;
  constexpr uintptr_t kMpuMair0 = 0xE000EDC0u;
  constexpr uint32_t kNormalNonCacheable = 0x44u;  // MAIR attribute 0
  const uint32_t base = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(__ncache_start__));
  const uint32_t limit = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(__ncache_end__)) - 1u;
  __asm volatile("dsb\n\tisb" ::: "memory");
  Reg(kMpuCtrl) = 0;
  Reg(kMpuMair0) = kNormalNonCacheable;
  Reg(kMpuRnr) = 0;
  Reg(kMpuRbar) = (base & ~0x1Fu) | (1u << 1) | 1u;   // read-write at any privilege, never execute
  Reg(kMpuRlar) = (limit & ~0x1Fu) | (0u << 1) | 1u;  // attribute 0, enabled
  Reg(kMpuCtrl) = (1u << 2) | 1u;                     // PRIVDEFENA, ENABLE
  __asm volatile("dsb\n\tisb" ::: "memory");
}

}  // namespace

// The XSPI0 model slot (rt700.ld, 62 MB at 0x28200000, where NXP's demos keep a model too large
// for SRAM): the flash tool writes a model there (the agent's model_flash), MODEL_SLOT names it,
// and the board checks its SHA-256 and runs it in place, memory-mapped (no copy into SRAM).
extern "C" {
__attribute__((section(".xspi_model"), used)) uint8_t boardlab_xspi_model_slot[0x03E00000];
}

void Rt700BoardSupport::Init(const link::MemoryRegion* regions, uint8_t num_regions) {
  TakeResetRecord();
  rt_pal_init();
  MapNonCacheableScratch();
  StartWatchdog();
  const uint32_t measured_hz = MeasureCoreClockHz();
  SetCoreClockHz(measured_hz);
  StartDebugUart();

  info_.board = "rt700";
  info_.firmware_version = BOARDLAB_FIRMWARE_VERSION;
  info_.build_id = BOARDLAB_FIRMWARE_BUILD_ID;
  // The firmware sets up no clocks: whatever the boot ROM left, measured against LPOSC.
  info_.clock = measured_hz != 0 ? "dwt-cyccnt, boot rom clock" : "dwt-cyccnt, clock unmeasured";
  info_.ticks_per_second = CoreClockHz();
  info_.core_hz = measured_hz;
  info_.icount_shift = -1;
  // No Neutron driver: NPU partitions run on the Cortex-M33 with the CPU reference kernels.
  info_.npu = "emulated on cortex-m33";  // the same words as an505: tools match them
  info_.regions = regions;
  info_.num_regions = num_regions;
}

void Rt700BoardSupport::Drain() {
  uint32_t stat;
  while (((stat = Reg(kUartStat)) & kStatRdrf) != 0) {
    // A full ring loses the byte, as does a FIFO overrun (cleared below): the link retransmits.
    ring_.Push(static_cast<uint8_t>(Reg(kUartData)));
  }
  if ((stat & kStatErrors) != 0) Reg(kUartStat) = stat & kStatErrors;  // write 1 to clear
}

size_t Rt700BoardSupport::Read(uint8_t* data, size_t size, uint32_t timeout_ms) {
  Drain();
  const uint32_t start = Milliseconds();
  while (ring_.empty() && Milliseconds() - start < timeout_ms) Drain();
  return ring_.Pop(data, size);
}

void Rt700BoardSupport::Write(const uint8_t* data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    while ((Reg(kUartStat) & kStatTdre) == 0) Drain();  // keep receiving while the line is busy
    Reg(kUartData) = data[i];
  }
}

uint32_t Rt700BoardSupport::Milliseconds() {
  return static_cast<uint32_t>(rt_pal_current_ticks() / (CoreClockHz() / 1000u));
}

void Rt700BoardSupport::FeedWatchdog() { Feed(); }

void Rt700BoardSupport::SetWatchdogPeriod(uint32_t ms) { LoadWatchdogPeriod(ms); }

LinkBoard StartLinkBoard() {
  // The RT700 memory map as rt700.ld uses it (NXP's demo placement; firmware/README.md).
  static const link::MemoryRegion regions[] = {
      {"code sram", 0x00018000u, 0x000E8000u},   {"data sram", 0x20100000u, 0x00300000u},
      {"ncache sram", 0x20400000u, 0x00140000u}, {"bulk sram", 0x20540000u, 0x00240000u},
      {"xspi0 model", 0x28200000u, 0x03E00000u},
  };
  static Rt700BoardSupport board;
  board.Init(regions, sizeof(regions) / sizeof(regions[0]));
  LinkBoard out;
  out.support = &board;
  out.cache_bytes = 1536u * 1024u;
  out.job_bytes = 256u * 1024u;
  out.receive_window = 8;
  out.model_slot = boardlab_xspi_model_slot;
  out.model_slot_bytes = sizeof(boardlab_xspi_model_slot);
  out.clock = Rt700ClockRecord();
  return out;
}

}  // namespace boardlab::firmware
