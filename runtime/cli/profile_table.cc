#include "runtime/cli/profile_table.h"

#include <cmath>
#include <cstdio>

namespace boardlab::run {
namespace {

using nlohmann::json;

std::string Mhz(double hz) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g MHz", hz / 1e6);
  return text;
}

// "what the ticks are" for one clock kind, without the delegate part.
std::string KindLabel(const std::string& kind, const ProfileClock& clock) {
  if (kind == "rt700-sim-cycles") {
    return "simulated RT700 cycles (host simulator timing model" +
           (clock.core_hz > 0 ? ", CPU at " + Mhz(clock.core_hz) : std::string()) + ")";
  }
  if (kind == "rt700-sim-npu-cycles") return "simulated NPU cycles (RT700 NPU timing model)";
  if (kind == "qemu-icount") {
    return "QEMU instructions (icount shift " + std::to_string(clock.icount_shift) +
           "), not Cortex-M33 cycles";
  }
  if (kind == "qemu-virtual-time") {
    return "QEMU virtual time paced by the host (no icount): varies from run to run";
  }
  if (kind == "dwt-cycles") {
    return "DWT cycles of the Cortex-M33" +
           (clock.core_hz > 0 ? " at " + Mhz(clock.core_hz) : std::string(", core clock unknown"));
  }
  if (kind == "host-wall") return "host wall clock";
  if (clock.rate_assumed) {
    return "clock unknown (the ETDump does not record it): raw ticks; us assume " +
           Mhz(clock.ticks_per_second) + " (--target)";
  }
  return "clock unknown (the ETDump does not record it): raw ticks, no time";
}

bool IsCycleClock(const std::string& kind) {
  return kind == "rt700-sim-cycles" || kind == "rt700-sim-npu-cycles" || kind == "dwt-cycles";
}

// The kind and rate the ticks of a row count (delegate rows of NPU kernels may differ).
const std::string& RowKind(const ProfileClock& clock, bool delegate) {
  return delegate && !clock.delegate_kind.empty() ? clock.delegate_kind : clock.kind;
}
double RowRate(const ProfileClock& clock, bool delegate) {
  return delegate && !clock.delegate_kind.empty() ? clock.delegate_ticks_per_second
                                                  : clock.ticks_per_second;
}

std::string Rounded(double v) { return std::to_string(static_cast<uint64_t>(v + 0.5)); }

json CountJson(double v) { return v < 0 ? json(nullptr) : json(static_cast<uint64_t>(v + 0.5)); }
json NumberJson(double v) { return v < 0 ? json(nullptr) : json(v); }

// The count column of a row: cycles, instructions or raw ticks, as the clock says.
std::string CountText(const ProfileClock& clock, const ProfileRow& r) {
  const std::string name = CountName(clock);
  if (name == "instructions") return r.instructions < 0 ? "-" : Rounded(r.instructions);
  if (name == "cycles") return r.cycles < 0 ? "-" : Rounded(r.cycles);
  return Rounded(r.ticks);
}

// What the "%" column divides: microseconds when every instruction row has them, else ticks
// (one unknown clock for every row).
bool SharesByTime(const Profile& profile) {
  for (const ProfileRow& r : profile.rows) {
    if (r.us < 0) return false;
  }
  return true;
}

double Share(const ProfileRow& r, bool by_time) { return by_time ? r.us : r.ticks; }

// Whether the table needs a calls column: some instruction ran other than once per iteration.
bool ShowsCalls(const Profile& profile) {
  for (const ProfileRow& r : profile.rows) {
    if (r.calls >= 0 && r.calls != 1) return true;
  }
  return false;
}

double RowsTotal(const Profile& profile, bool by_time) {
  double sum = 0;
  for (const ProfileRow& r : profile.rows) sum += Share(r, by_time);
  return sum;
}

}  // namespace

std::string ClockLabel(const ProfileClock& clock) {
  std::string label = KindLabel(clock.kind, clock);
  if (!clock.delegate_kind.empty() && clock.delegate_kind != clock.kind) {
    label += "; NPU kernels: " + KindLabel(clock.delegate_kind, clock);
    if (clock.delegate_ticks_per_second > 0) label += " at " + Mhz(clock.delegate_ticks_per_second);
  }
  if (clock.legacy) label += "; from an older boardlab-run's tick rates";
  return label;
}

std::string CountName(const ProfileClock& clock) {
  if (clock.kind == "qemu-icount") return "instructions";
  if (IsCycleClock(clock.kind) || clock.kind == "host-wall") return "cycles";
  return "ticks";
}

void SetCounts(const ProfileClock& clock, bool delegate, ProfileRow& row) {
  const std::string& kind = RowKind(clock, delegate);
  const double rate = RowRate(clock, delegate);
  row.cycles = IsCycleClock(kind) ? row.ticks : -1;
  row.us = rate > 0 ? row.ticks / rate * 1e6 : -1;
  row.instructions = -1;
  if (kind == "qemu-icount") {
    // Virtual time under -icount is the instruction count (one per 2^shift ns), not the time
    // the Cortex-M33 would take: only the count is shown.
    row.us = -1;
    if (rate > 0 && clock.icount_shift >= 0) {
      row.instructions = row.ticks * (1e9 / rate) / std::ldexp(1.0, clock.icount_shift);
    }
  }
}

void SetTotal(double ticks, Profile& profile) {
  ProfileRow total;
  total.ticks = ticks;
  SetCounts(profile.clock, /*delegate=*/false, total);
  profile.total_ticks = total.ticks;
  profile.total_us = total.us;
  profile.total_cycles = total.cycles;
  profile.total_instructions = total.instructions;
}

void PrintProfileTable(const Profile& profile, const std::string& header) {
  const bool by_time = SharesByTime(profile);
  const double sum = RowsTotal(profile, by_time);
  const std::string count = CountName(profile.clock);
  const bool calls = ShowsCalls(profile);
  std::printf("%s\n", header.c_str());
  std::printf("  clock: %s\n", ClockLabel(profile.clock).c_str());
  std::printf("  %-4s %-36s %-23s %14s %12s %7s%s\n", "#", "op", "ran on", count.c_str(), "us", "%",
              calls ? "   calls" : "");
  const auto print = [&](const ProfileRow& r, const std::string& label, const std::string& index) {
    char us[32] = "-";
    if (r.us >= 0) std::snprintf(us, sizeof(us), "%.2f", r.us);
    std::printf("  %-4s %-36s %-23s %14s %12s %6.1f%%", index.c_str(), label.c_str(),
                r.ran_on.empty() ? "unknown" : r.ran_on.c_str(),
                CountText(profile.clock, r).c_str(), us,
                sum > 0 ? 100.0 * Share(r, by_time) / sum : 0.0);
    if (calls && r.calls >= 0) std::printf(" %7.4g", r.calls);
    std::printf("\n");
  };
  for (const ProfileRow& r : profile.rows) {
    print(r, r.op, std::to_string(r.instruction));
    for (const ProfileRow& k : r.kernels) print(k, "  " + k.op, "");
  }
  ProfileRow total;
  total.ticks = profile.total_ticks;
  total.cycles = profile.total_cycles;
  total.instructions = profile.total_instructions;
  char us[32] = "-";
  if (profile.total_us >= 0) std::snprintf(us, sizeof(us), "%.2f", profile.total_us);
  std::printf("  %-4s %-36s %-23s %14s %12s\n", "", "total (Method::execute)", "",
              CountText(profile.clock, total).c_str(), us);
}

bool AveragesRun(const Profile& profile, bool run_ended_early) {
  return !run_ended_early || profile.ended_early >= profile.iterations;
}

int AveragedRuns(const Profile& profile) {
  if (profile.ended_early >= profile.iterations) return profile.iterations;
  return profile.iterations - profile.ended_early;
}

std::string EndedEarlyNote(const Profile& profile) {
  if (profile.ended_early <= 0) return "";
  if (profile.ended_early >= profile.iterations) {
    return "; every one ended early by a streaming op: part of the chain each";
  }
  return "; " + std::to_string(profile.ended_early) + " of " + std::to_string(profile.iterations) +
         " ended early by a streaming op, left out";
}

json ProfileJson(const Profile& profile) {
  const bool by_time = SharesByTime(profile);
  const double sum = RowsTotal(profile, by_time);
  const auto row_json = [&](const ProfileRow& r) {
    json j = {{"instruction", r.instruction},
              {"op", r.op},
              {"unit", r.npu ? "NPU" : "CPU"},
              {"ran_on", r.ran_on.empty() ? "unknown" : r.ran_on},
              {"ticks", r.ticks},
              {"calls", NumberJson(r.calls)},
              {"cycles", CountJson(r.cycles)},
              {"us", NumberJson(r.us)},
              {"percent", sum > 0 ? 100.0 * Share(r, by_time) / sum : 0.0}};
    if (r.instructions >= 0) j["instructions"] = CountJson(r.instructions);
    if (!r.source_ops.empty()) j["source_ops"] = r.source_ops;
    if (r.subgraph > 0) j["subgraph"] = r.subgraph;
    if (!r.layer.empty()) j["layer"] = r.layer;
    if (!r.source_name.empty()) j["source_name"] = r.source_name;
    if (r.macs >= 0) j["macs"] = r.macs;
    if (r.debug_id != -1) j["debug_id"] = r.debug_id;
    if (r.kernel != -1) j["kernel"] = r.kernel;
    return j;
  };
  json rows = json::array();
  for (const ProfileRow& r : profile.rows) {
    json j = row_json(r);
    json kernels = json::array();
    for (const ProfileRow& k : r.kernels) kernels.push_back(row_json(k));
    j["npu_kernels"] = kernels;
    rows.push_back(j);
  }
  const ProfileClock& c = profile.clock;
  json out = {{"clock", c.kind},
              {"clock_label", ClockLabel(c)},
              {"count_unit", CountName(c)},
              {"ticks_per_second", c.ticks_per_second > 0 ? json(c.ticks_per_second) : json()},
              {"iterations", profile.iterations},
              {"ended_early_runs", profile.ended_early},
              {"averaged_runs", AveragedRuns(profile)},
              {"total_ticks", profile.total_ticks},
              {"total_us", NumberJson(profile.total_us)},
              {"total_cycles", CountJson(profile.total_cycles)},
              {"ops", rows}};
  if (c.icount_shift >= 0) out["icount_shift"] = c.icount_shift;
  if (c.core_hz > 0) out["core_hz"] = c.core_hz;
  if (!c.delegate_kind.empty()) {
    out["delegate_clock"] = c.delegate_kind;
    out["delegate_ticks_per_second"] =
        c.delegate_ticks_per_second > 0 ? json(c.delegate_ticks_per_second) : json();
  }
  if (profile.total_instructions >= 0) {
    out["total_instructions"] = CountJson(profile.total_instructions);
  }
  return out;
}

}  // namespace boardlab::run
