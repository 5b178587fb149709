#pragma once

// A board's UART or socket end for host-side tests: a pseudo-terminal pair (the far side stands
// in for the board's UART; termios takes its baud rate and raw mode like a USB serial
// adapter's), and a relay that copies bytes between such a descriptor and a fake board's
// in-memory channels (link_test_support.h).

#include <poll.h>
#include <pty.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/runtime/link/link_test_support.h"

namespace boardlab::link::testing {

// A pseudo-terminal pair: `path` is the serial device the host opens, `board` the far end.
struct Pty {
  Pty() {
    int host_side = -1;
    char name[256] = {};
    if (::openpty(&board, &host_side, name, nullptr, nullptr) == 0) {
      path = name;
      ::close(host_side);  // the stream under test opens the device by its path
    }
  }
  ~Pty() {
    if (board >= 0) ::close(board);
  }
  int board = -1;
  std::string path;
};

// Copies bytes between a descriptor (the board's end of the pty or socket) and the fake board's
// in-memory channels, on its own thread.
class Relay {
 public:
  Relay(int fd, ByteChannel& to_board, ByteChannel& to_host)
      : fd_(fd), to_board_(to_board), to_host_(to_host), thread_([this] { Loop(); }) {}
  ~Relay() {
    stop_ = true;
    thread_.join();
  }

 private:
  void Loop() {
    std::vector<uint8_t> buffer(4096);
    while (!stop_) {
      pollfd p = {fd_, POLLIN, 0};
      if (::poll(&p, 1, 5) == 1) {
        const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
        if (n > 0) to_board_.Write(buffer.data(), static_cast<size_t>(n));
      }
      const long out = to_host_.Read(buffer.data(), buffer.size(), 0);
      for (long done = 0; done < out;) {
        const ssize_t n = ::write(fd_, buffer.data() + done, static_cast<size_t>(out - done));
        if (n <= 0) break;
        done += n;
      }
    }
  }

  int fd_;
  ByteChannel& to_board_;
  ByteChannel& to_host_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace boardlab::link::testing
