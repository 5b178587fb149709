#pragma once

// The firmware's runner, shared by both an505 builds and by the rt700 port: loads an artifact
// that is already in memory, takes the planned buffers and runtime pools from BoardMemory, runs
// the method "forward" `iterations` times, compares the outputs with the expected bytes, and
// finishes the ETDump. Where the bytes come from (semihosting files, the board link) and where
// the results go is the caller's business (main.cc, main_link.cc).
//
//   RunnerRequest request;
//   request.artifact = {bytes, size};
//   request.inputs[0] = InputSpec::Bytes(data, size);
//   RunnerResult result;
//   int exit_code = RunModel(request, &result);   // 0 pass, 1 mismatch, 2-4 errors (message set)
//
// Nothing on the model's path touches the heap; the result lives in static storage and in
// BoardMemory until the next RunModel or BoardMemory::Release. With keep_loaded, the loaded model
// stays for ContinueModel, which runs more cases on it with its state.

#include <stddef.h>
#include <stdint.h>

#include "firmware/board_memory.h"
#include "runtime/profiling/etdump/clock_record.h"

namespace boardlab::firmware {

/// Exit codes, the same as boardlab-run's (docs/runtime.md), plus 5 for a CPU fault
/// (startup.c's Default_Handler, semihosting build) and 2 for bad arguments.
inline constexpr int kExitPass = 0;
inline constexpr int kExitMismatch = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInvalidArtifact = 3;
inline constexpr int kExitRuntime = 4;
inline constexpr int kExitFault = 5;

inline constexpr size_t kMaxTensors = 64;   // inputs and expected outputs a request gives
inline constexpr size_t kMaxOutputs = 256;  // outputs a run returns (more is refused); ~50 KiB
inline constexpr size_t kMaxIterationTimes = 64;

struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

/// An input: bytes, or boardlab-run's random:SEED stream sized by the tensor.
struct InputSpec {
  Bytes bytes;
  bool random = false;
  uint64_t seed = 0;
};

/// One case's inputs and expected outputs.
struct RunnerCase {
  InputSpec inputs[kMaxTensors];
  size_t num_inputs = 0;  // inputs not given stay zero
  Bytes expected[kMaxTensors];
  size_t num_expected = 0;
};

struct RunnerResult;

/// Many cases on one loaded model (the semihosting build's --cases): RunModel loads the model
/// once, then asks `next` for each case, runs it and hands its result to `done`. Memory `next`
/// takes from BoardMemory for a case (its input files) is given back after `done`.
struct CaseSource {
  /// Fills `out` with case `index`. Returns kExitPass, kCaseSourceEnd after the last case, or an
  /// exit code (2-4) with the message in `result->message`.
  int (*next)(void* context, size_t index, RunnerCase* out, RunnerResult* result) = nullptr;
  /// The case's outputs and times are in `result` (valid until the next case runs); returns
  /// kExitPass, or an exit code (2-4) that stops the run.
  int (*done)(void* context, size_t index, RunnerResult* result) = nullptr;
  void* context = nullptr;
};
inline constexpr int kCaseSourceEnd = -1;

struct RunnerRequest {
  Bytes artifact;  // 64-byte aligned
  InputSpec inputs[kMaxTensors];
  size_t num_inputs = 0;  // inputs not given stay zero
  Bytes expected[kMaxTensors];
  size_t num_expected = 0;
  /// Not null: run these cases instead of `inputs` / `expected` (which are then ignored).
  const CaseSource* cases = nullptr;
  double atol = 0;
  int iterations = 1;
  bool etdump = false;
  /// Keep the model loaded after the run, with its state (streaming ops' frames, resource
  /// variables), for ContinueModel (the board link's later cases of one job, protocol 6).
  bool keep_loaded = false;
  /// Bytes of the artifact and the I/O files that the caller took from BoardMemory (they count
  /// in the "does not fit" message and check); 0 when they live elsewhere.
  size_t preallocated_artifact = 0;
  size_t preallocated_io = 0;
  /// What rt_pal_current_ticks counts on this board, recorded in the ETDump.
  runtime::etdump::ClockRecord clock;
  /// Called between kernels (from the profiling clock): watchdog and link service.
  void (*between_kernels)(void* context) = nullptr;
  void* context = nullptr;
};

struct OutputResult {
  Bytes bytes;
  uint32_t fnv1a32 = 0;
  bool checked = false;  // an expected output was given
  bool pass = false;
  bool comparable = true;  // false: the expected bytes do not match the tensor (error_text)
  double max_abs_diff = 0;
  size_t mismatches = 0;
  size_t elements = 0;
  char error_text[160] = {};
};

struct RunnerResult {
  int exit_code = 0;
  char message[320] = {};  // what failed (exit codes 2-4)
  bool verified = false;   // expected outputs were given and compared (cases: of this case)
  bool pass = false;       // cases: this case passed
  /// The last inference ended early (a kernel set KernelContext::end_inference, as TFLite
  /// Micro's CIRCULAR_BUFFER does until it holds enough frames): the outputs are an earlier
  /// inference's (or the arena's zeros), so none was compared. Not a failure: exit 0.
  bool no_output = false;
  size_t inferences_with_output = 0;  // of the iterations (cases: of this case's)
  size_t cases_run = 0;               // cases: how many ran, and how many of them passed
  size_t cases_passed = 0;
  size_t cases_no_output = 0;  // cases whose last inference ended early
  uint64_t mean_ticks = 0;     // per iteration, rt_pal_current_ticks units
  // The same apart for the iterations that produced output and for those that ended early (a
  // streaming op's early end runs part of the chain); 0 when there was none of the kind.
  uint64_t output_mean_ticks = 0;
  uint64_t early_mean_ticks = 0;
  uint64_t ticks[kMaxIterationTimes] = {};
  size_t num_times = 0;
  uint64_t early_times_mask = 0;  // bit i: the iteration of ticks[i] ended early
  size_t num_outputs = 0;
  OutputResult outputs[kMaxOutputs];
  Bytes etdump;
  size_t etdump_dropped_events = 0;
  size_t persistent_bytes = 0;
  bool arena_in_ram = false;
};

/// Runs the request; returns the exit code (also in result->exit_code): 0 pass, unverified or
/// no output (result->no_output), 1 mismatch (with cases: of any case), 2 bad request (inputs or
/// expected outputs of the wrong size or count), 3 invalid artifact, 4 runtime error or does not
/// fit.
int RunModel(const RunnerRequest& request, RunnerResult* result);

/// Runs one more case on the model the last RunModel kept loaded (request.keep_loaded), in the
/// state the earlier runs left it: a streaming op's frames and resource variables carry over, as
/// between the cases of one RunModel. `request.artifact` must be the bytes that run loaded (the
/// same address); `cases` and the memory fields are not used. Returns as RunModel does; 2 when
/// no such model is kept. A run that ends in an error (2-4) forgets the model. The model's
/// buffers stay taken from BoardMemory until the caller releases them (before the next
/// RunModel); what the case itself takes is given back.
int ContinueModel(const RunnerRequest& request, RunnerResult* result);

/// Bytes of the runtime pools a run takes from BoardMemory besides the planned buffers
/// (persistent, temp, and the ETDump buffer when `etdump`), for an early "does not fit" check.
size_t RunnerPoolBytes(bool etdump);

/// FNV-1a 32 of the bytes (the checksum boardlab-run prints).
uint32_t Fnv1a32(const uint8_t* data, size_t size);

}  // namespace boardlab::firmware
