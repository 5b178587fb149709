#pragma once

// Browser sessions of the web pages. Signing in checks a bearer token once, with the same
// Authenticator as the gRPC API; the session then carries the Caller (tenant and role) that
// check gave, under a random 256-bit id the browser keeps in an HttpOnly, SameSite=Strict cookie
// (Secure over TLS). The table holds only SHA-256s of session ids, never a token. Sessions end
// after a fixed lifetime, on sign-out, or when the table is full (the oldest goes first); they
// live in memory, so a server restart signs everybody out. Thread-safe.
//
//   WebSessions sessions(kSessionLifetimeMs, kMaxSessions);
//   std::string id = sessions.Create(caller, NowMs());      // the cookie's value
//   std::optional<Caller> who = sessions.Find(id, NowMs());

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "server/auth.h"

namespace boardlab::server::web {

class WebSessions {
 public:
  WebSessions(int64_t lifetime_ms, size_t max_sessions);

  /// A new session for `caller`; returns its id (64 hex digits).
  std::string Create(const Caller& caller, int64_t now_ms);
  /// The caller of a live session; nullopt for an unknown or expired id.
  std::optional<Caller> Find(const std::string& id, int64_t now_ms);
  /// Ends a session (signing out); unknown ids are ignored.
  void Remove(const std::string& id);
  size_t size();

 private:
  struct Session {
    Caller caller;
    int64_t expires_ms = 0;
  };
  void DropExpired(int64_t now_ms);

  const int64_t lifetime_ms_;
  const size_t max_sessions_;
  std::mutex mutex_;
  std::map<std::string, Session> by_hash_;  // SHA-256 of the id -> session
};

}  // namespace boardlab::server::web
