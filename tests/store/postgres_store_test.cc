// server/postgres_store.h beyond the conformance suite: logins, concurrent migrations, lost
// connections; and the password file of server/open_store.h.

#include "server/postgres_store.h"

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "gtest/gtest.h"
#include "server/open_store.h"
#include "tests/support/postgres_server.h"

namespace boardlab::server {
namespace {

namespace fs = std::filesystem;

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<testing::PostgresServer*> shared = testing::PostgresServer::Shared();
    if (absl::IsFailedPrecondition(shared.status())) {
      GTEST_SKIP() << "PostgreSQL store tests skipped: " << shared.status().message();
    }
    ASSERT_TRUE(shared.ok()) << shared.status();  // installed, but it did not start
    server_ = *shared;
    auto uri = server_->CreateDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status();
    uri_ = *uri;
  }

  // The database name in uri_ (postgresql:///NAME?host=...).
  std::string DatabaseName() const {
    const size_t start = std::string("postgresql:///").size();
    return uri_.substr(start, uri_.find('?') - start);
  }

  testing::PostgresServer* server_ = nullptr;
  std::string uri_;
};

TEST_F(PostgresStoreTest, AWrongPasswordIsRefusedWithTheServersReason) {
  auto store = PostgresStore::Open(uri_, "not-the-password");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find("password authentication failed"), std::string::npos)
      << store.status();
}

TEST_F(PostgresStoreTest, NoServerBehindTheAddressIsUnavailable) {
  const std::string nowhere =
      "postgresql:///x?host=" + server_->socket_dir() + "/none&user=boardlab";
  auto store = PostgresStore::Open(nowhere, server_->password());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find("connecting to PostgreSQL"), std::string::npos)
      << store.status();
}

// Replicas starting at once: the advisory lock makes the second wait for the first's migration.
TEST_F(PostgresStoreTest, ServersOpeningTogetherMigrateOnce) {
  constexpr int kServers = 4;
  std::vector<absl::Status> opened(kServers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kServers; ++i) {
    threads.emplace_back(
        [&, i] { opened[i] = PostgresStore::Open(uri_, server_->password()).status(); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& status : opened) EXPECT_TRUE(status.ok()) << status;
  // One row per migration: none applied twice.
  EXPECT_TRUE(server_
                  ->Execute(uri_, "DO $$ BEGIN IF (SELECT count(*) FROM schema_version) <> " +
                                      std::to_string(PostgresStore::LatestSchemaVersion()) +
                                      " THEN RAISE EXCEPTION 'migrated more than once'; END IF; "
                                      "END $$")
                  .ok());
}

TEST_F(PostgresStoreTest, ALostConnectionIsReestablishedForTheNextCall) {
  auto store = PostgresStore::Open(uri_, server_->password());
  ASSERT_TRUE(store.ok()) << store.status();
  v1::Job job;
  job.set_id("j1");
  ASSERT_TRUE((*store)->PutJob(1, job).ok());
  // Waits (up to 5 s) until the store's server process has gone.
  ASSERT_TRUE(server_
                  ->Execute(uri_,
                            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE "
                            "application_name = 'boardlab-server' AND datname = '" +
                                DatabaseName() + "'")
                  .ok());
  // The call that finds the connection dead fails ...
  EXPECT_FALSE((*store)->GetJob("j1").ok());
  // ... and the next one works on a new connection, with statements prepared again.
  auto read = (*store)->GetJob("j1");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->has_value());
  EXPECT_FALSE((*store)->PutJob(2, job).ok());  // the id is still taken
}

// Calls on different threads run side by side, each on a connection of the store's pool: one
// waiting for a lock another session holds does not hold up the others.
TEST_F(PostgresStoreTest, ACallWaitingOnTheDatabaseDoesNotHoldUpOthers) {
  auto store = PostgresStore::Open(uri_, server_->password());
  ASSERT_TRUE(store.ok()) << store.status();
  v1::Job job;
  job.set_id("j1");
  ASSERT_TRUE((*store)->PutJob(1, job).ok());
  auto locker = server_->Connect(uri_);
  ASSERT_TRUE(locker.ok()) << locker.status();
  ASSERT_TRUE((*locker)->Execute("BEGIN").ok());
  ASSERT_TRUE((*locker)->Execute("LOCK TABLE compile_cache IN ACCESS EXCLUSIVE MODE").ok());

  absl::Status stored = absl::UnknownError("not yet");
  std::thread blocked([&] { stored = (*store)->PutCompile("key", CompileRecord()); });
  auto watcher = server_->Connect(uri_);
  ASSERT_TRUE(watcher.ok()) << watcher.status();
  std::string waiting;
  for (int i = 0; i < 200 && waiting != "1"; ++i) {  // until the store's call waits (<= 20 s)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    waiting = (*watcher)
                  ->Query(
                      "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                      "AND application_name = 'boardlab-server' AND datname = '" +
                      DatabaseName() + "'")
                  .value_or("");
  }
  EXPECT_EQ(waiting, "1");
  // Answered while the other call still waits (with one connection it would wait behind it).
  auto read = std::async(std::launch::async, [&] { return (*store)->GetJob("j1"); });
  const bool answered = read.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  EXPECT_TRUE(answered);
  ASSERT_TRUE((*locker)->Execute("COMMIT").ok());
  blocked.join();
  EXPECT_TRUE(stored.ok()) << stored;
  auto job_read = read.get();
  ASSERT_TRUE(job_read.ok()) << job_read.status();
  EXPECT_TRUE(job_read->has_value());
}

TEST_F(PostgresStoreTest, OpenStoreReadsThePasswordFromTheFile) {
  ServerConfig config;
  config.store = uri_;
  config.store_password_file = server_->password_file();
  auto store = OpenStore(config);
  ASSERT_TRUE(store.ok()) << store.status();
  config.store_password_file = server_->socket_dir() + "/no-such-file";
  auto missing = OpenStore(config);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("no-such-file"), std::string::npos) << missing.status();
}

TEST_F(PostgresStoreTest, WithoutAPasswordFileLibpqTakesPGPASSWORD) {
  ServerConfig config;
  config.store = uri_;
  ASSERT_EQ(setenv("PGPASSWORD", server_->password().c_str(), 1), 0);
  auto store = OpenStore(config);
  unsetenv("PGPASSWORD");
  ASSERT_TRUE(store.ok()) << store.status();
  // And without any password the login is refused.
  auto refused = OpenStore(config);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnavailable) << refused.status();
}

TEST(PasswordFileTest, ThePasswordIsTheFirstLineAndMustNotBeEmpty) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("password_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "crlf") << "s3cret\r\nsecond line\n";
  std::ofstream(dir / "empty") << "\nsecret on line two\n";
  EXPECT_EQ(*ReadPasswordFile((dir / "crlf").string()), "s3cret");
  auto empty = ReadPasswordFile((dir / "empty").string());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("first line is empty"), std::string::npos);
  EXPECT_EQ(ReadPasswordFile((dir / "none").string()).status().code(),
            absl::StatusCode::kInvalidArgument);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace boardlab::server
