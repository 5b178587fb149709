// server/sqlite_store.h: migrations of databases written by older servers (what every store
// does is in store_conformance_test.cc).

#include "server/sqlite_store.h"

#include <sqlite3.h>

#include <filesystem>

#include "gtest/gtest.h"

namespace boardlab::server {
namespace {

namespace fs = std::filesystem;

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("sqlite_store_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string DbPath() const { return (dir_ / "boardlab.db").string(); }

  // Runs SQL on the database file directly, as an older or newer server would have left it.
  void Sql(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(DbPath().c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
  }

  fs::path dir_;
};

// A database from before blobs were scoped to tenants: each tenant gets the blobs its jobs name,
// once, and a reopened database is not migrated again.
TEST_F(SqliteStoreTest, AnOlderDatabaseGrantsEachTenantTheBlobsOfItsJobs) {
  {
    auto store = SqliteStore::Open(DbPath());
    ASSERT_TRUE(store.ok()) << store.status();
    v1::Job job;
    job.set_id("j1");
    job.set_tenant("ci");
    job.mutable_spec()->mutable_model()->set_sha256("model");
    job.mutable_files()->add_outputs()->set_sha256("output");
    ASSERT_TRUE((*store)->PutJob(1, job).ok());
  }
  Sql("DROP TABLE blob_grants; PRAGMA user_version = 1;");
  auto store = SqliteStore::Open(DbPath());
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_TRUE(*(*store)->HasBlobGrant("ci", "model"));
  EXPECT_TRUE(*(*store)->HasBlobGrant("ci", "output"));
  EXPECT_FALSE(*(*store)->HasBlobGrant("dev", "model"));
  // Migrated once: a grant deleted afterwards stays deleted across a restart.
  ASSERT_TRUE((*store)->DeleteBlobGrants({"model"}).ok());
  store->reset();
  auto again = SqliteStore::Open(DbPath());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(*(*again)->HasBlobGrant("ci", "model"));
}

}  // namespace
}  // namespace boardlab::server
