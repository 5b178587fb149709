#include "server/web/sessions.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/escaping.h"
#include "proto/support/digest.h"

namespace boardlab::server::web {

WebSessions::WebSessions(int64_t lifetime_ms, size_t max_sessions)
    : lifetime_ms_(lifetime_ms), max_sessions_(std::max<size_t>(max_sessions, 1)) {}

std::string WebSessions::Create(const Caller& caller, int64_t now_ms) {
  unsigned char bytes[32];
  // OpenSSL's generator is seeded from the kernel; failing to produce bytes means the process
  // cannot make secrets at all, which no session may survive.
  if (RAND_bytes(bytes, sizeof bytes) != 1) std::abort();
  const std::string id =
      absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
  std::lock_guard lock(mutex_);
  DropExpired(now_ms);
  while (by_hash_.size() >= max_sessions_) {
    auto oldest = std::min_element(
        by_hash_.begin(), by_hash_.end(),
        [](const auto& a, const auto& b) { return a.second.expires_ms < b.second.expires_ms; });
    by_hash_.erase(oldest);
  }
  by_hash_[api::Sha256Hex(id)] = Session{caller, now_ms + lifetime_ms_};
  return id;
}

std::optional<Caller> WebSessions::Find(const std::string& id, int64_t now_ms) {
  if (id.empty()) return std::nullopt;
  std::lock_guard lock(mutex_);
  auto it = by_hash_.find(api::Sha256Hex(id));
  if (it == by_hash_.end()) return std::nullopt;
  if (it->second.expires_ms <= now_ms) {
    by_hash_.erase(it);
    return std::nullopt;
  }
  return it->second.caller;
}

void WebSessions::Remove(const std::string& id) {
  std::lock_guard lock(mutex_);
  by_hash_.erase(api::Sha256Hex(id));
}

size_t WebSessions::size() {
  std::lock_guard lock(mutex_);
  return by_hash_.size();
}

void WebSessions::DropExpired(int64_t now_ms) {
  std::erase_if(by_hash_, [&](const auto& entry) { return entry.second.expires_ms <= now_ms; });
}

}  // namespace boardlab::server::web
