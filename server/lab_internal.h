#pragma once

// What the Lab's source files (lab*.cc) share and nobody else needs.

#include <chrono>
#include <string>

#include "boardlab/v1/board_service.pb.h"
#include "boardlab/v1/job_service.pb.h"
#include "server/metrics.h"

namespace boardlab::server::lab_internal {

/// "queued", "running", ... for logs and metrics labels.
std::string StateName(v1::JobState state);
/// "pass", "infra_error", ... for logs and metrics labels.
std::string ResultName(v1::JobResult result);
/// Whether a job in `state` holds a board.
bool OnBoard(v1::JobState state);
/// Whether `board` carries every tag of `wanted`.
bool HasTags(const v1::Board& board, const google::protobuf::RepeatedPtrField<v1::Tag>& wanted);

/// Observes a store commit's duration when it goes out of scope (boardlab_store_commit_...).
class TimedCommit {
 public:
  explicit TimedCommit(Metrics& metrics)
      : metrics_(metrics), start_(std::chrono::steady_clock::now()) {}
  ~TimedCommit() {
    metrics_.StoreCommit(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }
  TimedCommit(const TimedCommit&) = delete;
  TimedCommit& operator=(const TimedCommit&) = delete;

 private:
  Metrics& metrics_;
  const std::chrono::steady_clock::time_point start_;
};

}  // namespace boardlab::server::lab_internal
