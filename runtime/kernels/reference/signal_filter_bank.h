#pragma once

// The filter bank stage of TFLite Micro's signal library (signal/src: energy, filter_bank,
// filter_bank_square_root, filter_bank_log with log, pcan_argc_fixed, msb, square_root),
// bit-exact with its portable C++ built by GCC (host and Cortex-M):
// - energy_s16: out[i] = re^2 + im^2 of complex bin i, summed in 32 bits (two -32768s give
//   0x80000000) and kept as uint32.
// - filter_bank_u32: channel c of `channels` + 1 (0 is scratch) sums weights[ws_c + j] x
//   in[fs_c + j] (weight into its own channel) and unweights[ws_c + j] x in[fs_c + j] (into
//   channel c + 1) over j < width_c; products and sums wrap modulo 2^64, an int16 weight taken
//   sign-extended; out[k] = channel k + 1.
// - filter_bank_sqrt_u64: out = isqrt(in) >> scale_bits, isqrt by the bit-pair method rounded up
//   when the remainder exceeds the root, through 32 bits (kept to 16) when in < 2^32.
// - filter_bank_log_u32: x = in << correction_bits (32 bits); x <= 1 gives 0; otherwise the base-2
//   log of x in 16.16 fixed point from msb(x) and a 129-entry interpolation table, times
//   45426 / 2^16 (ln 2) rounded, times output_scale / 2^16 rounded in 32 bits, at most 32767.
// - pcan_u32: gain = the wide dynamic function of noise[i] through the gain table (a quadratic
//   per power of two, 10-bit fraction); snr = (in x gain) >> snr_shift in 64 bits, kept to 32;
//   out = snr^2 >> 20 below 2 x 2^12, snr >> 6 - 64 from there.

#include <cstdint>

#include "runtime/core/error.h"

namespace boardlab::runtime::kernels {

/// Writes bins [start, end) of `output` from `input` (interleaved real, imaginary) and 0 to the
/// other `count` - (end - start) bins.
[[nodiscard]] Error energy_s16(const int16_t* input, int32_t start, int32_t end, int32_t count,
                               uint32_t* output);

/// The channel tables of SIGNAL_FILTER_BANK, each `channels` + 1 entries long.
struct FilterBankTables {
  const int16_t* weights = nullptr;
  const int16_t* unweights = nullptr;
  int32_t weight_count = 0;  // entries of weights and of unweights (the shorter)
  const int16_t* frequency_starts = nullptr;
  const int16_t* weight_starts = nullptr;
  const int16_t* widths = nullptr;
  int32_t channels = 0;
};

/// kInvalidArgument when a channel reads past `bins` inputs or the weights; writes `count`
/// (<= channels) outputs otherwise.
[[nodiscard]] Error filter_bank_u32(const uint32_t* input, int32_t bins,
                                    const FilterBankTables& tables, int32_t count,
                                    uint64_t* output);

/// `scale_bits` in 0..31.
[[nodiscard]] Error filter_bank_sqrt_u64(const uint64_t* input, int32_t count, int32_t scale_bits,
                                         uint32_t* output);

/// `correction_bits` in 0..31; `output_scale` is used modulo 2^32, as TFLite Micro does.
[[nodiscard]] Error filter_bank_log_u32(const uint32_t* input, int32_t count,
                                        int32_t correction_bits, int32_t output_scale,
                                        int16_t* output);

/// `gain_lut` holds at least 125 entries; `snr_shift` in 0..63.
[[nodiscard]] Error pcan_u32(const uint32_t* input, const uint32_t* noise_estimate,
                             const int16_t* gain_lut, int32_t count, int32_t snr_shift,
                             uint32_t* output);

}  // namespace boardlab::runtime::kernels
