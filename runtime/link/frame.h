#pragma once

// Frames of the board link (docs/board-protocol.md, "Frames"): how messages are cut out of a byte
// stream that may lose, corrupt, duplicate or add bytes (a UART, USB CDC, a TCP socket to ser2net
// or QEMU).
//
//   offset  size  field
//   0       2     magic 0xBA 0x1B
//   2       1     type (FrameType)
//   3       2     sequence number (sequenced types; 0 for control frames)
//   5       2     payload length N
//   7       1     CRC-8 of bytes 0..6 (a corrupted length is rejected at once)
//   8       N     payload
//   8+N     4     CRC-32 of bytes 0..8+N-1
//
// All numbers little-endian. The encoder writes a frame into a caller's buffer; the decoder finds
// frames in a stream of bytes, skipping whatever is not a valid frame (resynchronisation).
//
//   uint8_t frame[kFrameOverhead + 4];
//   size_t n = EncodeFrame(FrameType::kAck, 0, payload, 2, frame, sizeof(frame));
//
//   FrameDecoder decoder(buffer, sizeof(buffer));     // buffer: the largest frame it accepts
//   size_t used = decoder.Feed(bytes, count);         // stops after a complete frame
//   if (const DecodedFrame* f = decoder.frame()) { ...; decoder.Consume(); }

#include <stddef.h>
#include <stdint.h>

namespace boardlab::link {

inline constexpr uint8_t kMagic0 = 0xBA;
inline constexpr uint8_t kMagic1 = 0x1B;
inline constexpr size_t kHeaderBytes = 8;
inline constexpr size_t kFrameOverhead = kHeaderBytes + 4;
/// Every end must accept payloads of this size before it has heard the other end's limit.
inline constexpr size_t kMinPayloadLimit = 512;
/// No end may announce more (the length field could carry 65535; this bounds buffers).
inline constexpr size_t kMaxPayloadLimit = 16384;

/// Frame types below 0x10 are control frames: not numbered, not acknowledged, may be lost.
/// Types from 0x10 are messages: numbered, acknowledged, retransmitted, delivered once and in
/// order. Their payloads are defined in runtime/link/messages.h.
enum class FrameType : uint8_t {
  kConnect = 0x01,  // host -> board: start a session
  kHello = 0x02,    // board -> host: answer to CONNECT, or unsolicited after a reset
  kAck = 0x03,      // next sequence number expected (cumulative)
  kNak = 0x04,      // this sequence number is missing (frames after it arrived): send it again
  // Host -> board messages.
  kBlobBegin = 0x10,
  kBlobChunk = 0x11,
  kBlobEnd = 0x12,
  kRun = 0x13,
  kReset = 0x14,
  kModelSlot = 0x15,  // protocol 3: the artifact in the board's model slot
  // Board -> host messages (BLOB_BEGIN / CHUNK / END also flow this way: outputs, ETDump).
  kLog = 0x20,
  kBlobStatus = 0x21,
  kResult = 0x22,
  kFault = 0x23,
  kCheck = 0x24,  // protocol 2: one output's check, before RESULT
};

constexpr bool IsSequenced(FrameType type) { return static_cast<uint8_t>(type) >= 0x10; }
const char* FrameTypeName(FrameType type);

/// Writes one frame into `out` (capacity `out_size`). Returns its size, or 0 when it does not
/// fit or `payload_size` exceeds kMaxPayloadLimit.
size_t EncodeFrame(FrameType type, uint16_t seq, const uint8_t* payload, size_t payload_size,
                   uint8_t* out, size_t out_size);

struct DecodedFrame {
  FrameType type;
  uint16_t seq;
  const uint8_t* payload;  // inside the decoder's buffer; valid until Consume()
  size_t size;
};

/// What the decoder threw away, for the link statistics.
struct DecoderStats {
  uint32_t frames = 0;         // valid frames found
  uint32_t resyncs = 0;        // times sync was lost: bytes skipped to find the next frame start
  uint32_t skipped_bytes = 0;  // bytes that belonged to no valid frame
  uint32_t header_errors = 0;  // headers whose CRC-8 failed
  uint32_t crc_errors = 0;     // frames whose CRC-32 failed
  uint32_t oversize = 0;       // headers announcing more payload than the buffer holds
};

class FrameDecoder {
 public:
  /// `buffer` (not owned, must outlive the decoder) holds one frame being assembled: frames
  /// with a payload larger than size - kFrameOverhead are rejected as oversize.
  FrameDecoder(uint8_t* buffer, size_t size);

  /// Takes bytes until a frame is complete (then frame() is set and nothing more is taken until
  /// Consume()). Returns the number of bytes taken.
  size_t Feed(const uint8_t* data, size_t size);
  /// The complete frame, or null.
  const DecodedFrame* frame() const { return ready_ ? &frame_ : nullptr; }
  /// Drops the complete frame; the bytes after it stay buffered.
  void Consume();
  /// Forgets everything buffered (e.g. the peer was reset).
  void Clear();

  size_t max_payload() const { return size_ - kFrameOverhead; }
  const DecoderStats& stats() const { return stats_; }

 private:
  // Examines the buffered bytes: drops what cannot start a frame and sets ready_ when a valid
  // frame is complete. Returns how many more bytes it needs before it can decide more.
  size_t Parse();
  // Drops `n` leading bytes (the failed candidate's first byte, or garbage) and counts them.
  void Skip(size_t n);

  uint8_t* buffer_;
  size_t size_;
  size_t used_ = 0;
  bool ready_ = false;
  bool in_sync_ = true;  // false while skipping: a run of skipped bytes counts as one resync
  DecodedFrame frame_ = {};
  DecoderStats stats_;
};

}  // namespace boardlab::link
