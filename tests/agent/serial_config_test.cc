// The `serial` driver's configuration (agent/config.h, docs/boards.md): the documented example
// parses, and every mistake gets a message that names the board and the key.

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "agent/command_template.h"
#include "agent/config.h"
#include "gtest/gtest.h"

namespace boardlab::agent {
namespace {

namespace fs = std::filesystem;

// A file that exists, for firmware.elf.
std::string FirmwareFile() {
  const fs::path path = fs::path(::testing::TempDir()) / "serial_config_firmware.elf";
  std::ofstream(path) << "ELF";
  return path.string();
}

std::string Config(const std::string& board) {
  return "agent_id: a\nserver: 127.0.0.1:7400\nstate_dir: /tmp/x\nboards:\n  - " + board + "\n";
}

absl::Status Check(const std::string& board) {
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(Config(board));
  if (!config.ok()) return config.status();
  return ValidateAgentConfig(*config);
}

TEST(SerialConfig, ParsesABoardWithEveryKey) {
  const std::string yaml = R"(
agent_id: lab-b-host2
server: 127.0.0.1:7400
state_dir: /tmp/agent
boards:
  - id: evk-0
    driver: serial
    type: imxrt700-evk
    port: /dev/serial/by-id/usb-NXP_MCU-LINK_ABC123-if01
    baud: 3000000
    connect_timeout_seconds: 5
    check_at_start: false
    firmware: {elf: FIRMWARE, build_id: 0123456789abcdef}
    flash: {command: "LinkServer flash MIMXRT798S:MIMXRT700-EVK load {elf}", timeout_seconds: 120, attempts: 2}
    reset: "LinkServer reset MIMXRT798S:MIMXRT700-EVK"
    power_cycle: {command: "uhubctl -l 1-1 -p 3 -a cycle", timeout_seconds: 30}
    model_flash: {command: "LinkServer flash MIMXRT798S:MIMXRT700-EVK load --addr 0x28200000 {model}", timeout_seconds: 600, when: always}
)";
  std::string text = yaml;
  text.replace(text.find("FIRMWARE"), 8, FirmwareFile());
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(text);
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(ValidateAgentConfig(*config).ok()) << ValidateAgentConfig(*config);
  const BoardConfig& board = config->boards[0];
  EXPECT_EQ(board.driver, "serial");
  EXPECT_EQ(board.serial.port, "/dev/serial/by-id/usb-NXP_MCU-LINK_ABC123-if01");
  EXPECT_EQ(board.serial.baud, 3000000);
  EXPECT_EQ(board.serial.connect_timeout_seconds, 5);
  EXPECT_FALSE(board.serial.check_at_start);
  EXPECT_EQ(board.serial.firmware_elf, FirmwareFile());
  EXPECT_EQ(board.serial.firmware_build_id, "0123456789abcdef");
  EXPECT_EQ(board.serial.flash.command, "LinkServer flash MIMXRT798S:MIMXRT700-EVK load {elf}");
  EXPECT_EQ(board.serial.flash.timeout_seconds, 120);
  EXPECT_EQ(board.serial.flash_attempts, 2);
  EXPECT_EQ(board.serial.reset.command, "LinkServer reset MIMXRT798S:MIMXRT700-EVK");
  EXPECT_EQ(board.serial.reset.timeout_seconds, 60);
  EXPECT_EQ(board.serial.power_cycle.timeout_seconds, 30);
  EXPECT_EQ(board.serial.model_flash.command,
            "LinkServer flash MIMXRT798S:MIMXRT700-EVK load --addr 0x28200000 {model}");
  EXPECT_EQ(board.serial.model_flash.timeout_seconds, 600);
  EXPECT_EQ(board.serial.model_flash_when, ModelFlashPolicy::kAlways);
}

TEST(SerialConfig, ModelFlashDefaultsToModelsLargerThanTheCache) {
  const std::string board =
      "{id: q, driver: serial, port: 'tcp:127.0.0.1:5555', model_flash: 'cp {model} "
      "/var/lib/slot.bin'}";
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(Config(board));
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(Check(board).ok()) << Check(board);
  EXPECT_EQ(config->boards[0].serial.model_flash.command, "cp {model} /var/lib/slot.bin");
  EXPECT_EQ(config->boards[0].serial.model_flash.timeout_seconds, 60);
  EXPECT_EQ(config->boards[0].serial.model_flash_when, ModelFlashPolicy::kTooLarge);
}

TEST(SerialConfig, DefaultsForATcpPort) {
  absl::StatusOr<AgentConfig> config =
      ParseAgentConfig("boards:\n  - {id: q, driver: serial, port: 'tcp:127.0.0.1:5555'}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->boards[0].type, "imxrt700-evk");
  EXPECT_EQ(config->boards[0].serial.baud, 921600);
  EXPECT_EQ(config->boards[0].serial.connect_timeout_seconds, 10);
  EXPECT_TRUE(config->boards[0].serial.check_at_start);
  EXPECT_EQ(config->boards[0].serial.flash_attempts, 3);
  EXPECT_TRUE(config->boards[0].serial.flash.command.empty());
  EXPECT_TRUE(Check("{id: q, driver: serial, port: 'tcp:127.0.0.1:5555'}").ok());
}

TEST(SerialConfig, MistakesNameTheBoardAndTheKey) {
  const std::string elf = FirmwareFile();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{id: e, driver: serial}",
       "Invalid configuration of board 'e': port is missing (a /dev/serial/by-id/... path or "
       "tcp:HOST:PORT)"},
      {"{id: e, driver: serial, port: 'tcp:localhost'}",
       "Invalid configuration of board 'e'.port: 'tcp:localhost' must be tcp:HOST:PORT"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, baud: 1234}",
       "Invalid configuration of board 'e'.baud: 1234 is not a standard rate (9600 ... 4000000)"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, baud: fast}",
       "Invalid configuration of boards[0].baud: 'fast' is not an integer"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, baud: 0}",
       "Invalid configuration of boards[0].baud: must be positive"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, check_at_start: maybe}",
       "Invalid configuration of boards[0].check_at_start: 'maybe' is not true or false"},
      {"{id: e, driver: sim, port: /dev/ttyACM0}",
       "Invalid configuration of boards[0].port: is a setting of driver serial, not of driver "
       "'sim'"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, flash: 'pyocd flash {hex}'}",
       "Invalid configuration of board 'e': flash is set but firmware is not (the ELF it "
       "writes)"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, firmware: {elf: " + elf + "}}",
       "Invalid configuration of board 'e': firmware is set but flash is not (the command that "
       "writes it)"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, firmware: {elf: /nonexistent/fw.elf}, "
       "flash: 'x {elf}'}",
       "Invalid configuration of board 'e'.firmware.elf: '/nonexistent/fw.elf' is not a file"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, firmware: {elf: " + elf +
           "}, flash: 'x {image}'}",
       "Invalid configuration of board 'e'.flash: unknown placeholder {image} (known: {elf} {hex} "
       "{bin} {board} {port} {model})"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, model_flash: 'pyocd load {board}.bin'}",
       "Invalid configuration of board 'e'.model_flash: does not use {model} (the artifact file "
       "it writes)"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, reset: 'reset {model}'}",
       "Invalid configuration of board 'e'.reset: uses {model}, which only model_flash has"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, model_flash: 'x {elf} {model}'}",
       "Invalid configuration of board 'e'.model_flash: uses {elf} but the board has no "
       "firmware.elf"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, model_flash: {command: 'x {model}', when: "
       "sometimes}}",
       "Invalid configuration of boards[0].model_flash.when: 'sometimes' is not always or "
       "too-large"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, model_flash: {command: 'x {model}', "
       "attempts: 2}}",
       "Invalid configuration of boards[0].model_flash.attempts: unknown key (known: command, "
       "timeout_seconds, when)"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, model_flash: {when: always}}",
       "Invalid configuration of boards[0].model_flash: command is missing"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, model_flash: {command: 'x {model}', "
       "timeout_seconds: 0}}",
       "Invalid configuration of boards[0].model_flash.timeout_seconds: must be positive"},
      {"{id: e, driver: sim, model_flash: 'x {model}'}",
       "Invalid configuration of boards[0].model_flash: is a setting of driver serial, not of "
       "driver 'sim'"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, reset: 'reset {elf}'}",
       "Invalid configuration of board 'e'.reset: uses {elf} but the board has no firmware.elf"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, power_cycle: 'uhubctl -p {port'}",
       "Invalid configuration of board 'e'.power_cycle: a '{' without its '}' at character 12"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, reset: {command: r, attempts: 2}}",
       "Invalid configuration of boards[0].reset.attempts: unknown key (known: command, "
       "timeout_seconds)"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, reset: {timeout_seconds: 2}}",
       "Invalid configuration of boards[0].reset: command is missing"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, firmware: {elf: " + elf + ", id: 1}, flash: f}",
       "Invalid configuration of boards[0].firmware.id: unknown key (known: elf, build_id)"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, flash: {command: f, attempts: 0}}",
       "Invalid configuration of boards[0].flash.attempts: must be positive"},
      {"{id: e, driver: telnet}",
       "Invalid configuration of board 'e': driver 'telnet' is unknown (sim, qemu or serial)"},
  };
  for (const auto& [board, message] : cases) {
    absl::Status status = Check(board);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << board << ": " << status;
    EXPECT_EQ(std::string(status.message()), message) << board;
  }
}

// Sets an environment variable for one scope (the test fault's permission).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

TEST(SerialConfig, TestFaultIsRefusedOutsideTests) {
  ::unsetenv(kAllowTestFaultsEnv);
  absl::Status status =
      Check("{id: e, driver: serial, port: /dev/ttyACM0, test_fault: {fault: hang}}");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_EQ(
      std::string(status.message()),
      "Invalid configuration of boards[0].test_fault: is for the agent's tests only (it makes "
      "the board fail on purpose); refused unless BOARDLAB_AGENT_ALLOW_TEST_FAULTS=1");
  ScopedEnv wrong(kAllowTestFaultsEnv, "yes");
  EXPECT_TRUE(absl::IsInvalidArgument(
      Check("{id: e, driver: serial, port: /dev/ttyACM0, test_fault: {fault: hang}}")));
}

TEST(SerialConfig, TestFaultUnderATest) {
  ScopedEnv allow(kAllowTestFaultsEnv, "1");
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(
      Config("{id: e, driver: serial, port: /dev/ttyACM0, test_fault: {fault: hang, jobs: 2}}"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->boards[0].serial.test_fault, "hang");
  EXPECT_EQ(config->boards[0].serial.test_fault_jobs, 2);
  config = ParseAgentConfig(
      Config("{id: e, driver: serial, port: /dev/ttyACM0, test_fault: {fault: reset}}"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->boards[0].serial.test_fault_jobs, 1);  // one job unless told

  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{id: e, driver: serial, port: /dev/ttyACM0, test_fault: {fault: melt}}",
       "Invalid configuration of boards[0].test_fault.fault: 'melt' is not a test fault (hang, "
       "hang-without-watchdog, hardfault, reset)"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, test_fault: {fault: hang, jobs: 0}}",
       "Invalid configuration of boards[0].test_fault.jobs: must be positive"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, test_fault: hang}",
       "Invalid configuration of boards[0].test_fault: must be a map with fault and jobs"},
      {"{id: e, driver: serial, port: /dev/ttyACM0, test_fault: {fault: hang, when: 1}}",
       "Invalid configuration of boards[0].test_fault.when: unknown key (known: fault, jobs)"},
      {"{id: e, driver: sim, test_fault: {fault: hang}}",
       "Invalid configuration of boards[0].test_fault: is a setting of driver serial, not of "
       "driver 'sim'"},
  };
  for (const auto& [board, message] : cases) {
    absl::Status status = Check(board);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << board << ": " << status;
    EXPECT_EQ(std::string(status.message()), message) << board;
  }
}

TEST(CommandTemplate, ExpandsPlaceholdersAsShellWords) {
  EXPECT_EQ(ExpandCommandTemplate("pyocd flash -t mimxrt700 {hex} # {board}",
                                  {{"hex", "/fw/a b.hex"}, {"board", "evk-0"}}),
            "pyocd flash -t mimxrt700 '/fw/a b.hex' # 'evk-0'");
  EXPECT_EQ(ExpandCommandTemplate("echo {port}", {{"port", "it's"}}), "echo 'it'\\''s'");
  EXPECT_EQ(ExpandCommandTemplate("echo {bin}", {}), "echo ''");
  EXPECT_TRUE(CheckCommandTemplate("JLinkExe -CommandFile {board}.jlink").ok());
  EXPECT_FALSE(CheckCommandTemplate("awk '{print $1}'").ok());
  EXPECT_TRUE(UsesPlaceholder("x {hex}", "hex"));
  EXPECT_FALSE(UsesPlaceholder("x {hex}", "bin"));
}

}  // namespace
}  // namespace boardlab::agent
