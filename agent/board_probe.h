#pragma once

// The `serial` driver's question to a board, "who are you?", asked on the agent's event loop: the
// port opened as a Boost.Asio serial_port or tcp::socket on the agent's io_context, CONNECT
// repeated until the board's HELLO, with asynchronous reads and writes and timers, so that no
// thread waits for a board. The frames, the link and the handshake are the board link's own
// (link::Link, link::HostHandshake: the same code as boardlab-run's HostSession).
//
//   auto probe = BoardProbeCall::Start(io, board.serial, [](BoardProbe answer) {
//     if (answer.status.ok()) ... answer.build_id ...
//   });
//   probe->Cancel();  // the answer follows soon with a Cancelled status
//
// A port that cannot be opened, refuses the connection or closes at once is tried again every
// 250 ms until `connect_timeout_seconds` is spent (right after a flash, reset or power cycle a
// USB serial device enumerates again, ser2net drops its client while the board is down).

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "agent/config.h"

namespace boardlab::agent {

/// What a probe of the board found: its HELLO's facts, or why there was none.
struct BoardProbe {
  absl::Status status;
  std::string board;     // the board name HELLO gives
  std::string build_id;  // the firmware build HELLO gives
  std::string firmware_version;
  uint32_t cache_capacity = 0;   // bytes of its artifact cache
  uint32_t model_slot_size = 0;  // bytes of its model slot (0: none, or a protocol-2 board)
  // The board answered but speaks another board link protocol version (status says which):
  // its firmware is older or newer than this agent's, so the agent flashes rather than resets.
  bool other_protocol = false;
};

/// One probe in progress. Its handlers keep it alive until the answer is delivered.
class BoardProbeCall {
 public:
  using Done = std::function<void(BoardProbe)>;

  /// Starts the probe on `io` (nothing happens inside Start). `done` is called once, on `io`'s
  /// thread: with the HELLO's facts, UNAVAILABLE (the port never opened), DEADLINE_EXCEEDED (no
  /// HELLO in time), FAILED_PRECONDITION (another protocol version) or CANCELLED.
  static std::shared_ptr<BoardProbeCall> Start(boost::asio::io_context& io,
                                               const SerialBoardConfig& serial, Done done);
  virtual ~BoardProbeCall() = default;

  /// Ends the probe: the port is closed at once and `done` follows (posted) with CANCELLED,
  /// unless the answer was delivered already. Call on `io`'s thread.
  virtual void Cancel() = 0;
};

}  // namespace boardlab::agent
