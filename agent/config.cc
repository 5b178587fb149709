#include "agent/config.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"

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

absl::Status ReadInt(const YAML::Node& node, const std::string& where, int& out) {
  if (!node.IsScalar()) return Invalid(where, "must be a number");
  try {
    out = node.as<int>();
  } catch (const YAML::Exception&) {
    return Invalid(where, absl::StrCat("'", node.Scalar(), "' is not an integer"));
  }
  return absl::OkStatus();
}

absl::Status ParseBoard(const YAML::Node& node, size_t index, BoardConfig& board) {
  const std::string where = absl::StrCat("boards[", index, "]");
  if (!node.IsMap()) return Invalid(where, "must be a map with id, type, driver, tags");
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
    } else {
      s = Invalid(field, "unknown key (known: id, type, driver, tags, timeout_seconds)");
    }
    if (!s.ok()) return s;
  }
  if (board.id.empty()) return Invalid(where, "id is missing");
  if (board.driver.empty()) board.driver = "sim";
  if (board.type.empty()) board.type = DefaultBoardType(board.driver);
  return absl::OkStatus();
}

}  // namespace

std::string DefaultBoardType(const std::string& driver) {
  if (driver == "sim") return "imxrt700-sim";
  if (driver == "qemu") return "imxrt700-qemu";
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
      return Invalid(where, absl::StrCat("driver '", board.driver, "' is unknown (sim or qemu)"));
    }
    if (board.type.empty()) return Invalid(where, "type is empty");
  }
  return absl::OkStatus();
}

}  // namespace boardlab::agent
