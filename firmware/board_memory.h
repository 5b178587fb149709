#pragma once

// The firmware's memory: bump regions the loader carves every buffer from, so nothing on the
// model's path touches the heap. Their sizes and places are the board's (compile definitions of
// each ELF, firmware/CMakeLists.txt; the linker script places the sections):
//
//   RAM pool      a .bss array in data RAM (fast: activations, runtime pools)
//   bulk pool     section .bulk (an505: the 16 MB PSRAM at 0x80000000; rt700: SRAM above the
//                 non-cacheable window): the artifact, the ETDump buffer, and any activation
//                 buffer that does not fit the RAM pool. The accessors call it "psram".
//   scratch pool  section .ncache, non-cacheable SRAM (rt700 only; empty on an505): the NPU
//                 weight-scratch window, which the NPU reads behind the core's cache
//
//   BoardMemory& memory = BoardMemory::Get();
//   uint8_t* arena = memory.Allocate(size, BoardMemory::kFast);   // RAM, else PSRAM
//   if (arena == nullptr) ...                                     // does not fit
//
// Buffers are 64-byte aligned (Program::Load needs alignof(max_align_t), kernels 16). The
// semihosting build allocates once and exits; the board-link build runs many models, so it takes
// its long-lived regions first (Reserve: the artifact cache, the job area) and releases
// everything else after each run (Mark / Release):
//
//   uint8_t* cache = memory.Reserve(8 << 20);      // PSRAM, gone from the pools for good
//   const BoardMemory::Mark start = memory.mark();
//   ... run ...
//   memory.Release(start);

#include <stddef.h>
#include <stdint.h>

namespace boardlab::firmware {

class BoardMemory {
 public:
  /// Which region to try first. kWeightScratch: the scratch pool, else as kFast.
  enum Preference { kFast, kBulk, kWeightScratch };
  static constexpr size_t kAlignment = 64;

  /// The board's two regions (static storage; the buffers are defined in board_memory.cc).
  static BoardMemory& Get();

  /// `size` bytes at a 64-byte boundary from the preferred region, else from the other one;
  /// nullptr when neither has room.
  uint8_t* Allocate(size_t size, Preference preference);

  /// Bytes of both regions together: what the "does not fit" check compares a model's needs
  /// with before anything is allocated.
  size_t CapacityBytes() const { return ram_.size + psram_.size + scratch_.size; }
  size_t ram_capacity() const { return ram_.size; }
  size_t psram_capacity() const { return psram_.size; }
  size_t ram_used() const { return ram_.used; }
  size_t psram_used() const { return psram_.used; }
  size_t scratch_capacity() const { return scratch_.size; }
  size_t scratch_used() const { return scratch_.used; }
  /// What the bulk pool is on this board ("PSRAM", "bulk SRAM"), for messages.
  static const char* bulk_name();
  /// Whether `p` points into the RAM pool (for the memory map the firmware prints).
  bool InRam(const uint8_t* p) const { return p >= ram_.base && p < ram_.base + ram_.size; }

  /// Takes `size` bytes from the top of PSRAM for good (before any Allocate): the pools shrink by
  /// that much. nullptr when PSRAM has no room.
  uint8_t* Reserve(size_t size);

  /// The allocation state, to return to after a run.
  struct Mark {
    size_t ram_used;
    size_t psram_used;
    size_t scratch_used;
  };
  Mark mark() const { return {ram_.used, psram_.used, scratch_.used}; }
  void Release(const Mark& mark) {
    ram_.used = mark.ram_used;
    psram_.used = mark.psram_used;
    scratch_.used = mark.scratch_used;
  }

  /// Rounds `size` up to the allocation granularity.
  static constexpr size_t Rounded(size_t size) {
    return (size + kAlignment - 1) & ~(kAlignment - 1);
  }

 private:
  struct Region {
    uint8_t* base;
    size_t size;
    size_t used;
    size_t Free() const { return size - used; }
    uint8_t* Take(size_t bytes);
  };
  BoardMemory(uint8_t* ram, size_t ram_size, uint8_t* psram, size_t psram_size, uint8_t* scratch,
              size_t scratch_size)
      : ram_{ram, ram_size, 0}, psram_{psram, psram_size, 0}, scratch_{scratch, scratch_size, 0} {}

  Region ram_;
  Region psram_;
  Region scratch_;
};

}  // namespace boardlab::firmware
