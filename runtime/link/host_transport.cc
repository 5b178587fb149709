#include "runtime/link/host_transport.h"

#include "runtime/link/host_asio_ports.h"

#include <termios.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/serial_port.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <chrono>
#include <thread>
#include <utility>

namespace boardlab::link {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

// The rates a serial port takes here (Linux termios names them all up to 4 Mbaud, and
// asio::serial_port_base::baud_rate maps each to its B constant).
constexpr int kBaudRates[] = {9600,    19200,   38400,   57600,   115200,  230400,
                              460800,  500000,  576000,  921600,  1000000, 1152000,
                              1500000, 2000000, 2500000, 3000000, 3500000, 4000000};

// A blocking ByteStream over one Asio stream (a serial port or a TCP socket) with its own
// io_context: each Read starts one async_read_some and runs the context for at most the
// timeout, so a Read never blocks longer than asked and bytes are never lost to a cancel (a read
// that completed before the cancel still delivers them).
template <typename AsioStream>
class AsioByteStream : public ByteStream {
 public:
  AsioByteStream(std::unique_ptr<asio::io_context> io, AsioStream stream, std::string description,
                 std::string closed_message)
      : io_(std::move(io)),
        stream_(std::move(stream)),
        description_(std::move(description)),
        closed_message_(std::move(closed_message)) {}

  ~AsioByteStream() override {
    error_code ignored;
    stream_.close(ignored);
  }

  long Read(uint8_t* data, size_t size, int timeout_ms) override {
    if (!error_.empty()) return -1;
    bool done = false;
    error_code result;
    size_t got = 0;
    stream_.async_read_some(asio::buffer(data, size), [&](const error_code& ec, size_t n) {
      done = true;
      result = ec;
      got = n;
    });
    RunUntil(done, timeout_ms);
    if (!done) {
      // Nothing within the timeout: cancel, and let the (aborted or just completed) read finish.
      error_code ignored;
      stream_.cancel(ignored);
      RunUntil(done, -1);
    }
    if (got > 0) return static_cast<long>(got);
    if (!result || result == asio::error::operation_aborted || result == asio::error::interrupted ||
        result == asio::error::would_block) {
      return 0;
    }
    // The other end closed (TCP), or the device went away (a USB adapter unplugged, the far end
    // of a pty closed): EOF or EIO.
    if (result == asio::error::eof || result.value() == EIO) return Fail(closed_message_);
    return Fail("reading " + description_ + ": " + result.message());
  }

  bool Write(const uint8_t* data, size_t size) override {
    if (!error_.empty()) return false;
    bool done = false;
    error_code result;
    asio::async_write(stream_, asio::buffer(data, size), [&](const error_code& ec, size_t) {
      done = true;
      result = ec;
    });
    RunUntil(done, -1);
    if (result) Fail("writing " + description_ + ": " + result.message());
    return error_.empty();
  }

  std::string error() const override { return error_; }
  std::string description() const override { return description_; }

 private:
  // Runs the handlers until `done`, for at most `timeout_ms` (< 0: no limit; 0: only what is
  // ready now).
  void RunUntil(const bool& done, int timeout_ms) {
    io_->restart();
    if (timeout_ms == 0) {
      io_->poll();
      return;
    }
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!done) {
      if (timeout_ms < 0) {
        io_->run_one();
      } else if (Clock::now() >= deadline || io_->run_one_until(deadline) == 0) {
        return;
      }
      if (io_->stopped()) io_->restart();
    }
  }

  long Fail(const std::string& message) {
    if (error_.empty()) error_ = message;
    return -1;
  }

  std::unique_ptr<asio::io_context> io_;  // owns stream_'s service: declared first
  AsioStream stream_;
  std::string description_;
  std::string closed_message_;
  std::string error_;
};

// One connection attempt to each resolved address in turn, each within what is left of
// `timeout_ms`. `*refused` when some address refused (nothing listens there yet).
std::unique_ptr<ByteStream> ConnectTcp(const std::string& address, std::string* error,
                                       int timeout_ms, bool* refused) {
  *refused = false;
  std::string host, service;
  if (!SplitTcpAddress(address, &host, &service, error)) return nullptr;
  auto io = std::make_unique<asio::io_context>();
  asio::ip::tcp::resolver resolver(*io);
  error_code ec;
  const auto endpoints = resolver.resolve(host, service, ec);
  if (ec) {
    *error = "port 'tcp:" + address + "': " + ec.message();
    return nullptr;
  }
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string last = "no address";
  for (const auto& entry : endpoints) {
    asio::ip::tcp::socket socket(*io);
    bool done = false;
    error_code result;
    socket.async_connect(entry.endpoint(), [&](const error_code& e) {
      done = true;
      result = e;
    });
    io->restart();
    while (!done && io->run_one_until(deadline) > 0) {
    }
    if (!done) {
      socket.close(ec);  // aborts the connect; its handler runs below
      io->restart();
      while (!done && io->run_one() > 0) {
      }
      result = asio::error::timed_out;
    }
    if (!result) {
      socket.set_option(asio::ip::tcp::no_delay(true), ec);
      return std::make_unique<AsioByteStream<asio::ip::tcp::socket>>(
          std::move(io), std::move(socket), "tcp:" + address,
          "the connection to tcp:" + address + " was closed by the other end");
    }
    *refused = *refused || result == asio::error::connection_refused;
    last = "connecting to tcp:" + address + ": " + result.message();
  }
  *error = last;
  return nullptr;
}

// A refused connection is tried again until the timeout: the board's port may not be listening
// yet (ser2net or QEMU starting, a power cycle in progress).
std::unique_ptr<ByteStream> OpenTcp(const std::string& address, std::string* error,
                                    int timeout_ms) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    bool refused = false;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    std::unique_ptr<ByteStream> stream =
        ConnectTcp(address, error, static_cast<int>(std::max<int64_t>(left, 1)), &refused);
    if (stream != nullptr || !refused || Clock::now() >= deadline) return stream;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::unique_ptr<ByteStream> OpenSerial(const std::string& path, int baud, std::string* error) {
  auto io = std::make_unique<asio::io_context>();
  asio::serial_port port(*io);
  if (!OpenSerialPort(port, path, baud, error)) return nullptr;
  const std::string description = path + " at " + std::to_string(baud) + " baud";
  return std::make_unique<AsioByteStream<asio::serial_port>>(
      std::move(io), std::move(port), description, description + " hung up (unplugged?)");
}

}  // namespace

bool OpenSerialPort(asio::serial_port& port, const std::string& path, int baud,
                    std::string* error) {
  if (!IsSupportedBaudRate(baud)) {
    *error = "baud rate " + std::to_string(baud) + " is not a standard rate (9600 ... 4000000)";
    return false;
  }
  error_code ec;
  // Asio opens the device without making it the controlling terminal and sets it raw (no echo,
  // no line editing, no character translation) before the options below.
  port.open(path, ec);
  if (ec.value() == ENOTTY) {
    *error = "'" + path + "' is not a serial port";
    return false;
  }
  if (ec) {
    *error = "opening serial port '" + path + "': " + ec.message();
    return false;
  }
  using Base = asio::serial_port_base;
  // 8N1 at `baud`, no flow control.
  port.set_option(Base::baud_rate(static_cast<unsigned>(baud)), ec);
  if (!ec) port.set_option(Base::character_size(8), ec);
  if (!ec) port.set_option(Base::parity(Base::parity::none), ec);
  if (!ec) port.set_option(Base::stop_bits(Base::stop_bits::one), ec);
  if (!ec) port.set_option(Base::flow_control(Base::flow_control::none), ec);
  if (ec) {
    *error = "configuring serial port '" + path + "': " + ec.message();
    port.close(ec);
    return false;
  }
  // Bytes from before this session (a boot banner, an earlier host's half frame) are stale.
  ::tcflush(port.native_handle(), TCIOFLUSH);
  return true;
}

bool SplitTcpAddress(const std::string& address, std::string* host, std::string* service,
                     std::string* error) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    *error = "port 'tcp:" + address + "': expected tcp:HOST:PORT";
    return false;
  }
  *host = address.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  *service = address.substr(colon + 1);
  return true;
}

bool IsSupportedBaudRate(int baud) {
  for (const int rate : kBaudRates) {
    if (rate == baud) return true;
  }
  return false;
}

std::unique_ptr<ByteStream> OpenByteStream(const std::string& port, int baud, std::string* error,
                                           int connect_timeout_ms) {
  if (port.rfind("tcp:", 0) == 0) return OpenTcp(port.substr(4), error, connect_timeout_ms);
  return OpenSerial(port, baud, error);
}

}  // namespace boardlab::link
