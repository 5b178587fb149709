#pragma once

// The few Armv8-M DSP instructions the Cortex-M kernel paths are built from, with portable
// definitions elsewhere so that those paths also run (and are tested) on the host. Halfword
// lanes: bits 0-15 are the low half, 16-31 the high half, both signed.
//
// Usage (two int8 words of four channels each into four (a, b) pairs):
//   const int32_t a02 = Sxtab16(off2, a), a13 = Sxtab16Ror8(off2, a);  // (a0, a2), (a1, a3)
//   const int32_t pair0 = PackLowHalves(a02, b02);                      // (a0, b0)
//   acc = Smlad(pair0, w_pair0, acc);                                   // + a0 * w0 + b0 * w1

#include <cstdint>
#include <cstring>

#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)
#include <arm_acle.h>
#endif

namespace boardlab::runtime::kernels::dsp {

/// Four bytes from any address (Cortex-M33 allows unaligned word loads).
inline uint32_t Load32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline void Store32(void* p, int32_t v) { std::memcpy(p, &v, 4); }

#if defined(__ARM_FEATURE_DSP) && !defined(__SSE2__)

/// (acc.lo + (int8)v.byte0, acc.hi + (int8)v.byte2) (SXTAB16).
inline int32_t Sxtab16(int32_t acc, uint32_t v) { return __sxtab16(acc, static_cast<int32_t>(v)); }

/// The same on bytes 1 and 3. Written out: GCC does not fold the rotate into the instruction.
inline int32_t Sxtab16Ror8(int32_t acc, uint32_t v) {
  int32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(v));
  return r;
}

/// (a.lo, b.lo) (PKHBT with b shifted left by 16).
inline int32_t PackLowHalves(int32_t a, int32_t b) {
  int32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

/// (a.hi, b.hi) (PKHTB with a shifted right by 16).
inline int32_t PackHighHalves(int32_t a, int32_t b) {
  int32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(b), "r"(a));
  return r;
}

/// acc + a.lo * b.lo + a.hi * b.hi (SMLAD; the sums of the models' kernels never overflow).
inline int32_t Smlad(int32_t a, int32_t b, int32_t acc) { return __smlad(a, b, acc); }

#else

inline int32_t Low(int32_t v) { return static_cast<int16_t>(static_cast<uint32_t>(v) & 0xffffu); }
inline int32_t High(int32_t v) { return static_cast<int16_t>(static_cast<uint32_t>(v) >> 16); }
inline int32_t Halves(int32_t lo, int32_t hi) {
  return static_cast<int32_t>((static_cast<uint32_t>(lo) & 0xffffu) |
                              (static_cast<uint32_t>(hi) << 16));
}

inline int32_t Sxtab16(int32_t acc, uint32_t v) {
  return Halves(Low(acc) + static_cast<int8_t>(v & 0xffu),
                High(acc) + static_cast<int8_t>((v >> 16) & 0xffu));
}
inline int32_t Sxtab16Ror8(int32_t acc, uint32_t v) { return Sxtab16(acc, (v >> 8) | (v << 24)); }
inline int32_t PackLowHalves(int32_t a, int32_t b) { return Halves(Low(a), Low(b)); }
inline int32_t PackHighHalves(int32_t a, int32_t b) { return Halves(High(a), High(b)); }
// In 64 bits, then wrapped. The equal sum in 32-bit unsigned arithmetic gave wrong results in
// the depthwise loop when GCC 12 vectorized it at -O3 (clang, and GCC at -O2, agreed with this).
inline int32_t Smlad(int32_t a, int32_t b, int32_t acc) {
  const int64_t sum = int64_t{acc} + int64_t{Low(a)} * Low(b) + int64_t{High(a)} * High(b);
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(sum)));
}

#endif

}  // namespace boardlab::runtime::kernels::dsp
