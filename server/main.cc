// boardlab-server: the lab's API. See docs/server.md.
//
//   boardlab-server --config /etc/boardlab/server.yaml [--listen ADDR] [--data-dir DIR] ...

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <malloc.h>
#include <prometheus/exposer.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "proto/support/grpc_util.h"
#include "server/compile_service.h"
#include "server/config.h"
#include "server/file_blob_store.h"
#include "server/lab.h"
#include "server/log.h"
#include "server/open_store.h"
#include "server/reference_runner.h"
#include "server/retention.h"
#include "server/services.h"
#include "server/tiered_blob_store.h"
#include "server/web/http_server.h"
#include "server/web/web_app.h"

namespace boardlab::server {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitConfig = 2;
constexpr int kExitStartup = 3;
constexpr int kTickMs = 100;

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop = true; }

struct Flags {
  std::string config;
  std::string listen;
  std::string metrics_listen;
  std::string http_listen;
  std::string data_dir;
  int compile_workers = 0;
  int heartbeat_interval_ms = 0;
};

absl::StatusOr<ServerConfig> ResolveConfig(const Flags& flags) {
  ServerConfig config;
  if (!flags.config.empty()) {
    auto loaded = LoadServerConfig(flags.config);
    if (!loaded.ok()) return loaded.status();
    config = *std::move(loaded);
  }
  if (!flags.listen.empty()) config.listen = flags.listen;
  if (!flags.metrics_listen.empty())
    config.metrics_listen = flags.metrics_listen == "off" ? "" : flags.metrics_listen;
  if (!flags.http_listen.empty())
    config.http_listen = flags.http_listen == "off" ? "" : flags.http_listen;
  if (!flags.data_dir.empty()) config.data_dir = flags.data_dir;
  if (flags.compile_workers > 0) config.compile_workers = flags.compile_workers;
  if (flags.heartbeat_interval_ms > 0) config.heartbeat_interval_ms = flags.heartbeat_interval_ms;
  if (absl::Status ok = ValidateServerConfig(config); !ok.ok()) return ok;
  return config;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("reading '", path, "': cannot open it"));
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials(const ServerConfig& config) {
  if (config.tls_cert.empty()) return grpc::InsecureServerCredentials();
  auto cert = ReadFile(config.tls_cert);
  if (!cert.ok()) return cert.status();
  auto key = ReadFile(config.tls_key);
  if (!key.ok()) return key.status();
  // With a client CA, certificates are asked for and verified when presented, not required:
  // clients authenticate with tokens, and the Authenticator demands a verified certificate only
  // where it matters (AgentService and agent tokens; docs/security.md).
  grpc::SslServerCredentialsOptions options(config.tls_client_ca.empty()
                                                ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                                : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_key_cert_pairs.push_back({*key, *cert});
  if (!config.tls_client_ca.empty()) {
    auto ca = ReadFile(config.tls_client_ca);
    if (!ca.ok()) return ca.status();
    options.pem_root_certs = *ca;
  }
  return grpc::SslServerCredentials(options);
}

// The golden model quarantined boards must pass: stored and compiled once at start-up.
absl::Status PrepareHealthCheck(const ServerConfig& config, BlobStore& blobs,
                                CompileService& compiles, Lab& lab, Retention& retention) {
  const HealthCheckConfig& health = config.health_check;
  if (health.model.empty()) return absl::OkStatus();
  v1::Digest digests[3];
  const std::string* paths[3] = {&health.model, &health.input, &health.expected};
  for (int i = 0; i < 3; ++i) {
    auto bytes = ReadFile(*paths[i]);
    if (!bytes.ok())
      return absl::InvalidArgumentError(absl::StrCat("health_check: ", bytes.status().message()));
    auto digest = blobs.Put(*bytes);
    if (!digest.ok()) return digest.status();
    digests[i] = *digest;
    retention.Pin(*digest);
  }
  v1::Digest input = digests[1];
  v1::Digest expected = digests[2];
  compiles.Request(
      digests[0], v1::CompileOptions(),
      [&lab, &retention, input, expected](const CompileRecord& record, CompileSource) {
        if (!record.error.empty()) {
          LogError("health-check model does not compile", {{"error", record.error}});
          return;
        }
        for (const v1::Digest* digest : {&record.artifact, &record.report, &record.debug_map}) {
          retention.Pin(*digest);
        }
        lab.SetHealthCheck(record, input, expected);
      });
  return absl::OkStatus();
}

// The web pages, on their own listener (HTTPS when the server has a certificate); null when
// http_listen is off.
absl::StatusOr<std::unique_ptr<web::HttpServer>> StartWebPages(const ServerConfig& config,
                                                               web::WebApp& app) {
  if (config.http_listen.empty()) return nullptr;
  web::HttpServerOptions options;
  options.listen = config.http_listen;
  options.tls_cert = config.tls_cert;
  options.tls_key = config.tls_key;
  return web::HttpServer::Start(
      options, [&app](const web::HttpRequest& request) { return app.Handle(request); });
}

// "http://HOST:PORT/" as a browser opens it, or "off".
std::string WebAddress(const ServerConfig& config, const web::HttpServer* server) {
  if (server == nullptr) return "off";
  std::string host = config.http_listen.substr(0, config.http_listen.rfind(':'));
  return absl::StrCat(server->scheme(), "://", host, ":", server->port(), "/");
}

int Serve(const ServerConfig& config) {
  auto store = OpenStore(config);
  if (!store.ok()) {
    LogError(std::string(store.status().message()));
    return kExitStartup;
  }
  auto files = FileBlobStore::Open(config.data_dir + "/blobs");
  if (!files.ok()) {
    LogError(std::string(files.status().message()));
    return kExitStartup;
  }
  auto blobs = std::make_unique<TieredBlobStore>(
      *std::move(files), **store, KnownPresentMs(config.retention.unused_blobs_seconds));
  Metrics metrics;
  std::unique_ptr<prometheus::Exposer> exposer;
  if (!config.metrics_listen.empty()) {
    try {
      exposer = std::make_unique<prometheus::Exposer>(config.metrics_listen);
    } catch (const std::exception& e) {  // civetweb reports bind failures by exception
      LogError("cannot serve /metrics", {{"address", config.metrics_listen}, {"error", e.what()}});
      return kExitStartup;
    }
    exposer->RegisterCollectable(metrics.registry());
  }
  CompileService compiles(config.compile_workers, **store, *blobs, metrics);
  ReferenceRunner reference(
      config.boardlab_run.empty() ? DefaultBoardlabRun() : config.boardlab_run,
      (std::filesystem::path(config.data_dir) / "tmp").string(), *blobs);
  Lab lab(config, **store, *blobs, compiles, metrics, &reference);
  if (absl::Status ok = lab.Recover(); !ok.ok()) {
    LogError("recovering state failed", {{"error", std::string(ok.message())}});
    return kExitStartup;
  }
  lab.RequestRecoveredCompiles();
  Retention retention(config.retention, **store, *blobs, metrics);
  if (absl::Status ok = PrepareHealthCheck(config, *blobs, compiles, lab, retention); !ok.ok()) {
    LogError(std::string(ok.message()));
    return kExitStartup;
  }

  Authenticator auth(config.tokens, /*agent_certificates=*/!config.tls_client_ca.empty());
  ServiceContext context{lab, **store, *blobs, auth, metrics, config};
  JobServiceImpl jobs(context);
  ArtifactServiceImpl artifacts(context);
  BoardServiceImpl boards(context);
  AgentServiceImpl agents(context);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  auto credentials = Credentials(config);
  if (!credentials.ok()) {
    LogError(std::string(credentials.status().message()));
    return kExitStartup;
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(config.listen, *credentials, &port);
  builder.SetMaxReceiveMessageSize(8 << 20);
  api::ServerKeepaliveArguments(builder);
  builder.RegisterService(&jobs);
  builder.RegisterService(&artifacts);
  builder.RegisterService(&boards);
  builder.RegisterService(&agents);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    LogError("cannot listen", {{"address", config.listen}});
    return kExitStartup;
  }
  web::WebApp web_app({lab, **store, *blobs, auth, /*open=*/config.tokens.empty()});
  auto web_server = StartWebPages(config, web_app);
  if (!web_server.ok()) {
    LogError(std::string(web_server.status().message()));
    return kExitStartup;
  }
  std::string host = config.listen.substr(0, config.listen.rfind(':'));
  std::string metrics_port =
      exposer ? std::to_string(exposer->GetListeningPorts().at(0)) : std::string("off");
  std::string web_address = WebAddress(config, web_server->get());
  LogInfo("listening", {{"grpc", absl::StrCat(host, ":", port)},
                        {"metrics_port", metrics_port},
                        {"web", web_address},
                        {"data_dir", config.data_dir}});
  // Tests and scripts read the addresses from this line.
  printf("boardlab-server listening on %s:%d metrics %s web %s\n", host.c_str(), port,
         metrics_port.c_str(), web_address.c_str());
  fflush(stdout);

  retention.Start();
  signal(SIGINT, OnSignal);
  signal(SIGTERM, OnSignal);
  while (!g_stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kTickMs));
    lab.Tick();
  }
  LogInfo("shutting down");
  web_server->reset();  // no page is read from a Lab that is going away
  // Open streams (agents, watchers) are cut after a grace period; the state is already on disk.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  lab.Shutdown();  // replicas: the others take this one's work over at once
  retention.Stop();
  compiles.Stop();  // before the Lab its callbacks report to
  return kExitOk;
}

// By default glibc hands freed heap back to the kernel once 128 KiB (adapting: a few MiB) are free
// at its top, so 4 MiB upload chunks and gRPC read buffers kept coming back as fresh pages to
// fault in and zero (about 15 % of the server's perf samples during an upload). Keeping up to
// 64 MiB made uploads about 20 % faster (service_bench, 64 MiB blobs, three runs each way); the
// price is at most that much resident memory.
void KeepFreedHeapForReuse() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

}  // namespace
}  // namespace boardlab::server

int main(int argc, char** argv) {
  using namespace boardlab::server;
  KeepFreedHeapForReuse();
  CLI::App app{"boardlab-server: compiles models and runs them on the lab's boards"};
  Flags flags;
  app.add_option("--config", flags.config, "YAML configuration file (docs/server.md)");
  app.add_option("--listen", flags.listen, "gRPC address, host:port (port 0: any free port)");
  app.add_option("--metrics-listen", flags.metrics_listen,
                 "Prometheus /metrics address, host:port, or off");
  app.add_option("--http-listen", flags.http_listen,
                 "web pages address (jobs, boards), host:port, or off");
  app.add_option("--data-dir", flags.data_dir, "database and artifact store directory");
  app.add_option("--compile-workers", flags.compile_workers, "parallel compiles")
      ->check(CLI::PositiveNumber);
  app.add_option("--heartbeat-ms", flags.heartbeat_interval_ms,
                 "agent heartbeat interval; leases die after missed_heartbeats of them")
      ->check(CLI::PositiveNumber);
  bool check_config = false;
  app.add_flag("--check-config", check_config,
               "read and check the configuration (keys, values, addresses), then exit: 0 when it "
               "is valid, 2 with the reason when not; files it names are read at start, not here");
  CLI11_PARSE(app, argc, argv);
  auto config = ResolveConfig(flags);
  if (!config.ok()) {
    fprintf(stderr, "boardlab-server: %s\n", std::string(config.status().message()).c_str());
    return kExitConfig;
  }
  if (check_config) {
    printf("boardlab-server: configuration is valid\n");
    return kExitOk;
  }
  return Serve(*config);
}
