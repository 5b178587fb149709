#include "cli/profile_view.h"

#include <cstdlib>
#include <map>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace boardlab::cli {
namespace {

using nlohmann::json;

// Accessors that never throw: a field of the wrong type reads as absent.
double NumberOr(const json& object, const char* key, double fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

std::optional<uint64_t> OptionalCount(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number() || it->get<double>() < 0) return std::nullopt;
  return it->get<uint64_t>();
}

std::optional<double> OptionalNumber(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string StringOr(const json& object, const char* key, const std::string& fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// Profiles stored before clocks were recorded said "sim" or "wall" (and "sim" also for QEMU
// ticks read back from the firmware's ETDump), always with a cycles column.
void ReadClock(const json& profile, ProfileView& view) {
  view.clock = StringOr(profile, "clock", "");
  view.clock_label = StringOr(profile, "clock_label", "");
  view.count_unit = StringOr(profile, "count_unit", "cycles");
  if (view.clock_label.empty()) {
    view.clock_label = "clock not recorded (a profile from before clocks were labelled, marked '" +
                       (view.clock.empty() ? std::string("none") : view.clock) + "')";
  }
}

absl::StatusOr<ProfileOp> ParseOp(const json& row, size_t index) {
  if (!row.is_object() || !row.contains("op") || !row.contains("us")) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile op ", index, " is not an object with \"op\" and \"us\""));
  }
  ProfileOp op;
  op.instruction = static_cast<int64_t>(NumberOr(row, "instruction", -1));
  op.op = StringOr(row, "op", "?");
  op.npu = StringOr(row, "unit", "CPU") == "NPU";
  op.ran_on = StringOr(row, "ran_on", "unknown");
  op.cycles = OptionalCount(row, "cycles");
  op.instructions = OptionalCount(row, "instructions");
  op.ticks = NumberOr(row, "ticks", 0);
  op.us = OptionalNumber(row, "us");
  op.percent = NumberOr(row, "percent", 0);
  op.calls = OptionalNumber(row, "calls");
  const auto kernels = row.find("npu_kernels");
  if (kernels != row.end() && kernels->is_array()) {
    for (size_t k = 0; k < kernels->size(); ++k) {
      absl::StatusOr<ProfileOp> kernel = ParseOp((*kernels)[k], k);
      if (!kernel.ok()) return kernel.status();
      kernel->instruction = -1;
      op.npu_kernels.push_back(*std::move(kernel));
    }
  }
  return op;
}

}  // namespace

absl::StatusOr<ProfileView> ParseProfileJson(std::string_view text) {
  json document = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return absl::InvalidArgumentError("the profile is not valid JSON");
  // boardlab-run's whole document carries the profile in "profile".
  const json& profile =
      document.is_object() && document.contains("profile") ? document["profile"] : document;
  if (!profile.is_object() || !profile.contains("ops") || !profile["ops"].is_array()) {
    return absl::InvalidArgumentError("the profile has no \"ops\" array");
  }
  ProfileView view;
  ReadClock(profile, view);
  view.iterations = static_cast<int64_t>(NumberOr(profile, "iterations", 0));
  view.ended_early_runs = static_cast<int64_t>(NumberOr(profile, "ended_early_runs", 0));
  view.total_us = OptionalNumber(profile, "total_us");
  view.total_cycles = OptionalCount(profile, "total_cycles");
  view.total_instructions = OptionalCount(profile, "total_instructions");
  view.total_ticks = NumberOr(profile, "total_ticks", 0);
  const json& ops = profile["ops"];
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::StatusOr<ProfileOp> op = ParseOp(ops[i], i);
    if (!op.ok()) return op.status();
    view.ops.push_back(*std::move(op));
  }
  return view;
}

namespace {

// Debug id -> "NPU kernel K: TYPE #op + TYPE #op".
std::map<int64_t, std::string> KernelLabels(const json& debug_map, const json& report) {
  std::map<int64_t, std::string> op_types;
  if (report.is_object() && report.contains("ops") && report["ops"].is_array()) {
    for (const json& op : report["ops"]) {
      // NPU kernels come from the main graph only; a subgraph's op indices count apart.
      if (NumberOr(op, "subgraph", 0) > 0) continue;
      op_types[static_cast<int64_t>(NumberOr(op, "index", -1))] = StringOr(op, "type", "?");
    }
  }
  std::map<int64_t, std::string> labels;
  if (!debug_map.is_object() || !debug_map.contains("delegates") ||
      !debug_map["delegates"].is_array()) {
    return labels;
  }
  for (const json& delegate : debug_map["delegates"]) {
    if (!delegate.is_object() || !delegate.contains("kernels")) continue;
    for (const json& kernel : delegate["kernels"]) {
      if (!kernel.is_object()) continue;
      std::string label = absl::StrCat("NPU kernel ", NumberOr(kernel, "kernel", -1), ":");
      const auto ops = kernel.find("ops");
      if (ops != kernel.end() && ops->is_array()) {
        for (size_t i = 0; i < ops->size(); ++i) {
          if (!(*ops)[i].is_number()) continue;
          int64_t index = (*ops)[i].get<int64_t>();
          auto type = op_types.find(index);
          absl::StrAppend(&label, i == 0 ? " " : " + ",
                          type == op_types.end() ? "op" : type->second, " #", index);
        }
      }
      labels[static_cast<int64_t>(NumberOr(kernel, "id", -1))] = label;
    }
  }
  return labels;
}

// Instruction -> the debug map's cpu_ops name ("DEPTHWISE_CONV_2D #1").
std::map<int64_t, std::string> CpuOpLabels(const json& debug_map) {
  std::map<int64_t, std::string> labels;
  if (!debug_map.is_object() || !debug_map.contains("cpu_ops") ||
      !debug_map["cpu_ops"].is_array()) {
    return labels;
  }
  for (const json& op : debug_map["cpu_ops"]) {
    if (!op.is_object()) continue;
    const std::string name = StringOr(op, "name", "");
    if (!name.empty()) labels[static_cast<int64_t>(NumberOr(op, "instruction", -1))] = name;
  }
  return labels;
}

}  // namespace

void NameOps(ProfileView& view, std::string_view debug_map_json, std::string_view report_json) {
  json debug_map = json::parse(debug_map_json.begin(), debug_map_json.end(), nullptr, false);
  json report = json::parse(report_json.begin(), report_json.end(), nullptr, false);
  if (debug_map.is_discarded()) return;
  std::map<int64_t, std::string> labels =
      KernelLabels(debug_map, report.is_discarded() ? json::object() : report);
  const std::map<int64_t, std::string> cpu_labels = CpuOpLabels(debug_map);
  // The host runner says "kernel <id>"; a profile read back from an ETDump "NPU kernel id <id>".
  for (ProfileOp& op : view.ops) {
    if (auto label = cpu_labels.find(op.instruction); !op.npu && label != cpu_labels.end()) {
      op.op = label->second;
    }
    for (ProfileOp& kernel : op.npu_kernels) {
      for (std::string_view prefix : {"kernel ", "NPU kernel id "}) {
        if (kernel.op.rfind(prefix, 0) != 0) continue;
        int64_t id = std::strtoll(kernel.op.c_str() + prefix.size(), nullptr, 10);
        if (auto label = labels.find(id); label != labels.end()) kernel.op = label->second;
      }
    }
  }
}

}  // namespace boardlab::cli
