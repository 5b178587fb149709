// boardlab-agent: dials out to boardlab-server, offers its boards and runs the jobs the server
// assigns to them (docs/agent.md).
//
//   boardlab-agent --config /etc/boardlab/agent.yaml
//   boardlab-agent --server 127.0.0.1:7400 --agent-id dev --state-dir /tmp/agent --sim-boards 2
//
// Exit codes: 0 clean shutdown (SIGTERM/SIGINT), 1 runtime failure, 2 bad configuration.

#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "agent/agent.h"
#include "agent/agent_core.h"
#include "agent/blob_store.h"
#include "agent/config.h"
#include "agent/journal.h"
#include "agent/process_board_executor.h"
#include "agent/retrying_blob_store.h"
#include "agent/serial_board_executor.h"
#include "agent/serving_board_executor.h"
#include "proto/support/grpc_util.h"

#ifndef BOARDLAB_RUN_PATH
#define BOARDLAB_RUN_PATH ""
#endif
#ifndef BOARDLAB_VERSION
#define BOARDLAB_VERSION "0.0.0"
#endif

namespace {

namespace ba = boardlab::agent;

constexpr int kExitRuntime = 1;
constexpr int kExitConfig = 2;

int Fail(int code, const std::string& message) {
  std::cerr << "boardlab-agent: " << message << "\n";
  return code;
}

std::string Hostname() {
  char name[256] = {0};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"boardlab-agent: runs boardlab jobs on this host's boards for boardlab-server"};
  std::string config_file, server, agent_id, token, state_dir, boardlab_run;
  int sim_boards = 0;
  app.add_option("--config", config_file, "YAML configuration file (docs/agent.md)");
  app.add_option("--server", server,
                 "server address HOST:PORT, or replicas IP:PORT,IP:PORT (overrides the file)");
  app.add_option("--agent-id", agent_id, "this agent's id (overrides the file)");
  app.add_option("--token", token,
                 "bearer token; default: $BOARDLAB_AGENT_TOKEN, then the file's token");
  app.add_option("--state-dir", state_dir, "artifact cache and journal directory");
  app.add_option("--sim-boards", sim_boards,
                 "add N simulated boards <agent-id>-sim-<i> (type imxrt700-sim)")
      ->check(CLI::Range(0, 64));
  app.add_option("--boardlab-run", boardlab_run,
                 absl::StrCat("boardlab-run binary for the sim and qemu drivers (default: ",
                              BOARDLAB_RUN_PATH, ")"));
  bool check_config = false;
  app.add_flag(
      "--check-config", check_config,
      "read and check the configuration (keys, values, boards, server address), then "
      "exit: 0 when it is valid, 2 with the reason when not; nothing is opened or dialled");
  app.set_version_flag("--version", BOARDLAB_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitConfig;
  }

  ba::AgentConfig config;
  if (!config_file.empty()) {
    absl::StatusOr<ba::AgentConfig> loaded = ba::LoadAgentConfigFile(config_file);
    if (!loaded.ok()) return Fail(kExitConfig, std::string(loaded.status().message()));
    config = std::move(*loaded);
  }
  if (!server.empty()) config.server = server;
  if (!agent_id.empty()) config.agent_id = agent_id;
  if (!state_dir.empty()) config.state_dir = state_dir;
  if (!boardlab_run.empty()) config.boardlab_run = boardlab_run;
  if (const char* env = std::getenv("BOARDLAB_AGENT_TOKEN"); env != nullptr && *env != '\0') {
    config.token = env;
  }
  if (!token.empty()) config.token = token;
  if (config.boardlab_run.empty()) config.boardlab_run = BOARDLAB_RUN_PATH;
  ba::AddSimBoards(config, sim_boards);
  if (absl::Status s = ba::ValidateAgentConfig(config); !s.ok()) {
    return Fail(kExitConfig, std::string(s.message()));
  }
  if (check_config) {
    absl::StatusOr<std::string> target = boardlab::api::ChannelTarget(config.server);
    if (!target.ok()) {
      return Fail(kExitConfig,
                  absl::StrCat("Invalid configuration of server: ", target.status().message()));
    }
    std::cout << "boardlab-agent: configuration is valid (" << config.boards.size()
              << " board(s))\n";
    return 0;
  }
  if (config.boardlab_run.empty() || ::access(config.boardlab_run.c_str(), X_OK) != 0) {
    return Fail(kExitConfig,
                absl::StrCat("Invalid configuration of boardlab_run: '", config.boardlab_run,
                             "' is not an executable file (--boardlab-run PATH)"));
  }
  std::error_code ec;
  std::filesystem::create_directories(config.state_dir, ec);
  if (ec) {
    return Fail(kExitConfig, absl::StrCat("Invalid configuration of state_dir: cannot create '",
                                          config.state_dir, "': ", ec.message()));
  }

  boardlab::api::ChannelOptions channel_options;
  channel_options.address = config.server;
  channel_options.round_robin = false;  // replicas: the first listed that answers
  channel_options.tls_ca_file = config.tls_ca_file;
  channel_options.tls_cert_file = config.tls_cert_file;
  channel_options.tls_key_file = config.tls_key_file;
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      boardlab::api::MakeChannel(channel_options);
  if (!channel.ok()) return Fail(kExitConfig, std::string(channel.status().message()));

  ba::AgentCore::Options core_options;
  core_options.agent_id = config.agent_id;
  core_options.hostname = Hostname();
  core_options.version = BOARDLAB_VERSION;
  core_options.boards = config.boards;
  core_options.journal_path = (std::filesystem::path(config.state_dir) / "journal").string();
  // Declared before the core and the agent, so that it outlives them and writes their last
  // snapshot when main returns.
  ba::JournalWriter journal(core_options.journal_path, [](const absl::Status& error) {
    std::cerr << "boardlab-agent: " << error.message() << std::endl;
  });
  core_options.write_journal = [&journal](std::vector<ba::JournalEntry> entries) {
    journal.Write(std::move(entries));
  };
  absl::StatusOr<std::unique_ptr<ba::AgentCore>> core = ba::AgentCore::Create(core_options);
  if (!core.ok()) return Fail(kExitRuntime, std::string(core.status().message()));

  boost::asio::io_context io;
  // Declared before the executors, which count into it.
  ba::BoardMetrics board_metrics(
      (std::filesystem::path(config.state_dir) / "metrics.prom").string());
  std::map<std::string, ba::BoardExecutorPtr> executors;
  for (const ba::BoardConfig& board : config.boards) {
    // sim: a persistent boardlab-run --serve per board; qemu: one boardlab-run per job; serial:
    // probe, flash and recovery around one boardlab-run --board serial per job.
    if (board.driver == "serial") {
      absl::StatusOr<std::unique_ptr<ba::SerialBoardExecutor>> serial =
          ba::SerialBoardExecutor::Create(io, board, config.boardlab_run, &board_metrics,
                                          config.state_dir);
      if (!serial.ok()) return Fail(kExitRuntime, std::string(serial.status().message()));
      (*serial)->CheckAtStart();  // runs once io.run() below starts the event loop
      executors[board.id] = *std::move(serial);
    } else if (board.driver == "qemu") {
      executors[board.id] = std::make_unique<ba::ProcessBoardExecutor>(io, config.boardlab_run,
                                                                       ba::RunnerBoard::kQemu);
    } else {
      executors[board.id] = std::make_unique<ba::ServingBoardExecutor>(io, config.boardlab_run);
    }
  }
  auto stub = boardlab::v1::AgentService::NewStub(*channel);
  ba::Agent::Options options;
  options.token = config.token;
  options.state_dir = config.state_dir;
  ba::Agent agent(io, std::move(*core), std::move(executors),
                  ba::NewRetryingBlobStore(ba::NewGrpcBlobStore(*channel, config.token)), *stub,
                  options);
  std::cerr << "boardlab-agent: " << config.agent_id << " with " << config.boards.size()
            << " board(s), server " << config.server << ", state in " << config.state_dir << "\n";
  agent.Start();
  io.run();
  return 0;
}
