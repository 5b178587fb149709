// The rt700 debug UART's divisors (firmware/rt700_lpuart_baud.h), checked against the LPUART's
// rate formula: baud = clock / (OSR * SBR).

#include "firmware/rt700_lpuart_baud.h"

#include <gtest/gtest.h>

namespace boardlab::firmware {
namespace {

// The rate the register value gives, decoded the way the LPUART does.
uint32_t RateOf(uint32_t clock_hz, uint32_t baud_register) {
  const uint32_t osr = ((baud_register >> 24) & 0x1F) + 1;
  const uint32_t sbr = baud_register & 0x1FFF;
  return clock_hz / (osr * sbr);
}

TEST(Rt700LpuartBaudTest, CommonRatesFromThirtyMegahertzAreWithinTwoPercent) {
  for (uint32_t baud : {115200u, 230400u, 460800u, 921600u, 1000000u, 3000000u}) {
    const LpuartBaud b = ChooseLpuartBaud(30000000u, baud);
    ASSERT_NE(b.osr, 0u) << baud;
    EXPECT_LE(b.error_ppm, 20000u) << baud;
    EXPECT_EQ(RateOf(30000000u, b.Register()), b.actual) << baud;
  }
}

TEST(Rt700LpuartBaudTest, ExactDivisionIsFoundWithZeroError) {
  const LpuartBaud b = ChooseLpuartBaud(30000000u, 3000000u);
  EXPECT_EQ(b.actual, 3000000u);
  EXPECT_EQ(b.error_ppm, 0u);
  EXPECT_EQ(b.osr * b.sbr, 10u);
}

TEST(Rt700LpuartBaudTest, LowOversamplingSetsBothEdges) {
  const LpuartBaud b = ChooseLpuartBaud(20000000u, 5000000u);  // only OSR 4 reaches it
  EXPECT_EQ(b.osr, 4u);
  EXPECT_NE(b.Register() & (1u << 17), 0u);
  const LpuartBaud slow = ChooseLpuartBaud(30000000u, 115200u);
  EXPECT_GE(slow.osr, 8u);
  EXPECT_EQ(slow.Register() & (1u << 17), 0u);
}

TEST(Rt700LpuartBaudTest, UnreachableRatesReportTheirError) {
  EXPECT_EQ(ChooseLpuartBaud(30000000u, 0).osr, 0u);
  const LpuartBaud too_fast = ChooseLpuartBaud(1000000u, 3000000u);  // beyond clock / 4
  EXPECT_GT(too_fast.error_ppm, 500000u);
}

}  // namespace
}  // namespace boardlab::firmware
