#pragma once

// Bearer-token authentication. Tokens are configured as SHA-256 hashes; each maps to a tenant and
// a role. With no tokens configured the server is open (loopback labs, tests): every caller is an
// admin of the tenant it names in `x-boardlab-tenant` (default "default").

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
};

class Authenticator {
 public:
  explicit Authenticator(const std::vector<TokenConfig>& tokens);

  /// `token` is the bearer token of the call ("" when absent), `tenant_header` the value of
  /// x-boardlab-tenant. Errors: Unauthenticated (missing or unknown token), PermissionDenied
  /// (the token's role may not make this call).
  absl::StatusOr<Caller> Authenticate(const std::string& token, const std::string& tenant_header,
                                      Role needed) const;

 private:
  std::map<std::string, TokenConfig> by_hash_;
};

}  // namespace boardlab::server
