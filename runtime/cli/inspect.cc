#include "runtime/cli/inspect.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "runtime/cli/debug_map_names.h"
#include "runtime/core/error.h"
#include "runtime/core/event_tracer.h"
#include "runtime/profiling/etdump/etdump_reader.h"

namespace boardlab::run {
namespace {

namespace et = runtime::etdump;
using nlohmann::json;

// One NPU kernel of one delegate call, summed over the runs.
struct KernelSum {
  int32_t id = -1;
  double ticks = 0;
  std::string ran_on;
};

struct InstructionSum {
  bool delegate = false;
  double ticks = 0;
  double calls = 0;                // OPERATOR_CALL / DELEGATE_CALL events
  std::string native_op;           // from "native_call_*"
  std::vector<KernelSum> kernels;  // in execution order
};

// The events of the "Execute" blocks, summed per instruction.
struct ExecuteSums {
  std::map<int32_t, InstructionSum> instructions;
  double total_ticks = 0;  // Method::execute
  int runs = 0;
};

void AddDelegateEvent(const et::ProfileRow& r, const ProfileClock& clock, InstructionSum& s) {
  s.delegate = true;
  auto it = std::find_if(s.kernels.begin(), s.kernels.end(),
                         [&](const KernelSum& k) { return k.id == r.delegate_debug_id; });
  if (it == s.kernels.end()) {
    s.kernels.push_back({r.delegate_debug_id, 0, KernelRanOn(r, clock)});
    it = s.kernels.end() - 1;
  }
  it->ticks += static_cast<double>(r.duration());
}

bool InExecuteBlock(const et::ProfileRow& r) {
  return r.run_name != nullptr && std::strcmp(r.run_name, "Execute") == 0;
}

// The "Execute" blocks, and those a streaming op ended early (they carry the method's mark).
struct ExecuteRuns {
  std::set<uint32_t> all;
  std::set<uint32_t> ended_early;
};

ExecuteRuns FindExecuteRuns(const std::vector<et::ProfileRow>& rows) {
  ExecuteRuns runs;
  for (const et::ProfileRow& r : rows) {
    if (!InExecuteBlock(r)) continue;
    runs.all.insert(r.run);
    if (EventNamed(r, runtime::kEndedEarlyEvent)) runs.ended_early.insert(r.run);
  }
  return runs;
}

// The events of the Execute blocks `profile` averages (AveragesRun), summed per instruction.
ExecuteSums SumExecuteBlocks(const std::vector<et::ProfileRow>& rows, const ExecuteRuns& runs,
                             const Profile& profile) {
  ExecuteSums sums;
  sums.runs = AveragedRuns(profile);
  for (const et::ProfileRow& r : rows) {
    if (!InExecuteBlock(r) || !AveragesRun(profile, runs.ended_early.contains(r.run))) continue;
    const double ticks = static_cast<double>(r.duration());
    if (r.delegate_debug_id != -1) {
      AddDelegateEvent(r, profile.clock, sums.instructions[r.instruction]);
    } else if (EventNamed(r, "OPERATOR_CALL")) {
      sums.instructions[r.instruction].ticks += ticks;
      sums.instructions[r.instruction].calls += 1;
    } else if (EventNamed(r, "DELEGATE_CALL")) {
      InstructionSum& s = sums.instructions[r.instruction];
      s.delegate = true;
      s.ticks += ticks;
      s.calls += 1;
    } else if (r.name != nullptr && std::strncmp(r.name, "native_call_", 12) == 0) {
      sums.instructions[r.instruction].native_op = NativeCallOp(r.name);
    } else if (EventNamed(r, "Method::execute")) {
      sums.total_ticks += ticks;
    }
  }
  return sums;
}

ProfileRow KernelRow(const KernelSum& k, size_t instruction, double runs,
                     const ProfileClock& clock) {
  ProfileRow kr;
  kr.instruction = instruction;
  kr.npu = true;
  kr.ran_on = k.ran_on;
  kr.ticks = k.ticks / runs;
  SetCounts(clock, /*delegate=*/true, kr);
  kr.debug_id = k.id;
  kr.op = "NPU kernel id " + std::to_string(k.id);
  return kr;
}

// A delegate row runs where all of its kernels ran ("mixed" if they differ).
std::string CommonRanOn(const std::vector<ProfileRow>& kernels) {
  if (kernels.empty()) return runtime::ExecutionUnitName(runtime::ExecutionUnit::kUnknown);
  for (const ProfileRow& k : kernels) {
    if (k.ran_on != kernels.front().ran_on) return "mixed";
  }
  return kernels.front().ran_on;
}

// Named from the events; NameFromDebugMap names it after the source ops when there is a map.
ProfileRow InstructionRow(int32_t instruction, const InstructionSum& s, double runs,
                          const ProfileClock& clock) {
  ProfileRow row;
  row.instruction = static_cast<size_t>(instruction);
  row.npu = s.delegate;
  row.ticks = s.ticks / runs;
  row.calls = s.calls / runs;
  SetCounts(clock, /*delegate=*/false, row);
  if (!s.delegate) {
    row.ran_on = runtime::ExecutionUnitName(runtime::ExecutionUnit::kCpu);
    row.op = s.native_op.empty() ? "OPERATOR_CALL" : s.native_op;
    return row;
  }
  row.op = "DELEGATE_CALL";
  for (const KernelSum& k : s.kernels) {
    row.kernels.push_back(KernelRow(k, row.instruction, runs, clock));
  }
  row.ran_on = CommonRanOn(row.kernels);
  return row;
}

}  // namespace

bool EventNamed(const et::ProfileRow& r, const char* name) {
  return r.name != nullptr && std::strcmp(r.name, name) == 0;
}

std::string NativeCallOp(const char* name) {
  std::string op = name + std::strlen("native_call_");
  if (op.size() > 4 && op.compare(op.size() - 4, 4, ".out") == 0) op.resize(op.size() - 4);
  return op;
}

std::string KernelRanOn(const et::ProfileRow& r, const ProfileClock& clock) {
  // Files of an older boardlab-run (legacy clock) came from the simulator, whose NPU kernels are
  // the timing model's; their metadata predates the unit byte.
  if (r.ran_on == runtime::ExecutionUnit::kUnknown && clock.legacy) {
    return runtime::ExecutionUnitName(runtime::ExecutionUnit::kNpu);
  }
  return runtime::ExecutionUnitName(r.ran_on);
}

ProfileClock ProfileClockFrom(const et::ClockRecord& record) {
  ProfileClock clock;
  clock.kind = et::ClockKindName(record.kind);
  clock.ticks_per_second = static_cast<double>(record.ticks_per_second);
  clock.icount_shift = record.icount_shift;
  clock.core_hz = static_cast<double>(record.core_hz);
  if (record.delegate_kind != et::ClockKind::kUnknown) {
    clock.delegate_kind = et::ClockKindName(record.delegate_kind);
    clock.delegate_ticks_per_second = static_cast<double>(record.delegate_ticks_per_second);
  }
  clock.legacy = record.legacy;
  return clock;
}

std::optional<Inspection> InspectEtdump(runtime::Span<const uint8_t> etdp, const json& debug_map,
                                        const InspectOptions& options, std::string* error) {
  runtime::Result<et::EtdumpReader> reader = et::EtdumpReader::Open(etdp);
  if (!reader.ok()) {
    *error = std::string("not an ETDump: ") + runtime::LastErrorMessage();
    return std::nullopt;
  }
  std::vector<et::ProfileRow> rows(reader->NumProfileEvents());
  rows.resize(reader->ReadRows({rows.data(), rows.size()}));

  Inspection out;
  Profile& p = out.profile;
  p.clock = ProfileClockFrom(et::ReadClockRecord(reader->root()));
  if (p.clock.kind == "unknown" && options.assumed_ticks_per_second > 0) {
    p.clock.ticks_per_second = options.assumed_ticks_per_second;
    p.clock.rate_assumed = true;
  }
  const ExecuteRuns execute_runs = FindExecuteRuns(rows);
  p.iterations = static_cast<int>(execute_runs.all.size());
  p.ended_early = static_cast<int>(execute_runs.ended_early.size());
  const ExecuteSums sums = SumExecuteBlocks(rows, execute_runs, p);
  const double runs = sums.runs > 0 ? sums.runs : 1;
  for (const auto& [instruction, s] : sums.instructions) {
    if (instruction >= 0) p.rows.push_back(InstructionRow(instruction, s, runs, p.clock));
  }
  NameFromDebugMap(debug_map, p);
  SetTotal(sums.total_ticks / runs, p);

  out.header = "profile from ETDump (average of " + std::to_string(p.iterations) + " Execute run" +
               (p.iterations == 1 ? "" : "s") + EndedEarlyNote(p) +
               (debug_map.is_object() ? "" : ", no debug map") + "):";
  return out;
}

}  // namespace boardlab::run
