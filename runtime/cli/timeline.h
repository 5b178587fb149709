#pragma once

// A profile as a timeline: one Execute run of an ETDump laid out on lanes (the Cortex-M33, the
// NPU, the weight-prefetch DMA), one slice per kernel, named through the compiler's debug map
// (debug_map_names.h). The Chrome trace (trace_event_json.h) and the SVG picture
// (timeline_svg.h) are both drawn from it, so they always show the same slices.
//
//   std::string error;
//   std::optional<Timeline> timeline = TimelineFromEtdump(etdp_bytes, debug_map, &error);
//   nlohmann::json trace = TraceEventJson(*timeline, "kws.etdp");
//   std::string svg = TimelineSvg(*timeline, "kws.etdp");
//
// Which run: the last "Execute" block that is complete, i.e. holds its "Method::execute" event
// (the ETDump writer drops events beyond its capacity, which can cut the last blocks short).
//
// Lanes and slices:
//   Cortex-M33  one slice per KernelCall ("OPERATOR_CALL", a CPU op) and per DelegateCall
//               ("DELEGATE_CALL": the core starting its NPU kernels and waiting for them, or,
//               under emulation, running them in software)
//   NPU         one slice per NPU kernel (delegate event with an int debug id)
//   DMA         one slice per weight prefetch (named delegate event "weight_prefetch:<id>",
//               runtime/npu/npu_backend.h), only in programs with weights in flash
// Each slice says where it ran (ExecutionUnitName: cpu, npu, npu-emulated-cortex-m33, dma,
// dma-emulated-cortex-m33) as its event recorded it, so emulated time never reads as NPU time.
//
// Time: ticks of the file's clock (its clock record, clock_record.h) from the start of the run's
// Method::execute. Delegate events that tick on another clock (--clock wall: the timing model's
// NPU cycles) keep their offsets from the first delegate event of their call, converted to the
// main clock through the two rates (1:1 when a rate is unknown), from the call's start.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"
#include "runtime/cli/profile_table.h"

namespace boardlab::run {

enum class Lane : int { kCortexM33 = 0, kNpu = 1, kDma = 2 };
inline constexpr int kNumLanes = 3;

enum class SliceKind {
  kCpuOp,           // a KernelCall on the core
  kDelegateCall,    // a DelegateCall: the core's time in the NPU backend
  kNpuKernel,       // one NPU kernel
  kWeightPrefetch,  // one weight transfer from flash into an SRAM scratch slot
};

/// "cpu_op", "delegate_call", "npu_kernel", "weight_prefetch" (the trace's categories).
const char* SliceKindName(SliceKind kind);

struct TimelineSlice {
  Lane lane = Lane::kCortexM33;
  SliceKind kind = SliceKind::kCpuOp;
  double start = 0;  // ticks of the main clock from the run's start
  double end = 0;
  // Label (op), instruction, ran_on, the duration in its own clock (ticks) with its cycles /
  // instructions / us (SetCounts), and what the debug map knows (source_ops, layer, source_name,
  // macs, debug_id, kernel). A weight prefetch carries the loading kernel's debug_id, kernel and
  // source ops.
  ProfileRow row;
  int64_t bytes = -1;  // weight prefetch: bytes copied
  int slot = -1;       // weight prefetch: scratch slot
};

struct Timeline {
  ProfileClock clock;
  int run = 0;  // the drawn Execute run, 1-based among `runs` complete ones
  int runs = 0;
  double duration = 0;                // ticks of the run's Method::execute
  std::vector<TimelineSlice> slices;  // by lane, then by start
};

/// A unit for the time of a timeline: value = ticks * per_tick.
struct TimeUnit {
  std::string name;  // "us", "cycles", "instructions" or "ticks"
  double per_tick = 1;
};

/// The unit a person reads the timeline in: the profile's own count (cycles on a cycle clock,
/// QEMU instructions, raw ticks on an unknown clock), microseconds on a clock that is a time
/// (host-wall, qemu-virtual-time).
TimeUnit AxisUnit(const ProfileClock& clock);

/// The unit of a Chrome trace's "ts": microseconds whenever the clock's rate makes its ticks a
/// time (not for qemu-icount, whose virtual time is an instruction count); else AxisUnit.
TimeUnit TraceUnit(const ProfileClock& clock);

/// Where the slices of a lane ran (ExecutionUnitNames).
std::set<std::string> LaneUnits(const Timeline& timeline, Lane lane);

/// The lane's title for people, from where its slices ran: "Cortex-M33", "NPU (simulator timing
/// model)", "NPU kernels run on the Cortex-M33 (software engine)", "weight DMA (simulator timing
/// model)", "weight copies by the Cortex-M33 (memcpy)".
std::string LaneTitle(const Timeline& timeline, Lane lane);

/// Whether the lane is drawn: the Cortex-M33 and NPU lanes always, the DMA lane when the run
/// has weight prefetches.
bool LaneShown(const Timeline& timeline, Lane lane);

/// The timeline of `etdp` (the .etdp bytes, any alignment), named after `debug_map` (a JSON
/// object, or null for none). nullopt with `error` set when the bytes are not an ETDump or hold
/// no complete Execute run.
std::optional<Timeline> TimelineFromEtdump(std::string_view etdp, const nlohmann::json& debug_map,
                                           std::string* error);

}  // namespace boardlab::run
