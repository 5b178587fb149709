#include "server/retention.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "server/clock.h"
#include "server/log.h"

namespace boardlab::server {
namespace {

// Jobs are read this many at a time to find the blobs they refer to.
constexpr int kScanPageJobs = 1000;

}  // namespace

void CollectDigests(const google::protobuf::Message& message,
                    absl::flat_hash_set<std::string>& digests) {
  if (message.GetDescriptor() == v1::Digest::descriptor()) {
    const auto& digest = static_cast<const v1::Digest&>(message);
    if (!digest.sha256().empty()) digests.insert(digest.sha256());
    return;
  }
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (!field->is_repeated()) {
      CollectDigests(reflection->GetMessage(message, field), digests);
      continue;
    }
    for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
      CollectDigests(reflection->GetRepeatedMessage(message, field, i), digests);
    }
  }
}

Retention::Retention(const RetentionConfig& config, Store& store, TieredBlobStore& blobs,
                     Metrics& metrics)
    : config_(config), store_(store), blobs_(blobs), metrics_(metrics) {}

Retention::~Retention() { Stop(); }

void Retention::Pin(const v1::Digest& digest) {
  std::lock_guard lock(mutex_);
  pinned_.insert(digest.sha256());
}

absl::StatusOr<absl::flat_hash_set<std::string>> Retention::ReferencedBlobs() {
  absl::flat_hash_set<std::string> referenced;
  {
    std::lock_guard lock(mutex_);
    referenced = pinned_;
  }
  for (int64_t after = 0;;) {
    auto page = store_.JobsAfter(after, kScanPageJobs);
    if (!page.ok()) return page.status();
    for (const auto& [number, job] : *page) CollectDigests(job, referenced);
    if (static_cast<int>(page->size()) < kScanPageJobs) return referenced;
    after = page->back().first;
  }
}

absl::StatusOr<RetentionSweep> Retention::Sweep(int64_t now_ms) {
  RetentionSweep sweep;
  if (config_.finished_jobs_seconds > 0) {
    auto jobs = store_.DeleteFinishedJobs(now_ms - config_.finished_jobs_seconds * 1000);
    if (!jobs.ok()) return jobs.status();
    sweep.jobs = *jobs;
  }
  if (config_.unused_blobs_seconds > 0) {
    // Read after the jobs are deleted, so that their blobs go in the same sweep; a job
    // submitted meanwhile has touched its blobs, which keeps them.
    auto referenced = ReferencedBlobs();
    if (!referenced.ok()) return referenced.status();
    auto blobs =
        blobs_.DeleteUnused([&](const std::string& sha256) { return referenced->contains(sha256); },
                            now_ms - config_.unused_blobs_seconds * 1000);
    if (!blobs.ok()) return blobs.status();
    sweep.blobs = *blobs;
  }
  metrics_.RetentionDeleted(static_cast<double>(sweep.jobs), static_cast<double>(sweep.blobs.blobs),
                            static_cast<double>(sweep.blobs.bytes));
  metrics_.BlobStoreBytes(static_cast<double>(blobs_.TotalBytes()));
  return sweep;
}

void Retention::Start() {
  if (config_.finished_jobs_seconds == 0 && config_.unused_blobs_seconds == 0) return;
  thread_ = std::thread([this] { Run(); });
}

void Retention::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Retention::Run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    absl::StatusOr<RetentionSweep> sweep = Sweep(NowMs());
    if (!sweep.ok()) {
      LogError("retention sweep failed", {{"error", std::string(sweep.status().message())}});
    } else if (sweep->jobs > 0 || sweep->blobs.blobs > 0) {
      LogInfo("retention sweep", {{"jobs_deleted", std::to_string(sweep->jobs)},
                                  {"blobs_deleted", std::to_string(sweep->blobs.blobs)},
                                  {"bytes_deleted", std::to_string(sweep->blobs.bytes)}});
    }
    lock.lock();
    wake_.wait_for(lock, std::chrono::seconds(config_.sweep_interval_seconds),
                   [this] { return stopping_; });
  }
}

}  // namespace boardlab::server
