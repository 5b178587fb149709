// A host session against a board endpoint running on its own thread, over an in-memory line
// that can corrupt, drop and duplicate bytes: HELLO, uploads, the artifact cache, runs, faults,
// board resets during the upload and the run, a closed line, a hung board, the payload limit.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/link/frame.h"
#include "runtime/link/host_session.h"
#include "tests/runtime/link/link_test_support.h"

namespace boardlab::link {
namespace {

using testing::ByteChannel;
using testing::FakeBoard;
using testing::FakeBoardOptions;
using testing::FakeRunner;
using testing::Faults;
using testing::PipeStream;
using testing::RandomBytes;

HostSessionOptions FastOptions() {
  HostSessionOptions o;
  o.connect_timeout_ms = 3000;
  o.connect_retry_ms = 50;
  o.link.initial_timeout_ms = 200;
  o.link.min_timeout_ms = 20;
  o.link.max_timeout_ms = 500;
  o.blob_answer_timeout_ms = 5000;
  return o;
}

class SessionTest : public ::testing::Test {
 protected:
  void StartBoard(FakeBoardOptions options = {}) {
    board_ = std::make_unique<FakeBoard>(to_board_, to_host_, options);
    board_->Start();
  }
  void TearDown() override {
    if (board_) board_->Stop();
  }
  HostJob Job(size_t artifact_bytes, uint32_t seed = 1) {
    HostJob job;
    job.artifact = RandomBytes(artifact_bytes, seed);
    job.inputs = {RandomBytes(100, seed + 1), RandomBytes(3000, seed + 2)};
    job.run_timeout_seconds = 10;
    return job;
  }
  std::unique_ptr<HostSession> Session(HostSessionOptions options = FastOptions()) {
    return std::make_unique<HostSession>(stream_, options, callbacks_);
  }

  ByteChannel to_board_, to_host_;
  PipeStream stream_{to_host_, to_board_};
  std::unique_ptr<FakeBoard> board_;
  HostCallbacks callbacks_;
};

TEST_F(SessionTest, HelloTellsWhoTheBoardIs) {
  StartBoard();
  auto session = Session();
  ASSERT_TRUE(session->Connect().ok());
  const Hello& h = session->hello();
  EXPECT_EQ(h.protocol_version, kProtocolVersion);
  EXPECT_STREQ(h.board, "fake");
  EXPECT_STREQ(h.firmware_version, "9.8.7");
  EXPECT_STREQ(h.build_id, "test-build");
  EXPECT_EQ(h.ticks_per_second, 1000000u);
  EXPECT_EQ(h.max_payload, BoardEndpoint::kMaxPayload);
  EXPECT_EQ(h.reset_cause, ResetCause::kPowerOn);
  ASSERT_EQ(h.num_regions, 2);
  EXPECT_STREQ(h.regions[1].name, "flash");
  EXPECT_EQ(h.cache_capacity, 256u * 1024u);
  EXPECT_EQ(h.num_cached, 0);
}

TEST_F(SessionTest, RunSendsTheArtifactOnceThenHitsTheCache) {
  StartBoard();
  std::vector<std::string> logs;
  callbacks_.on_log = [&](const Log& log) { logs.push_back(log.text); };
  auto session = Session();
  HostJob job = Job(50000);
  job.want_etdump = true;
  job.iterations = 3;
  job.expected = FakeRunner::ExpectedOutputs(job.artifact, job.inputs);
  HostJobReport first;
  ASSERT_TRUE(session->RunJob(job, &first).ok());
  EXPECT_FALSE(first.artifact_cache_hit);
  EXPECT_EQ(first.artifact_bytes_sent, 50000u);
  EXPECT_EQ(first.result.exit_code, 0);
  EXPECT_EQ(first.result.verdict, Verdict::kPass);
  EXPECT_EQ(first.result.iterations, 3u);
  EXPECT_EQ(first.result.num_times, 3);
  EXPECT_EQ(first.outputs, job.expected);
  EXPECT_EQ(first.etdump, FakeRunner::Etdump(5000));
  EXPECT_STREQ(first.result.message, "memory: fake");
  ASSERT_FALSE(logs.empty());
  EXPECT_EQ(logs[0], "fake runner: running");

  const uint64_t sent_before = session->link_stats().bytes_sent;
  HostJobReport second;
  ASSERT_TRUE(session->RunJob(job, &second).ok());
  EXPECT_TRUE(second.artifact_cache_hit);
  EXPECT_EQ(second.artifact_bytes_sent, 0u);
  EXPECT_EQ(second.outputs, job.expected);
  // Only the inputs, expected outputs and a few small messages crossed the line.
  EXPECT_LT(session->link_stats().bytes_sent - sent_before, 10000u);
  EXPECT_EQ(board_->runner().runs(), 2);
  EXPECT_EQ(session->link_stats().retransmissions, 0u);

  // A new session sees the artifact in HELLO's cache list.
  auto other = Session();
  ASSERT_TRUE(other->Connect().ok());
  ASSERT_EQ(other->hello().num_cached, 1);
  EXPECT_EQ(other->hello().cached[0].digest, first.artifact_digest);
  EXPECT_EQ(other->hello().cached[0].size, 50000u);
}

// 41 outputs (the fake board gives one per input, and one more), each checked against its
// expected bytes, over a board that takes only the smallest frames: the checks travel in CHECK
// messages of their own, not in one RESULT (protocol 1 carried at most 8).
TEST_F(SessionTest, ManyOutputsAreCheckedOverTheSmallestFrames) {
  FakeBoardOptions small;
  small.max_payload = kMinPayloadLimit;
  StartBoard(small);
  HostSessionOptions options = FastOptions();
  options.max_receive_payload = kMinPayloadLimit;
  options.max_send_payload = kMinPayloadLimit;
  auto session = Session(options);
  HostJob job = Job(3000);
  job.inputs.clear();
  for (uint32_t i = 0; i < 40; ++i) job.inputs.push_back(RandomBytes(10 + i, 100 + i));
  job.expected = FakeRunner::ExpectedOutputs(job.artifact, job.inputs);
  job.expected[33][0] ^= 1;  // one wrong byte in output 33
  HostJobReport report;
  ASSERT_TRUE(session->RunJob(job, &report).ok());
  ASSERT_EQ(report.result.num_outputs, 41);
  EXPECT_EQ(report.result.verdict, Verdict::kFail);
  for (uint8_t i = 0; i < 41; ++i) {
    EXPECT_EQ(report.result.outputs[i].checked, 1) << int{i};
    EXPECT_EQ(report.result.outputs[i].pass, i == 33 ? 0 : 1) << int{i};
    EXPECT_EQ(report.result.outputs[i].bytes, job.expected[i].size()) << int{i};
  }
  ASSERT_EQ(report.outputs.size(), 41u);
  EXPECT_EQ(report.outputs[40], job.expected[40]);
}

TEST_F(SessionTest, WrongExpectedOutputIsAFailNotAnError) {
  StartBoard();
  auto session = Session();
  HostJob job = Job(1000);
  job.expected = FakeRunner::ExpectedOutputs(job.artifact, job.inputs);
  job.expected[1][5] ^= 1;
  HostJobReport report;
  ASSERT_TRUE(session->RunJob(job, &report).ok());
  EXPECT_EQ(report.result.exit_code, 1);
  EXPECT_EQ(report.result.verdict, Verdict::kFail);
  EXPECT_EQ(report.result.outputs[0].pass, 1);
  EXPECT_EQ(report.result.outputs[1].pass, 0);
}

TEST_F(SessionTest, InvalidArtifactIsTheRunnersExitCode) {
  StartBoard();
  auto session = Session();
  HostJob job = Job(500);
  std::memcpy(job.artifact.data(), "BAD", 3);
  HostJobReport report;
  ASSERT_TRUE(session->RunJob(job, &report).ok());
  EXPECT_EQ(report.result.exit_code, 3);
  EXPECT_STREQ(report.result.message, "invalid artifact: not a program");
  EXPECT_TRUE(report.outputs.empty());
}

TEST_F(SessionTest, LeastRecentlyUsedArtifactsAreEvicted) {
  FakeBoardOptions options;
  options.cache_bytes = 100 * 1024;
  StartBoard(options);
  auto session = Session();
  std::vector<HostJob> jobs;
  for (uint32_t i = 0; i < 3; ++i) jobs.push_back(Job(40 * 1024, 10 + i));
  HostJobReport report;
  ASSERT_TRUE(session->RunJob(jobs[0], &report).ok());
  ASSERT_TRUE(session->RunJob(jobs[1], &report).ok());
  ASSERT_TRUE(session->RunJob(jobs[0], &report).ok());  // 0 is now the most recent
  EXPECT_TRUE(report.artifact_cache_hit);
  ASSERT_TRUE(session->RunJob(jobs[2], &report).ok());  // 1 must go to make room
  auto check = Session();
  ASSERT_TRUE(check->Connect().ok());
  ASSERT_EQ(check->hello().num_cached, 2);
  EXPECT_EQ(check->hello().cached[0].digest, Sha256::Of(jobs[2].artifact.data(), 40 * 1024));
  EXPECT_EQ(check->hello().cached[1].digest, Sha256::Of(jobs[0].artifact.data(), 40 * 1024));
}

TEST_F(SessionTest, ArtifactLargerThanTheCacheDoesNotFit) {
  FakeBoardOptions options;
  options.cache_bytes = 8 * 1024;
  StartBoard(options);
  auto session = Session();
  HostJobReport report;
  const absl::Status s = session->RunJob(Job(9000), &report);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("does not fit: the artifact has 9000 bytes, the board's artifact "
                             "cache holds 8192"),
            std::string::npos)
      << s;
}

// A model larger than the artifact cache, written into the model slot by a "flash tool" (the
// slot holds more bytes after it): named with MODEL_SLOT, checked, run in place, never sent.
TEST_F(SessionTest, ModelInTheSlotRunsInPlaceWithoutBeingSent) {
  HostJob job = Job(20000, 7);
  std::vector<uint8_t> slot = RandomBytes(64 * 1024, 99);
  std::copy(job.artifact.begin(), job.artifact.end(), slot.begin());
  FakeBoardOptions options;
  options.cache_bytes = 8 * 1024;
  options.model_slot = &slot;
  StartBoard(options);
  auto session = Session();
  job.artifact_in_slot = true;
  job.expected = FakeRunner::ExpectedOutputs(job.artifact, job.inputs);
  HostJobReport report;
  const absl::Status s = session->RunJob(job, &report);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(report.hello.model_slot_size, 64u * 1024u);
  EXPECT_TRUE(report.artifact_in_slot);
  EXPECT_EQ(report.artifact_bytes_sent, 0u);
  EXPECT_EQ(report.result.verdict, Verdict::kPass);
  // The runner saw the artifact's 20000 bytes, not the whole slot.
  EXPECT_EQ(report.outputs, job.expected);
  EXPECT_LT(session->link_stats().bytes_sent, 10000u);
  // The slot's artifact is not in the cache: a later session names it again.
  auto other = Session();
  ASSERT_TRUE(other->Connect().ok());
  EXPECT_EQ(other->hello().num_cached, 0);
}

TEST_F(SessionTest, StaleModelSlotIsRefusedAndNothingRuns) {
  HostJob job = Job(20000, 7);
  const std::vector<uint8_t> slot = RandomBytes(64 * 1024, 5);  // another model (a failed flash)
  FakeBoardOptions options;
  options.model_slot = &slot;
  StartBoard(options);
  auto session = Session();
  job.artifact_in_slot = true;
  HostJobReport report;
  const absl::Status s = session->RunJob(job, &report);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("the board refused the artifact in its model slot: the model "
                             "slot's first 20000 bytes hash to sha256 "),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("(a stale or failed flash)"), std::string::npos) << s;
  EXPECT_EQ(board_->runner().runs(), 0);
}

TEST_F(SessionTest, ModelSlotMissingOrTooSmallIsRefused) {
  const std::vector<uint8_t> slot(16 * 1024);
  FakeBoardOptions options;
  options.model_slot = &slot;
  StartBoard(options);
  HostJob job = Job(20000);
  job.artifact_in_slot = true;
  HostJobReport report;
  absl::Status s = Session()->RunJob(job, &report);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("does not fit: the artifact has 20000 bytes, the board's model "
                             "slot holds 16384"),
            std::string::npos)
      << s;
  board_->Stop();
  StartBoard();  // no slot
  s = Session()->RunJob(job, &report);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("board fake announces none"), std::string::npos) << s;
  EXPECT_EQ(board_->runner().runs(), 0);
}

TEST_F(SessionTest, InputLargerThanTheJobAreaIsRefusedByTheBoard) {
  FakeBoardOptions options;
  options.job_bytes = 2048;
  StartBoard(options);
  auto session = Session();
  HostJobReport report;
  const absl::Status s = session->RunJob(Job(1000), &report);  // input 1 has 3000 bytes
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("does not fit: input 1 has 3000 bytes"), std::string::npos) << s;
  EXPECT_EQ(board_->runner().runs(), 0);
}

// The host does not stop for the board's answers: with half a second between the board writing
// a BLOB_STATUS and the host reading it, RUN is on the line before the first answer could have
// arrived, and the job still waits for (and checks) every answer.
TEST_F(SessionTest, RunGoesOutBeforeTheBoardConfirmsTheBlobs) {
  constexpr auto kLatency = std::chrono::milliseconds(500);
  to_host_.SetLine(0, kLatency);
  StartBoard();
  using Clock = std::chrono::steady_clock;
  std::mutex mutex;
  std::optional<Clock::time_point> run_written, first_status_written;
  // When the first frame of `type` was written on a channel.
  const auto watch = [&](FrameDecoder* decoder, FrameType type,
                         std::optional<Clock::time_point>* when) {
    return [&mutex, decoder, type, when](const uint8_t* data, size_t size) {
      std::lock_guard<std::mutex> lock(mutex);
      for (size_t used = 0; used < size;) {
        used += decoder->Feed(data + used, size - used);
        while (const DecodedFrame* f = decoder->frame()) {
          if (f->type == type && !when->has_value()) *when = Clock::now();
          decoder->Consume();
        }
      }
    };
  };
  std::vector<uint8_t> out_buffer(kFrameOverhead + kMaxPayloadLimit);
  std::vector<uint8_t> in_buffer(kFrameOverhead + kMaxPayloadLimit);
  FrameDecoder out_frames(out_buffer.data(), out_buffer.size());
  FrameDecoder in_frames(in_buffer.data(), in_buffer.size());
  to_board_.SetObserver(watch(&out_frames, FrameType::kRun, &run_written));
  to_host_.SetObserver(watch(&in_frames, FrameType::kBlobStatus, &first_status_written));
  HostJob job = Job(1500);  // the artifact, one input and RUN fit the window of 8 frames
  job.inputs = {RandomBytes(100, 2)};
  HostJobReport report;
  const absl::Status s = Session()->RunJob(job, &report);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_FALSE(report.artifact_cache_hit);
  EXPECT_GT(report.artifact_seconds, 0.45);  // BLOB_BEGIN to its answer: one trip back at least
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_TRUE(run_written.has_value());
  ASSERT_TRUE(first_status_written.has_value());
  EXPECT_LT(*run_written, *first_status_written + kLatency);
}

TEST_F(SessionTest, NoisyLineStillRunsAndCountsTheRepairs) {
  // One byte in 5,000 corrupted, lost or doubled, both ways: a fifth of the 2 KiB frames is
  // hit, far worse than a real line.
  to_board_.SetFaults({0.0001, 0.00005, 0.00005, 21});
  to_host_.SetFaults({0.0001, 0.00005, 0.00005, 22});
  to_host_.Inject({'b', 'o', 'o', 't', ' ', 'n', 'o', 'i', 's', 'e'});
  StartBoard();
  auto session = Session();
  HostJob job = Job(120000);
  job.want_etdump = true;
  job.expected = FakeRunner::ExpectedOutputs(job.artifact, job.inputs);
  HostJobReport report;
  const absl::Status s = session->RunJob(job, &report);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(report.result.verdict, Verdict::kPass);
  EXPECT_EQ(report.outputs, job.expected);
  EXPECT_EQ(report.etdump, FakeRunner::Etdump(5000));
  const LinkStats host = session->link_stats();
  EXPECT_GT(host.retransmissions, 0u);
  EXPECT_GT(host.decoder.resyncs, 0u);
  EXPECT_GT(to_board_.corrupted() + to_board_.dropped() + to_board_.duplicated(), 0u);
}

TEST_F(SessionTest, BoardResetDuringTheUploadIsRecoveredBySendingAgain) {
  StartBoard();
  board_->support().ResetAfterBytes(30000);  // a brown-out in the middle of the artifact
  std::vector<std::string> progress;
  callbacks_.on_progress = [&](const std::string& m) { progress.push_back(m); };
  auto session = Session();
  HostJob job = Job(80000);
  job.expected = FakeRunner::ExpectedOutputs(job.artifact, job.inputs);
  HostJobReport report;
  const absl::Status s = session->RunJob(job, &report);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(report.board_resets, 1);
  EXPECT_EQ(report.result.verdict, Verdict::kPass);
  EXPECT_EQ(report.hello.reset_cause, ResetCause::kPowerOn);
  EXPECT_EQ(board_->boots(), 2);
  bool told = false;
  for (const std::string& m : progress)
    told = told || m.find("connecting again") != std::string::npos;
  EXPECT_TRUE(told);
}

TEST_F(SessionTest, ResetDuringTheRunIsABoardErrorWithTheFaultRecord) {
  StartBoard();
  HostJob job = Job(2000);
  job.test_fault = TestFault::kHardFault;
  std::vector<Fault> faults;
  callbacks_.on_fault = [&](const Fault& f) { faults.push_back(f); };
  auto session = Session();
  HostJobReport report;
  const absl::Status s = session->RunJob(job, &report);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("the board was reset (fault reset)"), std::string::npos) << s;
  EXPECT_NE(s.message().find("pc 0x00001234"), std::string::npos) << s;
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].cause, ResetCause::kFault);
  ASSERT_EQ(report.faults.size(), 1u);
  // The record is delivered once: the next session starts clean.
  auto next = Session();
  ASSERT_TRUE(next->Connect().ok());
  EXPECT_EQ(next->hello().flags & Hello::kFaultPending, 0);
  EXPECT_EQ(next->hello().reset_cause, ResetCause::kFault);
}

TEST_F(SessionTest, FaultRecordFromBeforeComesFirstInTheSession) {
  Fault f;
  f.cause = ResetCause::kWatchdog;
  f.pc = 0x10001462;
  to_board_.Clear();
  board_ = std::make_unique<FakeBoard>(to_board_, to_host_);
  board_->support().SetFault(f);
  board_->Start();
  std::vector<Fault> faults;
  callbacks_.on_fault = [&](const Fault& got) { faults.push_back(got); };
  auto session = Session();
  ASSERT_TRUE(session->Connect().ok());
  EXPECT_EQ(session->hello().reset_cause, ResetCause::kWatchdog);
  EXPECT_NE(session->hello().flags & Hello::kFaultPending, 0);
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].pc, 0x10001462u);
}

TEST_F(SessionTest, HungBoardEndsInTheRunTimeout) {
  StartBoard();
  auto session = Session();
  HostJob job = Job(1000);
  job.test_fault = TestFault::kHangWithoutWatchdog;
  job.run_timeout_seconds = 0.5;
  HostJobReport report;
  const auto start = std::chrono::steady_clock::now();
  const absl::Status s = session->RunJob(job, &report);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("--timeout 0.5 s"), std::string::npos) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(SessionTest, LongRunKeepsTheLinkAliveThroughLostAcknowledgements) {
  // The acknowledgement of RUN is lost, and the run lasts longer than the host's retransmissions
  // take to give up. The board answers the repeated RUN between kernels, so the host does not
  // declare it dead.
  StartBoard();
  board_->runner().set_run_ms(3000);
  std::vector<uint8_t> buffer(kFrameOverhead + kMaxPayloadLimit);
  FrameDecoder watcher(buffer.data(), buffer.size());
  std::thread restore;
  to_board_.SetObserver([&](const uint8_t* data, size_t size) {
    size_t used = 0;
    while (used < size) {
      used += watcher.Feed(data + used, size - used);
      while (const DecodedFrame* f = watcher.frame()) {
        if (f->type == FrameType::kRun && !restore.joinable()) {
          to_host_.SetFaults({0, 1.0, 0, 5});  // everything the board says is lost ...
          restore = std::thread([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            to_host_.SetFaults({});  // ... until the line recovers, during the run
          });
        }
        watcher.Consume();
      }
    }
  });
  auto session = Session();
  HostJobReport report;
  const absl::Status s = session->RunJob(Job(500), &report);
  if (restore.joinable()) restore.join();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(report.result.exit_code, 0);
  EXPECT_GT(session->link_stats().timeouts, 2u);
  EXPECT_GT(report.run_seconds, 2.9);
}

TEST_F(SessionTest, ClosedLineIsABoardErrorAtOnce) {
  StartBoard();
  board_->runner().set_run_ms(1000);
  auto session = Session();
  HostJob job = Job(500);
  std::thread unplug([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    to_host_.Close();
  });
  const auto start = std::chrono::steady_clock::now();
  HostJobReport report;
  const absl::Status s = session->RunJob(job, &report);
  unplug.join();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("board connection lost: the pipe was closed"), std::string::npos) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(800));
}

TEST_F(SessionTest, NoBoardIsADeadlineWithAHint) {
  HostSessionOptions options = FastOptions();
  options.connect_timeout_ms = 300;
  auto session = Session(options);
  const absl::Status s = session->Connect();
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("is the board-link firmware running"), std::string::npos) << s;
}

// Another thread's stop ends the wait for a HELLO that is not coming, long before the timeout.
TEST_F(SessionTest, StopEndsTheWaitForHello) {
  HostSessionOptions options = FastOptions();
  options.connect_timeout_ms = 20000;
  std::atomic<bool> stop{false};
  options.stop_connecting = [&stop] { return stop.load(); };
  auto session = Session(options);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  const auto start = std::chrono::steady_clock::now();
  const absl::Status s = session->Connect();
  stopper.join();
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
  EXPECT_FALSE(session->connected());
}

TEST_F(SessionTest, HostNeverSendsMoreThanTheBoardAnnounced) {
  FakeBoardOptions options;
  options.max_payload = kMinPayloadLimit;
  StartBoard(options);
  size_t largest = 0;
  std::vector<uint8_t> buffer(kFrameOverhead + kMaxPayloadLimit);
  FrameDecoder watcher(buffer.data(), buffer.size());
  to_board_.SetObserver([&](const uint8_t* data, size_t size) {
    size_t used = 0;
    while (used < size) {
      used += watcher.Feed(data + used, size - used);
      while (const DecodedFrame* f = watcher.frame()) {
        largest = std::max(largest, f->size);
        watcher.Consume();
      }
    }
  });
  auto session = Session();
  HostJob job = Job(20000);
  job.want_etdump = true;
  HostJobReport report;
  ASSERT_TRUE(session->RunJob(job, &report).ok());
  EXPECT_EQ(session->hello().max_payload, kMinPayloadLimit);
  EXPECT_EQ(largest, kMinPayloadLimit);  // chunks fill the frames, and no frame is larger
  EXPECT_EQ(report.etdump, FakeRunner::Etdump(5000));
}

TEST_F(SessionTest, RequestedResetRestartsTheBoard) {
  StartBoard();
  auto session = Session();
  ASSERT_TRUE(session->Connect().ok());
  const absl::Status s = session->ResetBoard();
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(board_->boots(), 2);
  ASSERT_TRUE(session->Connect().ok());
  EXPECT_EQ(session->hello().reset_cause, ResetCause::kSoftware);
}

}  // namespace
}  // namespace boardlab::link
