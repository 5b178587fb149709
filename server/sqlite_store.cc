#include "server/sqlite_store.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/blob_store.h"
#include "server/clock.h"
#include "server/job_digests.h"
#include "server/store_records.h"

namespace boardlab::server {
namespace {

constexpr const char* kSchema = R"sql(
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
CREATE TABLE IF NOT EXISTS jobs (
  number INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  request_id TEXT NOT NULL,
  state INTEGER NOT NULL,
  board_type TEXT NOT NULL,
  record BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state);
CREATE TABLE IF NOT EXISTS events (
  job_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  record BLOB NOT NULL,
  PRIMARY KEY (job_id, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS boards (id TEXT PRIMARY KEY, record BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS compile_cache (key TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS small_blobs (
  sha256 TEXT PRIMARY KEY,
  data BLOB NOT NULL,
  used_ms INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS blob_grants (
  sha256 TEXT NOT NULL,
  tenant TEXT NOT NULL,
  PRIMARY KEY (sha256, tenant)) WITHOUT ROWID;
)sql";

// PRAGMA user_version of a database this server has migrated. 1: small_blobs.used_ms; 2:
// blob_grants filled from the jobs of databases written before blobs were scoped to tenants; 3:
// one job per tenant and request id (jobs_by_request_unique).
constexpr int64_t kSchemaVersion = 3;

// Migration 3, the same as PostgreSQL's (server/postgres_store.cc): a request id is its client's
// idempotency key, so the store refuses a second job for it rather than trusting every writer to
// look first. Jobs of one request id written before (none should exist: one server looked its
// map up under its lock) keep their records; all but the oldest lose the column, so a retry
// finds the oldest.
constexpr const char* kUniqueRequestIds = R"sql(
UPDATE jobs SET request_id = '' WHERE request_id != '' AND EXISTS (
  SELECT 1 FROM jobs older WHERE older.tenant = jobs.tenant AND
  older.request_id = jobs.request_id AND older.number < jobs.number);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_by_request_unique ON jobs (tenant, request_id)
  WHERE request_id != '';
DROP INDEX IF EXISTS jobs_by_request;
)sql";

// One use of a statement from the store's cache: prepared on first use and kept until the store
// closes; reset and unbound when this goes out of scope. Use under the store's mutex.
class Statement {
 public:
  Statement(sqlite3* db, std::map<std::string, sqlite3_stmt*>& cache, const char* sql) {
    sqlite3_stmt*& cached = cache[sql];
    if (cached == nullptr &&
        sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &cached, nullptr) != SQLITE_OK) {
      sqlite3_finalize(cached);
      cached = nullptr;
    }
    stmt_ = cached;
    ok_ = stmt_ != nullptr;
  }
  ~Statement() {
    if (stmt_ == nullptr) return;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return ok_; }
  Statement& Bind(int index, int64_t value) {
    ok_ = ok_ && sqlite3_bind_int64(stmt_, index, value) == SQLITE_OK;
    return *this;
  }
  Statement& Bind(int index, const std::string& text) {
    ok_ = ok_ && sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                                   SQLITE_TRANSIENT) == SQLITE_OK;
    return *this;
  }
  Statement& BindBlob(int index, std::string_view bytes) {
    ok_ = ok_ && sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()),
                                   SQLITE_TRANSIENT) == SQLITE_OK;
    return *this;
  }
  /// SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return ok_ ? sqlite3_step(stmt_) : SQLITE_ERROR; }
  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  std::string Blob(int column) const {
    const void* data = sqlite3_column_blob(stmt_, column);
    int size = sqlite3_column_bytes(stmt_, column);
    return data ? std::string(static_cast<const char*>(data), static_cast<size_t>(size)) : "";
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  bool ok_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return absl::UnavailableError(absl::StrCat("opening database '", path, "': ", message));
  }
  sqlite3_busy_timeout(db, 5000);
  auto store = std::unique_ptr<SqliteStore>(new SqliteStore(db));
  absl::Status ok = store->Exec(kSchema);
  if (ok.ok()) ok = store->Migrate();
  if (!ok.ok()) {
    return absl::UnavailableError(absl::StrCat("opening database '", path, "': ", ok.message()));
  }
  return store;
}

SqliteStore::~SqliteStore() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

absl::Status SqliteStore::Exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    return absl::InternalError(text);
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteStore::SchemaVersion() {
  Statement version(db_, statements_, "PRAGMA user_version");
  if (version.Step() != SQLITE_ROW) return Error("reading the schema version");
  return version.Int(0);
}

absl::Status SqliteStore::Migrate() {
  absl::StatusOr<int64_t> version = SchemaVersion();
  if (!version.ok()) return version.status();
  if (*version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat("the database has schema version ", *version,
                                                      ", newer than this server's ", kSchemaVersion,
                                                      ": run a newer boardlab-server"));
  }
  if (*version < 1) {
    if (absl::Status ok = MigrateToBlobUse(); !ok.ok()) return ok;
  }
  if (*version < 2) {
    if (absl::Status ok = MigrateToBlobGrants(); !ok.ok()) return ok;
  }
  if (*version < 3) {
    if (absl::Status ok = MigrateInTransaction(kUniqueRequestIds); !ok.ok()) return ok;
  }
  return Exec(absl::StrCat("PRAGMA user_version = ", kSchemaVersion).c_str());
}

absl::Status SqliteStore::MigrateToBlobUse() {
  // Databases from before retention have no small_blobs.used_ms: they get it, and their blobs
  // count as used now (they get a full grace period, not an immediate deletion).
  bool has_column = false;
  {
    Statement column(
        db_, statements_,
        "SELECT COUNT(*) FROM pragma_table_info('small_blobs') WHERE name = 'used_ms'");
    if (column.Step() != SQLITE_ROW) return Error("reading the schema");
    has_column = column.Int(0) > 0;
  }  // reset before the schema changes
  if (!has_column) {
    if (absl::Status ok =
            Exec("ALTER TABLE small_blobs ADD COLUMN used_ms INTEGER NOT NULL DEFAULT 0");
        !ok.ok()) {
      return ok;
    }
  }
  if (absl::Status ok =
          Exec("CREATE INDEX IF NOT EXISTS small_blobs_by_use ON small_blobs (used_ms)");
      !ok.ok()) {
    return ok;
  }
  Statement backfill(db_, statements_, "UPDATE small_blobs SET used_ms = ? WHERE used_ms = 0");
  backfill.Bind(1, NowMs());
  if (backfill.Step() != SQLITE_DONE) return Error("dating the stored blobs");
  return absl::OkStatus();
}

// Tenants keep the blobs their jobs refer to: every digest a stored job names is granted to the
// job's tenant, in one transaction.
absl::Status SqliteStore::MigrateToBlobGrants() {
  if (Statement(db_, statements_, "BEGIN").Step() != SQLITE_DONE) {
    return Error("starting a transaction");
  }
  absl::Status granted = GrantJobBlobsLocked();
  if (granted.ok() && Statement(db_, statements_, "COMMIT").Step() != SQLITE_DONE) {
    granted = Error("committing a transaction");
  }
  if (!granted.ok()) Exec("ROLLBACK").IgnoreError();
  return granted;
}

absl::Status SqliteStore::MigrateInTransaction(const char* sql) {
  if (absl::Status ok = Exec("BEGIN"); !ok.ok()) return ok;
  absl::Status migrated = Exec(sql);
  if (migrated.ok()) migrated = Exec("COMMIT");
  if (!migrated.ok()) Exec("ROLLBACK").IgnoreError();
  return migrated;
}

absl::Status SqliteStore::GrantJobBlobsLocked() {
  std::vector<std::pair<std::string, std::string>> grants;  // (tenant, sha256)
  {
    Statement jobs(db_, statements_, "SELECT tenant, record FROM jobs");
    int rc;
    while ((rc = jobs.Step()) == SQLITE_ROW) {
      auto job = ParseRecord<v1::Job>(jobs.Blob(1), "job");
      if (!job.ok()) return job.status();
      absl::flat_hash_set<std::string> digests;
      CollectDigests(*job, digests);
      for (const std::string& sha256 : digests) grants.emplace_back(jobs.Blob(0), sha256);
    }
    if (rc != SQLITE_DONE) return Error("reading jobs");
  }
  for (const auto& [tenant, sha256] : grants) {
    if (absl::Status ok = GrantBlobLocked(tenant, sha256); !ok.ok()) return ok;
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::Error(const char* what) const {
  return absl::InternalError(absl::StrCat("database: ", what, ": ", sqlite3_errmsg(db_)));
}

absl::Status SqliteStore::Commit(const StoreBatch& batch) {
  std::lock_guard lock(mutex_);
  if (Statement(db_, statements_, "BEGIN").Step() != SQLITE_DONE) {
    return Error("starting a transaction");
  }
  absl::Status written = WriteBatch(batch, *this);
  if (written.ok() && Statement(db_, statements_, "COMMIT").Step() != SQLITE_DONE) {
    written = Error("committing a transaction");
  }
  if (!written.ok()) Exec("ROLLBACK").IgnoreError();  // nothing of the batch stays
  return written;
}

absl::Status SqliteStore::PutJob(int64_t number, const v1::Job& job) {
  std::lock_guard lock(mutex_);
  return PutJobLocked(number, job);
}

absl::Status SqliteStore::PutJobLocked(int64_t number, const v1::Job& job) {
  // An update of a known job sets only the columns that change, so that SQLite leaves the
  // indexes on id and request id alone: a REPLACE rewrote their pages (WAL frames) every time.
  Statement stmt(db_, statements_,
                 "INSERT INTO jobs (number, id, tenant, request_id, state, board_type, record) "
                 "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (number) DO UPDATE SET "
                 "state = excluded.state, record = excluded.record");
  stmt.Bind(1, number).Bind(2, job.id()).Bind(3, job.tenant()).Bind(4, job.request_id());
  stmt.Bind(5, static_cast<int64_t>(job.state())).Bind(6, job.spec().selector().board_type());
  stmt.BindBlob(7, job.SerializeAsString());
  if (stmt.Step() == SQLITE_DONE) return absl::OkStatus();
  absl::Status failed = Error("storing a job");
  // SQLite names a unique index's columns, not the index: only jobs_by_request_unique has these.
  if (sqlite3_extended_errcode(db_) == SQLITE_CONSTRAINT_UNIQUE &&
      absl::StrContains(sqlite3_errmsg(db_), "jobs.tenant, jobs.request_id")) {
    return absl::AlreadyExistsError(failed.message());
  }
  return failed;
}

absl::StatusOr<std::optional<v1::Job>> SqliteStore::GetJob(const std::string& id) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_, "SELECT record FROM jobs WHERE id = ?");
  stmt.Bind(1, id);
  int rc = stmt.Step();
  if (rc == SQLITE_DONE) return std::optional<v1::Job>();
  if (rc != SQLITE_ROW) return Error("reading a job");
  auto job = ParseRecord<v1::Job>(stmt.Blob(0), "job");
  if (!job.ok()) return job.status();
  return std::optional<v1::Job>(*std::move(job));
}

absl::StatusOr<std::optional<v1::Job>> SqliteStore::FindJobByRequestId(
    const std::string& tenant, const std::string& request_id) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_, "SELECT record FROM jobs WHERE tenant = ? AND request_id = ?");
  stmt.Bind(1, tenant).Bind(2, request_id);
  int rc = stmt.Step();
  if (rc == SQLITE_DONE) return std::optional<v1::Job>();
  if (rc != SQLITE_ROW) return Error("looking up a request id");
  auto job = ParseRecord<v1::Job>(stmt.Blob(0), "job");
  if (!job.ok()) return job.status();
  return std::optional<v1::Job>(*std::move(job));
}

absl::StatusOr<std::vector<v1::Job>> SqliteStore::LoadUnfinishedJobs() {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_, "SELECT record FROM jobs WHERE state != ? ORDER BY number");
  stmt.Bind(1, static_cast<int64_t>(v1::JOB_STATE_DONE));
  std::vector<v1::Job> jobs;
  int rc;
  while ((rc = stmt.Step()) == SQLITE_ROW) {
    auto job = ParseRecord<v1::Job>(stmt.Blob(0), "job");
    if (!job.ok()) return job.status();
    jobs.push_back(*std::move(job));
  }
  if (rc != SQLITE_DONE) return Error("loading unfinished jobs");
  return jobs;
}

absl::StatusOr<JobPage> SqliteStore::ListJobs(const JobFilter& filter, int64_t before,
                                              int page_size) {
  std::lock_guard lock(mutex_);
  // States, results and labels are filtered here rather than in SQL: the page is small and the
  // record has to be parsed anyway.
  Statement stmt(db_, statements_,
                 "SELECT number, record FROM jobs WHERE number < ? AND (? = '' OR tenant = ?) "
                 "AND (? = '' OR board_type = ?) ORDER BY number DESC");
  stmt.Bind(1, before > 0 ? before : INT64_MAX).Bind(2, filter.tenant).Bind(3, filter.tenant);
  stmt.Bind(4, filter.board_type).Bind(5, filter.board_type);
  JobPage page;
  int rc;
  while ((rc = stmt.Step()) == SQLITE_ROW) {
    auto job = ParseRecord<v1::Job>(stmt.Blob(1), "job");
    if (!job.ok()) return job.status();
    if (!MatchesParsedFilter(*job, filter)) continue;
    if (static_cast<int>(page.jobs.size()) == page_size) {
      page.next_before = page.jobs.empty() ? 0 : stmt.Int(0) + 1;
      break;
    }
    page.jobs.push_back(*std::move(job));
  }
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return Error("listing jobs");
  return page;
}

absl::StatusOr<int64_t> SqliteStore::MaxJobNumber() {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_, "SELECT COALESCE(MAX(number), 0) FROM jobs");
  if (stmt.Step() != SQLITE_ROW) return Error("reading the job counter");
  return stmt.Int(0);
}

absl::StatusOr<std::vector<std::pair<int64_t, v1::Job>>> SqliteStore::JobsAfter(int64_t after,
                                                                                int limit) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_,
                 "SELECT number, record FROM jobs WHERE number > ? ORDER BY number LIMIT ?");
  stmt.Bind(1, after).Bind(2, limit);
  std::vector<std::pair<int64_t, v1::Job>> jobs;
  int rc;
  while ((rc = stmt.Step()) == SQLITE_ROW) {
    auto job = ParseRecord<v1::Job>(stmt.Blob(1), "job");
    if (!job.ok()) return job.status();
    jobs.emplace_back(stmt.Int(0), *std::move(job));
  }
  if (rc != SQLITE_DONE) return Error("reading jobs");
  return jobs;
}

absl::StatusOr<int64_t> SqliteStore::DeleteFinishedJobs(int64_t ended_before_ms) {
  return DeleteInPages([&](int64_t after) { return DeleteFinishedPage(ended_before_ms, after); });
}

absl::StatusOr<RetentionPage> SqliteStore::DeleteFinishedPage(int64_t ended_before_ms,
                                                              int64_t after) {
  std::lock_guard lock(mutex_);
  RetentionPage page(ended_before_ms, after);
  {
    Statement stmt(db_, statements_,
                   "SELECT number, record FROM jobs WHERE state = ? AND number > ? "
                   "ORDER BY number LIMIT ?");
    stmt.Bind(1, static_cast<int64_t>(v1::JOB_STATE_DONE)).Bind(2, after);
    stmt.Bind(3, kRetentionPageJobs);
    int rc = SQLITE_DONE;
    bool go_on = true;
    while (go_on && (rc = stmt.Step()) == SQLITE_ROW) {
      absl::StatusOr<bool> scanned = page.Scan(stmt.Int(0), stmt.Blob(1));
      if (!scanned.ok()) return scanned.status();
      go_on = *scanned;
    }
    if (go_on && rc != SQLITE_DONE) return Error("reading finished jobs");
  }
  const std::vector<std::string>& expired = page.expired();
  if (expired.empty()) return page;
  if (Statement(db_, statements_, "BEGIN").Step() != SQLITE_DONE) {
    return Error("starting a transaction");
  }
  absl::Status deleted = DeleteJobsLocked(expired);
  if (deleted.ok() && Statement(db_, statements_, "COMMIT").Step() != SQLITE_DONE) {
    deleted = Error("committing a transaction");
  }
  if (!deleted.ok()) {
    Exec("ROLLBACK").IgnoreError();
    return deleted;
  }
  return page;
}

absl::Status SqliteStore::DeleteJobsLocked(const std::vector<std::string>& ids) {
  for (const std::string& id : ids) {
    Statement events(db_, statements_, "DELETE FROM events WHERE job_id = ?");
    events.Bind(1, id);
    if (events.Step() != SQLITE_DONE) return Error("deleting job events");
    Statement job(db_, statements_, "DELETE FROM jobs WHERE id = ?");
    job.Bind(1, id);
    if (job.Step() != SQLITE_DONE) return Error("deleting a job");
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::AppendEvent(const v1::JobEvent& event) {
  std::lock_guard lock(mutex_);
  return AppendEventLocked(event);
}

absl::Status SqliteStore::AppendEventLocked(const v1::JobEvent& event) {
  Statement stmt(db_, statements_,
                 "INSERT OR REPLACE INTO events (job_id, seq, record) VALUES (?, ?, ?)");
  stmt.Bind(1, event.job_id()).Bind(2, event.seq()).BindBlob(3, event.SerializeAsString());
  if (stmt.Step() != SQLITE_DONE) return Error("storing a job event");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::JobEvent>> SqliteStore::Events(const std::string& job_id,
                                                              int64_t after_seq) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_,
                 "SELECT record FROM events WHERE job_id = ? AND seq > ? ORDER BY seq");
  stmt.Bind(1, job_id).Bind(2, after_seq);
  std::vector<v1::JobEvent> events;
  int rc;
  while ((rc = stmt.Step()) == SQLITE_ROW) {
    auto event = ParseRecord<v1::JobEvent>(stmt.Blob(0), "job event");
    if (!event.ok()) return event.status();
    events.push_back(*std::move(event));
  }
  if (rc != SQLITE_DONE) return Error("reading job events");
  return events;
}

absl::Status SqliteStore::PutBoard(const v1::Board& board) {
  std::lock_guard lock(mutex_);
  return PutBoardLocked(board);
}

absl::Status SqliteStore::PutBoardLocked(const v1::Board& board) {
  Statement stmt(db_, statements_, "INSERT OR REPLACE INTO boards (id, record) VALUES (?, ?)");
  stmt.Bind(1, board.id()).BindBlob(2, board.SerializeAsString());
  if (stmt.Step() != SQLITE_DONE) return Error("storing a board");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::Board>> SqliteStore::LoadBoards() {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_, "SELECT record FROM boards ORDER BY id");
  std::vector<v1::Board> boards;
  int rc;
  while ((rc = stmt.Step()) == SQLITE_ROW) {
    auto board = ParseRecord<v1::Board>(stmt.Blob(0), "board");
    if (!board.ok()) return board.status();
    boards.push_back(*std::move(board));
  }
  if (rc != SQLITE_DONE) return Error("loading boards");
  return boards;
}

absl::Status SqliteStore::PutCompile(const std::string& key, const CompileRecord& record) {
  const std::string json = CompileRecordToJson(record);
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_,
                 "INSERT OR REPLACE INTO compile_cache (key, record) VALUES (?, ?)");
  stmt.Bind(1, key).Bind(2, json);
  if (stmt.Step() != SQLITE_DONE) return Error("storing a compile cache entry");
  return absl::OkStatus();
}

absl::StatusOr<std::optional<CompileRecord>> SqliteStore::GetCompile(const std::string& key) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_, "SELECT record FROM compile_cache WHERE key = ?");
  stmt.Bind(1, key);
  int rc = stmt.Step();
  if (rc == SQLITE_DONE) return std::optional<CompileRecord>();
  if (rc != SQLITE_ROW) return Error("reading the compile cache");
  auto record = CompileRecordFromJson(stmt.Blob(0));
  if (!record.ok()) return record.status();
  return std::optional<CompileRecord>(*std::move(record));
}

absl::Status SqliteStore::PutBlob(const std::string& sha256, std::string_view bytes) {
  std::lock_guard lock(mutex_);
  // Storing a blob again counts as a use.
  Statement stmt(db_, statements_,
                 "INSERT INTO small_blobs (sha256, data, used_ms) VALUES (?, ?, ?) "
                 "ON CONFLICT (sha256) DO UPDATE SET used_ms = excluded.used_ms");
  stmt.Bind(1, sha256).BindBlob(2, bytes).Bind(3, NowMs());
  if (stmt.Step() != SQLITE_DONE) return Error("storing a blob");
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::string>> SqliteStore::GetBlob(const std::string& sha256) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_, "SELECT data FROM small_blobs WHERE sha256 = ?");
  stmt.Bind(1, sha256);
  int rc = stmt.Step();
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return Error("reading a blob");
  return std::optional<std::string>(stmt.Blob(0));
}

absl::StatusOr<int64_t> SqliteStore::BlobSize(const std::string& sha256) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_, "SELECT length(data) FROM small_blobs WHERE sha256 = ?");
  stmt.Bind(1, sha256);
  int rc = stmt.Step();
  if (rc == SQLITE_DONE) return -1;
  if (rc != SQLITE_ROW) return Error("looking up a blob");
  return stmt.Int(0);
}

absl::StatusOr<int64_t> SqliteStore::BlobBytes() {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_, "SELECT COALESCE(SUM(length(data)), 0) FROM small_blobs");
  if (stmt.Step() != SQLITE_ROW) return Error("summing the blobs");
  return stmt.Int(0);
}

absl::StatusOr<int64_t> SqliteStore::TouchBlob(const std::string& sha256, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  {
    // A blob used recently is left alone: no write for every submit of a model.
    Statement stmt(db_, statements_,
                   "UPDATE small_blobs SET used_ms = ? WHERE sha256 = ? AND used_ms < ?");
    stmt.Bind(1, now_ms).Bind(2, sha256).Bind(3, now_ms - kTouchPrecisionMs);
    if (stmt.Step() != SQLITE_DONE) return Error("marking a blob used");
  }
  Statement stmt(db_, statements_, "SELECT used_ms FROM small_blobs WHERE sha256 = ?");
  stmt.Bind(1, sha256);
  const int step = stmt.Step();
  if (step == SQLITE_DONE) return -1;
  if (step != SQLITE_ROW) return Error("reading a blob's use");
  return stmt.Int(0);
}

absl::StatusOr<std::vector<std::string>> SqliteStore::BlobsUnusedSince(int64_t ms) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_, "SELECT sha256 FROM small_blobs WHERE used_ms < ?");
  stmt.Bind(1, ms);
  std::vector<std::string> unused;
  int rc;
  while ((rc = stmt.Step()) == SQLITE_ROW) unused.push_back(stmt.Blob(0));
  if (rc != SQLITE_DONE) return Error("listing unused blobs");
  return unused;
}

absl::StatusOr<int64_t> SqliteStore::DeleteBlobUnusedSince(const std::string& sha256, int64_t ms) {
  std::lock_guard lock(mutex_);
  Statement size(db_, statements_,
                 "SELECT length(data) FROM small_blobs WHERE sha256 = ? AND used_ms < ?");
  size.Bind(1, sha256).Bind(2, ms);
  int rc = size.Step();
  if (rc == SQLITE_DONE) return -1;
  if (rc != SQLITE_ROW) return Error("looking up a blob");
  const int64_t bytes = size.Int(0);
  Statement remove(db_, statements_, "DELETE FROM small_blobs WHERE sha256 = ? AND used_ms < ?");
  remove.Bind(1, sha256).Bind(2, ms);
  if (remove.Step() != SQLITE_DONE) return Error("deleting a blob");
  return bytes;
}

absl::Status SqliteStore::GrantBlob(const std::string& tenant, const std::string& sha256) {
  std::lock_guard lock(mutex_);
  return GrantBlobLocked(tenant, sha256);
}

absl::Status SqliteStore::GrantBlobLocked(const std::string& tenant, const std::string& sha256) {
  Statement stmt(db_, statements_,
                 "INSERT OR IGNORE INTO blob_grants (sha256, tenant) VALUES (?, ?)");
  stmt.Bind(1, sha256).Bind(2, tenant);
  if (stmt.Step() != SQLITE_DONE) return Error("granting a blob");
  return absl::OkStatus();
}

absl::StatusOr<bool> SqliteStore::HasBlobGrant(const std::string& tenant,
                                               const std::string& sha256) {
  std::lock_guard lock(mutex_);
  Statement stmt(db_, statements_, "SELECT 1 FROM blob_grants WHERE sha256 = ? AND tenant = ?");
  stmt.Bind(1, sha256).Bind(2, tenant);
  int rc = stmt.Step();
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) return Error("looking up a blob grant");
  return false;
}

absl::Status SqliteStore::DeleteBlobGrants(const std::vector<std::string>& sha256s) {
  std::lock_guard lock(mutex_);
  for (const std::string& sha256 : sha256s) {
    Statement stmt(db_, statements_, "DELETE FROM blob_grants WHERE sha256 = ?");
    stmt.Bind(1, sha256);
    if (stmt.Step() != SQLITE_DONE) return Error("deleting blob grants");
  }
  return absl::OkStatus();
}

}  // namespace boardlab::server
