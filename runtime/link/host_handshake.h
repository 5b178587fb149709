#pragma once

// The host's half of starting a board link session (docs/board-protocol.md, "Sessions"):
// CONNECT with a fresh nonce, repeated until the board's HELLO for that nonce; the link's
// session starts when the board speaks this host's protocol version. It does no I/O and keeps
// no clock: HostSession drives it from its blocking loop, the agent's probe
// (agent/board_probe.h) from the agent's event loop, with the same frames and the same words.
//
//   HostHandshake handshake(link, /*max_receive_payload=*/4096, /*retry_ms=*/250);
//   handshake.Start(now);                         // CONNECT goes out through the link
//   ... for each delivered HELLO: if (handshake.OnHello(hello)) break;
//   ... on a timer:               handshake.Poll(now);   // CONNECT again when due
//   absl::Status ok = handshake.VersionStatus();  // FAILED_PRECONDITION on another version

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "runtime/link/link.h"
#include "runtime/link/messages.h"

namespace boardlab::link {

class HostHandshake {
 public:
  /// `link` must outlive the handshake. `max_receive_payload` is announced in CONNECT (with the
  /// link's receive window).
  HostHandshake(Link& link, uint16_t max_receive_payload, uint32_t retry_ms);

  /// Ends the link's session, picks a new nonce and sends CONNECT.
  void Start(uint32_t now_ms);
  /// Sends CONNECT again when `retry_ms` passed since the last one (before the answer).
  void Poll(uint32_t now_ms);
  /// Milliseconds until Poll has a CONNECT to repeat.
  uint32_t MillisecondsToRetry(uint32_t now_ms) const;

  /// A HELLO the link delivered. True when it answers this handshake's CONNECT for the first
  /// time: hello() is it, and the link's session has started when the versions match.
  bool OnHello(const Hello& hello);
  bool answered() const { return answered_; }
  uint32_t nonce() const { return nonce_; }
  const Hello& hello() const { return hello_; }

  /// OK, or FAILED_PRECONDITION "the board speaks board link protocol N, this host M: flash a
  /// matching firmware" (the board answered, but no session starts).
  absl::Status VersionStatus() const;

 private:
  void SendConnect(uint32_t now_ms);

  Link& link_;
  uint16_t max_receive_payload_;
  uint32_t retry_ms_;
  uint32_t nonce_ = 0;
  uint32_t last_sent_ms_ = 0;
  bool answered_ = false;
  Hello hello_;
};

/// DEADLINE_EXCEEDED: no HELLO from a board on `where` within `timeout_ms`, with what to check.
absl::Status NoHelloError(const std::string& where, int timeout_ms);

}  // namespace boardlab::link
