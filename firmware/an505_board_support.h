#pragma once

// Board support for the board-link firmware on QEMU mps2-an505 (link::BoardSupport): the
// protocol on CMSDK UART0, timers from the CMSDK APB timers, the Secure CMSDK watchdog, and the
// reset record (reset_record.h). Register facts (QEMU 7.2 hw/arm/mps2-tz.c, armsse.c,
// cmsdk-apb-uart.c, cmsdk-apb-watchdog.c; checked on QEMU):
//
//   UART0     0x50200000 (Secure alias of 0x40200000): DATA +0x0, STATE +0x4 (bit 0 TX full,
//             bit 1 RX full, bit 3 RX overrun), CTRL +0x8 (bit 0 TX enable, 1 RX enable, 3 RX
//             interrupt enable), INTSTATUS/INTCLEAR +0xC, BAUDDIV +0x10 (>= 16). QEMU's first
//             -serial is UART0. RX interrupt = NVIC IRQ 32 (expansion IRQ 0).
//   timer 1   0x50001000, CMSDK APB timer, 20 MHz: ticks every 5 ms to wake WFI (IRQ 4).
//   watchdog  0x50081000, CMSDK APB watchdog (Secure), 20 MHz: LOAD +0x0, CONTROL +0x8 (bit 0
//             interrupt+count enable, bit 1 reset enable), INTCLR +0xC (reloads), LOCK +0xC00
//             (0x1ACCE551 unlocks). Its first expiry raises NMI.
//   board info QEMU writes 8 bytes at 0x30007FF0 (SSE SRAM, unused by the firmware) when
//             started with -device loader: "BLQ1" magic and the -icount shift
//             (firmware/qemu-board.sh), which HELLO reports.
//
// The core waits with WFI with interrupts masked (PRIMASK): a pending UART or timer interrupt
// wakes it and nothing runs a handler. Besides saving host CPU, this doubles the rate at which
// QEMU feeds the UART (it delivers one byte per main-loop turn, and a polling guest competes
// with that loop for QEMU's big lock).

#include <stddef.h>
#include <stdint.h>

#include "runtime/link/board_support.h"

namespace boardlab::firmware {

class An505BoardSupport : public link::BoardSupport {
 public:
  /// Watchdog period while running (kernels kick it; the longest shared model's longest kernel
  /// takes well under a second of QEMU time).
  static constexpr uint32_t kWatchdogMs = 8000;
  /// Watchdog period of TestFault::kHang, so that recovery tests do not wait kWatchdogMs.
  static constexpr uint32_t kHangWatchdogMs = 1000;
  /// Kicks closer together than this are skipped.
  static constexpr uint32_t kKickIntervalMs = 50;

  /// Reads and clears the reset record, sets up UART0, timer 1 and the watchdog.
  void Init(const link::MemoryRegion* regions, uint8_t num_regions);

  size_t Read(uint8_t* data, size_t size, uint32_t timeout_ms) override;
  void Write(const uint8_t* data, size_t size) override;
  uint32_t Milliseconds() override;
  void KickWatchdog() override;
  link::ResetCause reset_cause() const override { return cause_; }
  bool fault_record(link::Fault* fault) const override;
  void Reset() override;
  bool CauseTestFault(link::TestFault fault) override;
  const link::BoardInfo& info() const override { return info_; }

  /// Bytes the UART received while the receive ring was full (lost; the link retransmits).
  uint32_t overruns() const { return overruns_; }

 private:
  void Drain();  // moves received bytes from the UART into the ring
  void WaitForEvent(uint32_t timeout_ms);

  static constexpr size_t kRingBytes = 4096;
  uint8_t ring_[kRingBytes];
  size_t head_ = 0;  // next byte to read
  size_t tail_ = 0;  // next free slot
  uint32_t overruns_ = 0;
  uint32_t last_kick_ms_ = 0;
  link::ResetCause cause_ = link::ResetCause::kPowerOn;
  bool has_record_ = false;
  link::Fault fault_;
  link::BoardInfo info_;
};

}  // namespace boardlab::firmware
