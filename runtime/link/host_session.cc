#include "runtime/link/host_session.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace boardlab::link {
namespace {

// Outputs and ETDumps larger than this are refused (a corrupt BLOB_BEGIN must not make the host
// allocate gigabytes).
constexpr uint32_t kMaxIncomingBlob = 256u << 20;
constexpr int kPumpWaitMs = 50;
constexpr int kFaultWaitMs = 3000;  // for the FAULT record a HELLO announces

std::string Hex(const Digest& d, size_t bytes = 6) {
  char text[2 * kDigestBytes + 1];
  return d.ToHex(text, bytes);
}

bool Holds(const Hello& hello, const Digest& digest) {
  for (uint8_t i = 0; i < hello.num_cached; ++i) {
    if (hello.cached[i].digest == digest) return true;
  }
  return false;
}

// Decodes a message the host waits for into `slot`; a malformed one is a protocol error.
template <typename M>
void DecodeInto(FrameType type, const uint8_t* payload, size_t size, std::optional<M>* slot,
                std::string* error) {
  M message;
  if (Decode(payload, size, &message)) {
    *slot = message;
  } else {
    *error = absl::StrCat("the board sent a malformed ", FrameTypeName(type));
  }
}

std::string FaultText(const Fault& f) {
  return absl::StrFormat(
      "%s: pc 0x%08x lr 0x%08x sp 0x%08x xpsr 0x%08x cfsr 0x%08x hfsr 0x%08x mmfar 0x%08x bfar "
      "0x%08x r0 0x%08x r1 0x%08x r2 0x%08x r3 0x%08x r12 0x%08x exc_return 0x%08x",
      ResetCauseName(f.cause), f.pc, f.lr, f.sp, f.xpsr, f.cfsr, f.hfsr, f.mmfar, f.bfar, f.r0,
      f.r1, f.r2, f.r3, f.r12, f.exc_return);
}

// The error that ends a job whose blob `kind` `index` the board answered with `status` (OK:
// stored).
absl::Status RefusalError(BlobKind kind, uint8_t index, const BlobStatus& status) {
  const std::string message =
      absl::StrCat("the board refused ",
                   kind == BlobKind::kModelSlot ? "the artifact in its model slot"
                                                : absl::StrCat(BlobKindName(kind), " ", index),
                   ": ", status.message);
  switch (status.status) {
    case BlobStatusCode::kStored:
      return absl::OkStatus();
    case BlobStatusCode::kTooLarge:
      return absl::FailedPreconditionError(message);
    case BlobStatusCode::kDigestMismatch:
      return absl::DataLossError(message);
    case BlobStatusCode::kProtocolError:
      break;
  }
  return absl::InternalError(message);
}

}  // namespace

// Frames are collected and written in one piece per turn: a TCP segment (or USB packet) per
// frame instead of three.
class HostSession::Output final : public ByteOutput {
 public:
  void Write(const uint8_t* data, size_t size) override {
    pending_.insert(pending_.end(), data, data + size);
  }
  bool Flush(ByteStream& stream) {
    if (pending_.empty()) return true;
    const bool ok = stream.Write(pending_.data(), pending_.size());
    pending_.clear();
    return ok;
  }

 private:
  std::vector<uint8_t> pending_;
};

HostSession::HostSession(ByteStream& stream, const HostSessionOptions& options,
                         HostCallbacks callbacks)
    : stream_(stream),
      options_(options),
      callbacks_(std::move(callbacks)),
      output_(std::make_unique<Output>()),
      tx_(static_cast<size_t>(std::max<uint8_t>(options.link.window, 1)) * kMaxPayloadLimit),
      rx_(kFrameOverhead + std::max<size_t>(options.max_receive_payload, kMinPayloadLimit)),
      reorder_(static_cast<size_t>(std::max<uint8_t>(options.link.window, 1)) *
               std::max<size_t>(options.max_receive_payload, kMinPayloadLimit)),
      link_(*output_,
            LinkBuffers{tx_.data(), tx_.size(), rx_.data(), rx_.size(), reorder_.data(),
                        reorder_.size()},
            options.link),
      handshake_(link_, static_cast<uint16_t>(rx_.size() - kFrameOverhead),
                 static_cast<uint32_t>(options.connect_retry_ms)),
      start_ns_(
          static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())) {}

HostSession::~HostSession() = default;

uint32_t HostSession::NowMs() const {
  const uint64_t now =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return static_cast<uint32_t>((now - start_ns_) / 1000000);
}

void HostSession::Progress(const std::string& message) const {
  if (callbacks_.on_progress) callbacks_.on_progress(message);
}

absl::Status HostSession::PumpOnce(int wait_ms) {
  if (!output_->Flush(stream_))
    return absl::UnavailableError("board connection lost: " + stream_.error());
  const uint32_t timer = link_.MillisecondsToTimer(NowMs());
  const int wait = static_cast<int>(std::min<uint32_t>(static_cast<uint32_t>(wait_ms), timer));
  uint8_t bytes[4096];
  const long n = stream_.Read(bytes, sizeof(bytes), wait);
  if (n < 0) return absl::UnavailableError("board connection lost: " + stream_.error());
  size_t used = 0;
  for (;;) {
    used += link_.Receive(bytes + used, static_cast<size_t>(n) - used, NowMs());
    const Link::Incoming* in = link_.incoming();
    if (in == nullptr) break;
    Handle(in->type, in->payload, in->size, in->stray);
    link_.Release();
  }
  link_.Poll(NowMs());
  if (!output_->Flush(stream_))
    return absl::UnavailableError("board connection lost: " + stream_.error());
  if (link_.in_session() && link_.dead()) {
    const LinkStats s = link_.stats();
    return absl::UnavailableError(
        absl::StrFormat("the board stopped acknowledging (%u retransmission timeouts in a row; %u "
                        "retransmissions in all)",
                        static_cast<unsigned>(options_.link.max_timeouts) + 1, s.retransmissions));
  }
  if (!protocol_error_.empty()) return absl::InternalError(protocol_error_);
  return absl::OkStatus();
}

void HostSession::HandleHello(const uint8_t* payload, size_t size) {
  Hello hello;
  if (!Decode(payload, size, &hello)) return;
  if (!connected_) {
    if (handshake_.OnHello(hello)) {
      hello_ = hello;
      connected_ = true;
      hello_fresh_ = true;
    }
    return;
  }
  if (hello.session == handshake_.nonce()) return;  // a second answer to a repeated CONNECT
  // Another session's HELLO (0: the board's announcement after a reset).
  board_reset_ = true;
  reset_hello_ = hello;
}

void HostSession::HandleBlob(FrameType type, const uint8_t* payload, size_t size) {
  if (type == FrameType::kBlobBegin) {
    BlobBegin begin;
    if (!Decode(payload, size, &begin) || begin.size > kMaxIncomingBlob ||
        (begin.kind != BlobKind::kOutput && begin.kind != BlobKind::kEtdump)) {
      protocol_error_ = "the board sent a malformed or unexpected BLOB_BEGIN";
      return;
    }
    incoming_blob_ = IncomingBlob{begin, {}};
    incoming_blob_->data.reserve(begin.size);
    return;
  }
  if (!incoming_blob_) {
    protocol_error_ = absl::StrCat("the board sent ", FrameTypeName(type), " without BLOB_BEGIN");
    return;
  }
  IncomingBlob& blob = *incoming_blob_;
  if (type == FrameType::kBlobChunk) {
    BlobChunk chunk;
    if (!Decode(payload, size, &chunk) || chunk.offset != blob.data.size() ||
        chunk.size > blob.begin.size - blob.data.size()) {
      protocol_error_ = "the board sent a chunk out of place";
      return;
    }
    blob.data.insert(blob.data.end(), chunk.data, chunk.data + chunk.size);
    return;
  }
  BlobEnd end;
  if (!Decode(payload, size, &end) || blob.data.size() != blob.begin.size) {
    protocol_error_ = "the board ended a blob early";
    return;
  }
  const Digest digest = Sha256::Of(blob.data.data(), blob.data.size());
  if (digest != blob.begin.digest) {
    protocol_error_ =
        absl::StrFormat("the board's %s %u (%u bytes) does not match its digest",
                        BlobKindName(blob.begin.kind), blob.begin.index, blob.begin.size);
    return;
  }
  if (blob.begin.kind == BlobKind::kEtdump) {
    etdump_ = std::move(blob.data);
  } else {
    const size_t index = blob.begin.index;
    if (outputs_.size() <= index) {
      outputs_.resize(index + 1);
      have_output_.resize(index + 1);
    }
    outputs_[index] = std::move(blob.data);
    have_output_[index] = true;
  }
  incoming_blob_.reset();
}

void HostSession::Handle(FrameType type, const uint8_t* payload, size_t size, bool stray) {
  if (type == FrameType::kHello) {
    HandleHello(payload, size);
    return;
  }
  if (stray || !IsSequenced(type)) return;  // not ours (before HELLO), or a board's CONNECT
  switch (type) {
    case FrameType::kLog: {
      Log log;
      if (Decode(payload, size, &log) && callbacks_.on_log) callbacks_.on_log(log);
      return;
    }
    case FrameType::kBlobStatus:
      HandleBlobStatus(payload, size);
      return;
    case FrameType::kCheck: {
      OutputCheckMessage check;
      if (!Decode(payload, size, &check)) {
        protocol_error_ = "the board sent a malformed CHECK message";
        return;
      }
      checks_[check.index] = check.check;
      have_check_[check.index] = true;
      return;
    }
    case FrameType::kResult:
      DecodeInto(type, payload, size, &result_, &protocol_error_);
      return;
    case FrameType::kFault: {
      Fault fault;
      if (Decode(payload, size, &fault)) {
        faults_.push_back(fault);
        if (callbacks_.on_fault) callbacks_.on_fault(fault);
      }
      return;
    }
    case FrameType::kBlobBegin:
    case FrameType::kBlobChunk:
    case FrameType::kBlobEnd:
      HandleBlob(type, payload, size);
      return;
    default:
      protocol_error_ = absl::StrFormat(
          "the board sent message type 0x%02x, which a host does "
          "not take",
          static_cast<unsigned>(type));
      return;
  }
}

absl::Status HostSession::WaitFor(const std::function<bool()>& done, uint32_t timeout_ms,
                                  const std::string& what) {
  const uint32_t start = NowMs();
  while (!done()) {
    if (board_reset_) return BoardResetError(what);
    if (NowMs() - start >= timeout_ms) {
      return absl::DeadlineExceededError(
          absl::StrFormat("%s: nothing within %.3g s", what, timeout_ms / 1000.0));
    }
    if (absl::Status s = PumpOnce(kPumpWaitMs); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status HostSession::BoardResetError(const std::string& when) {
  return absl::UnavailableError(absl::StrCat(
      "the board was reset (", ResetCauseName(reset_hello_.reset_cause), ") while ", when));
}

absl::Status HostSession::Connect() {
  connected_ = false;
  board_reset_ = false;
  protocol_error_.clear();
  // The board sends its FAULT record right after HELLO: it may arrive in the same read.
  const size_t faults_before = faults_.size();
  const uint32_t start = NowMs();
  handshake_.Start(start);
  while (!connected_) {
    if (options_.stop_connecting && options_.stop_connecting()) {
      return absl::CancelledError("cancelled while waiting for the board's HELLO");
    }
    if (NowMs() - start >= static_cast<uint32_t>(options_.connect_timeout_ms)) {
      return NoHelloError(stream_.description(), options_.connect_timeout_ms);
    }
    handshake_.Poll(NowMs());
    if (absl::Status s = PumpOnce(kPumpWaitMs); !s.ok()) return s;
  }
  if (absl::Status s = handshake_.VersionStatus(); !s.ok()) {
    connected_ = false;
    return s;
  }
  if ((hello_.flags & Hello::kFaultPending) != 0) {
    return WaitFor([&] { return faults_.size() > faults_before; }, kFaultWaitMs,
                   "waiting for the FAULT record the board announced");
  }
  return absl::OkStatus();
}

absl::Status HostSession::SendMessage(FrameType type, const uint8_t* payload, size_t size) {
  for (;;) {
    if (board_reset_) return BoardResetError("sending");
    switch (link_.Send(type, payload, size, NowMs())) {
      case SendStatus::kOk:
        return absl::OkStatus();
      case SendStatus::kTooLarge:
        return absl::InternalError(absl::StrFormat("a %s of %u bytes exceeds the link's %u",
                                                   FrameTypeName(type), size,
                                                   link_.max_send_payload()));
      case SendStatus::kDead:
        if (absl::Status s = PumpOnce(0); !s.ok()) return s;  // says how it died
        return absl::UnavailableError("the board stopped acknowledging");
      case SendStatus::kWindowFull:
        if (absl::Status s = PumpOnce(kPumpWaitMs); !s.ok()) return s;
        break;
    }
  }
}

absl::Status HostSession::SendBlob(BlobKind kind, uint8_t index, const std::vector<uint8_t>& bytes,
                                   const Digest& digest, bool show_progress) {
  if (!refusal_.ok()) return refusal_;
  uint8_t payload[kMaxPayloadLimit];
  BlobBegin begin;
  begin.kind = kind;
  begin.index = index;
  begin.size = static_cast<uint32_t>(bytes.size());
  begin.digest = digest;
  // The board answers every blob once: at BLOB_BEGIN when it refuses it there, else at BLOB_END.
  awaited_.push_back({kind, index});
  if (absl::Status s =
          SendMessage(FrameType::kBlobBegin, payload, Encode(begin, payload, sizeof(payload)));
      !s.ok()) {
    return s;
  }
  size_t limit = link_.max_send_payload();
  if (options_.max_send_payload > 0) limit = std::min(limit, options_.max_send_payload);
  chunk_sizer_.Start(limit);
  const uint32_t start = NowMs();
  uint32_t last_report = start;
  for (size_t offset = 0; offset < bytes.size();) {
    // A refusal (of this blob at its BEGIN, or of an earlier one) ends the job: no more bytes.
    if (!refusal_.ok()) return refusal_;
    const size_t payload_size = chunk_sizer_.Next(link_.stats().retransmissions);
    BlobChunk chunk;
    chunk.offset = static_cast<uint32_t>(offset);
    chunk.data = bytes.data() + offset;
    chunk.size = std::min(payload_size - kChunkHeaderBytes, bytes.size() - offset);
    if (absl::Status s =
            SendMessage(FrameType::kBlobChunk, payload, Encode(chunk, payload, sizeof(payload)));
        !s.ok()) {
      return s;
    }
    offset += chunk.size;
    if (show_progress && NowMs() - last_report >= 2000) {
      last_report = NowMs();
      const double seconds = (last_report - start) / 1000.0;
      Progress(absl::StrFormat("%s: %u of %u bytes sent (%d %%), %.1f kB/s, frames of %u bytes",
                               BlobKindName(kind), offset, bytes.size(),
                               static_cast<int>(100.0 * offset / bytes.size()),
                               offset / seconds / 1000.0, payload_size + kFrameOverhead));
    }
  }
  if (!refusal_.ok()) return refusal_;
  BlobEnd end;
  end.kind = kind;
  end.index = index;
  return SendMessage(FrameType::kBlobEnd, payload, Encode(end, payload, sizeof(payload)));
}

void HostSession::HandleBlobStatus(const uint8_t* payload, size_t size) {
  BlobStatus status;
  if (!Decode(payload, size, &status)) {
    protocol_error_ = "the board sent a malformed BLOB_STATUS";
    return;
  }
  if (awaited_.empty()) {
    protocol_error_ = absl::StrCat("the board answered about ", BlobKindName(status.kind),
                                   " when no blob awaited an answer: ", status.message);
    return;
  }
  const AwaitedStatus awaited = awaited_.front();
  awaited_.pop_front();
  // Answers come in the order the blobs went; the slot's answer has no index.
  if (status.kind != awaited.kind ||
      (awaited.kind != BlobKind::kModelSlot && status.index != awaited.index)) {
    protocol_error_ = absl::StrFormat("the board answered about %s %u instead of %s %u: %s",
                                      BlobKindName(status.kind), status.index,
                                      BlobKindName(awaited.kind), awaited.index, status.message);
    return;
  }
  if (awaited.kind == BlobKind::kArtifact || awaited.kind == BlobKind::kModelSlot) {
    artifact_answered_ms_ = NowMs();
  }
  if (refusal_.ok()) refusal_ = RefusalError(awaited.kind, awaited.index, status);
}

absl::Status HostSession::NameSlotArtifact(const HostJob& job, HostJobReport* report) {
  report->artifact_in_slot = true;
  if (hello_.model_slot_size == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the artifact is to run from the board's model slot, but board ", hello_.board,
                     " announces none"));
  }
  if (job.artifact.size() > hello_.model_slot_size) {
    return absl::FailedPreconditionError(
        absl::StrFormat("does not fit: the artifact has %u bytes, the board's model slot holds %u",
                        job.artifact.size(), hello_.model_slot_size));
  }
  ModelSlot slot;
  slot.size = static_cast<uint32_t>(job.artifact.size());
  slot.digest = report->artifact_digest;
  uint8_t payload[64];
  artifact_sent_ms_ = NowMs();
  awaited_.push_back({BlobKind::kModelSlot, 0});
  return SendMessage(FrameType::kModelSlot, payload, Encode(slot, payload, sizeof(payload)));
}

absl::Status HostSession::SendArtifact(const HostJob& job, HostJobReport* report) {
  if (job.artifact.size() > hello_.cache_capacity) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "does not fit: the artifact has %u bytes, the board's artifact cache holds %u",
        job.artifact.size(), hello_.cache_capacity));
  }
  report->artifact_cache_hit = Holds(hello_, report->artifact_digest);
  if (report->artifact_cache_hit) {
    Progress(absl::StrCat("artifact sha256 ", Hex(report->artifact_digest),
                          "...: the board holds it (cache hit), not sent"));
    return absl::OkStatus();
  }
  artifact_sent_ms_ = NowMs();
  artifact_wire_bytes_before_ = link_.stats().bytes_sent;
  report->artifact_bytes_sent = job.artifact.size();
  return SendBlob(BlobKind::kArtifact, 0, job.artifact, report->artifact_digest,
                  /*show_progress=*/true);
}

// Once the board confirmed the artifact: how long that took, in the report and in words.
void HostSession::ReportArtifactSent(const HostJob& job, HostJobReport* report) const {
  if (report->artifact_cache_hit || !artifact_answered_ms_.has_value()) return;
  report->artifact_seconds = (*artifact_answered_ms_ - artifact_sent_ms_) / 1000.0;
  if (report->artifact_in_slot) {
    Progress(absl::StrFormat(
        "artifact sha256 %s...: in the model slot at 0x%08x, checked by the board in %.2f s",
        Hex(report->artifact_digest), hello_.model_slot_base, report->artifact_seconds));
    return;
  }
  Progress(absl::StrFormat(
      "artifact sha256 %s...: sent %u bytes in %.2f s (%.1f kB/s of payload; %u bytes on the "
      "wire with the blobs after it)",
      Hex(report->artifact_digest), job.artifact.size(), report->artifact_seconds,
      job.artifact.size() / std::max(report->artifact_seconds, 1e-3) / 1000.0,
      link_.stats().bytes_sent - artifact_wire_bytes_before_));
}

absl::Status HostSession::Upload(const HostJob& job, HostJobReport* report) {
  report->hello = hello_;
  awaited_.clear();
  refusal_ = absl::OkStatus();
  artifact_answered_ms_.reset();
  if (absl::Status s =
          job.artifact_in_slot ? NameSlotArtifact(job, report) : SendArtifact(job, report);
      !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < job.inputs.size(); ++i) {
    const std::vector<uint8_t>& b = job.inputs[i];
    if (absl::Status s = SendBlob(BlobKind::kInput, static_cast<uint8_t>(i), b,
                                  Sha256::Of(b.data(), b.size()), false);
        !s.ok()) {
      return s;
    }
  }
  for (size_t i = 0; i < job.expected.size(); ++i) {
    const std::vector<uint8_t>& b = job.expected[i];
    if (absl::Status s = SendBlob(BlobKind::kExpected, static_cast<uint8_t>(i), b,
                                  Sha256::Of(b.data(), b.size()), false);
        !s.ok()) {
      return s;
    }
  }
  return SendRun(job, report);
}

absl::Status HostSession::SendRun(const HostJob& job, HostJobReport* report) {
  if (!refusal_.ok()) return refusal_;
  result_.reset();
  outputs_.clear();
  have_output_.clear();
  etdump_.clear();
  incoming_blob_.reset();
  for (bool& have : have_check_) have = false;
  RunCommand run;
  run.artifact = report->artifact_digest;
  run.iterations = job.iterations;
  run.atol = job.atol;
  run.flags = (job.want_outputs ? RunCommand::kSendOutputs : 0) |
              (job.want_etdump ? RunCommand::kSendEtdump : 0) |
              (job.continue_loaded_model ? RunCommand::kContinue : 0);
  run.job = job.job_id;
  run.num_inputs = static_cast<uint8_t>(job.inputs.size());
  run.num_expected = static_cast<uint8_t>(job.expected.size());
  run.test_fault = job.test_fault;
  uint8_t payload[64];
  run_sent_ms_ = NowMs();
  return SendMessage(FrameType::kRun, payload, Encode(run, payload, sizeof(payload)));
}

absl::Status HostSession::AwaitBlobStatuses() {
  const absl::Status waited =
      WaitFor([&] { return awaited_.empty() || !refusal_.ok(); },
              static_cast<uint32_t>(options_.blob_answer_timeout_ms),
              awaited_.empty() ? std::string("waiting for the board's answers")
              : awaited_.front().kind == BlobKind::kModelSlot
                  ? std::string("waiting for the board to check its model slot")
                  : absl::StrFormat("waiting for the board to store %s %u",
                                    BlobKindName(awaited_.front().kind), awaited_.front().index));
  if (!waited.ok()) return waited;
  return refusal_;
}

absl::Status HostSession::AwaitResult(const HostJob& job, HostJobReport* report) {
  const double timeout_ms = job.run_timeout_seconds * 1000.0;
  const absl::Status waited =
      WaitFor([&] { return result_.has_value(); },
              timeout_ms >= 4.0e9 ? UINT32_MAX : static_cast<uint32_t>(timeout_ms),
              absl::StrFormat("waiting for the result of the run (--timeout %g s)",
                              job.run_timeout_seconds));
  report->run_seconds = (NowMs() - run_sent_ms_) / 1000.0;
  if (!waited.ok()) return waited;
  report->result = *result_;
  for (uint8_t i = 0; i < report->result.num_outputs; ++i) {
    if (!have_check_[i]) {
      return absl::InternalError(
          absl::StrFormat("the board's RESULT came without the CHECK of output %u", i));
    }
    report->result.outputs[i] = checks_[i];
  }
  if (job.want_outputs && report->result.exit_code <= 1) {
    for (uint8_t i = 0; i < report->result.num_outputs; ++i) {
      if (i >= have_output_.size() || !have_output_[i]) {
        return absl::InternalError(absl::StrFormat("the board's RESULT came without output %u", i));
      }
    }
  }
  report->outputs = std::move(outputs_);
  report->etdump = std::move(etdump_);
  return absl::OkStatus();
}

absl::Status HostSession::RunJob(const HostJob& job, HostJobReport* report) {
  report->artifact_digest = Sha256::Of(job.artifact.data(), job.artifact.size());
  const size_t faults_before = faults_.size();
  absl::Status status;
  for (int attempt = 0;; ++attempt) {
    // A HELLO from before an earlier job may list artifacts the board has evicted since (or miss
    // the ones it received): each job starts from a fresh one.
    if (!connected_ || board_reset_ || !hello_fresh_) {
      if (absl::Status s = Connect(); !s.ok()) return s;
    }
    hello_fresh_ = false;
    // Everything goes out before the first answer is awaited: the board's BLOB_STATUS for the
    // artifact travels back while the inputs and RUN travel out. Until every blob is answered,
    // a reset lost the upload (sent again); after that it ended the run.
    status = Upload(job, report);
    if (status.ok()) status = AwaitBlobStatuses();
    if (status.ok()) break;
    if (!board_reset_ || attempt >= options_.max_reconnects) return status;
    ++report->board_resets;
    ++board_resets_;
    Progress(absl::StrCat(status.message(), "; connecting again and sending again"));
  }
  ReportArtifactSent(job, report);
  status = AwaitResult(job, report);
  if (board_reset_) {
    ++board_resets_;
    // The reset ended the run: a new session collects the fault record that says why.
    const absl::Status reconnect = Connect();
    std::string why;
    for (size_t i = faults_before; i < faults_.size(); ++i) why += "; " + FaultText(faults_[i]);
    report->faults.assign(faults_.begin() + static_cast<long>(faults_before), faults_.end());
    return absl::UnavailableError(absl::StrCat(
        status.message(), why,
        reconnect.ok() ? "" : absl::StrCat("; reconnecting failed: ", reconnect.message())));
  }
  report->faults.assign(faults_.begin() + static_cast<long>(faults_before), faults_.end());
  return status;
}

absl::Status HostSession::ResetBoard() {
  if (!connected_) {
    if (absl::Status s = Connect(); !s.ok()) return s;
  }
  if (absl::Status s = SendMessage(FrameType::kReset, nullptr, 0); !s.ok()) return s;
  const absl::Status waited =
      WaitFor([&] { return board_reset_; }, static_cast<uint32_t>(options_.connect_timeout_ms),
              "waiting for the board to restart");
  connected_ = false;
  if (!board_reset_) return waited;
  ++board_resets_;
  return absl::OkStatus();
}

}  // namespace boardlab::link
