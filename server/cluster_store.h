#pragma once

// The seam between the Lab and a database shared by several server replicas (docs/server.md,
// "Replicas"). A store that can be shared (PostgresStore) offers it through Store::Cluster();
// SqliteStore does not, and a Lab over it runs as the single server it always was.
//
// Usage (one replica; another process does the same on the same database):
//   ClusterStore* cluster = store.Cluster();           // nullptr: a single server
//   cluster->RegisterReplica("10.0.0.5:7400");
//   auto lookup = cluster->LookUpForSubmit(tenant, request_id, compile_key);  // one statement
//   auto lost = cluster->CommitOwned(batch);            // writes only what this replica owns
//   auto job = cluster->ClaimQueuedJob(idle, matches);  // FOR UPDATE SKIP LOCKED
//   auto listener = cluster->Listen([](const ClusterNotification& n) { ... });
//
// Ownership: a job or board row has an owner (a replica id) or none. A replica changes only the
// rows it owns; it takes ownership through the Take/Claim calls below, each one transaction that
// locks the rows it looks at, so two replicas never take the same job.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "boardlab/v1/types.pb.h"
#include "server/store.h"

namespace boardlab::server {

struct StoreBatch;

/// What the Lab keeps per job besides its API record, stored so that another replica can carry
/// the job on (replicas only; a single server keeps it in memory).
struct JobRuntime {
  std::string owner;                    // replica id; "" = none (queued or orphaned)
  int64_t queue_deadline_ms = 0;        // a QUEUED job times out after this (0 = never)
  int64_t lease_deadline_ms = 0;        // an orphaned run is retried after this (0 = none)
  int infra_failures = 0;               // infrastructure failures so far (against retry_budget)
  std::set<std::string> failed_boards;  // boards an attempt failed on
  bool cancel_requested = false;
};

/// A job a replica has just taken ownership of, with its event log read in the transaction that
/// took it: a take that cannot read the log is rolled back, so a job is never owned by a replica
/// that could not carry it on.
struct OwnedJob {
  int64_t number = 0;
  v1::Job job;
  JobRuntime runtime;
  std::vector<v1::JobEvent> events;  // in seq order
};

/// A queued job a replica has just claimed for one of its idle boards.
struct ClaimedJob {
  OwnedJob owned;
  std::string board_id;  // the board it was claimed for
  bool more = false;     // other queued jobs those boards might run were there too
};

/// What CommitOwned did not write because another replica (or none) owns it now.
struct CommitLosses {
  std::vector<int64_t> jobs;        // job numbers
  std::vector<std::string> boards;  // board ids
  bool empty() const { return jobs.empty() && boards.empty(); }
};

/// A board as the cluster knows it.
struct ClusterBoard {
  v1::Board board;    // as its owner last wrote it
  std::string owner;  // "" = no replica serves it
  bool owner_alive = false;
};

/// Boards an agent's Hello takes over, with the runs on them.
struct TakenBoards {
  std::vector<v1::Board> boards;  // the stored records of those that were known
  std::vector<OwnedJob> jobs;     // unfinished jobs on them (ASSIGNED .. COLLECTING)
};

/// What a submit reads from the database, in one statement (LookUpForSubmit).
struct SubmitLookup {
  int64_t number = 0;      // a new job number (as NextJobNumber)
  int64_t unfinished = 0;  // the tenant's unfinished jobs over all replicas (as UnfinishedJobsOf)
  std::optional<CompileRecord> compile;  // the compile cache's entry for the key; nullopt: none
  std::optional<v1::Job> by_request_id;  // the tenant's job with the request id; nullopt: none
};

/// A notification from another replica (or this one): `channel` is one of the kChannel*
/// names; an empty channel means the listener reconnected and may have missed some.
struct ClusterNotification {
  std::string channel;
  std::string payload;
  bool from_here = false;  // sent by this replica's own statements (its commits)
};

inline constexpr char kQueueChannel[] = "boardlab_queue";        // payload: board type
inline constexpr char kEventsChannel[] = "boardlab_events";      // payload: job id
inline constexpr char kCancelChannel[] = "boardlab_cancel";      // payload: job id
inline constexpr char kCompiledChannel[] = "boardlab_compiled";  // payload: compile cache key

/// Receives notifications on a thread of its own until destroyed.
class ClusterListener {
 public:
  virtual ~ClusterListener() = default;
};

class ClusterStore {
 public:
  virtual ~ClusterStore() = default;

  /// This replica's id: random, chosen when the store was opened.
  virtual const std::string& ReplicaId() const = 0;

  /// Announces this replica (its gRPC address, for logs and operators) with a fresh heartbeat.
  virtual absl::Status RegisterReplica(const std::string& address) = 0;
  /// Renews the heartbeat. Errors: NotFound when another replica declared this one dead and
  /// released its work (the caller must drop what it holds and register again).
  virtual absl::Status HeartbeatReplica() = 0;
  /// A clean shutdown: releases this replica's work at once, as RecoverDeadReplicas would.
  virtual absl::Status UnregisterReplica(int64_t orphan_wait_ms) = 0;
  /// Releases the work of every replica whose heartbeat is older than `lease_ms`: its boards go
  /// offline, its compile claims and compiling and claimed jobs are released, its runs become
  /// orphans that wait `orphan_wait_ms` for their agent. Returns the ids of the replicas.
  virtual absl::StatusOr<std::vector<std::string>> RecoverDeadReplicas(int64_t lease_ms,
                                                                       int64_t orphan_wait_ms) = 0;

  /// A new job number, never handed out before (a database sequence).
  virtual absl::StatusOr<int64_t> NextJobNumber() = 0;
  /// What a submit needs to know, in one round trip: a new job number, the tenant's unfinished
  /// jobs, the compile cache entry of `compile_key`, and the tenant's job with `request_id` (not
  /// looked up when it is empty). The number is taken even when the submit then uses none (a
  /// gap in the sequence, as a rolled back one would be).
  virtual absl::StatusOr<SubmitLookup> LookUpForSubmit(const std::string& tenant,
                                                       const std::string& request_id,
                                                       const std::string& compile_key) = 0;

  /// Writes `batch` in one transaction, but only the jobs (with `runtimes`, their events) and
  /// boards that are new or owned by this replica; returns the others. Notifies
  /// kQueueChannel for jobs written QUEUED and kEventsChannel for jobs given events.
  /// Errors: AlreadyExists (nothing written) when a new job's tenant and request id are another
  /// job's: a concurrent submit of the same request on another replica won.
  /// `claiming_next`: the caller claims right after the commit, so jobs written QUEUED are
  /// notified to no replica; the caller calls NotifyQueued for those it did not claim.
  virtual absl::StatusOr<CommitLosses> CommitOwned(const StoreBatch& batch,
                                                   const std::map<int64_t, JobRuntime>& runtimes,
                                                   bool claiming_next = false) = 0;
  /// Notifies kQueueChannel of `board_type` (jobs a claiming_next commit queued and its replica
  /// did not claim).
  virtual absl::Status NotifyQueued(const std::string& board_type) = 0;

  /// Takes the best queued job for any of `boards` (idle boards of one type; a job pinned to a
  /// board waits for that one) in one claim: highest priority, then the tenant with the fewest
  /// running jobs over all replicas, then the oldest, among those `matches` accepts for some
  /// board (tags, failed boards); the job goes to the first such board in `boards`' order. Rows
  /// other replicas are claiming are skipped, not waited for. nullopt when none. One call per
  /// notification and board type, however many boards are idle: the common case is one
  /// statement.
  virtual absl::StatusOr<std::optional<ClaimedJob>> ClaimQueuedJob(
      const std::vector<v1::Board>& boards,
      const std::function<bool(const v1::Job&, const JobRuntime&, const v1::Board&)>& matches) = 0;
  /// Takes unowned jobs that need a replica: COMPILING (their compiler died), QUEUED past their
  /// queue deadline, orphaned runs past their lease deadline. At most `limit`.
  virtual absl::StatusOr<std::vector<OwnedJob>> TakeStrandedJobs(int64_t now_ms, int limit) = 0;
  /// Takes job `id` when it is QUEUED and unowned (to cancel it); nullopt otherwise.
  virtual absl::StatusOr<std::optional<OwnedJob>> TakeQueuedJob(const std::string& id) = 0;
  /// Takes the boards an agent connected with, and the unfinished runs on them.
  virtual absl::StatusOr<TakenBoards> TakeBoards(const std::vector<std::string>& board_ids) = 0;
  /// Marks an unfinished job's cancel as requested and notifies kCancelChannel (its owner acts).
  /// Returns its owner ("" when none); NotFound when the job is unknown or finished.
  virtual absl::StatusOr<std::string> RequestCancel(const std::string& job_id) = 0;

  virtual absl::StatusOr<std::vector<ClusterBoard>> ClusterBoards() = 0;
  /// Queued jobs by board type (all replicas).
  virtual absl::StatusOr<std::map<std::string, int>> QueuedCounts() = 0;
  /// Unfinished jobs by state (all replicas).
  virtual absl::StatusOr<std::map<v1::JobState, int>> UnfinishedByState() = 0;
  virtual absl::StatusOr<int64_t> UnfinishedJobsOf(const std::string& tenant) = 0;
  /// A queued job's 1-based place in its type's queue (priority, then number) and the queue's
  /// length; nullopt when it is not queued.
  virtual absl::StatusOr<std::optional<std::pair<int32_t, int32_t>>> QueuePlace(int64_t number) = 0;

  /// Claims the compile of cache key `key` for this replica: false when another replica's claim
  /// holds it (wait for kCompiledChannel).
  virtual absl::StatusOr<bool> ClaimCompile(const std::string& key) = 0;
  /// Drops this replica's claim (the result is in the compile cache) and notifies
  /// kCompiledChannel.
  virtual absl::Status FinishCompileClaim(const std::string& key) = 0;

  /// Starts listening on every kChannel*; `deliver` runs on the listener's thread.
  virtual absl::StatusOr<std::unique_ptr<ClusterListener>> Listen(
      std::function<void(const ClusterNotification&)> deliver) = 0;
};

}  // namespace boardlab::server
