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

#include "firmware/byte_ring.h"
#include "firmware/recording_board_support.h"

namespace boardlab::firmware {

class An505BoardSupport final : public RecordingBoardSupport {
 public:
  /// Reads and clears the reset record, sets up UART0, timer 1 and the watchdog.
  void Init(const link::MemoryRegion* regions, uint8_t num_regions);

  size_t Read(uint8_t* data, size_t size, uint32_t timeout_ms) override;
  void Write(const uint8_t* data, size_t size) override;
  uint32_t Milliseconds() override;

  /// Bytes the UART received while the receive ring was full (lost; the link retransmits).
  uint32_t overruns() const { return overruns_; }

 private:
  // Kicks are cheap but each is an emulated register write: RecordingBoardSupport thins them.
  void FeedWatchdog() override;
  void SetWatchdogPeriod(uint32_t ms) override;
  bool StopWatchdog() override;
  void Drain();  // moves received bytes from the UART into the ring
  void WaitForEvent(uint32_t timeout_ms);

  ByteRing<4096> ring_;
  uint32_t overruns_ = 0;
};

}  // namespace boardlab::firmware
