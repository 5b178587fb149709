#pragma once

// The receive ring of a board support: bytes drained from the UART wait here until the link
// reads them (BoardSupport::Read must not lose bytes that arrive while Write runs). No heap.
//
//   ByteRing<4096> ring;
//   if (!ring.Push(byte)) ++overruns;     // full: the byte is lost, the link retransmits
//   size_t n = ring.Pop(data, size);

#include <stddef.h>
#include <stdint.h>

namespace boardlab::firmware {

template <size_t kBytes>
class ByteRing {
 public:
  bool empty() const { return head_ == tail_; }
  /// False (nothing stored) when the ring is full.
  bool Push(uint8_t byte) {
    const size_t next = (tail_ + 1) % kBytes;
    if (next == head_) return false;
    bytes_[tail_] = byte;
    tail_ = next;
    return true;
  }
  /// Up to `size` of the oldest bytes into `data`; returns how many.
  size_t Pop(uint8_t* data, size_t size) {
    size_t n = 0;
    while (n < size && head_ != tail_) {
      data[n++] = bytes_[head_];
      head_ = (head_ + 1) % kBytes;
    }
    return n;
  }

 private:
  uint8_t bytes_[kBytes];
  size_t head_ = 0;  // next byte to read
  size_t tail_ = 0;  // next free slot
};

}  // namespace boardlab::firmware
