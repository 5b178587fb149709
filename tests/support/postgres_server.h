#pragma once

// A throwaway PostgreSQL server for tests, from Debian's postgresql package: initdb in a fresh
// temporary directory, listening only on a Unix socket in that directory, password login
// (scram-sha-256) of user "boardlab". initdb refuses to run as root, so a test running as root
// runs the server as "nobody" (runuser). Stopped and removed by the destructor.
//
// Usage:
//   absl::StatusOr<PostgresServer*> server = PostgresServer::Shared();
//   if (absl::IsFailedPrecondition(server.status())) GTEST_SKIP() << server.status().message();
//   ASSERT_TRUE(server.ok()) << server.status();  // installed, but it did not start
//   auto uri = (*server)->CreateDatabase();  // postgresql:///... (no password in it)
//   ... store: *uri, store_password_file: server->password_file()

#include <libpq-fe.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace boardlab::testing {

class PostgresServer {
 public:
  /// The server of this test process: started on first use (one per test binary run, not per
  /// test) and stopped at exit. Errors: FailedPrecondition when it cannot run here (postgresql
  /// not installed, no unprivileged user to run it as): tests skip; Unavailable when initdb or
  /// the start failed (with their output): tests fail.
  static absl::StatusOr<PostgresServer*> Shared();
  /// A server of its own, started with `settings` added to its command line (e.g. "-c
  /// shared_preload_libraries=pg_stat_statements"). Errors: as for Shared.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(const std::string& settings = "");
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  /// Creates an empty database; its postgresql:// URI, without the password.
  absl::StatusOr<std::string> CreateDatabase();
  /// Runs `sql` on the database of `uri` (as the owner, with the password).
  absl::Status Execute(const std::string& uri, const std::string& sql);

  /// A connection of its own, for a test that holds a transaction open across calls (as another
  /// replica in the middle of a commit would).
  class Session {
   public:
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
    absl::Status Execute(const std::string& sql);
    /// The first column of the first row, as text ("" when there is no row).
    absl::StatusOr<std::string> Query(const std::string& sql);
    /// Every row, each column as text (NULL as "").
    absl::StatusOr<std::vector<std::vector<std::string>>> QueryRows(const std::string& sql);

   private:
    friend class PostgresServer;
    explicit Session(PGconn* connection) : connection_(connection) {}
    PGconn* connection_;
  };
  /// A session on the database of `uri`.
  absl::StatusOr<std::unique_ptr<Session>> Connect(const std::string& uri);

  const std::string& password() const { return password_; }
  /// A file holding the password (for store_password_file).
  const std::string& password_file() const { return password_file_; }
  /// The directory of the server's Unix socket.
  const std::string& socket_dir() const { return dir_; }

 private:
  PostgresServer() = default;
  absl::Status Init(const std::string& settings);
  absl::Status RunAsServerUser(const std::string& command, const std::string& log);

  std::string bin_dir_;
  std::string dir_;
  std::string run_as_;  // "runuser -u nobody -- " when running as root, else empty
  std::string password_;
  std::string password_file_;
  bool started_ = false;
  std::mutex mutex_;
  int databases_ = 0;
};

}  // namespace boardlab::testing
