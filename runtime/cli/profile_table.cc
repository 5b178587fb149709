#include "runtime/cli/profile_table.h"

#include <cstdio>

namespace boardlab::run {
namespace {

using nlohmann::json;

std::string CyclesString(double cycles) {
  return cycles < 0 ? "-" : std::to_string(static_cast<uint64_t>(cycles + 0.5));
}

json CyclesJson(double cycles) {
  return cycles < 0 ? json(nullptr) : json(static_cast<uint64_t>(cycles + 0.5));
}

}  // namespace

double RowsTotalUs(const Profile& profile) {
  double sum = 0;
  for (const ProfileRow& r : profile.rows) sum += r.us;
  return sum;
}

void PrintProfileTable(const Profile& profile, const std::string& header) {
  const double sum_us = RowsTotalUs(profile);
  std::printf("%s\n", header.c_str());
  std::printf("  %-4s %-36s %-4s %14s %12s %7s\n", "#", "op", "unit", "cycles", "us", "%");
  const auto print = [&](const ProfileRow& r, const std::string& label, const std::string& index) {
    std::printf("  %-4s %-36s %-4s %14s %12.2f %6.1f%%\n", index.c_str(), label.c_str(),
                r.npu ? "NPU" : "CPU", CyclesString(r.cycles).c_str(), r.us,
                sum_us > 0 ? 100.0 * r.us / sum_us : 0.0);
  };
  for (const ProfileRow& r : profile.rows) {
    print(r, r.op, std::to_string(r.instruction));
    for (const ProfileRow& k : r.kernels) print(k, "  " + k.op, "");
  }
  std::printf("  %-4s %-36s %-4s %14s %12.2f\n", "", "total (Method::execute)", "",
              CyclesString(profile.total_cycles).c_str(), profile.total_us);
}

json ProfileJson(const Profile& profile) {
  const double sum_us = RowsTotalUs(profile);
  const auto row_json = [&](const ProfileRow& r) {
    json j = {{"instruction", r.instruction},
              {"op", r.op},
              {"unit", r.npu ? "NPU" : "CPU"},
              {"cycles", CyclesJson(r.cycles)},
              {"us", r.us},
              {"percent", sum_us > 0 ? 100.0 * r.us / sum_us : 0.0}};
    if (!r.source_ops.empty()) j["source_ops"] = r.source_ops;
    if (!r.layer.empty()) j["layer"] = r.layer;
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
  return {{"clock", profile.clock},
          {"iterations", profile.iterations},
          {"total_us", profile.total_us},
          {"total_cycles", CyclesJson(profile.total_cycles)},
          {"ops", rows}};
}

}  // namespace boardlab::run
