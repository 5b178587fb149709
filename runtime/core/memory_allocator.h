#pragma once

// A bump allocator over memory the caller owns (STYLE.md rule 6): the runtime never calls malloc.
// The buffer passed to the constructor must outlive the allocator and everything allocated
// from it. Reset() frees everything at once (the temp allocator is reset after each kernel).

#include <cstddef>
#include <cstdint>

namespace boardlab::runtime {

class MemoryAllocator {
 public:
  MemoryAllocator(uint8_t* base, size_t size) : base_(base), size_(size) {}
  virtual ~MemoryAllocator() = default;

  /// Returns `size` bytes aligned to `alignment` (a power of two), or nullptr when full.
  virtual void* Allocate(size_t size, size_t alignment = kDefaultAlignment) {
    const uintptr_t start = reinterpret_cast<uintptr_t>(base_) + used_;
    const uintptr_t aligned = (start + alignment - 1) & ~(uintptr_t{alignment} - 1);
    const size_t padding = aligned - start;
    if (padding > size_ - used_ || size > size_ - used_ - padding) return nullptr;
    used_ += padding + size;
    return reinterpret_cast<void*>(aligned);
  }

  template <typename T>
  T* AllocateArray(size_t count) {
    return static_cast<T*>(Allocate(count * sizeof(T), alignof(T)));
  }

  virtual void Reset() { used_ = 0; }
  size_t used() const { return used_; }
  size_t size() const { return size_; }
  uint8_t* base() const { return base_; }

  static constexpr size_t kDefaultAlignment = 16;

  // On MCU builds nothing is ever deleted through a base pointer; a no-op delete keeps the
  // toolchain from pulling in the heap for the virtual destructor.
  #if defined(BOARDLAB_RUNTIME_BAREMETAL)
  static void operator delete(void*, size_t) {}
#endif

 private:
  uint8_t* base_;
  size_t size_;
  size_t used_ = 0;
};

}  // namespace boardlab::runtime
