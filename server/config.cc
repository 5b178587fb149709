#include "server/config.h"

#include <libpq-fe.h>
#include <yaml-cpp/yaml.h>

#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace boardlab::server {
namespace {

template <typename T>
void ReadKey(const YAML::Node& node, const char* key, T& value) {
  if (node[key]) value = node[key].as<T>();
}

absl::StatusOr<Role> ParseRole(const std::string& role) {
  if (role == "client") return Role::kClient;
  if (role == "agent") return Role::kAgent;
  if (role == "admin") return Role::kAdmin;
  return absl::InvalidArgumentError(
      absl::StrCat("tokens: role '", role, "' is not one of client, agent, admin"));
}

absl::Status ReadTokens(const YAML::Node& node, ServerConfig& config) {
  if (!node) return absl::OkStatus();
  if (!node.IsSequence()) return absl::InvalidArgumentError("tokens must be a list");
  for (const auto& entry : node) {
    TokenConfig token;
    token.sha256 = entry["sha256"].as<std::string>("");
    token.tenant = entry["tenant"].as<std::string>("default");
    auto role = ParseRole(entry["role"].as<std::string>("client"));
    if (!role.ok()) return role.status();
    token.role = *role;
    config.tokens.push_back(token);
  }
  return absl::OkStatus();
}

// InvalidArgument naming the first key of `node` (a mapping; `section` names it, "" at the top)
// that is not in `known`.
absl::Status CheckKeys(const YAML::Node& node, const std::string& section,
                       std::initializer_list<const char*> known) {
  if (!node.IsMap()) {
    return absl::InvalidArgumentError(section.empty()
                                          ? "the file is not a YAML mapping"
                                          : absl::StrCat(section, " must be a mapping"));
  }
  for (const auto& item : node) {
    const std::string key = item.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown key '", section.empty() ? "" : section + ".", key, "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status ReadConfig(const YAML::Node& root, ServerConfig& config) {
  absl::Status known = CheckKeys(root, "",
                                 {"listen",
                                  "metrics_listen",
                                  "http_listen",
                                  "data_dir",
                                  "store",
                                  "store_password_file",
                                  "compile_workers",
                                  "heartbeat_interval_ms",
                                  "missed_heartbeats",
                                  "replica_lease_ms",
                                  "retry_budget",
                                  "quarantine_after",
                                  "default_queue_timeout_seconds",
                                  "default_run_timeout_seconds",
                                  "max_blob_bytes",
                                  "max_unfinished_jobs_per_tenant",
                                  "boardlab_run",
                                  "tls",
                                  "tokens",
                                  "health_check",
                                  "retention"});
  if (known.ok() && root["tls"]) {
    known = CheckKeys(root["tls"], "tls", {"cert", "key", "client_ca"});
  }
  if (known.ok() && root["health_check"]) {
    known = CheckKeys(root["health_check"], "health_check", {"model", "input", "expected"});
  }
  if (known.ok() && root["retention"]) {
    known = CheckKeys(root["retention"], "retention",
                      {"finished_jobs_seconds", "unused_blobs_seconds", "sweep_interval_seconds"});
  }
  if (!known.ok()) return known;
  ReadKey(root, "listen", config.listen);
  ReadKey(root, "metrics_listen", config.metrics_listen);
  ReadKey(root, "http_listen", config.http_listen);
  ReadKey(root, "data_dir", config.data_dir);
  ReadKey(root, "store", config.store);
  ReadKey(root, "store_password_file", config.store_password_file);
  ReadKey(root, "compile_workers", config.compile_workers);
  ReadKey(root, "heartbeat_interval_ms", config.heartbeat_interval_ms);
  ReadKey(root, "missed_heartbeats", config.missed_heartbeats);
  ReadKey(root, "replica_lease_ms", config.replica_lease_ms);
  ReadKey(root, "retry_budget", config.retry_budget);
  ReadKey(root, "quarantine_after", config.quarantine_after);
  ReadKey(root, "default_queue_timeout_seconds", config.default_queue_timeout_seconds);
  ReadKey(root, "default_run_timeout_seconds", config.default_run_timeout_seconds);
  ReadKey(root, "max_blob_bytes", config.max_blob_bytes);
  ReadKey(root, "max_unfinished_jobs_per_tenant", config.max_unfinished_jobs_per_tenant);
  ReadKey(root, "boardlab_run", config.boardlab_run);
  if (const auto tls = root["tls"]) {
    ReadKey(tls, "cert", config.tls_cert);
    ReadKey(tls, "key", config.tls_key);
    ReadKey(tls, "client_ca", config.tls_client_ca);
  }
  if (const auto health = root["health_check"]) {
    ReadKey(health, "model", config.health_check.model);
    ReadKey(health, "input", config.health_check.input);
    ReadKey(health, "expected", config.health_check.expected);
  }
  if (const auto retention = root["retention"]) {
    ReadKey(retention, "finished_jobs_seconds", config.retention.finished_jobs_seconds);
    ReadKey(retention, "unused_blobs_seconds", config.retention.unused_blobs_seconds);
    ReadKey(retention, "sweep_interval_seconds", config.retention.sweep_interval_seconds);
  }
  return ReadTokens(root["tokens"], config);
}

// The store URI must name a PostgreSQL database libpq can parse, without a password: the config
// file is not a place for secrets.
absl::Status ValidatePostgresUri(const std::string& uri) {
  char* error = nullptr;
  std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)> options(
      PQconninfoParse(uri.c_str(), &error), PQconninfoFree);
  if (options == nullptr) {
    std::string message = error ? error : "out of memory";
    PQfreemem(error);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return absl::InvalidArgumentError(absl::StrCat("invalid configuration of store: ", message));
  }
  for (const PQconninfoOption* option = options.get(); option->keyword != nullptr; ++option) {
    if (std::string(option->keyword) == "password" && option->val != nullptr &&
        *option->val != '\0') {
      return absl::InvalidArgumentError(
          "invalid configuration of store: the URI holds a password; put it in the file named by "
          "store_password_file, or in PGPASSWORD");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateStore(const ServerConfig& c) {
  if (UsesPostgres(c)) return ValidatePostgresUri(c.store);
  if (!c.store.empty() && c.store != "sqlite") {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid configuration of store: '", c.store,
                     "' is neither sqlite nor a postgres:// or postgresql:// URI"));
  }
  if (!c.store_password_file.empty()) {
    return absl::InvalidArgumentError(
        "invalid configuration of store_password_file: only a PostgreSQL store has a password");
  }
  return absl::OkStatus();
}

// host:port with a port number: the web listener's address is checked before anything starts.
absl::Status ValidateHttpListen(const std::string& listen) {
  if (listen.empty()) return absl::OkStatus();
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid configuration of http_listen='", listen,
                     "' (must be host:port, e.g. 0.0.0.0:9480, or empty to turn the pages off)"));
  }
  return absl::OkStatus();
}

}  // namespace

bool UsesPostgres(const ServerConfig& config) {
  return config.store.rfind("postgres://", 0) == 0 || config.store.rfind("postgresql://", 0) == 0;
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kAdmin:
      return "admin";
    case Role::kAgent:
      return "agent";
    case Role::kClient:
      break;
  }
  return "client";
}

absl::StatusOr<ServerConfig> LoadServerConfig(const std::string& path) {
  ServerConfig config;
  try {
    YAML::Node root = YAML::LoadFile(path);
    absl::Status read = ReadConfig(root, config);
    if (!read.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("config '", path, "': ", read.message()));
    }
  } catch (const YAML::Exception& e) {  // yaml-cpp reports errors by exception only
    return absl::InvalidArgumentError(absl::StrCat("config '", path, "': ", e.what()));
  }
  return config;
}

absl::Status ValidateServerConfig(const ServerConfig& c) {
  auto positive = [](const char* key, int64_t value) -> absl::Status {
    if (value > 0) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("invalid configuration of ", key, "=", value, " (must be > 0)"));
  };
  for (auto [key, value] : {std::pair<const char*, int64_t>{"compile_workers", c.compile_workers},
                            {"heartbeat_interval_ms", c.heartbeat_interval_ms},
                            {"missed_heartbeats", c.missed_heartbeats},
                            {"replica_lease_ms", c.replica_lease_ms},
                            {"quarantine_after", c.quarantine_after},
                            {"default_queue_timeout_seconds", c.default_queue_timeout_seconds},
                            {"default_run_timeout_seconds", c.default_run_timeout_seconds},
                            {"max_blob_bytes", c.max_blob_bytes}}) {
    if (absl::Status ok = positive(key, value); !ok.ok()) return ok;
  }
  if (c.max_unfinished_jobs_per_tenant < 0) {
    return absl::InvalidArgumentError(
        "invalid configuration of max_unfinished_jobs_per_tenant (must be >= 0; 0 = no limit)");
  }
  if (c.retry_budget < 0)
    return absl::InvalidArgumentError("invalid configuration of retry_budget (must be >= 0)");
  if (c.retention.finished_jobs_seconds < 0 || c.retention.unused_blobs_seconds < 0) {
    return absl::InvalidArgumentError(
        "invalid configuration of retention: finished_jobs_seconds and unused_blobs_seconds must "
        "be >= 0 (0 keeps forever)");
  }
  if (absl::Status ok =
          positive("retention.sweep_interval_seconds", c.retention.sweep_interval_seconds);
      !ok.ok()) {
    return ok;
  }
  if (absl::Status ok = ValidateStore(c); !ok.ok()) return ok;
  if (absl::Status ok = ValidateHttpListen(c.http_listen); !ok.ok()) return ok;
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return absl::InvalidArgumentError("invalid configuration of tls: cert and key go together");
  }
  if (!c.tls_client_ca.empty() && c.tls_cert.empty()) {
    return absl::InvalidArgumentError(
        "invalid configuration of tls: client_ca needs the server's own cert and key");
  }
  for (const auto& token : c.tokens) {
    if (token.sha256.size() != 64) {
      return absl::InvalidArgumentError(
          "invalid configuration of tokens: sha256 must be the 64-hex-digit SHA-256 of the token");
    }
    // "" would list every tenant's jobs (a filter without a tenant); '@' names the server's own
    // grantees (the blobs agents uploaded).
    if (token.tenant.empty() || token.tenant.front() == '@') {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid configuration of tokens: tenant '", token.tenant,
                       "' is not a tenant name (it must not be empty nor start with '@')"));
    }
  }
  return absl::OkStatus();
}

}  // namespace boardlab::server
