#include "runtime/cli/trace_event_json.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace boardlab::run {
namespace {

using nlohmann::json;

constexpr int kPid = 1;

int Tid(Lane lane) { return static_cast<int>(lane) + 1; }

// A count rounded to an integer; one beyond uint64 (a malformed ETDump's clock can scale ticks
// that far) saturates, where the conversion would be undefined.
uint64_t RoundedCount(double count) {
  const double rounded = count + 0.5;
  if (rounded >= std::ldexp(1.0, 64)) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(rounded);
}

// The clock a slice's own duration counts: NPU kernels and prefetches may tick on the delegate
// clock (--clock wall).
const std::string& SliceClock(const ProfileClock& clock, const TimelineSlice& slice) {
  const bool delegate =
      slice.kind == SliceKind::kNpuKernel || slice.kind == SliceKind::kWeightPrefetch;
  return delegate && !clock.delegate_kind.empty() ? clock.delegate_kind : clock.kind;
}

json Metadata(const char* name, const json& args, int tid = 0) {
  json event = {{"ph", "M"}, {"pid", kPid}, {"name", name}, {"args", args}};
  if (tid != 0) event["tid"] = tid;
  return event;
}

std::string ProcessName(const std::string& source, const TimeUnit& unit) {
  std::string name = "boardlab profile of " + source;
  if (unit.name != "us") name += " (time axis: " + unit.name + ", shown as if microseconds)";
  return name;
}

}  // namespace

json SliceArgs(const Timeline& timeline, const TimelineSlice& slice) {
  const ProfileRow& r = slice.row;
  json args = {{"instruction", r.instruction},
               {"ran_on", r.ran_on},
               {"clock", SliceClock(timeline.clock, slice)},
               {"ticks", r.ticks}};
  if (!r.source_ops.empty()) args["ops"] = r.source_ops;
  if (r.subgraph > 0) args["subgraph"] = r.subgraph;
  if (!r.source_name.empty()) args["op_name"] = r.source_name;
  if (!r.layer.empty()) args["layer"] = r.layer;
  if (r.macs >= 0) args["macs"] = r.macs;
  if (r.cycles >= 0) args["cycles"] = RoundedCount(r.cycles);
  if (r.instructions >= 0) args["instructions"] = RoundedCount(r.instructions);
  if (r.us >= 0) args["us"] = r.us;
  if (r.debug_id != -1) args["debug_id"] = r.debug_id;
  if (r.kernel != -1) args["kernel"] = r.kernel;
  if (slice.bytes >= 0) args["bytes"] = slice.bytes;
  if (slice.slot >= 0) args["slot"] = slice.slot;
  return args;
}

json TraceEventJson(const Timeline& timeline, const std::string& source) {
  const TimeUnit unit = TraceUnit(timeline.clock);
  json events = json::array();
  events.push_back(Metadata("process_name", {{"name", ProcessName(source, unit)}}));
  events.push_back(Metadata("process_labels", {{"labels", ClockLabel(timeline.clock)}}));
  for (int l = 0; l < kNumLanes; ++l) {
    const Lane lane = static_cast<Lane>(l);
    if (!LaneShown(timeline, lane)) continue;
    events.push_back(Metadata("thread_name", {{"name", LaneTitle(timeline, lane)}}, Tid(lane)));
    events.push_back(Metadata("thread_sort_index", {{"sort_index", l}}, Tid(lane)));
  }
  for (const TimelineSlice& s : timeline.slices) {
    events.push_back({{"ph", "X"},
                      {"pid", kPid},
                      {"tid", Tid(s.lane)},
                      {"name", s.row.op},
                      {"cat", SliceKindName(s.kind)},
                      {"ts", s.start * unit.per_tick},
                      {"dur", (s.end - s.start) * unit.per_tick},
                      {"args", SliceArgs(timeline, s)}});
  }
  json trace = {{"traceEvents", events},
                {"otherData",
                 {{"generator", "boardlab"},
                  {"source", source},
                  {"clock", timeline.clock.kind},
                  {"clock_label", ClockLabel(timeline.clock)},
                  {"ts_unit", unit.name},
                  {"run", timeline.run},
                  {"runs", timeline.runs}}}};
  if (unit.name == "us") trace["displayTimeUnit"] = "ns";
  return trace;
}

}  // namespace boardlab::run
