// PostgresStore as the database of several replicas (server/cluster_store.h, docs/server.md
// "Replicas"): ownership checked under row locks, claims with FOR UPDATE SKIP LOCKED,
// notifications with NOTIFY, and a listener on a connection of its own.

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/clock.h"
#include "server/log.h"
#include "server/postgres_statements.h"
#include "server/postgres_store.h"

namespace boardlab::server {
namespace {

// The SQL below names job states by number (as the migration's indexes do).
static_assert(v1::JOB_STATE_COMPILING == 1 && v1::JOB_STATE_QUEUED == 2);
static_assert(v1::JOB_STATE_ASSIGNED == 3 && v1::JOB_STATE_COLLECTING == 6);
static_assert(v1::JOB_STATE_DONE == 7);

// What a replica reads of a job it takes: the record and the runtime columns, in this order
// (OwnedJobsOf).
#define BOARDLAB_JOB_COLUMNS                                                                     \
  "number, record, owner, queue_deadline_ms, lease_deadline_ms, infra_failures, failed_boards, " \
  "cancel_requested"

// Takes jobs and reads their events in one statement, so in one transaction without BEGIN and
// COMMIT, in one round trip: `update` (an UPDATE of jobs without RETURNING) sets the owner;
// each row has the job's columns, its id, `extra`, and one of its event records (NULL for a
// job without events), in job number and event order (OwnedJobsWithEvents). A read of the
// events that fails fails the statement, and nothing is taken.
#define BOARDLAB_TAKE_WITH_EVENTS(update, extra)                                                  \
  "WITH taken AS (" update " RETURNING " BOARDLAB_JOB_COLUMNS ", id" extra                        \
  ") SELECT t.*, e.record FROM taken t LEFT JOIN events e ON e.job_id = t.id ORDER BY t.number, " \
  "e.seq"

// The queued jobs boards of type $2 with ids $3 (a bytea[]) may run (`q` names the table).
#define BOARDLAB_CLAIMABLE(q)                                              \
  q ".state = 2 AND " q ".owner IS NULL AND " q ".board_type = $2 AND (" q \
    ".pinned_board = ''::bytea OR " q ".pinned_board = ANY($3))"

// Each tenant's running jobs over every replica, joined to the jobs `j`.
#define BOARDLAB_RUNNING_BY_TENANT                                                             \
  "LEFT JOIN (SELECT tenant, count(*) AS running FROM jobs WHERE state BETWEEN 3 AND 6 GROUP " \
  "BY tenant) r ON r.tenant = j.tenant"

// The order in which boards take queued jobs: priority; then fair share over every replica
// (the tenant's running jobs); then the oldest.
#define BOARDLAB_CLAIM_SORT "ORDER BY j.priority DESC, COALESCE(r.running, 0), j.number"

// The queued jobs boards may run (BOARDLAB_CLAIMABLE), all of them in the order they take them.
// Sorting every queued job costs a claim as much as the queue is long: the one-statement claim
// looks at BOARDLAB_CLAIM_HEADS first; ClaimByLooking, rarer, walks this order.
#define BOARDLAB_CLAIM_ORDER                                \
  "SELECT j.number FROM jobs j " BOARDLAB_RUNNING_BY_TENANT \
  " WHERE " BOARDLAB_CLAIMABLE("j") " " BOARDLAB_CLAIM_SORT

// The tenants with queued jobs of type $2 (and a NULL row last), in the table `tenants`: one
// probe of the index jobs_claimable each, rather than a read of every queued job.
#define BOARDLAB_QUEUED_TENANTS                                                               \
  "WITH RECURSIVE tenants AS ((SELECT q.tenant FROM jobs q WHERE q.state = 2 AND q.owner IS " \
  "NULL AND q.board_type = $2 ORDER BY q.tenant LIMIT 1) UNION ALL SELECT (SELECT q.tenant "  \
  "FROM jobs q WHERE q.state = 2 AND q.owner IS NULL AND q.board_type = $2 AND q.tenant > "   \
  "t.tenant ORDER BY q.tenant LIMIT 1) FROM tenants t WHERE t.tenant IS NOT NULL)"

// Each tenant's first 8 claimable jobs by priority and age, one probe of jobs_claimable each.
#define BOARDLAB_TENANTS_FIRST_JOBS                                                  \
  BOARDLAB_QUEUED_TENANTS                                                            \
  " SELECT h.number FROM tenants t CROSS JOIN LATERAL (SELECT q.number FROM jobs q " \
  "WHERE q.tenant = t.tenant AND " BOARDLAB_CLAIMABLE(                               \
      "q") " ORDER BY q.priority DESC, q.number LIMIT 8) h"

// BOARDLAB_CLAIM_ORDER over each tenant's first jobs only. A tenant's jobs all have the same
// running count, so the first job in the whole order is among its tenant's first; and with
// FOR UPDATE SKIP LOCKED, so is the first job no other claim holds, unless other claims hold
// all 8 of a tenant's first jobs: then that tenant's later jobs wait until those are taken or
// given back, and only when every tenant's first jobs are held does BOARDLAB_CLAIM_FIRST look
// at the whole order.
#define BOARDLAB_CLAIM_HEADS                                 \
  "SELECT j.number FROM jobs j " BOARDLAB_RUNNING_BY_TENANT  \
  " WHERE j.number = ANY(ARRAY(" BOARDLAB_TENANTS_FIRST_JOBS \
  ")) AND " BOARDLAB_CLAIMABLE("j") " " BOARDLAB_CLAIM_SORT

// The number of the first job in BOARDLAB_CLAIM_ORDER no other claim holds, locked: looked for
// among each tenant's first jobs, then (only when none is free there) among all.
#define BOARDLAB_CLAIM_FIRST                                      \
  "COALESCE((" BOARDLAB_CLAIM_HEADS                               \
  " LIMIT 1 FOR UPDATE OF j SKIP LOCKED), (" BOARDLAB_CLAIM_ORDER \
  " LIMIT 1 FOR UPDATE OF j SKIP LOCKED))"

// The claim's column that says whether other jobs wait: after the job's columns and its id.
constexpr int kClaimMoreColumn = 9;

// A claim looks at most at this many queued jobs of the board's type: a board whose tags match
// none of the first ones waits until some of them are gone.
constexpr int kClaimLooks = 512;

// How long the listener sleeps between looks at its stop flag, and between reconnects.
constexpr int kListenPollMs = 200;
constexpr int kListenRetryMs = 1000;

std::string JoinFailedBoards(const std::set<std::string>& boards) {
  return absl::StrJoin(boards, "\n");
}

// The first of `boards` that may run `job`: the one it is pinned to, or any `matches` accepts.
const v1::Board* BoardFor(
    const OwnedJob& job, const std::vector<v1::Board>& boards,
    const std::function<bool(const v1::Job&, const JobRuntime&, const v1::Board&)>& matches) {
  const std::string& pinned = job.job.spec().selector().board_id();
  for (const v1::Board& board : boards) {
    if (!pinned.empty() && pinned != board.id()) continue;
    if (matches(job.job, job.runtime, board)) return &board;
  }
  return nullptr;
}

std::vector<std::string> BoardIds(const std::vector<v1::Board>& boards) {
  std::vector<std::string> ids;
  for (const v1::Board& board : boards) ids.push_back(board.id());
  return ids;
}

std::set<std::string> SplitFailedBoards(const std::string& joined) {
  std::set<std::string> boards;
  if (joined.empty()) return boards;
  for (absl::string_view board : absl::StrSplit(joined, '\n')) boards.emplace(board);
  return boards;
}

// Notifications on a connection of its own: LISTEN needs a session that stays idle between
// them, which the store's shared connection is not.
class PostgresListener : public ClusterListener {
 public:
  PostgresListener(std::string conninfo, std::string password, std::function<bool(int)> own_backend,
                   std::function<void(const ClusterNotification&)> deliver)
      : conninfo_(std::move(conninfo)),
        password_(std::move(password)),
        own_backend_(std::move(own_backend)),
        deliver_(std::move(deliver)) {}

  ~PostgresListener() override {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (connection_ != nullptr) PQfinish(connection_);
  }

  absl::Status Start() {
    if (absl::Status ok = Connect(); !ok.ok()) return ok;
    thread_ = std::thread([this] { Loop(); });
    return absl::OkStatus();
  }

 private:
  absl::Status Connect() {
    if (connection_ != nullptr) PQfinish(connection_);
    connection_ = ConnectToPostgres(conninfo_, password_);
    if (connection_ == nullptr) return absl::ResourceExhaustedError("out of memory");
    if (PQstatus(connection_) != CONNECTION_OK) {
      return absl::UnavailableError(
          absl::StrCat("listening for other replicas: ", Trimmed(PQerrorMessage(connection_))));
    }
    const std::string sql =
        absl::StrCat("LISTEN ", kQueueChannel, "; LISTEN ", kEventsChannel, "; LISTEN ",
                     kCancelChannel, "; LISTEN ", kCompiledChannel);
    PGresult* result = PQexec(connection_, sql.c_str());
    const bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    PQclear(result);
    if (!ok) {
      return absl::UnavailableError(absl::StrCat("LISTEN: ", Trimmed(PQerrorMessage(connection_))));
    }
    return absl::OkStatus();
  }

  void Loop() {
    while (!stop_) {
      if (PQstatus(connection_) != CONNECTION_OK) {
        if (absl::Status ok = Connect(); !ok.ok()) {
          LogWarning("replica notifications", {{"error", std::string(ok.message())}});
          std::this_thread::sleep_for(std::chrono::milliseconds(kListenRetryMs));
          continue;
        }
        deliver_(ClusterNotification{});  // some may have been missed: look at everything
      }
      pollfd wait{PQsocket(connection_), POLLIN, 0};
      if (::poll(&wait, 1, kListenPollMs) <= 0) continue;
      if (PQconsumeInput(connection_) == 0) continue;  // broken: reconnected above
      while (PGnotify* notify = PQnotifies(connection_)) {
        deliver_(ClusterNotification{notify->relname, notify->extra, own_backend_(notify->be_pid)});
        PQfreemem(notify);
      }
    }
  }

  const std::string conninfo_;
  const std::string password_;
  const std::function<bool(int)> own_backend_;  // whether a backend pid is the store's
  const std::function<void(const ClusterNotification&)> deliver_;
  PGconn* connection_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

absl::Status PostgresStore::Notify(const char* channel, const std::string& payload) {
  return Run("SELECT pg_notify($1, $2)", Params().Text(channel).Text(payload), "notifying")
      .status();
}

absl::Status PostgresStore::NotifyQueued(const std::string& board_type) {
  Lease lease(*this);
  return Notify(kQueueChannel, board_type);
}

absl::StatusOr<OwnedJob> PostgresStore::OwnedJobAt(const Rows& rows, int row) {
  OwnedJob owned;
  owned.number = rows.Int(row, 0);
  auto job = ParseRecord<v1::Job>(rows.Bytes(row, 1), "job");
  if (!job.ok()) return job.status();
  owned.job = *std::move(job);
  owned.runtime.owner = rows.IsNull(row, 2) ? "" : rows.Bytes(row, 2);
  owned.runtime.queue_deadline_ms = rows.Int(row, 3);
  owned.runtime.lease_deadline_ms = rows.Int(row, 4);
  owned.runtime.infra_failures = static_cast<int>(rows.Int(row, 5));
  owned.runtime.failed_boards = SplitFailedBoards(rows.Bytes(row, 6));
  owned.runtime.cancel_requested = rows.Int(row, 7) != 0;
  return owned;
}

absl::StatusOr<std::vector<OwnedJob>> PostgresStore::OwnedJobsOf(const Rows& rows) {
  std::vector<OwnedJob> jobs;
  for (int row = 0; row < rows.size(); ++row) {
    auto job = OwnedJobAt(rows, row);
    if (!job.ok()) return job.status();
    jobs.push_back(*std::move(job));
  }
  return jobs;
}

// A job is taken (its owner set to this replica) in the transaction that reads its events: when
// the read fails (the connection broke, the database refused), the take is rolled back and the
// job stays where it was, for the next claim or poll of any replica. Released afterwards by a
// statement of its own, it would be stranded whenever that statement failed too (as it would
// on a broken connection), owned by a replica that does not run it until that replica dies.
PostgresStore::Queued PostgresStore::EventsOfStatement(const std::vector<OwnedJob>& jobs) const {
  std::vector<std::string> ids;
  for (const OwnedJob& owned : jobs) ids.push_back(owned.job.id());
  return {"SELECT job_id, record FROM events WHERE job_id = ANY($1) ORDER BY job_id, seq",
          Params().BytesArray(ids), "reading taken jobs' events"};
}

absl::Status PostgresStore::AttachEvents(const Rows& rows, std::vector<OwnedJob>& jobs) {
  std::map<std::string, OwnedJob*> by_id;
  for (OwnedJob& owned : jobs) by_id[owned.job.id()] = &owned;
  for (int row = 0; row < rows.size(); ++row) {
    auto event = ParseRecord<v1::JobEvent>(rows.Bytes(row, 1), "job event");
    if (!event.ok()) return event.status();
    auto owned = by_id.find(rows.Bytes(row, 0));
    if (owned != by_id.end()) owned->second->events.push_back(*std::move(event));
  }
  return absl::OkStatus();
}

absl::Status PostgresStore::ReadEventsOf(std::vector<OwnedJob>& jobs) {
  if (jobs.empty()) return absl::OkStatus();
  Queued read = EventsOfStatement(jobs);
  auto rows = Run(read.sql, read.params, read.what);
  if (!rows.ok()) return rows.status();
  return AttachEvents(*rows, jobs);
}

absl::StatusOr<std::vector<OwnedJob>> PostgresStore::OwnedJobsWithEvents(const Rows& rows) {
  std::vector<OwnedJob> jobs;
  const int event_column = PQnfields(rows.get()) - 1;
  for (int row = 0; row < rows.size(); ++row) {
    if (jobs.empty() || jobs.back().number != rows.Int(row, 0)) {
      auto job = OwnedJobAt(rows, row);
      if (!job.ok()) return job.status();
      jobs.push_back(*std::move(job));
    }
    if (rows.IsNull(row, event_column)) continue;  // a job without events
    auto event = ParseRecord<v1::JobEvent>(rows.Bytes(row, event_column), "job event");
    if (!event.ok()) return event.status();
    jobs.back().events.push_back(*std::move(event));
  }
  return jobs;
}

// A record that does not parse is damage, not a failure another replica would get past: had the
// take failed, the job would be the first in order again at every claim, and its type's queue
// would stall behind it. It stays taken, held by this replica (which logs the error).
absl::StatusOr<std::vector<OwnedJob>> PostgresStore::TakeJobs(const char* sql, const Params& params,
                                                              const char* what) {
  auto taken = Run(sql, params, what);
  if (!taken.ok()) return taken.status();
  return OwnedJobsWithEvents(*taken);
}

// ---------------------------------------------------------------------------------------------
// Replicas.

absl::Status PostgresStore::RegisterReplica(const std::string& address) {
  Lease lease(*this);
  const int64_t now = NowMs();
  return Run("INSERT INTO replicas (id, address, started_ms, heartbeat_ms) VALUES ($1, $2, $3, $3) "
             "ON CONFLICT (id) DO UPDATE SET heartbeat_ms = excluded.heartbeat_ms",
             Params().Bytes(replica_id_).Bytes(address).Int(now), "registering the replica")
      .status();
}

absl::Status PostgresStore::HeartbeatReplica() {
  Lease lease(*this);
  auto rows = Run("UPDATE replicas SET heartbeat_ms = $1 WHERE id = $2 RETURNING id",
                  Params().Int(NowMs()).Bytes(replica_id_), "renewing the replica's heartbeat");
  if (!rows.ok()) return rows.status();
  if (rows->size() == 0) {
    return absl::NotFoundError(
        absl::StrCat("replica ", replica_id_, " was declared dead by another replica"));
  }
  return absl::OkStatus();
}

absl::Status PostgresStore::ReleaseReplicaLocked(const std::string& replica,
                                                 int64_t orphan_wait_ms) {
  const int64_t orphan_deadline = NowMs() + orphan_wait_ms;
  // Compiling jobs are taken by the next TakeStrandedJobs; claimed queued jobs are queued again;
  // runs wait for their agent to reconnect to another replica.
  const std::pair<const char*, Params> steps[] = {
      {"UPDATE jobs SET owner = NULL WHERE owner = $1 AND state IN (1, 2)",
       Params().Bytes(replica)},
      {"UPDATE jobs SET owner = NULL, lease_deadline_ms = $2 WHERE owner = $1 AND "
       "state BETWEEN 3 AND 6",
       Params().Bytes(replica).Int(orphan_deadline)},
      {"UPDATE boards SET owner = NULL WHERE owner = $1", Params().Bytes(replica)},
      {"DELETE FROM compile_claims WHERE replica = $1", Params().Bytes(replica)},
      {"DELETE FROM replicas WHERE id = $1", Params().Bytes(replica)},
  };
  for (const auto& [sql, params] : steps) {
    if (absl::Status ok = Run(sql, params, "releasing a replica's work").status(); !ok.ok()) {
      return ok;
    }
  }
  return Notify(kQueueChannel, "");
}

absl::Status PostgresStore::UnregisterReplica(int64_t orphan_wait_ms) {
  Lease lease(*this);
  return InTransaction([&] { return ReleaseReplicaLocked(replica_id_, orphan_wait_ms); });
}

absl::StatusOr<std::vector<std::string>> PostgresStore::RecoverDeadReplicas(
    int64_t lease_ms, int64_t orphan_wait_ms) {
  Lease lease(*this);
  std::vector<std::string> dead;
  absl::Status done = InTransaction([&]() -> absl::Status {
    // SKIP LOCKED: when two replicas notice at once, each dead one is recovered once.
    auto rows =
        Run("SELECT id FROM replicas WHERE heartbeat_ms < $1 AND id <> $2 "
            "FOR UPDATE SKIP LOCKED",
            Params().Int(NowMs() - lease_ms).Bytes(replica_id_), "finding dead replicas");
    if (!rows.ok()) return rows.status();
    for (int row = 0; row < rows->size(); ++row) {
      dead.push_back(rows->Bytes(row, 0));
      if (absl::Status ok = ReleaseReplicaLocked(dead.back(), orphan_wait_ms); !ok.ok()) return ok;
    }
    return absl::OkStatus();
  });
  if (!done.ok()) return done;
  return dead;
}

absl::StatusOr<int64_t> PostgresStore::NextJobNumber() {
  Lease lease(*this);
  auto rows = Run("SELECT nextval('job_numbers')", Params(), "numbering a job");
  if (!rows.ok()) return rows.status();
  return rows->Int(0, 0);
}

// Scalar subqueries of one SELECT, so one round trip; each as its own statement would read (the
// partial indexes' predicates are spelt out so that a generic plan may use them).
absl::StatusOr<SubmitLookup> PostgresStore::LookUpForSubmit(const std::string& tenant,
                                                            const std::string& request_id,
                                                            const std::string& compile_key) {
  Lease lease(*this);
  auto rows = Run(
      "SELECT nextval('job_numbers'), (SELECT count(*) FROM jobs WHERE tenant = $1 AND state <> "
      "7), (SELECT record FROM compile_cache WHERE key = $3), (SELECT record FROM jobs WHERE $2 "
      "<> ''::bytea AND tenant = $1 AND request_id = $2 AND request_id <> ''::bytea LIMIT 1)",
      Params().Bytes(tenant).Bytes(request_id).Bytes(compile_key), "looking up for a submit");
  if (!rows.ok()) return rows.status();
  SubmitLookup lookup;
  lookup.number = rows->Int(0, 0);
  lookup.unfinished = rows->Int(0, 1);
  if (!rows->IsNull(0, 2)) {
    auto record = CompileRecordFromJson(rows->Bytes(0, 2));
    if (!record.ok()) return record.status();
    lookup.compile = *std::move(record);
  }
  if (!rows->IsNull(0, 3)) {
    auto job = ParseRecord<v1::Job>(rows->Bytes(0, 3), "job");
    if (!job.ok()) return job.status();
    lookup.by_request_id = *std::move(job);
  }
  return lookup;
}

// ---------------------------------------------------------------------------------------------
// Writes of owned rows.

PostgresStore::Queued PostgresStore::OwnedJobStatement(
    int64_t number, const v1::Job& job, const JobRuntime& runtime,
    const std::map<int64_t, std::string>& events) const {
  // One statement: a new job is inserted; a known one is updated only while this replica owns
  // it (the row stays locked to the end of the transaction), and then its events are written
  // ($18 seqs, $19 records). No row back: another owns it, and nothing was written.
  Params params = JobRowParams(number, job);
  if (runtime.owner.empty()) {
    params.Null(kByteaOid);
  } else {
    params.Bytes(runtime.owner);
  }
  std::vector<int64_t> seqs;
  std::vector<std::string> records;
  for (const auto& [seq, record] : events) {
    seqs.push_back(seq);
    records.push_back(record);
  }
  params.Int(runtime.queue_deadline_ms)
      .Int(runtime.lease_deadline_ms)
      .Int(runtime.infra_failures)
      .Bytes(JoinFailedBoards(runtime.failed_boards))
      .Int(runtime.cancel_requested ? 1 : 0)
      .Bytes(replica_id_)
      .IntArray(seqs)
      .BytesArray(records);
  return {
      "WITH written AS (INSERT INTO jobs (number, id, tenant, request_id, state, board_type, "
      "record, priority, pinned_board, board_id, owner, queue_deadline_ms, lease_deadline_ms, "
      "infra_failures, failed_boards, cancel_requested) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
      "$9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT (number) DO UPDATE SET state = "
      "excluded.state, record = excluded.record, priority = excluded.priority, board_id = "
      "excluded.board_id, owner = excluded.owner, queue_deadline_ms = "
      "excluded.queue_deadline_ms, lease_deadline_ms = excluded.lease_deadline_ms, "
      "infra_failures = excluded.infra_failures, failed_boards = excluded.failed_boards, "
      "cancel_requested = excluded.cancel_requested WHERE jobs.owner = $17 RETURNING number), "
      "logged AS (INSERT INTO events (job_id, seq, record) SELECT $2, e.seq, e.record FROM "
      "written, unnest($18, $19) AS e(seq, record) ON CONFLICT (job_id, seq) DO UPDATE SET "
      "record = excluded.record) SELECT number FROM written",
      std::move(params), "storing an owned job"};
}

absl::Status PostgresStore::RolledBack(absl::Status failed) {
  if (PQstatus(Current().pg) == CONNECTION_OK) {
    Exec("ROLLBACK", "rolling back").IgnoreError();  // nothing of the transaction stays
  }
  Current().in_transaction = false;
  return failed;
}

// One round trip (pipeline mode) for the whole transaction: BEGIN; each job with its events (in
// one statement, so that the events are written only with the job); the events of jobs the
// batch does not write, the boards and the grants; COMMIT.
absl::StatusOr<CommitLosses> PostgresStore::CommitOwned(
    const StoreBatch& batch, const std::map<int64_t, JobRuntime>& runtimes, bool claiming_next) {
  Lease lease(*this);
  // Rows are locked in one order (jobs by number, then boards by id) so that two replicas'
  // commits cannot deadlock on each other. The triggers of migration 2 notify the others.
  std::map<std::string, std::map<int64_t, std::string>> events_of;  // job id -> seq -> record
  for (const v1::JobEvent& event : batch.events) {
    events_of[event.job_id()][event.seq()] = event.SerializeAsString();  // the last one wins
  }
  std::vector<Queued> statements = {{"BEGIN", Params(), "starting a transaction"}};
  if (claiming_next) {  // read by the trigger of migration 4; for this transaction only
    statements.push_back({"SELECT set_config('boardlab.claiming_next', 'on', true)", Params(),
                          "marking the commit as claimed next"});
  }
  const size_t first_job = statements.size();
  std::set<std::string> written;  // the ids of the batch's jobs
  for (const auto& [number, job] : batch.jobs) {
    written.insert(job.id());
    JobRuntime runtime;
    runtime.owner = replica_id_;
    if (auto it = runtimes.find(number); it != runtimes.end()) runtime = it->second;
    statements.push_back(OwnedJobStatement(number, job, runtime, events_of[job.id()]));
  }
  for (const v1::JobEvent& event : batch.events) {
    if (written.count(event.job_id())) continue;
    // A job this batch does not write: its events only while this replica owns it (all of
    // them or none: the owner cannot change while the row is locked).
    statements.push_back(
        {"INSERT INTO events (job_id, seq, record) SELECT $1, $2, $3 WHERE EXISTS "
         "(SELECT 1 FROM jobs WHERE id = $1 AND owner = $4 FOR UPDATE) ON CONFLICT "
         "(job_id, seq) DO UPDATE SET record = excluded.record RETURNING seq",
         Params()
             .Bytes(event.job_id())
             .Int(event.seq())
             .Bytes(event.SerializeAsString())
             .Bytes(replica_id_),
         "storing an owned job's event"});
  }
  const size_t first_board = statements.size();
  for (const auto& [id, board] : batch.boards) {
    statements.push_back(
        {"INSERT INTO boards (id, record, owner) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE "
         "SET record = excluded.record, owner = excluded.owner WHERE boards.owner = $3 "
         "RETURNING id",
         Params().Bytes(id).Bytes(board.SerializeAsString()).Bytes(replica_id_),
         "storing an owned board"});
  }
  if (!batch.blob_grants.empty()) {
    // All in one statement: a finished job grants its tenant several outputs at once.
    std::vector<std::string> sha256s, tenants;
    for (const auto& [tenant, sha256] : batch.blob_grants) {
      sha256s.push_back(sha256);
      tenants.push_back(tenant);
    }
    statements.push_back(
        {"INSERT INTO blob_grants (sha256, tenant) SELECT * FROM unnest($1, $2) "
         "ON CONFLICT (sha256, tenant) DO NOTHING",
         Params().BytesArray(sha256s).BytesArray(tenants), "granting blobs"});
  }
  statements.push_back({"COMMIT", Params(), "committing a transaction"});

  if (absl::Status ok = EnsureConnected(); !ok.ok()) return ok;  // may reconnect: not yet begun
  Current().in_transaction = true;
  absl::StatusOr<std::vector<Rows>> stored = RunPipelined(statements);
  if (!stored.ok()) return RolledBack(stored.status());
  Current().in_transaction = false;
  CommitLosses losses;
  size_t answer = first_job;
  for (const auto& [number, job] : batch.jobs) {
    if ((*stored)[answer++].size() == 0) losses.jobs.push_back(number);
  }
  answer = first_board;
  for (const auto& [id, board] : batch.boards) {
    if ((*stored)[answer++].size() == 0) losses.boards.push_back(id);
  }
  return losses;
}

// ---------------------------------------------------------------------------------------------
// Taking jobs and boards.

absl::StatusOr<std::optional<ClaimedJob>> PostgresStore::ClaimQueuedJob(
    const std::vector<v1::Board>& boards,
    const std::function<bool(const v1::Job&, const JobRuntime&, const v1::Board&)>& matches) {
  if (boards.empty()) return std::optional<ClaimedJob>();
  Lease lease(*this);
  if (absl::Status ok = GiveBackRefused(); !ok.ok()) return ok;
  // The common case in one statement and one round trip, whether it finds a job or not: the
  // first job in order that is pinned to one of the boards or to none, claimed at once with its
  // events, and whether others wait behind it (so that the caller knows whether another claim
  // could find one).
  auto first =
      Run(BOARDLAB_TAKE_WITH_EVENTS(
              "UPDATE jobs SET owner = $1 WHERE number = " BOARDLAB_CLAIM_FIRST,
              ", CASE WHEN EXISTS (SELECT 1 FROM jobs q WHERE q.state = 2 AND q.owner IS NULL AND "
              "q.board_type = $2 AND (q.pinned_board = ''::bytea OR q.pinned_board = ANY($3)) AND "
              "q.number <> jobs.number) THEN 1 ELSE 0 END"),
          Params().Bytes(replica_id_).Bytes(boards.front().type()).BytesArray(BoardIds(boards)),
          "claiming the next queued job");
  if (!first.ok()) return first.status();
  auto firsts = OwnedJobsWithEvents(*first);  // damaged: see TakeJobs
  if (!firsts.ok()) return firsts.status();
  if (firsts->empty()) return std::optional<ClaimedJob>();
  OwnedJob& job = firsts->front();
  if (const v1::Board* board = BoardFor(job, boards, matches)) {
    const bool more = first->Int(0, kClaimMoreColumn) != 0;
    return std::optional<ClaimedJob>(ClaimedJob{std::move(job), board->id(), more});
  }
  // Refused by every board (tags, a failed board): given back, and the jobs in order looked at
  // one by one.
  {
    std::lock_guard lock(refused_mutex_);
    refused_.insert(job.number);
  }
  if (absl::Status ok = GiveBackRefused(); !ok.ok()) return ok;
  return ClaimByLooking(boards, matches);
}

// A claim's job that none of its boards may run is committed as this replica's: it goes back
// to the queue by a statement of its own. One that fails (a broken connection) is given back by
// the next claim or poll; until then no other replica can claim the job, as when this replica
// held it, and should this replica die first its work is released with it.
absl::Status PostgresStore::GiveBackRefused() {
  std::set<int64_t> refused;
  {
    std::lock_guard lock(refused_mutex_);
    refused.swap(refused_);
  }
  absl::Status given = absl::OkStatus();
  for (int64_t number : refused) {
    if (given.ok()) {
      given = Run("UPDATE jobs SET owner = NULL WHERE number = $1 AND owner = $2 AND state = 2",
                  Params().Int(number).Bytes(replica_id_), "giving a claimed job back")
                  .status();
    }
    if (!given.ok()) {
      std::lock_guard lock(refused_mutex_);
      refused_.insert(number);  // the next claim or poll tries again
    }
  }
  return given;
}

absl::StatusOr<std::optional<ClaimedJob>> PostgresStore::ClaimByLooking(
    const std::vector<v1::Board>& boards,
    const std::function<bool(const v1::Job&, const JobRuntime&, const v1::Board&)>& matches) {
  std::optional<ClaimedJob> claimed;
  absl::Status done = InTransaction([&]() -> absl::Status {
    claimed.reset();
    // One row at a time, so that a claim locks only the jobs it looks at: another replica's
    // claim skips those and takes the next. The rows this claim refused stay locked by it, and
    // are stepped over with OFFSET (its own locks do not hide them from it).
    for (int refused = 0; refused < kClaimLooks; ++refused) {
      auto rows =
          Run("SELECT " BOARDLAB_JOB_COLUMNS " FROM jobs WHERE number = (" BOARDLAB_CLAIM_ORDER
              " LIMIT 1 OFFSET $1 FOR UPDATE OF j SKIP LOCKED)",
              Params().Int(refused).Bytes(boards.front().type()).BytesArray(BoardIds(boards)),
              "looking for a queued job");
      if (!rows.ok()) return rows.status();
      auto candidates = OwnedJobsOf(*rows);
      if (!candidates.ok()) return candidates.status();
      if (candidates->empty()) break;
      OwnedJob& candidate = candidates->front();
      const v1::Board* board = BoardFor(candidate, boards, matches);
      if (board == nullptr) continue;
      auto taken = Run("UPDATE jobs SET owner = $1 WHERE number = $2",
                       Params().Bytes(replica_id_).Int(candidate.number), "claiming a job");
      if (!taken.ok()) return taken.status();
      candidate.runtime.owner = replica_id_;
      if (absl::Status ok = ReadEventsOf(*candidates); !ok.ok()) return ok;  // rolls back
      // Others may wait behind the refused ones: the caller may look again.
      claimed = ClaimedJob{std::move(candidate), board->id(), true};
      break;
    }
    return absl::OkStatus();
  });
  if (!done.ok()) return done;
  return claimed;
}

absl::StatusOr<std::vector<OwnedJob>> PostgresStore::TakeStrandedJobs(int64_t now_ms, int limit) {
  Lease lease(*this);
  if (absl::Status ok = GiveBackRefused(); !ok.ok()) return ok;  // the poll's retry of them
  return TakeJobs(
      BOARDLAB_TAKE_WITH_EVENTS(
          "UPDATE jobs SET owner = $1 WHERE number IN (SELECT number FROM jobs WHERE owner IS "
          "NULL AND (state = 1 OR (state = 2 AND queue_deadline_ms > 0 AND queue_deadline_ms < "
          "$2) OR (state BETWEEN 3 AND 6 AND lease_deadline_ms < $2)) ORDER BY number LIMIT $3 "
          "FOR UPDATE SKIP LOCKED)",
          ""),
      Params().Bytes(replica_id_).Int(now_ms).Int(limit), "taking stranded jobs");
}

absl::StatusOr<std::optional<OwnedJob>> PostgresStore::TakeQueuedJob(const std::string& id) {
  Lease lease(*this);
  auto jobs = TakeJobs(BOARDLAB_TAKE_WITH_EVENTS("UPDATE jobs SET owner = $1 WHERE id = $2 AND "
                                                 "state = 2 AND owner IS NULL",
                                                 ""),
                       Params().Bytes(replica_id_).Bytes(id), "taking a queued job");
  if (!jobs.ok()) return jobs.status();
  if (jobs->empty()) return std::optional<OwnedJob>();
  return std::optional<OwnedJob>(std::move(jobs->front()));
}

absl::StatusOr<TakenBoards> PostgresStore::TakeBoards(const std::vector<std::string>& board_ids) {
  Lease lease(*this);
  TakenBoards taken;
  absl::Status done = InTransaction([&]() -> absl::Status {
    taken = TakenBoards();
    // Jobs before boards: the lock order of CommitOwned.
    for (const std::string& id : board_ids) {
      auto rows =
          Run("UPDATE jobs SET owner = $1, lease_deadline_ms = 0 WHERE board_id = $2 AND "
              "state BETWEEN 3 AND 6 RETURNING " BOARDLAB_JOB_COLUMNS,
              Params().Bytes(replica_id_).Bytes(id), "taking a board's jobs");
      if (!rows.ok()) return rows.status();
      auto jobs = OwnedJobsOf(*rows);
      if (!jobs.ok()) return jobs.status();
      for (OwnedJob& job : *jobs) taken.jobs.push_back(std::move(job));
    }
    if (absl::Status ok = ReadEventsOf(taken.jobs); !ok.ok()) return ok;  // rolls back
    for (const std::string& id : board_ids) {
      auto rows = Run("UPDATE boards SET owner = $1 WHERE id = $2 RETURNING record",
                      Params().Bytes(replica_id_).Bytes(id), "taking a board");
      if (!rows.ok()) return rows.status();
      auto boards = ParseRecords<v1::Board>(*rows, 0, "board");
      if (!boards.ok()) return boards.status();
      for (v1::Board& board : *boards) taken.boards.push_back(std::move(board));
    }
    return absl::OkStatus();
  });
  if (!done.ok()) return done;
  return taken;
}

absl::StatusOr<std::string> PostgresStore::RequestCancel(const std::string& job_id) {
  Lease lease(*this);
  std::string owner;
  absl::Status done = InTransaction([&]() -> absl::Status {
    auto rows =
        Run("UPDATE jobs SET cancel_requested = 1 WHERE id = $1 AND state <> 7 "
            "RETURNING owner",
            Params().Bytes(job_id), "requesting a cancel");
    if (!rows.ok()) return rows.status();
    if (rows->size() == 0) {
      return absl::NotFoundError(absl::StrCat("job '", job_id, "' is not unfinished"));
    }
    owner = rows->IsNull(0, 0) ? "" : rows->Bytes(0, 0);
    return Notify(kCancelChannel, job_id);
  });
  if (!done.ok()) return done;
  return owner;
}

// ---------------------------------------------------------------------------------------------
// Views over all replicas.

absl::StatusOr<std::vector<ClusterBoard>> PostgresStore::ClusterBoards() {
  Lease lease(*this);
  auto rows =
      Run("SELECT b.record, b.owner, CASE WHEN r.id IS NULL THEN 0 ELSE 1 END FROM boards b "
          "LEFT JOIN replicas r ON r.id = b.owner ORDER BY b.id",
          Params(), "listing the cluster's boards");
  if (!rows.ok()) return rows.status();
  std::vector<ClusterBoard> boards;
  for (int row = 0; row < rows->size(); ++row) {
    auto board = ParseRecord<v1::Board>(rows->Bytes(row, 0), "board");
    if (!board.ok()) return board.status();
    boards.push_back({*std::move(board), rows->IsNull(row, 1) ? "" : rows->Bytes(row, 1),
                      rows->Int(row, 2) != 0});
  }
  return boards;
}

absl::StatusOr<std::map<std::string, int>> PostgresStore::QueuedCounts() {
  Lease lease(*this);
  auto rows = Run("SELECT board_type, count(*) FROM jobs WHERE state = 2 GROUP BY board_type",
                  Params(), "counting queued jobs");
  if (!rows.ok()) return rows.status();
  std::map<std::string, int> counts;
  for (int row = 0; row < rows->size(); ++row) {
    counts[rows->Bytes(row, 0)] = static_cast<int>(rows->Int(row, 1));
  }
  return counts;
}

absl::StatusOr<std::map<v1::JobState, int>> PostgresStore::UnfinishedByState() {
  Lease lease(*this);
  auto rows = Run("SELECT state, count(*) FROM jobs WHERE state <> 7 GROUP BY state", Params(),
                  "counting unfinished jobs");
  if (!rows.ok()) return rows.status();
  std::map<v1::JobState, int> counts;
  for (int row = 0; row < rows->size(); ++row) {
    counts[static_cast<v1::JobState>(rows->Int(row, 0))] = static_cast<int>(rows->Int(row, 1));
  }
  return counts;
}

absl::StatusOr<int64_t> PostgresStore::UnfinishedJobsOf(const std::string& tenant) {
  Lease lease(*this);
  auto rows = Run("SELECT count(*) FROM jobs WHERE tenant = $1 AND state <> 7",
                  Params().Bytes(tenant), "counting a tenant's jobs");
  if (!rows.ok()) return rows.status();
  return rows->Int(0, 0);
}

absl::StatusOr<std::optional<std::pair<int32_t, int32_t>>> PostgresStore::QueuePlace(
    int64_t number) {
  Lease lease(*this);
  auto rows = Run(
      "SELECT (SELECT count(*) FROM jobs q WHERE q.state = 2 AND q.board_type = j.board_type AND "
      "(q.priority > j.priority OR (q.priority = j.priority AND q.number <= j.number))), "
      "(SELECT count(*) FROM jobs q WHERE q.state = 2 AND q.board_type = j.board_type) "
      "FROM jobs j WHERE j.number = $1 AND j.state = 2",
      Params().Int(number), "finding a job's place in its queue");
  if (!rows.ok()) return rows.status();
  if (rows->size() == 0) return std::optional<std::pair<int32_t, int32_t>>();
  return std::optional<std::pair<int32_t, int32_t>>(
      {static_cast<int32_t>(rows->Int(0, 0)), static_cast<int32_t>(rows->Int(0, 1))});
}

// ---------------------------------------------------------------------------------------------
// Compile claims and notifications.

absl::StatusOr<bool> PostgresStore::ClaimCompile(const std::string& key) {
  Lease lease(*this);
  // A claim of this replica's own (a compile it gave up on) is taken again.
  auto rows =
      Run("INSERT INTO compile_claims (key, replica, claimed_ms) VALUES ($1, $2, $3) "
          "ON CONFLICT (key) DO UPDATE SET claimed_ms = excluded.claimed_ms "
          "WHERE compile_claims.replica = excluded.replica RETURNING 1",
          Params().Bytes(key).Bytes(replica_id_).Int(NowMs()), "claiming a compile");
  if (!rows.ok()) return rows.status();
  return rows->size() > 0;
}

absl::Status PostgresStore::FinishCompileClaim(const std::string& key) {
  Lease lease(*this);
  return InTransaction([&]() -> absl::Status {
    auto rows = Run("DELETE FROM compile_claims WHERE key = $1 AND replica = $2",
                    Params().Bytes(key).Bytes(replica_id_), "dropping a compile claim");
    if (!rows.ok()) return rows.status();
    return Notify(kCompiledChannel, key);
  });
}

absl::StatusOr<std::unique_ptr<ClusterListener>> PostgresStore::Listen(
    std::function<void(const ClusterNotification&)> deliver) {
  auto listener = std::make_unique<PostgresListener>(
      conninfo_, password_, [this](int pid) { return IsOwnBackend(pid); }, std::move(deliver));
  if (absl::Status ok = listener->Start(); !ok.ok()) return ok;
  return std::unique_ptr<ClusterListener>(std::move(listener));
}

}  // namespace boardlab::server
