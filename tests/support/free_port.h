#pragma once

// TCP ports on 127.0.0.1 for tests that start servers (a QEMU board, a proxy) or play one (a
// fake board behind ser2net). The kernel picks the port.

#include <string>

namespace boardlab::testing {

/// A port nothing listens on right now; it stays free unless another process takes it before
/// the test binds it, which the ephemeral range makes unlikely.
int FreeLoopbackPort();

/// A socket connected to 127.0.0.1:`port` whose sends and receives give up after
/// `timeout_seconds`, or -1 when nothing accepts. The caller closes it.
int ConnectLoopback(int port, int timeout_seconds);

/// A listening socket on a free loopback port. Connections complete in the kernel's backlog
/// before Accept(): a board that never accepts still lets the host connect (and stays silent).
class LoopbackListener {
 public:
  LoopbackListener();
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  int fd() const { return fd_; }
  /// "tcp:127.0.0.1:PORT" (a board link port); empty when the socket could not listen.
  const std::string& port() const { return port_; }
  /// The next connection's descriptor (blocking), or -1.
  int Accept() const;
  /// Stops listening: connecting to port() is refused from now on.
  void Close();

 private:
  int fd_ = -1;
  std::string port_;
};

}  // namespace boardlab::testing
