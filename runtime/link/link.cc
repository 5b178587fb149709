#include "runtime/link/link.h"

#include <string.h>

#include "runtime/link/crc.h"

namespace boardlab::link {
namespace {

// Sequence numbers wrap at 2^16; a difference is read as signed, which is right as long as fewer
// than 2^15 frames are in flight (the window is at most 32).
int16_t SeqDiff(uint16_t a, uint16_t b) {
  return static_cast<int16_t>(static_cast<uint16_t>(a - b));
}

uint32_t Elapsed(uint32_t now, uint32_t since) { return now - since; }  // wraps correctly

// Slots are indexed by sequence number modulo their count, which stays unambiguous across the
// 2^16 wrap only for a power of two.
uint8_t PowerOfTwoAtMost(size_t n) {
  uint8_t p = 1;
  while (p * 2u <= n && p * 2u <= Link::kMaxWindow) p = static_cast<uint8_t>(p * 2);
  return p;
}

}  // namespace

Link::Link(ByteOutput& output, const LinkBuffers& buffers, const LinkOptions& options)
    : output_(output),
      tx_(buffers.tx),
      window_(PowerOfTwoAtMost(options.window == 0 ? 1 : options.window)),
      send_window_(window_),
      options_(options),
      decoder_(buffers.rx, buffers.rx_size),
      reorder_(buffers.reorder),
      reorder_slots_(PowerOfTwoAtMost(
          decoder_.max_payload() == 0 ? 0 : buffers.reorder_size / decoder_.max_payload())),
      rto_ms_(options.initial_timeout_ms) {
  slot_bytes_ = buffers.tx_size / window_;
  if (slot_bytes_ > kMaxPayloadLimit) slot_bytes_ = kMaxPayloadLimit;
  if (reorder_ == nullptr || buffers.reorder_size < decoder_.max_payload()) reorder_slots_ = 0;
}

void Link::StartSession(size_t peer_max_payload, size_t peer_window) {
  in_session_ = true;
  dead_ = false;
  tx_base_ = tx_next_ = rx_expected_ = 0;
  consecutive_timeouts_ = 0;
  nak_sent_ = false;
  for (Kept& k : kept_) k.present = false;
  max_send_payload_ = peer_max_payload < slot_bytes_ ? peer_max_payload : slot_bytes_;
  if (max_send_payload_ > kMaxPayloadLimit) max_send_payload_ = kMaxPayloadLimit;
  const uint8_t peer = PowerOfTwoAtMost(peer_window == 0 ? 1 : peer_window);
  send_window_ = peer < window_ ? peer : window_;
}

void Link::EndSession() {
  in_session_ = false;
  tx_base_ = tx_next_;  // nothing left to retransmit
  for (Kept& k : kept_) k.present = false;
}

void Link::WriteFrame(FrameType type, uint16_t seq, const uint8_t* payload, size_t size) {
  uint8_t header[kHeaderBytes] = {kMagic0,
                                  kMagic1,
                                  static_cast<uint8_t>(type),
                                  static_cast<uint8_t>(seq),
                                  static_cast<uint8_t>(seq >> 8),
                                  static_cast<uint8_t>(size),
                                  static_cast<uint8_t>(size >> 8),
                                  0};
  header[kHeaderBytes - 1] = Crc8(header, kHeaderBytes - 1);
  const uint32_t crc = Crc32(payload, size, Crc32(header, kHeaderBytes));
  const uint8_t tail[4] = {static_cast<uint8_t>(crc), static_cast<uint8_t>(crc >> 8),
                           static_cast<uint8_t>(crc >> 16), static_cast<uint8_t>(crc >> 24)};
  output_.Write(header, kHeaderBytes);
  if (size > 0) output_.Write(payload, size);
  output_.Write(tail, 4);
  ++stats_.frames_sent;
  stats_.bytes_sent += kFrameOverhead + size;
}

bool Link::SendControl(FrameType type, const uint8_t* payload, size_t size) {
  if (size > kMaxPayloadLimit) return false;
  WriteFrame(type, 0, payload, size);
  return true;
}

SendStatus Link::Send(FrameType type, const uint8_t* payload, size_t size, uint32_t now_ms) {
  if (dead_) return SendStatus::kDead;
  if (size > max_send_payload_) return SendStatus::kTooLarge;
  if (unacknowledged() >= send_window_) return SendStatus::kWindowFull;
  const uint16_t seq = tx_next_++;
  if (size > 0) memcpy(SlotData(seq), payload, size);
  SlotOf(seq) = Slot{type, static_cast<uint16_t>(size), false, now_ms};
  if (unacknowledged() == 1) timer_start_ms_ = now_ms;
  ++stats_.messages_sent;
  WriteFrame(type, seq, SlotData(seq), size);
  return SendStatus::kOk;
}

void Link::Retransmit(uint16_t seq, uint32_t now_ms) {
  Slot& slot = SlotOf(seq);
  slot.retransmitted = true;
  slot.sent_at = now_ms;
  ++stats_.retransmissions;
  WriteFrame(slot.type, seq, SlotData(seq), slot.size);
  timer_start_ms_ = now_ms;
}

void Link::AddRttSample(uint32_t rtt_ms) {
  // RFC 6298 section 2, in whole milliseconds.
  if (srtt_ms_ == 0) {
    srtt_ms_ = rtt_ms == 0 ? 1 : rtt_ms;
    rttvar_ms_ = rtt_ms / 2;
  } else {
    const uint32_t deviation = srtt_ms_ > rtt_ms ? srtt_ms_ - rtt_ms : rtt_ms - srtt_ms_;
    rttvar_ms_ = (3 * rttvar_ms_ + deviation) / 4;
    srtt_ms_ = (7 * srtt_ms_ + rtt_ms) / 8;
  }
  uint32_t rto = srtt_ms_ + (4 * rttvar_ms_ > 1 ? 4 * rttvar_ms_ : 1);
  if (rto < options_.min_timeout_ms) rto = options_.min_timeout_ms;
  if (rto > options_.max_timeout_ms) rto = options_.max_timeout_ms;
  rto_ms_ = rto;
}

void Link::OnAck(uint16_t next_expected, uint32_t now_ms) {
  const int16_t advance = SeqDiff(next_expected, tx_base_);
  if (advance <= 0 || static_cast<size_t>(advance) > unacknowledged()) return;  // old or bogus
  // Karn's rule: only frames sent once give a round-trip sample; the newest one acknowledged.
  const Slot& newest = SlotOf(static_cast<uint16_t>(next_expected - 1));
  const bool sample = !newest.retransmitted;
  const uint32_t rtt = Elapsed(now_ms, newest.sent_at);
  tx_base_ = next_expected;
  consecutive_timeouts_ = 0;
  if (sample) {
    AddRttSample(rtt);
  } else if (rto_ms_ > options_.max_timeout_ms) {
    rto_ms_ = options_.max_timeout_ms;
  }
  timer_start_ms_ = now_ms;
}

void Link::OnNak(uint16_t missing, uint32_t now_ms) {
  ++stats_.naks_received;
  OnAck(missing, now_ms);  // everything before the missing frame arrived
  if (missing != tx_base_ || all_acknowledged()) return;
  // The receiver keeps the frames after the gap: only the missing one goes again. A NAK that
  // comes while its earlier answer is still on its way is not answered twice.
  const Slot& slot = SlotOf(missing);
  const uint32_t quiet = srtt_ms_ > 0 ? srtt_ms_ : rto_ms_ / 2;
  if (slot.retransmitted && Elapsed(now_ms, slot.sent_at) < quiet) return;
  Retransmit(missing, now_ms);
}

void Link::SendAck() { WriteFrame(FrameType::kAck, rx_expected_, nullptr, 0); }

void Link::MaybeSendNak(uint32_t now_ms) {
  if (nak_sent_ && last_nak_seq_ == rx_expected_ && Elapsed(now_ms, last_nak_ms_) < rto_ms_) {
    return;
  }
  nak_sent_ = true;
  last_nak_seq_ = rx_expected_;
  last_nak_ms_ = now_ms;
  ++stats_.naks_sent;
  WriteFrame(FrameType::kNak, rx_expected_, nullptr, 0);
}

void Link::Keep(const DecodedFrame& frame) {
  Kept& k = kept_[frame.seq % reorder_slots_];
  if (k.present && k.seq == frame.seq) {
    ++stats_.duplicates;  // kept already
    return;
  }
  k = Kept{true, frame.type, frame.seq, static_cast<uint16_t>(frame.size)};
  if (frame.size > 0) memcpy(KeptData(frame.seq), frame.payload, frame.size);
  ++stats_.out_of_order;
}

bool Link::DeliverKept() {
  if (!in_session_ || !accepting_ || reorder_slots_ == 0) return false;
  const Kept& k = kept_[rx_expected_ % reorder_slots_];
  if (!k.present || k.seq != rx_expected_) return false;
  incoming_ = Incoming{k.type, k.seq, KeptData(k.seq), k.size, false};
  incoming_kept_ = true;
  ++rx_expected_;
  ++stats_.messages_received;
  SendAck();
  return true;
}

bool Link::Handle(const DecodedFrame& frame, uint32_t now_ms) {
  ++stats_.frames_received;
  stats_.bytes_received += kFrameOverhead + frame.size;
  if (frame.type == FrameType::kAck) {
    if (in_session_) OnAck(frame.seq, now_ms);
    return false;
  }
  if (frame.type == FrameType::kNak) {
    if (in_session_) OnNak(frame.seq, now_ms);
    return false;
  }
  incoming_ = Incoming{frame.type, frame.seq, frame.payload, frame.size, false};
  incoming_kept_ = false;
  if (!IsSequenced(frame.type)) return true;
  if (!in_session_) {
    ++stats_.stray;
    incoming_.stray = true;
    return true;
  }
  const int16_t ahead = SeqDiff(frame.seq, rx_expected_);
  if (ahead >= 0 && !accepting_) {
    ++stats_.held_back;
    return false;
  }
  if (ahead == 0) {
    ++rx_expected_;
    ++stats_.messages_received;
    SendAck();
    return true;
  }
  if (ahead < 0) {
    ++stats_.duplicates;
    SendAck();  // the first acknowledgement may have been lost
    return false;
  }
  if (ahead < reorder_slots_) {
    Keep(frame);
  } else {
    ++stats_.beyond_window;
  }
  MaybeSendNak(now_ms);
  return false;
}

size_t Link::Receive(const uint8_t* data, size_t size, uint32_t now_ms) {
  size_t taken = 0;
  while (!has_incoming_) {
    if (DeliverKept()) {
      has_incoming_ = true;
      break;
    }
    if (decoder_.frame() == nullptr) {
      if (taken == size) break;
      taken += decoder_.Feed(data + taken, size - taken);
      if (decoder_.frame() == nullptr) break;
    }
    if (Handle(*decoder_.frame(), now_ms)) {
      has_incoming_ = true;
    } else {
      decoder_.Consume();
    }
  }
  return taken;
}

void Link::Release() {
  if (!has_incoming_) return;
  has_incoming_ = false;
  if (incoming_kept_) {
    kept_[incoming_.seq % reorder_slots_].present = false;
    incoming_kept_ = false;
  } else {
    decoder_.Consume();
  }
}

bool Link::HasGap() const {
  for (uint8_t i = 0; i < reorder_slots_; ++i) {
    if (kept_[i].present) return true;
  }
  return false;
}

void Link::Poll(uint32_t now_ms) {
  // Frames kept after a gap mean the missing one (or its resend) was lost: when the sender's
  // window is full it sends nothing that would make this end NAK again, so ask again on a timer
  // rather than leave the repair to the sender's backed-off timeout.
  if (in_session_ && nak_sent_ && HasGap()) MaybeSendNak(now_ms);
  if (dead_ || all_acknowledged() || Elapsed(now_ms, timer_start_ms_) < rto_ms_) return;
  ++stats_.timeouts;
  if (++consecutive_timeouts_ > options_.max_timeouts) {
    dead_ = true;
    return;
  }
  rto_ms_ = rto_ms_ * 2 > options_.max_timeout_ms ? options_.max_timeout_ms : rto_ms_ * 2;
  // Only the oldest frame: on a slow link the timer may have run out while the window was still
  // queued on its way, and the receiver keeps whatever follows a lost frame.
  Retransmit(tx_base_, now_ms);
}

uint32_t Link::MillisecondsToTimer(uint32_t now_ms) const {
  if (dead_ || all_acknowledged()) return UINT32_MAX;
  const uint32_t elapsed = Elapsed(now_ms, timer_start_ms_);
  return elapsed >= rto_ms_ ? 0 : rto_ms_ - elapsed;
}

LinkStats Link::stats() const {
  LinkStats s = stats_;
  s.decoder = decoder_.stats();
  return s;
}

}  // namespace boardlab::link
