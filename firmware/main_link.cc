// The board-link firmware, shared by every board ELF (boardlab-firmware-an505 on QEMU
// mps2-an505, boardlab-firmware-rt700 on the MIMXRT700-EVK): a board that speaks the board link
// protocol (docs/board-protocol.md) on its UART. It announces itself, keeps the artifacts it
// receives in an artifact cache, runs them with the shared runner (firmware/runner.h) and sends
// outputs, ETDump and results back. It never exits: a fault or the watchdog resets it, and the
// next session starts with the FAULT record. The board part is StartLinkBoard (link_board.h).
//
// Memory: the artifact cache, the job area for inputs and expected outputs and the link's
// reorder buffer are taken from the top of the bulk pool once, in the sizes the board asks for;
// the RAM pool, the rest of the bulk pool and the scratch pool serve each run and are released
// after it.

#include <stdio.h>
#include <string.h>

#include "firmware/board_memory.h"
#include "firmware/link_board.h"
#include "firmware/link_pal.h"
#include "firmware/runner.h"
#include "runtime/link/board_endpoint.h"

namespace boardlab::firmware {
namespace {

constexpr size_t kMaxPayload = link::BoardEndpoint::kMaxPayload;
static_assert(link::kMaxTensors <= kMaxTensors, "a RUN's inputs must fit the runner's request");
constexpr uint8_t kWindow = 4;  // frames the board sends before waiting for an ACK

uint8_t tx_storage[kWindow * kMaxPayload];
uint8_t rx_storage[kMaxPayload + link::kFrameOverhead];

unsigned long U(size_t v) { return static_cast<unsigned long>(v); }

// The shared runner behind the board link: a run's buffers come from BoardMemory and go back to
// it at the start of the next run (the outputs and the ETDump must survive until they are sent).
class FirmwareRunner : public link::BoardRunner {
 public:
  FirmwareRunner(BoardMemory::Mark empty, const runtime::etdump::ClockRecord& clock)
      : empty_(empty), clock_(clock) {}

  void Run(const link::RunRequest& request, link::RunOutcome* outcome) override {
    BoardMemory& memory = BoardMemory::Get();
    RunnerRequest r;
    r.artifact = {request.artifact.data, request.artifact.size};
    r.num_inputs = request.num_inputs;
    for (size_t i = 0; i < r.num_inputs; ++i) {
      r.inputs[i].bytes = {request.inputs[i].data, request.inputs[i].size};
    }
    r.num_expected = request.num_expected;
    for (size_t i = 0; i < r.num_expected; ++i) {
      r.expected[i] = {request.expected[i].data, request.expected[i].size};
    }
    r.atol = request.atol;
    r.iterations = static_cast<int>(request.iterations);
    r.etdump = request.want_etdump;
    r.clock = clock_;
    r.between_kernels = request.between_kernels;
    r.context = request.context;
    // Every run keeps its model for the job's next case (protocol 6); a run that does not
    // continue gives the last model's buffers back and loads afresh.
    r.keep_loaded = true;
    static RunnerResult result;
    if (request.continue_loaded) {
      ContinueModel(r, &result);
    } else {
      memory.Release(empty_);
      RunModel(r, &result);
    }
    Translate(result, memory, outcome);
    outcome->result.iterations = request.iterations;
  }

 private:
  static void Translate(const RunnerResult& in, const BoardMemory& memory,
                        link::RunOutcome* outcome) {
    link::Result& out = outcome->result;
    out.exit_code = static_cast<uint8_t>(in.exit_code);
    if (in.exit_code > 1) {
      out.verdict = link::Verdict::kError;
      snprintf(out.message, sizeof(out.message), "%.250s", in.message);  // cut to fit RESULT
      return;
    }
    out.verdict = in.no_output   ? link::Verdict::kNoOutput
                  : !in.verified ? link::Verdict::kUnverified
                  : in.pass      ? link::Verdict::kPass
                                 : link::Verdict::kFail;
    out.inferences_with_output = static_cast<uint32_t>(in.inferences_with_output);
    if (in.num_outputs > link::kMaxTensors) {  // the host refuses such models before RUN
      out.exit_code = static_cast<uint8_t>(kExitRuntime);
      out.verdict = link::Verdict::kError;
      snprintf(out.message, sizeof(out.message),
               "the model has %lu outputs; the board link carries at most %lu", U(in.num_outputs),
               U(link::kMaxTensors));
      return;
    }
    out.mean_ticks = in.mean_ticks;
    out.output_mean_ticks = in.output_mean_ticks;
    out.early_mean_ticks = in.early_mean_ticks;
    out.early_times_mask = in.early_times_mask;
    out.num_times = static_cast<uint16_t>(in.num_times);
    memcpy(out.ticks, in.ticks, sizeof(uint64_t) * in.num_times);
    out.num_outputs = static_cast<uint8_t>(in.num_outputs);
    for (size_t i = 0; i < in.num_outputs; ++i) {
      const OutputResult& o = in.outputs[i];
      out.outputs[i] = link::OutputCheck{
          static_cast<uint32_t>(o.bytes.size), o.fnv1a32,      static_cast<uint8_t>(o.checked),
          static_cast<uint8_t>(o.pass),        o.max_abs_diff, static_cast<uint32_t>(o.mismatches),
          static_cast<uint32_t>(o.elements)};
      outcome->outputs[i] = {o.bytes.data, o.bytes.size};
    }
    outcome->etdump = {in.etdump.data, in.etdump.size};
    snprintf(out.message, sizeof(out.message),
             "memory: RAM pool %lu of %lu bytes used, %s %lu of %lu; persistent %lu, arena %s",
             U(memory.ram_used()), U(memory.ram_capacity()), BoardMemory::bulk_name(),
             U(memory.psram_used()), U(memory.psram_capacity()), U(in.persistent_bytes),
             in.arena_in_ram ? "in RAM" : "in the bulk pool");
  }

  BoardMemory::Mark empty_;
  runtime::etdump::ClockRecord clock_;
};

void LogToHost(void* endpoint, int level, const char* text) {
  static_cast<link::BoardEndpoint*>(endpoint)->Log(static_cast<uint8_t>(level), text);
}

[[noreturn]] void Serve() {
  static const LinkBoard board = StartLinkBoard();
  BoardMemory& memory = BoardMemory::Get();
  uint8_t* cache = memory.Reserve(board.cache_bytes);
  uint8_t* job = memory.Reserve(board.job_bytes);
  const size_t reorder_bytes = size_t{board.receive_window} * kMaxPayload;
  uint8_t* reorder = memory.Reserve(reorder_bytes);
  static FirmwareRunner runner(memory.mark(), board.clock);
  link::BoardEndpointMemory buffers;
  buffers.tx = tx_storage;
  buffers.tx_size = sizeof(tx_storage);
  buffers.rx = rx_storage;
  buffers.rx_size = sizeof(rx_storage);
  buffers.reorder = reorder;
  buffers.reorder_size = reorder == nullptr ? 0 : reorder_bytes;
  buffers.cache = cache;
  buffers.cache_size = cache == nullptr ? 0 : board.cache_bytes;
  buffers.job = job;
  buffers.job_size = job == nullptr ? 0 : board.job_bytes;
  buffers.model_slot = board.model_slot;
  buffers.model_slot_size = board.model_slot_bytes;
  link::LinkOptions options;
  options.window = kWindow;
  static link::BoardEndpoint endpoint(*board.support, runner, buffers, options);
  SetLogSink(&LogToHost, &endpoint);
  endpoint.Serve();
  for (;;) {  // Serve returns only when the board support's Reset returns, which it does not
  }
}

}  // namespace
}  // namespace boardlab::firmware

int main() { boardlab::firmware::Serve(); }
