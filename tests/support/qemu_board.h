#pragma once

// One board-link board for tests: firmware/qemu-board.sh running an an505 protocol ELF under
// QEMU, its UART0 on a free TCP port (as ser2net serves a real board's UART) and its monitor on
// another, in its own directory (log, QEMU's pid file).
//
//   QemuBoard board(dir, BOARDLAB_QEMU_BOARD, BOARDLAB_FIRMWARE_AN505_ELF);
//   ASSERT_TRUE(board.Start());
//   boardlab-run --board serial --port board.port() ...
//   ::kill(board.qemu_pid(), SIGKILL);   // the board is gone

#include <sys/types.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/support/child_process.h"
#include "tests/support/free_port.h"

namespace boardlab::testing {

class QemuBoard {
 public:
  /// `script` is firmware/qemu-board.sh, `elf` the board-link firmware it runs.
  QemuBoard(const std::filesystem::path& dir, std::string script, std::string elf)
      : dir_(dir),
        script_(std::move(script)),
        elf_(std::move(elf)),
        port_(FreeLoopbackPort()),
        monitor_(FreeLoopbackPort()) {}
  ~QemuBoard() { Stop(); }

  /// Starts qemu-board.sh and waits (up to 20 s) for QEMU's pid file.
  ::testing::AssertionResult Start() {
    std::filesystem::remove(dir_ / "qemu.pid");
    auto started = Process::Start(
        {"/bin/bash", script_, "--listen", "127.0.0.1:" + std::to_string(port_), "--monitor",
         monitor(), "--elf", elf_, "--pidfile", (dir_ / "qemu.pid").string()},
        log().string(), log().string());
    if (!started.ok()) return ::testing::AssertionFailure() << started.status();
    process_ = *std::move(started);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (qemu_pid() <= 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        return ::testing::AssertionFailure() << "QEMU did not start:\n" << Read(log());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return ::testing::AssertionSuccess();
  }
  void Stop() {
    if (process_) process_->Terminate(std::chrono::seconds(5));
  }

  std::string port() const { return "tcp:127.0.0.1:" + std::to_string(port_); }
  int tcp_port() const { return port_; }
  std::string monitor() const { return "127.0.0.1:" + std::to_string(monitor_); }
  const std::string& script() const { return script_; }
  std::filesystem::path log() const { return dir_ / "qemu-board.log"; }
  pid_t qemu_pid() const {
    const std::string text = Read(dir_ / "qemu.pid");
    return text.empty() ? 0 : static_cast<pid_t>(std::atoi(text.c_str()));
  }
  Process* process() { return process_.get(); }

 private:
  static std::string Read(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::filesystem::path dir_;
  std::string script_;
  std::string elf_;
  int port_;
  int monitor_;
  std::unique_ptr<Process> process_;
};

}  // namespace boardlab::testing
