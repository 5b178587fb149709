#pragma once

// Host-side memory for the runtime's pools and the artifact: heap memory at a 64-byte boundary
// (Program::Load needs max_align_t, kernels like 16). Not zero-filled: the pools are sized for
// the largest models, so only the pages the runtime touches cost time and count in the resident
// set (boardlab-run runs once per job; runtime_bench measures peak memory).

#include <cstddef>
#include <cstdint>
#include <memory>

namespace boardlab::run {

class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t size) : storage_(new uint8_t[size + 64]), size_(size) {
    const auto p = reinterpret_cast<uintptr_t>(storage_.get());
    data_ = storage_.get() + ((64 - p % 64) % 64);
  }
  uint8_t* data() { return data_; }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<uint8_t[]> storage_;
  uint8_t* data_;
  size_t size_;
};

}  // namespace boardlab::run
