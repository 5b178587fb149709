#pragma once

// random:SEED inputs, as every board of boardlab-run makes them (docs/runtime.md): the bytes of
// the splitmix64 stream seeded with SEED, each 64-bit output little-endian (the first output uses
// state SEED + 0x9E3779B97F4A7C15). The firmware has its own copy (firmware/runner.cc), since it
// cannot link host code.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace boardlab::run {

inline std::vector<uint8_t> RandomBytes(uint64_t seed, size_t size) {
  std::vector<uint8_t> out(size);
  uint64_t state = seed;
  for (size_t i = 0; i < size; i += 8) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (size_t b = 0; b < 8 && i + b < size; ++b) out[i + b] = static_cast<uint8_t>(z >> (8 * b));
  }
  return out;
}

}  // namespace boardlab::run
