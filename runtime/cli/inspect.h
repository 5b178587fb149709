#pragma once

// boardlab-run --inspect: the per-op profile from an ETDump file alone (no artifact, no run),
// optionally named through the compiler's debug map (docs/artifact-format.md section 4).
//
//   InspectOptions options{.default_ticks_per_second = 325e6};
//   std::string error;
//   std::optional<Inspection> i = InspectEtdump(etdp_bytes, map_json, options, &error);
//   PrintProfileTable(i->profile, i->header);
//
// Rows: one per KernelCall ("OPERATOR_CALL") and DelegateCall ("DELEGATE_CALL") instruction of
// the "Execute" run blocks, averaged over them. CPU rows are named by the debug map's cpu_ops
// entry of their instruction ("DEPTHWISE_CONV_2D #1"), else by the "native_call_<op>" event.
// NPU kernel rows (delegate events) are "NPU kernel k", k = the kernel index in its partition,
// found through delegate_debug_id_int in the map's kernels[].id, with their TFLite source ops.
//
// Tick rate: boardlab-run records it in the "Default" run block as zero-based ProfileEvents one
// second long (end_time = ticks per second), see kSimRateEvent and friends. Files without them
// are read as simulated CPU cycles at `default_ticks_per_second`.

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/cli/profile_table.h"
#include "runtime/core/span.h"

namespace boardlab::run {

/// Ticks of the non-delegate events are simulated CPU cycles, this many per second.
inline constexpr const char kSimRateEvent[] = "boardlab::sim_cycles_per_second";
/// Ticks of the non-delegate events are host wall-clock ticks, this many per second.
inline constexpr const char kWallRateEvent[] = "boardlab::wall_ticks_per_second";
/// Ticks of the delegate (NPU kernel) events, this many per second (simulated CPU cycles with the
/// sim clock; NPU cycles with the wall clock).
inline constexpr const char kDelegateRateEvent[] = "boardlab::delegate_ticks_per_second";

struct InspectOptions {
  double default_ticks_per_second = 325e6;
};

struct Inspection {
  Profile profile;
  std::string header;  // one line describing the source, clock and runs
  double ticks_per_second = 0;
  double delegate_ticks_per_second = 0;
  bool rate_recorded = false;  // false: default_ticks_per_second was assumed
};

/// `etdp`: the .etdp bytes; `debug_map_json`: empty for none. nullopt with `error` set when the
/// ETDump does not verify or the debug map is not JSON.
std::optional<Inspection> InspectEtdump(runtime::Span<const uint8_t> etdp,
                                        const std::string& debug_map_json,
                                        const InspectOptions& options, std::string* error);

}  // namespace boardlab::run
