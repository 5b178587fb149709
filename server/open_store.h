#pragma once

// The store a server configuration names: SQLite in the data directory (the default) or a
// PostgreSQL database (docs/server.md, "State store").

#include "server/config.h"
#include "server/store.h"

namespace boardlab::server {

/// Opens (creating and migrating where needed) the configured store. Errors: Unavailable when
/// the database cannot be opened or reached; InvalidArgument when the password file cannot be
/// read.
absl::StatusOr<StorePtr> OpenStore(const ServerConfig& config);

/// The password in a password file: its first line, without the line end.
absl::StatusOr<std::string> ReadPasswordFile(const std::string& path);

}  // namespace boardlab::server
