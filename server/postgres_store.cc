#include "server/postgres_store.h"

#include <endian.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "server/blob_store.h"
#include "server/clock.h"
#include "server/postgres_statements.h"
#include "server/scratch_names.h"
#include "server/store_records.h"

namespace boardlab::server {
namespace {

// Held for the migration transaction: servers starting together migrate one after another.
constexpr int64_t kMigrationLockKey = 0x626f6172646c6162;  // "boardlab"

struct Migration {
  int64_t version;
  const char* sql;
};

// Applied in order, each once, in the transaction that records it in schema_version. Never edit
// a migration that has shipped: add the next one. Version 1 is the schema SqliteStore reached
// at its version 2 (PostgreSQL databases start there). Strings are bytea, not text: compared and
// ordered byte by byte, and any bytes accepted (a NUL too), as SQLite does.
constexpr Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE jobs (
  number bigint PRIMARY KEY,
  id bytea NOT NULL UNIQUE,
  tenant bytea NOT NULL,
  request_id bytea NOT NULL,
  state bigint NOT NULL,
  board_type bytea NOT NULL,
  record bytea NOT NULL);
CREATE INDEX jobs_by_request ON jobs (tenant, request_id) WHERE request_id <> ''::bytea;
CREATE INDEX jobs_by_state ON jobs (state);
CREATE TABLE events (
  job_id bytea NOT NULL,
  seq bigint NOT NULL,
  record bytea NOT NULL,
  PRIMARY KEY (job_id, seq));
CREATE TABLE boards (id bytea PRIMARY KEY, record bytea NOT NULL);
CREATE TABLE compile_cache (key bytea PRIMARY KEY, record text NOT NULL);
CREATE TABLE small_blobs (
  sha256 bytea PRIMARY KEY,
  data bytea NOT NULL,
  used_ms bigint NOT NULL DEFAULT 0);
CREATE INDEX small_blobs_by_use ON small_blobs (used_ms);
CREATE TABLE blob_grants (
  sha256 bytea NOT NULL,
  tenant bytea NOT NULL,
  PRIMARY KEY (sha256, tenant));
)sql"},
    // Several replicas on one database (docs/server.md, "Replicas"): who owns each job and board,
    // what a replica needs to carry another's job on, the replicas' heartbeats, compile claims,
    // the job number sequence, and triggers that notify the replicas of newly queued jobs and of
    // new events (in the writing transaction, without a round trip of its own). States are JobState
    // numbers (QUEUED = 2, ASSIGNED..COLLECTING = 3..6), checked by static_asserts in
    // postgres_cluster.cc.
    {2, R"sql(
CREATE TABLE replicas (
  id bytea PRIMARY KEY,
  address bytea NOT NULL,
  started_ms bigint NOT NULL,
  heartbeat_ms bigint NOT NULL);
ALTER TABLE jobs
  ADD COLUMN owner bytea,
  ADD COLUMN priority bigint NOT NULL DEFAULT 0,
  ADD COLUMN pinned_board bytea NOT NULL DEFAULT ''::bytea,
  ADD COLUMN board_id bytea NOT NULL DEFAULT ''::bytea,
  ADD COLUMN queue_deadline_ms bigint NOT NULL DEFAULT 0,
  ADD COLUMN lease_deadline_ms bigint NOT NULL DEFAULT 0,
  ADD COLUMN infra_failures bigint NOT NULL DEFAULT 0,
  ADD COLUMN failed_boards bytea NOT NULL DEFAULT ''::bytea,
  ADD COLUMN cancel_requested bigint NOT NULL DEFAULT 0;
CREATE INDEX jobs_queued ON jobs (board_type, priority DESC, number) WHERE state = 2;
CREATE INDEX jobs_by_owner ON jobs (owner) WHERE owner IS NOT NULL;
CREATE INDEX jobs_on_boards ON jobs (board_id) WHERE state BETWEEN 3 AND 6;
CREATE INDEX jobs_unfinished_by_tenant ON jobs (tenant) WHERE state <> 7;
ALTER TABLE boards ADD COLUMN owner bytea;
CREATE TABLE compile_claims (
  key bytea PRIMARY KEY,
  replica bytea NOT NULL,
  claimed_ms bigint NOT NULL);
CREATE SEQUENCE job_numbers;
SELECT setval('job_numbers', COALESCE((SELECT MAX(number) FROM jobs), 0) + 1, false);
CREATE FUNCTION boardlab_notify_queued() RETURNS trigger AS $$
BEGIN
  IF NEW.state = 2 AND NEW.owner IS NULL AND (TG_OP = 'INSERT' OR OLD.state <> 2) THEN
    PERFORM pg_notify('boardlab_queue', encode(NEW.board_type, 'escape'));
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER jobs_queued_notify AFTER INSERT OR UPDATE OF state ON jobs
  FOR EACH ROW EXECUTE FUNCTION boardlab_notify_queued();
CREATE FUNCTION boardlab_notify_event() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('boardlab_events', encode(NEW.job_id, 'escape'));
  RETURN NULL;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER events_notify AFTER INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION boardlab_notify_event();
)sql"},
    // A request id is its client's idempotency key: one job per tenant and request id, also when
    // two replicas receive the same first submit at the same moment (the second insert fails and
    // its submit answers with the first job). Jobs that raced before this index existed keep
    // their records; all but the oldest lose the request id column, so that a retry finds the
    // oldest.
    {3, R"sql(
UPDATE jobs SET request_id = ''::bytea WHERE request_id <> ''::bytea AND EXISTS (
  SELECT 1 FROM jobs older WHERE older.tenant = jobs.tenant AND
  older.request_id = jobs.request_id AND older.number < jobs.number);
CREATE UNIQUE INDEX jobs_by_request_unique ON jobs (tenant, request_id)
  WHERE request_id <> ''::bytea;
DROP INDEX jobs_by_request;
)sql"},
    // A replica that claims right after its commit (it has idle boards for what the commit
    // queues) sets boardlab.claiming_next in that transaction: the others are not told of those
    // jobs, whose claim would find them gone; it notifies itself what it could not claim.
    {4, R"sql(
CREATE OR REPLACE FUNCTION boardlab_notify_queued() RETURNS trigger AS $$
BEGIN
  IF NEW.state = 2 AND NEW.owner IS NULL AND (TG_OP = 'INSERT' OR OLD.state <> 2) AND
     current_setting('boardlab.claiming_next', true) IS DISTINCT FROM 'on' THEN
    PERFORM pg_notify('boardlab_queue', encode(NEW.board_type, 'escape'));
  END IF;
  RETURN NULL;
END $$ LANGUAGE plpgsql;
)sql"},
    // A claim looks at each tenant's first queued jobs (postgres_cluster.cc,
    // BOARDLAB_CLAIM_HEADS) rather than sorting every queued job: the tenants one index probe
    // each, and a tenant's jobs in priority and age order. IF NOT EXISTS: a database marked
    // older than it is (the conformance tests' SchemaVersionSql) runs it again.
    {5, R"sql(
CREATE INDEX IF NOT EXISTS jobs_claimable ON jobs (board_type, tenant, priority DESC, number)
  WHERE state = 2 AND owner IS NULL;
)sql"},
};

// The unique index of migration 3: its violation is a request id taken by another job.
constexpr char kRequestIdIndex[] = "jobs_by_request_unique";
constexpr char kUniqueViolation[] = "23505";

// The single server's writes of an event ($1 job id, $2 seq, $3 record) and a grant ($1 sha256,
// $2 tenant).
inline constexpr char kPutEventSql[] =
    "INSERT INTO events (job_id, seq, record) VALUES ($1, $2, $3) "
    "ON CONFLICT (job_id, seq) DO UPDATE SET record = excluded.record";
inline constexpr char kGrantBlobSql[] =
    "INSERT INTO blob_grants (sha256, tenant) VALUES ($1, $2) "
    "ON CONFLICT (sha256, tenant) DO NOTHING";

bool Succeeded(const PGresult* result) {
  ExecStatusType status = PQresultStatus(result);
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

}  // namespace

int64_t PostgresStore::LatestSchemaVersion() { return std::end(kMigrations)[-1].version; }

PGconn* ConnectToPostgres(const std::string& conninfo, const std::string& password) {
  // The URI comes after the defaults so that it may override them, the password last so that it
  // wins over one in the URI (configurations are refused one, see ValidateServerConfig).
  std::vector<const char*> keywords = {"application_name", "client_encoding", "dbname"};
  std::vector<const char*> values = {"boardlab-server", "UTF8", conninfo.c_str()};
  if (!password.empty()) {
    keywords.push_back("password");
    values.push_back(password.c_str());
  }
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* connection = PQconnectdbParams(keywords.data(), values.data(), /*expand_dbname=*/1);
  // Notices (e.g. "relation already exists, skipping" at each start) are not errors; libpq would
  // print them on stderr.
  if (connection != nullptr)
    PQsetNoticeProcessor(
        connection, [](void*, const char*) {}, nullptr);
  return connection;
}

absl::StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& conninfo,
                                                                   const std::string& password) {
  PGconn* connection = ConnectToPostgres(conninfo, password);
  if (connection == nullptr) return absl::ResourceExhaustedError("out of memory");
  auto store = std::unique_ptr<PostgresStore>(new PostgresStore(connection, conninfo, password));
  if (PQstatus(connection) != CONNECTION_OK) {
    return absl::UnavailableError(
        absl::StrCat("connecting to PostgreSQL: ", Trimmed(PQerrorMessage(connection))));
  }
  if (absl::Status ok = store->Migrate(); !ok.ok()) {
    return absl::UnavailableError(absl::StrCat("opening the PostgreSQL database: ", ok.message()));
  }
  return store;
}

PostgresStore::PostgresStore(PGconn* connection, std::string conninfo, std::string password)
    : conninfo_(std::move(conninfo)),
      password_(std::move(password)),
      replica_id_(UniqueScratchName()) {
  connections_.push_back(std::make_unique<Connection>(connection));
  idle_.push_back(connections_.back().get());
}

PostgresStore::~PostgresStore() = default;

PostgresStore::Connection::~Connection() { PQfinish(pg); }

thread_local PostgresStore::Connection* PostgresStore::current_ = nullptr;

PostgresStore::Lease::Lease(PostgresStore& store)
    : store_(store), connection_(store.Acquire()), outer_(current_) {
  current_ = connection_;
}

PostgresStore::Lease::~Lease() {
  current_ = outer_;
  store_.GiveBack(connection_);
}

// An idle connection, or a new one while the pool is below kMaxConnections; else the first to
// come free. A connection that cannot be opened (the database's max_connections, say) caps the
// pool at what it has: the first connection, opened by Open, is always there.
PostgresStore::Connection* PostgresStore::Acquire() {
  std::unique_lock lock(pool_mutex_);
  for (;;) {
    if (!idle_.empty()) {
      Connection* connection = idle_.back();
      idle_.pop_back();
      return connection;
    }
    if (static_cast<int>(connections_.size()) + opening_ < pool_limit_) {
      ++opening_;
      lock.unlock();
      PGconn* opened = ConnectToPostgres(conninfo_, password_);
      const bool up = opened != nullptr && PQstatus(opened) == CONNECTION_OK;
      lock.lock();
      --opening_;
      if (up) {
        connections_.push_back(std::make_unique<Connection>(opened));
        return connections_.back().get();
      }
      if (opened != nullptr) PQfinish(opened);
      pool_limit_ = static_cast<int>(connections_.size());
      continue;
    }
    pool_free_.wait(lock);
  }
}

void PostgresStore::GiveBack(Connection* connection) {
  {
    std::lock_guard lock(pool_mutex_);
    idle_.push_back(connection);
  }
  pool_free_.notify_one();
}

absl::Status PostgresStore::EnsureConnected() {
  if (PQstatus(Current().pg) == CONNECTION_OK) return absl::OkStatus();
  // Inside a transaction its earlier statements are gone with the connection: the caller fails
  // and rolls back.
  if (Current().in_transaction) return absl::UnavailableError("database: the connection was lost");
  ResetCurrent();
  if (PQstatus(Current().pg) != CONNECTION_OK) {
    return absl::UnavailableError(
        absl::StrCat("database: reconnecting: ", Trimmed(PQerrorMessage(Current().pg))));
  }
  return absl::OkStatus();
}

void PostgresStore::ResetCurrent() {
  PQreset(Current().pg);
  Current().prepared.clear();  // statements are prepared per connection
  Current().backend_pid = PQbackendPID(Current().pg);
}

bool PostgresStore::IsOwnBackend(int pid) {
  std::lock_guard lock(pool_mutex_);
  for (const auto& connection : connections_) {
    if (connection->backend_pid == pid) return true;
  }
  return false;
}

absl::Status PostgresStore::Error(const char* what, const PGresult* result) const {
  const char* message = result ? PQresultErrorMessage(result) : "";
  if (message == nullptr || *message == '\0') message = PQerrorMessage(Current().pg);
  std::string text = absl::StrCat("database: ", what, ": ", Trimmed(message));
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const char* constraint = result ? PQresultErrorField(result, PG_DIAG_CONSTRAINT_NAME) : nullptr;
  if (state != nullptr && constraint != nullptr && std::strcmp(state, kUniqueViolation) == 0 &&
      std::strcmp(constraint, kRequestIdIndex) == 0) {
    return absl::AlreadyExistsError(std::move(text));
  }
  return absl::InternalError(std::move(text));
}

absl::Status PostgresStore::Exec(const char* sql, const char* what) {
  if (absl::Status ok = EnsureConnected(); !ok.ok()) return ok;
  Rows result(PQexec(Current().pg, sql));
  if (!Succeeded(result.get())) return Error(what, result.get());
  return absl::OkStatus();
}

absl::StatusOr<std::string> PostgresStore::PreparedName(const char* sql, const Params& params,
                                                        const char* what) {
  auto name = Current().prepared.find(sql);
  if (name != Current().prepared.end()) return name->second;
  // Named by count: a statement that failed to prepare was not added, so names stay unique.
  const std::string statement = absl::StrCat("s", Current().prepared.size());
  Rows prepared(PQprepare(Current().pg, statement.c_str(), sql, params.size(), params.types()));
  if (!Succeeded(prepared.get())) return Error(what, prepared.get());
  Current().prepared.emplace(sql, statement);
  return statement;
}

absl::StatusOr<PostgresStore::Rows> PostgresStore::Run(const char* sql, const Params& params,
                                                       const char* what) {
  if (absl::Status ok = EnsureConnected(); !ok.ok()) return ok;
  absl::StatusOr<std::string> name = PreparedName(sql, params, what);
  if (!name.ok()) return name.status();
  const std::vector<const char*> values = params.values();
  const std::vector<int> lengths = params.lengths();
  const std::vector<int> binary(values.size(), 1);
  Rows rows(PQexecPrepared(Current().pg, name->c_str(), params.size(), values.data(),
                           lengths.data(), binary.data(), /*resultFormat=*/1));
  if (!Succeeded(rows.get())) return Error(what, rows.get());
  return rows;
}

// Every statement is sent before any answer is read: the database's replies come back in one
// stream, so a commit of a dozen statements costs about one round trip instead of a dozen (each
// a context switch to the PostgreSQL backend, which on a loaded machine is what a job waits on).
absl::StatusOr<std::vector<PostgresStore::Rows>> PostgresStore::RunPipelined(
    const std::vector<Queued>& statements) {
  if (absl::Status ok = EnsureConnected(); !ok.ok()) return ok;
  std::vector<std::string> names;  // prepared before the pipeline (PQprepare cannot run in one)
  for (const Queued& statement : statements) {
    if (statement.params.size() == 0) {
      names.emplace_back();
      continue;
    }
    absl::StatusOr<std::string> name =
        PreparedName(statement.sql, statement.params, statement.what);
    if (!name.ok()) return name.status();
    names.push_back(*std::move(name));
  }
  if (PQenterPipelineMode(Current().pg) != 1) return Error("entering pipeline mode", nullptr);
  bool sent = true;
  for (size_t i = 0; i < statements.size() && sent; ++i) {
    const Params& params = statements[i].params;
    const std::vector<const char*> values = params.values();
    const std::vector<int> lengths = params.lengths();
    const std::vector<int> binary(values.size(), 1);
    sent = names[i].empty()
               ? PQsendQueryParams(Current().pg, statements[i].sql, 0, nullptr, nullptr, nullptr,
                                   nullptr, /*resultFormat=*/1) == 1
               : PQsendQueryPrepared(Current().pg, names[i].c_str(), params.size(), values.data(),
                                     lengths.data(), binary.data(), /*resultFormat=*/1) == 1;
  }
  absl::StatusOr<std::vector<Rows>> results = sent && PQpipelineSync(Current().pg) == 1
                                                  ? PipelineResults(statements)
                                                  : Error("sending a pipeline", nullptr);
  if (PQexitPipelineMode(Current().pg) != 1) {
    // Results are still pending (the connection broke mid-stream): start afresh.
    ResetCurrent();
    if (results.ok()) results = Error("leaving pipeline mode", nullptr);
  }
  return results;
}

absl::StatusOr<std::vector<PostgresStore::Rows>> PostgresStore::PipelineResults(
    const std::vector<Queued>& statements) {
  std::vector<Rows> rows;
  absl::Status failed = absl::OkStatus();
  // Each statement's result is followed by a null; after the last, the sync point's result.
  // Statements after a failed one come back PGRES_PIPELINE_ABORTED.
  int nulls_in_a_row = 0;
  while (nulls_in_a_row < 2) {
    Rows result(PQgetResult(Current().pg));
    if (result.get() == nullptr) {
      ++nulls_in_a_row;
      continue;
    }
    nulls_in_a_row = 0;
    const ExecStatusType status = PQresultStatus(result.get());
    if (status == PGRES_PIPELINE_SYNC) break;
    const char* what = rows.size() < statements.size() ? statements[rows.size()].what : "pipeline";
    if (failed.ok() && status != PGRES_PIPELINE_ABORTED && !Succeeded(result.get())) {
      failed = Error(what, result.get());
    }
    rows.push_back(std::move(result));
  }
  if (!failed.ok()) return failed;
  if (rows.size() != statements.size()) {
    return Error("reading a pipeline's results (the connection was lost)", nullptr);
  }
  return rows;
}

absl::Status PostgresStore::InTransaction(const std::function<absl::Status()>& body) {
  if (absl::Status ok = Exec("BEGIN", "starting a transaction"); !ok.ok()) return ok;
  Current().in_transaction = true;
  absl::Status done = body();
  if (done.ok()) done = Exec("COMMIT", "committing a transaction");
  if (!done.ok() && PQstatus(Current().pg) == CONNECTION_OK) {
    Exec("ROLLBACK", "rolling back").IgnoreError();  // nothing of the transaction stays
  }
  Current().in_transaction = false;
  return done;
}

absl::Status PostgresStore::Migrate() {
  Lease lease(*this);
  return InTransaction([this] { return MigrateLocked(); });
}

absl::Status PostgresStore::MigrateLocked() {
  if (absl::Status ok = Run("SELECT pg_advisory_xact_lock($1)", Params().Int(kMigrationLockKey),
                            "waiting for other migrations")
                            .status();
      !ok.ok()) {
    return ok;
  }
  if (absl::Status ok =
          Exec("CREATE TABLE IF NOT EXISTS schema_version (version bigint PRIMARY KEY, "
               "applied_ms bigint NOT NULL)",
               "creating the schema_version table");
      !ok.ok()) {
    return ok;
  }
  auto current = Run("SELECT COALESCE(MAX(version), 0) FROM schema_version", Params(),
                     "reading the schema "
                     "version");
  if (!current.ok()) return current.status();
  const int64_t version = current->Int(0, 0);
  if (version > LatestSchemaVersion()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the database has schema version ", version, ", newer than this server's ",
                     LatestSchemaVersion(), ": run a newer boardlab-server"));
  }
  for (const Migration& migration : kMigrations) {
    if (migration.version <= version) continue;
    if (absl::Status ok = Exec(migration.sql, "migrating the schema"); !ok.ok()) return ok;
    auto recorded = Run("INSERT INTO schema_version (version, applied_ms) VALUES ($1, $2)",
                        Params().Int(migration.version).Int(NowMs()), "recording a migration");
    if (!recorded.ok()) return recorded.status();
  }
  return absl::OkStatus();
}

absl::Status PostgresStore::Commit(const StoreBatch& batch) {
  Lease lease(*this);
  return InTransaction([&] { return WriteBatch(batch, *this); });
}

absl::Status PostgresStore::PutJob(int64_t number, const v1::Job& job) {
  Lease lease(*this);
  return PutJobLocked(number, job);
}

// A job's row as PutJobLocked and PutOwnedJobLocked start it: $1 number, $2 id, $3 tenant, $4
// request id, $5 state, $6 board type, $7 record, $8 priority, $9 pinned board, $10 current board.
PostgresStore::Params PostgresStore::JobRowParams(int64_t number, const v1::Job& job) {
  PostgresStore::Params params;
  params.Int(number)
      .Bytes(job.id())
      .Bytes(job.tenant())
      .Bytes(job.request_id())
      .Int(job.state())
      .Bytes(job.spec().selector().board_type())
      .Bytes(job.SerializeAsString())
      .Int(job.spec().priority())
      .Bytes(job.spec().selector().board_id())
      .Bytes(job.board_id());
  return params;
}

absl::Status PostgresStore::PutJobLocked(int64_t number, const v1::Job& job) {
  // As in SqliteStore: an update sets only what changes (the id, tenant and request id columns
  // of a job never do).
  // The columns replicas schedule by (priority, pinned board, current board) follow the record.
  return Run("INSERT INTO jobs (number, id, tenant, request_id, state, board_type, record, "
             "priority, pinned_board, board_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
             "ON CONFLICT (number) DO UPDATE SET state = excluded.state, record = excluded.record, "
             "priority = excluded.priority, board_id = excluded.board_id",
             JobRowParams(number, job), "storing a job")
      .status();
}

absl::StatusOr<std::optional<v1::Job>> PostgresStore::OneJob(const char* sql, const Params& params,
                                                             const char* what) {
  auto rows = Run(sql, params, what);
  if (!rows.ok()) return rows.status();
  if (rows->size() == 0) return std::optional<v1::Job>();
  auto job = ParseRecord<v1::Job>(rows->Bytes(0, 0), "job");
  if (!job.ok()) return job.status();
  return std::optional<v1::Job>(*std::move(job));
}

absl::StatusOr<std::optional<v1::Job>> PostgresStore::GetJob(const std::string& id) {
  Lease lease(*this);
  return OneJob("SELECT record FROM jobs WHERE id = $1", Params().Bytes(id), "reading a job");
}

absl::StatusOr<std::optional<v1::Job>> PostgresStore::FindJobByRequestId(
    const std::string& tenant, const std::string& request_id) {
  Lease lease(*this);
  return OneJob("SELECT record FROM jobs WHERE tenant = $1 AND request_id = $2 LIMIT 1",
                Params().Bytes(tenant).Bytes(request_id), "looking up a request id");
}

absl::StatusOr<std::vector<v1::Job>> PostgresStore::LoadUnfinishedJobs() {
  Lease lease(*this);
  auto rows = Run("SELECT record FROM jobs WHERE state <> $1 ORDER BY number",
                  Params().Int(v1::JOB_STATE_DONE), "loading unfinished jobs");
  if (!rows.ok()) return rows.status();
  return ParseRecords<v1::Job>(*rows, 0, "job");
}

absl::StatusOr<JobPage> PostgresStore::ListJobs(const JobFilter& filter, int64_t before,
                                                int page_size) {
  Lease lease(*this);
  // As in SqliteStore, states, results and labels are checked on the parsed records. The rows come
  // in pages of the page size (a cursor-less keyset scan) so that a filter matching few jobs does
  // not load the whole table at once.
  JobPage page;
  int64_t below = before > 0 ? before : INT64_MAX;
  const int64_t fetch = std::max(page_size, 1) + 1;
  for (;;) {
    auto rows =
        Run("SELECT number, record FROM jobs WHERE number < $1 AND ($2 = ''::bytea OR tenant = $2) "
            "AND ($3 = ''::bytea OR board_type = $3) ORDER BY number DESC LIMIT $4",
            Params().Int(below).Bytes(filter.tenant).Bytes(filter.board_type).Int(fetch),
            "listing jobs");
    if (!rows.ok()) return rows.status();
    for (int row = 0; row < rows->size(); ++row) {
      below = rows->Int(row, 0);
      auto job = ParseRecord<v1::Job>(rows->Bytes(row, 1), "job");
      if (!job.ok()) return job.status();
      if (!MatchesParsedFilter(*job, filter)) continue;
      if (static_cast<int>(page.jobs.size()) == page_size) {
        page.next_before = page.jobs.empty() ? 0 : below + 1;
        return page;
      }
      page.jobs.push_back(*std::move(job));
    }
    if (rows->size() < fetch) return page;
  }
}

absl::StatusOr<int64_t> PostgresStore::MaxJobNumber() {
  Lease lease(*this);
  auto rows = Run("SELECT COALESCE(MAX(number), 0) FROM jobs", Params(), "reading the job counter");
  if (!rows.ok()) return rows.status();
  return rows->Int(0, 0);
}

absl::StatusOr<std::vector<std::pair<int64_t, v1::Job>>> PostgresStore::JobsAfter(int64_t after,
                                                                                  int limit) {
  Lease lease(*this);
  auto rows = Run("SELECT number, record FROM jobs WHERE number > $1 ORDER BY number LIMIT $2",
                  Params().Int(after).Int(limit), "reading jobs");
  if (!rows.ok()) return rows.status();
  std::vector<std::pair<int64_t, v1::Job>> jobs;
  for (int row = 0; row < rows->size(); ++row) {
    auto job = ParseRecord<v1::Job>(rows->Bytes(row, 1), "job");
    if (!job.ok()) return job.status();
    jobs.emplace_back(rows->Int(row, 0), *std::move(job));
  }
  return jobs;
}

absl::StatusOr<int64_t> PostgresStore::DeleteFinishedJobs(int64_t ended_before_ms) {
  return DeleteInPages([&](int64_t after) { return DeleteFinishedPage(ended_before_ms, after); });
}

absl::StatusOr<RetentionPage> PostgresStore::DeleteFinishedPage(int64_t ended_before_ms,
                                                                int64_t after) {
  Lease lease(*this);
  auto rows = Run(
      "SELECT number, record FROM jobs WHERE state = $1 AND number > $2 ORDER BY number LIMIT $3",
      Params().Int(v1::JOB_STATE_DONE).Int(after).Int(kRetentionPageJobs), "reading finished jobs");
  if (!rows.ok()) return rows.status();
  RetentionPage page(ended_before_ms, after);
  for (int row = 0; row < rows->size(); ++row) {
    absl::StatusOr<bool> go_on = page.Scan(rows->Int(row, 0), rows->Bytes(row, 1));
    if (!go_on.ok()) return go_on.status();
    if (!*go_on) break;
  }
  if (page.expired().empty()) return page;
  absl::Status deleted = InTransaction([&] { return DeleteJobsLocked(page.expired()); });
  if (!deleted.ok()) return deleted;
  return page;
}

absl::Status PostgresStore::DeleteJobsLocked(const std::vector<std::string>& ids) {
  for (const std::string& id : ids) {
    auto events =
        Run("DELETE FROM events WHERE job_id = $1", Params().Bytes(id), "deleting job events");
    if (!events.ok()) return events.status();
    auto job = Run("DELETE FROM jobs WHERE id = $1", Params().Bytes(id), "deleting a job");
    if (!job.ok()) return job.status();
  }
  return absl::OkStatus();
}

absl::Status PostgresStore::AppendEvent(const v1::JobEvent& event) {
  Lease lease(*this);
  return AppendEventLocked(event);
}

absl::Status PostgresStore::AppendEventLocked(const v1::JobEvent& event) {
  return Run(kPutEventSql,
             Params().Bytes(event.job_id()).Int(event.seq()).Bytes(event.SerializeAsString()),
             "storing a job event")
      .status();
}

absl::StatusOr<std::vector<v1::JobEvent>> PostgresStore::Events(const std::string& job_id,
                                                                int64_t after_seq) {
  Lease lease(*this);
  auto rows = Run("SELECT record FROM events WHERE job_id = $1 AND seq > $2 ORDER BY seq",
                  Params().Bytes(job_id).Int(after_seq), "reading job events");
  if (!rows.ok()) return rows.status();
  return ParseRecords<v1::JobEvent>(*rows, 0, "job event");
}

absl::Status PostgresStore::PutBoard(const v1::Board& board) {
  Lease lease(*this);
  return PutBoardLocked(board);
}

absl::Status PostgresStore::PutBoardLocked(const v1::Board& board) {
  return Run("INSERT INTO boards (id, record) VALUES ($1, $2) "
             "ON CONFLICT (id) DO UPDATE SET record = excluded.record",
             Params().Bytes(board.id()).Bytes(board.SerializeAsString()), "storing a board")
      .status();
}

absl::StatusOr<std::vector<v1::Board>> PostgresStore::LoadBoards() {
  Lease lease(*this);
  // Byte order of the ids (bytea), as SQLite sorts them.
  auto rows = Run("SELECT record FROM boards ORDER BY id", Params(), "loading boards");
  if (!rows.ok()) return rows.status();
  return ParseRecords<v1::Board>(*rows, 0, "board");
}

absl::Status PostgresStore::PutCompile(const std::string& key, const CompileRecord& record) {
  const std::string json = CompileRecordToJson(record);
  Lease lease(*this);
  return Run("INSERT INTO compile_cache (key, record) VALUES ($1, $2) "
             "ON CONFLICT (key) DO UPDATE SET record = excluded.record",
             Params().Bytes(key).Text(json), "storing a compile cache entry")
      .status();
}

absl::StatusOr<std::optional<CompileRecord>> PostgresStore::GetCompile(const std::string& key) {
  Lease lease(*this);
  auto rows = Run("SELECT record FROM compile_cache WHERE key = $1", Params().Bytes(key),
                  "reading the compile cache");
  if (!rows.ok()) return rows.status();
  if (rows->size() == 0) return std::optional<CompileRecord>();
  auto record = CompileRecordFromJson(rows->Bytes(0, 0));
  if (!record.ok()) return record.status();
  return std::optional<CompileRecord>(*std::move(record));
}

absl::Status PostgresStore::PutBlob(const std::string& sha256, std::string_view bytes) {
  Lease lease(*this);
  // Storing a blob again counts as a use.
  return Run("INSERT INTO small_blobs (sha256, data, used_ms) VALUES ($1, $2, $3) "
             "ON CONFLICT (sha256) DO UPDATE SET used_ms = excluded.used_ms",
             Params().Bytes(sha256).Bytes(bytes).Int(NowMs()), "storing a blob")
      .status();
}

absl::StatusOr<std::optional<std::string>> PostgresStore::GetBlob(const std::string& sha256) {
  Lease lease(*this);
  auto rows = Run("SELECT data FROM small_blobs WHERE sha256 = $1", Params().Bytes(sha256),
                  "reading a blob");
  if (!rows.ok()) return rows.status();
  if (rows->size() == 0) return std::optional<std::string>();
  return std::optional<std::string>(rows->Bytes(0, 0));
}

absl::StatusOr<int64_t> PostgresStore::BlobSize(const std::string& sha256) {
  Lease lease(*this);
  auto rows = Run("SELECT octet_length(data)::bigint FROM small_blobs WHERE sha256 = $1",
                  Params().Bytes(sha256), "looking up a blob");
  if (!rows.ok()) return rows.status();
  return rows->size() == 0 ? -1 : rows->Int(0, 0);
}

absl::StatusOr<int64_t> PostgresStore::BlobBytes() {
  Lease lease(*this);
  auto rows = Run("SELECT COALESCE(SUM(octet_length(data)), 0)::bigint FROM small_blobs", Params(),
                  "summing the blobs");
  if (!rows.ok()) return rows.status();
  return rows->Int(0, 0);
}

absl::StatusOr<int64_t> PostgresStore::TouchBlob(const std::string& sha256, int64_t now_ms) {
  Lease lease(*this);
  // A blob used recently is left alone: no write for every submit of a model. One round trip:
  // the use written, or else the one stored (the statement's snapshot), or -1.
  auto rows = Run(
      "WITH touched AS (UPDATE small_blobs SET used_ms = $1 WHERE sha256 = $2 AND "
      "used_ms < $3 RETURNING used_ms) SELECT COALESCE((SELECT used_ms FROM touched), "
      "(SELECT used_ms FROM small_blobs WHERE sha256 = $2), -1)",
      Params().Int(now_ms).Bytes(sha256).Int(now_ms - kTouchPrecisionMs), "marking a blob used");
  if (!rows.ok()) return rows.status();
  return rows->Int(0, 0);
}

absl::StatusOr<std::vector<std::string>> PostgresStore::BlobsUnusedSince(int64_t ms) {
  Lease lease(*this);
  auto rows = Run("SELECT sha256 FROM small_blobs WHERE used_ms < $1", Params().Int(ms),
                  "listing unused blobs");
  if (!rows.ok()) return rows.status();
  std::vector<std::string> unused;
  for (int row = 0; row < rows->size(); ++row) unused.push_back(rows->Bytes(row, 0));
  return unused;
}

absl::StatusOr<int64_t> PostgresStore::DeleteBlobUnusedSince(const std::string& sha256,
                                                             int64_t ms) {
  Lease lease(*this);
  // One statement: a use recorded in between (by another replica) keeps the blob.
  auto rows =
      Run("DELETE FROM small_blobs WHERE sha256 = $1 AND used_ms < $2 "
          "RETURNING octet_length(data)::bigint",
          Params().Bytes(sha256).Int(ms), "deleting a blob");
  if (!rows.ok()) return rows.status();
  return rows->size() == 0 ? -1 : rows->Int(0, 0);
}

absl::Status PostgresStore::GrantBlob(const std::string& tenant, const std::string& sha256) {
  Lease lease(*this);
  return GrantBlobLocked(tenant, sha256);
}

absl::Status PostgresStore::GrantBlobLocked(const std::string& tenant, const std::string& sha256) {
  return Run(kGrantBlobSql, Params().Bytes(sha256).Bytes(tenant), "granting a blob").status();
}

absl::StatusOr<bool> PostgresStore::HasBlobGrant(const std::string& tenant,
                                                 const std::string& sha256) {
  Lease lease(*this);
  auto rows = Run("SELECT 1 FROM blob_grants WHERE sha256 = $1 AND tenant = $2",
                  Params().Bytes(sha256).Bytes(tenant), "looking up a blob grant");
  if (!rows.ok()) return rows.status();
  return rows->size() > 0;
}

absl::Status PostgresStore::DeleteBlobGrants(const std::vector<std::string>& sha256s) {
  Lease lease(*this);
  for (const std::string& sha256 : sha256s) {
    auto deleted = Run("DELETE FROM blob_grants WHERE sha256 = $1", Params().Bytes(sha256),
                       "deleting blob grants");
    if (!deleted.ok()) return deleted.status();
  }
  return absl::OkStatus();
}

}  // namespace boardlab::server
