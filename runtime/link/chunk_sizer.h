#pragma once

// How much payload each BLOB_CHUNK carries, for both ends of the board link. Frames shrink while
// frames are lost and grow back once they stop: a damaged line loses a long frame more often
// than a short one (at one bad byte in 3,000, half of all 2 KiB frames), and every lost frame
// costs a round trip or a timeout. Halved after any retransmission since the last chunk,
// doubled after kGrowAfter clean chunks, between kMinPayload and the limit.
//
//   ChunkSizer sizer;
//   sizer.Start(link.max_send_payload());
//   size_t payload = sizer.Next(link.stats().retransmissions);   // before each chunk

#include <stddef.h>
#include <stdint.h>

namespace boardlab::link {

class ChunkSizer {
 public:
  static constexpr size_t kMinPayload = 256;
  static constexpr int kGrowAfter = 8;

  /// A new limit (the link's payload limit): sizes stay at most `limit` from now on.
  void Start(size_t limit) {
    limit_ = limit;
    if (payload_ == 0 || payload_ > limit) payload_ = limit;
  }
  /// The payload of the next chunk, given the link's retransmission count so far.
  size_t Next(uint32_t retransmissions) {
    if (retransmissions != retransmissions_seen_) {
      retransmissions_seen_ = retransmissions;
      payload_ = payload_ / 2 > kMinPayload ? payload_ / 2 : kMinPayload;
      clean_ = 0;
    } else if (++clean_ >= kGrowAfter) {
      payload_ = payload_ * 2 < limit_ ? payload_ * 2 : limit_;
      clean_ = 0;
    }
    if (payload_ > limit_) payload_ = limit_;
    return payload_;
  }
  size_t payload() const { return payload_; }

 private:
  size_t limit_ = 0;
  size_t payload_ = 0;
  uint32_t retransmissions_seen_ = 0;
  int clean_ = 0;
};

}  // namespace boardlab::link
