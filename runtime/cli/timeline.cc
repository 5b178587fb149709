#include "runtime/cli/timeline.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "runtime/cli/aligned_buffer.h"
#include "runtime/cli/debug_map_names.h"
#include "runtime/cli/inspect.h"
#include "runtime/core/error.h"
#include "runtime/npu/npu_backend.h"
#include "runtime/profiling/etdump/clock_record.h"
#include "runtime/profiling/etdump/etdump_reader.h"

namespace boardlab::run {
namespace {

namespace et = runtime::etdump;
using nlohmann::json;

bool IsDelegateEvent(const et::ProfileRow& r) {
  return r.delegate_debug_id != -1 || r.delegate_debug_name != nullptr;
}

// The debug id in "weight_prefetch:<id>", or nullopt for any other named delegate event.
std::optional<int32_t> PrefetchedKernel(const et::ProfileRow& r) {
  const size_t prefix = std::strlen(runtime::npu::kWeightPrefetchEventPrefix);
  if (r.delegate_debug_name == nullptr ||
      std::strncmp(r.delegate_debug_name, runtime::npu::kWeightPrefetchEventPrefix, prefix) != 0) {
    return std::nullopt;
  }
  char* end = nullptr;
  const long id = std::strtol(r.delegate_debug_name + prefix, &end, 10);
  if (end == r.delegate_debug_name + prefix || *end != '\0') return std::nullopt;
  return static_cast<int32_t>(id);
}

// One complete Execute block of the file: its events and its Method::execute event.
struct ExecuteRun {
  std::vector<et::ProfileRow> events;
  size_t method = 0;  // index in `events`
  const et::ProfileRow& method_event() const { return events[method]; }
};

std::vector<ExecuteRun> CompleteExecuteRuns(const std::vector<et::ProfileRow>& rows) {
  std::map<uint32_t, std::vector<et::ProfileRow>> blocks;
  for (const et::ProfileRow& r : rows) {
    if (r.run_name != nullptr && std::strcmp(r.run_name, "Execute") == 0) {
      blocks[r.run].push_back(r);
    }
  }
  std::vector<ExecuteRun> complete;
  for (auto& [index, events] : blocks) {
    const auto method = std::find_if(events.begin(), events.end(), [](const et::ProfileRow& r) {
      return EventNamed(r, "Method::execute");
    });
    if (method == events.end()) continue;
    const size_t at = static_cast<size_t>(method - events.begin());
    complete.push_back({std::move(events), at});
  }
  return complete;
}

// Converts delegate event times to the run's main-clock ticks from its start.
class DelegatePlacement {
 public:
  DelegatePlacement(const ProfileClock& clock, const ExecuteRun& run)
      : origin_(run.method_event().start) {
    own_clock_ = !clock.delegate_kind.empty() && clock.delegate_kind != clock.kind;
    if (clock.ticks_per_second > 0 && clock.delegate_ticks_per_second > 0) {
      ratio_ = clock.ticks_per_second / clock.delegate_ticks_per_second;
    }
    for (const et::ProfileRow& r : run.events) {
      if (EventNamed(r, "DELEGATE_CALL")) call_start_.emplace(r.instruction, r.start);
      if (!IsDelegateEvent(r)) continue;
      const auto first = first_event_.emplace(r.instruction, r.start).first;
      first->second = std::min(first->second, r.start);
    }
  }

  double Start(const et::ProfileRow& r) const { return Place(r, r.start); }
  double End(const et::ProfileRow& r) const { return Place(r, std::max(r.start, r.end)); }

 private:
  double Place(const et::ProfileRow& r, uint64_t t) const {
    const auto call = call_start_.find(r.instruction);
    if (!own_clock_ || call == call_start_.end()) return Since(origin_, t);
    const double offset = Since(first_event_.at(r.instruction), t) * ratio_;
    return Since(origin_, call->second) + offset;
  }
  static double Since(uint64_t from, uint64_t t) {
    return t >= from ? static_cast<double>(t - from) : -static_cast<double>(from - t);
  }

  uint64_t origin_;
  bool own_clock_ = false;
  double ratio_ = 1;
  std::map<int32_t, uint64_t> call_start_;
  std::map<int32_t, uint64_t> first_event_;
};

uint32_t LittleEndian32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

TimelineSlice MakeSlice(Lane lane, SliceKind kind, const et::ProfileRow& r,
                        const DelegatePlacement& place, const ProfileClock& clock) {
  TimelineSlice s;
  s.lane = lane;
  s.kind = kind;
  s.start = place.Start(r);
  s.end = place.End(r);
  s.row.instruction = static_cast<size_t>(std::max<int32_t>(r.instruction, 0));
  s.row.npu = kind != SliceKind::kCpuOp;
  s.row.ticks = static_cast<double>(r.duration());
  const bool delegate = kind == SliceKind::kNpuKernel || kind == SliceKind::kWeightPrefetch;
  SetCounts(clock, delegate, s.row);
  return s;
}

// The slices of one run, named from the events only (NameSlices adds the debug map's names).
std::vector<TimelineSlice> SlicesOf(const ExecuteRun& run, const ProfileClock& clock) {
  const DelegatePlacement place(clock, run);
  std::map<int32_t, std::string> native_ops;
  for (const et::ProfileRow& r : run.events) {
    if (r.name != nullptr && std::strncmp(r.name, "native_call_", 12) == 0) {
      native_ops[r.instruction] = NativeCallOp(r.name);
    }
  }
  const std::string cpu = runtime::ExecutionUnitName(runtime::ExecutionUnit::kCpu);
  std::vector<TimelineSlice> slices;
  for (const et::ProfileRow& r : run.events) {
    if (r.instruction < 0) continue;
    if (EventNamed(r, "OPERATOR_CALL")) {
      TimelineSlice s = MakeSlice(Lane::kCortexM33, SliceKind::kCpuOp, r, place, clock);
      const auto op = native_ops.find(r.instruction);
      s.row.op = op == native_ops.end() ? "OPERATOR_CALL" : op->second;
      s.row.ran_on = cpu;
      slices.push_back(std::move(s));
    } else if (EventNamed(r, "DELEGATE_CALL")) {
      TimelineSlice s = MakeSlice(Lane::kCortexM33, SliceKind::kDelegateCall, r, place, clock);
      s.row.op = "DELEGATE_CALL";
      s.row.ran_on = cpu;  // the core's own time in the call
      slices.push_back(std::move(s));
    } else if (r.delegate_debug_id != -1) {
      TimelineSlice s = MakeSlice(Lane::kNpu, SliceKind::kNpuKernel, r, place, clock);
      s.row.debug_id = r.delegate_debug_id;
      s.row.op = "NPU kernel id " + std::to_string(r.delegate_debug_id);
      s.row.ran_on = KernelRanOn(r, clock);
      slices.push_back(std::move(s));
    } else if (const std::optional<int32_t> kernel = PrefetchedKernel(r)) {
      TimelineSlice s = MakeSlice(Lane::kDma, SliceKind::kWeightPrefetch, r, place, clock);
      s.row.debug_id = *kernel;
      s.row.ran_on = runtime::ExecutionUnitName(r.ran_on);
      if (r.delegate_metadata_size >= runtime::npu::kPrefetchMetadataBytes) {
        s.slot = r.delegate_metadata[2];
        s.bytes = LittleEndian32(r.delegate_metadata + 3);
      }
      slices.push_back(std::move(s));
    }
  }
  return slices;
}

// Names the slices through NameFromDebugMap, the join every profile view uses: the core's
// slices are the profile's rows, NPU kernels the kernels of their call's row.
void NameSlices(const json& debug_map, const ProfileClock& clock,
                std::vector<TimelineSlice>& slices) {
  Profile profile;
  profile.clock = clock;
  std::vector<size_t> row_slice;                     // profile row -> slice
  std::vector<std::pair<size_t, size_t>> kernel_at;  // NPU slice -> (row, kernel)
  std::vector<size_t> kernel_slice;
  std::map<size_t, size_t> delegate_row;  // instruction -> its (first) delegate row
  for (size_t i = 0; i < slices.size(); ++i) {
    if (slices[i].lane != Lane::kCortexM33) continue;
    if (slices[i].kind == SliceKind::kDelegateCall) {
      delegate_row.emplace(slices[i].row.instruction, profile.rows.size());
    }
    row_slice.push_back(i);
    profile.rows.push_back(slices[i].row);
  }
  for (size_t i = 0; i < slices.size(); ++i) {
    const auto row = delegate_row.find(slices[i].row.instruction);
    if (slices[i].kind != SliceKind::kNpuKernel || row == delegate_row.end()) continue;
    kernel_at.emplace_back(row->second, profile.rows[row->second].kernels.size());
    kernel_slice.push_back(i);
    profile.rows[row->second].kernels.push_back(slices[i].row);
  }
  NameFromDebugMap(debug_map, profile);
  for (size_t r = 0; r < row_slice.size(); ++r) {
    slices[row_slice[r]].row = profile.rows[r];
    slices[row_slice[r]].row.kernels.clear();
  }
  for (size_t k = 0; k < kernel_slice.size(); ++k) {
    ProfileRow& row = slices[kernel_slice[k]].row;
    row = profile.rows[kernel_at[k].first].kernels[kernel_at[k].second];
    if (!row.source_name.empty()) row.op = row.source_name;  // "CONV_2D #0" on a timeline
  }
}

// A weight prefetch is named after the kernel whose weights it loads.
void NamePrefetches(std::vector<TimelineSlice>& slices) {
  std::map<int32_t, const ProfileRow*> kernels;
  for (const TimelineSlice& s : slices) {
    if (s.kind == SliceKind::kNpuKernel) kernels.emplace(s.row.debug_id, &s.row);
  }
  for (TimelineSlice& s : slices) {
    if (s.kind != SliceKind::kWeightPrefetch) continue;
    const auto kernel = kernels.find(s.row.debug_id);
    if (kernel == kernels.end()) {
      s.row.op = "weights for NPU kernel id " + std::to_string(s.row.debug_id);
      continue;
    }
    s.row.op = "weights for " + kernel->second->op;
    s.row.source_ops = kernel->second->source_ops;
    s.row.source_name = kernel->second->source_name;
    s.row.layer = kernel->second->layer;
    s.row.kernel = kernel->second->kernel;
  }
}

bool IsTimeClock(const ProfileClock& clock) {
  return clock.kind == "host-wall" || clock.kind == "qemu-virtual-time";
}

}  // namespace

std::set<std::string> LaneUnits(const Timeline& timeline, Lane lane) {
  std::set<std::string> units;
  for (const TimelineSlice& s : timeline.slices) {
    if (s.lane == lane) units.insert(s.row.ran_on);
  }
  return units;
}

const char* SliceKindName(SliceKind kind) {
  switch (kind) {
    case SliceKind::kCpuOp:
      return "cpu_op";
    case SliceKind::kDelegateCall:
      return "delegate_call";
    case SliceKind::kNpuKernel:
      return "npu_kernel";
    case SliceKind::kWeightPrefetch:
      return "weight_prefetch";
  }
  return "?";
}

TimeUnit AxisUnit(const ProfileClock& clock) {
  if (IsTimeClock(clock) && clock.ticks_per_second > 0) {
    return {"us", 1e6 / clock.ticks_per_second};
  }
  const std::string count = CountName(clock);
  if (count == "instructions") {
    ProfileRow one;
    one.ticks = 1;
    SetCounts(clock, /*delegate=*/false, one);
    if (one.instructions > 0) return {"instructions", one.instructions};
    return {"ticks", 1};
  }
  return {count, 1};
}

TimeUnit TraceUnit(const ProfileClock& clock) {
  if (clock.kind != "qemu-icount" && clock.ticks_per_second > 0) {
    return {"us", 1e6 / clock.ticks_per_second};
  }
  return AxisUnit(clock);
}

std::string LaneTitle(const Timeline& timeline, Lane lane) {
  const std::set<std::string> units = LaneUnits(timeline, lane);
  const auto only = [&](const char* unit) { return units.size() == 1 && units.count(unit) == 1; };
  switch (lane) {
    case Lane::kCortexM33:
      return "Cortex-M33";
    case Lane::kNpu:
      if (only("npu")) return "NPU (simulator timing model)";
      if (only("npu-emulated-cortex-m33")) {
        return "NPU kernels run on the Cortex-M33 (software engine)";
      }
      return "NPU kernels";
    case Lane::kDma:
      if (only("dma")) return "weight DMA (simulator timing model)";
      if (only("dma-emulated-cortex-m33")) return "weight copies by the Cortex-M33 (memcpy)";
      return "weight prefetch";
  }
  return "?";
}

bool LaneShown(const Timeline& timeline, Lane lane) {
  return lane != Lane::kDma || !LaneUnits(timeline, lane).empty();
}

std::optional<Timeline> TimelineFromEtdump(std::string_view etdp, const json& debug_map,
                                           std::string* error) {
  // Flatbuffers wants the buffer aligned like the largest scalar it holds.
  AlignedBuffer aligned(etdp.size());
  std::copy(etdp.begin(), etdp.end(), aligned.data());
  runtime::Result<et::EtdumpReader> reader = et::EtdumpReader::Open({aligned.data(), etdp.size()});
  if (!reader.ok()) {
    *error = std::string("not an ETDump: ") + runtime::LastErrorMessage();
    return std::nullopt;
  }
  std::vector<et::ProfileRow> rows(reader->NumProfileEvents());
  rows.resize(reader->ReadRows({rows.data(), rows.size()}));
  const std::vector<ExecuteRun> runs = CompleteExecuteRuns(rows);
  if (runs.empty()) {
    *error = "the ETDump holds no complete Execute run (no Method::execute event)";
    return std::nullopt;
  }
  Timeline timeline;
  timeline.clock = ProfileClockFrom(et::ReadClockRecord(reader->root()));
  timeline.runs = static_cast<int>(runs.size());
  timeline.run = timeline.runs;
  const ExecuteRun& run = runs.back();
  timeline.duration = static_cast<double>(run.method_event().duration());
  timeline.slices = SlicesOf(run, timeline.clock);
  NameSlices(debug_map, timeline.clock, timeline.slices);
  NamePrefetches(timeline.slices);
  std::stable_sort(timeline.slices.begin(), timeline.slices.end(),
                   [](const TimelineSlice& a, const TimelineSlice& b) {
                     if (a.lane != b.lane) return a.lane < b.lane;
                     return a.start < b.start;
                   });
  return timeline;
}

}  // namespace boardlab::run
