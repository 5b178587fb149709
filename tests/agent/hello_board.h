#pragma once

// A board for the agent's serial driver tests: on a loopback TCP port (as a firmware behind
// ser2net) it answers every CONNECT with a HELLO of a given protocol version naming itself
// `board` (build "protocol-<version>-build"), and nothing else. It can be made to stop answering
// (a board that hung or lost power: connections are still accepted, as ser2net would).

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "runtime/link/frame.h"
#include "runtime/link/messages.h"
#include "tests/support/free_port.h"

namespace boardlab::agent::testing {

class HelloBoard {
 public:
  HelloBoard(uint16_t protocol_version, std::string board)
      : protocol_version_(protocol_version), board_(std::move(board)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~HelloBoard() {
    stop_ = true;
    thread_.join();
  }
  const std::string& port() const { return listener_.port(); }
  /// False: CONNECTs go unanswered from now on.
  void set_answering(bool answering) { answering_ = answering; }
  int hellos() const { return hellos_; }

 private:
  void Loop() {
    while (!stop_) {
      pollfd p = {listener_.fd(), POLLIN, 0};
      if (::poll(&p, 1, 50) != 1) continue;
      const int fd = listener_.Accept();
      if (fd >= 0) Serve(fd);
    }
  }
  void Serve(int fd) {
    uint8_t buffer[1024];
    link::FrameDecoder decoder(buffer, sizeof(buffer));
    while (!stop_) {
      pollfd p = {fd, POLLIN, 0};
      if (::poll(&p, 1, 50) != 1) continue;
      uint8_t bytes[256];
      const ssize_t n = ::read(fd, bytes, sizeof(bytes));
      if (n <= 0) break;
      for (size_t at = 0; at < static_cast<size_t>(n);) {
        at += decoder.Feed(bytes + at, static_cast<size_t>(n) - at);
        if (decoder.frame() == nullptr) continue;
        link::Connect connect;
        if (answering_ && decoder.frame()->type == link::FrameType::kConnect &&
            link::Decode(decoder.frame()->payload, decoder.frame()->size, &connect)) {
          SendHello(fd, connect.nonce);
        }
        decoder.Consume();
      }
    }
    ::close(fd);
  }
  void SendHello(int fd, uint32_t nonce) {
    link::Hello hello;
    hello.protocol_version = protocol_version_;
    hello.session = nonce;
    std::snprintf(hello.board, sizeof(hello.board), "%s", board_.c_str());
    std::strcpy(hello.firmware_version, "0.1.0");
    std::snprintf(hello.build_id, sizeof(hello.build_id), "protocol-%u-build",
                  unsigned{protocol_version_});
    uint8_t payload[link::kMinPayloadLimit];
    const size_t size = link::Encode(hello, payload, sizeof(payload));
    uint8_t frame[link::kMinPayloadLimit + link::kFrameOverhead];
    const size_t bytes =
        link::EncodeFrame(link::FrameType::kHello, 0, payload, size, frame, sizeof(frame));
    if (::write(fd, frame, bytes) == static_cast<ssize_t>(bytes)) ++hellos_;
  }

  const uint16_t protocol_version_;
  const std::string board_;
  boardlab::testing::LoopbackListener listener_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> answering_{true};
  std::atomic<int> hellos_{0};
  std::thread thread_;
};

}  // namespace boardlab::agent::testing
