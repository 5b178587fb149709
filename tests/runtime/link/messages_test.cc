// Every message of the board link survives encoding and decoding with every field set, and every
// malformed payload (truncated, trailing bytes, out-of-range values) is rejected.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "runtime/link/messages.h"

namespace boardlab::link {
namespace {

Digest DigestOf(uint8_t seed) {
  Digest d;
  for (size_t i = 0; i < kDigestBytes; ++i) d.bytes[i] = static_cast<uint8_t>(seed + i);
  return d;
}

template <typename M>
std::vector<uint8_t> Encoded(const M& m, size_t capacity = kMaxPayloadLimit) {
  std::vector<uint8_t> out(capacity);
  out.resize(Encode(m, out.data(), out.size()));
  return out;
}

// Decoding `bytes` works, every shorter prefix and a trailing byte fail, and a buffer one byte
// short does not encode.
template <typename M>
M RoundTrip(const M& m, bool trailing_bytes_allowed = false) {
  const std::vector<uint8_t> bytes = Encoded(m);
  EXPECT_FALSE(bytes.empty());
  M back;
  EXPECT_TRUE(Decode(bytes.data(), bytes.size(), &back));
  for (size_t n = 0; n < bytes.size(); ++n) {
    M cut;
    EXPECT_FALSE(Decode(bytes.data(), n, &cut)) << "a prefix of " << n << " bytes decoded";
  }
  if (!trailing_bytes_allowed) {
    std::vector<uint8_t> longer = bytes;
    longer.push_back(0);
    M extra;
    EXPECT_FALSE(Decode(longer.data(), longer.size(), &extra));
  }
  std::vector<uint8_t> small(bytes.size() - 1);
  EXPECT_EQ(Encode(m, small.data(), small.size()), 0u);
  return back;
}

TEST(Messages, Connect) {
  Connect m;
  m.protocol_version = 7;
  m.nonce = 0xDEADBEEF;
  m.max_payload = 4096;
  m.window = 8;
  const Connect b = RoundTrip(m);
  EXPECT_EQ(b.window, 8);
  EXPECT_EQ(b.protocol_version, 7);
  EXPECT_EQ(b.nonce, 0xDEADBEEFu);
  EXPECT_EQ(b.max_payload, 4096);
}

Hello FullHello() {
  Hello m;
  m.session = 42;
  m.reset_cause = ResetCause::kWatchdog;
  m.flags = Hello::kFaultPending;
  m.max_payload = 2048;
  m.window = 16;
  std::strcpy(m.board, "rt700");
  std::strcpy(m.firmware_version, "1.2.3");
  std::strcpy(m.build_id, "0123456789abcdef0123456789abcde");  // 31 characters: the most
  std::strcpy(m.clock, "dwt-cyccnt");
  m.ticks_per_second = 324000000;
  m.core_hz = 324000000;
  m.icount_shift = -1;
  std::strcpy(m.npu, "emulated on cortex-m33");
  m.num_regions = kMaxRegions;
  for (uint8_t i = 0; i < kMaxRegions; ++i) {
    std::snprintf(m.regions[i].name, sizeof(m.regions[i].name), "region-%u", unsigned{i});
    m.regions[i].base = 0x20000000u + i;
    m.regions[i].size = 1000u * i;
  }
  m.cache_capacity = 8u << 20;
  m.model_slot_base = 0x28200000u;
  m.model_slot_size = 0x03E00000u;
  m.num_cached = kMaxCachedArtifacts;
  for (uint8_t i = 0; i < kMaxCachedArtifacts; ++i) {
    m.cached[i].digest = DigestOf(i);
    m.cached[i].size = 100u + i;
  }
  return m;
}

TEST(Messages, HelloWithEveryRegionAndCacheEntryFitsTheBoardsPayload) {
  const Hello m = FullHello();
  EXPECT_LE(Encoded(m).size(), 2048u);
  const Hello b = RoundTrip(m);
  EXPECT_EQ(b.session, 42u);
  EXPECT_EQ(b.reset_cause, ResetCause::kWatchdog);
  EXPECT_EQ(b.flags, Hello::kFaultPending);
  EXPECT_EQ(b.window, 16);
  EXPECT_STREQ(b.board, "rt700");
  EXPECT_STREQ(b.build_id, m.build_id);
  EXPECT_EQ(b.ticks_per_second, 324000000u);
  EXPECT_EQ(b.icount_shift, -1);
  ASSERT_EQ(b.num_regions, kMaxRegions);
  EXPECT_STREQ(b.regions[7].name, "region-7");
  EXPECT_EQ(b.regions[7].base, 0x20000007u);
  ASSERT_EQ(b.num_cached, kMaxCachedArtifacts);
  EXPECT_EQ(b.cached[5].digest, DigestOf(5));
  EXPECT_EQ(b.cached[5].size, 105u);
  EXPECT_EQ(b.model_slot_base, 0x28200000u);
  EXPECT_EQ(b.model_slot_size, 0x03E00000u);
}

// A protocol-2 board's HELLO has no model slot fields: it still decodes, so that the host can
// say which version the board speaks (and the agent flashes it).
TEST(Messages, HelloOfProtocol2HasNoModelSlot) {
  Hello old = FullHello();
  old.protocol_version = 2;
  const std::vector<uint8_t> bytes = Encoded(old);
  EXPECT_EQ(bytes.size() + 8, Encoded(FullHello()).size());
  Hello b;
  b.model_slot_size = 99;
  ASSERT_TRUE(Decode(bytes.data(), bytes.size(), &b));
  EXPECT_EQ(b.protocol_version, 2);
  EXPECT_EQ(b.model_slot_base, 0u);
  EXPECT_EQ(b.model_slot_size, 0u);
  EXPECT_EQ(b.num_cached, kMaxCachedArtifacts);
}

TEST(Messages, ModelSlotNamesTheArtifactInTheSlot) {
  ModelSlot m;
  m.size = 3721216;
  m.digest = DigestOf(4);
  const ModelSlot b = RoundTrip(m);
  EXPECT_EQ(b.size, 3721216u);
  EXPECT_EQ(b.digest, DigestOf(4));
  // BLOB_STATUS answers it with the kind "model slot", which no blob has.
  BlobStatus status;
  status.kind = BlobKind::kModelSlot;
  status.status = BlobStatusCode::kDigestMismatch;
  EXPECT_EQ(RoundTrip(status).kind, BlobKind::kModelSlot);
  BlobBegin begin;
  begin.kind = BlobKind::kModelSlot;
  const std::vector<uint8_t> bytes = Encoded(begin);
  EXPECT_FALSE(Decode(bytes.data(), bytes.size(), &begin));
}

TEST(Messages, HelloRejectsTooManyEntriesAndUnknownCauses) {
  std::vector<uint8_t> bytes = Encoded(FullHello());
  Hello b;
  // The reset cause is byte 6.
  bytes[6] = 9;
  EXPECT_FALSE(Decode(bytes.data(), bytes.size(), &b));
  Hello few = FullHello();
  few.num_regions = 1;
  few.num_cached = 0;
  std::vector<uint8_t> short_bytes = Encoded(few);
  // num_cached is the last byte before the model slot's base and size: claim one more entry
  // than the payload has.
  short_bytes[short_bytes.size() - 9] = kMaxCachedArtifacts + 1;
  EXPECT_FALSE(Decode(short_bytes.data(), short_bytes.size(), &b));
}

TEST(Messages, Blobs) {
  BlobBegin begin;
  begin.kind = BlobKind::kExpected;
  begin.index = 3;
  begin.size = 123456;
  begin.digest = DigestOf(9);
  const BlobBegin b = RoundTrip(begin);
  EXPECT_EQ(b.kind, BlobKind::kExpected);
  EXPECT_EQ(b.index, 3);
  EXPECT_EQ(b.size, 123456u);
  EXPECT_EQ(b.digest, DigestOf(9));
  std::vector<uint8_t> bad = Encoded(begin);
  bad[0] = 0;  // no such kind
  EXPECT_FALSE(Decode(bad.data(), bad.size(), &begin));

  const uint8_t data[5] = {1, 2, 3, 4, 5};
  BlobChunk chunk;
  chunk.offset = 77;
  chunk.data = data;
  chunk.size = 5;
  const std::vector<uint8_t> bytes = Encoded(chunk);
  ASSERT_EQ(bytes.size(), kChunkHeaderBytes + 5);
  BlobChunk c;
  ASSERT_TRUE(Decode(bytes.data(), bytes.size(), &c));
  EXPECT_EQ(c.offset, 77u);
  EXPECT_EQ(std::vector<uint8_t>(c.data, c.data + c.size), std::vector<uint8_t>(data, data + 5));
  EXPECT_FALSE(Decode(bytes.data(), 3, &c));

  BlobEnd end;
  end.kind = BlobKind::kEtdump;
  end.index = 1;
  const BlobEnd e = RoundTrip(end);
  EXPECT_EQ(e.kind, BlobKind::kEtdump);
  EXPECT_EQ(e.index, 1);

  BlobStatus status;
  status.kind = BlobKind::kArtifact;
  status.status = BlobStatusCode::kDigestMismatch;
  std::strcpy(status.message, "the artifact's 10 bytes hash to ...");
  const BlobStatus s = RoundTrip(status);
  EXPECT_EQ(s.status, BlobStatusCode::kDigestMismatch);
  EXPECT_STREQ(s.message, status.message);
}

TEST(Messages, Run) {
  RunCommand m;
  m.artifact = DigestOf(1);
  m.iterations = 1000;
  m.atol = 2.5;
  m.flags = RunCommand::kSendOutputs | RunCommand::kSendEtdump | RunCommand::kContinue;
  m.num_inputs = 2;
  m.num_expected = 1;
  m.test_fault = TestFault::kHardFault;
  m.job = 0xdeadbeef;
  const RunCommand b = RoundTrip(m);
  EXPECT_EQ(b.artifact, DigestOf(1));
  EXPECT_EQ(b.iterations, 1000u);
  EXPECT_EQ(b.atol, 2.5);
  EXPECT_EQ(b.flags, m.flags);
  EXPECT_EQ(b.num_inputs, 2);
  EXPECT_EQ(b.num_expected, 1);
  EXPECT_EQ(b.test_fault, TestFault::kHardFault);
  EXPECT_EQ(b.job, 0xdeadbeefu);
  m.num_inputs = kMaxTensors + 1;
  const std::vector<uint8_t> bytes = Encoded(m);
  RunCommand too_many;
  EXPECT_FALSE(Decode(bytes.data(), bytes.size(), &too_many));
}

// Protocol 6: a continuing RUN names its job (0 is no job), and unknown flag bits are refused
// rather than ignored (a newer host's request this board would not honour).
TEST(Messages, RunRefusesContinueWithoutAJobAndUnknownFlags) {
  RunCommand m;
  m.artifact = DigestOf(2);
  m.flags = RunCommand::kContinue;
  m.job = 0;
  std::vector<uint8_t> bytes = Encoded(m);
  RunCommand decoded;
  EXPECT_FALSE(Decode(bytes.data(), bytes.size(), &decoded));
  m.flags = RunCommand::kSendOutputs | 8;
  m.job = 7;
  bytes = Encoded(m);
  EXPECT_FALSE(Decode(bytes.data(), bytes.size(), &decoded));
  m.flags = RunCommand::kSendOutputs;
  m.job = 0;  // a RUN that loads afresh may leave its job unnamed (boardlab-run's single runs)
  bytes = Encoded(m);
  EXPECT_TRUE(Decode(bytes.data(), bytes.size(), &decoded));
}

TEST(Messages, LogCutsLongLines) {
  Log m;
  m.level = 2;
  std::memset(m.text, 'x', sizeof(m.text) - 1);
  const Log b = RoundTrip(m);
  EXPECT_EQ(b.level, 2);
  EXPECT_EQ(std::strlen(b.text), sizeof(m.text) - 1);
}

TEST(Messages, ResultWithEveryTimeAndOutput) {
  Result m;
  m.exit_code = 1;
  m.verdict = Verdict::kFail;
  m.iterations = 500;
  m.mean_ticks = uint64_t{1} << 40;
  m.num_times = kMaxIterationTimes;
  for (size_t i = 0; i < kMaxIterationTimes; ++i) m.ticks[i] = 1000 + i;
  m.num_outputs = kMaxTensors;
  m.outputs[7].fnv1a32 = 0xABCD0007u;  // not on the wire: checks travel in CHECK messages
  std::strcpy(m.message, "memory: RAM pool 1 of 2 bytes used");
  // RESULT no longer grows with the outputs (protocol 2).
  Result none = m;
  none.num_outputs = 0;
  EXPECT_EQ(Encoded(m).size(), Encoded(none).size());
  const Result b = RoundTrip(m);
  EXPECT_EQ(b.verdict, Verdict::kFail);
  EXPECT_EQ(b.mean_ticks, uint64_t{1} << 40);
  ASSERT_EQ(b.num_times, kMaxIterationTimes);
  EXPECT_EQ(b.ticks[63], 1063u);
  ASSERT_EQ(b.num_outputs, kMaxTensors);
  EXPECT_EQ(b.outputs[7].fnv1a32, 0u);
  EXPECT_STREQ(b.message, m.message);
  EXPECT_STREQ(VerdictName(b.verdict), "FAIL");
  Result too_many = m;
  std::vector<uint8_t> bytes = Encoded(m);
  bytes[1 + 1 + 4 + 8 + 2 + 8 * kMaxIterationTimes] = kMaxTensors + 1;  // the outputs count
  EXPECT_FALSE(Decode(bytes.data(), bytes.size(), &too_many));
}

// Protocol 5: a run whose last inference ended early says so, and how many inferences of the
// run produced output; a verdict beyond the last one known ("model not held") is refused.
TEST(Messages, ResultOfARunWithoutOutputYet) {
  Result m;
  m.verdict = Verdict::kNoOutput;
  m.iterations = 3;
  m.inferences_with_output = 1;
  m.mean_ticks = 400;
  m.output_mean_ticks = 1000;  // protocol 7: each kind's time apart
  m.early_mean_ticks = 100;
  m.num_times = 3;
  m.early_times_mask = 0b101;  // protocol 8: the first and third ended early
  m.num_outputs = 1;
  const Result b = RoundTrip(m);
  EXPECT_EQ(b.early_times_mask, 0b101u);
  EXPECT_EQ(b.verdict, Verdict::kNoOutput);
  EXPECT_EQ(b.inferences_with_output, 1u);
  EXPECT_EQ(b.output_mean_ticks, 1000u);
  EXPECT_EQ(b.early_mean_ticks, 100u);
  EXPECT_STREQ(VerdictName(b.verdict), "NO_OUTPUT");
  std::vector<uint8_t> bytes = Encoded(m);
  bytes[1] = static_cast<uint8_t>(Verdict::kModelNotHeld) + 1;  // the verdict
  Result back;
  EXPECT_FALSE(Decode(bytes.data(), bytes.size(), &back));
}

// Protocol 7: a continuing RUN the board could not honour says so in its verdict.
TEST(Messages, ResultOfARunWhoseModelTheBoardNoLongerHolds) {
  Result m;
  m.exit_code = 2;
  m.verdict = Verdict::kModelNotHeld;
  const Result b = RoundTrip(m);
  EXPECT_EQ(b.verdict, Verdict::kModelNotHeld);
  EXPECT_STREQ(VerdictName(b.verdict), "MODEL_NOT_HELD");
}

TEST(Messages, CheckCarriesOneOutputsVerdict) {
  OutputCheckMessage m;
  m.index = kMaxTensors - 1;
  m.check = OutputCheck{4096, 0xABCD0007u, 1, 1, 3.5, 7, 1000};
  EXPECT_EQ(Encoded(m).size(), 27u);
  const OutputCheckMessage b = RoundTrip(m);
  EXPECT_EQ(b.index, kMaxTensors - 1);
  EXPECT_EQ(b.check.bytes, 4096u);
  EXPECT_EQ(b.check.fnv1a32, 0xABCD0007u);
  EXPECT_EQ(b.check.checked, 1);
  EXPECT_EQ(b.check.pass, 1);
  EXPECT_EQ(b.check.max_abs_diff, 3.5);
  EXPECT_EQ(b.check.mismatches, 7u);
  EXPECT_EQ(b.check.elements, 1000u);
  // An index beyond the run's outputs, a flag that is not 0 / 1, a cut payload: refused.
  OutputCheckMessage out_of_range = m;
  out_of_range.index = kMaxTensors;
  std::vector<uint8_t> bytes = Encoded(out_of_range);
  OutputCheckMessage back;
  EXPECT_FALSE(Decode(bytes.data(), bytes.size(), &back));
  OutputCheckMessage bad_flag = m;
  bad_flag.check.pass = 2;
  bytes = Encoded(bad_flag);
  EXPECT_FALSE(Decode(bytes.data(), bytes.size(), &back));
  bytes = Encoded(m);
  EXPECT_FALSE(Decode(bytes.data(), bytes.size() - 1, &back));
  bytes.push_back(0);
  EXPECT_FALSE(Decode(bytes.data(), bytes.size(), &back));
  EXPECT_STREQ(FrameTypeName(FrameType::kCheck), "CHECK");
}

TEST(Messages, Fault) {
  Fault m;
  m.cause = ResetCause::kFault;
  m.r0 = 1;
  m.r1 = 2;
  m.r2 = 3;
  m.r3 = 4;
  m.r12 = 12;
  m.lr = 0x1000204b;
  m.pc = 0x1000146c;
  m.xpsr = 0x81000000;
  m.sp = 0x383ffb50;
  m.exc_return = 0xffffffe9;
  m.cfsr = 0x10000;
  m.hfsr = 0x40000000;
  m.mmfar = 5;
  m.bfar = 6;
  const Fault b = RoundTrip(m);
  EXPECT_EQ(b.cause, ResetCause::kFault);
  EXPECT_EQ(b.pc, 0x1000146cu);
  EXPECT_EQ(b.lr, 0x1000204bu);
  EXPECT_EQ(b.cfsr, 0x10000u);
  EXPECT_EQ(b.bfar, 6u);
  EXPECT_EQ(b.r12, 12u);
  EXPECT_STREQ(ResetCauseName(b.cause), "fault reset");
}

}  // namespace
}  // namespace boardlab::link
