#pragma once

// Who may make which call (docs/security.md shows the same table; the authorization test reads it
// from there and checks every row against a live server).
//
// Bearer tokens are configured as SHA-256 hashes; each maps to a tenant and a role. With no
// tokens configured the server is open (loopback labs, tests): every caller is an admin of the
// tenant it names in `x-boardlab-tenant` (default "default").
//
// Certificates: with `tls.client_ca` set, the server asks every caller for a client certificate
// and verifies the ones presented. AgentService, and every call made with an agent token, needs
// a verified one, so that an agent token copied off a lab host is useless without the host's
// key. Clients authenticate by token over TLS and may present a certificate too.
//
// Usage:
//   Authenticator auth(config.tokens, /*agent_certificates=*/!config.tls_client_ca.empty());
//   auto caller = auth.Authenticate({token, tenant_header, peer_has_certificate}, Access::kJobs);

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/config.h"

namespace boardlab::server {

struct Caller {
  std::string tenant;
  Role role = Role::kClient;
  bool is_admin() const { return role == Role::kAdmin; }
  bool is_agent() const { return role == Role::kAgent; }
};

/// What a call touches, which decides the roles that may make it.
enum class Access {
  kJobs,   // JobService, BoardService reads and leases: clients and admins (tenant-scoped)
  kBlobs,  // ArtifactService: clients (their tenant's blobs), agents (blobs of jobs on boards),
           // admins (all)
  kAgent,  // AgentService: agents and admins, with a verified certificate under mTLS
  kAdmin,  // lab administration (maintenance): admins only
};

/// One RPC and the access it needs.
struct RpcAccess {
  const char* rpc;  // "Service.Method", e.g. "JobService.SubmitJob"
  Access access;
};

/// Every RPC of boardlab.v1, in the order docs/security.md lists them.
const std::vector<RpcAccess>& RpcAccessTable();

/// Whether `role` may make a call of `access` at all (tenant scoping comes on top).
bool RoleAllows(Role role, Access access);

/// What the transport says about a call.
struct CallCredentials {
  std::string token;                  // bearer token, "" when absent
  std::string tenant_header;          // x-boardlab-tenant
  bool verified_certificate = false;  // the peer presented a certificate the server verified
};

class Authenticator {
 public:
  /// `agent_certificates`: agent calls need a verified client certificate (mTLS is configured).
  Authenticator(const std::vector<TokenConfig>& tokens, bool agent_certificates);

  /// Errors: Unauthenticated (missing or unknown token; an agent call without a verified
  /// certificate under mTLS), PermissionDenied (the token's role may not make this call).
  absl::StatusOr<Caller> Authenticate(const CallCredentials& credentials, Access needed) const;

 private:
  absl::Status CheckCertificate(const CallCredentials& credentials, Role role, Access needed) const;

  std::map<std::string, TokenConfig> by_hash_;
  bool agent_certificates_;
};

}  // namespace boardlab::server
