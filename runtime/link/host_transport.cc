#include "runtime/link/host_transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

namespace boardlab::link {
namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// The rates termios names; Linux has them all up to 4 Mbaud.
struct BaudRate {
  int baud;
  speed_t speed;
};
constexpr BaudRate kBaudRates[] = {
    {9600, B9600},       {19200, B19200},     {38400, B38400},     {57600, B57600},
    {115200, B115200},   {230400, B230400},   {460800, B460800},   {500000, B500000},
    {576000, B576000},   {921600, B921600},   {1000000, B1000000}, {1152000, B1152000},
    {1500000, B1500000}, {2000000, B2000000}, {2500000, B2500000}, {3000000, B3000000},
    {3500000, B3500000}, {4000000, B4000000},
};

// A file descriptor stream: poll() for timeouts, so one class serves sockets and ttys.
class FdStream : public ByteStream {
 public:
  FdStream(int fd, std::string description, bool is_socket)
      : fd_(fd), description_(std::move(description)), is_socket_(is_socket) {}
  ~FdStream() override {
    if (fd_ >= 0) ::close(fd_);
  }

  long Read(uint8_t* data, size_t size, int timeout_ms) override {
    if (!error_.empty()) return -1;
    pollfd p = {fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms < 0 ? 0 : timeout_ms);
    if (ready < 0) return errno == EINTR ? 0 : Fail(Errno("poll " + description_));
    if (ready == 0) return 0;
    const ssize_t n = ::read(fd_, data, size);
    if (n > 0) return static_cast<long>(n);
    if (n == 0) {
      return Fail(is_socket_ ? "the connection to " + description_ + " was closed by the other end"
                             : description_ + " hung up (unplugged?)");
    }
    if (errno == EAGAIN || errno == EINTR) return 0;
    return Fail(Errno("reading " + description_));
  }

  bool Write(const uint8_t* data, size_t size) override {
    while (size > 0 && error_.empty()) {
      const ssize_t n =
          is_socket_ ? ::send(fd_, data, size, MSG_NOSIGNAL) : ::write(fd_, data, size);
      if (n > 0) {
        data += n;
        size -= static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        pollfd p = {fd_, POLLOUT, 0};
        if (::poll(&p, 1, 1000) < 0 && errno != EINTR) Fail(Errno("poll " + description_));
        continue;
      }
      Fail(Errno("writing " + description_));
    }
    return error_.empty();
  }

  std::string error() const override { return error_; }
  std::string description() const override { return description_; }

 private:
  long Fail(const std::string& message) {
    if (error_.empty()) error_ = message;
    return -1;
  }

  int fd_;
  std::string description_;
  bool is_socket_;
  std::string error_;
};

std::unique_ptr<ByteStream> ConnectTcp(const std::string& address, std::string* error,
                                       int timeout_ms, bool* refused) {
  *refused = false;
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    *error = "port 'tcp:" + address + "': expected tcp:HOST:PORT";
    return nullptr;
  }
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string service = address.substr(colon + 1);
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    *error = "port 'tcp:" + address + "': " + ::gai_strerror(rc);
    return nullptr;
  }
  std::string last = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      last = Errno("socket");
      continue;
    }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc < 0 && errno == EINPROGRESS) {
      pollfd p = {fd, POLLOUT, 0};
      rc = ::poll(&p, 1, timeout_ms) == 1 ? 0 : -1;
      int so_error = rc == 0 ? 0 : ETIMEDOUT;
      socklen_t len = sizeof(so_error);
      if (rc == 0) ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
      errno = so_error;
      rc = so_error == 0 ? 0 : -1;
    }
    if (rc == 0) {
      ::freeaddrinfo(found);
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return std::make_unique<FdStream>(fd, "tcp:" + address, true);
    }
    *refused = *refused || errno == ECONNREFUSED;
    last = Errno("connecting to tcp:" + address);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  *error = last;
  return nullptr;
}

// A refused connection is tried again until the timeout: the board's port may not be listening
// yet (ser2net or QEMU starting, a power cycle in progress).
std::unique_ptr<ByteStream> OpenTcp(const std::string& address, std::string* error,
                                    int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    bool refused = false;
    std::unique_ptr<ByteStream> stream = ConnectTcp(address, error, timeout_ms, &refused);
    if (stream != nullptr || !refused || std::chrono::steady_clock::now() >= deadline)
      return stream;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::unique_ptr<ByteStream> OpenSerial(const std::string& path, int baud, std::string* error) {
  speed_t speed = 0;
  for (const BaudRate& r : kBaudRates) {
    if (r.baud == baud) speed = r.speed;
  }
  if (speed == 0) {
    *error = "baud rate " + std::to_string(baud) + " is not a standard rate (9600 ... 4000000)";
    return nullptr;
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *error = Errno("opening serial port '" + path + "'");
    return nullptr;
  }
  termios t = {};
  if (::tcgetattr(fd, &t) != 0) {
    *error = Errno("'" + path + "' is not a serial port");
    ::close(fd);
    return nullptr;
  }
  // Raw 8N1, no flow control, reads return what arrived.
  ::cfmakeraw(&t);
  t.c_cflag &= ~static_cast<tcflag_t>(CSTOPB | PARENB | CRTSCTS);
  t.c_cflag |= CLOCAL | CREAD | CS8;
  t.c_iflag &= ~static_cast<tcflag_t>(IXON | IXOFF | IXANY);
  t.c_cc[VMIN] = 0;
  t.c_cc[VTIME] = 0;
  ::cfsetispeed(&t, speed);
  ::cfsetospeed(&t, speed);
  if (::tcsetattr(fd, TCSANOW, &t) != 0) {
    *error = Errno("configuring serial port '" + path + "'");
    ::close(fd);
    return nullptr;
  }
  ::tcflush(fd, TCIOFLUSH);
  return std::make_unique<FdStream>(fd, path + " at " + std::to_string(baud) + " baud", false);
}

}  // namespace

bool IsSupportedBaudRate(int baud) {
  for (const BaudRate& r : kBaudRates) {
    if (r.baud == baud) return true;
  }
  return false;
}

std::unique_ptr<ByteStream> OpenByteStream(const std::string& port, int baud, std::string* error,
                                           int connect_timeout_ms) {
  if (port.rfind("tcp:", 0) == 0) return OpenTcp(port.substr(4), error, connect_timeout_ms);
  return OpenSerial(port, baud, error);
}

}  // namespace boardlab::link
