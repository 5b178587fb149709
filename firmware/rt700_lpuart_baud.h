#pragma once

// LPUART baud-rate divisors (the LPUART of the RT700's LP_FLEXCOMM; NXP LPUART reference: baud
// = clock / (OSR * SBR), oversampling OSR 4..32 written as OSR - 1 into BAUD[28:24], SBR 1..8191
// into BAUD[12:0], BAUD[17] BOTHEDGE required for OSR 4..7). Pure arithmetic, so the host tests
// it (tests/firmware/rt700_lpuart_baud_test.cc) and the firmware evaluates it at compile time.
//
//   constexpr LpuartBaud b = ChooseLpuartBaud(30000000, 921600);
//   static_assert(b.error_ppm < 20000);   // within 2 %

#include <stdint.h>

namespace boardlab::firmware {

struct LpuartBaud {
  uint32_t osr = 0;        // oversampling ratio, 4..32 (0: no divisor reaches the rate)
  uint32_t sbr = 0;        // baud-rate modulo divisor, 1..8191
  uint32_t actual = 0;     // the rate these give, bits per second
  uint32_t error_ppm = 0;  // |actual - wanted| / wanted, parts per million

  /// The BAUD register value (without interrupt or DMA enables).
  constexpr uint32_t Register() const {
    const uint32_t both_edges = osr < 8 ? (1u << 17) : 0u;
    return ((osr - 1) << 24) | both_edges | sbr;
  }
};

/// The OSR and SBR whose rate is nearest `baud` from `clock_hz` (on a tie, the higher OSR: it
/// samples each bit more often). osr = 0 only when `baud` is 0; callers check error_ppm (a rate
/// beyond clock_hz / 4 comes back with a large error).
constexpr LpuartBaud ChooseLpuartBaud(uint32_t clock_hz, uint32_t baud) {
  LpuartBaud best;
  if (baud == 0) return best;
  uint64_t best_error = UINT64_MAX;
  for (uint32_t osr = 4; osr <= 32; ++osr) {
    // The two SBRs around the exact quotient.
    const uint64_t exact = (uint64_t{clock_hz} + uint64_t{osr} * baud / 2) / (uint64_t{osr} * baud);
    for (uint64_t sbr = exact > 1 ? exact - 1 : 1; sbr <= exact + 1; ++sbr) {
      if (sbr < 1 || sbr > 8191) continue;
      const uint64_t actual = uint64_t{clock_hz} / (osr * sbr);
      const uint64_t error = actual > baud ? actual - baud : baud - actual;
      if (error <= best_error) {
        best_error = error;
        best.osr = osr;
        best.sbr = static_cast<uint32_t>(sbr);
        best.actual = static_cast<uint32_t>(actual);
      }
    }
  }
  if (best.osr == 0) return best;
  best.error_ppm = static_cast<uint32_t>(best_error * 1000000u / baud);
  return best;
}

}  // namespace boardlab::firmware
