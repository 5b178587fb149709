// Frames: encoding, and finding frames again in a byte stream with garbage, cut or corrupted
// frames in it (resynchronisation).

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "runtime/link/frame.h"

namespace boardlab::link {
namespace {

struct Found {
  FrameType type;
  uint16_t seq;
  std::vector<uint8_t> payload;
  bool operator==(const Found& o) const {
    return type == o.type && seq == o.seq && payload == o.payload;
  }
};

std::vector<uint8_t> Frame(FrameType type, uint16_t seq, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out(kFrameOverhead + payload.size());
  EXPECT_EQ(EncodeFrame(type, seq, payload.data(), payload.size(), out.data(), out.size()),
            out.size());
  return out;
}

std::vector<uint8_t> Payload(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<uint8_t> p(size);
  for (uint8_t& b : p) b = static_cast<uint8_t>(random());
  return p;
}

// Feeds `stream` in pieces of `piece` bytes and collects the frames.
std::vector<Found> Decode(FrameDecoder& decoder, const std::vector<uint8_t>& stream, size_t piece) {
  std::vector<Found> found;
  for (size_t at = 0; at < stream.size();) {
    const size_t n = std::min(piece, stream.size() - at);
    size_t used = 0;
    do {
      used += decoder.Feed(stream.data() + at + used, n - used);
      while (const DecodedFrame* f = decoder.frame()) {
        found.push_back({f->type, f->seq, {f->payload, f->payload + f->size}});
        decoder.Consume();
      }
    } while (used < n);
    at += n;
  }
  return found;
}

class FrameTest : public ::testing::Test {
 protected:
  std::vector<uint8_t> buffer_ = std::vector<uint8_t>(kFrameOverhead + 1024);
  FrameDecoder decoder_{buffer_.data(), buffer_.size()};
};

TEST_F(FrameTest, EveryTypeAndSizeRoundTripsInAnyPieces) {
  const FrameType types[] = {FrameType::kConnect, FrameType::kHello,      FrameType::kAck,
                             FrameType::kNak,     FrameType::kBlobBegin,  FrameType::kBlobChunk,
                             FrameType::kBlobEnd, FrameType::kRun,        FrameType::kReset,
                             FrameType::kLog,     FrameType::kBlobStatus, FrameType::kResult,
                             FrameType::kFault};
  std::vector<uint8_t> stream;
  std::vector<Found> expected;
  uint16_t seq = 65530;  // numbers wrap
  for (FrameType type : types) {
    for (size_t size : {0u, 1u, 100u, 1024u}) {
      const std::vector<uint8_t> p = Payload(size, static_cast<uint32_t>(size) + seq);
      const std::vector<uint8_t> f = Frame(type, seq, p);
      stream.insert(stream.end(), f.begin(), f.end());
      expected.push_back({type, seq, p});
      ++seq;
    }
  }
  for (size_t piece : {1u, 3u, 13u, 4096u, 1u << 20}) {
    FrameDecoder decoder(buffer_.data(), buffer_.size());
    EXPECT_EQ(Decode(decoder, stream, piece), expected) << "pieces of " << piece;
    EXPECT_EQ(decoder.stats().frames, expected.size());
    EXPECT_EQ(decoder.stats().resyncs, 0u);
  }
  EXPECT_STREQ(FrameTypeName(FrameType::kResult), "RESULT");
}

TEST_F(FrameTest, EncoderRefusesWhatDoesNotFit) {
  std::vector<uint8_t> out(kFrameOverhead + 10);
  const std::vector<uint8_t> p(11);
  EXPECT_EQ(EncodeFrame(FrameType::kLog, 0, p.data(), p.size(), out.data(), out.size()), 0u);
  std::vector<uint8_t> huge(kMaxPayloadLimit + 1), big_out(huge.size() + kFrameOverhead);
  EXPECT_EQ(
      EncodeFrame(FrameType::kLog, 0, huge.data(), huge.size(), big_out.data(), big_out.size()),
      0u);
}

TEST_F(FrameTest, GarbageBeforeAndBetweenFramesIsSkippedAndCounted) {
  const std::vector<uint8_t> a = Frame(FrameType::kLog, 1, Payload(50, 1));
  const std::vector<uint8_t> b = Frame(FrameType::kResult, 2, Payload(60, 2));
  std::vector<uint8_t> stream = {'b', 'o', 'o', 't', '\n', kMagic0, 0x00, kMagic0};  // false starts
  stream.insert(stream.end(), a.begin(), a.end());
  const std::vector<uint8_t> noise = Payload(37, 3);
  stream.insert(stream.end(), noise.begin(), noise.end());
  stream.insert(stream.end(), b.begin(), b.end());
  const std::vector<Found> found = Decode(decoder_, stream, 5);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].seq, 1);
  EXPECT_EQ(found[1].seq, 2);
  EXPECT_EQ(decoder_.stats().resyncs, 2u);
  EXPECT_EQ(decoder_.stats().skipped_bytes, 8u + noise.size());
}

TEST_F(FrameTest, CorruptedPayloadIsDroppedAndTheNextFrameFound) {
  std::vector<uint8_t> a = Frame(FrameType::kBlobChunk, 1, Payload(300, 1));
  const std::vector<uint8_t> b = Frame(FrameType::kBlobChunk, 2, Payload(300, 2));
  a[100] ^= 0x10;
  std::vector<uint8_t> stream = a;
  stream.insert(stream.end(), b.begin(), b.end());
  const std::vector<Found> found = Decode(decoder_, stream, 64);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].seq, 2);
  EXPECT_EQ(decoder_.stats().crc_errors, 1u);
}

TEST_F(FrameTest, CorruptedLengthIsRejectedAtTheHeader) {
  // The first frame's length says 900 bytes; without the header check the decoder would swallow
  // the next frame while waiting for them.
  std::vector<uint8_t> a = Frame(FrameType::kLog, 1, Payload(20, 1));
  a[6] ^= 0x03;
  const std::vector<uint8_t> b = Frame(FrameType::kLog, 2, Payload(20, 2));
  std::vector<uint8_t> stream = a;
  stream.insert(stream.end(), b.begin(), b.end());
  const std::vector<Found> found = Decode(decoder_, stream, 1);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].seq, 2);
  EXPECT_EQ(decoder_.stats().header_errors, 1u);
}

TEST_F(FrameTest, FramesLargerThanTheBufferAreOversize) {
  const std::vector<uint8_t> big = Frame(FrameType::kBlobChunk, 1, Payload(1025, 1));
  const std::vector<uint8_t> small = Frame(FrameType::kAck, 9, {});
  std::vector<uint8_t> stream = big;
  stream.insert(stream.end(), small.begin(), small.end());
  const std::vector<Found> found = Decode(decoder_, stream, 100);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].seq, 9);
  EXPECT_EQ(decoder_.stats().oversize, 1u);
  EXPECT_EQ(decoder_.max_payload(), 1024u);
}

TEST_F(FrameTest, CutFrameFollowedByAWholeOneIsRecovered) {
  // A board reset in the middle of a frame: its first half, then the next frame.
  const std::vector<uint8_t> a = Frame(FrameType::kBlobChunk, 1, Payload(200, 1));
  const std::vector<uint8_t> b = Frame(FrameType::kHello, 0, Payload(40, 2));
  std::vector<uint8_t> stream(a.begin(), a.begin() + 120);
  stream.insert(stream.end(), b.begin(), b.end());
  const std::vector<uint8_t> tail = Frame(FrameType::kAck, 3, {});
  for (int i = 0; i < 20; ++i) stream.insert(stream.end(), tail.begin(), tail.end());
  const std::vector<Found> found = Decode(decoder_, stream, 7);
  ASSERT_GE(found.size(), 2u);
  EXPECT_EQ(found[0].type, FrameType::kHello);
  EXPECT_EQ(found[0].payload, Payload(40, 2));
  EXPECT_GE(decoder_.stats().crc_errors, 1u);
}

TEST_F(FrameTest, RandomCorruptionNeverYieldsAWrongFrame) {
  std::vector<uint8_t> stream;
  std::vector<Found> sent;
  for (uint16_t i = 0; i < 400; ++i) {
    const std::vector<uint8_t> p = Payload(i % 300, i);
    const std::vector<uint8_t> f = Frame(FrameType::kBlobChunk, i, p);
    stream.insert(stream.end(), f.begin(), f.end());
    sent.push_back({FrameType::kBlobChunk, i, p});
  }
  std::mt19937 random(7);
  for (int i = 0; i < 300; ++i)
    stream[random() % stream.size()] ^= static_cast<uint8_t>(1u << (random() % 8));
  const std::vector<Found> found = Decode(decoder_, stream, 97);
  // Every frame found is one that was sent, unchanged, in order.
  size_t next = 0;
  for (const Found& f : found) {
    while (next < sent.size() && !(sent[next] == f)) ++next;
    ASSERT_LT(next, sent.size()) << "frame " << f.seq << " was not sent like this";
  }
  EXPECT_GT(found.size(), 100u);
  EXPECT_LT(found.size(), sent.size());
  EXPECT_GT(decoder_.stats().crc_errors + decoder_.stats().header_errors, 0u);
}

}  // namespace
}  // namespace boardlab::link
