// boardlab-firmware-an505 (the board-link build): the firmware of a board that speaks the board
// link protocol (docs/board-protocol.md) on its UART, here CMSDK UART0 of QEMU mps2-an505 (run
// it with firmware/qemu-board.sh). It announces itself, keeps the artifacts it receives in an
// artifact cache, runs them with the shared runner (firmware/runner.h) and sends outputs, ETDump
// and results back. It never exits: a fault or the watchdog resets it, and the next session
// starts with the FAULT record.
//
// Memory (QEMU mps2-an505, link.ld): the artifact cache (8 MB) and the job area for inputs and
// expected outputs (1 MB) are taken from the top of PSRAM once; the RAM pool and the rest of
// PSRAM serve each run and are released after it.

#include <stdio.h>
#include <string.h>

#include "firmware/an505_board_support.h"
#include "firmware/an505_link_pal.h"
#include "firmware/an505_platform.h"
#include "firmware/board_memory.h"
#include "firmware/runner.h"
#include "runtime/link/board_endpoint.h"

namespace boardlab::firmware {
namespace {

constexpr size_t kCacheBytes = 8u << 20;
constexpr size_t kJobBytes = 1u << 20;
constexpr size_t kMaxPayload = link::BoardEndpoint::kMaxPayload;
constexpr uint8_t kWindow = 4;         // frames the board sends before waiting for an ACK
constexpr uint8_t kReceiveWindow = 8;  // frames the host may send ahead (kept after a loss)

uint8_t tx_storage[kWindow * kMaxPayload];
uint8_t rx_storage[kMaxPayload + link::kFrameOverhead];
uint8_t reorder_storage[kReceiveWindow * kMaxPayload];

unsigned long U(size_t v) { return static_cast<unsigned long>(v); }

// The shared runner behind the board link: a run's buffers come from BoardMemory and go back to
// it at the start of the next run (the outputs and the ETDump must survive until they are sent).
class FirmwareRunner : public link::BoardRunner {
 public:
  FirmwareRunner(BoardMemory::Mark empty, int icount_shift)
      : empty_(empty), clock_(BoardClockRecord(icount_shift)) {}

  void Run(const link::RunRequest& request, link::RunOutcome* outcome) override {
    BoardMemory& memory = BoardMemory::Get();
    memory.Release(empty_);
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
    static RunnerResult result;
    RunModel(r, &result);
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
    out.verdict = !in.verified ? link::Verdict::kUnverified
                  : in.pass    ? link::Verdict::kPass
                               : link::Verdict::kFail;
    if (in.num_outputs > link::kMaxTensors) {  // the host refuses such models before RUN
      out.exit_code = static_cast<uint8_t>(kExitRuntime);
      out.verdict = link::Verdict::kError;
      snprintf(out.message, sizeof(out.message),
               "the model has %lu outputs; the board link carries at most %lu", U(in.num_outputs),
               U(link::kMaxTensors));
      return;
    }
    out.mean_ticks = in.mean_ticks;
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
             "memory: RAM pool %lu of %lu bytes used, PSRAM %lu of %lu; persistent %lu, arena %s",
             U(memory.ram_used()), U(memory.ram_capacity()), U(memory.psram_used()),
             U(memory.psram_capacity()), U(in.persistent_bytes),
             in.arena_in_ram ? "in RAM" : "in PSRAM");
  }

  BoardMemory::Mark empty_;
  runtime::etdump::ClockRecord clock_;
};

void LogToHost(void* endpoint, int level, const char* text) {
  static_cast<link::BoardEndpoint*>(endpoint)->Log(static_cast<uint8_t>(level), text);
}

[[noreturn]] void Serve() {
  BoardMemory& memory = BoardMemory::Get();
  uint8_t* cache = memory.Reserve(kCacheBytes);
  uint8_t* job = memory.Reserve(kJobBytes);
  static const link::MemoryRegion regions[] = {
      {"code", 0x10000000u, 4u << 20},
      {"ram", 0x38000000u, 4u << 20},
      {"psram", 0x80000000u, 16u << 20},
  };
  static An505BoardSupport board;
  board.Init(regions, sizeof(regions) / sizeof(regions[0]));
  static FirmwareRunner runner(memory.mark(), board.info().icount_shift);
  link::BoardEndpointMemory buffers;
  buffers.tx = tx_storage;
  buffers.tx_size = sizeof(tx_storage);
  buffers.rx = rx_storage;
  buffers.rx_size = sizeof(rx_storage);
  buffers.reorder = reorder_storage;
  buffers.reorder_size = sizeof(reorder_storage);
  buffers.cache = cache;
  buffers.cache_size = kCacheBytes;
  buffers.job = job;
  buffers.job_size = kJobBytes;
  link::LinkOptions options;
  options.window = kWindow;
  static link::BoardEndpoint endpoint(board, runner, buffers, options);
  SetLogSink(&LogToHost, &endpoint);
  endpoint.Serve();
  for (;;) {  // Serve returns only when the board support's Reset returns, which it does not
  }
}

}  // namespace
}  // namespace boardlab::firmware

int main() { boardlab::firmware::Serve(); }
