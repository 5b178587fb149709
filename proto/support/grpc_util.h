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
  std::string address;        // host:port
  std::string tls_ca_file;    // when set: TLS, verifying the server against this CA bundle
  std::string tls_cert_file;  // with tls_key_file: client certificate (mTLS, agents)
  std::string tls_key_file;
};

/// A channel to the server; insecure when no CA file is given (loopback, tests).
/// Errors: InvalidArgument when a TLS file cannot be read.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const ChannelOptions& options);

}  // namespace boardlab::api
