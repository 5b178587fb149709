// The reliable link between two ends over an in-memory line, on a simulated millisecond clock:
// in-order exactly-once delivery over a clean and a faulty line, the windows, selective repeat
// (frames after a gap kept, only the missing one sent again), duplicate suppression, a dead
// peer, stray frames, the payload limit and sequence wrap-around.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/link/chunk_sizer.h"
#include "runtime/link/frame.h"
#include "runtime/link/link.h"
#include "tests/runtime/link/link_test_support.h"

namespace boardlab::link {
namespace {

using testing::ByteChannel;
using testing::ChannelOutput;
using testing::Faults;

struct Delivered {
  FrameType type;
  std::vector<uint8_t> payload;
  bool stray;
};

// One end: a Link writing into `out`, reading from `in`.
class End {
 public:
  End(ByteChannel& in, ByteChannel& out, const LinkOptions& options)
      : in_(in),
        output_(out),
        tx_(options.window * 1024),
        rx_(kFrameOverhead + 1024),
        reorder_(options.window * 1024),
        link_(output_,
              LinkBuffers{tx_.data(), tx_.size(), rx_.data(), rx_.size(), reorder_.data(),
                          reorder_.size()},
              options) {}

  void Pump(uint32_t now) {
    uint8_t bytes[300];
    const long n = in_.Read(bytes, sizeof(bytes), 0);
    size_t used = 0;
    do {
      used += link_.Receive(bytes + used, static_cast<size_t>(n > 0 ? n : 0) - used, now);
      while (const Link::Incoming* in = link_.incoming()) {
        delivered_.push_back({in->type, {in->payload, in->payload + in->size}, in->stray});
        link_.Release();
        used += link_.Receive(bytes + used, static_cast<size_t>(n > 0 ? n : 0) - used, now);
      }
    } while (n > 0 && used < static_cast<size_t>(n));
    link_.Poll(now);
  }

  Link& link() { return link_; }
  std::vector<Delivered>& delivered() { return delivered_; }

 private:
  ByteChannel& in_;
  ChannelOutput output_;
  std::vector<uint8_t> tx_, rx_, reorder_;
  Link link_;
  std::vector<Delivered> delivered_;
};

LinkOptions TestOptions() {
  LinkOptions o;
  o.window = 4;
  o.initial_timeout_ms = 50;
  o.min_timeout_ms = 20;
  o.max_timeout_ms = 200;
  o.max_timeouts = 6;
  return o;
}

class LinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_.link().StartSession(1024, b_.link().receive_window());
    b_.link().StartSession(1024, a_.link().receive_window());
  }
  void Step() {
    ++now_;
    a_.Pump(now_);
    b_.Pump(now_);
  }
  // Sends `count` messages from a to b, pumping while the window is full; returns when b has
  // them all or `max_steps` simulated milliseconds passed.
  void SendAll(size_t count, size_t max_steps = 200000) {
    size_t next = 0;
    for (size_t steps = 0; steps < max_steps && b_.delivered().size() < count; ++steps) {
      while (next < count) {
        const std::vector<uint8_t> p = Message(next);
        const SendStatus s = a_.link().Send(FrameType::kBlobChunk, p.data(), p.size(), now_);
        if (s != SendStatus::kOk) break;
        ++next;
      }
      Step();
    }
  }
  static std::vector<uint8_t> Message(size_t i) {
    std::vector<uint8_t> p(i % 700 + 1);
    for (size_t k = 0; k < p.size(); ++k) p[k] = static_cast<uint8_t>(i * 31 + k);
    return p;
  }
  void ExpectAllInOrder(size_t count) {
    ASSERT_EQ(b_.delivered().size(), count);
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(b_.delivered()[i].payload, Message(i)) << "message " << i;
      ASSERT_FALSE(b_.delivered()[i].stray);
    }
  }

  ByteChannel a_to_b_, b_to_a_;
  End a_{b_to_a_, a_to_b_, TestOptions()};
  End b_{a_to_b_, b_to_a_, TestOptions()};
  uint32_t now_ = 1000;
};

TEST_F(LinkTest, CleanLineDeliversEverythingOnceInOrder) {
  SendAll(300);
  ExpectAllInOrder(300);
  Step();  // the last acknowledgements reach a
  Step();
  const LinkStats s = a_.link().stats();
  EXPECT_EQ(s.messages_sent, 300u);
  EXPECT_EQ(s.retransmissions, 0u);
  EXPECT_EQ(s.timeouts, 0u);
  EXPECT_EQ(b_.link().stats().messages_received, 300u);
  EXPECT_EQ(b_.link().stats().decoder.crc_errors, 0u);
  EXPECT_TRUE(a_.link().all_acknowledged());
}

TEST_F(LinkTest, FaultyLineStillDeliversEverythingOnceInOrder) {
  // About a third of the frames (up to 700 bytes) hit.
  a_to_b_.SetFaults({0.0003, 0.0003, 0.0003, 11});
  b_to_a_.SetFaults({0.0003, 0.0003, 0.0003, 12});
  SendAll(400);
  ExpectAllInOrder(400);
  const LinkStats sa = a_.link().stats();
  const LinkStats sb = b_.link().stats();
  EXPECT_GT(a_to_b_.corrupted() + a_to_b_.dropped() + a_to_b_.duplicated(), 0u);
  EXPECT_GT(sa.retransmissions, 0u);
  EXPECT_GT(sb.decoder.crc_errors + sb.decoder.header_errors, 0u);
  EXPECT_GT(sb.duplicates + sb.out_of_order, 0u);
  EXPECT_GT(sb.decoder.resyncs, 0u);
}

TEST_F(LinkTest, WindowLimitsFramesInFlight) {
  const uint8_t p[1] = {1};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(a_.link().Send(FrameType::kLog, p, 1, now_), SendStatus::kOk);
  EXPECT_FALSE(a_.link().can_send());
  EXPECT_EQ(a_.link().Send(FrameType::kLog, p, 1, now_), SendStatus::kWindowFull);
  EXPECT_EQ(a_.link().unacknowledged(), 4u);
  Step();  // b acknowledges
  Step();
  EXPECT_TRUE(a_.link().all_acknowledged());
  EXPECT_EQ(a_.link().Send(FrameType::kLog, p, 1, now_), SendStatus::kOk);
}

TEST_F(LinkTest, PayloadLimitIsThePeersAnnouncement) {
  a_.link().StartSession(512, 4);
  std::vector<uint8_t> p(513);
  EXPECT_EQ(a_.link().Send(FrameType::kLog, p.data(), 513, now_), SendStatus::kTooLarge);
  EXPECT_EQ(a_.link().Send(FrameType::kLog, p.data(), 512, now_), SendStatus::kOk);
  EXPECT_EQ(a_.link().max_send_payload(), 512u);
  a_.link().StartSession(60000, 4);  // never more than a slot
  EXPECT_EQ(a_.link().max_send_payload(), 1024u);
}

TEST_F(LinkTest, SendWindowIsThePeersReceiveWindow) {
  EXPECT_EQ(b_.link().receive_window(), 4u);
  a_.link().StartSession(1024, 2);
  EXPECT_EQ(a_.link().send_window(), 2u);
  const uint8_t p[1] = {1};
  EXPECT_EQ(a_.link().Send(FrameType::kLog, p, 1, now_), SendStatus::kOk);
  EXPECT_EQ(a_.link().Send(FrameType::kLog, p, 1, now_), SendStatus::kOk);
  EXPECT_EQ(a_.link().Send(FrameType::kLog, p, 1, now_), SendStatus::kWindowFull);
  a_.link().StartSession(1024, 3);  // rounded down to a power of two
  EXPECT_EQ(a_.link().send_window(), 2u);
  a_.link().StartSession(1024, 100);  // never more than this end's own window
  EXPECT_EQ(a_.link().send_window(), 4u);
}

TEST_F(LinkTest, SilentPeerMakesTheLinkDeadAfterMaxTimeouts) {
  a_to_b_.SetFaults({0, 1.0, 0, 3});  // everything a sends is lost
  const uint8_t p[1] = {1};
  ASSERT_EQ(a_.link().Send(FrameType::kLog, p, 1, now_), SendStatus::kOk);
  for (int i = 0; i < 5000 && !a_.link().dead(); ++i) Step();
  EXPECT_TRUE(a_.link().dead());
  EXPECT_EQ(a_.link().stats().timeouts, TestOptions().max_timeouts + 1u);
  EXPECT_EQ(a_.link().stats().retransmissions, TestOptions().max_timeouts + 0u);
  EXPECT_EQ(a_.link().Send(FrameType::kLog, p, 1, now_), SendStatus::kDead);
  // Each expiry doubled the timeout up to its maximum.
  EXPECT_EQ(a_.link().timeout_ms(), TestOptions().max_timeout_ms);
}

std::vector<uint8_t> RawFrame(FrameType type, uint16_t seq, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out(kFrameOverhead + payload.size());
  EncodeFrame(type, seq, payload.data(), payload.size(), out.data(), out.size());
  return out;
}

// The frames `channel` holds, decoded.
std::vector<std::pair<FrameType, uint16_t>> FramesIn(ByteChannel& channel) {
  std::vector<uint8_t> buffer(kFrameOverhead + 1024);
  FrameDecoder decoder(buffer.data(), buffer.size());
  std::vector<std::pair<FrameType, uint16_t>> frames;
  uint8_t bytes[256];
  long n;
  while ((n = channel.Read(bytes, sizeof(bytes), 0)) > 0) {
    size_t used = 0;
    while (used < static_cast<size_t>(n)) {
      used += decoder.Feed(bytes + used, static_cast<size_t>(n) - used);
      while (const DecodedFrame* f = decoder.frame()) {
        frames.push_back({f->type, f->seq});
        decoder.Consume();
      }
    }
  }
  return frames;
}

TEST_F(LinkTest, FramesAfterAGapAreKeptAndTheGapIsNakedOnce) {
  // b sees frames 0, 2, 3: it delivers 0, keeps 2 and 3, and asks for 1 once.
  for (uint16_t seq : {0, 2, 3}) {
    a_to_b_.Inject(RawFrame(FrameType::kLog, seq, {static_cast<uint8_t>(seq)}));
  }
  b_.Pump(now_);
  ASSERT_EQ(b_.delivered().size(), 1u);
  EXPECT_EQ(b_.link().stats().out_of_order, 2u);
  EXPECT_EQ(b_.link().stats().naks_sent, 1u);
  const auto answers = FramesIn(b_to_a_);
  EXPECT_EQ(
      std::count(answers.begin(), answers.end(), std::make_pair(FrameType::kNak, uint16_t{1})), 1);
  // Frame 1 arrives: 1, 2 and 3 are delivered in order, one acknowledgement each.
  a_to_b_.Inject(RawFrame(FrameType::kLog, 1, {1}));
  b_.Pump(now_);
  ASSERT_EQ(b_.delivered().size(), 4u);
  for (uint8_t i = 0; i < 4; ++i) EXPECT_EQ(b_.delivered()[i].payload, std::vector<uint8_t>{i});
  const auto acks = FramesIn(b_to_a_);
  ASSERT_FALSE(acks.empty());
  EXPECT_EQ(acks.back(), std::make_pair(FrameType::kAck, uint16_t{4}));
  // A frame kept twice counts as a duplicate and is delivered once.
  EXPECT_EQ(b_.link().stats().messages_received, 4u);
}

TEST_F(LinkTest, GapThatStaysIsNakedAgainAfterATimeout) {
  // The sender's window is full, so nothing new arrives to make b notice again: its timer does.
  for (uint16_t seq : {0, 2})
    a_to_b_.Inject(RawFrame(FrameType::kLog, seq, {static_cast<uint8_t>(seq)}));
  b_.Pump(now_);
  EXPECT_EQ(b_.link().stats().naks_sent, 1u);
  now_ += TestOptions().initial_timeout_ms - 1;
  b_.Pump(now_);
  EXPECT_EQ(b_.link().stats().naks_sent, 1u);
  now_ += 1;
  b_.Pump(now_);
  EXPECT_EQ(b_.link().stats().naks_sent, 2u);
  a_to_b_.Inject(RawFrame(FrameType::kLog, 1, {1}));
  b_.Pump(now_);
  ASSERT_EQ(b_.delivered().size(), 3u);
  now_ += 10 * TestOptions().initial_timeout_ms;
  b_.Pump(now_);
  EXPECT_EQ(b_.link().stats().naks_sent, 2u);  // no gap, no NAK
}

TEST_F(LinkTest, FramesBeyondTheReceiveWindowAreDropped) {
  a_to_b_.Inject(RawFrame(FrameType::kLog, 4, {4}));  // window 4: frames 1-3 may be kept, not 4
  b_.Pump(now_);
  EXPECT_TRUE(b_.delivered().empty());
  EXPECT_EQ(b_.link().stats().beyond_window, 1u);
  EXPECT_EQ(b_.link().stats().naks_sent, 1u);
}

TEST_F(LinkTest, SenderResendsOnlyTheMissingFrame) {
  const uint8_t p[1] = {7};
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(a_.link().Send(FrameType::kLog, p, 1, now_), SendStatus::kOk);
  a_to_b_.Clear();                                   // the frames are lost on the line
  b_to_a_.Inject(RawFrame(FrameType::kNak, 1, {}));  // b got 0 and 2-3, not 1
  a_.Pump(now_);                                     // same millisecond: no timer involved
  EXPECT_EQ(a_.link().stats().naks_received, 1u);
  EXPECT_EQ(a_.link().stats().retransmissions, 1u);
  EXPECT_EQ(a_.link().stats().timeouts, 0u);
  EXPECT_EQ(a_.link().unacknowledged(), 3u);
  const auto resent = FramesIn(a_to_b_);
  ASSERT_EQ(resent.size(), 1u);
  EXPECT_EQ(resent[0], std::make_pair(FrameType::kLog, uint16_t{1}));
  // The same NAK again before the answer can have arrived is not answered twice.
  b_to_a_.Inject(RawFrame(FrameType::kNak, 1, {}));
  a_.Pump(now_);
  EXPECT_EQ(a_.link().stats().retransmissions, 1u);
}

TEST_F(LinkTest, BusyEndHoldsNewMessagesBackUntilTheSenderTriesAgain) {
  b_.link().set_accepting(false);
  a_to_b_.Inject(RawFrame(FrameType::kRun, 0, {1}));
  b_.Pump(now_);
  EXPECT_TRUE(b_.delivered().empty());
  EXPECT_EQ(b_.link().stats().held_back, 1u);
  EXPECT_TRUE(FramesIn(b_to_a_).empty());  // not acknowledged: the sender will try again
  b_.link().set_accepting(true);
  a_to_b_.Inject(RawFrame(FrameType::kRun, 0, {1}));
  b_.Pump(now_);
  ASSERT_EQ(b_.delivered().size(), 1u);
  EXPECT_EQ(b_.link().stats().messages_received, 1u);
}

TEST_F(LinkTest, DuplicateIsDroppedAndAcknowledgedAgain) {
  const std::vector<uint8_t> f = RawFrame(FrameType::kLog, 0, {42});
  a_to_b_.Inject(f);
  a_to_b_.Inject(f);
  b_.Pump(now_);
  ASSERT_EQ(b_.delivered().size(), 1u);
  EXPECT_EQ(b_.link().stats().duplicates, 1u);
  const auto acks = FramesIn(b_to_a_);
  ASSERT_EQ(acks.size(), 2u);
  EXPECT_EQ(acks[0], std::make_pair(FrameType::kAck, uint16_t{1}));
  EXPECT_EQ(acks[1], std::make_pair(FrameType::kAck, uint16_t{1}));
}

TEST_F(LinkTest, FramesOutsideASessionAreStrayAndNotAcknowledged) {
  b_.link().EndSession();
  a_to_b_.Inject(RawFrame(FrameType::kRun, 5, {1, 2}));
  a_to_b_.Inject(RawFrame(FrameType::kConnect, 0, {9}));
  b_.Pump(now_);
  ASSERT_EQ(b_.delivered().size(), 2u);
  EXPECT_TRUE(b_.delivered()[0].stray);
  EXPECT_FALSE(b_.delivered()[1].stray);  // control frames are always for the endpoint
  EXPECT_EQ(b_.delivered()[1].type, FrameType::kConnect);
  EXPECT_EQ(b_.link().stats().stray, 1u);
  EXPECT_TRUE(FramesIn(b_to_a_).empty());
}

TEST_F(LinkTest, SequenceNumbersWrapAround) {
  SendAll(66000, 2000000);
  ASSERT_EQ(b_.delivered().size(), 66000u);
  EXPECT_EQ(b_.delivered()[65999].payload, Message(65999));
  EXPECT_EQ(b_.delivered()[65536].payload, Message(65536));
}

TEST(ChunkSizer, HalvesOnLossesAndGrowsBackWhenClean) {
  ChunkSizer sizer;
  sizer.Start(2048);
  EXPECT_EQ(sizer.Next(0), 2048u);
  EXPECT_EQ(sizer.Next(1), 1024u);  // a retransmission since the last chunk
  EXPECT_EQ(sizer.Next(3), 512u);
  EXPECT_EQ(sizer.Next(4), 256u);
  EXPECT_EQ(sizer.Next(5), ChunkSizer::kMinPayload);  // never below
  for (int i = 1; i < ChunkSizer::kGrowAfter; ++i) EXPECT_EQ(sizer.Next(5), 256u);
  EXPECT_EQ(sizer.Next(5), 512u);  // kGrowAfter clean chunks
  sizer.Start(300);                // a smaller limit
  EXPECT_EQ(sizer.Next(5), 300u);
}

}  // namespace
}  // namespace boardlab::link
