#include "cli/connection.h"

#include <algorithm>
#include <thread>

#include "proto/support/grpc_util.h"

namespace boardlab::cli {

absl::StatusOr<Connection> Connect(const GlobalOptions& options) {
  api::ChannelOptions channel_options;
  channel_options.address = options.server;
  channel_options.tls_ca_file = options.tls_ca;
  channel_options.tls_cert_file = options.tls_cert;
  channel_options.tls_key_file = options.tls_key;
  channel_options.tls_server_name = options.tls_server_name;
  if (!options.tls_cert.empty() && options.tls_ca.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert needs --tls-ca: a client certificate is only presented over TLS");
  }
  if (!options.tls_server_name.empty() && options.tls_ca.empty()) {
    return absl::InvalidArgumentError(
        "--tls-server-name needs --tls-ca: only a TLS server presents a certificate");
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = api::MakeChannel(channel_options);
  if (!channel.ok()) return channel.status();
  return Connection{options.server, options.token, *std::move(channel)};
}

void PrepareContext(grpc::ClientContext& context, const Connection& connection,
                    std::chrono::milliseconds deadline) {
  api::AddBearerToken(context, connection.token);
  if (deadline.count() > 0) context.set_deadline(std::chrono::system_clock::now() + deadline);
}

Backoff::Backoff(std::chrono::milliseconds first, std::chrono::milliseconds max)
    : first_(first), max_(max), next_(first) {}

std::chrono::milliseconds Backoff::Next() {
  const std::chrono::milliseconds delay = next_;
  next_ = std::min(next_ * 2, max_);
  return delay;
}

void Backoff::Reset() { next_ = first_; }

absl::Status RetryUnavailable(const RetryPolicy& policy,
                              const std::function<absl::Status()>& call) {
  Backoff backoff(policy.first_backoff, policy.max_backoff);
  absl::Status status;
  for (int attempt = 1; attempt <= policy.attempts; ++attempt) {
    if (attempt > 1) std::this_thread::sleep_for(backoff.Next());
    status = call();
    if (!absl::IsUnavailable(status)) return status;
  }
  return status;
}

}  // namespace boardlab::cli
