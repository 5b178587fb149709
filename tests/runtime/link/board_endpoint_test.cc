// The board endpoint's state machine driven frame by frame by a host written out here (not
// HostSession), so that a test can send what a correct host never would: an artifact whose bytes
// do not match its digest, a blob too large for the board, and RUN right after them without
// waiting for the BLOB_STATUS answers (protocol 4). The board must answer each blob, then answer
// the RUN with an error RESULT without running anything, and run the next job normally. A RUN
// that continues on the loaded model (protocol 6) runs only on the model its own job loaded.

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "runtime/link/frame.h"
#include "runtime/link/link.h"
#include "runtime/link/messages.h"
#include "tests/runtime/link/link_test_support.h"

namespace boardlab::link {
namespace {

using testing::ByteChannel;
using testing::FakeBoard;
using testing::FakeBoardOptions;
using testing::FakeRunner;
using testing::RandomBytes;
using testing::SteadyMilliseconds;

constexpr size_t kPayload = 2048;
constexpr uint8_t kWindow = 8;
constexpr int kAnswerMs = 5000;

struct Message {
  FrameType type;
  std::vector<uint8_t> payload;
};

// A minimal host: a Link over the channels, messages sent as given, messages received in order.
class RawHost {
 public:
  RawHost(ByteChannel& in, ByteChannel& out)
      : in_(in),
        output_(out),
        tx_(kWindow * kPayload),
        rx_(kFrameOverhead + kPayload),
        reorder_(kWindow * kPayload),
        link_(output_,
              LinkBuffers{tx_.data(), tx_.size(), rx_.data(), rx_.size(), reorder_.data(),
                          reorder_.size()},
              Options()) {}

  // CONNECT until the board's HELLO for this session; false after kAnswerMs.
  bool Connect() {
    link::Connect connect;
    connect.nonce = 0x5eed;
    connect.max_payload = kPayload;
    connect.window = kWindow;
    uint8_t payload[16];
    const size_t size = Encode(connect, payload, sizeof(payload));
    const uint32_t start = SteadyMilliseconds();
    while (SteadyMilliseconds() - start < kAnswerMs) {
      link_.SendControl(FrameType::kConnect, payload, size);
      for (int i = 0; i < 10; ++i) {
        Pump(10);
        for (const Message& m : controls_) {
          Hello hello;
          if (m.type == FrameType::kHello && Decode(m.payload.data(), m.payload.size(), &hello) &&
              hello.session == connect.nonce) {
            link_.StartSession(hello.max_payload, hello.window);
            return true;
          }
        }
      }
    }
    return false;
  }

  template <typename M>
  void Send(FrameType type, const M& message) {
    uint8_t payload[kPayload];
    const size_t size = Encode(message, payload, sizeof(payload));
    ASSERT_GT(size, 0u);
    while (link_.Send(type, payload, size, SteadyMilliseconds()) == SendStatus::kWindowFull) {
      Pump(5);
    }
  }

  // BLOB_BEGIN (naming `digest`), the bytes in chunks, BLOB_END; no wait for the answer.
  void SendBlob(BlobKind kind, uint8_t index, const std::vector<uint8_t>& bytes,
                const Digest& digest) {
    BlobBegin begin;
    begin.kind = kind;
    begin.index = index;
    begin.size = static_cast<uint32_t>(bytes.size());
    begin.digest = digest;
    Send(FrameType::kBlobBegin, begin);
    for (size_t offset = 0; offset < bytes.size();) {
      BlobChunk chunk;
      chunk.offset = static_cast<uint32_t>(offset);
      chunk.data = bytes.data() + offset;
      chunk.size = std::min<size_t>(1024, bytes.size() - offset);
      Send(FrameType::kBlobChunk, chunk);
      offset += chunk.size;
    }
    BlobEnd end;
    end.kind = kind;
    end.index = index;
    Send(FrameType::kBlobEnd, end);
  }
  void SendBlob(BlobKind kind, uint8_t index, const std::vector<uint8_t>& bytes) {
    SendBlob(kind, index, bytes, Sha256::Of(bytes.data(), bytes.size()));
  }

  // The next message of `type` (others skipped: LOG lines, output blobs, CHECKs).
  std::optional<Message> Next(FrameType type) {
    const uint32_t start = SteadyMilliseconds();
    while (SteadyMilliseconds() - start < kAnswerMs) {
      while (!messages_.empty()) {
        Message m = std::move(messages_.front());
        messages_.erase(messages_.begin());
        if (m.type == type) return m;
      }
      Pump(10);
    }
    return std::nullopt;
  }
  // The next message of `type`, decoded as M (a failure is the test's).
  template <typename M>
  M NextAs(FrameType type) {
    M message;
    const std::optional<Message> m = Next(type);
    EXPECT_TRUE(m.has_value()) << "no " << FrameTypeName(type);
    if (m) {
      EXPECT_TRUE(Decode(m->payload.data(), m->payload.size(), &message));
    }
    return message;
  }
  BlobStatus NextStatus() { return NextAs<BlobStatus>(FrameType::kBlobStatus); }
  Result NextResult() { return NextAs<Result>(FrameType::kResult); }

 private:
  static LinkOptions Options() {
    LinkOptions o;
    o.window = kWindow;
    o.initial_timeout_ms = 200;
    o.min_timeout_ms = 50;
    o.max_timeout_ms = 500;
    return o;
  }
  void Pump(int wait_ms) {
    uint8_t bytes[4096];
    const long n = in_.Read(bytes, sizeof(bytes), wait_ms);
    size_t used = 0;
    for (;;) {
      used += link_.Receive(bytes + used, static_cast<size_t>(n > 0 ? n : 0) - used,
                            SteadyMilliseconds());
      const Link::Incoming* in = link_.incoming();
      if (in == nullptr) break;
      Message m{in->type, {in->payload, in->payload + in->size}};
      (IsSequenced(in->type) && !in->stray ? messages_ : controls_).push_back(std::move(m));
      link_.Release();
    }
    link_.Poll(SteadyMilliseconds());
  }

  ByteChannel& in_;
  testing::ChannelOutput output_;
  std::vector<uint8_t> tx_, rx_, reorder_;
  Link link_;
  std::vector<Message> messages_;
  std::vector<Message> controls_;
};

class BoardEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeBoardOptions options;
    options.job_bytes = 8 * 1024;
    board_ = std::make_unique<FakeBoard>(to_board_, to_host_, options);
    board_->Start();
    ASSERT_TRUE(host_.Connect());
  }
  void TearDown() override { board_->Stop(); }

  RunCommand Run(const std::vector<uint8_t>& artifact, uint8_t inputs) {
    RunCommand run;
    run.artifact = Sha256::Of(artifact.data(), artifact.size());
    run.num_inputs = inputs;
    run.flags = 0;
    return run;
  }

  // The RESULT that answers a RUN after `refused` was refused: an error, and nothing ran.
  void ExpectNotRun(const std::string& refused) {
    const Result result = host_.NextResult();
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.verdict, Verdict::kError);
    EXPECT_EQ(std::string(result.message),
              "not run: the board refused " + refused + " of this job (see its BLOB_STATUS)");
    EXPECT_EQ(board_->runner().runs(), 0);
  }

  ByteChannel to_board_, to_host_;
  std::unique_ptr<FakeBoard> board_;
  RawHost host_{to_host_, to_board_};
};

// The artifact was stored once; a second copy naming the same digest arrives corrupted, and RUN
// follows at once. The board refuses the copy and does not run the job, although an artifact of
// that name was in its cache a moment before.
TEST_F(BoardEndpointTest, RunAfterARefusedArtifactIsAnErrorAndNothingRuns) {
  const std::vector<uint8_t> artifact = RandomBytes(5000, 1);
  const std::vector<uint8_t> input = RandomBytes(100, 2);
  host_.SendBlob(BlobKind::kArtifact, 0, artifact);
  EXPECT_EQ(host_.NextStatus().status, BlobStatusCode::kStored);

  std::vector<uint8_t> corrupted = artifact;
  corrupted[1234] ^= 0x40;
  host_.SendBlob(BlobKind::kArtifact, 0, corrupted, Sha256::Of(artifact.data(), artifact.size()));
  host_.SendBlob(BlobKind::kInput, 0, input);
  host_.Send(FrameType::kRun, Run(artifact, 1));

  const BlobStatus refused = host_.NextStatus();
  EXPECT_EQ(refused.kind, BlobKind::kArtifact);
  EXPECT_EQ(refused.status, BlobStatusCode::kDigestMismatch);
  const BlobStatus input_status = host_.NextStatus();
  EXPECT_EQ(input_status.kind, BlobKind::kInput);
  EXPECT_EQ(input_status.status, BlobStatusCode::kStored);
  ExpectNotRun("artifact 0");

  // The refusal belonged to that job only: the next one runs.
  host_.SendBlob(BlobKind::kArtifact, 0, artifact);
  host_.SendBlob(BlobKind::kInput, 0, input);
  host_.Send(FrameType::kRun, Run(artifact, 1));
  EXPECT_EQ(host_.NextStatus().status, BlobStatusCode::kStored);
  EXPECT_EQ(host_.NextStatus().status, BlobStatusCode::kStored);
  const Result ran = host_.NextResult();
  EXPECT_EQ(ran.exit_code, 0) << ran.message;
  EXPECT_EQ(board_->runner().runs(), 1);
}

// Input 0 was stored, then a second input 0 too large for the job area is refused: RUN does not
// run with the first copy.
TEST_F(BoardEndpointTest, RunAfterARefusedInputIsAnErrorAndNothingRuns) {
  const std::vector<uint8_t> artifact = RandomBytes(3000, 3);
  host_.SendBlob(BlobKind::kArtifact, 0, artifact);
  host_.SendBlob(BlobKind::kInput, 0, RandomBytes(100, 4));
  host_.SendBlob(BlobKind::kInput, 0, RandomBytes(9000, 5));  // the job area holds 8 KiB
  host_.Send(FrameType::kRun, Run(artifact, 1));
  EXPECT_EQ(host_.NextStatus().status, BlobStatusCode::kStored);
  EXPECT_EQ(host_.NextStatus().status, BlobStatusCode::kStored);
  const BlobStatus refused = host_.NextStatus();
  EXPECT_EQ(refused.kind, BlobKind::kInput);
  EXPECT_EQ(refused.status, BlobStatusCode::kTooLarge);
  EXPECT_NE(std::string(refused.message).find("does not fit: input 0 has 9000 bytes"),
            std::string::npos)
      << refused.message;
  ExpectNotRun("input 0");
}

// MODEL_SLOT on a board without a slot is refused; the RUN behind it is not run.
TEST_F(BoardEndpointTest, RunAfterARefusedModelSlotIsAnErrorAndNothingRuns) {
  const std::vector<uint8_t> artifact = RandomBytes(3000, 6);
  ModelSlot slot;
  slot.size = static_cast<uint32_t>(artifact.size());
  slot.digest = Sha256::Of(artifact.data(), artifact.size());
  host_.Send(FrameType::kModelSlot, slot);
  host_.Send(FrameType::kRun, Run(artifact, 0));
  const BlobStatus refused = host_.NextStatus();
  EXPECT_EQ(refused.kind, BlobKind::kModelSlot);
  EXPECT_EQ(refused.status, BlobStatusCode::kTooLarge);
  ExpectNotRun("the artifact in the model slot");
}

// Protocol 6: a RUN that continues runs on the model its job's previous RUN loaded; without one
// (nothing ran yet, another job ran, an artifact blob began since, a RUN failed) it is refused
// with RESULT exit 2 and nothing runs; protocol 7: its verdict says so ("model not held").
TEST_F(BoardEndpointTest, ContinuingRunRunsOnlyOnTheModelItsJobLoaded) {
  const std::vector<uint8_t> artifact = RandomBytes(3000, 7);
  const std::vector<uint8_t> input = RandomBytes(64, 8);
  const auto run = [&](uint32_t job, bool continuing) {
    RunCommand r = Run(artifact, 1);
    r.job = job;
    r.flags = continuing ? RunCommand::kContinue : 0;
    host_.SendBlob(BlobKind::kInput, 0, input);
    host_.Send(FrameType::kRun, r);
    EXPECT_EQ(host_.NextStatus().status, BlobStatusCode::kStored);
    return host_.NextResult();
  };
  const auto expect_refused = [&](const Result& result, uint32_t job) {
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.verdict, Verdict::kModelNotHeld);
    EXPECT_NE(
        std::string(result.message)
            .find("not run: RUN continues job " + std::to_string(job) + " on artifact sha256 "),
        std::string::npos)
        << result.message;
    EXPECT_NE(std::string(result.message).find("but the board holds no model that job loaded"),
              std::string::npos)
        << result.message;
  };
  host_.SendBlob(BlobKind::kArtifact, 0, artifact);
  EXPECT_EQ(host_.NextStatus().status, BlobStatusCode::kStored);

  expect_refused(run(7, true), 7);  // nothing loaded yet
  EXPECT_EQ(board_->runner().runs(), 0);

  EXPECT_EQ(run(7, false).exit_code, 0);  // loads afresh
  EXPECT_EQ(run(7, true).exit_code, 0);   // the job's next case continues
  EXPECT_EQ(board_->runner().runs(), 2);
  EXPECT_EQ(board_->runner().continued_runs(), 1);

  expect_refused(run(8, true), 8);  // another job
  expect_refused(run(7, true), 7);  // a refused RUN ended job 7's model too
  EXPECT_EQ(board_->runner().runs(), 2);

  EXPECT_EQ(run(7, false).exit_code, 0);
  host_.SendBlob(BlobKind::kArtifact, 0, RandomBytes(2000, 9));  // may move the cached bytes
  EXPECT_EQ(host_.NextStatus().status, BlobStatusCode::kStored);
  expect_refused(run(7, true), 7);

  // A model that failed to load is nothing to continue on.
  const std::vector<uint8_t> bad = {'B', 'A', 'D', 1, 2, 3};
  host_.SendBlob(BlobKind::kArtifact, 0, bad);
  EXPECT_EQ(host_.NextStatus().status, BlobStatusCode::kStored);
  RunCommand load_bad = Run(bad, 0);
  load_bad.job = 9;
  host_.Send(FrameType::kRun, load_bad);
  EXPECT_EQ(host_.NextResult().exit_code, 3);
  load_bad.flags = RunCommand::kContinue;
  host_.Send(FrameType::kRun, load_bad);
  expect_refused(host_.NextResult(), 9);
  EXPECT_EQ(board_->runner().runs(), 4);
  EXPECT_EQ(board_->runner().continued_runs(), 1);
}

}  // namespace
}  // namespace boardlab::link
