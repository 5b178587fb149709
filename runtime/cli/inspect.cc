#include "runtime/cli/inspect.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "runtime/core/error.h"
#include "runtime/profiling/etdump/etdump_reader.h"

namespace boardlab::run {
namespace {

namespace et = runtime::etdump;
using nlohmann::json;

bool NameIs(const et::ProfileRow& r, const char* name) {
  return r.name != nullptr && std::strcmp(r.name, name) == 0;
}

std::vector<int32_t> SourceOps(const et::ProfileRow& r) {
  const int32_t n = std::min(r.num_source_ops, et::ProfileRow::kMaxSourceOps);
  return {r.source_ops, r.source_ops + n};
}

std::string OpsLabel(const std::vector<int32_t>& ops) {
  std::string s;
  for (int32_t op : ops) s += (s.empty() ? "" : ",") + std::to_string(op);
  return s;
}

// "native_call_conv_2d.out" -> "conv_2d".
std::string NativeCallOp(const char* name) {
  std::string op = name + std::strlen("native_call_");
  if (op.size() > 4 && op.compare(op.size() - 4, 4, ".out") == 0) op.resize(op.size() - 4);
  return op;
}

// One NPU kernel of one delegate call, summed over the runs.
struct KernelSum {
  int32_t id = -1;
  double ticks = 0;
  bool mapped = false;
  int32_t kernel = -1;
  std::vector<int32_t> source_ops;
  std::string layer;
};

struct InstructionSum {
  bool delegate = false;
  double ticks = 0;
  std::string native_op;  // from "native_call_*"
  bool mapped = false;    // CPU op found in the debug map
  std::string mapped_name;
  std::vector<int32_t> source_ops;
  std::vector<KernelSum> kernels;  // in execution order
};

}  // namespace

std::optional<Inspection> InspectEtdump(runtime::Span<const uint8_t> etdp,
                                        const std::string& debug_map_json,
                                        const InspectOptions& options, std::string* error) {
  runtime::Result<et::EtdumpReader> reader = et::EtdumpReader::Open(etdp);
  if (!reader.ok()) {
    *error = std::string("not an ETDump: ") + runtime::LastErrorMessage();
    return std::nullopt;
  }
  json map;
  if (!debug_map_json.empty()) {
    map = json::parse(debug_map_json, nullptr, /*allow_exceptions=*/false);
    if (map.is_discarded() || !map.is_object()) {
      *error = "the debug map is not a JSON object";
      return std::nullopt;
    }
  }
  const char* json_text = debug_map_json.empty() ? nullptr : debug_map_json.data();
  std::vector<et::ProfileRow> rows(reader->NumProfileEvents());
  rows.resize(reader->ReadRows({rows.data(), rows.size()}, json_text, debug_map_json.size()));

  Inspection out;
  // Tick rates ("Default" block, start 0, end = ticks per second).
  bool wall = false;
  for (const et::ProfileRow& r : rows) {
    const double rate = static_cast<double>(r.duration());
    if (NameIs(r, kSimRateEvent) || NameIs(r, kWallRateEvent)) {
      out.ticks_per_second = rate;
      out.rate_recorded = true;
      wall = NameIs(r, kWallRateEvent);
    } else if (NameIs(r, kDelegateRateEvent)) {
      out.delegate_ticks_per_second = rate;
    }
  }
  if (!out.rate_recorded || out.ticks_per_second <= 0) {
    out.ticks_per_second = options.default_ticks_per_second;
    out.rate_recorded = false;
    wall = false;
  }
  if (out.delegate_ticks_per_second <= 0) out.delegate_ticks_per_second = out.ticks_per_second;

  // Sums per instruction over the "Execute" blocks.
  std::map<int32_t, InstructionSum> instructions;
  double total_ticks = 0;
  uint32_t last_run = UINT32_MAX;
  int runs = 0;
  for (const et::ProfileRow& r : rows) {
    if (r.run_name == nullptr || std::strcmp(r.run_name, "Execute") != 0) continue;
    if (r.run != last_run) {
      ++runs;
      last_run = r.run;
    }
    const double ticks = static_cast<double>(r.duration());
    if (r.delegate_debug_id != -1) {
      InstructionSum& s = instructions[r.instruction];
      s.delegate = true;
      auto it = std::find_if(s.kernels.begin(), s.kernels.end(),
                             [&](const KernelSum& k) { return k.id == r.delegate_debug_id; });
      if (it == s.kernels.end()) {
        KernelSum k;
        k.id = r.delegate_debug_id;
        k.mapped = r.mapped;
        k.kernel = r.kernel;
        k.source_ops = SourceOps(r);
        k.layer.assign(r.layer.data == nullptr ? "" : r.layer.data, r.layer.size);
        s.kernels.push_back(std::move(k));
        it = s.kernels.end() - 1;
      }
      it->ticks += ticks;
    } else if (NameIs(r, "OPERATOR_CALL")) {
      instructions[r.instruction].ticks += ticks;
    } else if (NameIs(r, "DELEGATE_CALL")) {
      InstructionSum& s = instructions[r.instruction];
      s.delegate = true;
      s.ticks += ticks;
    } else if (r.name != nullptr && std::strncmp(r.name, "native_call_", 12) == 0) {
      InstructionSum& s = instructions[r.instruction];
      s.native_op = NativeCallOp(r.name);
      if (r.mapped && !s.mapped) {
        s.mapped = true;
        s.mapped_name.assign(r.layer.data == nullptr ? "" : r.layer.data, r.layer.size);
        s.source_ops = SourceOps(r);
      }
    } else if (NameIs(r, "Method::execute")) {
      total_ticks += ticks;
    }
  }

  // Delegate instructions in the map: partition and backend.
  std::map<int32_t, std::pair<int64_t, std::string>> delegates;
  if (map.contains("delegates") && map["delegates"].is_array()) {
    for (const json& d : map["delegates"]) {
      if (!d.is_object() || !d.contains("instruction") || !d["instruction"].is_number_integer()) {
        continue;
      }
      const int64_t partition = d.contains("partition") && d["partition"].is_number_integer()
                                    ? d["partition"].get<int64_t>()
                                    : -1;
      const std::string backend =
          d.contains("backend") && d["backend"].is_string() ? d["backend"].get<std::string>() : "";
      delegates[d["instruction"].get<int32_t>()] = {partition, backend};
    }
  }

  const double n = runs > 0 ? runs : 1;
  const auto us = [&](double ticks, double rate) { return ticks / rate * 1e6; };
  Profile& p = out.profile;
  p.clock = wall ? "wall" : "sim";
  p.iterations = runs;
  for (auto& [instruction, s] : instructions) {
    if (instruction < 0) continue;
    ProfileRow row;
    row.instruction = static_cast<size_t>(instruction);
    row.npu = s.delegate;
    row.ticks = s.ticks / n;
    row.us = us(row.ticks, out.ticks_per_second);
    row.cycles = wall ? -1 : row.ticks;
    if (s.delegate) {
      const auto d = delegates.find(instruction);
      if (d != delegates.end()) {
        row.op = "delegate " + std::to_string(d->second.first) + " (" + d->second.second + ")";
      } else {
        row.op = "DELEGATE_CALL";
      }
      for (const KernelSum& k : s.kernels) {
        ProfileRow kr;
        kr.instruction = row.instruction;
        kr.npu = true;
        kr.ticks = k.ticks / n;
        kr.us = us(kr.ticks, out.delegate_ticks_per_second);
        kr.cycles = kr.ticks;  // sim: CPU cycles; wall: the backend's NPU cycles
        kr.debug_id = k.id;
        if (k.mapped) {
          kr.kernel = k.kernel;
          kr.source_ops = k.source_ops;
          kr.layer = k.layer;
          kr.op = "NPU kernel " + std::to_string(k.kernel) + " (id " + std::to_string(k.id) +
                  ") ops " + OpsLabel(k.source_ops);
        } else {
          kr.op = "NPU kernel id " + std::to_string(k.id);
        }
        for (int32_t op : k.source_ops) row.source_ops.push_back(op);
        row.kernels.push_back(std::move(kr));
      }
    } else {
      row.op = s.mapped ? s.mapped_name : s.native_op.empty() ? "OPERATOR_CALL" : s.native_op;
      row.source_ops = s.source_ops;
    }
    p.rows.push_back(std::move(row));
  }
  p.total_us = us(total_ticks / n, out.ticks_per_second);
  p.total_cycles = wall ? -1 : total_ticks / n;

  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.6g MHz", out.ticks_per_second / 1e6);
  out.header = std::string("profile from ETDump (") + (wall ? "wall clock, " : "sim clock, ") +
               (wall ? "ticks at " : "CPU cycles at ") + rate +
               (out.rate_recorded ? " as recorded" : " assumed, not recorded in the file") +
               ", average of " + std::to_string(runs) + " Execute run" + (runs == 1 ? "" : "s") +
               (debug_map_json.empty() ? ", no debug map" : "") + "):";
  return out;
}

}  // namespace boardlab::run
