#pragma once

#include <sqlite3.h>

#include <map>
#include <mutex>
#include <string>

#include "server/store.h"
#include "server/store_records.h"

namespace boardlab::server {

/// Store in one SQLite database file (WAL journal: a committed write survives a killed process).
/// Rows keep the serialized protobuf next to the columns that queries filter on. Thread-safe:
/// one connection behind a mutex; statements are prepared once.
class SqliteStore : public Store, private BatchWriter {
 public:
  /// Opens or creates the database. Errors: Unavailable when the file cannot be opened.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path);
  ~SqliteStore() override;

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

 private:
  explicit SqliteStore(sqlite3* db) : db_(db) {}
  absl::Status Exec(const char* sql);
  /// Brings a database written by an older server up to the current schema (PRAGMA
  /// user_version); refuses one written by a newer server.
  absl::Status Migrate();
  absl::StatusOr<int64_t> SchemaVersion();
  absl::Status MigrateToBlobUse();
  absl::Status MigrateToBlobGrants();
  /// Runs the statements of `sql` in one transaction: all or none.
  absl::Status MigrateInTransaction(const char* sql);
  absl::Status GrantJobBlobsLocked();
  absl::Status GrantBlobLocked(const std::string& tenant, const std::string& sha256) override;
  /// One page of DeleteFinishedJobs (server/store_records.h DeleteInPages) from job number
  /// `after`, its expired jobs deleted in one transaction.
  absl::StatusOr<RetentionPage> DeleteFinishedPage(int64_t ended_before_ms, int64_t after);
  absl::Status Error(const char* what) const;
  // The writes, under mutex_.
  absl::Status PutJobLocked(int64_t number, const v1::Job& job) override;
  absl::Status AppendEventLocked(const v1::JobEvent& event) override;
  absl::Status PutBoardLocked(const v1::Board& board) override;
  absl::Status DeleteJobsLocked(const std::vector<std::string>& ids);

  std::mutex mutex_;
  sqlite3* db_;
  std::map<std::string, sqlite3_stmt*> statements_;  // by SQL text; see Statement
};

}  // namespace boardlab::server
