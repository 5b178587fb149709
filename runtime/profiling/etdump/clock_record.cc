#include "runtime/profiling/etdump/clock_record.h"

#include <cstdio>
#include <cstring>

#include "runtime/profiling/etdump/etdump_writer.h"

namespace boardlab::runtime::etdump {
namespace {

constexpr char kClockPrefix[] = "boardlab::clock=";
constexpr char kDelegateClockPrefix[] = "boardlab::delegate_clock=";
constexpr char kIcountShift[] = "boardlab::icount_shift";
constexpr char kCoreHz[] = "boardlab::core_hz";

// Before clock records, boardlab-run wrote its tick rates as ProfileEvents of the "Default" block
// that start at 0 and last one second (end_time = ticks per second).
constexpr char kLegacySimRate[] = "boardlab::sim_cycles_per_second";
constexpr char kLegacyWallRate[] = "boardlab::wall_ticks_per_second";
constexpr char kLegacyDelegateRate[] = "boardlab::delegate_ticks_per_second";

constexpr ClockKind kAllKinds[] = {ClockKind::kSimCycles,  ClockKind::kSimNpuCycles,
                                   ClockKind::kQemuIcount, ClockKind::kQemuVirtualTime,
                                   ClockKind::kDwtCycles,  ClockKind::kHostWall};

bool StartsWith(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

uint64_t NonNegative(int64_t v) { return v < 0 ? 0 : static_cast<uint64_t>(v); }

// The Int value of a DebugEvent, when it has one.
bool IntEntry(const ::etdump::DebugEvent& e, int64_t* value) {
  const ::etdump::Value* entry = e.debug_entry();
  if (entry == nullptr || entry->val() != ::etdump::ValueType::Int ||
      entry->int_value() == nullptr) {
    return false;
  }
  *value = entry->int_value()->int_val();
  return true;
}

// Applies one named integer of a clock record (`name` holds `size` characters); returns whether
// it was one. Lengths come from the FlatBuffers string, not strlen: GCC's -Wstringop-overread
// misjudges strlen on a pointer into a FlatBuffers table.
bool ApplyRecordEntry(const char* name, size_t size, int64_t value, ClockRecord* clock) {
  const size_t clock_prefix = std::strlen(kClockPrefix);
  const size_t delegate_prefix = std::strlen(kDelegateClockPrefix);
  if (StartsWith(name, kClockPrefix)) {
    clock->kind = ClockKindFromName(name + clock_prefix, size - clock_prefix);
    clock->ticks_per_second = NonNegative(value);
  } else if (StartsWith(name, kDelegateClockPrefix)) {
    clock->delegate_kind = ClockKindFromName(name + delegate_prefix, size - delegate_prefix);
    clock->delegate_ticks_per_second = NonNegative(value);
  } else if (std::strcmp(name, kIcountShift) == 0) {
    clock->icount_shift = static_cast<int32_t>(value);
  } else if (std::strcmp(name, kCoreHz) == 0) {
    clock->core_hz = NonNegative(value);
  } else {
    return false;
  }
  return true;
}

// The legacy tick-rate events of the first run block; kind stays kUnknown when there are none.
ClockRecord ReadLegacyRates(const ::etdump::RunData& run) {
  ClockRecord clock;
  uint64_t delegate_rate = 0;
  bool wall = false;
  for (const ::etdump::Event* e : *run.events()) {
    const ::etdump::ProfileEvent* p = e->profile_event();
    if (p == nullptr || p->name() == nullptr || p->end_time() < p->start_time()) continue;
    const uint64_t rate = p->end_time() - p->start_time();
    const char* name = p->name()->c_str();
    if (std::strcmp(name, kLegacySimRate) == 0 || std::strcmp(name, kLegacyWallRate) == 0) {
      wall = std::strcmp(name, kLegacyWallRate) == 0;
      clock.kind = wall ? ClockKind::kHostWall : ClockKind::kSimCycles;
      clock.ticks_per_second = rate;
    } else if (std::strcmp(name, kLegacyDelegateRate) == 0) {
      delegate_rate = rate;
    }
  }
  if (clock.kind == ClockKind::kUnknown) return clock;
  clock.legacy = true;
  if (!wall) clock.core_hz = clock.ticks_per_second;  // sim ticks were cpu_clock_hz cycles
  if (wall && delegate_rate > 0) {
    // --clock wall: the NPU backend stamped its own simulated NPU cycle counter.
    clock.delegate_kind = ClockKind::kSimNpuCycles;
    clock.delegate_ticks_per_second = delegate_rate;
  }
  return clock;
}

}  // namespace

const char* ClockKindName(ClockKind kind) {
  switch (kind) {
    case ClockKind::kSimCycles:
      return "rt700-sim-cycles";
    case ClockKind::kSimNpuCycles:
      return "rt700-sim-npu-cycles";
    case ClockKind::kQemuIcount:
      return "qemu-icount";
    case ClockKind::kQemuVirtualTime:
      return "qemu-virtual-time";
    case ClockKind::kDwtCycles:
      return "dwt-cycles";
    case ClockKind::kHostWall:
      return "host-wall";
    case ClockKind::kUnknown:
      break;
  }
  return "unknown";
}

ClockKind ClockKindFromName(const char* name, size_t size) {
  for (ClockKind kind : kAllKinds) {
    const char* candidate = ClockKindName(kind);
    if (std::strlen(candidate) == size && std::memcmp(candidate, name, size) == 0) return kind;
  }
  return ClockKind::kUnknown;
}

void WriteClockRecord(EtdumpWriter& writer, const ClockRecord& clock) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s%s", kClockPrefix, ClockKindName(clock.kind));
  writer.LogNamedInt(name, static_cast<int64_t>(clock.ticks_per_second));
  if (clock.delegate_kind != ClockKind::kUnknown) {
    std::snprintf(name, sizeof(name), "%s%s", kDelegateClockPrefix,
                  ClockKindName(clock.delegate_kind));
    writer.LogNamedInt(name, static_cast<int64_t>(clock.delegate_ticks_per_second));
  }
  if (clock.icount_shift >= 0) writer.LogNamedInt(kIcountShift, clock.icount_shift);
  if (clock.core_hz > 0) writer.LogNamedInt(kCoreHz, static_cast<int64_t>(clock.core_hz));
}

ClockRecord ReadClockRecord(const ::etdump::ETDump& etdump) {
  ClockRecord clock;
  const auto* runs = etdump.run_data();
  if (runs == nullptr) return clock;
  bool found = false;
  for (const ::etdump::RunData* run : *runs) {
    if (run->events() == nullptr) continue;
    for (const ::etdump::Event* e : *run->events()) {
      const ::etdump::DebugEvent* d = e->debug_event();
      int64_t value = 0;
      if (d == nullptr || d->name() == nullptr || !IntEntry(*d, &value)) continue;
      found = ApplyRecordEntry(d->name()->c_str(), d->name()->size(), value, &clock) || found;
    }
  }
  if (found || runs->size() == 0 || runs->Get(0)->events() == nullptr) return clock;
  return ReadLegacyRates(*runs->Get(0));
}

}  // namespace boardlab::runtime::etdump
