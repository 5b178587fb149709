#include "proto/support/grpc_util.h"

#include <arpa/inet.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace boardlab::api {
namespace {

// The least time a client connection attempt gets for its TCP and HTTP/2 handshakes: ten times
// what a busy CI machine needed at worst, and short enough that an attempt stuck on a server that
// is still starting is given up and retried soon (gRPC's default is 20 s).
constexpr int kMinConnectTimeoutMs = 2000;

constexpr size_t kMaxStatusMessage = 4096;

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("reading '", path, "': cannot open it"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  std::string message(status.message());
  if (message.size() > kMaxStatusMessage) {
    message.resize(kMaxStatusMessage);
    message += "...";
  }
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message);
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

void AddBearerToken(grpc::ClientContext& context, const std::string& token) {
  if (!token.empty()) context.AddMetadata(kAuthorizationHeader, "Bearer " + token);
}

std::string BearerToken(const grpc::ServerContext& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kAuthorizationHeader);
  if (it == metadata.end()) return "";
  std::string value(it->second.data(), it->second.size());
  constexpr std::string_view kPrefix = "Bearer ";
  if (value.rfind(kPrefix, 0) != 0) return "";
  return value.substr(kPrefix.size());
}

void ServerKeepaliveArguments(grpc::ServerBuilder& builder) {
  // Blob uploads stream megabytes: a larger per-stream receive window keeps the sender busy.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 16 << 20);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             kKeepaliveTimeMs / 2);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
}

namespace {

// Whether `host` (IPv6 in brackets) is an IP address rather than a name.
bool IsIpAddress(const std::string& host) {
  in_addr v4;
  in6_addr v6;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    return inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &v6) == 1;
  }
  return inet_pton(AF_INET, host.c_str(), &v4) == 1;
}

// Whether gRPC may find several servers behind `address`: a list, or a name (a DNS name with an
// address per replica, or a dns:// URI), as opposed to one IP address.
bool MayNameSeveralServers(const std::string& address) {
  if (address.find(',') != std::string::npos) return true;
  const size_t colon = address.rfind(':');
  return colon == std::string::npos || !IsIpAddress(address.substr(0, colon));
}

}  // namespace

absl::StatusOr<std::string> ChannelTarget(const std::string& address) {
  if (address.find(',') == std::string::npos) return address;
  std::vector<std::string> entries = absl::StrSplit(address, ',');
  bool any_v4 = false;
  bool any_v6 = false;
  for (const std::string& entry : entries) {
    const size_t colon = entry.rfind(':');
    if (entry.empty() || colon == std::string::npos || colon + 1 == entry.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("server address list '", address, "': '", entry, "' is not HOST:PORT"));
    }
    const std::string host = entry.substr(0, colon);
    if (!IsIpAddress(host)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "server address list '", address, "': '", entry,
          "' is not an IP address; give IP addresses, or one DNS name with several addresses"));
    }
    (host.front() == '[' ? any_v6 : any_v4) = true;
  }
  if (any_v4 && any_v6) {
    return absl::InvalidArgumentError(absl::StrCat(
        "server address list '", address, "' mixes IPv4 and IPv6 addresses; use one family"));
  }
  return absl::StrCat(any_v4 ? "ipv4:" : "ipv6:", address);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const ChannelOptions& options) {
  absl::StatusOr<std::string> target = ChannelTarget(options.address);
  if (!target.ok()) return target.status();
  grpc::ChannelArguments arguments;
  if (MayNameSeveralServers(options.address)) {
    // Several replicas: gRPC's own policies, not ours, choose among them and fail over. A name's
    // addresses too: without a policy gRPC would take the first that answers, also for clients.
    arguments.SetServiceConfigJSON(options.round_robin
                                       ? R"({"loadBalancingConfig": [{"round_robin": {}}]})"
                                       : R"({"loadBalancingConfig": [{"pick_first": {}}]})");
  }
  if (*target != options.address) {
    // TLS checks the first replica's name; all replicas present one certificate.
    arguments.SetString(GRPC_ARG_DEFAULT_AUTHORITY,
                        options.address.substr(0, options.address.find(',')));
  }
  if (!options.tls_server_name.empty()) {
    arguments.SetSslTargetNameOverride(options.tls_server_name);
  }
  arguments.SetMaxReceiveMessageSize(64 << 20);
  // Reconnect fast after a server restart: the default backoff grows to two minutes.
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  // gRPC takes this as the least time a connection attempt gets to finish its TCP and HTTP/2
  // handshakes (connection-backoff.md's MIN_CONNECT_TIMEOUT), not as a backoff: at 200 ms, a busy
  // server or client machine failed connects with "tcp handshaker shutdown". A refused connection
  // still fails at once.
  arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, kMinConnectTimeoutMs);
  // Pings find a connection that died without a reset (a pulled cable, a dead NAT entry) in
  // seconds rather than at TCP's retransmission timeout; the server permits them (kKeepalive*).
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  arguments.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  arguments.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.tls_ca_file.empty()) {
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    auto ca = ReadTextFile(options.tls_ca_file);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    if (!options.tls_cert_file.empty()) {
      auto cert = ReadTextFile(options.tls_cert_file);
      if (!cert.ok()) return cert.status();
      auto key = ReadTextFile(options.tls_key_file);
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *cert;
      ssl.pem_private_key = *key;
    }
    credentials = grpc::SslCredentials(ssl);
  }
  return grpc::CreateCustomChannel(*target, credentials, arguments);
}

}  // namespace boardlab::api
