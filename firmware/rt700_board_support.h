#pragma once

// Board support for the board-link firmware on the MIMXRT700-EVK (MIMXRT798S, Cortex-M33 core 0;
// link::BoardSupport). Not run here: no board is attached to the machines this was written on
// (firmware/README.md, "The rt700 board"). Register facts from NXP's public MCUXpresso SDK device
// headers and drivers and Zephyr's nxp_rt7xx_cm33_cpu0.dtsi / mimxrt700_evk board files (facts
// only; Secure aliases of the peripherals, the core starts in the Secure state):
//
//   RSTCTL0   0x50000000: PRSTCTL0_CLR +0x70 (bit 6 IOPCTL0), PRSTCTL2_CLR +0x78 (bit 30
//             LP_FLEXCOMM0).
//   CLKCTL0   0x50001000: PSCCTLn_SET +0x40 + 4n (PSCCTL1 bit 30 LP_FLEXCOMM0, PSCCTL2 bit 19
//             WWDT0, PSCCTL5 bit 3 IOPCTL0); WWDT0FCLKSEL +0x720 (0 = LPOSC 1 MHz); FCCLK0SEL
//             +0x800 (1 = FRO0, 300 MHz by default); FCCLK0DIV +0x804 (divider - 1 in [7:0], bit
//             29 reset, bit 31 busy); FC0FCLKSEL +0x808 (0 = FCCLK0). Selectors: choice in
//             [1:0], bit 2 enables the output.
//   IOPCTL0   0x50004000: one word per pin at port * 0x80 + pin * 4, function in [3:0], input
//             buffer enable bit 6. The EVK routes LP_FLEXCOMM0 P0 (PIO0_31, RXD) and P1 (PIO1_0,
//             TXD), function 1, to the MCU-Link debug probe's USB serial port (VCOM).
//   WWDT0     0x5000E000: MOD +0x0 (bit 0 WDEN, bit 1 WDRESET, bit 3 WDINT), TC +0x4 (24 bits),
//             FEED +0x8 (0xAA then 0x55), TV +0xC, WARNINT +0x14 (10 bits); counts LPOSC / 4
//             (250 kHz); warning interrupt = NVIC IRQ 42.
//   LP_FLEXCOMM0 0x50110000: PSELID +0xFF8 (PERSEL [2:0], 1 = LPUART); its LPUART0 at the same
//             base: PARAM +0x4, GLOBAL +0x8 (bit 1 reset), BAUD +0x10, STAT +0x14 (bit 23 TDRE,
//             21 RDRF, 19 OR, 18 NF, 17 FE, 16 PF; flags write 1 to clear), CTRL +0x18 (bit 19 TE,
//             18 RE), DATA +0x1C, FIFO +0x28 (bit 7 TXFE, 3 RXFE, 15/14 TX/RX flush).
//
// Polled: the UART is read in the protocol loop, between kernels (BoardEndpoint's hook) and while
// writing; bytes arriving during a long kernel overflow the 8-byte FIFO and are retransmitted by
// the link. Interrupts are enabled for the watchdog warning only.

#include <stddef.h>
#include <stdint.h>

#include "firmware/byte_ring.h"
#include "firmware/recording_board_support.h"

namespace boardlab::firmware {

class Rt700BoardSupport final : public RecordingBoardSupport {
 public:
  /// Reads and clears the reset record; starts the cycle counter, the watchdog (measuring the
  /// core clock against it) and the debug UART.
  void Init(const link::MemoryRegion* regions, uint8_t num_regions);

  size_t Read(uint8_t* data, size_t size, uint32_t timeout_ms) override;
  void Write(const uint8_t* data, size_t size) override;
  uint32_t Milliseconds() override;

 private:
  void FeedWatchdog() override;
  void SetWatchdogPeriod(uint32_t ms) override;
  bool StopWatchdog() override { return false; }  // the WWDT cannot be stopped once started
  void Drain();  // moves received bytes from the UART FIFO into the ring

  ByteRing<4096> ring_;
};

}  // namespace boardlab::firmware
