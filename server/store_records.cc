#include "server/store_records.h"

#include <algorithm>

#include "nlohmann/json.hpp"

namespace boardlab::server {
namespace {

nlohmann::json DigestJson(const v1::Digest& digest) {
  return {{"sha256", digest.sha256()}, {"size", digest.size_bytes()}};
}

v1::Digest DigestFromJson(const nlohmann::json& json) {
  v1::Digest digest;
  digest.set_sha256(json.value("sha256", ""));
  digest.set_size_bytes(json.value("size", int64_t{0}));
  return digest;
}

}  // namespace

std::string CompileRecordToJson(const CompileRecord& record) {
  nlohmann::json json = {{"artifact", DigestJson(record.artifact)},
                         {"report", DigestJson(record.report)},
                         {"debug_map", DigestJson(record.debug_map)},
                         {"input_bytes", record.input_bytes},
                         {"output_bytes", record.output_bytes},
                         {"error", record.error},
                         {"error_code", record.error_code}};
  return json.dump();
}

absl::StatusOr<CompileRecord> CompileRecordFromJson(const std::string& text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::DataLossError("the database holds a corrupt compile record");
  }
  CompileRecord record;
  record.artifact = DigestFromJson(json.value("artifact", nlohmann::json::object()));
  record.report = DigestFromJson(json.value("report", nlohmann::json::object()));
  record.debug_map = DigestFromJson(json.value("debug_map", nlohmann::json::object()));
  record.input_bytes = json.value("input_bytes", std::vector<int64_t>{});
  record.output_bytes = json.value("output_bytes", std::vector<int64_t>{});
  record.error = json.value("error", "");
  record.error_code = json.value("error_code", 0);
  return record;
}

bool MatchesStateAndLabels(const v1::Job& job, const JobFilter& filter) {
  if (!filter.states.empty() &&
      std::find(filter.states.begin(), filter.states.end(), job.state()) == filter.states.end()) {
    return false;
  }
  for (const auto& wanted : filter.labels) {
    bool found = std::any_of(job.spec().labels().begin(), job.spec().labels().end(),
                             [&](const v1::Tag& tag) {
                               return tag.key() == wanted.key() && tag.value() == wanted.value();
                             });
    if (!found) return false;
  }
  return true;
}

}  // namespace boardlab::server
