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
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/child_process.h"
#include "tests/support/free_port.h"
#include "tests/support/process.h"

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

  /// The board's model slot "flash memory" (qemu-board.sh --model): the file need not exist.
  /// Before Start().
  void set_model_slot_file(const std::filesystem::path& file) { model_slot_file_ = file; }

  /// Starts qemu-board.sh and waits (up to 20 s) for QEMU's pid file.
  ::testing::AssertionResult Start() {
    std::filesystem::remove(dir_ / "qemu.pid");
    std::vector<std::string> argv = {"/bin/bash", script_,
                                     "--listen",  "127.0.0.1:" + std::to_string(port_),
                                     "--monitor", monitor(),
                                     "--elf",     elf_,
                                     "--pidfile", (dir_ / "qemu.pid").string()};
    if (!model_slot_file_.empty()) argv.insert(argv.end(), {"--model", model_slot_file_.string()});
    auto started = Process::Start(argv, log().string(), log().string());
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
  /// qemu-board.sh --flash-model: `model` into the slot, then a power cycle. Empty when it
  /// worked, else the script's output.
  std::string FlashModel(const std::filesystem::path& model) const {
    const CommandResult flashed = RunCommand("/bin/bash '" + script_ + "' --flash-model " +
                                             monitor() + " '" + model.string() + "'");
    return flashed.exit_code == 0
               ? ""
               : "exit " + std::to_string(flashed.exit_code) + ": " + flashed.output;
  }

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
  std::filesystem::path model_slot_file_;
  std::unique_ptr<Process> process_;
};

}  // namespace boardlab::testing
