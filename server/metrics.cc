#include "server/metrics.h"

namespace boardlab::server {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Histogram;

// Seconds from a millisecond scheduling decision to a long board run.
Histogram::BucketBoundaries DurationBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900};
}

// A commit takes tens of microseconds (SQLite in WAL mode) to milliseconds (a database over a
// network); seconds mean a stuck disk or database.
Histogram::BucketBoundaries CommitBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5};
}

}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      submitted_(BuildCounter()
                     .Name("boardlab_jobs_submitted_total")
                     .Help("Jobs accepted by SubmitJob, by requested board type")
                     .Register(*registry_)),
      finished_(BuildCounter()
                    .Name("boardlab_jobs_finished_total")
                    .Help("Jobs that reached DONE, by board type and result")
                    .Register(*registry_)),
      jobs_(BuildGauge()
                .Name("boardlab_jobs")
                .Help("Jobs known to the server that are not finished, by state")
                .Register(*registry_)),
      queue_depth_(BuildGauge()
                       .Name("boardlab_scheduler_queue_depth")
                       .Help("Compiled jobs waiting for a board, by board type")
                       .Register(*registry_)),
      queue_wait_(BuildHistogram()
                      .Name("boardlab_scheduler_queue_wait_seconds")
                      .Help("Time from entering the queue to a board assignment, by board type")
                      .Register(*registry_)),
      stage_duration_(BuildHistogram()
                          .Name("boardlab_job_stage_duration_seconds")
                          .Help("Duration of job stages: compile, queue, load, run, collect")
                          .Register(*registry_)),
      compile_cache_(BuildCounter()
                         .Name("boardlab_compile_cache_requests_total")
                         .Help("Compile requests by outcome: hit, miss (a compile ran), dedup "
                               "(joined an identical in-flight compile)")
                         .Register(*registry_)),
      boards_(BuildGauge()
                  .Name("boardlab_boards")
                  .Help("Boards by board type and state")
                  .Register(*registry_)),
      agents_(BuildGauge()
                  .Name("boardlab_agents_connected")
                  .Help("Agents with an open AgentService stream")
                  .Register(*registry_)
                  .Add({})),
      retries_(BuildCounter()
                   .Name("boardlab_job_retries_total")
                   .Help("Job attempts requeued after an infrastructure failure, by board type")
                   .Register(*registry_)),
      lease_expiries_(BuildCounter()
                          .Name("boardlab_lease_expiries_total")
                          .Help("Board leases that expired because their agent went silent")
                          .Register(*registry_)
                          .Add({})),
      quarantines_(BuildCounter()
                       .Name("boardlab_board_quarantines_total")
                       .Help("Boards taken out of service after repeated infrastructure failures")
                       .Register(*registry_)),
      blob_bytes_(BuildGauge()
                      .Name("boardlab_blob_store_bytes")
                      .Help("Bytes held by the content-addressed artifact store")
                      .Register(*registry_)
                      .Add({})),
      uploaded_bytes_(BuildCounter()
                          .Name("boardlab_blob_uploaded_bytes_total")
                          .Help("Bytes received by ArtifactService.Upload")
                          .Register(*registry_)
                          .Add({})),
      retention_jobs_(BuildCounter()
                          .Name("boardlab_retention_deleted_jobs_total")
                          .Help("Finished jobs deleted, with their events, past their retention")
                          .Register(*registry_)
                          .Add({})),
      retention_blobs_(BuildCounter()
                           .Name("boardlab_retention_deleted_blobs_total")
                           .Help("Blobs deleted because no kept job refers to them and they "
                                 "went unused past their retention")
                           .Register(*registry_)
                           .Add({})),
      retention_bytes_(BuildCounter()
                           .Name("boardlab_retention_deleted_bytes_total")
                           .Help("Bytes of the blobs retention deleted")
                           .Register(*registry_)
                           .Add({})),
      store_commits_(BuildHistogram()
                         .Name("boardlab_store_commit_duration_seconds")
                         .Help("Commits of the server's changes to its store (SQLite or "
                               "PostgreSQL), one per call that changed state; the server's "
                               "calls wait for each other meanwhile")
                         .Register(*registry_)
                         .Add({}, CommitBuckets())) {}

void Metrics::JobSubmitted(const std::string& board_type) {
  submitted_.Add({{"board_type", board_type}}).Increment();
}

void Metrics::JobFinished(const std::string& board_type, const std::string& result) {
  finished_.Add({{"board_type", board_type}, {"result", result}}).Increment();
}

void Metrics::JobStateChanged(const std::string& from, const std::string& to) {
  if (!from.empty()) jobs_.Add({{"state", from}}).Decrement();
  if (!to.empty()) jobs_.Add({{"state", to}}).Increment();
}

void Metrics::JobsInState(const std::string& state, double count) {
  jobs_.Add({{"state", state}}).Set(count);
}

void Metrics::QueueDepth(const std::string& board_type, double depth) {
  queue_depth_.Add({{"board_type", board_type}}).Set(depth);
}

void Metrics::QueueWait(const std::string& board_type, double seconds) {
  queue_wait_.Add({{"board_type", board_type}}, DurationBuckets()).Observe(seconds);
}

void Metrics::StageDuration(const std::string& stage, double seconds) {
  stage_duration_.Add({{"stage", stage}}, DurationBuckets()).Observe(seconds);
}

void Metrics::CompileCache(const std::string& outcome) {
  compile_cache_.Add({{"outcome", outcome}}).Increment();
}

void Metrics::BoardsInState(const std::string& board_type, const std::string& state, double count) {
  boards_.Add({{"board_type", board_type}, {"state", state}}).Set(count);
}

void Metrics::AgentsConnected(double count) { agents_.Set(count); }

void Metrics::Retry(const std::string& board_type) {
  retries_.Add({{"board_type", board_type}}).Increment();
}

void Metrics::LeaseExpired() { lease_expiries_.Increment(); }

void Metrics::Quarantined(const std::string& board_type) {
  quarantines_.Add({{"board_type", board_type}}).Increment();
}

void Metrics::BlobStoreBytes(double bytes) { blob_bytes_.Set(bytes); }

void Metrics::BlobsUploaded(double bytes) { uploaded_bytes_.Increment(bytes); }

void Metrics::RetentionDeleted(double jobs, double blobs, double blob_bytes) {
  retention_jobs_.Increment(jobs);
  retention_blobs_.Increment(blobs);
  retention_bytes_.Increment(blob_bytes);
}

void Metrics::StoreCommit(double seconds) { store_commits_.Observe(seconds); }

}  // namespace boardlab::server
