#pragma once

// Every metric boardlab-server exports, declared once (STYLE.md rule 23). Names follow
// boardlab_<subsystem>_<name>_<unit>; labels are bounded (board types, states, results, stages).

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>

namespace boardlab::server {

class Metrics {
 public:
  Metrics();

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  void JobSubmitted(const std::string& board_type);
  void JobFinished(const std::string& board_type, const std::string& result);
  void JobStateChanged(const std::string& from, const std::string& to);  // "" = none
  /// Replicas: the unfinished jobs in `state` over all replicas, as the database counts them.
  void JobsInState(const std::string& state, double count);
  void QueueDepth(const std::string& board_type, double depth);
  void QueueWait(const std::string& board_type, double seconds);
  void StageDuration(const std::string& stage, double seconds);
  void CompileCache(const std::string& outcome);  // hit, miss, dedup
  void BoardsInState(const std::string& board_type, const std::string& state, double count);
  void AgentsConnected(double count);
  void Retry(const std::string& board_type);
  void LeaseExpired();
  void Quarantined(const std::string& board_type);
  void BlobStoreBytes(double bytes);
  void BlobsUploaded(double bytes);
  /// One retention sweep's deletions.
  void RetentionDeleted(double jobs, double blobs, double blob_bytes);
  /// One commit of the Lab's changes to the store (a call's writes), however it ended.
  void StoreCommit(double seconds);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& submitted_;
  prometheus::Family<prometheus::Counter>& finished_;
  prometheus::Family<prometheus::Gauge>& jobs_;
  prometheus::Family<prometheus::Gauge>& queue_depth_;
  prometheus::Family<prometheus::Histogram>& queue_wait_;
  prometheus::Family<prometheus::Histogram>& stage_duration_;
  prometheus::Family<prometheus::Counter>& compile_cache_;
  prometheus::Family<prometheus::Gauge>& boards_;
  prometheus::Gauge& agents_;
  prometheus::Family<prometheus::Counter>& retries_;
  prometheus::Counter& lease_expiries_;
  prometheus::Family<prometheus::Counter>& quarantines_;
  prometheus::Gauge& blob_bytes_;
  prometheus::Counter& uploaded_bytes_;
  prometheus::Counter& retention_jobs_;
  prometheus::Counter& retention_blobs_;
  prometheus::Counter& retention_bytes_;
  prometheus::Histogram& store_commits_;
};

}  // namespace boardlab::server
