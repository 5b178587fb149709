#pragma once

// The reliable part of the board link (docs/board-protocol.md, "Reliability"): numbered
// messages, cumulative acknowledgements, an adaptive retransmission timeout (RFC 6298) that
// resends the oldest frame, NAKs that make the sender go back to the lost frame at once
// (go-back-N), duplicate suppression, and statistics. The same code runs on both
// ends. It does no I/O of its own and never blocks: bytes come in through Receive(), go out
// through a ByteOutput, and time is passed in (milliseconds of any monotonic clock), so a
// firmware's polling loop, a host thread or an event loop can drive it alike. No heap: the
// caller provides the buffers.
//
//   Link link(output, tx, sizeof(tx), rx, sizeof(rx), LinkOptions{});
//   link.StartSession(peer_max_payload);
//   if (link.Send(FrameType::kLog, payload, size, now) == SendStatus::kWindowFull) ...  // poll
//   size_t used = link.Receive(bytes, count, now);     // stops when a frame is to be delivered
//   if (const Link::Incoming* in = link.incoming()) { ...; link.Release(); }
//   link.Poll(now);                                    // retransmits after a timeout

#include <stddef.h>
#include <stdint.h>

#include "runtime/link/frame.h"

namespace boardlab::link {

/// Where a link writes its frames (a UART, a socket). Write must take all bytes.
class ByteOutput {
 public:
  virtual void Write(const uint8_t* data, size_t size) = 0;

 protected:
  ~ByteOutput() = default;
};

/// Counters since the Link was made (they survive StartSession). The agent exports them as
/// metrics; boardlab-run prints them.
struct LinkStats {
  uint32_t frames_sent = 0;      // every frame written, retransmissions and control included
  uint32_t frames_received = 0;  // every valid frame decoded
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;     // bytes of valid frames
  uint32_t messages_sent = 0;      // sequenced frames, first transmissions only
  uint32_t messages_received = 0;  // sequenced frames delivered (each once)
  uint32_t retransmissions = 0;    // sequenced frames written again (timeout or NAK)
  uint32_t timeouts = 0;           // retransmission timer expiries
  uint32_t naks_sent = 0;
  uint32_t naks_received = 0;
  uint32_t duplicates = 0;    // sequenced frames received again: dropped and acknowledged
  uint32_t out_of_order = 0;  // sequenced frames after a gap: dropped (a NAK asks for the gap)
  uint32_t stray = 0;         // sequenced frames outside a session: not acknowledged
  DecoderStats decoder;       // resyncs, skipped bytes, header / CRC errors, oversize
};

struct LinkOptions {
  /// Frames in flight before Send waits for acknowledgements (<= kMaxWindow).
  uint8_t window = 4;
  /// Retransmission timeout before the first round-trip measurement, and its bounds; the timeout
  /// adapts to the measured round trip (RFC 6298) and doubles on each expiry.
  uint32_t initial_timeout_ms = 1000;
  uint32_t min_timeout_ms = 100;
  uint32_t max_timeout_ms = 4000;
  /// Consecutive expiries without progress after which the link is dead.
  uint8_t max_timeouts = 6;
};

enum class SendStatus : uint8_t {
  kOk,
  kWindowFull,  // `window` frames unacknowledged: receive and poll, then try again
  kTooLarge,    // payload above max_send_payload()
  kDead,        // the peer stopped acknowledging (max_timeouts expiries)
};

class Link {
 public:
  static constexpr uint8_t kMaxWindow = 32;

  /// `tx` holds options.window retransmission slots (each the type byte plus the largest payload
  /// this end sends: slot = tx_size / window); `rx` holds one incoming frame (kFrameOverhead + the
  /// largest payload this end accepts, >= kMinPayloadLimit). Both must outlive the Link, as must
  /// `output`.
  Link(ByteOutput& output, uint8_t* tx, size_t tx_size, uint8_t* rx, size_t rx_size,
       const LinkOptions& options);

  /// Starts numbering from 0 in both directions and drops unacknowledged frames. Payloads sent
  /// from now on are limited to `peer_max_payload` (what the peer announced it accepts), and to
  /// this end's slot size.
  void StartSession(size_t peer_max_payload);
  /// Ends the session: sequenced frames are then delivered as stray (and not acknowledged), so
  /// that a board without a session can tell a host it was reset.
  void EndSession();
  bool in_session() const { return in_session_; }

  /// Sends a numbered message; it is retransmitted until acknowledged.
  SendStatus Send(FrameType type, const uint8_t* payload, size_t size, uint32_t now_ms);
  /// Sends a control frame once (CONNECT, HELLO); the caller repeats it if it needs an answer.
  /// Returns false (nothing sent) when the payload exceeds kMaxPayloadLimit.
  bool SendControl(FrameType type, const uint8_t* payload, size_t size);

  /// A frame for the caller: a control frame other than ACK/NAK, a message in order, or (outside
  /// a session) a stray message. Its payload stays valid until Release().
  struct Incoming {
    FrameType type;
    uint16_t seq;
    const uint8_t* payload;
    size_t size;
    bool stray;
  };
  /// Takes bytes until a frame is to be delivered; returns how many it took (it takes none while
  /// a delivered frame is not released).
  size_t Receive(const uint8_t* data, size_t size, uint32_t now_ms);
  const Incoming* incoming() const { return has_incoming_ ? &incoming_ : nullptr; }
  void Release();

  /// Retransmits when the timer expired; marks the link dead after max_timeouts expiries.
  void Poll(uint32_t now_ms);
  /// Milliseconds until Poll has work (0: now), or UINT32_MAX when nothing is unacknowledged.
  uint32_t MillisecondsToTimer(uint32_t now_ms) const;

  bool dead() const { return dead_; }
  size_t unacknowledged() const { return static_cast<uint16_t>(tx_next_ - tx_base_); }
  bool all_acknowledged() const { return tx_next_ == tx_base_; }
  bool can_send() const { return !dead_ && unacknowledged() < window_; }
  size_t max_send_payload() const { return max_send_payload_; }
  size_t max_receive_payload() const { return decoder_.max_payload(); }
  uint32_t timeout_ms() const { return rto_ms_; }
  LinkStats stats() const;

 private:
  struct Slot {
    FrameType type;
    uint16_t size;
    bool retransmitted;
    uint32_t sent_at;
  };

  bool Handle(const DecodedFrame& frame, uint32_t now_ms);  // true: deliver it
  void OnAck(uint16_t next_expected, uint32_t now_ms);
  void OnNak(uint16_t from, bool after_accept, uint32_t now_ms);
  void SendAck();
  void MaybeSendNak(uint32_t now_ms);
  void SendNakAfterAccept();
  void Retransmit(uint16_t seq, uint32_t now_ms);
  void RetransmitAll(uint32_t now_ms);     // go-back-N, for a NAK
  void RetransmitOldest(uint32_t now_ms);  // for a timeout
  void AddRttSample(uint32_t rtt_ms);
  // Writes header, payload and CRC as three pieces: no buffer holds the whole frame.
  void WriteFrame(FrameType type, uint16_t seq, const uint8_t* payload, size_t size);
  uint8_t* SlotData(uint16_t seq) { return tx_ + (seq % window_) * slot_bytes_; }
  Slot& SlotOf(uint16_t seq) { return slots_[seq % window_]; }

  ByteOutput& output_;
  uint8_t* tx_;
  size_t slot_bytes_;
  uint8_t window_;
  LinkOptions options_;
  FrameDecoder decoder_;
  Slot slots_[kMaxWindow] = {};

  bool in_session_ = false;
  bool dead_ = false;
  size_t max_send_payload_ = kMinPayloadLimit;
  uint16_t tx_base_ = 0;  // oldest unacknowledged sequence number
  uint16_t tx_next_ = 0;  // next sequence number to send
  uint16_t rx_expected_ = 0;
  uint32_t timer_start_ms_ = 0;
  uint8_t consecutive_timeouts_ = 0;
  uint32_t srtt_ms_ = 0;  // 0: no measurement yet
  uint32_t rttvar_ms_ = 0;
  uint32_t rto_ms_;
  uint16_t last_nak_seq_ = 0;  // receiver: the NAK last sent, and when
  uint32_t last_nak_ms_ = 0;
  bool nak_sent_ = false;
  uint16_t last_nak_retransmit_seq_ = 0;  // sender: the NAK last answered, and when
  uint32_t last_nak_retransmit_ms_ = 0;
  bool nak_answered_ = false;
  bool dropped_after_gap_ = false;  // receiver: frames after a gap were dropped since the last take
  uint32_t last_acked_sent_at_ = 0;  // sender: when the newest acknowledged frame was last sent

  bool has_incoming_ = false;
  Incoming incoming_ = {};
  LinkStats stats_;
};

}  // namespace boardlab::link
