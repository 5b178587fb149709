// agent/config.h: the YAML file of docs/agent.md, flags merged on top, clear errors.

#include "agent/config.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace boardlab::agent {
namespace {

constexpr char kDocExample[] = R"(
agent_id: lab-a-host1
server: 127.0.0.1:7400
token: secret            # or BOARDLAB_AGENT_TOKEN
state_dir: /var/lib/boardlab-agent
boards:
  - {id: sim-0, type: imxrt700-sim, driver: sim, tags: {lab: a}}
  - {id: qemu-0, type: imxrt700-qemu, driver: qemu, timeout_seconds: 120}
)";

TEST(AgentConfig, ParsesTheDocumentedExample) {
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(kDocExample);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->agent_id, "lab-a-host1");
  EXPECT_EQ(config->server, "127.0.0.1:7400");
  EXPECT_EQ(config->token, "secret");
  EXPECT_EQ(config->state_dir, "/var/lib/boardlab-agent");
  ASSERT_EQ(config->boards.size(), 2u);
  EXPECT_EQ(config->boards[0].id, "sim-0");
  EXPECT_EQ(config->boards[0].type, "imxrt700-sim");
  EXPECT_EQ(config->boards[0].driver, "sim");
  EXPECT_EQ(config->boards[0].tags.at("lab"), "a");
  EXPECT_EQ(config->boards[0].timeout_seconds, 0);
  EXPECT_EQ(config->boards[1].driver, "qemu");
  EXPECT_EQ(config->boards[1].timeout_seconds, 120);
  EXPECT_TRUE(ValidateAgentConfig(*config).ok());
}

TEST(AgentConfig, DriverAndTypeDefaults) {
  absl::StatusOr<AgentConfig> config =
      ParseAgentConfig("boards:\n  - id: a\n  - {id: b, driver: qemu}\n");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->boards[0].driver, "sim");
  EXPECT_EQ(config->boards[0].type, "imxrt700-sim");
  EXPECT_EQ(config->boards[1].type, "imxrt700-qemu");
}

TEST(AgentConfig, EmptyFileIsAllFlags) {
  absl::StatusOr<AgentConfig> config = ParseAgentConfig("");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->boards.empty());
}

TEST(AgentConfig, SimBoardsAreNamedAfterTheAgent) {
  AgentConfig config;
  config.agent_id = "dev";
  AddSimBoards(config, 2);
  ASSERT_EQ(config.boards.size(), 2u);
  EXPECT_EQ(config.boards[1].id, "dev-sim-1");
  EXPECT_EQ(config.boards[1].type, "imxrt700-sim");
  EXPECT_EQ(config.boards[1].driver, "sim");
}

struct BadCase {
  const char* yaml;
  const char* message;  // a part of the error message
};

class BadConfig : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfig, IsRejectedWithAClearMessage) {
  absl::StatusOr<AgentConfig> config = ParseAgentConfig(GetParam().yaml);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(config.status().message().find(GetParam().message), std::string::npos)
      << config.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Files, BadConfig,
    ::testing::Values(
        BadCase{"agent_id: [unclosed\n", "YAML syntax error at line"},
        BadCase{"agent_idd: x\n", "Invalid configuration of agent_idd: unknown key"},
        BadCase{"- a\n- b\n", "must be a map"},
        BadCase{"agent_id: {a: b}\n", "Invalid configuration of agent_id: must be a string"},
        BadCase{"boards: sim-0\n", "boards: must be a list"},
        BadCase{"boards:\n  - {type: imxrt700-sim}\n", "boards[0]: id is missing"},
        BadCase{"boards:\n  - {id: a, colour: red}\n", "boards[0].colour: unknown key"},
        BadCase{"boards:\n  - {id: a, timeout_seconds: soon}\n",
                "boards[0].timeout_seconds: 'soon' is not an integer"},
        BadCase{"boards:\n  - {id: a, timeout_seconds: -5}\n",
                "boards[0].timeout_seconds: must be positive"},
        BadCase{"boards:\n  - {id: a, tags: [x]}\n", "boards[0].tags: must be a map"}));

AgentConfig Valid() {
  AgentConfig config;
  config.agent_id = "a";
  config.server = "localhost:7400";
  config.state_dir = "/tmp/x";
  AddSimBoards(config, 1);
  return config;
}

TEST(AgentConfig, ValidationNamesWhatIsWrong) {
  EXPECT_TRUE(ValidateAgentConfig(Valid()).ok());
  const auto message = [](const AgentConfig& c) {
    return std::string(ValidateAgentConfig(c).message());
  };
  AgentConfig c = Valid();
  c.agent_id.clear();
  EXPECT_EQ(message(c), "Invalid configuration of agent_id: is required (--agent-id)");
  c = Valid();
  c.server = "localhost";
  EXPECT_EQ(message(c), "Invalid configuration of server: 'localhost' must be host:port");
  c = Valid();
  c.state_dir.clear();
  EXPECT_EQ(message(c), "Invalid configuration of state_dir: is required (--state-dir)");
  c = Valid();
  c.boards.clear();
  EXPECT_EQ(message(c),
            "Invalid configuration of boards: the agent has no boards (add boards: or "
            "--sim-boards N)");
  c = Valid();
  c.boards.push_back(c.boards[0]);
  EXPECT_EQ(message(c), "Invalid configuration of board 'a-sim-0': the id is used twice");
  c = Valid();
  c.boards[0].driver = "jlink";
  EXPECT_EQ(
      message(c),
      "Invalid configuration of board 'a-sim-0': driver 'jlink' is unknown (sim, qemu or serial)");
}

TEST(AgentConfig, FileErrorsNameTheFile) {
  absl::StatusOr<AgentConfig> missing = LoadAgentConfigFile("/nonexistent/agent.yaml");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "Reading config file '/nonexistent/agent.yaml': cannot open it");

  const std::string path =
      (std::filesystem::temp_directory_path() / ("agent_cfg_" + std::to_string(::getpid())))
          .string();
  std::ofstream(path) << "server: [\n";
  absl::StatusOr<AgentConfig> bad = LoadAgentConfigFile(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("Reading config file '" + path + "': Invalid", 0), 0u)
      << bad.status().message();
}

}  // namespace
}  // namespace boardlab::agent
