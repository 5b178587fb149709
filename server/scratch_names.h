#pragma once

#include <string>

namespace boardlab::server {

/// "<host>-<pid>-<random hex>", new on every call. Replicas share one data directory, and in
/// containers their pids are alike (each container's server is often pid 1), so a pid alone
/// cannot name a replica's temporary files or a replica itself (its id in the database).
std::string UniqueScratchName();

}  // namespace boardlab::server
