#pragma once

// The board link's messages (docs/board-protocol.md, "Messages"): plain structs, and one
// Encode / Decode pair per message into and out of a frame payload. Fixed-size fields and
// fixed-capacity arrays only, so the firmware needs no heap. Every Decode rejects a truncated
// payload, trailing bytes and out-of-range counts (returns false).
//
//   RunCommand run;
//   run.iterations = 3;
//   uint8_t payload[kMinPayloadLimit];
//   size_t size = Encode(run, payload, sizeof(payload));       // 0: does not fit
//   RunCommand back;
//   bool ok = Decode(payload, size, &back);

#include <stddef.h>
#include <stdint.h>

#include "runtime/link/frame.h"
#include "runtime/link/sha256.h"

namespace boardlab::link {

/// The protocol version both ends must speak (HELLO and CONNECT carry it).
/// 2: per-output checks travel in CHECK messages of their own (RESULT carries their count), so
/// a run's outputs are no longer bounded by what fits in one RESULT frame.
/// 3: HELLO announces the board's model slot (a model the flash tool wrote, e.g. into XSPI
/// flash), and MODEL_SLOT names the artifact in it.
/// 4: the host sends a job's blobs and RUN without waiting for each BLOB_STATUS; a board answers
/// a RUN that follows a refused blob of its job with an error RESULT and does not run it.
/// 5: RESULT's verdict may be "no output" (the last inference ended early: a streaming op such
/// as CIRCULAR_BUFFER waits for more input, so no output was compared), and RESULT says how
/// many of the run's inferences produced output.
/// 6: RUN names the host's job and may continue on the model the job's previous RUN loaded
/// (its streaming state kept), so the cases of one job run on one loaded model, as on the sim
/// and qemu boards; a RUN that does not continue loads the model afresh.
/// 7: a continuing RUN the board cannot honour (it holds no model that job loaded: it was reset,
/// or another job or artifact came since) is answered with the verdict "model not held", so
/// that the host tells the board's lost model from its own mistakes without reading the text;
/// RESULT times the inferences that produced output apart from those that ended early.
/// 8: RESULT says which of its per-iteration times ended early, so that the host's min/max of
/// those times are of whole inferences, not of partial chains mixed in.
inline constexpr uint16_t kProtocolVersion = 8;

/// Inputs, expected outputs and outputs of one RUN (blob indexes are 8 bits).
inline constexpr size_t kMaxTensors = 64;
inline constexpr size_t kMaxRegions = 8;          // memory regions in HELLO
inline constexpr size_t kMaxCachedArtifacts = 8;  // artifact cache entries in HELLO
inline constexpr size_t kMaxIterationTimes = 64;  // per-iteration times in RESULT
inline constexpr size_t kNameBytes = 32;          // names, versions (NUL included)
inline constexpr size_t kTextBytes = 256;         // log lines, messages (NUL included)

// ---- Control frames ----

/// CONNECT, host -> board: starts a session (both ends then number from 0).
struct Connect {
  uint16_t protocol_version = kProtocolVersion;
  uint32_t nonce = 0;                       // chosen by the host, echoed in HELLO
  uint16_t max_payload = kMinPayloadLimit;  // largest payload the host accepts
  uint8_t window = 1;                       // frames in flight the host accepts
};

/// Why the board last started.
enum class ResetCause : uint8_t {
  kUnknown = 0,
  kPowerOn = 1,   // power-on, reset pin, debugger or QEMU monitor reset: no record survived
  kSoftware = 2,  // the host asked for it (RESET) or the firmware restarted itself
  kWatchdog = 3,  // the watchdog expired (the FAULT message has the interrupted PC)
  kFault = 4,     // a HardFault (the FAULT message has the registers)
};
const char* ResetCauseName(ResetCause cause);

struct MemoryRegion {
  char name[kNameBytes] = {};
  uint32_t base = 0;
  uint32_t size = 0;
};

struct CachedArtifact {
  Digest digest;
  uint32_t size = 0;
};

/// HELLO, board -> host: who the board is. Sent in answer to CONNECT (session = its nonce) and
/// once unsolicited after every reset (session = 0).
struct Hello {
  static constexpr uint8_t kFaultPending = 1;  // flags: a FAULT message follows in the session
  static constexpr uint8_t kSessionLost = 2;   // flags: the board ended the last session (no ACKs)

  uint16_t protocol_version = kProtocolVersion;
  uint32_t session = 0;
  ResetCause reset_cause = ResetCause::kUnknown;
  uint8_t flags = 0;
  uint16_t max_payload = kMinPayloadLimit;  // largest payload the board accepts
  uint8_t window = 1;                       // frames in flight the board accepts
  char board[kNameBytes] = {};              // e.g. "an505", "rt700"
  char firmware_version[kNameBytes] = {};
  char build_id[kNameBytes] = {};  // changes with every firmware build
  char clock[kNameBytes] = {};     // what the tick counter counts, e.g. "cmsdk-timer0"
  uint64_t ticks_per_second = 0;
  uint64_t core_hz = 0;       // CPU clock, 0 when not meaningful (QEMU)
  int8_t icount_shift = -1;   // QEMU -icount shift, -1 when not under -icount
  char npu[kNameBytes] = {};  // e.g. "emulated on cortex-m33"
  uint8_t num_regions = 0;
  MemoryRegion regions[kMaxRegions];
  uint32_t cache_capacity = 0;  // bytes of the artifact cache
  uint8_t num_cached = 0;
  CachedArtifact cached[kMaxCachedArtifacts];
  // Protocol 3: where the flash tool writes a model that is run in place (0 bytes: no slot).
  // Decoded only from a HELLO of protocol 3 or later, so an older board still says its version.
  uint32_t model_slot_base = 0;
  uint32_t model_slot_size = 0;
};

// ---- Blobs: artifacts, inputs and expected outputs to the board; outputs and ETDump back ----

enum class BlobKind : uint8_t {
  kArtifact = 1,   // kept in the board's artifact cache, named by its digest
  kInput = 2,      // input tensor `index` of the next RUN
  kExpected = 3,   // expected bytes of output `index` of the next RUN
  kOutput = 4,     // board -> host: output `index` of the last RUN
  kEtdump = 5,     // board -> host: the ETDump of the last RUN
  kModelSlot = 6,  // BLOB_STATUS only: the answer to MODEL_SLOT (the slot checked, not a blob)
};
const char* BlobKindName(BlobKind kind);

/// BLOB_BEGIN: a blob of `size` bytes follows in BLOB_CHUNKs, then BLOB_END. The receiver
/// checks the bytes against `digest` (SHA-256).
struct BlobBegin {
  BlobKind kind = BlobKind::kArtifact;
  uint8_t index = 0;
  uint32_t size = 0;
  Digest digest;
};

/// BLOB_CHUNK: bytes [offset, offset + size) of the open blob. `data` points into the payload
/// (Decode does not copy).
struct BlobChunk {
  uint32_t offset = 0;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

/// BLOB_END: the open blob is complete.
struct BlobEnd {
  BlobKind kind = BlobKind::kArtifact;
  uint8_t index = 0;
};

enum class BlobStatusCode : uint8_t {
  kStored = 0,
  kTooLarge = 1,        // more than the board can hold (the message says how much it can)
  kDigestMismatch = 2,  // the bytes do not hash to the announced digest
  kProtocolError = 3,   // chunk without a BEGIN, outside the blob, missing bytes at END...
};

/// BLOB_STATUS, board -> host: what became of a blob (sent at BEGIN when it is refused at once,
/// else at END).
struct BlobStatus {
  BlobKind kind = BlobKind::kArtifact;
  uint8_t index = 0;
  BlobStatusCode status = BlobStatusCode::kStored;
  char message[kTextBytes] = {};
};

// ---- Running ----

/// Faults a RUN can ask the board to cause after running, to test the host's recovery paths.
enum class TestFault : uint8_t {
  kNone = 0,
  kHang = 1,                 // stop kicking the watchdog and spin: a watchdog reset follows
  kHangWithoutWatchdog = 2,  // spin with the watchdog stopped: only the host's timeout helps
  kHardFault = 3,            // read an address that faults
  kReset = 4,                // software reset instead of the result
};

/// RUN, host -> board: run the cached artifact with the inputs and expected outputs sent since
/// the last RUN.
struct RunCommand {
  static constexpr uint8_t kSendOutputs = 1;
  static constexpr uint8_t kSendEtdump = 2;
  /// Protocol 6: run on the model the previous RUN of the same `job` loaded, with the state its
  /// streaming ops and resource variables were left in (a later case of a many-case job).
  /// Without it the board loads the model afresh. The board refuses (RESULT error, nothing
  /// runs) when it holds no such model: it was reset, or another job or artifact ran since.
  static constexpr uint8_t kContinue = 4;
  static constexpr uint8_t kKnownFlags = kSendOutputs | kSendEtdump | kContinue;

  Digest artifact;
  uint32_t iterations = 1;
  double atol = 0;
  uint8_t flags = kSendOutputs;
  uint8_t num_inputs = 0;    // how many inputs the host sent (the model's count)
  uint8_t num_expected = 0;  // how many expected outputs it sent
  TestFault test_fault = TestFault::kNone;
  /// Protocol 6: the host's number for its job (not 0 with kContinue): the board keeps it with
  /// the model a RUN loaded, and runs a continuing RUN only on the model of the same job.
  uint32_t job = 0;
};

/// MODEL_SLOT, host -> board (protocol 3): "the artifact `digest` of `size` bytes is in your model
/// slot" (the flash tool wrote it). The board hashes the slot's first `size` bytes and answers
/// with BLOB_STATUS of kind kModelSlot: stored (RUN may name `digest`; the model runs in place),
/// too large (no slot, or `size` exceeds it) or digest mismatch (a stale or failed flash).
struct ModelSlot {
  uint32_t size = 0;
  Digest digest;
};

/// RESET, host -> board: restart (a software reset). No payload.

/// LOG, board -> host: a console line (runtime log, firmware message).
struct Log {
  uint8_t level = 1;  // RtPalLogLevel: 0 debug, 1 info, 2 error, 3 fatal
  char text[kTextBytes] = {};
};

/// kNoOutput (protocol 5): the run's last inference ended early; its outputs are an earlier
/// inference's, so nothing was compared (exit 0, CHECKs with checked 0).
/// kModelNotHeld (protocol 7): a RUN that continues a job was not run, because the board holds
/// no model that job loaded (exit 2, the message says which job and artifact).
enum class Verdict : uint8_t {
  kUnverified = 0,
  kPass = 1,
  kFail = 2,
  kError = 3,
  kNoOutput = 4,
  kModelNotHeld = 5,
};
const char* VerdictName(Verdict verdict);

struct OutputCheck {
  uint32_t bytes = 0;
  uint32_t fnv1a32 = 0;
  uint8_t checked = 0;  // 1 when an expected output was given
  uint8_t pass = 0;
  double max_abs_diff = 0;
  uint32_t mismatches = 0;
  uint32_t elements = 0;
};

/// CHECK, board -> host: what the board found for output `index` of the last RUN. One per
/// output, in order, after the OUTPUT / ETDUMP blobs and before RESULT.
struct OutputCheckMessage {
  uint8_t index = 0;
  OutputCheck check;
};

/// RESULT, board -> host: the end of a RUN (after its OUTPUT / ETDUMP blobs and CHECKs). On the
/// wire it carries `num_outputs` only; `outputs` travel in CHECK messages (the host puts them
/// here).
struct Result {
  uint8_t exit_code = 0;  // boardlab-run's: 0 pass / unverified, 1 mismatch, 2 usage,
                          // 3 invalid artifact, 4 runtime error or does not fit
  Verdict verdict = Verdict::kUnverified;
  uint32_t iterations = 0;
  uint64_t mean_ticks = 0;  // per iteration, in HELLO's ticks
  uint16_t num_times = 0;   // the first min(iterations, kMaxIterationTimes) iterations
  uint64_t ticks[kMaxIterationTimes] = {};
  uint8_t num_outputs = 0;
  OutputCheck outputs[kMaxTensors];
  char message[kTextBytes] = {};        // the error when exit_code >= 2; memory use otherwise
  uint32_t inferences_with_output = 0;  // of `iterations`, those that ran to the end (protocol 5)
  // Protocol 7: mean_ticks apart for the iterations that produced output and for those a
  // streaming op ended early (a mean of both is neither's time); 0 when none was of the kind.
  uint64_t output_mean_ticks = 0;
  uint64_t early_mean_ticks = 0;
  // Protocol 8: bit i set when the iteration of ticks[i] ended early.
  uint64_t early_times_mask = 0;
};
static_assert(kMaxIterationTimes <= 64, "Result::early_times_mask has a bit per time");

/// FAULT, board -> host: the record of the fault or watchdog reset that ended the previous run,
/// sent once, first in the session after the reset.
struct Fault {
  ResetCause cause = ResetCause::kUnknown;
  // The exception frame the core stacked (r0-r3, r12, lr, pc, xpsr), the stack pointer, the
  // EXC_RETURN value, and the fault status registers (CFSR, HFSR, MMFAR, BFAR; 0 for a
  // watchdog).
  uint32_t r0 = 0, r1 = 0, r2 = 0, r3 = 0, r12 = 0, lr = 0, pc = 0, xpsr = 0;
  uint32_t sp = 0, exc_return = 0;
  uint32_t cfsr = 0, hfsr = 0, mmfar = 0, bfar = 0;
};

// Encode returns the payload size, or 0 when `out` is too small. Decode returns false on a
// malformed payload.
size_t Encode(const Connect& m, uint8_t* out, size_t size);
size_t Encode(const Hello& m, uint8_t* out, size_t size);
size_t Encode(const BlobBegin& m, uint8_t* out, size_t size);
/// The chunk's header and its data (chunk.size bytes) together.
size_t Encode(const BlobChunk& m, uint8_t* out, size_t size);
size_t Encode(const BlobEnd& m, uint8_t* out, size_t size);
size_t Encode(const BlobStatus& m, uint8_t* out, size_t size);
size_t Encode(const RunCommand& m, uint8_t* out, size_t size);
size_t Encode(const ModelSlot& m, uint8_t* out, size_t size);
size_t Encode(const Log& m, uint8_t* out, size_t size);
size_t Encode(const OutputCheckMessage& m, uint8_t* out, size_t size);
size_t Encode(const Result& m, uint8_t* out, size_t size);
size_t Encode(const Fault& m, uint8_t* out, size_t size);

bool Decode(const uint8_t* payload, size_t size, Connect* m);
bool Decode(const uint8_t* payload, size_t size, Hello* m);
bool Decode(const uint8_t* payload, size_t size, BlobBegin* m);
bool Decode(const uint8_t* payload, size_t size, BlobChunk* m);
bool Decode(const uint8_t* payload, size_t size, BlobEnd* m);
bool Decode(const uint8_t* payload, size_t size, BlobStatus* m);
bool Decode(const uint8_t* payload, size_t size, RunCommand* m);
bool Decode(const uint8_t* payload, size_t size, ModelSlot* m);
bool Decode(const uint8_t* payload, size_t size, Log* m);
bool Decode(const uint8_t* payload, size_t size, OutputCheckMessage* m);
bool Decode(const uint8_t* payload, size_t size, Result* m);
bool Decode(const uint8_t* payload, size_t size, Fault* m);

/// Bytes of BLOB_CHUNK payload before the data.
inline constexpr size_t kChunkHeaderBytes = 4;

}  // namespace boardlab::link
