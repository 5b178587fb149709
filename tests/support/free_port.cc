#include "tests/support/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace boardlab::testing {
namespace {

// Binds `fd` to a port of the kernel's choice on 127.0.0.1 (listening when `listen`): the port,
// or 0.
int BindLoopback(int fd, bool listen) {
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), size) != 0) return 0;
  if (listen && ::listen(fd, 4) != 0) return 0;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) return 0;
  return ntohs(address.sin_port);
}

}  // namespace

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  const int port = BindLoopback(fd, /*listen=*/false);
  ::close(fd);
  return port;
}

int ConnectLoopback(int port, int timeout_seconds) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval timeout{timeout_seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

LoopbackListener::LoopbackListener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  if (fd_ < 0) return;
  const int port = BindLoopback(fd_, /*listen=*/true);
  if (port != 0) port_ = "tcp:127.0.0.1:" + std::to_string(port);
}

LoopbackListener::~LoopbackListener() { Close(); }

void LoopbackListener::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

int LoopbackListener::Accept() const { return ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC); }

}  // namespace boardlab::testing
