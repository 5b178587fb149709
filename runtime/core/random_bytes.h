#pragma once

// random:SEED inputs (docs/runtime.md), the same on every board of boardlab-run: the bytes of the
// splitmix64 stream seeded with SEED, each 64-bit output little-endian (the first output uses
// state SEED + 0x9E3779B97F4A7C15). Portable and allocation-free, for the host tools and the
// firmware alike.

#include <stddef.h>
#include <stdint.h>

namespace boardlab::runtime {

inline void FillRandomBytes(uint64_t seed, uint8_t* out, size_t size) {
  uint64_t state = seed;
  for (size_t i = 0; i < size; i += 8) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (size_t b = 0; b < 8 && i + b < size; ++b) out[i + b] = static_cast<uint8_t>(z >> (8 * b));
  }
}

}  // namespace boardlab::runtime
