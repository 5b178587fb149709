#include "runtime/link/crc.h"

namespace boardlab::link {
namespace {

// One table lookup per byte: 1 KiB of read-only data, built at compile time so that the
// firmware keeps it in flash.
struct Crc32Table {
  uint32_t entry[256];
  constexpr Crc32Table() : entry() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int bit = 0; bit < 8; ++bit) c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
      entry[i] = c;
    }
  }
};
constexpr Crc32Table kCrc32Table;

}  // namespace

uint32_t Crc32(const uint8_t* data, size_t size, uint32_t previous) {
  uint32_t c = ~previous;
  for (size_t i = 0; i < size; ++i) c = kCrc32Table.entry[(c ^ data[i]) & 0xFFu] ^ (c >> 8);
  return ~c;
}

uint8_t Crc8(const uint8_t* data, size_t size) {
  uint8_t c = 0;
  for (size_t i = 0; i < size; ++i) {
    c ^= data[i];
    for (int bit = 0; bit < 8; ++bit)
      c = (c & 0x80u) ? static_cast<uint8_t>((c << 1) ^ 0x07u) : static_cast<uint8_t>(c << 1);
  }
  return c;
}

}  // namespace boardlab::link
