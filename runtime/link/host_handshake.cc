#include "runtime/link/host_handshake.h"

#include <random>

#include "absl/strings/str_format.h"

namespace boardlab::link {

HostHandshake::HostHandshake(Link& link, uint16_t max_receive_payload, uint32_t retry_ms)
    : link_(link), max_receive_payload_(max_receive_payload), retry_ms_(retry_ms) {}

void HostHandshake::Start(uint32_t now_ms) {
  answered_ = false;
  link_.EndSession();
  // A new nonce per handshake: a HELLO answering an earlier CONNECT (of this host or another)
  // is not taken for this one's.
  std::random_device random;
  do {
    nonce_ = random();
  } while (nonce_ == 0);
  SendConnect(now_ms);
}

void HostHandshake::SendConnect(uint32_t now_ms) {
  Connect connect;
  connect.nonce = nonce_;
  connect.max_payload = max_receive_payload_;
  connect.window = static_cast<uint8_t>(link_.receive_window());
  uint8_t payload[16];
  link_.SendControl(FrameType::kConnect, payload, Encode(connect, payload, sizeof(payload)));
  last_sent_ms_ = now_ms;
}

void HostHandshake::Poll(uint32_t now_ms) {
  if (!answered_ && nonce_ != 0 && now_ms - last_sent_ms_ >= retry_ms_) SendConnect(now_ms);
}

uint32_t HostHandshake::MillisecondsToRetry(uint32_t now_ms) const {
  const uint32_t since = now_ms - last_sent_ms_;
  return since >= retry_ms_ ? 0 : retry_ms_ - since;
}

bool HostHandshake::OnHello(const Hello& hello) {
  if (answered_ || nonce_ == 0 || hello.session != nonce_) return false;
  answered_ = true;
  hello_ = hello;
  if (hello.protocol_version == kProtocolVersion) {
    link_.StartSession(hello.max_payload, hello.window);
  }
  return true;
}

absl::Status HostHandshake::VersionStatus() const {
  if (!answered_ || hello_.protocol_version == kProtocolVersion) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "the board speaks board link protocol %u, this host %u: flash a matching firmware",
      hello_.protocol_version, kProtocolVersion));
}

absl::Status NoHelloError(const std::string& where, int timeout_ms) {
  return absl::DeadlineExceededError(absl::StrFormat(
      "no HELLO from a board on %s within %.3g s: is the board-link firmware running, and are "
      "the port and baud rate right?",
      where, timeout_ms / 1000.0));
}

}  // namespace boardlab::link
