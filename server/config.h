#pragma once

// boardlab-server's configuration: a YAML file (docs/server.md lists every key), with command-line
// flags overriding it.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace boardlab::server {

enum class Role { kClient, kAgent, kAdmin };

/// "client", "agent" or "admin", as in the config file's tokens.
const char* RoleName(Role role);

/// A bearer token, stored as the SHA-256 of the token so that the config file holds no secret.
struct TokenConfig {
  std::string sha256;
  std::string tenant;
  Role role = Role::kClient;
};

/// The golden model a quarantined board must pass before it serves jobs again.
struct HealthCheckConfig {
  std::string model;     // .tflite path; empty = quarantined boards wait for an admin
  std::string input;     // raw input bytes
  std::string expected;  // raw expected output bytes
};

/// How long finished jobs and unused blobs are kept; a sweep deletes what has expired.
struct RetentionConfig {
  int64_t finished_jobs_seconds = 30 * 86400;  // after a job's end; 0 = keep jobs forever
  int64_t unused_blobs_seconds = 86400;  // blobs no kept job refers to; 0 = keep blobs forever
  int64_t sweep_interval_seconds = 3600;
};

struct ServerConfig {
  std::string listen = "127.0.0.1:7400";
  std::string metrics_listen = "127.0.0.1:9400";  // empty = no /metrics endpoint
  std::string http_listen = "127.0.0.1:9480";     // the web pages (HTTPS with tls); empty = off
  std::string data_dir = "boardlab-data";         // database + blobs
  // Where the state is kept: empty (or "sqlite") = SQLite in data_dir; a postgres:// or
  // postgresql:// URI = that PostgreSQL database (blobs stay in data_dir). The URI holds no
  // password: it comes from store_password_file, or from libpq's PGPASSWORD / PGPASSFILE.
  std::string store;
  std::string store_password_file;
  int compile_workers = 2;
  int heartbeat_interval_ms = 1000;
  int missed_heartbeats = 3;  // a lease dies after this many missed heartbeats
  // Replicas (a PostgreSQL store): a replica silent this long is dead and its work is released.
  int replica_lease_ms = 10000;
  int retry_budget = 2;      // infrastructure retries per job
  int quarantine_after = 3;  // consecutive infrastructure failures of a board
  int default_queue_timeout_seconds = 3600;
  int default_run_timeout_seconds = 300;
  int64_t max_blob_bytes = int64_t{512} << 20;
  int64_t max_unfinished_jobs_per_tenant = 10000;  // 0 = no limit
  std::string boardlab_run;  // runs reference outputs; empty = the build's own
  std::string tls_cert;      // TLS server certificate + key; empty = plaintext
  std::string tls_key;
  std::string tls_client_ca;  // when set: certificates verified when presented, agents need one
  std::vector<TokenConfig> tokens;  // empty = open server, every caller is tenant "default"
  HealthCheckConfig health_check;
  RetentionConfig retention;
};

/// Reads a YAML config file. Errors: InvalidArgument naming the file and the bad key.
absl::StatusOr<ServerConfig> LoadServerConfig(const std::string& path);

/// Whether `config.store` names a PostgreSQL database.
bool UsesPostgres(const ServerConfig& config);

/// Checks ranges and combinations. Errors: InvalidArgument naming the key.
absl::Status ValidateServerConfig(const ServerConfig& config);

}  // namespace boardlab::server
