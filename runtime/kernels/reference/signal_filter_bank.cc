#include "runtime/kernels/reference/signal_filter_bank.h"

namespace boardlab::runtime::kernels {
namespace {

// 1-based index of the highest set bit; x = 0 gives the type's width (GCC's __builtin_clz form,
// which TFLite Micro builds with).
int32_t HighestBit32(uint32_t x) { return x == 0 ? 32 : 32 - __builtin_clz(x); }
int32_t HighestBit64(uint64_t x) { return x == 0 ? 64 : 64 - __builtin_clzll(x); }

// The integer square root by pairs of bits from the top, then +1 when the remainder exceeds the
// root (unless the root is already `cap`, the largest value the result type holds).
template <typename T>
T RoundedSqrt(T num, int32_t width, T cap) {
  int32_t top = (width - (width == 32 ? HighestBit32(static_cast<uint32_t>(num))
                                      : HighestBit64(static_cast<uint64_t>(num)))) |
                1;
  T bit = static_cast<T>(T{1} << (width - 1 - top));
  T res = 0;
  for (int32_t i = (width - 1 - top) / 2 + 1; i > 0; --i) {
    if (num >= res + bit) {
      num -= res + bit;
      res = (res >> 1) + bit;
    } else {
      res >>= 1;
    }
    bit >>= 2;
  }
  if (num > res && res != cap) ++res;
  return res;
}

uint32_t Sqrt64(uint64_t num) {
  // Below 2^32 TFLite Micro takes the 32-bit root, whose result it keeps in 16 bits.
  if ((num >> 32) == 0) {
    const uint32_t small = static_cast<uint32_t>(num);
    return small == 0 ? 0 : static_cast<uint16_t>(RoundedSqrt<uint32_t>(small, 32, 0xFFFF));
  }
  return static_cast<uint32_t>(RoundedSqrt<uint64_t>(num, 64, 0xFFFFFFFFull));
}

// log2(1 + f) - f over [0, 1) in 1/65536 at 128 segments, and one entry of padding.
constexpr uint16_t kLog2Correction[130] = {
    0,    224,  442,  654,  861,  1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646,
    2797, 2944, 3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460,
    4549, 4633, 4714, 4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408,
    5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633,
    5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249,
    5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341,
    4264, 4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981,
    2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224,
    1094, 963,  830,  695,  559,  421,  282,  142,  0,    0};

// The fraction of log2(x) in 1/65536, x in [2^k, 2^(k+1)).
uint32_t Log2Fraction(uint32_t x, int32_t k) {
  int32_t frac = static_cast<int32_t>(x - (uint32_t{1} << k));
  frac = k < 16 ? frac << (16 - k) : frac >> (k - 16);
  const int32_t segment = frac >> 9;  // 128 segments of 512
  const int32_t c0 = kLog2Correction[segment];
  const int32_t c1 = kLog2Correction[segment + 1];
  const int32_t within = ((c1 - c0) * (frac - 512 * segment)) >> 16;
  return static_cast<uint32_t>(frac + c0 + within);
}

// ln(x) x scale / 2^16, rounded twice as TFLite Micro's Log32 does; x >= 2.
uint32_t ScaledLog(uint32_t x, uint32_t scale) {
  const int32_t k = HighestBit32(x) - 1;
  const uint32_t log2 = (static_cast<uint32_t>(k) << 16) + Log2Fraction(x, k);
  constexpr uint32_t kHalf = 32768;
  constexpr uint64_t kLn2 = 45426;  // ln(2) x 2^16
  const uint32_t ln = static_cast<uint32_t>((kLn2 * log2 + kHalf) >> 16);
  return (scale * ln + kHalf) >> 16;
}

// The gain for noise estimate x: the table's quadratic for x's power of two at x's 10-bit
// fraction (entries 0..2 directly for x <= 2). int32 products wrap as on the targets.
int16_t WideDynamicGain(uint32_t x, const int16_t* lut) {
  if (x <= 2) return lut[x];
  const int32_t power = HighestBit32(x);
  const int16_t* q = lut + 4 * power - 6;
  const int32_t frac =
      static_cast<int32_t>((power < 11 ? x << (11 - power) : x >> (power - 11)) & 0x3FF);
  int32_t r = (static_cast<int32_t>(q[2]) * frac) >> 5;
  r = static_cast<int32_t>(static_cast<uint32_t>(r) +
                           (static_cast<uint32_t>(static_cast<int32_t>(q[1])) << 5));
  r = static_cast<int32_t>(static_cast<uint32_t>(r) * static_cast<uint32_t>(frac));
  r = static_cast<int32_t>(static_cast<uint32_t>(r) + (1u << 14)) >> 15;
  return static_cast<int16_t>(r + q[0]);
}

// The signal-to-noise ratio (12 fractional bits) to the output (6 fractional bits): x^2 / 4
// below 2, x - 1 from there.
uint32_t PcanShrink(uint32_t snr) {
  constexpr int kSnrBits = 12, kOutputBits = 6;
  if (snr < (2u << kSnrBits)) return (snr * snr) >> (2 + 2 * kSnrBits - kOutputBits);
  return (snr >> (kSnrBits - kOutputBits)) - (1u << kOutputBits);
}

bool ChannelFits(const FilterBankTables& t, int32_t c, int32_t bins) {
  const int32_t width = t.widths[c] > 0 ? t.widths[c] : 0;
  return t.frequency_starts[c] >= 0 && t.frequency_starts[c] + width <= bins &&
         t.weight_starts[c] >= 0 && t.weight_starts[c] + width <= t.weight_count;
}

}  // namespace

Error energy_s16(const int16_t* input, int32_t start, int32_t end, int32_t count,
                 uint32_t* output) {
  RT_CHECK_OR_RETURN_ERROR(
      input != nullptr && output != nullptr && start >= 0 && start <= end && end <= count,
      kInvalidArgument, "energy_s16: bad arguments");
  for (int32_t i = 0; i < count; ++i) {
    if (i < start || i >= end) {
      output[i] = 0;
      continue;
    }
    const int32_t re = input[2 * i], im = input[2 * i + 1];
    output[i] = static_cast<uint32_t>(re * re) + static_cast<uint32_t>(im * im);
  }
  return Error::kOk;
}

Error filter_bank_u32(const uint32_t* input, int32_t bins, const FilterBankTables& t, int32_t count,
                      uint64_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && t.weights != nullptr &&
                               t.unweights != nullptr && t.frequency_starts != nullptr &&
                               t.weight_starts != nullptr && t.widths != nullptr &&
                               t.channels >= 1 && count >= 0 && count <= t.channels,
                           kInvalidArgument, "filter_bank_u32: bad arguments");
  for (int32_t c = 0; c <= t.channels; ++c) {
    RT_CHECK_OR_RETURN_ERROR(ChannelFits(t, c, bins), kInvalidArgument,
                             "signal_filter_bank: channel %d reads past its input or weights",
                             static_cast<int>(c));
  }
  // Channel c + 1 = its own weighted sum plus channel c's unweighted one; channel 0 only passes
  // its unweighted sum on.
  uint64_t carried = 0;
  for (int32_t c = 0; c <= count; ++c) {
    uint64_t weighted = carried, unweighted = 0;
    const uint32_t* in = input + t.frequency_starts[c];
    const int32_t first = t.weight_starts[c];
    for (int32_t j = 0; j < t.widths[c]; ++j) {
      weighted += static_cast<uint64_t>(static_cast<int64_t>(t.weights[first + j])) * in[j];
      unweighted += static_cast<uint64_t>(static_cast<int64_t>(t.unweights[first + j])) * in[j];
    }
    if (c > 0) output[c - 1] = weighted;
    carried = unweighted;
  }
  return Error::kOk;
}

Error filter_bank_sqrt_u64(const uint64_t* input, int32_t count, int32_t scale_bits,
                           uint32_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && count >= 0, kInvalidArgument,
                           "filter_bank_sqrt_u64: bad arguments");
  RT_CHECK_OR_RETURN_ERROR(scale_bits >= 0 && scale_bits <= 31, kInvalidArgument,
                           "signal_filter_bank_square_root: scale_bits %d is outside 0..31",
                           static_cast<int>(scale_bits));
  for (int32_t i = 0; i < count; ++i) output[i] = Sqrt64(input[i]) >> scale_bits;
  return Error::kOk;
}

Error filter_bank_log_u32(const uint32_t* input, int32_t count, int32_t correction_bits,
                          int32_t output_scale, int16_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && output != nullptr && count >= 0 &&
                               correction_bits >= 0 && correction_bits <= 31,
                           kInvalidArgument, "filter_bank_log_u32: bad arguments");
  for (int32_t i = 0; i < count; ++i) {
    const uint32_t x = input[i] << correction_bits;
    const uint32_t v = x > 1 ? ScaledLog(x, static_cast<uint32_t>(output_scale)) : 0;
    output[i] = static_cast<int16_t>(v < 32767 ? v : 32767);
  }
  return Error::kOk;
}

Error pcan_u32(const uint32_t* input, const uint32_t* noise_estimate, const int16_t* gain_lut,
               int32_t count, int32_t snr_shift, uint32_t* output) {
  RT_CHECK_OR_RETURN_ERROR(input != nullptr && noise_estimate != nullptr && gain_lut != nullptr &&
                               output != nullptr && count >= 0 && snr_shift >= 0 && snr_shift <= 63,
                           kInvalidArgument, "pcan_u32: bad arguments");
  for (int32_t i = 0; i < count; ++i) {
    // The int16 gain widens sign-extended, as TFLite Micro assigns it to a uint32.
    const uint32_t gain =
        static_cast<uint32_t>(static_cast<int32_t>(WideDynamicGain(noise_estimate[i], gain_lut)));
    const uint32_t snr =
        static_cast<uint32_t>((static_cast<uint64_t>(input[i]) * gain) >> snr_shift);
    output[i] = PcanShrink(snr);
  }
  return Error::kOk;
}

}  // namespace boardlab::runtime::kernels
