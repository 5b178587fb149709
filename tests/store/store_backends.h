#pragma once

// The stores the conformance suite (store_conformance_test.cc) runs against: each gives a test an
// empty database, opens it (again, as a restarted server would) and runs SQL on it directly, as
// another program (an older or newer server) would.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/store.h"

namespace boardlab::server {

class StoreBackend {
 public:
  virtual ~StoreBackend() = default;
  /// Why this store cannot be tested here (e.g. PostgreSQL is not installed); empty when it can.
  virtual std::string SkipReason() = 0;
  /// Prepares an empty database for one test.
  virtual absl::Status PrepareEmptyDatabase() = 0;
  /// Opens the test's database (creating and migrating it on first use).
  virtual absl::StatusOr<StorePtr> Open() = 0;
  /// Runs SQL on the test's database.
  virtual absl::Status Sql(const std::string& sql) = 0;
  /// SQL that marks the database as migrated by a server with schema version `version` (newer
  /// or older than this server's: the migrations above it run again at the next open).
  virtual std::string SchemaVersionSql(int64_t version) const = 0;
  /// The test database's URI when it is PostgreSQL's (for a session of the test's own,
  /// tests/support/postgres_server.h); empty otherwise.
  virtual std::string PostgresUri() const { return ""; }
};

/// "sqlite" or "postgres".
std::unique_ptr<StoreBackend> MakeStoreBackend(const std::string& name);

}  // namespace boardlab::server
