#include "agent/board_probe.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/serial_port.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/link/host_asio_ports.h"
#include "runtime/link/host_handshake.h"
#include "runtime/link/link.h"
#include "runtime/link/messages.h"

namespace boardlab::agent {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

// A port that would not open, or closed, is tried again after this pause.
constexpr auto kReopenDelay = std::chrono::milliseconds(250);
constexpr uint32_t kConnectRetryMs = 250;  // CONNECT repeated this often, as HostSession does
// What the probe announces it receives: a HELLO of every region and cache entry fits.
constexpr uint16_t kMaxReceivePayload = 4096;
constexpr uint8_t kWindow = 1;  // the probe sends no messages; it only acknowledges

// Frames the link writes, collected until the next asynchronous write.
class PendingOutput final : public link::ByteOutput {
 public:
  void Write(const uint8_t* data, size_t size) override {
    bytes_.insert(bytes_.end(), data, data + size);
  }
  bool empty() const { return bytes_.empty(); }
  std::vector<uint8_t> Take() { return std::exchange(bytes_, {}); }

 private:
  std::vector<uint8_t> bytes_;
};

class Probe final : public BoardProbeCall, public std::enable_shared_from_this<Probe> {
 public:
  Probe(asio::io_context& io, const SerialBoardConfig& serial, Done done)
      : io_(io),
        serial_(serial),
        done_(std::move(done)),
        timer_(io),
        resolver_(io),
        tx_(kWindow * link::kMinPayloadLimit),
        rx_(link::kFrameOverhead + kMaxReceivePayload),
        reorder_(kMaxReceivePayload),
        link_(output_,
              link::LinkBuffers{tx_.data(), tx_.size(), rx_.data(), rx_.size(), reorder_.data(),
                                reorder_.size()},
              link::LinkOptions{kWindow, 1000, 300, 4000, 8}),
        handshake_(link_, kMaxReceivePayload, kConnectRetryMs),
        tcp_(serial.port.rfind("tcp:", 0) == 0),
        description_(tcp_ ? serial.port : absl::StrCat(serial.port, " at ", serial.baud, " baud")) {
  }

  void Begin() {
    if (finished_) return;  // cancelled before it began
    start_ = Clock::now();
    deadline_ = start_ + std::chrono::seconds(serial_.connect_timeout_seconds);
    Open();
  }

  void Cancel() override {
    if (finished_) return;
    Finish(Failed(absl::CancelledError("cancelled while probing")));
  }

 private:
  enum class Phase { kOpening, kReopenWait, kHandshake };

  static BoardProbe Failed(absl::Status status) {
    BoardProbe probe;
    probe.status = std::move(status);
    return probe;
  }
  uint32_t NowMs() const {
    return static_cast<uint32_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_).count());
  }

  void Open() {
    phase_ = Phase::kOpening;
    ++epoch_;
    if (!tcp_) return OpenSerial();
    std::string host, service, error;
    if (!link::SplitTcpAddress(serial_.port.substr(4), &host, &service, &error)) {
      return Finish(Failed(absl::UnavailableError(error)));
    }
    // The connection gets what is left of the connect timeout: a host that drops the SYN must
    // not hold the probe for the kernel's two minutes.
    ArmTimer(deadline_);
    resolver_.async_resolve(
        host, service,
        [self = shared_from_this(), epoch = epoch_](
            const error_code& ec, const asio::ip::tcp::resolver::results_type& endpoints) {
          if (self->Stale(epoch)) return;
          if (ec)
            return self->Reopen(absl::StrCat("port '", self->serial_.port, "': ", ec.message()));
          self->Connect(endpoints);
        });
  }

  void Connect(const asio::ip::tcp::resolver::results_type& endpoints) {
    socket_ = std::make_unique<asio::ip::tcp::socket>(io_);
    asio::async_connect(*socket_, endpoints,
                        [self = shared_from_this(), epoch = epoch_](
                            const error_code& ec, const asio::ip::tcp::endpoint&) {
                          if (self->Stale(epoch)) return;
                          if (ec) {
                            return self->Reopen(absl::StrCat("connecting to ", self->serial_.port,
                                                             ": ", ec.message()));
                          }
                          error_code ignored;
                          self->socket_->set_option(asio::ip::tcp::no_delay(true), ignored);
                          self->Opened();
                        });
  }

  void OpenSerial() {
    serial_port_ = std::make_unique<asio::serial_port>(io_);
    std::string error;
    if (!link::OpenSerialPort(*serial_port_, serial_.port, serial_.baud, &error)) {
      serial_port_.reset();
      return Reopen(error);
    }
    Opened();
  }

  void Opened() {
    phase_ = Phase::kHandshake;
    handshake_.Start(NowMs());
    Flush();
    Read();
    ArmHandshakeTimer();
  }

  // The port would not open or went away: again after a pause while the timeout allows.
  void Reopen(const std::string& why) {
    CloseStream();
    if (Clock::now() + kReopenDelay >= deadline_) {
      return Finish(Failed(absl::UnavailableError(why)));
    }
    phase_ = Phase::kReopenWait;
    ArmTimer(Clock::now() + kReopenDelay);
  }

  void ArmHandshakeTimer() {
    const Clock::time_point retry =
        Clock::now() + std::chrono::milliseconds(handshake_.MillisecondsToRetry(NowMs()));
    ArmTimer(std::min(retry, deadline_));
  }

  void ArmTimer(Clock::time_point at) {
    timer_.expires_at(at);
    timer_.async_wait([self = shared_from_this(), epoch = epoch_](const error_code& ec) {
      if (ec || self->Stale(epoch)) return;
      self->OnTimer();
    });
  }

  void OnTimer() {
    switch (phase_) {
      case Phase::kReopenWait:
        return Open();
      case Phase::kOpening:  // the connection did not complete in time
        CloseStream();
        return Finish(Failed(absl::UnavailableError(
            absl::StrCat("connecting to ", serial_.port, ": no answer within ",
                         serial_.connect_timeout_seconds, " s"))));
      case Phase::kHandshake:
        if (Clock::now() >= deadline_) {
          return Finish(
              Failed(link::NoHelloError(description_, serial_.connect_timeout_seconds * 1000)));
        }
        handshake_.Poll(NowMs());
        Flush();
        return ArmHandshakeTimer();
    }
  }

  template <typename F>
  void WithStream(F f) {
    if (socket_ != nullptr) f(*socket_);
    if (serial_port_ != nullptr) f(*serial_port_);
  }

  void Read() {
    WithStream([this](auto& stream) {
      stream.async_read_some(
          asio::buffer(read_buffer_),
          [self = shared_from_this(), epoch = epoch_](const error_code& ec, size_t n) {
            if (self->Stale(epoch)) return;
            if (n > 0 && self->Received(n)) return;  // answered
            if (ec) return self->Reopen(self->LostMessage(ec));
            self->Read();
          });
    });
  }

  std::string LostMessage(const error_code& ec) const {
    if (ec == asio::error::eof || ec.value() == EIO) {
      return tcp_ ? absl::StrCat("board connection lost: the connection to ", serial_.port,
                                 " was closed by the other end")
                  : absl::StrCat("board connection lost: ", description_, " hung up (unplugged?)");
    }
    return absl::StrCat("board connection lost: reading ", description_, ": ", ec.message());
  }

  // Feeds `n` bytes of read_buffer_ to the link; true once the board's HELLO answered.
  bool Received(size_t n) {
    size_t used = 0;
    for (;;) {
      used += link_.Receive(read_buffer_ + used, n - used, NowMs());
      const link::Link::Incoming* in = link_.incoming();
      if (in == nullptr) break;
      link::Hello hello;
      const bool answer = in->type == link::FrameType::kHello &&
                          link::Decode(in->payload, in->size, &hello) && handshake_.OnHello(hello);
      link_.Release();
      if (answer) {
        Answered();
        return true;
      }
    }
    Flush();
    return false;
  }

  void Answered() {
    BoardProbe probe;
    probe.status = handshake_.VersionStatus();
    probe.other_protocol = !probe.status.ok();
    const link::Hello& hello = handshake_.hello();
    probe.board = hello.board;
    probe.build_id = hello.build_id;
    probe.firmware_version = hello.firmware_version;
    probe.cache_capacity = hello.cache_capacity;
    probe.model_slot_size = hello.model_slot_size;
    Finish(std::move(probe));
  }

  void Flush() {
    if (writing_ || output_.empty()) return;
    writing_ = true;
    sending_ = output_.Take();
    WithStream([this](auto& stream) {
      asio::async_write(
          stream, asio::buffer(sending_),
          [self = shared_from_this(), epoch = epoch_](const error_code& ec, size_t) {
            if (self->Stale(epoch)) return;
            self->writing_ = false;
            if (ec) {
              return self->Reopen(absl::StrCat("board connection lost: writing ",
                                               self->description_, ": ", ec.message()));
            }
            self->Flush();
          });
    });
  }

  // A handler of an earlier stream (closed since), or of a finished probe.
  bool Stale(uint64_t epoch) const { return finished_ || epoch != epoch_; }

  void CloseStream() {
    ++epoch_;  // handlers still queued for the old stream do nothing
    error_code ignored;
    resolver_.cancel();
    if (socket_ != nullptr) socket_->close(ignored);
    if (serial_port_ != nullptr) serial_port_->close(ignored);
    socket_.reset();
    serial_port_.reset();
    writing_ = false;
    output_.Take();
  }

  void Finish(BoardProbe probe) {
    finished_ = true;
    CloseStream();
    timer_.cancel();
    // Posted: Cancel() never calls back from inside, and the answer runs on a clean stack.
    asio::post(io_, [done = std::move(done_), probe = std::move(probe)]() mutable {
      done(std::move(probe));
    });
  }

  asio::io_context& io_;
  const SerialBoardConfig serial_;
  Done done_;
  asio::steady_timer timer_;
  asio::ip::tcp::resolver resolver_;
  std::unique_ptr<asio::ip::tcp::socket> socket_;
  std::unique_ptr<asio::serial_port> serial_port_;
  PendingOutput output_;
  std::vector<uint8_t> tx_, rx_, reorder_;
  link::Link link_;
  link::HostHandshake handshake_;
  const bool tcp_;
  const std::string description_;
  Clock::time_point start_, deadline_;
  Phase phase_ = Phase::kOpening;
  uint64_t epoch_ = 0;
  bool finished_ = false;
  bool writing_ = false;
  std::vector<uint8_t> sending_;  // the bytes of the write in progress
  uint8_t read_buffer_[4096];
};

}  // namespace

std::shared_ptr<BoardProbeCall> BoardProbeCall::Start(boost::asio::io_context& io,
                                                      const SerialBoardConfig& serial, Done done) {
  auto probe = std::make_shared<Probe>(io, serial, std::move(done));
  asio::post(io, [probe] { probe->Begin(); });
  return probe;
}

}  // namespace boardlab::agent
