#include "firmware/board_memory.h"

namespace boardlab::firmware {
namespace {

// The pools' sizes are the board's (firmware/CMakeLists.txt passes them per ELF; the defaults are
// an505's). an505: the RAM pool leaves 4 MB - 3.5 MB = 512 KB of the data RAM for .data, the rest
// of .bss (runtime statics, stdio), newlib's heap (semihosting file handles and stdio buffers) and
// the 64 KB stack, and the bulk pool is the whole PSRAM; the linker scripts assert that they fit.
#ifndef BOARDLAB_RAM_POOL_BYTES
#define BOARDLAB_RAM_POOL_BYTES (3584u * 1024u)
#endif
#ifndef BOARDLAB_BULK_POOL_BYTES
#define BOARDLAB_BULK_POOL_BYTES (16u * 1024u * 1024u)
#endif
#ifndef BOARDLAB_BULK_POOL_NAME
#define BOARDLAB_BULK_POOL_NAME "PSRAM"
#endif
#ifndef BOARDLAB_SCRATCH_POOL_BYTES
#define BOARDLAB_SCRATCH_POOL_BYTES 0u
#endif

constexpr size_t kRamPoolBytes = BOARDLAB_RAM_POOL_BYTES;
constexpr size_t kBulkPoolBytes = BOARDLAB_BULK_POOL_BYTES;
constexpr size_t kScratchPoolBytes = BOARDLAB_SCRATCH_POOL_BYTES;

alignas(BoardMemory::kAlignment) uint8_t ram_pool[kRamPoolBytes];
alignas(BoardMemory::kAlignment)
    __attribute__((section(".bulk"))) uint8_t bulk_pool[kBulkPoolBytes];
#if BOARDLAB_SCRATCH_POOL_BYTES > 0
alignas(BoardMemory::kAlignment)
    __attribute__((section(".ncache"))) uint8_t scratch_pool[kScratchPoolBytes];
#else
constexpr uint8_t* scratch_pool = nullptr;
#endif

}  // namespace

BoardMemory& BoardMemory::Get() {
  static BoardMemory memory(ram_pool, kRamPoolBytes, bulk_pool, kBulkPoolBytes, scratch_pool,
                            kScratchPoolBytes);
  return memory;
}

const char* BoardMemory::bulk_name() { return BOARDLAB_BULK_POOL_NAME; }

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
  if (preference == kWeightScratch) {
    if (uint8_t* p = scratch_.Take(size)) return p;
    preference = kFast;
  }
  Region& first = preference == kFast ? ram_ : psram_;
  Region& second = preference == kFast ? psram_ : ram_;
  if (uint8_t* p = first.Take(size)) return p;
  return second.Take(size);
}

}  // namespace boardlab::firmware
