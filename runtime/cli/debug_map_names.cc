#include "runtime/cli/debug_map_names.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace boardlab::run {
namespace {

using nlohmann::json;

// Accessors that never throw: a field of the wrong type reads as absent.
const json* ArrayField(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_array() ? &*it : nullptr;
}

bool IntField(const json& object, const char* key, int64_t* value) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return false;
  *value = it->get<int64_t>();
  return true;
}

std::string StringField(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<int32_t> Ops(const json& entry) {
  std::vector<int32_t> ops;
  if (const json* list = ArrayField(entry, "ops")) {
    for (const json& op : *list) {
      if (op.is_number_integer()) ops.push_back(op.get<int32_t>());
    }
  }
  return ops;
}

std::string OpsLabel(const std::vector<int32_t>& ops) {
  std::string s;
  for (int32_t op : ops) {
    if (!s.empty()) s += ',';
    s += std::to_string(op);  // appended on its own: GCC 12 -O3 misreads "," + string as overlap
  }
  return s;
}

// The objects of map[list], keyed by their integer `key`.
std::map<int64_t, const json*> Index(const json& map, const char* list, const char* key) {
  std::map<int64_t, const json*> index;
  if (const json* entries = ArrayField(map, list)) {
    for (const json& e : *entries) {
      int64_t k = 0;
      if (e.is_object() && IntField(e, key, &k)) index.emplace(k, &e);
    }
  }
  return index;
}

// Every kernels[] entry of every delegate, by debug id.
std::map<int64_t, const json*> KernelIndex(const json& map) {
  std::map<int64_t, const json*> index;
  for (const auto& [instruction, delegate] : Index(map, "delegates", "instruction")) {
    if (const json* kernels = ArrayField(*delegate, "kernels")) {
      for (const json& k : *kernels) {
        int64_t id = 0;
        if (k.is_object() && IntField(k, "id", &id)) index.emplace(id, &k);
      }
    }
  }
  return index;
}

// The fields every named row takes from its entry: the op's name ("CONV_2D #0") and its MACs.
void NameSource(const json& entry, ProfileRow& row) {
  row.source_name = StringField(entry, "name");
  int64_t macs = -1;
  if (IntField(entry, "macs", &macs)) row.macs = macs;
}

void NameKernel(const json& entry, ProfileRow& kernel) {
  int64_t index = -1;
  IntField(entry, "kernel", &index);
  kernel.kernel = static_cast<int32_t>(index);
  kernel.source_ops = Ops(entry);
  NameSource(entry, kernel);
  kernel.op = "NPU kernel " + std::to_string(index) + " (id " + std::to_string(kernel.debug_id) +
              ") ops " + OpsLabel(kernel.source_ops);
  if (const json* names = ArrayField(entry, "names");
      names != nullptr && !names->empty() && names->front().is_string()) {
    kernel.layer = names->front().get<std::string>();
  }
}

void NameDelegate(const json& entry, const std::map<int64_t, const json*>& kernels,
                  ProfileRow& row) {
  int64_t partition = -1;
  IntField(entry, "partition", &partition);
  row.op = "delegate " + std::to_string(partition) + " (" + StringField(entry, "backend") + ")";
  row.source_ops.clear();
  for (ProfileRow& k : row.kernels) {
    const auto it = kernels.find(k.debug_id);
    if (it == kernels.end()) continue;
    NameKernel(*it->second, k);
    row.source_ops.insert(row.source_ops.end(), k.source_ops.begin(), k.source_ops.end());
  }
}

}  // namespace

void NameFromDebugMap(const json& map, Profile& profile) {
  if (!map.is_object()) return;
  const std::map<int64_t, const json*> cpu_ops = Index(map, "cpu_ops", "instruction");
  const std::map<int64_t, const json*> delegates = Index(map, "delegates", "instruction");
  const std::map<int64_t, const json*> kernels = KernelIndex(map);
  for (ProfileRow& row : profile.rows) {
    const auto& entries = row.npu ? delegates : cpu_ops;
    const auto it = entries.find(static_cast<int64_t>(row.instruction));
    if (it == entries.end()) continue;
    if (row.npu) {
      NameDelegate(*it->second, kernels, row);
    } else if (const std::string name = StringField(*it->second, "name"); !name.empty()) {
      row.op = name;
      row.source_ops = Ops(*it->second);
      int64_t subgraph = 0;
      if (IntField(*it->second, "subgraph", &subgraph) && subgraph > 0 && subgraph <= INT32_MAX) {
        row.subgraph = static_cast<int32_t>(subgraph);
      }
      NameSource(*it->second, row);
    }
  }
}

}  // namespace boardlab::run
