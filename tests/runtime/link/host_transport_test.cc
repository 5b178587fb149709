// The host's byte streams (runtime/link/host_transport.h) over real file descriptors: a serial
// port (the far side of a pseudo-terminal pair stands in for the board's UART; termios takes its
// baud rate and raw mode like a USB serial adapter's) and a TCP socket (as ser2net or
// qemu-board.sh serve a board). Each carries a whole host session to a board endpoint that the
// test relays onto the other end of the descriptor; timeouts, a closed far end and the errors of
// a wrong port are checked on both.

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/link/host_session.h"
#include "runtime/link/host_transport.h"
#include "tests/runtime/link/fd_relay.h"
#include "tests/runtime/link/link_test_support.h"
#include "tests/support/free_port.h"

namespace boardlab::link {
namespace {

using Clock = std::chrono::steady_clock;
using testing::ByteChannel;
using testing::FakeBoard;
using testing::FakeRunner;
using testing::Pty;
using testing::Relay;

long ElapsedMs(Clock::time_point start) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

HostSessionOptions FastOptions() {
  HostSessionOptions o;
  o.connect_timeout_ms = 5000;
  o.connect_retry_ms = 50;
  o.link.initial_timeout_ms = 300;
  o.link.min_timeout_ms = 50;
  o.link.max_timeout_ms = 1000;
  return o;
}

// A whole job over `stream` to a fake board behind `fd`: the artifact, two inputs, the checked
// outputs and the ETDump all cross the descriptor.
void RunJobThrough(ByteStream& stream, int fd) {
  ByteChannel to_board, to_host;
  FakeBoard board(to_board, to_host);
  board.Start();
  Relay relay(fd, to_board, to_host);
  HostSession session(stream, FastOptions());
  HostJob job;
  job.artifact.assign(20000, 0x5a);
  job.artifact[7] = 1;
  job.inputs = {std::vector<uint8_t>(300, 3), std::vector<uint8_t>(2000, 4)};
  job.expected = FakeRunner::ExpectedOutputs(job.artifact, job.inputs);
  job.want_etdump = true;
  job.run_timeout_seconds = 20;
  HostJobReport report;
  const absl::Status status = session.RunJob(job, &report);
  board.Stop();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(report.result.verdict, Verdict::kPass);
  EXPECT_EQ(report.outputs, job.expected);
  EXPECT_EQ(report.etdump, FakeRunner::Etdump(5000));
  EXPECT_EQ(report.artifact_bytes_sent, 20000u);
}

TEST(HostTransport, SerialPortCarriesAJob) {
  Pty pty;
  ASSERT_FALSE(pty.path.empty()) << "openpty failed";
  std::string error;
  std::unique_ptr<ByteStream> stream = OpenByteStream(pty.path, 921600, &error);
  ASSERT_NE(stream, nullptr) << error;
  EXPECT_EQ(stream->description(), pty.path + " at 921600 baud");
  // The stream set the device to 921600 baud, 8N1, raw (no echo, no line editing).
  const int device = ::open(pty.path.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(device, 0);
  termios t = {};
  ASSERT_EQ(::tcgetattr(device, &t), 0);
  ::close(device);
  EXPECT_EQ(::cfgetospeed(&t), static_cast<speed_t>(B921600));
  EXPECT_EQ(t.c_cflag & CSIZE, static_cast<tcflag_t>(CS8));
  EXPECT_EQ(t.c_cflag & (PARENB | CSTOPB | CRTSCTS), 0u);
  EXPECT_EQ(t.c_lflag & (ICANON | ECHO | ISIG), 0u);
  EXPECT_EQ(t.c_iflag & (IXON | ICRNL), 0u);
  EXPECT_EQ(t.c_oflag & OPOST, 0u);
  RunJobThrough(*stream, pty.board);
}

TEST(HostTransport, SerialReadWaitsForItsTimeoutThenSeesTheFarEndGo) {
  Pty pty;
  ASSERT_FALSE(pty.path.empty());
  std::string error;
  std::unique_ptr<ByteStream> stream = OpenByteStream(pty.path, 115200, &error);
  ASSERT_NE(stream, nullptr) << error;
  uint8_t buffer[16];
  auto start = Clock::now();
  EXPECT_EQ(stream->Read(buffer, sizeof(buffer), 200), 0);
  EXPECT_GE(ElapsedMs(start), 190);
  EXPECT_LT(ElapsedMs(start), 2000);
  start = Clock::now();
  EXPECT_EQ(stream->Read(buffer, sizeof(buffer), 0), 0);  // a poll: no wait
  EXPECT_LT(ElapsedMs(start), 100);
  // Bytes both ways, unchanged (raw: \r and \n stay what they are).
  const uint8_t out[] = {'\r', '\n', 0x00, 0xff, 0x11, 0x13};
  ASSERT_TRUE(stream->Write(out, sizeof(out)));
  uint8_t got[sizeof(out)] = {};
  size_t n = 0;
  while (n < sizeof(out)) {
    pollfd p = {pty.board, POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 2000), 1);
    const ssize_t r = ::read(pty.board, got + n, sizeof(got) - n);
    ASSERT_GT(r, 0);
    n += static_cast<size_t>(r);
  }
  EXPECT_EQ(std::vector<uint8_t>(got, got + n), std::vector<uint8_t>(out, out + sizeof(out)));
  ASSERT_EQ(::write(pty.board, out, sizeof(out)), static_cast<ssize_t>(sizeof(out)));
  std::vector<uint8_t> back;
  while (back.size() < sizeof(out)) {
    const long r = stream->Read(buffer, sizeof(buffer), 2000);
    ASSERT_GT(r, 0) << stream->error();
    back.insert(back.end(), buffer, buffer + r);
  }
  EXPECT_EQ(back, std::vector<uint8_t>(out, out + sizeof(out)));
  // The adapter goes away (the far end closes): the next read fails and says so.
  ::close(pty.board);
  pty.board = -1;
  EXPECT_EQ(stream->Read(buffer, sizeof(buffer), 2000), -1);
  EXPECT_EQ(stream->error(), pty.path + " at 115200 baud hung up (unplugged?)");
  EXPECT_FALSE(stream->Write(out, sizeof(out)));
}

TEST(HostTransport, WrongSerialPortsAreRefusedWithTheReason) {
  std::string error;
  EXPECT_EQ(OpenByteStream("/dev/null", 921600, &error), nullptr);
  EXPECT_EQ(error, "'/dev/null' is not a serial port");
  EXPECT_EQ(OpenByteStream("/dev/boardlab-no-such-port", 921600, &error), nullptr);
  EXPECT_EQ(error, "opening serial port '/dev/boardlab-no-such-port': No such file or directory");
  Pty pty;
  EXPECT_EQ(OpenByteStream(pty.path, 12345, &error), nullptr);
  EXPECT_EQ(error, "baud rate 12345 is not a standard rate (9600 ... 4000000)");
  EXPECT_TRUE(IsSupportedBaudRate(3000000));
  EXPECT_FALSE(IsSupportedBaudRate(0));
}

TEST(HostTransport, TcpCarriesAJob) {
  boardlab::testing::LoopbackListener listener;
  ASSERT_FALSE(listener.port().empty());
  std::string error;
  std::unique_ptr<ByteStream> stream = OpenByteStream(listener.port(), 921600, &error, 2000);
  ASSERT_NE(stream, nullptr) << error;
  EXPECT_EQ(stream->description(), listener.port());
  const int board = listener.Accept();
  ASSERT_GE(board, 0);
  RunJobThrough(*stream, board);
  ::close(board);
}

TEST(HostTransport, TcpReadTimesOutThenSeesTheCloseAndRefusalsAreRetried) {
  boardlab::testing::LoopbackListener listener;
  std::string error;
  std::unique_ptr<ByteStream> stream = OpenByteStream(listener.port(), 921600, &error, 2000);
  ASSERT_NE(stream, nullptr) << error;
  const int board = listener.Accept();
  uint8_t buffer[8];
  const auto start = Clock::now();
  EXPECT_EQ(stream->Read(buffer, sizeof(buffer), 150), 0);
  EXPECT_GE(ElapsedMs(start), 140);
  ::close(board);
  EXPECT_EQ(stream->Read(buffer, sizeof(buffer), 2000), -1);
  EXPECT_EQ(stream->error(),
            "the connection to " + listener.port() + " was closed by the other end");

  // Nothing listens: refused connections are tried again until the timeout, then reported.
  const std::string closed_port = listener.port();
  listener.Close();
  const auto refused_start = Clock::now();
  EXPECT_EQ(OpenByteStream(closed_port, 921600, &error, 500), nullptr);
  EXPECT_GE(ElapsedMs(refused_start), 450);
  EXPECT_EQ(error, "connecting to " + closed_port + ": Connection refused");
  EXPECT_EQ(OpenByteStream("tcp:localhost", 921600, &error, 500), nullptr);
  EXPECT_EQ(error, "port 'tcp:localhost': expected tcp:HOST:PORT");
}

}  // namespace
}  // namespace boardlab::link
