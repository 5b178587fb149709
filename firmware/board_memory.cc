#include "firmware/board_memory.h"

namespace boardlab::firmware {
namespace {

// The RAM pool leaves 4 MB - 3.5 MB = 512 KB of the data RAM for .data, the rest of .bss (runtime
// statics, stdio), newlib's heap (semihosting file handles and stdio buffers) and the 64 KB
// stack; link.ld asserts that they fit.
constexpr size_t kRamPoolBytes = 3584u * 1024u;
// The whole PSRAM (link.ld places .psram at its start).
constexpr size_t kPsramPoolBytes = 16u * 1024u * 1024u;

alignas(BoardMemory::kAlignment) uint8_t ram_pool[kRamPoolBytes];
alignas(BoardMemory::kAlignment)
    __attribute__((section(".psram"))) uint8_t psram_pool[kPsramPoolBytes];

}  // namespace

BoardMemory& BoardMemory::Get() {
  static BoardMemory memory(ram_pool, kRamPoolBytes, psram_pool, kPsramPoolBytes);
  return memory;
}

uint8_t* BoardMemory::Region::Take(size_t bytes) {
  const size_t rounded = Rounded(bytes);
  if (rounded < bytes || rounded > Free()) return nullptr;
  uint8_t* p = base + used;
  used += rounded;
  return p;
}

uint8_t* BoardMemory::Reserve(size_t size) {
  const size_t rounded = Rounded(size);
  if (rounded < size || rounded > psram_.Free()) return nullptr;
  psram_.size -= rounded;  // the top of PSRAM leaves the pool
  return psram_.base + psram_.size;
}

uint8_t* BoardMemory::Allocate(size_t size, Preference preference) {
  Region& first = preference == kFast ? ram_ : psram_;
  Region& second = preference == kFast ? psram_ : ram_;
  if (uint8_t* p = first.Take(size)) return p;
  return second.Take(size);
}

}  // namespace boardlab::firmware
