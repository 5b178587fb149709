#pragma once

// What a board must provide so that the board link's firmware side (BoardEndpoint) runs on it:
// a byte stream, a millisecond clock, a watchdog, the cause of the last reset with its fault
// record, a software reset, and facts for HELLO. The `an505` port (firmware/an505_board_support.h,
// QEMU mps2-an505: CMSDK UART0, timer, watchdog) implements it; an `rt700` port supplies the same
// for the MIMXRT700-EVK (LPUART/Flexcomm debug UART, DWT cycle counter, WWDT). The runtime's own
// port layer (runtime/platform/platform.h: rt_pal_current_ticks for profile timestamps) is
// separate; BoardInfo says what its ticks count.
//
//   class MyBoard : public boardlab::link::BoardSupport { ... };
//   MyBoard board;
//   BoardEndpoint endpoint(board, runner, buffers, options);
//   endpoint.Serve();          // never returns on a board

#include <stddef.h>
#include <stdint.h>

#include "runtime/link/messages.h"

namespace boardlab::link {

/// Facts the board announces in HELLO. Strings are static.
struct BoardInfo {
  const char* board = "";             // short name: "an505", "rt700"
  const char* firmware_version = "";  // e.g. "0.1.0"
  const char* build_id = "";          // unique per build (the agent reflashes when it differs)
  const char* clock = "";             // what rt_pal_current_ticks counts
  uint64_t ticks_per_second = 0;
  uint64_t core_hz = 0;      // 0 when there is no meaningful core clock (QEMU)
  int8_t icount_shift = -1;  // QEMU -icount shift; -1 elsewhere
  const char* npu = "";      // where NPU partitions run, e.g. "emulated on cortex-m33"
  const MemoryRegion* regions = nullptr;
  uint8_t num_regions = 0;
};

class BoardSupport {
 public:
  /// Reads up to `size` bytes into `data`, waiting at most `timeout_ms` for the first one.
  /// Returns how many were read (0 on timeout). Must not lose bytes that arrive while Write runs
  /// (a receive ring filled by an interrupt, DMA, or Write itself).
  virtual size_t Read(uint8_t* data, size_t size, uint32_t timeout_ms) = 0;
  /// Writes all `size` bytes (blocking until the UART took them).
  virtual void Write(const uint8_t* data, size_t size) = 0;
  /// A monotonic millisecond counter for the protocol's timers (wraps at 2^32).
  virtual uint32_t Milliseconds() = 0;
  /// Restarts the watchdog's count. Called at least every few milliseconds while idle and between
  /// kernels while a model runs.
  virtual void KickWatchdog() = 0;
  /// Why the board last started, and the fault record of a fault or watchdog reset (false when
  /// there is none).
  virtual ResetCause reset_cause() const = 0;
  virtual bool fault_record(Fault* fault) const = 0;
  /// A software reset (records ResetCause::kSoftware first). Does not return on a board; a test
  /// double may return, after which the endpoint stops (Step() returns false).
  virtual void Reset() = 0;
  /// Causes `fault` (TestFault, for the host's recovery tests). Does not return on a board that
  /// supports it; returns false when unsupported (the run's result is then sent as usual), true
  /// when a test double simulated the fault and the reset after it (the endpoint stops).
  virtual bool CauseTestFault(TestFault fault) = 0;
  virtual const BoardInfo& info() const = 0;

 protected:
  ~BoardSupport() = default;
};

}  // namespace boardlab::link
