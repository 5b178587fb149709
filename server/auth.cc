#include "server/auth.h"

#include "absl/strings/str_cat.h"
#include "proto/support/digest.h"

namespace boardlab::server {
namespace {

// Admins may do everything; agents only speak AgentService and the blob store; clients never
// speak AgentService.
bool RoleAllows(Role have, Role needed) {
  if (have == Role::kAdmin) return true;
  if (needed == Role::kAdmin) return false;
  if (needed == Role::kAgent) return have == Role::kAgent;
  return true;  // client calls: clients, and agents for blobs
}

}  // namespace

Authenticator::Authenticator(const std::vector<TokenConfig>& tokens) {
  for (const auto& token : tokens) by_hash_[token.sha256] = token;
}

absl::StatusOr<Caller> Authenticator::Authenticate(const std::string& token,
                                                   const std::string& tenant_header,
                                                   Role needed) const {
  if (by_hash_.empty()) {
    return Caller{tenant_header.empty() ? "default" : tenant_header, Role::kAdmin};
  }
  if (token.empty()) {
    return absl::UnauthenticatedError(
        "no bearer token: pass --token or set BOARDLAB_TOKEN (agents: BOARDLAB_AGENT_TOKEN)");
  }
  auto it = by_hash_.find(api::Sha256Hex(token));
  if (it == by_hash_.end()) return absl::UnauthenticatedError("the bearer token is not known");
  if (!RoleAllows(it->second.role, needed)) {
    return absl::PermissionDeniedError("this token's role may not make this call");
  }
  return Caller{it->second.tenant, it->second.role};
}

}  // namespace boardlab::server
