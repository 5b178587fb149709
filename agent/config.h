#pragma once

// boardlab-agent's configuration: a YAML file (docs/agent.md), overridden by command-line flags.
//
//   absl::StatusOr<AgentConfig> config = LoadAgentConfigFile("/etc/boardlab/agent.yaml");
//   if (!config.ok()) { std::cerr << config.status().message(); return 2; }
//   AddSimBoards(*config, 2);                    // --sim-boards 2
//   absl::Status valid = ValidateAgentConfig(*config);

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace boardlab::agent {

/// A shell command template of a `serial` board (flash, reset, power cycle) and its time limit.
/// Placeholders {elf} {hex} {bin} {board} {port} are replaced by shell-quoted values.
struct BoardCommand {
  std::string command;  // empty: not configured
  int timeout_seconds = 60;
};

/// The `serial` driver's settings: a board that speaks the board link protocol
/// (docs/board-protocol.md) on a serial port or a TCP socket (ser2net, firmware/qemu-board.sh).
/// When a serial board's `model_flash` writes the model into its model slot.
enum class ModelFlashPolicy {
  kAlways,    // every model
  kTooLarge,  // a model larger than the artifact cache the board announces in HELLO
};

struct SerialBoardConfig {
  std::string port;  // /dev/serial/by-id/... or tcp:HOST:PORT
  int baud = 921600;
  std::string firmware_elf;       // what `flash` writes; empty: never flash
  std::string firmware_build_id;  // what HELLO reports for it; empty: learnt at the first flash
  BoardCommand flash;
  BoardCommand reset;
  BoardCommand power_cycle;
  // Writes a model into the board's model slot (XSPI flash on an RT700) instead of sending it
  // over the link: `{model}` is the artifact file. Empty: every model goes over the link.
  BoardCommand model_flash;
  ModelFlashPolicy model_flash_when = ModelFlashPolicy::kTooLarge;
  int flash_attempts = 3;            // a flash tool failing this often in a row quarantines
  int connect_timeout_seconds = 10;  // for the board's HELLO
  // Ask the board for its HELLO when the agent starts (flash, ladder, quarantine as for a job),
  // so that a dead board is found before a job is given to it.
  bool check_at_start = true;
  // Tests only (refused unless BOARDLAB_AGENT_ALLOW_TEST_FAULTS=1): the board's firmware fails
  // on purpose at the end of its next `test_fault_jobs` jobs (boardlab-run --test-fault), so
  // that the recovery of a real firmware fault can be tested through the whole service.
  std::string test_fault;  // hang, hang-without-watchdog, hardfault, reset; empty: none
  int test_fault_jobs = 0;
};

/// The environment variable that lets a board config carry `test_fault` (the agent's tests).
inline constexpr char kAllowTestFaultsEnv[] = "BOARDLAB_AGENT_ALLOW_TEST_FAULTS";

/// One board the agent drives.
struct BoardConfig {
  std::string id;      // unique in the lab
  std::string type;    // imxrt700-sim, imxrt700-qemu, imxrt700-evk (what jobs select)
  std::string driver;  // sim, qemu or serial (how the agent runs it)
  std::map<std::string, std::string> tags;
  int timeout_seconds = 0;   // used when an assignment carries none; 0 = kDefaultRunTimeoutSeconds
  SerialBoardConfig serial;  // driver serial only
};

inline constexpr int kDefaultRunTimeoutSeconds = 300;

struct AgentConfig {
  std::string agent_id;
  std::string server;        // host:port
  std::string token;         // bearer token; BOARDLAB_AGENT_TOKEN when empty
  std::string state_dir;     // artifact cache and journal
  std::string boardlab_run;  // the runner binary the sim and qemu drivers start
  std::string tls_ca_file;   // TLS towards the server when set
  std::string tls_cert_file;
  std::string tls_key_file;
  std::vector<BoardConfig> boards;
};

/// Parses the YAML text of a config file. Unknown keys are errors (a typo must not silently
/// drop a setting). Errors: InvalidArgument "Invalid configuration ...: ..." with the key.
absl::StatusOr<AgentConfig> ParseAgentConfig(const std::string& yaml_text);

/// Reads and parses `path`. Errors: NotFound when the file cannot be read, else as above, with
/// the path in the message.
absl::StatusOr<AgentConfig> LoadAgentConfigFile(const std::string& path);

/// Appends `count` simulated boards "<agent_id>-sim-<i>" of type imxrt700-sim (--sim-boards).
void AddSimBoards(AgentConfig& config, int count);

/// The board type a driver serves by default ("sim" -> "imxrt700-sim", "qemu" ->
/// "imxrt700-qemu", "serial" -> "imxrt700-evk"); empty for an unknown driver.
std::string DefaultBoardType(const std::string& driver);

/// Checks the merged configuration (file + flags): agent_id, server, state_dir and at least one
/// board are set, board ids are unique, drivers known; a serial board has a port, a supported
/// baud rate, a firmware ELF that exists when it has a flash command (and the reverse), and
/// placeholders it knows in its commands. Errors: InvalidArgument naming the board and key.
absl::Status ValidateAgentConfig(const AgentConfig& config);

}  // namespace boardlab::agent
