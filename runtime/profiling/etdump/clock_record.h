#pragma once

// What the timestamps of an ETDump count. ETDump stores raw ticks and has no field for their
// unit (executorch-formats.md 3.3), so boardlab writes the clock into the file as named integer
// DebugEvents of the "Default" run block, which ExecuTorch's tools read as the block's debug data
// (docs/runtime.md, "Clock and where it ran"):
//
//   DebugEvent name                        Int value
//   "boardlab::clock=<kind>"               ticks per second of the non-delegate events (0: unknown)
//   "boardlab::delegate_clock=<kind>"      ticks per second of the delegate (NPU kernel) events,
//                                          only when they tick on another clock
//   "boardlab::icount_shift"               QEMU's -icount shift (qemu-icount only)
//   "boardlab::core_hz"                    the core clock frequency, when known
//
// Writers (boardlab-run, the firmware) call WriteClockRecord once, right after LoadMethod; the
// readers (boardlab-run --inspect) call ReadClockRecord. Portable: no heap, no exceptions.
//
//   ClockRecord clock{ClockKind::kQemuIcount, 20000000};
//   clock.icount_shift = 0;
//   WriteClockRecord(writer, clock);

#include <cstddef>
#include <cstdint>

#include "boardlab/schema/etdump_generated.h"

namespace boardlab::runtime::etdump {

class EtdumpWriter;

/// The clocks boardlab's ETDumps are stamped with. Names are part of the file format.
enum class ClockKind : uint8_t {
  kUnknown = 0,
  kSimCycles,        // "rt700-sim-cycles": simulated RT700 CPU cycles (host simulator's model)
  kSimNpuCycles,     // "rt700-sim-npu-cycles": simulated NPU cycles (the NPU timing model)
  kQemuIcount,       // "qemu-icount": QEMU virtual time under -icount, i.e. instruction counts
  kQemuVirtualTime,  // "qemu-virtual-time": QEMU virtual time paced by the host (no -icount)
  kDwtCycles,        // "dwt-cycles": the DWT cycle counter of a real Cortex-M core
  kHostWall,         // "host-wall": host monotonic time (boardlab-run --clock wall)
};

/// The file-format name ("rt700-sim-cycles" ...), "unknown" for kUnknown.
const char* ClockKindName(ClockKind kind);
/// The kind named by `name` (`size` bytes, not NUL-terminated); kUnknown when none is.
ClockKind ClockKindFromName(const char* name, size_t size);

struct ClockRecord {
  ClockKind kind = ClockKind::kUnknown;
  uint64_t ticks_per_second = 0;  // of the non-delegate events; 0 = unknown
  int32_t icount_shift = -1;      // QEMU -icount shift; -1 = none
  uint64_t core_hz = 0;           // core clock frequency; 0 = unknown
  // Delegate (NPU kernel) events, when they tick on another clock; kUnknown = the same as above.
  ClockKind delegate_kind = ClockKind::kUnknown;
  uint64_t delegate_ticks_per_second = 0;
  // Read back from the tick-rate ProfileEvents of boardlab-run before clock records existed
  // (host simulator files only); false for a real record or none.
  bool legacy = false;
};

/// Logs `clock` as the DebugEvents above into the writer's open run.
void WriteClockRecord(EtdumpWriter& writer, const ClockRecord& clock);

/// The clock of `etdump`: its record, else the legacy tick-rate events, else kind kUnknown.
ClockRecord ReadClockRecord(const ::etdump::ETDump& etdump);

}  // namespace boardlab::runtime::etdump
