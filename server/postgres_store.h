#pragma once

#include <libpq-fe.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "server/cluster_store.h"
#include "server/store.h"
#include "server/store_records.h"

namespace boardlab::server {

/// Store in a PostgreSQL database: the same tables and semantics as SqliteStore (rows keep the
/// serialized protobuf next to the columns queries filter on), for a lab whose state must outlive
/// the server's machine. Thread-safe: a small pool of connections, each call holding one for its
/// statements (calls on different threads run side by side); statements are prepared once per
/// connection. A connection found broken between calls is re-established (the call that found
/// it broken fails; nothing of an interrupted transaction stays). Several servers may share one
/// database as replicas (server/cluster_store.h, implemented in postgres_cluster.cc).
class PostgresStore : public Store, public ClusterStore, private BatchWriter {
 public:
  /// Connects to `conninfo` (a postgres:// URI or libpq key=value string) and brings the schema
  /// up to date (versioned migrations in one transaction). `password`, when not empty, is used
  /// instead of libpq's own sources (PGPASSWORD, PGPASSFILE, ~/.pgpass). Errors: Unavailable when
  /// the server cannot be reached, refuses the login or holds a database migrated by a newer
  /// boardlab-server (the message says which).
  static absl::StatusOr<std::unique_ptr<PostgresStore>> Open(const std::string& conninfo,
                                                             const std::string& password);
  ~PostgresStore() override;

  absl::Status Commit(const StoreBatch& batch) override;
  absl::Status PutJob(int64_t number, const v1::Job& job) override;
  absl::StatusOr<std::optional<v1::Job>> GetJob(const std::string& id) override;
  absl::StatusOr<std::optional<v1::Job>> FindJobByRequestId(const std::string& tenant,
                                                            const std::string& request_id) override;
  absl::StatusOr<std::vector<v1::Job>> LoadUnfinishedJobs() override;
  absl::StatusOr<JobPage> ListJobs(const JobFilter& filter, int64_t before, int page_size) override;
  absl::StatusOr<int64_t> MaxJobNumber() override;
  absl::StatusOr<std::vector<std::pair<int64_t, v1::Job>>> JobsAfter(int64_t after,
                                                                     int limit) override;
  absl::StatusOr<int64_t> DeleteFinishedJobs(int64_t ended_before_ms) override;
  absl::Status AppendEvent(const v1::JobEvent& event) override;
  absl::StatusOr<std::vector<v1::JobEvent>> Events(const std::string& job_id,
                                                   int64_t after_seq) override;
  absl::Status PutBoard(const v1::Board& board) override;
  absl::StatusOr<std::vector<v1::Board>> LoadBoards() override;
  absl::Status PutCompile(const std::string& key, const CompileRecord& record) override;
  absl::StatusOr<std::optional<CompileRecord>> GetCompile(const std::string& key) override;
  absl::Status PutBlob(const std::string& sha256, std::string_view bytes) override;
  absl::StatusOr<std::optional<std::string>> GetBlob(const std::string& sha256) override;
  absl::StatusOr<int64_t> BlobSize(const std::string& sha256) override;
  absl::StatusOr<int64_t> BlobBytes() override;
  absl::StatusOr<int64_t> TouchBlob(const std::string& sha256, int64_t now_ms) override;
  absl::StatusOr<std::vector<std::string>> BlobsUnusedSince(int64_t ms) override;
  absl::StatusOr<int64_t> DeleteBlobUnusedSince(const std::string& sha256, int64_t ms) override;
  absl::Status GrantBlob(const std::string& tenant, const std::string& sha256) override;
  absl::StatusOr<bool> HasBlobGrant(const std::string& tenant, const std::string& sha256) override;
  absl::Status DeleteBlobGrants(const std::vector<std::string>& sha256s) override;

  /// The schema version this server migrates databases to.
  static int64_t LatestSchemaVersion();

  ClusterStore* Cluster() override { return this; }

  // ClusterStore (postgres_cluster.cc).
  const std::string& ReplicaId() const override { return replica_id_; }
  absl::Status RegisterReplica(const std::string& address) override;
  absl::Status HeartbeatReplica() override;
  absl::Status UnregisterReplica(int64_t orphan_wait_ms) override;
  absl::StatusOr<std::vector<std::string>> RecoverDeadReplicas(int64_t lease_ms,
                                                               int64_t orphan_wait_ms) override;
  absl::StatusOr<int64_t> NextJobNumber() override;
  absl::StatusOr<SubmitLookup> LookUpForSubmit(const std::string& tenant,
                                               const std::string& request_id,
                                               const std::string& compile_key) override;
  absl::StatusOr<CommitLosses> CommitOwned(const StoreBatch& batch,
                                           const std::map<int64_t, JobRuntime>& runtimes,
                                           bool claiming_next = false) override;
  absl::Status NotifyQueued(const std::string& board_type) override;
  absl::StatusOr<std::optional<ClaimedJob>> ClaimQueuedJob(
      const std::vector<v1::Board>& boards,
      const std::function<bool(const v1::Job&, const JobRuntime&, const v1::Board&)>& matches)
      override;
  absl::StatusOr<std::vector<OwnedJob>> TakeStrandedJobs(int64_t now_ms, int limit) override;
  absl::StatusOr<std::optional<OwnedJob>> TakeQueuedJob(const std::string& id) override;
  absl::StatusOr<TakenBoards> TakeBoards(const std::vector<std::string>& board_ids) override;
  absl::StatusOr<std::string> RequestCancel(const std::string& job_id) override;
  absl::StatusOr<std::vector<ClusterBoard>> ClusterBoards() override;
  absl::StatusOr<std::map<std::string, int>> QueuedCounts() override;
  absl::StatusOr<std::map<v1::JobState, int>> UnfinishedByState() override;
  absl::StatusOr<int64_t> UnfinishedJobsOf(const std::string& tenant) override;
  absl::StatusOr<std::optional<std::pair<int32_t, int32_t>>> QueuePlace(int64_t number) override;
  absl::StatusOr<bool> ClaimCompile(const std::string& key) override;
  absl::Status FinishCompileClaim(const std::string& key) override;
  absl::StatusOr<std::unique_ptr<ClusterListener>> Listen(
      std::function<void(const ClusterNotification&)> deliver) override;

 private:
  /// One connection of the pool, with what lives per connection.
  struct Connection {
    explicit Connection(PGconn* connection) : pg(connection), backend_pid(PQbackendPID(pg)) {}
    ~Connection();
    PGconn* pg;
    std::map<std::string, std::string> prepared;  // statement name by SQL text
    bool in_transaction = false;
    /// Its PostgreSQL backend's process id, which a NOTIFY it sent carries (read by the
    /// listener's thread).
    std::atomic<int> backend_pid;
  };

  class Params;
  class Rows;
  PostgresStore(PGconn* connection, std::string conninfo, std::string password);

  /// Connections per store: independent calls (a submit's reads, a watcher, the Lab's commit)
  /// need not wait for each other's round trips. Each is a PostgreSQL backend process; a few
  /// per replica keep well under the database's max_connections (default 100).
  static constexpr int kMaxConnections = 4;

  /// Holds a connection of the pool for one public call; the statements of that call (Run,
  /// Exec, RunPipelined, InTransaction) go to it (Current()).
  class Lease {
   public:
    explicit Lease(PostgresStore& store);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

   private:
    PostgresStore& store_;
    Connection* connection_;
    Connection* outer_;  // the thread's lease before this one (none: nullptr)
  };
  Connection* Acquire();
  void GiveBack(Connection* connection);
  /// The connection the calling thread's Lease holds.
  Connection& Current() const { return *current_; }
  // Set by Lease: each public call takes a connection for its statements, so that the helpers
  // it calls need not pass it on.
  static thread_local Connection* current_;

  struct Queued;

  // Under mutex_.
  absl::StatusOr<Rows> Run(const char* sql, const Params& params, const char* what);
  /// Runs `statements` in order in one round trip (libpq's pipeline mode); their rows. The first
  /// that fails fails the call: the server skips the rest (and an open transaction is aborted).
  absl::StatusOr<std::vector<Rows>> RunPipelined(const std::vector<Queued>& statements);
  /// The name `sql` is prepared under on this connection; prepares it first when new.
  absl::StatusOr<std::string> PreparedName(const char* sql, const Params& params, const char* what);
  /// Reads a pipeline's results up to its sync point: one per statement, in order.
  absl::StatusOr<std::vector<Rows>> PipelineResults(const std::vector<Queued>& statements);
  absl::Status Exec(const char* sql, const char* what);
  absl::Status Error(const char* what, const PGresult* result) const;
  absl::Status EnsureConnected();
  /// Reconnects the current connection (its prepared statements and backend are gone).
  void ResetCurrent();
  /// Whether `pid` is the backend of one of this store's connections: a notification from it
  /// comes from this replica.
  bool IsOwnBackend(int pid);
  /// Runs `body` between BEGIN and COMMIT; rolls back when it fails.
  absl::Status InTransaction(const std::function<absl::Status()>& body);
  absl::Status Migrate();
  absl::Status MigrateLocked();
  absl::Status PutJobLocked(int64_t number, const v1::Job& job) override;
  /// The first ten columns of a job's row ($1 .. $10), as both job inserts bind them.
  static Params JobRowParams(int64_t number, const v1::Job& job);
  absl::Status AppendEventLocked(const v1::JobEvent& event) override;
  absl::Status PutBoardLocked(const v1::Board& board) override;
  absl::Status GrantBlobLocked(const std::string& tenant, const std::string& sha256) override;
  absl::Status DeleteJobsLocked(const std::vector<std::string>& ids);
  absl::StatusOr<std::optional<v1::Job>> OneJob(const char* sql, const Params& params,
                                                const char* what);
  /// One page of DeleteFinishedJobs (server/store_records.h DeleteInPages) from job number
  /// `after`, its expired jobs deleted in one transaction.
  absl::StatusOr<RetentionPage> DeleteFinishedPage(int64_t ended_before_ms, int64_t after);

  // postgres_cluster.cc, under mutex_ and inside a transaction.
  absl::Status Notify(const char* channel, const std::string& payload);
  absl::Status ReleaseReplicaLocked(const std::string& replica, int64_t orphan_wait_ms);
  /// The statement that writes `job` with `runtime`, and its `events` (seq -> record), when it
  /// is new or this replica owns it (a row back), and does nothing otherwise (no row).
  Queued OwnedJobStatement(int64_t number, const v1::Job& job, const JobRuntime& runtime,
                           const std::map<int64_t, std::string>& events) const;
  /// Rolls an open transaction back after `failed`; returns `failed`.
  absl::Status RolledBack(absl::Status failed);
  static absl::StatusOr<std::vector<OwnedJob>> OwnedJobsOf(const Rows& rows);
  /// A job's columns (BOARDLAB_JOB_COLUMNS) in row `row`, parsed.
  static absl::StatusOr<OwnedJob> OwnedJobAt(const Rows& rows, int row);
  /// The jobs of a BOARDLAB_TAKE_WITH_EVENTS statement, with their events.
  static absl::StatusOr<std::vector<OwnedJob>> OwnedJobsWithEvents(const Rows& rows);
  /// Runs `sql` (a BOARDLAB_TAKE_WITH_EVENTS statement): the jobs it took, with their events.
  absl::StatusOr<std::vector<OwnedJob>> TakeJobs(const char* sql, const Params& params,
                                                 const char* what);
  /// Gives the jobs in refused_ back to the queue; those that could not be stay there.
  absl::Status GiveBackRefused();
  /// The statement that reads the events of `jobs`, and its rows put into them.
  Queued EventsOfStatement(const std::vector<OwnedJob>& jobs) const;
  absl::Status AttachEvents(const Rows& rows, std::vector<OwnedJob>& jobs);
  /// EventsOfStatement and AttachEvents inside an open transaction.
  absl::Status ReadEventsOf(std::vector<OwnedJob>& jobs);
  /// ClaimQueuedJob's queue walk, when the first job in order suits none of `boards`: row by row
  /// in one transaction.
  absl::StatusOr<std::optional<ClaimedJob>> ClaimByLooking(
      const std::vector<v1::Board>& boards,
      const std::function<bool(const v1::Job&, const JobRuntime&, const v1::Board&)>& matches);

  const std::string conninfo_;  // for the pool's and the listener's connections
  const std::string password_;
  const std::string replica_id_;

  std::mutex pool_mutex_;
  std::condition_variable pool_free_;
  std::vector<std::unique_ptr<Connection>> connections_;  // all of them, idle or leased
  std::vector<Connection*> idle_;
  int opening_ = 0;  // connections being opened (outside pool_mutex_)
  int pool_limit_ = kMaxConnections;

  std::mutex refused_mutex_;
  std::set<int64_t> refused_;  // numbers of claimed jobs no board may run, to give back
};

}  // namespace boardlab::server
