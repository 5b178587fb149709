#include "server/auth.h"

#include "absl/strings/str_cat.h"
#include "proto/support/digest.h"

namespace boardlab::server {

const std::vector<RpcAccess>& RpcAccessTable() {
  static const std::vector<RpcAccess> table = {
      {"JobService.SubmitJob", Access::kJobs},
      {"JobService.GetJob", Access::kJobs},
      {"JobService.WatchJob", Access::kJobs},
      {"JobService.CancelJob", Access::kJobs},
      {"JobService.ListJobs", Access::kJobs},
      {"ArtifactService.FindMissing", Access::kBlobs},
      {"ArtifactService.Upload", Access::kBlobs},
      {"ArtifactService.Download", Access::kBlobs},
      {"BoardService.ListBoards", Access::kJobs},
      {"BoardService.GetBoard", Access::kJobs},
      {"BoardService.Reserve", Access::kJobs},
      {"BoardService.Release", Access::kJobs},
      {"BoardService.SetMaintenance", Access::kAdmin},
      {"AgentService.Connect", Access::kAgent},
  };
  return table;
}

// An agent token lives on every lab host, so it gets exactly what an agent needs (its stream
// and the blobs of the jobs it runs) and nothing that queues, cancels or leases work.
bool RoleAllows(Role role, Access access) {
  switch (role) {
    case Role::kAdmin:
      return true;
    case Role::kClient:
      return access == Access::kJobs || access == Access::kBlobs;
    case Role::kAgent:
      return access == Access::kAgent || access == Access::kBlobs;
  }
  return false;
}

Authenticator::Authenticator(const std::vector<TokenConfig>& tokens, bool agent_certificates)
    : agent_certificates_(agent_certificates) {
  for (const auto& token : tokens) by_hash_[token.sha256] = token;
}

absl::Status Authenticator::CheckCertificate(const CallCredentials& credentials, Role role,
                                             Access needed) const {
  if (!agent_certificates_ || credentials.verified_certificate) return absl::OkStatus();
  if (needed != Access::kAgent && role != Role::kAgent) return absl::OkStatus();
  return absl::UnauthenticatedError(
      "agents must present a client certificate signed by the server's tls.client_ca "
      "(agent config: tls_cert_file and tls_key_file)");
}

absl::StatusOr<Caller> Authenticator::Authenticate(const CallCredentials& credentials,
                                                   Access needed) const {
  if (by_hash_.empty()) {
    if (absl::Status ok = CheckCertificate(credentials, Role::kAdmin, needed); !ok.ok()) return ok;
    const std::string& tenant = credentials.tenant_header;
    return Caller{tenant.empty() ? "default" : tenant, Role::kAdmin};
  }
  if (credentials.token.empty()) {
    return absl::UnauthenticatedError(
        "no bearer token: pass --token or set BOARDLAB_TOKEN (agents: BOARDLAB_AGENT_TOKEN)");
  }
  auto it = by_hash_.find(api::Sha256Hex(credentials.token));
  if (it == by_hash_.end()) return absl::UnauthenticatedError("the bearer token is not known");
  const TokenConfig& token = it->second;
  if (!RoleAllows(token.role, needed)) {
    return absl::PermissionDeniedError(
        absl::StrCat("a token of role '", RoleName(token.role), "' may not make this call"));
  }
  if (absl::Status ok = CheckCertificate(credentials, token.role, needed); !ok.ok()) return ok;
  return Caller{token.tenant, token.role};
}

}  // namespace boardlab::server
