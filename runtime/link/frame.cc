#include "runtime/link/frame.h"

#include <string.h>

#include "runtime/link/crc.h"

namespace boardlab::link {
namespace {

uint32_t LoadLittleEndian32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

}  // namespace

const char* FrameTypeName(FrameType type) {
  switch (type) {
    case FrameType::kConnect:
      return "CONNECT";
    case FrameType::kHello:
      return "HELLO";
    case FrameType::kAck:
      return "ACK";
    case FrameType::kNak:
      return "NAK";
    case FrameType::kBlobBegin:
      return "BLOB_BEGIN";
    case FrameType::kBlobChunk:
      return "BLOB_CHUNK";
    case FrameType::kBlobEnd:
      return "BLOB_END";
    case FrameType::kRun:
      return "RUN";
    case FrameType::kReset:
      return "RESET";
    case FrameType::kModelSlot:
      return "MODEL_SLOT";
    case FrameType::kLog:
      return "LOG";
    case FrameType::kBlobStatus:
      return "BLOB_STATUS";
    case FrameType::kResult:
      return "RESULT";
    case FrameType::kFault:
      return "FAULT";
    case FrameType::kCheck:
      return "CHECK";
  }
  return "UNKNOWN";
}

size_t EncodeFrame(FrameType type, uint16_t seq, const uint8_t* payload, size_t payload_size,
                   uint8_t* out, size_t out_size) {
  if (payload_size > kMaxPayloadLimit || out_size < kFrameOverhead + payload_size) return 0;
  out[0] = kMagic0;
  out[1] = kMagic1;
  out[2] = static_cast<uint8_t>(type);
  out[3] = static_cast<uint8_t>(seq);
  out[4] = static_cast<uint8_t>(seq >> 8);
  out[5] = static_cast<uint8_t>(payload_size);
  out[6] = static_cast<uint8_t>(payload_size >> 8);
  out[7] = Crc8(out, 7);
  if (payload_size > 0) memcpy(out + kHeaderBytes, payload, payload_size);
  const uint32_t crc = Crc32(out, kHeaderBytes + payload_size);
  uint8_t* tail = out + kHeaderBytes + payload_size;
  for (int i = 0; i < 4; ++i) tail[i] = static_cast<uint8_t>(crc >> (8 * i));
  return kFrameOverhead + payload_size;
}

FrameDecoder::FrameDecoder(uint8_t* buffer, size_t size) : buffer_(buffer), size_(size) {}

void FrameDecoder::Clear() {
  used_ = 0;
  ready_ = false;
}

void FrameDecoder::Skip(size_t n) {
  if (in_sync_) {
    ++stats_.resyncs;
    in_sync_ = false;
  }
  stats_.skipped_bytes += static_cast<uint32_t>(n);
  memmove(buffer_, buffer_ + n, used_ - n);
  used_ -= n;
}

size_t FrameDecoder::Parse() {
  for (;;) {
    if (used_ == 0) return kHeaderBytes;
    if (buffer_[0] != kMagic0) {
      size_t garbage = 1;
      while (garbage < used_ && buffer_[garbage] != kMagic0) ++garbage;
      Skip(garbage);
      continue;
    }
    if (used_ >= 2 && buffer_[1] != kMagic1) {
      Skip(1);
      continue;
    }
    if (used_ < kHeaderBytes) return kHeaderBytes - used_;
    if (Crc8(buffer_, kHeaderBytes - 1) != buffer_[kHeaderBytes - 1]) {
      ++stats_.header_errors;
      Skip(1);
      continue;
    }
    const size_t length = buffer_[5] | (size_t{buffer_[6]} << 8);
    if (length > max_payload()) {
      ++stats_.oversize;
      Skip(1);
      continue;
    }
    const size_t total = kFrameOverhead + length;
    if (used_ < total) return total - used_;
    if (Crc32(buffer_, kHeaderBytes + length) !=
        LoadLittleEndian32(buffer_ + kHeaderBytes + length)) {
      ++stats_.crc_errors;
      Skip(1);
      continue;
    }
    frame_.type = static_cast<FrameType>(buffer_[2]);
    frame_.seq = static_cast<uint16_t>(buffer_[3] | (buffer_[4] << 8));
    frame_.payload = buffer_ + kHeaderBytes;
    frame_.size = length;
    ready_ = true;
    in_sync_ = true;
    ++stats_.frames;
    return 0;
  }
}

size_t FrameDecoder::Feed(const uint8_t* data, size_t size) {
  size_t taken = 0;
  while (!ready_ && taken < size) {
    const size_t need = Parse();
    if (ready_) break;
    if (used_ == 0) {
      // Hunting for a frame start: garbage is counted, not copied.
      size_t garbage = 0;
      while (taken + garbage < size && data[taken + garbage] != kMagic0) ++garbage;
      if (garbage > 0) {
        if (in_sync_) {
          ++stats_.resyncs;
          in_sync_ = false;
        }
        stats_.skipped_bytes += static_cast<uint32_t>(garbage);
        taken += garbage;
        if (taken == size) break;
      }
    }
    const size_t n = need < size - taken ? need : size - taken;
    memcpy(buffer_ + used_, data + taken, n);
    used_ += n;
    taken += n;
  }
  if (!ready_) Parse();
  return taken;
}

void FrameDecoder::Consume() {
  if (!ready_) return;
  const size_t total = kFrameOverhead + frame_.size;
  memmove(buffer_, buffer_ + total, used_ - total);
  used_ -= total;
  ready_ = false;
  Parse();  // the bytes after it may hold the next frame already
}

}  // namespace boardlab::link
