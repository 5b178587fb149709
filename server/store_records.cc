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

absl::Status WriteBatch(const StoreBatch& batch, BatchWriter& writer) {
  for (const auto& [number, job] : batch.jobs) {
    if (absl::Status ok = writer.PutJobLocked(number, job); !ok.ok()) return ok;
  }
  for (const v1::JobEvent& event : batch.events) {
    if (absl::Status ok = writer.AppendEventLocked(event); !ok.ok()) return ok;
  }
  for (const auto& [id, board] : batch.boards) {
    if (absl::Status ok = writer.PutBoardLocked(board); !ok.ok()) return ok;
  }
  for (const auto& [tenant, sha256] : batch.blob_grants) {
    if (absl::Status ok = writer.GrantBlobLocked(tenant, sha256); !ok.ok()) return ok;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> RetentionPage::Scan(int64_t number, const std::string& record) {
  ++rows_;
  after_ = number;
  auto job = ParseRecord<v1::Job>(record, "job");
  if (!job.ok()) return job.status();
  past_cutoff_ = job->submit_time_ms() >= ended_before_ms_;
  if (past_cutoff_) return false;
  if (job->end_time_ms() < ended_before_ms_) expired_.push_back(job->id());
  return true;
}

absl::StatusOr<int64_t> DeleteInPages(
    const std::function<absl::StatusOr<RetentionPage>(int64_t after)>& delete_page) {
  int64_t deleted = 0;
  int64_t after = 0;
  for (bool more = true; more;) {
    absl::StatusOr<RetentionPage> page = delete_page(after);
    if (!page.ok()) return page.status();
    deleted += static_cast<int64_t>(page->expired().size());
    after = page->after();
    more = page->more();
  }
  return deleted;
}

bool MatchesParsedFilter(const v1::Job& job, const JobFilter& filter) {
  if (!filter.states.empty() &&
      std::find(filter.states.begin(), filter.states.end(), job.state()) == filter.states.end()) {
    return false;
  }
  if (!filter.results.empty() &&
      (job.state() != v1::JOB_STATE_DONE || std::find(filter.results.begin(), filter.results.end(),
                                                      job.result()) == filter.results.end())) {
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
