#pragma once

// The server's durable state: jobs, their event logs, boards and the compile cache. The Lab keeps
// its working set in memory and writes every change through this interface before it is
// acknowledged, so a restarted server (even after kill -9) loses nothing it has confirmed.
// SqliteStore (the default) and PostgresStore implement it with the same behaviour
// (tests/store/store_conformance_test.cc).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "boardlab/v1/types.pb.h"

namespace boardlab::server {

struct JobFilter {
  std::vector<v1::JobState> states;    // empty = any
  std::string tenant;                  // empty = any
  std::string board_type;              // empty = any
  std::vector<v1::Tag> labels;         // all must match
  std::vector<v1::JobResult> results;  // empty = any; else finished jobs with one of these
};

struct JobPage {
  std::vector<v1::Job> jobs;  // newest first
  int64_t next_before = 0;    // 0 = no more
};

/// What a compile produced, keyed by model digest + compiler version + options.
struct CompileRecord {
  v1::Digest artifact;
  v1::Digest report;
  v1::Digest debug_map;
  std::vector<int64_t> input_bytes;  // per model input, for random inputs and upload checks
  std::vector<int64_t> output_bytes;
  std::string error;   // non-empty: the compiler rejected the model with this message
  int error_code = 0;  // absl::StatusCode of the rejection
};

/// Writes that reach the disk together: one transaction, so that a series of changes costs one
/// commit (the Lab gathers what one call changes and commits it before anyone is told).
struct StoreBatch {
  std::map<int64_t, v1::Job> jobs;          // by job number; the last version of each
  std::vector<v1::JobEvent> events;         // in order
  std::map<std::string, v1::Board> boards;  // by id; the last version of each
  std::set<std::pair<std::string, std::string>> blob_grants;  // (tenant, sha256) to record
  bool empty() const {
    return jobs.empty() && events.empty() && boards.empty() && blob_grants.empty();
  }
  void clear() {
    jobs.clear();
    events.clear();
    boards.clear();
    blob_grants.clear();
  }
};

class ClusterStore;

class Store {
 public:
  virtual ~Store() = default;

  /// The seam for several replicas sharing this store (server/cluster_store.h); nullptr when the
  /// store is one server's own (SQLite).
  virtual ClusterStore* Cluster() { return nullptr; }

  /// Applies a batch of PutJob, AppendEvent and PutBoard writes atomically: all or none.
  /// Errors: as PutJob's.
  virtual absl::Status Commit(const StoreBatch& batch) = 0;

  /// Inserts or replaces a job (its number is the numeric part of its id). Errors:
  /// AlreadyExists when a new job's tenant and request id are another job's (one job per
  /// request id, also for replicas that looked it up at the same moment).
  virtual absl::Status PutJob(int64_t number, const v1::Job& job) = 0;
  virtual absl::StatusOr<std::optional<v1::Job>> GetJob(const std::string& id) = 0;
  virtual absl::StatusOr<std::optional<v1::Job>> FindJobByRequestId(
      const std::string& tenant, const std::string& request_id) = 0;
  /// Every job not in state DONE, oldest first.
  virtual absl::StatusOr<std::vector<v1::Job>> LoadUnfinishedJobs() = 0;
  /// Jobs with a number below `before` (0 = from the newest), newest first.
  virtual absl::StatusOr<JobPage> ListJobs(const JobFilter& filter, int64_t before,
                                           int page_size) = 0;
  virtual absl::StatusOr<int64_t> MaxJobNumber() = 0;
  /// Up to `limit` jobs numbered above `after`, in number order (for scans in pages).
  virtual absl::StatusOr<std::vector<std::pair<int64_t, v1::Job>>> JobsAfter(int64_t after,
                                                                             int limit) = 0;
  /// Deletes finished jobs that ended before `ended_before_ms`, with their events; how many.
  virtual absl::StatusOr<int64_t> DeleteFinishedJobs(int64_t ended_before_ms) = 0;

  virtual absl::Status AppendEvent(const v1::JobEvent& event) = 0;
  virtual absl::StatusOr<std::vector<v1::JobEvent>> Events(const std::string& job_id,
                                                           int64_t after_seq) = 0;

  virtual absl::Status PutBoard(const v1::Board& board) = 0;
  virtual absl::StatusOr<std::vector<v1::Board>> LoadBoards() = 0;

  virtual absl::Status PutCompile(const std::string& key, const CompileRecord& record) = 0;
  virtual absl::StatusOr<std::optional<CompileRecord>> GetCompile(const std::string& key) = 0;

  /// Small blobs by SHA-256 (TieredBlobStore keeps them here rather than in a file each). The
  /// caller has checked the bytes against the digest.
  virtual absl::Status PutBlob(const std::string& sha256, std::string_view bytes) = 0;
  virtual absl::StatusOr<std::optional<std::string>> GetBlob(const std::string& sha256) = 0;
  /// The stored blob's size; -1 when it is not here.
  virtual absl::StatusOr<int64_t> BlobSize(const std::string& sha256) = 0;
  /// The bytes of all small blobs.
  virtual absl::StatusOr<int64_t> BlobBytes() = 0;
  /// Marks a small blob as used at `now_ms` (retention keeps blobs in use); a use recorded less
  /// than kTouchPrecisionMs before stays. Returns its use as recorded after the call, -1 when the
  /// blob is not stored (a cache may take it for present until retention could delete it).
  virtual absl::StatusOr<int64_t> TouchBlob(const std::string& sha256, int64_t now_ms) = 0;
  /// The small blobs last used (stored or touched) before `ms`.
  virtual absl::StatusOr<std::vector<std::string>> BlobsUnusedSince(int64_t ms) = 0;
  /// Deletes a small blob unless it was used since `ms`; its size, or -1 when it stays.
  virtual absl::StatusOr<int64_t> DeleteBlobUnusedSince(const std::string& sha256, int64_t ms) = 0;

  /// Blob grants: which tenants may find, read and reference a blob (they uploaded its bytes, or
  /// a job of theirs produced it). The bytes are stored once whatever the number of grants.
  virtual absl::Status GrantBlob(const std::string& tenant, const std::string& sha256) = 0;
  virtual absl::StatusOr<bool> HasBlobGrant(const std::string& tenant,
                                            const std::string& sha256) = 0;
  /// Forgets every grant of these blobs (retention deleted them).
  virtual absl::Status DeleteBlobGrants(const std::vector<std::string>& sha256s) = 0;
};

using StorePtr = std::unique_ptr<Store>;

}  // namespace boardlab::server
