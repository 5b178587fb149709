#pragma once

// The reliable part of the board link (docs/board-protocol.md, "Reliability"): numbered
// messages, cumulative acknowledgements, selective repeat (the receiver keeps frames that arrive
// after a lost one and asks for the lost one with a NAK; only lost frames are sent again), an
// adaptive retransmission timeout (RFC 6298) that resends the oldest frame, duplicate
// suppression, and statistics. The same code runs on both ends. It does no I/O of its own and
// never blocks: bytes come in through Receive(), go out through a ByteOutput, and time is passed
// in (milliseconds of any monotonic clock), so a firmware's polling loop, a host thread or an
// event loop can drive it alike. No heap: the caller provides the buffers.
//
// Why selective repeat: between a host and a board's UART, frames queue (USB adapters, ser2net,
// QEMU's emulated UART takes about 80 us per byte), so a window of frames is usually on its way;
// resending the whole window after every loss (go-back-N) queues more than the line clears.
//
//   LinkBuffers buffers{tx, sizeof(tx), rx, sizeof(rx), reorder, sizeof(reorder)};
//   Link link(output, buffers, LinkOptions{});
//   link.StartSession(peer_max_payload, peer_window);
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
  uint32_t duplicates = 0;     // sequenced frames received again: dropped and acknowledged
  uint32_t out_of_order = 0;   // sequenced frames after a gap: kept (a NAK asks for the gap)
  uint32_t beyond_window = 0;  // sequenced frames too far ahead to keep: dropped
  uint32_t held_back = 0;      // new messages not taken while the end was busy (sent again)
  uint32_t stray = 0;          // sequenced frames outside a session: not acknowledged
  DecoderStats decoder;        // resyncs, skipped bytes, header / CRC errors, oversize
};

struct LinkOptions {
  /// Frames in flight before Send waits for acknowledgements (a power of two <= kMaxWindow; the
  /// peer's announced receive window may lower it).
  uint8_t window = 4;
  /// Retransmission timeout before the first round-trip measurement, and its bounds; the timeout
  /// adapts to the measured round trip (RFC 6298) and doubles on each expiry.
  uint32_t initial_timeout_ms = 1000;
  uint32_t min_timeout_ms = 100;
  uint32_t max_timeout_ms = 4000;
  /// Consecutive expiries without progress after which the link is dead.
  uint8_t max_timeouts = 8;
};

enum class SendStatus : uint8_t {
  kOk,
  kWindowFull,  // `window` frames unacknowledged: receive and poll, then try again
  kTooLarge,    // payload above max_send_payload()
  kDead,        // the peer stopped acknowledging (max_timeouts expiries)
};

/// The memory a Link works in (not owned; must outlive it).
struct LinkBuffers {
  /// Retransmission slots: options.window of them, each the largest payload this end sends
  /// (slot = tx_size / window).
  uint8_t* tx = nullptr;
  size_t tx_size = 0;
  /// One incoming frame: kFrameOverhead + the largest payload this end accepts (>=
  /// kMinPayloadLimit).
  uint8_t* rx = nullptr;
  size_t rx_size = 0;
  /// Frames kept while an earlier one is missing, each the largest accepted payload: the number
  /// that fit (rounded down to a power of two, at most kMaxWindow) is this end's receive window,
  /// which it announces (receive_window()).
  uint8_t* reorder = nullptr;
  size_t reorder_size = 0;
};

class Link {
 public:
  static constexpr uint8_t kMaxWindow = 32;

  /// `output` and the buffers must outlive the Link.
  Link(ByteOutput& output, const LinkBuffers& buffers, const LinkOptions& options);

  /// Starts numbering from 0 in both directions and drops unacknowledged frames. Payloads sent
  /// from now on are limited to `peer_max_payload` (what the peer announced it accepts) and to
  /// this end's slot size; frames in flight to `peer_window` (its receive window).
  void StartSession(size_t peer_max_payload, size_t peer_window);
  /// Ends the session: sequenced frames are then delivered as stray (and not acknowledged), so
  /// that a board without a session can tell a host it was reset.
  void EndSession();
  bool in_session() const { return in_session_; }

  /// While not accepting, new messages are neither taken nor acknowledged (the sender sends them
  /// again later); acknowledgements, NAKs, repeats and control frames are still handled. For an
  /// end that is busy (a board running a model) and must not lose what arrives meanwhile.
  void set_accepting(bool accepting) { accepting_ = accepting; }

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

  /// Retransmits when the timer expired; marks the link dead after max_timeouts expiries. Asks
  /// again for a missing frame (NAK, at most once per timeout) while later ones wait for it.
  void Poll(uint32_t now_ms);
  /// Milliseconds until Poll has work (0: now), or UINT32_MAX when nothing is unacknowledged.
  uint32_t MillisecondsToTimer(uint32_t now_ms) const;

  bool dead() const { return dead_; }
  size_t unacknowledged() const { return static_cast<uint16_t>(tx_next_ - tx_base_); }
  bool all_acknowledged() const { return tx_next_ == tx_base_; }
  bool can_send() const { return !dead_ && unacknowledged() < send_window_; }
  size_t max_send_payload() const { return max_send_payload_; }
  size_t max_receive_payload() const { return decoder_.max_payload(); }
  /// Frames in flight this end takes (what it announces): the frames it can keep after a gap,
  /// at least 1.
  size_t receive_window() const { return reorder_slots_ > 0 ? reorder_slots_ : 1; }
  size_t send_window() const { return send_window_; }
  uint32_t timeout_ms() const { return rto_ms_; }
  LinkStats stats() const;

 private:
  struct Slot {
    FrameType type;
    uint16_t size;
    bool retransmitted;
    uint32_t sent_at;
  };
  struct Kept {  // a frame received after a gap
    bool present;
    FrameType type;
    uint16_t seq;
    uint16_t size;
  };

  bool Handle(const DecodedFrame& frame, uint32_t now_ms);  // true: deliver it
  bool DeliverKept();   // the expected frame was kept earlier: deliver it
  bool HasGap() const;  // frames are kept: one before them is missing
  void Keep(const DecodedFrame& frame);
  void OnAck(uint16_t next_expected, uint32_t now_ms);
  void OnNak(uint16_t missing, uint32_t now_ms);
  void SendAck();
  void MaybeSendNak(uint32_t now_ms);
  void Retransmit(uint16_t seq, uint32_t now_ms);
  void AddRttSample(uint32_t rtt_ms);
  // Writes header, payload and CRC as three pieces: no buffer holds the whole frame.
  void WriteFrame(FrameType type, uint16_t seq, const uint8_t* payload, size_t size);
  uint8_t* SlotData(uint16_t seq) { return tx_ + (seq % window_) * slot_bytes_; }
  Slot& SlotOf(uint16_t seq) { return slots_[seq % window_]; }
  uint8_t* KeptData(uint16_t seq) {
    return reorder_ + (seq % reorder_slots_) * decoder_.max_payload();
  }

  ByteOutput& output_;
  uint8_t* tx_;
  size_t slot_bytes_;
  uint8_t window_;       // slots (options.window)
  uint8_t send_window_;  // frames in flight in this session (<= window_, the peer's window)
  LinkOptions options_;
  FrameDecoder decoder_;
  uint8_t* reorder_;
  uint8_t reorder_slots_;
  Slot slots_[kMaxWindow] = {};
  Kept kept_[kMaxWindow] = {};

  bool in_session_ = false;
  bool accepting_ = true;
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

  bool has_incoming_ = false;
  bool incoming_kept_ = false;  // incoming_ comes from the reorder buffer, not the decoder
  Incoming incoming_ = {};
  LinkStats stats_;
};

}  // namespace boardlab::link
