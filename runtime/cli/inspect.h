#pragma once

// boardlab-run --inspect: the per-op profile from an ETDump file alone (no artifact, no run),
// optionally named through the compiler's debug map (docs/artifact-format.md section 4).
//
//   InspectOptions options;
//   std::string error;
//   std::optional<Inspection> i = InspectEtdump(etdp_bytes, debug_map, options, &error);
//   PrintProfileTable(i->profile, i->header);
//
// Rows: one per KernelCall ("OPERATOR_CALL") and DelegateCall ("DELEGATE_CALL") instruction of
// the "Execute" run blocks, averaged over them. CPU rows are named by the debug map's cpu_ops
// entry of their instruction ("DEPTHWISE_CONV_2D #1"), else by the "native_call_<op>" event.
// NPU kernel rows (delegate events) are "NPU kernel k", k = the kernel index in its partition,
// found through delegate_debug_id_int in the map's kernels[].id, with their TFLite source ops.
//
// Clock: the file's clock record (runtime/profiling/etdump/clock_record.h), or the tick-rate
// events of an older boardlab-run; without either the clock is unknown and the rows show raw
// ticks, with microseconds only when the caller assumes a rate. NPU kernel rows say where they
// ran from their delegate metadata (npu, npu-emulated-cortex-m33), CPU rows ran on the CPU.

#include <cstdint>
#include <optional>
#include <string>

#include "nlohmann/json.hpp"
#include "runtime/cli/profile_table.h"
#include "runtime/core/span.h"
#include "runtime/profiling/etdump/clock_record.h"
#include "runtime/profiling/etdump/etdump_reader.h"

namespace boardlab::run {

struct InspectOptions {
  /// Ticks per second to assume for a file whose clock is unknown; 0 = assume nothing (no us).
  double assumed_ticks_per_second = 0;
};

struct Inspection {
  Profile profile;
  std::string header;  // one line describing the source and the runs (the clock has its own)
};

/// Whether profile event `r` is named `name` (delegate events have no name).
bool EventNamed(const runtime::etdump::ProfileRow& r, const char* name);

/// The op of a "native_call_<op>.out" event name: "native_call_conv_2d.out" -> "conv_2d".
std::string NativeCallOp(const char* name);

/// Where the kernel of delegate event `r` ran (ExecutionUnitName), "npu" for the unit-less NPU
/// kernels of an older boardlab-run's files (clock.legacy), which came from the simulator.
std::string KernelRanOn(const runtime::etdump::ProfileRow& r, const ProfileClock& clock);

/// The profile clock of an ETDump clock record.
ProfileClock ProfileClockFrom(const runtime::etdump::ClockRecord& record);

/// `etdp`: the .etdp bytes; `debug_map`: the compiler's debug map, null for none (rows are then
/// named from the events). nullopt with `error` set when the ETDump does not verify.
std::optional<Inspection> InspectEtdump(runtime::Span<const uint8_t> etdp,
                                        const nlohmann::json& debug_map,
                                        const InspectOptions& options, std::string* error);

}  // namespace boardlab::run
