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
    // A blob uploaded again later must be proven again by whoever wants it.
    if (absl::Status ok = store_.DeleteBlobGrants(blobs->deleted); !ok.ok()) return ok;
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
