// board_link_bench: how fast the board link moves an artifact, and what the board's artifact cache
// saves.
//
//   board_link_bench                    the emulated UART lines below, then QEMU with vww
//   board_link_bench --qemu MODEL...    QEMU only, with these shared models (substrings of the
//                                       names in ../shared/models, e.g. mobilenet)
//   board_link_bench --no-qemu          the emulated lines only
//   --receive-window N                  frames the emulated board lets the host send ahead
//                                       (default 8, what both firmware boards announce)
//   --repeat N                          rounds per emulated case (default 3; medians)
//
// 1. Emulated UART: the host session and a board endpoint (in this process, a runner that
//    answers at once) over an in-memory line that passes 10 bits per byte at the baud rate and
//    adds a one-way latency (USB serial adapters buffer up to their latency timer: 1 ms at best,
//    16 ms by default for FTDI chips), for 64 KiB, 256 KiB and 1 MiB artifacts at 921,600 and
//    3,000,000 baud. Each case runs --repeat times (default 3), each time a new artifact sent
//    to the board and then the same job again (a cache hit); the medians are printed:
//    - "in job": what the artifact costs a whole job, as a share of the line rate: its line time
//      (size / line rate, framing not counted) divided by the time it adds to the job (the job
//      with the artifact sent minus the same job with a cache hit; both connect, send a 1 KiB
//      input, run and collect the results). The host sends the inputs and RUN behind the
//      artifact without waiting for the board's BLOB_STATUS, so no round trip is added. Target
//      >= 90 % from 64 KiB.
//    - "confirmed": artifact payload bytes per second from BLOB_BEGIN to the board's
//      BLOB_STATUS for it, as a share of the line rate. It holds one round trip however the
//      link is built: "bound" is the share such a confirmed transfer cannot beat,
//      size / (size / line rate + 2 x latency), framing not even counted.
//    - "job sent", "job cached": the whole jobs' times.
// 2. QEMU: the an505 board-link firmware behind firmware/qemu-board.sh (UART0 on a TCP port):
//    artifact bytes per second for shared models, first run (sent) and second run (cache hit).
//
// Figures depend on the host's load: QEMU feeds its emulated UART one byte per main-loop turn.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "compiler/driver.h"
#include "runtime/link/host_session.h"
#include "tests/runtime/link/link_test_support.h"
#include "tests/support/child_process.h"
#include "tests/support/free_port.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;
namespace link = boardlab::link;
namespace lt = boardlab::link::testing;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// One job on a fresh session; returns false (after printing why) on failure.
bool RunJob(link::ByteStream& stream, const link::HostJob& job, link::HostJobReport* report,
            double* seconds) {
  link::HostSession session(stream, link::HostSessionOptions{});
  const Clock::time_point start = Clock::now();
  const absl::Status status = session.RunJob(job, report);
  *seconds = Seconds(start);
  if (!status.ok()) {
    std::printf("  job failed: %s\n", std::string(status.message()).c_str());
    return false;
  }
  return true;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The medians of one emulated line and artifact size over `repeat` rounds.
struct LineCase {
  std::vector<double> sent, cached, confirmed;  // seconds: jobs, BLOB_BEGIN to BLOB_STATUS
};

// `repeat` rounds of one case on one board: each round a new artifact (sent), then again (hit).
bool MeasureLine(int baud, int latency_ms, size_t size, uint8_t receive_window, int repeat,
                 LineCase* out) {
  lt::ByteChannel to_board, to_host;
  const double line = baud / 10.0;
  to_board.SetLine(line, std::chrono::milliseconds(latency_ms));
  to_host.SetLine(line, std::chrono::milliseconds(latency_ms));
  lt::FakeBoardOptions options;
  options.cache_bytes = 2u << 20;
  options.receive_window = receive_window;
  lt::FakeBoard board(to_board, to_host, options);
  board.Start();
  lt::PipeStream stream(to_host, to_board);
  bool ok = true;
  for (int round = 0; round < repeat && ok; ++round) {
    link::HostJob job;
    job.artifact = lt::RandomBytes(size, static_cast<uint32_t>(size + baud + round));
    job.inputs = {lt::RandomBytes(1024, 1)};
    link::HostJobReport sent, cached;
    double sent_seconds = 0, cached_seconds = 0;
    ok = RunJob(stream, job, &sent, &sent_seconds) && RunJob(stream, job, &cached, &cached_seconds);
    if (ok && (sent.artifact_cache_hit || !cached.artifact_cache_hit)) {
      std::printf("  round %d: the first job %s the cache, the second %s\n", round,
                  sent.artifact_cache_hit ? "hit" : "missed",
                  cached.artifact_cache_hit ? "hit" : "missed");
      ok = false;
    }
    if (!ok) break;
    out->sent.push_back(sent_seconds);
    out->cached.push_back(cached_seconds);
    out->confirmed.push_back(sent.artifact_seconds);
  }
  board.Stop();
  return ok;
}

void EmulatedLines(uint8_t receive_window, int repeat) {
  std::printf(
      "Emulated UART (8N1: 10 bits per byte), board endpoint in process, receive window %d, "
      "median of %d rounds:\n",
      receive_window, repeat);
  std::printf("%10s %8s %9s %8s %10s %6s %10s %11s %8s\n", "baud", "latency", "artifact", "in job",
              "confirmed", "bound", "job sent", "job cached", "saved");
  for (const int latency_ms : {1, 16}) {
    for (const int baud : {921600, 3000000}) {
      for (const size_t size : {size_t{64} << 10, size_t{256} << 10, size_t{1} << 20}) {
        LineCase measured;
        if (!MeasureLine(baud, latency_ms, size, receive_window, repeat, &measured)) continue;
        const double line = baud / 10.0;
        const double wire_seconds = static_cast<double>(size) / line;
        const double sent = Median(measured.sent), cached = Median(measured.cached);
        const double in_job = wire_seconds / (sent - cached);
        const double confirmed = wire_seconds / Median(measured.confirmed);
        const double bound = wire_seconds / (wire_seconds + 2 * latency_ms / 1000.0);
        std::printf("%10d %6d ms %8zuK %7.1f%% %9.1f%% %5.1f%% %9.3fs %10.3fs %7.3fs\n", baud,
                    latency_ms, size >> 10, 100.0 * in_job, 100.0 * confirmed, 100.0 * bound, sent,
                    cached, sent - cached);
      }
    }
  }
}

void Qemu(const std::vector<std::string>& wanted) {
  if (!fs::exists(BOARDLAB_FIRMWARE_AN505_ELF)) {
    std::printf("QEMU: skipped, no %s\n", BOARDLAB_FIRMWARE_AN505_ELF);
    return;
  }
  const fs::path dir =
      fs::temp_directory_path() / ("board_link_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int port = boardlab::testing::FreeLoopbackPort();
  auto board = boardlab::testing::Process::Start(
      {"/bin/bash", BOARDLAB_QEMU_BOARD, "--listen", "127.0.0.1:" + std::to_string(port), "--elf",
       BOARDLAB_FIRMWARE_AN505_ELF},
      (dir / "qemu.log").string(), (dir / "qemu.log").string());
  if (!board.ok()) {
    std::printf("QEMU: cannot start qemu-board.sh: %s\n",
                std::string(board.status().message()).c_str());
    return;
  }
  std::printf("\nQEMU mps2-an505, board-link firmware, UART0 over TCP (-icount shift=0):\n");
  std::printf("%-36s %10s %12s %10s %10s %8s\n", "model", "artifact", "payload B/s", "job sent",
              "job cached", "saved");
  for (const std::string_view model : boardlab::testing::kRealModels) {
    bool selected = false;
    for (const std::string& w : wanted)
      selected = selected || model.find(w) != std::string_view::npos;
    if (!selected) continue;
    const std::optional<std::string> path = boardlab::testing::SharedModelPath(model);
    if (!path) {
      std::printf("%-36s absent\n", std::string(model).c_str());
      continue;
    }
    absl::StatusOr<boardlab::compiler::CompileResult> compiled =
        boardlab::compiler::Compile(boardlab::testing::ReadFile(*path), {});
    if (!compiled.ok()) continue;
    std::string error;
    std::unique_ptr<link::ByteStream> stream =
        link::OpenByteStream("tcp:127.0.0.1:" + std::to_string(port), 921600, &error, 20000);
    if (stream == nullptr) {
      std::printf("QEMU: %s\n", error.c_str());
      break;
    }
    link::HostJob job;
    job.artifact = compiled->pte;
    job.run_timeout_seconds = 600;
    // Inputs of the right size come from the firmware's check: random bytes of each input.
    link::HostJobReport sent, cached;
    double sent_seconds = 0, cached_seconds = 0;
    if (!RunJob(*stream, job, &sent, &sent_seconds) ||
        !RunJob(*stream, job, &cached, &cached_seconds)) {
      continue;
    }
    std::printf("%-36s %10zu %12.0f %9.1fs %9.2fs %7.1fs\n", std::string(model).c_str(),
                job.artifact.size(), job.artifact.size() / sent.artifact_seconds, sent_seconds,
                cached_seconds, sent_seconds - cached_seconds);
  }
  (*board)->Terminate(std::chrono::seconds(5));
  fs::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  bool emulated = true, qemu = true;
  int receive_window = 8;
  int repeat = 3;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--receive-window" && i + 1 < argc) {
      receive_window = std::atoi(argv[++i]);
      if (receive_window < 1 || receive_window > 255) {
        std::fprintf(stderr, "--receive-window takes 1 to 255\n");
        return 2;
      }
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
      if (repeat < 1 || repeat > 100) {
        std::fprintf(stderr, "--repeat takes 1 to 100\n");
        return 2;
      }
    } else if (a == "--no-qemu") {
      qemu = false;
    } else if (a == "--qemu") {
      emulated = false;
    } else {
      models.push_back(a);
    }
  }
  if (models.empty()) models = {"vww"};
  if (emulated) EmulatedLines(static_cast<uint8_t>(receive_window), repeat);
  if (qemu) Qemu(models);
  return 0;
}
