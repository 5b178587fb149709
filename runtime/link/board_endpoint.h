#pragma once

// The firmware side of the board link (docs/board-protocol.md, "Board state machine"): answers
// CONNECT with HELLO, stores artifacts in its cache and the next run's inputs and expected
// outputs, runs a RUN through a BoardRunner, and sends the outputs, the ETDump and the RESULT
// back; after a fault or watchdog reset it sends the FAULT record first. Portable, no heap, no
// exceptions; everything board-specific is behind BoardSupport, everything about running a
// model behind BoardRunner (firmware/runner.h runs the boardlab runtime).
//
//   static BoardEndpoint endpoint(board, runner, buffers, LinkOptions{});
//   endpoint.Serve();                       // never returns on a board
//
// Tests drive it step by step instead: Start(), then Step() until it returns false (the board
// support's Reset() returned, i.e. a simulated reset).

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/link/artifact_cache.h"
#include "runtime/link/board_support.h"
#include "runtime/link/chunk_sizer.h"
#include "runtime/link/link.h"
#include "runtime/link/messages.h"
#include "runtime/link/sha256.h"

namespace boardlab::link {

struct ConstBytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

/// One RUN, as the endpoint hands it to the runner.
struct RunRequest {
  ConstBytes artifact;  // 64-byte aligned, in the artifact cache
  ConstBytes inputs[kMaxTensors];
  uint8_t num_inputs = 0;
  ConstBytes expected[kMaxTensors];
  uint8_t num_expected = 0;
  uint32_t iterations = 1;
  double atol = 0;
  bool want_etdump = false;
  /// Protocol 6: run on the model the runner loaded for the previous RUN (the same artifact,
  /// checked by the endpoint), keeping its state; false: load `artifact` afresh.
  bool continue_loaded = false;
  /// The runner calls this between kernels (e.g. from its profiling clock): it kicks the
  /// watchdog and keeps the link answering (acknowledging) while the model runs.
  void (*between_kernels)(void* context) = nullptr;
  void* context = nullptr;
  void BetweenKernels() const {
    if (between_kernels != nullptr) between_kernels(context);
  }
};

/// What the runner produced: RESULT's fields, and the outputs and ETDump bytes to send (they must
/// stay valid until the next Run).
struct RunOutcome {
  Result result;
  ConstBytes outputs[kMaxTensors];
  ConstBytes etdump;
};

class BoardRunner {
 public:
  /// Runs `request` and fills `outcome` (result.exit_code and .message on failure), calling
  /// request.BetweenKernels() between kernels.
  virtual void Run(const RunRequest& request, RunOutcome* outcome) = 0;

 protected:
  ~BoardRunner() = default;
};

/// Memory the endpoint works in (not owned; must outlive it).
struct BoardEndpointMemory {
  uint8_t* tx = nullptr;  // the link's retransmission slots: window x max payload
  size_t tx_size = 0;
  uint8_t* rx = nullptr;  // one incoming frame: kFrameOverhead + the largest accepted payload
  size_t rx_size = 0;
  uint8_t* reorder = nullptr;  // frames kept after a lost one: receive window x accepted payload
  size_t reorder_size = 0;
  uint8_t* cache = nullptr;  // the artifact cache (64-byte aligned)
  size_t cache_size = 0;
  uint8_t* job = nullptr;  // inputs and expected outputs of the next RUN (64-byte aligned)
  size_t job_size = 0;
  // The model slot (protocol 3): memory the flash tool writes a model into (XSPI flash on an
  // RT700), run in place after MODEL_SLOT checked it. Read only; 64-byte aligned; null: none.
  const uint8_t* model_slot = nullptr;
  size_t model_slot_size = 0;
};

class BoardEndpoint {
 public:
  /// The largest payload the endpoint builds or copies (its scratch buffers' size).
  static constexpr size_t kMaxPayload = 2048;

  BoardEndpoint(BoardSupport& board, BoardRunner& runner, const BoardEndpointMemory& memory,
                const LinkOptions& options);

  /// Announces the board (an unsolicited HELLO).
  void Start();
  /// One turn: waits a few milliseconds for bytes, handles what arrived, retransmits. Returns
  /// false once the board support's Reset() returned (a test double's simulated reset).
  bool Step();
  /// Start(), then Step() forever.
  void Serve();

  /// Sends a LOG line to the host when a session is up (blocks until the link takes it); drops
  /// it otherwise. Safe to call from the runner (e.g. the runtime's log hook) during a RUN.
  void Log(uint8_t level, const char* text);

  LinkStats link_stats() const { return link_.stats(); }
  bool in_session() const { return link_.in_session(); }

 private:
  enum class BlobState : uint8_t { kNone, kReceiving, kRefused };

  class Output : public ByteOutput {
   public:
    explicit Output(BoardSupport& board) : board_(board) {}
    void Write(const uint8_t* data, size_t size) override { board_.Write(data, size); }

   private:
    BoardSupport& board_;
  };

  uint32_t Now() { return board_.Milliseconds(); }
  // Reads what arrived within `timeout_ms` and handles every complete frame.
  void Pump(uint32_t timeout_ms);
  void Handle(FrameType type, const uint8_t* payload, size_t size, bool stray);
  void OnConnect(const Connect& connect);
  void SendHello(uint32_t session, size_t limit);
  void MaybeAnnounce();
  void OnBlobBegin(const BlobBegin& begin);
  void OnBlobChunk(const BlobChunk& chunk);
  void OnBlobEnd(const BlobEnd& end);
  void SendBlobStatus(BlobStatusCode code, const char* format, ...)
      __attribute__((format(printf, 3, 4)));
  void SendStatusMessage(BlobKind kind, uint8_t index, BlobStatusCode code, const char* format,
                         va_list args) __attribute__((format(printf, 5, 0)));
  void SendSlotStatus(BlobStatusCode code, const char* format, ...)
      __attribute__((format(printf, 3, 4)));
  void OnModelSlot(const ModelSlot& slot);
  // The slot's first `size` bytes' SHA-256, serving the link (and the watchdog) meanwhile.
  Digest HashModelSlot(size_t size);
  const uint8_t* FindArtifact(const Digest& digest, size_t* size);
  void OnRun(const RunCommand& run);
  // Fills `result` with why RUN cannot run (a blob of the job refused, or missing); false: it can.
  bool RefuseRun(const RunCommand& run, RunRequest* request, Result* result);
  // Whether the runner holds the model a RUN of `run`'s job loaded, for `run` to continue on.
  bool HoldsModelOf(const RunCommand& run) const;
  bool SendRunResult(const RunCommand& run, RunOutcome& outcome);
  bool SendBlob(BlobKind kind, uint8_t index, ConstBytes bytes);
  // Sends a message, receiving and retransmitting while the window is full. False when the
  // session ended (link dead, or a new CONNECT arrived) or the payload was too large.
  bool SendMessage(FrameType type, const uint8_t* payload, size_t size);
  void SendFaultRecord();
  static void ServiceDuringRun(void* self);
  void AbortOpenBlob();
  void ResetJob();
  void EndSession();
  uint8_t* TakeJobMemory(size_t size);

  BoardSupport& board_;
  BoardRunner& runner_;
  Output output_;
  Link link_;
  ArtifactCache cache_;
  uint8_t* job_base_;
  size_t job_size_;
  size_t job_used_ = 0;
  const uint8_t* model_slot_;
  size_t model_slot_size_;
  // What the last MODEL_SLOT of this session verified (forgotten when the session ends: a flash
  // tool may rewrite the slot between sessions).
  bool slot_verified_ = false;
  Digest slot_digest_;
  size_t slot_artifact_size_ = 0;

  uint32_t session_ = 0;
  bool fault_pending_ = false;
  bool session_lost_ = false;  // the link died: HELLOs say so until the next CONNECT
  bool reset_ = false;         // Reset() returned: the endpoint stops
  bool busy_ = false;          // inside a RUN: frames other than ACK/NAK wait
  bool connect_waiting_ = false;
  Connect waiting_connect_;
  uint32_t last_announce_ms_ = 0;
  bool announced_ = false;
  uint32_t last_service_ms_ = 0;

  // The open blob from the host.
  BlobState blob_state_ = BlobState::kNone;
  BlobBegin blob_;
  uint8_t* blob_data_ = nullptr;
  size_t blob_received_ = 0;
  Sha256 blob_hash_;
  ConstBytes inputs_[kMaxTensors];
  ConstBytes expected_[kMaxTensors];
  // A blob (or MODEL_SLOT) of the job was refused since the last RUN: the host sends RUN without
  // waiting for the answers (protocol 4), so that RUN is answered with an error, not run.
  bool job_refused_ = false;
  char refused_what_[40] = {};  // e.g. "artifact 0", "input 1", "the artifact in the model slot"
  // The model the runner keeps loaded after a RUN that ran (protocol 6): which job loaded it and
  // from which artifact. Forgotten when a RUN fails or is refused and when an artifact blob
  // begins (the cache may move the bytes the loaded program points into); a reset empties RAM.
  bool model_loaded_ = false;
  uint32_t loaded_job_ = 0;
  Digest loaded_artifact_;

  uint8_t incoming_[kMaxPayload];  // a copy of the frame being handled (the link's is released)
  uint8_t scratch_[kMaxPayload];   // messages being built
  uint8_t log_[kTextBytes + 8];    // LOG lines (the runner may log while scratch_ is in use)
  RunOutcome outcome_;
  ChunkSizer chunk_sizer_;
};

}  // namespace boardlab::link
