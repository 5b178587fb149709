#pragma once

// The one place where absl::Status and grpc::Status meet (STYLE.md rule 20), and how clients
// dial the server and present their bearer token.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace boardlab::api {

/// Maps codes one to one (both follow google.rpc.Code); long messages are cut at 4 KiB so that a
/// runaway error text cannot exceed gRPC's metadata limits.
grpc::Status ToGrpcStatus(const absl::Status& status);
absl::Status FromGrpcStatus(const grpc::Status& status);

/// The metadata key clients put "Bearer <token>" in.
inline constexpr char kAuthorizationHeader[] = "authorization";

/// Sets the bearer token (when not empty) on a call.
void AddBearerToken(grpc::ClientContext& context, const std::string& token);

/// The bearer token of an incoming call, or "" when there is none.
std::string BearerToken(const grpc::ServerContext& context);

/// Clients ping an idle connection every kKeepaliveTimeMs and drop it when a ping is not answered
/// within kKeepaliveTimeoutMs. Servers must allow pings that often (ServerKeepaliveArguments).
inline constexpr int kKeepaliveTimeMs = 10000;
inline constexpr int kKeepaliveTimeoutMs = 5000;

/// Lets the server accept the clients' keepalive pings (instead of answering them with GOAWAY).
void ServerKeepaliveArguments(grpc::ServerBuilder& builder);

struct ChannelOptions {
  // host:port, or several server replicas: a comma-separated list of IP addresses
  // (127.0.0.1:7400,127.0.0.1:7401 or [::1]:7400,[::1]:7401), or one DNS name that resolves to
  // several addresses (lab.example.com:7400, or dns://DNS-SERVER/lab.example.com:7400 to ask a
  // given DNS server, gRPC's naming URI). gRPC resolves them and picks among those that are up.
  std::string address;
  // With several addresses (a list or a name's): true spreads calls round robin over the
  // replicas that are up (clients); false uses the first that answers, in the order given, and
  // moves to the next when it fails (agents: one long stream, placed where the operator listed
  // it first).
  bool round_robin = true;
  std::string tls_ca_file;    // when set: TLS, verifying the server against this CA bundle
  std::string tls_cert_file;  // with tls_key_file: client certificate (mTLS, agents)
  std::string tls_key_file;
  // The name the server's certificate must carry, when it differs from the address dialled (a
  // probe dialling 127.0.0.1 inside the server's pod); "" = the address's host.
  std::string tls_server_name;
};

/// The gRPC target for `address` (see ChannelOptions): the address itself, or for a list the
/// ipv4: or ipv6: URI that gRPC's own resolver takes. Errors: InvalidArgument for an empty entry,
/// a name in a list (give IP addresses, or one DNS name with several addresses), or a list that
/// mixes IPv4 and IPv6.
absl::StatusOr<std::string> ChannelTarget(const std::string& address);

/// A channel to the server; insecure when no CA file is given (loopback, tests).
/// Errors: InvalidArgument when a TLS file cannot be read or the address list is malformed.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const ChannelOptions& options);

}  // namespace boardlab::api
