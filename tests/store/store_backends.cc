#include "tests/store/store_backends.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/open_store.h"
#include "server/sqlite_store.h"
#include "tests/support/postgres_server.h"

namespace boardlab::server {
namespace {

namespace fs = std::filesystem;

class SqliteBackend : public StoreBackend {
 public:
  ~SqliteBackend() override {
    std::error_code error;
    if (!dir_.empty()) fs::remove_all(dir_, error);
  }
  std::string SkipReason() override { return ""; }
  absl::Status PrepareEmptyDatabase() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        absl::StrCat("store_", getpid(), "_", test->test_suite_name(), "_", test->name());
    std::replace(name.begin(), name.end(), '/', '_');  // parameterized names hold slashes
    dir_ = (fs::path(::testing::TempDir()) / name).string();
    std::error_code error;
    fs::remove_all(dir_, error);
    if (!fs::create_directories(dir_, error)) {
      return absl::InternalError(absl::StrCat("creating ", dir_, ": ", error.message()));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<StorePtr> Open() override {
    auto store = SqliteStore::Open(dir_ + "/boardlab.db");
    if (!store.ok()) return store.status();
    return StorePtr(*std::move(store));
  }
  absl::Status Sql(const std::string& sql) override {
    sqlite3* db = nullptr;
    absl::Status result = absl::OkStatus();
    char* error = nullptr;
    if (sqlite3_open((dir_ + "/boardlab.db").c_str(), &db) != SQLITE_OK ||
        sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      result = absl::InternalError(error ? error : sqlite3_errmsg(db));
    }
    sqlite3_free(error);
    sqlite3_close(db);
    return result;
  }
  std::string SchemaVersionSql(int64_t version) const override {
    return absl::StrCat("PRAGMA user_version = ", version);
  }

 private:
  std::string dir_;
};

// Databases of one shared server (one per test binary run), a fresh database per test, opened
// the way boardlab-server opens them: OpenStore with the URI and the password file.
class PostgresBackend : public StoreBackend {
 public:
  std::string SkipReason() override {
    shared_ = testing::PostgresServer::Shared();
    if (!absl::IsFailedPrecondition(shared_.status())) return "";
    return absl::StrCat("PostgreSQL store tests skipped: ", shared_.status().message());
  }
  absl::Status PrepareEmptyDatabase() override {
    if (!shared_.ok()) return shared_.status();  // installed, but it did not start
    server_ = *shared_;
    auto uri = server_->CreateDatabase();
    if (!uri.ok()) return uri.status();
    uri_ = *uri;
    return absl::OkStatus();
  }
  absl::StatusOr<StorePtr> Open() override {
    ServerConfig config;
    config.store = uri_;
    config.store_password_file = server_->password_file();
    return OpenStore(config);
  }
  absl::Status Sql(const std::string& sql) override { return server_->Execute(uri_, sql); }
  std::string SchemaVersionSql(int64_t version) const override {
    return absl::StrCat("DELETE FROM schema_version WHERE version > ", version,
                        "; INSERT INTO schema_version (version, applied_ms) VALUES (", version,
                        ", 0) ON CONFLICT DO NOTHING");
  }
  std::string PostgresUri() const override { return uri_; }

 private:
  absl::StatusOr<testing::PostgresServer*> shared_ = absl::UnknownError("not started");
  testing::PostgresServer* server_ = nullptr;
  std::string uri_;
};

}  // namespace

std::unique_ptr<StoreBackend> MakeStoreBackend(const std::string& name) {
  if (name == "postgres") return std::make_unique<PostgresBackend>();
  return std::make_unique<SqliteBackend>();
}

}  // namespace boardlab::server
