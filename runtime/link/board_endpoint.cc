#include "runtime/link/board_endpoint.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

namespace boardlab::link {
namespace {

constexpr uint32_t kIdleWaitMs = 10;           // longest wait for bytes in one Step
constexpr uint32_t kAnnounceIntervalMs = 250;  // unsolicited HELLOs, at most this often
constexpr uint32_t kServiceIntervalMs = 5;     // link service between kernels, at most this often
constexpr size_t kJobAlignment = 64;
constexpr size_t kSlotHashStep = 16 * 1024;  // model slot bytes hashed between link services

size_t Min(size_t a, size_t b) { return a < b ? a : b; }

}  // namespace

BoardEndpoint::BoardEndpoint(BoardSupport& board, BoardRunner& runner,
                             const BoardEndpointMemory& memory, const LinkOptions& options)
    : board_(board),
      runner_(runner),
      output_(board),
      link_(output_,
            LinkBuffers{memory.tx, memory.tx_size, memory.rx,
                        Min(memory.rx_size, kMaxPayload + kFrameOverhead), memory.reorder,
                        memory.reorder_size},
            options),
      cache_(memory.cache, memory.cache_size),
      job_base_(memory.job),
      job_size_(memory.job_size),
      model_slot_(memory.model_slot),
      model_slot_size_(memory.model_slot == nullptr ? 0 : memory.model_slot_size) {
  Fault record;
  fault_pending_ = board.fault_record(&record);
}

void BoardEndpoint::Start() {
  SendHello(0, kMinPayloadLimit);
  announced_ = true;
  last_announce_ms_ = Now();
}

void BoardEndpoint::Serve() {
  Start();
  while (Step()) {
  }
}

bool BoardEndpoint::Step() {
  board_.KickWatchdog();
  const uint32_t timer = link_.MillisecondsToTimer(Now());
  Pump(timer < kIdleWaitMs ? timer : kIdleWaitMs);
  if (connect_waiting_ && !reset_) {
    connect_waiting_ = false;
    OnConnect(waiting_connect_);
  }
  link_.Poll(Now());
  if (link_.in_session() && link_.dead()) {
    // The host stopped acknowledging. If it is still there (a bad line), the HELLO tells it that
    // the session is over, so that it does not wait for a result that will not come.
    EndSession();
    session_lost_ = true;
    SendHello(0, kMinPayloadLimit);
  }
  return !reset_;
}

void BoardEndpoint::Pump(uint32_t timeout_ms) {
  uint8_t bytes[64];
  const size_t n = board_.Read(bytes, sizeof(bytes), timeout_ms);
  size_t used = 0;
  while (!reset_) {
    used += link_.Receive(bytes + used, n - used, Now());
    const Link::Incoming* in = link_.incoming();
    if (in == nullptr) break;
    // Handled from a copy: handling may send, and sending needs the link to go on receiving
    // acknowledgements.
    const FrameType type = in->type;
    const bool stray = in->stray;
    const size_t size = in->size;
    memcpy(incoming_, in->payload, size);
    link_.Release();
    Handle(type, incoming_, size, stray);
  }
}

void BoardEndpoint::Handle(FrameType type, const uint8_t* payload, size_t size, bool stray) {
  if (stray) {
    MaybeAnnounce();  // a host talks to a session this board no longer has: it was reset
    return;
  }
  if (type == FrameType::kConnect) {
    Connect connect;
    if (!Decode(payload, size, &connect)) return;
    if (!busy_) {
      OnConnect(connect);
    } else {
      waiting_connect_ = connect;  // a new host: the operation in progress ends, Step answers
      connect_waiting_ = true;
    }
    return;
  }
  if (!IsSequenced(type) || busy_) return;  // a HELLO from another board; nothing mid-RUN
  switch (type) {
    case FrameType::kBlobBegin: {
      BlobBegin begin;
      if (Decode(payload, size, &begin)) {
        OnBlobBegin(begin);
      } else {
        SendBlobStatus(BlobStatusCode::kProtocolError, "malformed BLOB_BEGIN (%u bytes)",
                       static_cast<unsigned>(size));
      }
      return;
    }
    case FrameType::kBlobChunk: {
      BlobChunk chunk;
      if (Decode(payload, size, &chunk)) OnBlobChunk(chunk);
      return;
    }
    case FrameType::kBlobEnd: {
      BlobEnd end;
      if (Decode(payload, size, &end)) {
        OnBlobEnd(end);
      } else {
        SendBlobStatus(BlobStatusCode::kProtocolError, "malformed BLOB_END");
      }
      return;
    }
    case FrameType::kRun: {
      RunCommand run;
      if (Decode(payload, size, &run)) {
        OnRun(run);
      } else {
        outcome_ = RunOutcome{};
        outcome_.result.exit_code = 2;
        outcome_.result.verdict = Verdict::kError;
        snprintf(outcome_.result.message, sizeof(outcome_.result.message), "malformed RUN");
        SendRunResult(RunCommand{}, outcome_);
      }
      return;
    }
    case FrameType::kModelSlot: {
      ModelSlot slot;
      if (Decode(payload, size, &slot)) {
        OnModelSlot(slot);
      } else {
        SendSlotStatus(BlobStatusCode::kProtocolError, "malformed MODEL_SLOT (%u bytes)",
                       static_cast<unsigned>(size));
      }
      return;
    }
    case FrameType::kReset:
      board_.Reset();
      reset_ = true;  // only a test double returns
      return;
    default: {
      char text[64];
      snprintf(text, sizeof(text), "unknown message type 0x%02x ignored",
               static_cast<unsigned>(type));
      Log(2, text);
      return;
    }
  }
}

void BoardEndpoint::OnConnect(const Connect& connect) {
  const size_t limit =
      connect.max_payload < kMinPayloadLimit ? kMinPayloadLimit : connect.max_payload;
  if (connect.protocol_version != kProtocolVersion) {
    // Answered, so the host can say which version this board speaks; no session.
    SendHello(connect.nonce, limit);
    return;
  }
  if (link_.in_session() && connect.nonce == session_) {
    SendHello(session_, limit);  // a repeated CONNECT: the first HELLO was lost
    return;
  }
  EndSession();
  session_lost_ = false;
  session_ = connect.nonce;
  link_.StartSession(Min(limit, kMaxPayload), connect.window);
  SendHello(session_, limit);
  if (fault_pending_) SendFaultRecord();
}

void BoardEndpoint::SendHello(uint32_t session, size_t limit) {
  const BoardInfo& info = board_.info();
  Hello hello;
  hello.session = session;
  hello.reset_cause = board_.reset_cause();
  hello.flags = static_cast<uint8_t>((fault_pending_ ? Hello::kFaultPending : 0) |
                                     (session_lost_ && session == 0 ? Hello::kSessionLost : 0));
  hello.max_payload = static_cast<uint16_t>(link_.max_receive_payload());
  hello.window = static_cast<uint8_t>(link_.receive_window());
  snprintf(hello.board, sizeof(hello.board), "%s", info.board);
  snprintf(hello.firmware_version, sizeof(hello.firmware_version), "%s", info.firmware_version);
  snprintf(hello.build_id, sizeof(hello.build_id), "%s", info.build_id);
  snprintf(hello.clock, sizeof(hello.clock), "%s", info.clock);
  hello.ticks_per_second = info.ticks_per_second;
  hello.core_hz = info.core_hz;
  hello.icount_shift = info.icount_shift;
  snprintf(hello.npu, sizeof(hello.npu), "%s", info.npu);
  hello.num_regions = info.num_regions < kMaxRegions ? info.num_regions : kMaxRegions;
  for (uint8_t i = 0; i < hello.num_regions; ++i) hello.regions[i] = info.regions[i];
  hello.cache_capacity = static_cast<uint32_t>(cache_.capacity());
  hello.num_cached = static_cast<uint8_t>(cache_.List(hello.cached, kMaxCachedArtifacts));
  // The firmware's addresses are 32 bits; a host-side test double's slot is announced cut.
  hello.model_slot_base = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(model_slot_));
  hello.model_slot_size = static_cast<uint32_t>(model_slot_size_);
  const size_t capacity = Min(sizeof(scratch_), limit);
  size_t n = Encode(hello, scratch_, capacity);
  while (n == 0 && hello.num_cached > 0) {  // a small host buffer: the oldest entries go
    --hello.num_cached;
    n = Encode(hello, scratch_, capacity);
  }
  if (n > 0) link_.SendControl(FrameType::kHello, scratch_, n);
}

void BoardEndpoint::MaybeAnnounce() {
  const uint32_t now = Now();
  if (announced_ && now - last_announce_ms_ < kAnnounceIntervalMs) return;
  SendHello(0, kMinPayloadLimit);
  announced_ = true;
  last_announce_ms_ = now;
}

void BoardEndpoint::SendFaultRecord() {
  Fault fault;
  if (!board_.fault_record(&fault)) {
    fault_pending_ = false;
    return;
  }
  const size_t n = Encode(fault, scratch_, sizeof(scratch_));
  if (SendMessage(FrameType::kFault, scratch_, n)) fault_pending_ = false;
}

uint8_t* BoardEndpoint::TakeJobMemory(size_t size) {
  const size_t rounded = (size + kJobAlignment - 1) & ~(kJobAlignment - 1);
  if (rounded < size || rounded > job_size_ - job_used_) return nullptr;
  uint8_t* p = job_base_ + job_used_;
  job_used_ += rounded;
  return p;
}

void BoardEndpoint::ResetJob() {
  job_used_ = 0;
  job_refused_ = false;
  for (size_t i = 0; i < kMaxTensors; ++i) inputs_[i] = expected_[i] = ConstBytes{};
}

void BoardEndpoint::AbortOpenBlob() {
  if (blob_state_ == BlobState::kReceiving && blob_.kind == BlobKind::kArtifact) cache_.Abort();
  blob_state_ = BlobState::kNone;
}

void BoardEndpoint::EndSession() {
  AbortOpenBlob();
  ResetJob();
  link_.EndSession();
  session_ = 0;
  slot_verified_ = false;
}

void BoardEndpoint::SendStatusMessage(BlobKind kind, uint8_t index, BlobStatusCode code,
                                      const char* format, va_list args) {
  BlobStatus status;
  status.kind = kind;
  status.index = index;
  status.status = code;
  vsnprintf(status.message, sizeof(status.message), format, args);
  if (code != BlobStatusCode::kStored && !job_refused_) {
    job_refused_ = true;
    if (kind == BlobKind::kModelSlot) {
      snprintf(refused_what_, sizeof(refused_what_), "the artifact in the model slot");
    } else {
      snprintf(refused_what_, sizeof(refused_what_), "%s %u", BlobKindName(kind),
               static_cast<unsigned>(index));
    }
  }
  SendMessage(FrameType::kBlobStatus, scratch_, Encode(status, scratch_, sizeof(scratch_)));
}

void BoardEndpoint::SendBlobStatus(BlobStatusCode code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  SendStatusMessage(blob_.kind, blob_.index, code, format, args);
  va_end(args);
}

void BoardEndpoint::SendSlotStatus(BlobStatusCode code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  SendStatusMessage(BlobKind::kModelSlot, 0, code, format, args);
  va_end(args);
}

Digest BoardEndpoint::HashModelSlot(size_t size) {
  // Tens of megabytes take seconds: the link keeps acknowledging repeated frames and the
  // watchdog is kicked, as during a RUN.
  busy_ = true;
  link_.set_accepting(false);
  Sha256 hash;
  for (size_t offset = 0; offset < size; offset += kSlotHashStep) {
    hash.Update(model_slot_ + offset, Min(kSlotHashStep, size - offset));
    ServiceDuringRun(this);
  }
  link_.set_accepting(true);
  busy_ = false;
  return hash.Finish();
}

void BoardEndpoint::OnModelSlot(const ModelSlot& slot) {
  slot_verified_ = false;
  const unsigned size = static_cast<unsigned>(slot.size);
  if (model_slot_size_ == 0) {
    SendSlotStatus(BlobStatusCode::kTooLarge, "this board has no model slot");
    return;
  }
  if (slot.size == 0 || slot.size > model_slot_size_) {
    SendSlotStatus(BlobStatusCode::kTooLarge,
                   "does not fit: the artifact has %u bytes, the board's model slot holds %u", size,
                   static_cast<unsigned>(model_slot_size_));
    return;
  }
  const Digest digest = HashModelSlot(slot.size);
  if (connect_waiting_ || reset_ || !link_.in_session()) return;  // the session ended meanwhile
  char got[17], want[17];
  if (digest != slot.digest) {
    SendSlotStatus(BlobStatusCode::kDigestMismatch,
                   "the model slot's first %u bytes hash to sha256 %s..., not %s... (a stale "
                   "or failed flash)",
                   size, digest.ToHex(got, 8), slot.digest.ToHex(want, 8));
    return;
  }
  slot_verified_ = true;
  slot_digest_ = slot.digest;
  slot_artifact_size_ = slot.size;
  SendSlotStatus(BlobStatusCode::kStored, "artifact sha256 %s... verified in the model slot",
                 slot.digest.ToHex(want, 8));
}

const uint8_t* BoardEndpoint::FindArtifact(const Digest& digest, size_t* size) {
  const uint8_t* cached = cache_.Find(digest, size);
  if (cached != nullptr || !slot_verified_ || digest != slot_digest_) return cached;
  *size = slot_artifact_size_;
  return model_slot_;  // run in place: no copy into RAM
}

void BoardEndpoint::OnBlobBegin(const BlobBegin& begin) {
  AbortOpenBlob();  // a new BEGIN replaces a blob that never ended
  blob_ = begin;
  blob_received_ = 0;
  blob_hash_.Reset();
  blob_state_ = BlobState::kRefused;
  const unsigned size = static_cast<unsigned>(begin.size);
  switch (begin.kind) {
    case BlobKind::kArtifact:
      if (begin.size > cache_.capacity()) {
        SendBlobStatus(BlobStatusCode::kTooLarge,
                       "does not fit: the artifact has %u bytes, the board's artifact cache "
                       "holds %u",
                       size, static_cast<unsigned>(cache_.capacity()));
        return;
      }
      // Reserving may evict or move the cached artifacts, the loaded model's among them.
      model_loaded_ = false;
      blob_data_ = cache_.Reserve(begin.digest, begin.size);
      break;
    case BlobKind::kInput:
    case BlobKind::kExpected:
      if (begin.index >= kMaxTensors) {
        SendBlobStatus(BlobStatusCode::kProtocolError, "%s index %u: the board takes at most %u",
                       BlobKindName(begin.kind), static_cast<unsigned>(begin.index),
                       static_cast<unsigned>(kMaxTensors));
        return;
      }
      blob_data_ = TakeJobMemory(begin.size);
      if (blob_data_ == nullptr) {
        SendBlobStatus(BlobStatusCode::kTooLarge,
                       "does not fit: %s %u has %u bytes, the board has %u bytes left for the "
                       "run's inputs and expected outputs",
                       BlobKindName(begin.kind), static_cast<unsigned>(begin.index), size,
                       static_cast<unsigned>(job_size_ - job_used_));
        return;
      }
      break;
    default:
      SendBlobStatus(BlobStatusCode::kProtocolError, "a board does not receive %s blobs",
                     BlobKindName(begin.kind));
      return;
  }
  blob_state_ = BlobState::kReceiving;
}

void BoardEndpoint::OnBlobChunk(const BlobChunk& chunk) {
  if (blob_state_ == BlobState::kRefused) return;  // refused at BEGIN: already answered
  if (blob_state_ != BlobState::kReceiving) {
    blob_state_ = BlobState::kRefused;
    SendBlobStatus(BlobStatusCode::kProtocolError, "BLOB_CHUNK without BLOB_BEGIN");
    return;
  }
  if (chunk.offset != blob_received_ || chunk.size > blob_.size - blob_received_) {
    const unsigned offset = static_cast<unsigned>(chunk.offset);
    AbortOpenBlob();
    blob_state_ = BlobState::kRefused;
    SendBlobStatus(BlobStatusCode::kProtocolError,
                   "chunk of %u bytes at offset %u does not continue the %s (%u of %u bytes)",
                   static_cast<unsigned>(chunk.size), offset, BlobKindName(blob_.kind),
                   static_cast<unsigned>(blob_received_), static_cast<unsigned>(blob_.size));
    return;
  }
  if (chunk.size > 0) memcpy(blob_data_ + chunk.offset, chunk.data, chunk.size);
  blob_hash_.Update(chunk.data, chunk.size);
  blob_received_ += chunk.size;
}

void BoardEndpoint::OnBlobEnd(const BlobEnd& end) {
  if (blob_state_ == BlobState::kRefused) {
    blob_state_ = BlobState::kNone;
    return;
  }
  if (blob_state_ != BlobState::kReceiving || end.kind != blob_.kind || end.index != blob_.index ||
      blob_received_ != blob_.size) {
    const bool open = blob_state_ == BlobState::kReceiving;
    AbortOpenBlob();
    SendBlobStatus(BlobStatusCode::kProtocolError,
                   open ? "BLOB_END after %u of %u bytes, or for another blob"
                        : "BLOB_END without BLOB_BEGIN (%u of %u bytes)",
                   static_cast<unsigned>(blob_received_), static_cast<unsigned>(blob_.size));
    return;
  }
  const Digest digest = blob_hash_.Finish();
  if (digest != blob_.digest) {
    char got[17], want[17];
    AbortOpenBlob();
    SendBlobStatus(BlobStatusCode::kDigestMismatch,
                   "the %s's %u bytes hash to sha256 %s..., not %s...", BlobKindName(blob_.kind),
                   static_cast<unsigned>(blob_.size), digest.ToHex(got, 8),
                   blob_.digest.ToHex(want, 8));
    return;
  }
  const ConstBytes bytes{blob_data_, blob_.size};
  if (blob_.kind == BlobKind::kArtifact) cache_.Commit();
  if (blob_.kind == BlobKind::kInput) inputs_[blob_.index] = bytes;
  if (blob_.kind == BlobKind::kExpected) expected_[blob_.index] = bytes;
  blob_state_ = BlobState::kNone;
  SendBlobStatus(BlobStatusCode::kStored, "stored");
}

void BoardEndpoint::ServiceDuringRun(void* self) {
  BoardEndpoint* endpoint = static_cast<BoardEndpoint*>(self);
  endpoint->board_.KickWatchdog();
  const uint32_t now = endpoint->Now();
  if (now - endpoint->last_service_ms_ < kServiceIntervalMs) return;
  endpoint->last_service_ms_ = now;
  endpoint->Pump(0);  // acknowledges repeated frames; busy_ holds everything else back
  endpoint->link_.Poll(now);
}

bool BoardEndpoint::RefuseRun(const RunCommand& run, RunRequest* request, Result* result) {
  char hex[17];
  if (job_refused_) {
    // The artifact may even be in the cache (an earlier copy): the host ended this job at the
    // refusal, so nothing of it runs.
    snprintf(result->message, sizeof(result->message),
             "not run: the board refused %s of this job (see its BLOB_STATUS)", refused_what_);
    return true;
  }
  // Before the artifact's lookup: after a reset the cache may have lost the artifact too, and
  // the model the job loaded is what the host has to know it lost.
  if ((run.flags & RunCommand::kContinue) != 0 && !HoldsModelOf(run)) {
    snprintf(result->message, sizeof(result->message),
             "not run: RUN continues job %lu on artifact sha256 %s..., but the board holds no "
             "model that job loaded (the board was reset, or another job or artifact came since)",
             static_cast<unsigned long>(run.job), run.artifact.ToHex(hex, 8));
    result->verdict = Verdict::kModelNotHeld;
    return true;
  }
  request->artifact.data = FindArtifact(run.artifact, &request->artifact.size);
  if (request->artifact.data == nullptr) {
    snprintf(result->message, sizeof(result->message),
             "artifact sha256 %s... is not on the board (send it first, or name it with "
             "MODEL_SLOT when it is in the model slot)",
             run.artifact.ToHex(hex, 8));
    return true;
  }
  for (uint8_t i = 0; i < run.num_inputs; ++i) {
    if (inputs_[i].data == nullptr) {
      snprintf(result->message, sizeof(result->message), "input %u was not sent", unsigned{i});
      return true;
    }
    request->inputs[i] = inputs_[i];
  }
  for (uint8_t i = 0; i < run.num_expected; ++i) {
    if (expected_[i].data == nullptr) {
      snprintf(result->message, sizeof(result->message), "expected output %u was not sent",
               unsigned{i});
      return true;
    }
    request->expected[i] = expected_[i];
  }
  return false;
}

bool BoardEndpoint::HoldsModelOf(const RunCommand& run) const {
  return model_loaded_ && loaded_job_ == run.job && loaded_artifact_ == run.artifact;
}

void BoardEndpoint::OnRun(const RunCommand& run) {
  outcome_ = RunOutcome{};
  Result& result = outcome_.result;
  RunRequest request;
  if (RefuseRun(run, &request, &result)) {
    result.exit_code = 2;
    if (result.verdict != Verdict::kModelNotHeld) result.verdict = Verdict::kError;
  } else {
    request.num_inputs = run.num_inputs;
    request.num_expected = run.num_expected;
    request.iterations = run.iterations == 0 ? 1 : run.iterations;
    request.atol = run.atol;
    request.want_etdump = (run.flags & RunCommand::kSendEtdump) != 0;
    request.continue_loaded = (run.flags & RunCommand::kContinue) != 0;
    request.between_kernels = &BoardEndpoint::ServiceDuringRun;
    request.context = this;
    busy_ = true;
    link_.set_accepting(false);  // a message that arrives now waits for the run to end
    runner_.Run(request, &outcome_);
    link_.set_accepting(true);
    busy_ = false;
    // A board does not come back from a supported fault; a test double that simulated one
    // returns true, and the endpoint stops as after a reset.
    if (run.test_fault != TestFault::kNone && board_.CauseTestFault(run.test_fault)) {
      reset_ = true;
      return;
    }
  }
  // A model that failed to load or run is in no state to continue from; one that ran is kept
  // for the job's next case.
  model_loaded_ = result.exit_code <= 1;
  loaded_job_ = run.job;
  loaded_artifact_ = run.artifact;
  SendRunResult(run, outcome_);
  ResetJob();
}

bool BoardEndpoint::SendRunResult(const RunCommand& run, RunOutcome& outcome) {
  Result& result = outcome.result;
  if ((run.flags & RunCommand::kSendOutputs) != 0) {
    for (uint8_t i = 0; i < result.num_outputs; ++i) {
      if (!SendBlob(BlobKind::kOutput, i, outcome.outputs[i])) return false;
    }
  }
  if ((run.flags & RunCommand::kSendEtdump) != 0 && outcome.etdump.size > 0) {
    if (!SendBlob(BlobKind::kEtdump, 0, outcome.etdump)) return false;
  }
  for (uint8_t i = 0; i < result.num_outputs; ++i) {
    const OutputCheckMessage check{i, result.outputs[i]};
    if (!SendMessage(FrameType::kCheck, scratch_, Encode(check, scratch_, sizeof(scratch_)))) {
      return false;
    }
  }
  const size_t capacity = Min(sizeof(scratch_), link_.max_send_payload());
  size_t n = Encode(result, scratch_, capacity);
  while (n == 0 && result.num_times > 0) {  // a small host buffer: fewer iteration times
    result.num_times = static_cast<uint16_t>(result.num_times / 2);
    n = Encode(result, scratch_, capacity);
  }
  return SendMessage(FrameType::kResult, scratch_, n);
}

bool BoardEndpoint::SendBlob(BlobKind kind, uint8_t index, ConstBytes bytes) {
  BlobBegin begin;
  begin.kind = kind;
  begin.index = index;
  begin.size = static_cast<uint32_t>(bytes.size);
  begin.digest = Sha256::Of(bytes.data, bytes.size);
  if (!SendMessage(FrameType::kBlobBegin, scratch_, Encode(begin, scratch_, sizeof(scratch_)))) {
    return false;
  }
  chunk_sizer_.Start(Min(sizeof(scratch_), link_.max_send_payload()));
  for (size_t offset = 0; offset < bytes.size;) {
    const size_t payload = chunk_sizer_.Next(link_.stats().retransmissions);
    BlobChunk chunk;
    chunk.offset = static_cast<uint32_t>(offset);
    chunk.data = bytes.data + offset;
    chunk.size = Min(payload - kChunkHeaderBytes, bytes.size - offset);
    offset += chunk.size;
    if (!SendMessage(FrameType::kBlobChunk, scratch_, Encode(chunk, scratch_, sizeof(scratch_)))) {
      return false;
    }
  }
  BlobEnd end;
  end.kind = kind;
  end.index = index;
  return SendMessage(FrameType::kBlobEnd, scratch_, Encode(end, scratch_, sizeof(scratch_)));
}

bool BoardEndpoint::SendMessage(FrameType type, const uint8_t* payload, size_t size) {
  if (size == 0) return false;  // the message did not encode
  const bool was_busy = busy_;
  busy_ = true;
  link_.set_accepting(false);  // while this waits, new messages wait for the sender's next try
  bool sent = false;
  while (link_.in_session() && !connect_waiting_ && !reset_) {
    const SendStatus status = link_.Send(type, payload, size, Now());
    if (status == SendStatus::kOk) {
      sent = true;
      break;
    }
    if (status != SendStatus::kWindowFull) break;
    board_.KickWatchdog();
    const uint32_t timer = link_.MillisecondsToTimer(Now());
    Pump(timer < kIdleWaitMs ? timer : kIdleWaitMs);
    link_.Poll(Now());
    if (link_.dead()) break;
  }
  busy_ = was_busy;
  link_.set_accepting(!was_busy);
  return sent;
}

void BoardEndpoint::Log(uint8_t level, const char* text) {
  if (!link_.in_session() || link_.dead()) return;
  link::Log message;
  message.level = level;
  snprintf(message.text, sizeof(message.text), "%s", text);
  SendMessage(FrameType::kLog, log_, Encode(message, log_, sizeof(log_)));
}

}  // namespace boardlab::link
