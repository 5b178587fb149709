#pragma once

// How every `boardlab` command reaches the server: the global options, one channel, bearer
// token and deadlines on each call, and retry with backoff for calls that may safely be repeated.
//
// Usage:
//   ASSIGN_OR_RETURN(Connection connection, Connect(global_options));
//   grpc::ClientContext context;
//   PrepareContext(context, connection, kUnaryDeadline);
//   stub->GetJob(&context, request, &job);

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/support/grpc_util.h"

namespace boardlab::cli {

inline constexpr char kDefaultServer[] = "127.0.0.1:7400";

/// Deadline of one unary call (submit, get, list, cancel, board calls).
inline constexpr std::chrono::seconds kUnaryDeadline{30};

/// Options every command takes: --server, --token, --tls-ca, --tls-cert, --tls-key,
/// --tls-server-name.
struct GlobalOptions {
  std::string server = kDefaultServer;  // host:port
  std::string token;                    // bearer token; "" = none
  std::string tls_ca;                   // CA bundle; "" = plaintext (loopback)
  std::string tls_cert;                 // client certificate for mTLS; "" = none
  std::string tls_key;
  std::string tls_server_name;  // verified in the server's certificate; "" = the --server host
};

struct Connection {
  std::string server;  // for messages
  std::string token;
  std::shared_ptr<grpc::Channel> channel;
};

/// Opens the channel (lazily: nothing is dialled before the first call).
/// Errors: InvalidArgument when a TLS file cannot be read, or a certificate is given without TLS.
absl::StatusOr<Connection> Connect(const GlobalOptions& options);

/// Adds the bearer token and, when `deadline` is positive, a deadline from now.
void PrepareContext(grpc::ClientContext& context, const Connection& connection,
                    std::chrono::milliseconds deadline);

/// Runs `call(context)` (a unary stub call returning grpc::Status) with the token and
/// kUnaryDeadline set on a fresh context; returns its status as absl::Status.
template <typename Call>
absl::Status UnaryCall(const Connection& connection, Call&& call) {
  grpc::ClientContext context;
  PrepareContext(context, connection, kUnaryDeadline);
  return api::FromGrpcStatus(call(context));
}

/// Exponential backoff: first, 2 * first, ... capped at `max`.
class Backoff {
 public:
  Backoff(std::chrono::milliseconds first, std::chrono::milliseconds max);
  /// The delay before the next attempt; doubles the one after.
  std::chrono::milliseconds Next();
  void Reset();

 private:
  std::chrono::milliseconds first_;
  std::chrono::milliseconds max_;
  std::chrono::milliseconds next_;
};

/// How often and how patiently a call that failed with UNAVAILABLE is repeated.
struct RetryPolicy {
  int attempts = 5;  // calls in all, the first included
  std::chrono::milliseconds first_backoff{500};
  std::chrono::milliseconds max_backoff{4000};
};

/// Calls `call` until it returns anything but UNAVAILABLE, at most `policy.attempts` times,
/// sleeping with backoff in between. Only for calls that are idempotent (SubmitJob with a
/// request id, FindMissing, Upload of content-addressed bytes).
absl::Status RetryUnavailable(const RetryPolicy& policy, const std::function<absl::Status()>& call);

}  // namespace boardlab::cli
