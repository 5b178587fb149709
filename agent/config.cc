#include "agent/config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "agent/command_template.h"
#include "runtime/link/host_transport.h"

namespace boardlab::agent {
namespace {

absl::Status Invalid(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("Invalid configuration of ", where, ": ", what));
}

// yaml-cpp reports errors by exception; they are caught here, at the library boundary.
absl::Status ReadScalar(const YAML::Node& node, const std::string& where, std::string& out) {
  if (!node.IsScalar()) return Invalid(where, "must be a string");
  out = node.Scalar();
  return absl::OkStatus();
}

// A scalar converted by yaml-cpp; `not_scalar` and "'VALUE' <not_converted>" say what is wrong.
template <typename T>
absl::Status ReadConverted(const YAML::Node& node, const std::string& where, const char* not_scalar,
                           const char* not_converted, T& out) {
  if (!node.IsScalar()) return Invalid(where, not_scalar);
  try {
    out = node.as<T>();
  } catch (const YAML::Exception&) {
    return Invalid(where, absl::StrCat("'", node.Scalar(), "' ", not_converted));
  }
  return absl::OkStatus();
}

absl::Status ReadInt(const YAML::Node& node, const std::string& where, int& out) {
  return ReadConverted(node, where, "must be a number", "is not an integer", out);
}

absl::Status ReadBool(const YAML::Node& node, const std::string& where, bool& out) {
  return ReadConverted(node, where, "must be true or false", "is not true or false", out);
}

absl::Status ReadPositive(const YAML::Node& node, const std::string& where, int& out) {
  absl::Status s = ReadInt(node, where, out);
  if (s.ok() && out <= 0) s = Invalid(where, "must be positive");
  return s;
}

// model_flash's `when`.
absl::Status ReadModelFlashPolicy(const YAML::Node& node, const std::string& where,
                                  ModelFlashPolicy& out) {
  std::string value;
  if (absl::Status s = ReadScalar(node, where, value); !s.ok()) return s;
  if (value == "always") {
    out = ModelFlashPolicy::kAlways;
  } else if (value == "too-large") {
    out = ModelFlashPolicy::kTooLarge;
  } else {
    return Invalid(where, absl::StrCat("'", value, "' is not always or too-large"));
  }
  return absl::OkStatus();
}

// The keys a command map takes besides `command` and `timeout_seconds`: flash's `attempts`,
// model_flash's `when` (null: not this command's).
struct CommandExtras {
  int* attempts = nullptr;
  ModelFlashPolicy* when = nullptr;
};

// A command template: `flash: "pyocd flash {hex}"`, or a map with `command`, `timeout_seconds`
// (and, for flash, `attempts`; for model_flash, `when`).
absl::Status ReadCommand(const YAML::Node& node, const std::string& where, BoardCommand& out,
                         CommandExtras extras = {}) {
  if (node.IsScalar()) return ReadScalar(node, where, out.command);
  if (!node.IsMap()) return Invalid(where, "must be a command string or a map with command");
  std::string known = "command, timeout_seconds";
  if (extras.attempts != nullptr) absl::StrAppend(&known, ", attempts");
  if (extras.when != nullptr) absl::StrAppend(&known, ", when");
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const std::string field = absl::StrCat(where, ".", key);
    absl::Status s;
    if (key == "command") {
      s = ReadScalar(kv.second, field, out.command);
    } else if (key == "timeout_seconds") {
      s = ReadPositive(kv.second, field, out.timeout_seconds);
    } else if (key == "attempts" && extras.attempts != nullptr) {
      s = ReadPositive(kv.second, field, *extras.attempts);
    } else if (key == "when" && extras.when != nullptr) {
      s = ReadModelFlashPolicy(kv.second, field, *extras.when);
    } else {
      s = Invalid(field, absl::StrCat("unknown key (known: ", known, ")"));
    }
    if (!s.ok()) return s;
  }
  if (out.command.empty()) return Invalid(where, "command is missing");
  return absl::OkStatus();
}

absl::Status ReadFirmware(const YAML::Node& node, const std::string& where,
                          SerialBoardConfig& serial) {
  if (!node.IsMap()) return Invalid(where, "must be a map with elf and build_id");
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const std::string field = absl::StrCat(where, ".", key);
    absl::Status s;
    if (key == "elf") {
      s = ReadScalar(kv.second, field, serial.firmware_elf);
    } else if (key == "build_id") {
      s = ReadScalar(kv.second, field, serial.firmware_build_id);
    } else {
      s = Invalid(field, "unknown key (known: elf, build_id)");
    }
    if (!s.ok()) return s;
  }
  if (serial.firmware_elf.empty()) return Invalid(where, "elf is missing");
  return absl::OkStatus();
}

// `test_fault: {fault: hang, jobs: 1}`: only when the agent runs under a test, which says so in
// kAllowTestFaultsEnv; a production config that carries it is refused, never silently obeyed.
absl::Status ReadTestFault(const YAML::Node& node, const std::string& where,
                           SerialBoardConfig& serial) {
  const char* allowed = std::getenv(kAllowTestFaultsEnv);
  if (allowed == nullptr || std::string(allowed) != "1") {
    return Invalid(where, absl::StrCat("is for the agent's tests only (it makes the board fail on "
                                       "purpose); refused unless ",
                                       kAllowTestFaultsEnv, "=1"));
  }
  if (!node.IsMap()) return Invalid(where, "must be a map with fault and jobs");
  serial.test_fault_jobs = 1;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const std::string field = absl::StrCat(where, ".", key);
    absl::Status s;
    if (key == "fault") {
      s = ReadScalar(kv.second, field, serial.test_fault);
    } else if (key == "jobs") {
      s = ReadPositive(kv.second, field, serial.test_fault_jobs);
    } else {
      s = Invalid(field, "unknown key (known: fault, jobs)");
    }
    if (!s.ok()) return s;
  }
  const std::set<std::string> faults = {"hang", "hang-without-watchdog", "hardfault", "reset"};
  if (faults.count(serial.test_fault) == 0) {
    return Invalid(absl::StrCat(where, ".fault"),
                   absl::StrCat("'", serial.test_fault,
                                "' is not a test fault (hang, hang-without-watchdog, hardfault, "
                                "reset)"));
  }
  return absl::OkStatus();
}

// The keys only the serial driver takes. False when `key` is none of them.
bool ParseSerialKey(const std::string& key, const YAML::Node& value, const std::string& field,
                    SerialBoardConfig& serial, absl::Status& status) {
  if (key == "port") {
    status = ReadScalar(value, field, serial.port);
  } else if (key == "baud") {
    status = ReadPositive(value, field, serial.baud);
  } else if (key == "connect_timeout_seconds") {
    status = ReadPositive(value, field, serial.connect_timeout_seconds);
  } else if (key == "check_at_start") {
    status = ReadBool(value, field, serial.check_at_start);
  } else if (key == "firmware") {
    status = ReadFirmware(value, field, serial);
  } else if (key == "flash") {
    status = ReadCommand(value, field, serial.flash, {&serial.flash_attempts, nullptr});
  } else if (key == "model_flash") {
    status = ReadCommand(value, field, serial.model_flash, {nullptr, &serial.model_flash_when});
  } else if (key == "reset") {
    status = ReadCommand(value, field, serial.reset);
  } else if (key == "power_cycle") {
    status = ReadCommand(value, field, serial.power_cycle);
  } else if (key == "test_fault") {
    status = ReadTestFault(value, field, serial);
  } else {
    return false;
  }
  return true;
}

absl::Status ParseBoard(const YAML::Node& node, size_t index, BoardConfig& board) {
  const std::string where = absl::StrCat("boards[", index, "]");
  if (!node.IsMap()) return Invalid(where, "must be a map with id, type, driver, tags");
  std::string serial_key;  // the first serial-only key, refused for other drivers
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    const std::string field = absl::StrCat(where, ".", key);
    absl::Status s;
    if (key == "id") {
      s = ReadScalar(kv.second, field, board.id);
    } else if (key == "type") {
      s = ReadScalar(kv.second, field, board.type);
    } else if (key == "driver") {
      s = ReadScalar(kv.second, field, board.driver);
    } else if (key == "timeout_seconds") {
      s = ReadInt(kv.second, field, board.timeout_seconds);
      if (s.ok() && board.timeout_seconds <= 0) s = Invalid(field, "must be positive");
    } else if (key == "tags") {
      if (!kv.second.IsMap()) {
        s = Invalid(field, "must be a map of key: value");
      } else {
        for (const auto& tag : kv.second) {
          std::string value;
          s = ReadScalar(tag.second, absl::StrCat(field, ".", tag.first.Scalar()), value);
          if (!s.ok()) break;
          board.tags[tag.first.Scalar()] = value;
        }
      }
    } else if (ParseSerialKey(key, kv.second, field, board.serial, s)) {
      if (serial_key.empty()) serial_key = key;
    } else {
      s = Invalid(field,
                  "unknown key (known: id, type, driver, tags, timeout_seconds; for driver "
                  "serial also port, baud, connect_timeout_seconds, check_at_start, firmware, "
                  "flash, model_flash, reset, power_cycle)");
    }
    if (!s.ok()) return s;
  }
  if (board.id.empty()) return Invalid(where, "id is missing");
  if (board.driver.empty()) board.driver = "sim";
  if (!serial_key.empty() && board.driver != "serial") {
    return Invalid(
        absl::StrCat(where, ".", serial_key),
        absl::StrCat("is a setting of driver serial, not of driver '", board.driver, "'"));
  }
  if (board.type.empty()) board.type = DefaultBoardType(board.driver);
  return absl::OkStatus();
}

absl::Status ValidateCommand(const std::string& where, const std::string& key,
                             const BoardCommand& command, const SerialBoardConfig& serial) {
  if (command.command.empty()) return absl::OkStatus();
  const std::string field = absl::StrCat(where, ".", key);
  if (absl::Status s = CheckCommandTemplate(command.command); !s.ok()) {
    return Invalid(field, std::string(s.message()));
  }
  for (const char* file : {"elf", "hex", "bin"}) {
    if (UsesPlaceholder(command.command, file) && serial.firmware_elf.empty()) {
      return Invalid(field, absl::StrCat("uses {", file, "} but the board has no firmware.elf"));
    }
  }
  const bool model_flash = key == "model_flash";
  if (UsesPlaceholder(command.command, "model") != model_flash) {
    return Invalid(field, model_flash ? "does not use {model} (the artifact file it writes)"
                                      : "uses {model}, which only model_flash has");
  }
  return absl::OkStatus();
}

absl::Status ValidateSerialBoard(const BoardConfig& board) {
  const std::string where = absl::StrCat("board '", board.id, "'");
  const SerialBoardConfig& serial = board.serial;
  if (serial.port.empty()) {
    return Invalid(where, "port is missing (a /dev/serial/by-id/... path or tcp:HOST:PORT)");
  }
  if (serial.port.rfind("tcp:", 0) == 0) {
    const std::string address = serial.port.substr(4);
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
      return Invalid(absl::StrCat(where, ".port"),
                     absl::StrCat("'", serial.port, "' must be tcp:HOST:PORT"));
    }
  } else if (!link::IsSupportedBaudRate(serial.baud)) {
    return Invalid(absl::StrCat(where, ".baud"),
                   absl::StrCat(serial.baud, " is not a standard rate (9600 ... 4000000)"));
  }
  if (!serial.firmware_elf.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(serial.firmware_elf, ec)) {
      return Invalid(absl::StrCat(where, ".firmware.elf"),
                     absl::StrCat("'", serial.firmware_elf, "' is not a file"));
    }
    if (serial.flash.command.empty()) {
      return Invalid(where, "firmware is set but flash is not (the command that writes it)");
    }
  } else if (!serial.flash.command.empty()) {
    return Invalid(where, "flash is set but firmware is not (the ELF it writes)");
  }
  for (const auto& [key, command] :
       {std::pair<const char*, const BoardCommand&>{"flash", serial.flash},
        {"model_flash", serial.model_flash},
        {"reset", serial.reset},
        {"power_cycle", serial.power_cycle}}) {
    if (absl::Status s = ValidateCommand(where, key, command, serial); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

std::string DefaultBoardType(const std::string& driver) {
  if (driver == "sim") return "imxrt700-sim";
  if (driver == "qemu") return "imxrt700-qemu";
  if (driver == "serial") return "imxrt700-evk";
  return "";
}

absl::StatusOr<AgentConfig> ParseAgentConfig(const std::string& yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("Invalid configuration: YAML syntax error at line ", e.mark.line + 1,
                     ", column ", e.mark.column + 1, ": ", e.msg));
  }
  AgentConfig config;
  if (root.IsNull()) return config;  // an empty file: everything from flags
  if (!root.IsMap()) return Invalid("the file", "must be a map of key: value");
  try {
    for (const auto& kv : root) {
      const std::string key = kv.first.Scalar();
      absl::Status s;
      if (key == "agent_id") {
        s = ReadScalar(kv.second, key, config.agent_id);
      } else if (key == "server") {
        s = ReadScalar(kv.second, key, config.server);
      } else if (key == "token") {
        s = ReadScalar(kv.second, key, config.token);
      } else if (key == "state_dir") {
        s = ReadScalar(kv.second, key, config.state_dir);
      } else if (key == "boardlab_run") {
        s = ReadScalar(kv.second, key, config.boardlab_run);
      } else if (key == "tls_ca_file") {
        s = ReadScalar(kv.second, key, config.tls_ca_file);
      } else if (key == "tls_cert_file") {
        s = ReadScalar(kv.second, key, config.tls_cert_file);
      } else if (key == "tls_key_file") {
        s = ReadScalar(kv.second, key, config.tls_key_file);
      } else if (key == "boards") {
        if (!kv.second.IsSequence()) {
          s = Invalid("boards", "must be a list of boards");
        } else {
          for (size_t i = 0; i < kv.second.size() && s.ok(); ++i) {
            BoardConfig board;
            s = ParseBoard(kv.second[i], i, board);
            if (s.ok()) config.boards.push_back(std::move(board));
          }
        }
      } else {
        s = Invalid(key,
                    "unknown key (known: agent_id, server, token, state_dir, boardlab_run, "
                    "tls_ca_file, tls_cert_file, tls_key_file, boards)");
      }
      if (!s.ok()) return s;
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid configuration: ", e.what()));
  }
  return config;
}

absl::StatusOr<AgentConfig> LoadAgentConfigFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("Reading config file '", path, "': cannot open it"));
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(text.str());
  if (!config.ok()) {
    return absl::Status(config.status().code(), absl::StrCat("Reading config file '", path,
                                                             "': ", config.status().message()));
  }
  return config;
}

void AddSimBoards(AgentConfig& config, int count) {
  for (int i = 0; i < count; ++i) {
    BoardConfig board;
    board.id = absl::StrCat(config.agent_id, "-sim-", i);
    board.type = "imxrt700-sim";
    board.driver = "sim";
    config.boards.push_back(std::move(board));
  }
}

absl::Status ValidateAgentConfig(const AgentConfig& config) {
  if (config.agent_id.empty()) return Invalid("agent_id", "is required (--agent-id)");
  if (config.server.empty()) return Invalid("server", "is required, as host:port (--server)");
  if (config.server.find(':') == std::string::npos) {
    return Invalid("server", absl::StrCat("'", config.server, "' must be host:port"));
  }
  if (config.state_dir.empty()) return Invalid("state_dir", "is required (--state-dir)");
  if (config.boards.empty()) {
    return Invalid("boards", "the agent has no boards (add boards: or --sim-boards N)");
  }
  std::set<std::string> ids;
  for (const BoardConfig& board : config.boards) {
    const std::string where = absl::StrCat("board '", board.id, "'");
    if (!ids.insert(board.id).second) return Invalid(where, "the id is used twice");
    if (DefaultBoardType(board.driver).empty()) {
      return Invalid(where,
                     absl::StrCat("driver '", board.driver, "' is unknown (sim, qemu or serial)"));
    }
    if (board.type.empty()) return Invalid(where, "type is empty");
    if (board.driver == "serial") {
      if (absl::Status s = ValidateSerialBoard(board); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace boardlab::agent
