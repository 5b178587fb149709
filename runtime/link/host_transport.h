#pragma once

// Byte streams to a board, for the host side of the board link: a serial port (a
// /dev/serial/by-id/... path, boost::asio::serial_port set to raw 8N1 at a baud rate) or a TCP
// connection (boost::asio::ip::tcp::socket; "tcp:HOST:PORT": ser2net in front of a real board, or
// QEMU's UART socket from firmware/qemu-board.sh). Each stream runs its own io_context for the
// time a call may take, so the interface stays blocking with timeouts (HostSession). Host-only,
// not part of the firmware.
//
//   std::string error;
//   std::unique_ptr<ByteStream> port = OpenByteStream("tcp:127.0.0.1:5555", 921600, &error);
//   long n = port->Read(buffer, sizeof(buffer), /*timeout_ms=*/50);   // -1: closed, see error()

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace boardlab::link {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  /// Bytes read (> 0), 0 when none arrived within `timeout_ms`, -1 when the stream closed or
  /// failed (error() says why: the board's TCP end closed, the serial device went away). A
  /// negative `timeout_ms` blocks until bytes arrive or the stream fails; 0 only takes what has
  /// arrived already.
  virtual long Read(uint8_t* data, size_t size, int timeout_ms) = 0;
  /// Writes all bytes; false when the stream failed (error()).
  virtual bool Write(const uint8_t* data, size_t size) = 0;
  virtual std::string error() const = 0;
  /// What it is connected to, for messages ("tcp:127.0.0.1:5555", "/dev/ttyACM0 at 921600 baud").
  virtual std::string description() const = 0;
};

/// Opens `port`: "tcp:HOST:PORT" connects (within `connect_timeout_ms`); anything else is a
/// serial device path opened at `baud` (a standard rate: 9600 ... 4000000). nullptr with
/// `*error` set on failure.
std::unique_ptr<ByteStream> OpenByteStream(const std::string& port, int baud, std::string* error,
                                           int connect_timeout_ms = 5000);

/// Whether `baud` is a rate OpenByteStream can set on a serial port.
bool IsSupportedBaudRate(int baud);

}  // namespace boardlab::link
