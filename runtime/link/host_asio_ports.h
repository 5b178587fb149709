#pragma once

// The pieces of host_transport.h an event loop needs to open a board's port on its own
// io_context (the agent's asynchronous probe, agent/board_probe.h): the same serial settings
// and the same "tcp:HOST:PORT" syntax as OpenByteStream. Host-only.

#include <boost/asio/serial_port.hpp>
#include <string>

namespace boardlab::link {

/// Opens `path` on `port` as OpenByteStream does: raw 8N1 at `baud` (a standard rate), no flow
/// control, bytes from before this session flushed. False with `*error` set (as OpenByteStream
/// words it) on failure.
bool OpenSerialPort(boost::asio::serial_port& port, const std::string& path, int baud,
                    std::string* error);

/// Splits "HOST:PORT" (what follows "tcp:"; an IPv6 host in brackets) into `*host` and
/// `*service`. False with `*error` set when it is not of that form.
bool SplitTcpAddress(const std::string& address, std::string* host, std::string* service,
                     std::string* error);

}  // namespace boardlab::link
