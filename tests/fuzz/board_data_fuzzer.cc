// libFuzzer target for what a board sends back: a faulty board, a noisy line or a board running
// other firmware must end a job with an error, never crash boardlab-run (the agent's child for
// serial boards) or the server and client that draw its ETDump.
//
// Input: [target][rest]. An even target byte runs a whole job through link::HostSession against
// a scripted board: the rest is a list of frames the board sends, each
//   [type][seq lo][seq hi][length lo][length hi][payload]
// wrapped into a valid frame (CRCs right, so the fuzzer reaches the messages). Bit 7 of `type`
// sends the frame with `seq` as given; without it a message (type >= 0x10) takes the board's next
// sequence number and a HELLO answers the host's CONNECT (its session field becomes the host's
// nonce). Type 0x7f puts the payload on the line as it is (garbage between frames). The scripted
// board acknowledges every message of the host at once and sends its next frame only when the
// host waits for one; at the end of the script the line closes.
// An odd target byte reads the rest as an ETDump and draws its timeline (SVG and Chrome trace).
//
// BOARDLAB_WRITE_BOARD_SEEDS=DIR writes seed inputs to DIR and exits; BOARDLAB_FUZZ_VERBOSE=1
// prints how each input ended (to see what a finding or a seed reaches).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"
#include "runtime/cli/timeline.h"
#include "runtime/cli/timeline_svg.h"
#include "runtime/cli/trace_event_json.h"
#include "runtime/link/frame.h"
#include "runtime/link/host_session.h"
#include "runtime/link/messages.h"
#include "runtime/link/sha256.h"
#include "runtime/profiling/etdump/clock_record.h"
#include "runtime/profiling/etdump/etdump_writer.h"

namespace boardlab::link {
namespace {

constexpr uint8_t kRawSeqBit = 0x80;
constexpr uint8_t kGarbage = 0x7f;
constexpr size_t kRecordHeader = 5;
constexpr size_t kHelloSessionOffset = 2;  // after protocol_version (messages.cc)

// The job every scripted session runs: small, so that its upload is a few frames.
HostJob FuzzJob() {
  HostJob job;
  job.artifact.assign(96, 0xa5);
  job.inputs = {std::vector<uint8_t>(8, 1)};
  job.expected = {std::vector<uint8_t>(8, 2)};
  job.want_outputs = true;
  job.want_etdump = true;
  job.run_timeout_seconds = 5;
  return job;
}

HostSessionOptions FuzzOptions() {
  HostSessionOptions options;
  options.connect_timeout_ms = 2000;
  options.blob_answer_timeout_ms = 2000;
  return options;
}

class ScriptedBoard : public ByteStream {
 public:
  ScriptedBoard(const uint8_t* script, size_t size)
      : script_(script), script_left_(size), decoder_(host_frame_, sizeof host_frame_) {}

  long Read(uint8_t* data, size_t size, int timeout_ms) override {
    // A board answers what it was sent; it says something new only when the host waits.
    if (line_.empty() && timeout_ms != 0 && !SendNextScriptedFrame()) return -1;
    const size_t n = std::min(size, line_.size());
    std::copy_n(line_.begin(), n, data);
    line_.erase(line_.begin(), line_.begin() + static_cast<std::ptrdiff_t>(n));
    return static_cast<long>(n);
  }

  bool Write(const uint8_t* data, size_t size) override {
    while (size > 0) {
      const size_t used = decoder_.Feed(data, size);
      data += used;
      size -= used;
      const DecodedFrame* frame = decoder_.frame();
      if (frame == nullptr) {
        if (used == 0) break;
        continue;
      }
      TakeHostFrame(*frame);
      decoder_.Consume();
    }
    return true;
  }

  std::string error() const override { return "the scripted board's line closed"; }
  std::string description() const override { return "scripted board"; }

 private:
  void TakeHostFrame(const DecodedFrame& frame) {
    if (frame.type == FrameType::kConnect) {
      Connect connect;
      if (Decode(frame.payload, frame.size, &connect)) nonce_ = connect.nonce;
      board_seq_ = 0;
      return;
    }
    if (IsSequenced(frame.type)) Put(FrameType::kAck, static_cast<uint16_t>(frame.seq + 1), {});
  }

  bool SendNextScriptedFrame() {
    if (script_left_ < kRecordHeader) return false;
    const uint8_t type = script_[0];
    const auto given_seq = static_cast<uint16_t>(script_[1] | script_[2] << 8);
    const size_t length = std::min<size_t>(static_cast<size_t>(script_[3] | script_[4] << 8),
                                           script_left_ - kRecordHeader);
    std::vector<uint8_t> payload(script_ + kRecordHeader, script_ + kRecordHeader + length);
    script_ += kRecordHeader + length;
    script_left_ -= kRecordHeader + length;
    if (type == kGarbage) {
      line_.insert(line_.end(), payload.begin(), payload.end());
      return true;
    }
    const auto frame_type = static_cast<FrameType>(type & ~kRawSeqBit);
    uint16_t seq = given_seq;
    if ((type & kRawSeqBit) == 0) {
      if (IsSequenced(frame_type)) seq = board_seq_++;
      if (frame_type == FrameType::kHello && payload.size() >= kHelloSessionOffset + 4) {
        for (int i = 0; i < 4; ++i) payload[kHelloSessionOffset + i] = uint8_t(nonce_ >> 8 * i);
      }
    }
    Put(frame_type, seq, payload);
    return true;
  }

  void Put(FrameType type, uint16_t seq, const std::vector<uint8_t>& payload) {
    std::vector<uint8_t> frame(kFrameOverhead + payload.size());
    const size_t n =
        EncodeFrame(type, seq, payload.data(), payload.size(), frame.data(), frame.size());
    line_.insert(line_.end(), frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(n));
  }

  const uint8_t* script_;  // the frames not sent yet
  size_t script_left_;
  uint8_t host_frame_[kFrameOverhead + kMaxPayloadLimit];
  FrameDecoder decoder_;
  std::deque<uint8_t> line_;  // bytes on their way to the host
  uint32_t nonce_ = 0;
  uint16_t board_seq_ = 0;
};

void RunScriptedJob(const uint8_t* script, size_t size) {
  ScriptedBoard board(script, size);
  HostSession session(board, FuzzOptions());
  HostJobReport report;
  const absl::Status status = session.RunJob(FuzzJob(), &report);
  if (std::getenv("BOARDLAB_FUZZ_VERBOSE") != nullptr) {
    std::fprintf(stderr, "job: %s; %zu outputs, %zu ETDump bytes\n", status.ToString().c_str(),
                 report.outputs.size(), report.etdump.size());
  }
}

// The debug map of a model with one NPU partition and one CPU op (as the compiler writes it).
const nlohmann::json& DebugMap() {
  static const nlohmann::json map = nlohmann::json::parse(R"({
    "delegates": [{"instruction": 0, "partition": 0, "backend": "BoardlabNeutronBackend",
                   "kernels": [{"id": 10, "kernel": 0, "ops": [0], "names": ["conv_out"],
                                "name": "CONV_2D #0", "macs": 3456}]}],
    "cpu_ops": [{"instruction": 1, "op": 1, "ops": [1], "name": "SOFTMAX #1", "macs": 0}]})");
  return map;
}

void DrawEtdump(const uint8_t* data, size_t size) {
  std::string error;
  const std::optional<run::Timeline> timeline = run::TimelineFromEtdump(
      std::string_view(reinterpret_cast<const char*>(data), size), DebugMap(), &error);
  if (std::getenv("BOARDLAB_FUZZ_VERBOSE") != nullptr) {
    std::fprintf(stderr, "timeline: %s\n", timeline ? "drawn" : error.c_str());
  }
  if (!timeline) return;
  (void)run::TimelineSvg(*timeline, "fuzz.etdp");
  (void)run::TraceEventJson(*timeline, "fuzz.etdp").dump();
}

// ---- Seeds ----

void AddRecord(std::vector<uint8_t>& script, FrameType type, const uint8_t* payload, size_t size) {
  script.insert(script.end(), {static_cast<uint8_t>(type), 0, 0, static_cast<uint8_t>(size),
                               static_cast<uint8_t>(size >> 8)});
  script.insert(script.end(), payload, payload + size);
}

template <class Message>
void AddMessage(std::vector<uint8_t>& script, FrameType type, const Message& message) {
  uint8_t payload[kMaxPayloadLimit];
  AddRecord(script, type, payload, Encode(message, payload, sizeof payload));
}

void AddBlob(std::vector<uint8_t>& script, BlobKind kind, const std::vector<uint8_t>& bytes) {
  BlobBegin begin;
  begin.kind = kind;
  begin.size = static_cast<uint32_t>(bytes.size());
  begin.digest = Sha256::Of(bytes.data(), bytes.size());
  AddMessage(script, FrameType::kBlobBegin, begin);
  BlobChunk chunk;
  chunk.data = bytes.data();
  chunk.size = bytes.size();
  AddMessage(script, FrameType::kBlobChunk, chunk);
  AddMessage(script, FrameType::kBlobEnd, BlobEnd{kind, 0});
}

std::vector<uint8_t> SeedEtdump() {
  std::vector<uint8_t> buffer(16 * 1024);
  runtime::etdump::EtdumpWriter writer(buffer.data(), buffer.size());
  writer.BeginRun("Default");
  runtime::etdump::ClockRecord clock;
  clock.kind = runtime::etdump::ClockKind::kSimCycles;
  clock.ticks_per_second = 325'000'000;
  clock.core_hz = 325'000'000;
  runtime::etdump::WriteClockRecord(writer, clock);
  writer.BeginRun("Execute");
  const uint8_t npu_kernel[2] = {0, static_cast<uint8_t>(runtime::ExecutionUnit::kNpu)};
  writer.LogDelegateEvent(10, 0, 0, 100, 400, npu_kernel, 2);
  writer.LogProfileEvent("DELEGATE_CALL", 0, 0, 100, 500);
  writer.LogProfileEvent("native_call_softmax.out", 0, 1, 510, 900);
  writer.LogProfileEvent("OPERATOR_CALL", 0, 1, 500, 1000);
  writer.LogProfileEvent("Method::execute", -1, -1, 100, 1000);
  runtime::Result<runtime::Span<const uint8_t>> bytes = writer.Finish();
  if (!bytes.ok()) std::abort();
  return {bytes->data(), bytes->data() + bytes->size()};
}

// A board that does everything right: HELLO, the blob answers, a log line, the output and the
// ETDump, the check and the result.
std::vector<uint8_t> SeedConversation(const std::vector<uint8_t>& etdump) {
  std::vector<uint8_t> script = {0};  // target: the link
  Hello hello;
  hello.max_payload = 2048;
  hello.window = 8;
  hello.ticks_per_second = 1000;
  hello.cache_capacity = 64 * 1024;
  AddMessage(script, FrameType::kHello, hello);
  for (BlobKind kind : {BlobKind::kArtifact, BlobKind::kInput, BlobKind::kExpected}) {
    BlobStatus stored;
    stored.kind = kind;
    AddMessage(script, FrameType::kBlobStatus, stored);
  }
  Log log;
  std::snprintf(log.text, sizeof log.text, "ran 1 iteration");
  AddMessage(script, FrameType::kLog, log);
  AddBlob(script, BlobKind::kOutput, std::vector<uint8_t>(8, 2));
  AddBlob(script, BlobKind::kEtdump, etdump);
  OutputCheckMessage check;
  check.check = {8, 0, 1, 1, 0, 0, 8};
  AddMessage(script, FrameType::kCheck, check);
  Result result;
  result.verdict = Verdict::kPass;
  result.iterations = 1;
  result.num_outputs = 1;
  AddMessage(script, FrameType::kResult, result);
  return script;
}

void WriteSeed(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

void WriteSeeds(const std::string& dir) {
  const std::vector<uint8_t> etdump = SeedEtdump();
  WriteSeed(dir + "/conversation", SeedConversation(etdump));
  std::vector<uint8_t> etdump_seed = {1};
  etdump_seed.insert(etdump_seed.end(), etdump.begin(), etdump.end());
  WriteSeed(dir + "/etdump", etdump_seed);
}

}  // namespace
}  // namespace boardlab::link

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("BOARDLAB_WRITE_BOARD_SEEDS")) {
    boardlab::link::WriteSeeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if (data[0] % 2 == 0) {
    boardlab::link::RunScriptedJob(data + 1, size - 1);
  } else {
    boardlab::link::DrawEtdump(data + 1, size - 1);
  }
  return 0;
}
