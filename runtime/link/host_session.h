#pragma once

// The host side of the board link (docs/board-protocol.md, "Host state machine"): connects to a
// board over a ByteStream, sends an artifact only when the board's cache does not hold it, sends
// the inputs and expected outputs and RUN without stopping for the board's BLOB_STATUS answers
// (they are checked, in order, while the later blobs travel: a refusal ends the job, and the
// board does not run a job it refused a blob of), and collects log lines, outputs, the ETDump
// and the result. It survives garbage, lost and repeated bytes (the link retransmits), and a board
// reset during the upload (it reconnects and sends again); a reset during the run, a closed
// connection, a board that stops answering or a run past its timeout end the job with an error.
// Blocking, for one thread (boardlab-run --board serial; the agent runs that as a child).
//
//   std::unique_ptr<ByteStream> port = OpenByteStream("tcp:127.0.0.1:5555", 921600, &error);
//   HostSession session(*port, HostSessionOptions{}, callbacks);
//   absl::Status status = session.Connect();               // HELLO: session.hello()
//   HostJob job;  job.artifact = bytes;  job.inputs = {...};
//   HostJobReport report;
//   status = session.RunJob(job, &report);                 // report.result, .outputs, .etdump
//
// Errors (absl::Status): UNAVAILABLE the board is gone (connection closed, no acknowledgements,
// reset during the run); DEADLINE_EXCEEDED no HELLO or no result in time; FAILED_PRECONDITION
// protocol version mismatch, or the artifact or a tensor does not fit the board; DATA_LOSS a
// blob's bytes do not match its digest; INTERNAL the board broke the protocol.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/link/chunk_sizer.h"
#include "runtime/link/host_handshake.h"
#include "runtime/link/host_transport.h"
#include "runtime/link/link.h"
#include "runtime/link/messages.h"

namespace boardlab::link {

struct HostSessionOptions {
  int connect_timeout_ms = 10000;  // for the board's HELLO (it may be booting)
  int connect_retry_ms = 250;      // CONNECT is repeated this often until HELLO comes
  /// Asked while Connect waits for HELLO: true ends the wait at once with a Cancelled status
  /// (another thread's cancel reaches a probe that would otherwise wait the whole timeout).
  std::function<bool()> stop_connecting;
  uint16_t max_receive_payload = 4096;  // announced in CONNECT: the board's frames stay below
  /// Largest payload sent to the board: 0 = what the board announced; smaller values make
  /// smaller frames. Blob chunks shrink on their own while frames are lost.
  size_t max_send_payload = 0;
  /// A host's link: frames may queue for a while in USB adapters, ser2net or QEMU before the
  /// board reads them, hence a timeout of at least 300 ms.
  LinkOptions link = {/*window=*/8, /*initial_timeout_ms=*/1000, /*min_timeout_ms=*/300,
                      /*max_timeout_ms=*/4000, /*max_timeouts=*/8};
  /// Reconnects (and uploads again) after a board reset before RUN, at most this often.
  int max_reconnects = 2;
  /// For the BLOB_STATUS answers still missing once RUN is sent (the board answers a blob at its
  /// BLOB_END, in order; hashing a model slot of tens of megabytes takes seconds).
  int blob_answer_timeout_ms = 30000;
};

struct HostJob {
  std::vector<uint8_t> artifact;
  std::vector<std::vector<uint8_t>> inputs;    // every input of the model, in order
  std::vector<std::vector<uint8_t>> expected;  // expected bytes of the first outputs
  uint32_t iterations = 1;
  double atol = 0;
  bool want_outputs = true;
  bool want_etdump = false;
  TestFault test_fault = TestFault::kNone;
  double run_timeout_seconds = 300;  // from RUN to RESULT
  /// The flash tool wrote `artifact` into the board's model slot (protocol 3): it is not sent;
  /// MODEL_SLOT names it and the board checks the slot's SHA-256 before running it in place.
  bool artifact_in_slot = false;
  /// Protocol 6: the host's number for its job (any value but 0, e.g. random), the same for
  /// every case of one job; the board keeps it with the model a RUN loaded.
  uint32_t job_id = 0;
  /// Run on the model this job's previous RUN loaded, in the state it left (a later case of a
  /// many-case job; needs job_id). The board refuses (an error RESULT, exit 2) when it no longer
  /// holds that model, e.g. after a reset. False: the model is loaded afresh.
  bool continue_loaded_model = false;
};

struct HostJobReport {
  Hello hello;  // of the session that ran the job
  Digest artifact_digest;
  bool artifact_cache_hit = false;  // the board held the artifact: it was not sent
  bool artifact_in_slot = false;    // it ran from the board's model slot (checked there)
  uint64_t artifact_bytes_sent = 0;
  /// Sending it, BLOB_BEGIN to its BLOB_STATUS (model slot: MODEL_SLOT to BLOB_STATUS). The
  /// inputs and RUN follow the artifact without waiting for that answer, so this holds one round
  /// trip that a whole job no longer waits for.
  double artifact_seconds = 0;
  double run_seconds = 0;  // RUN to RESULT, host time
  Result result;
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<uint8_t> etdump;
  std::vector<Fault> faults;  // FAULT records received (previous resets)
  int board_resets = 0;       // board resets recovered from during the upload
};

struct HostCallbacks {
  std::function<void(const Log&)> on_log;
  std::function<void(const Fault&)> on_fault;
  std::function<void(const std::string&)> on_progress;  // transfers, reconnects
};

class HostSession {
 public:
  /// `stream` must outlive the session.
  HostSession(ByteStream& stream, const HostSessionOptions& options, HostCallbacks callbacks = {});
  ~HostSession();

  /// Starts a session: CONNECT until HELLO. Receives the FAULT record the board announces.
  absl::Status Connect();
  bool connected() const { return connected_; }
  const Hello& hello() const { return hello_; }

  /// Runs one job (connecting first if needed).
  absl::Status RunJob(const HostJob& job, HostJobReport* report);

  /// Asks the board for a software reset and waits for it to announce itself again.
  absl::Status ResetBoard();

  LinkStats link_stats() const { return link_.stats(); }
  int board_resets() const { return board_resets_; }

 private:
  class Output;
  struct IncomingBlob {
    BlobBegin begin;
    std::vector<uint8_t> data;
  };

  uint32_t NowMs() const;
  // Sends pending bytes, waits up to `wait_ms` for bytes, handles them, runs the link's timers.
  absl::Status PumpOnce(int wait_ms);
  void Handle(FrameType type, const uint8_t* payload, size_t size, bool stray);
  void HandleHello(const uint8_t* payload, size_t size);
  void HandleBlob(FrameType type, const uint8_t* payload, size_t size);
  absl::Status SendMessage(FrameType type, const uint8_t* payload, size_t size);
  absl::Status SendBlob(BlobKind kind, uint8_t index, const std::vector<uint8_t>& bytes,
                        const Digest& digest, bool show_progress);
  // A blob (or MODEL_SLOT) whose BLOB_STATUS the board owes, oldest first.
  struct AwaitedStatus {
    BlobKind kind;
    uint8_t index;
  };
  void HandleBlobStatus(const uint8_t* payload, size_t size);
  absl::Status NameSlotArtifact(const HostJob& job, HostJobReport* report);
  absl::Status SendArtifact(const HostJob& job, HostJobReport* report);
  absl::Status WaitFor(const std::function<bool()>& done, uint32_t timeout_ms,
                       const std::string& what);
  // Sends the artifact (or names it in the slot), the inputs, the expected outputs and RUN.
  absl::Status Upload(const HostJob& job, HostJobReport* report);
  absl::Status SendRun(const HostJob& job, HostJobReport* report);
  // Waits until the board answered every blob of the job; a refusal is the job's error.
  absl::Status AwaitBlobStatuses();
  absl::Status AwaitResult(const HostJob& job, HostJobReport* report);
  void ReportArtifactSent(const HostJob& job, HostJobReport* report) const;
  absl::Status BoardResetError(const std::string& when);
  void Progress(const std::string& message) const;

  ByteStream& stream_;
  HostSessionOptions options_;
  HostCallbacks callbacks_;
  std::unique_ptr<Output> output_;
  std::vector<uint8_t> tx_;
  std::vector<uint8_t> rx_;
  std::vector<uint8_t> reorder_;
  Link link_;
  HostHandshake handshake_;
  uint64_t start_ns_;

  bool connected_ = false;
  bool hello_fresh_ = false;  // no job ran since this HELLO
  Hello hello_;
  bool board_reset_ = false;  // a HELLO of another session came: the board was reset
  Hello reset_hello_;
  int board_resets_ = 0;
  std::string protocol_error_;
  ChunkSizer chunk_sizer_;

  std::deque<AwaitedStatus> awaited_;
  absl::Status refusal_;  // the first blob of the job the board refused (OK: none so far)
  // The artifact's transfer (NowMs): BLOB_BEGIN or MODEL_SLOT sent, its BLOB_STATUS received.
  uint32_t artifact_sent_ms_ = 0;
  std::optional<uint32_t> artifact_answered_ms_;
  uint64_t artifact_wire_bytes_before_ = 0;
  uint32_t run_sent_ms_ = 0;
  std::optional<Result> result_;
  std::optional<IncomingBlob> incoming_blob_;
  std::vector<std::vector<uint8_t>> outputs_;
  std::vector<bool> have_output_;
  // The CHECK messages of the current run, by output index (protocol 2).
  OutputCheck checks_[kMaxTensors];
  bool have_check_[kMaxTensors] = {};
  std::vector<uint8_t> etdump_;
  std::vector<Fault> faults_;
};

}  // namespace boardlab::link
