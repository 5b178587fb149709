#pragma once

// What an ETDump from the firmware must contain, for the QEMU tests: its clock record, and per
// "Execute" run one native_call_* event per CPU op of the compiler's debug map and one delegate
// event per NPU kernel id, each with start <= end.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "runtime/profiling/etdump/clock_record.h"
#include "runtime/profiling/etdump/etdump_reader.h"

namespace boardlab::firmware {

struct KernelEvents {
  runtime::etdump::ClockRecord clock;       // what the file says its ticks count
  std::multiset<int32_t> cpu_instructions;  // instruction index of each native_call_* event
  std::multiset<int32_t> npu_kernel_ids;    // delegate debug id of each delegate event
  bool ordered = true;                      // every event had start <= end
  bool timed = false;                       // some event lasted longer than zero ticks
};

/// The kernel events of the first "Execute" run of `etdp`; false when it does not decode.
inline bool ReadKernelEvents(const std::vector<uint8_t>& etdp, KernelEvents* events) {
  namespace rt = boardlab::runtime;
  rt::Result<rt::etdump::EtdumpReader> reader =
      rt::etdump::EtdumpReader::Open({etdp.data(), etdp.size()});
  if (!reader.ok()) return false;
  events->clock = rt::etdump::ReadClockRecord(reader->root());
  std::vector<rt::etdump::ProfileRow> rows(reader->NumProfileEvents());
  rows.resize(reader->ReadRows({rows.data(), rows.size()}));
  int execute_run = -1;
  for (const rt::etdump::ProfileRow& row : rows) {
    if (row.run_name == nullptr || std::string(row.run_name) != "Execute") continue;
    if (execute_run < 0) execute_run = static_cast<int>(row.run);
    if (static_cast<int>(row.run) != execute_run) continue;
    events->ordered = events->ordered && row.start <= row.end;
    events->timed = events->timed || row.duration() > 0;
    if (row.name == nullptr) {
      events->npu_kernel_ids.insert(row.delegate_debug_id);
    } else if (std::string(row.name).rfind("native_call_", 0) == 0) {
      events->cpu_instructions.insert(row.instruction);
    }
  }
  return execute_run >= 0;
}

/// The events one run of the compiled model must have, from its debug map.
inline KernelEvents ExpectedKernelEvents(const std::string& debug_map) {
  const nlohmann::json map = nlohmann::json::parse(debug_map);
  KernelEvents events;
  for (const auto& op : map["cpu_ops"])
    events.cpu_instructions.insert(op["instruction"].get<int32_t>());
  for (const auto& d : map["delegates"]) {
    for (const auto& k : d["kernels"]) events.npu_kernel_ids.insert(k["id"].get<int32_t>());
  }
  return events;
}

}  // namespace boardlab::firmware
