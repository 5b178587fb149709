#pragma once

// End-to-end harness: real boardlab-server, boardlab-agent and boardlab processes on loopback.
//
// Usage:
//   ServiceLab lab;                                   // a fresh temporary directory
//   ASSERT_TRUE(lab.StartServer());                   // free ports, --heartbeat-ms 200
//   ASSERT_TRUE(lab.StartAgent("a", 2));              // boards a-sim-0, a-sim-1, waits for them
//   ClientResult r = lab.RunClient({"submit", model, "--expect-reference", "--wait", "--json"});
//   EXPECT_EQ(r.exit_code, 0) << r;
//   lab.KillServer();                                 // kill -9
//   ASSERT_TRUE(lab.RestartServer());                 // same data dir, same gRPC port
//
// Every process the harness starts runs in a process group of its own and gets SIGKILL when the
// test process dies (PR_SET_PDEATHSIG); ~ServiceLab kills the groups that are left (agents' own
// children included) and reaps them, also when an assertion failed half-way. When the test has
// failed, ~ServiceLab prints the tails of the server's and agents' logs and keeps the directory.
// BOARDLAB_KEEP_TEST_DIRS=1 keeps it always.
//
// Processes must be started from a thread that outlives them: PR_SET_PDEATHSIG fires when the
// starting *thread* exits. RunClient waits for its process, so any thread may call it.

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "boardlab/v1/agent_service.grpc.pb.h"
#include "boardlab/v1/artifact_service.grpc.pb.h"
#include "boardlab/v1/board_service.grpc.pb.h"
#include "boardlab/v1/job_service.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/support/child_process.h"

namespace boardlab::testing::service {

// The binaries under test (baked in by CMake; BOARDLAB_SERVER_BIN, BOARDLAB_AGENT_BIN and
// BOARDLAB_CLIENT_BIN override them).
std::string ServerBinary();
std::string AgentBinary();
std::string ClientBinary();

/// A model whose compile and board run take milliseconds (one FULLY_CONNECTED, [1,16] -> [1,10]).
std::vector<uint8_t> FastModel();
/// A model whose board run takes a few ms per iteration on a sim board (one 3x3 CONV_2D,
/// [1,48,48,16] -> [1,48,48,32]); with kSlowIterations timed iterations a run lasts seconds.
std::vector<uint8_t> SlowModel();
inline constexpr int kSlowIterations = 1000;

/// What a `boardlab` run printed and returned.
struct ClientResult {
  int exit_code = -1;  // 128 + signal when killed (also on timeout)
  std::string out;
  std::string err;
  bool timed_out = false;
};
std::ostream& operator<<(std::ostream& os, const ClientResult& result);

/// Calls `condition` every `poll` until it returns true or `timeout` passes.
::testing::AssertionResult WaitFor(const std::function<bool()>& condition,
                                   std::chrono::milliseconds timeout, const std::string& what,
                                   std::chrono::milliseconds poll = std::chrono::milliseconds(50));

/// Parses the client's `--json` output (one proto3 JSON Job) into a Job.
absl::StatusOr<v1::Job> ParseJobJson(const std::string& json);

/// An HTTP/1.0 request to 127.0.0.1 (Host and Connection: close are added, and Content-Length
/// for a body or a POST).
struct HttpCall {
  // Initialized, so that designated initializers may leave them out without a warning.
  std::string method = "GET";
  std::string path = "";  // with the query
  std::vector<std::pair<std::string, std::string>> headers = {};
  std::string body = "";
};
struct HttpAnswer {
  int status = 0;
  std::string status_line;
  std::multimap<std::string, std::string> headers;  // names in lower case
  std::string body;
  /// The (first) value of a header, "" when absent.
  std::string Header(const std::string& lower_case_name) const;
};
/// Sends `call` to 127.0.0.1:`port` and reads the whole answer, whatever its status.
/// Errors: Unavailable when nothing answers, DataLoss for an answer without an HTTP header.
absl::StatusOr<HttpAnswer> HttpFetch(int port, const HttpCall& call);

/// GET http://127.0.0.1:`port``path` (HTTP/1.0); the body of a 200 answer.
absl::StatusOr<std::string> HttpGet(int port, const std::string& path);

/// The sum of the samples of metric `name` (the exact series name, e.g.
/// "boardlab_jobs_finished_total") whose labels include all of `labels`, in Prometheus text
/// format; nullopt when no sample matches.
std::optional<double> MetricSum(const std::string& text, const std::string& name,
                                const std::map<std::string, std::string>& labels = {});

/// One board run of a job, reconstructed from its events: from its ASSIGNED event to the event
/// that took it off the board (requeued for a retry, or finished).
struct BoardInterval {
  std::string job_id;
  std::string board_id;
  int attempt = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
};
std::vector<BoardInterval> BoardIntervals(const std::vector<v1::JobEvent>& events);

/// A bearer token for a server config: the secret a caller sends, its tenant and role.
struct TestToken {
  const char* secret;
  const char* tenant;
  const char* role;  // client, agent or admin
};
/// The `tokens:` section of a server config holding these tokens (as their SHA-256 hashes).
std::string TokensYaml(const std::vector<TestToken>& tokens);

/// How ServiceLab starts boardlab-server.
struct ServerOptions {
  int heartbeat_ms = 200;
  std::string config_yaml;    // written to server.yaml and passed with --config when not empty
  std::string tls_ca = "";    // a TLS server: the harness's own calls verify it with this CA file
  std::string data_dir = "";  // empty: server-data in the lab's directory (replicas share one)
};

/// A server, its agents and clients in one temporary directory.
class ServiceLab {
 public:
  ServiceLab();
  ~ServiceLab();
  ServiceLab(const ServiceLab&) = delete;
  ServiceLab& operator=(const ServiceLab&) = delete;

  const std::string& dir() const { return dir_; }
  /// `name` inside dir().
  std::string Path(const std::string& name) const;
  /// Writes a file into dir() and returns its path.
  std::string WriteFile(const std::string& name, const std::vector<uint8_t>& bytes) const;
  std::string WriteFile(const std::string& name, const std::string& text) const;

  /// Starts the server on free ports in a fresh data dir and waits for its "listening" line.
  ::testing::AssertionResult StartServer(const ServerOptions& options = {});
  /// Starts it again after KillServer(): same data dir, options and gRPC port.
  ::testing::AssertionResult RestartServer();
  /// kill -9 of the server.
  void KillServer();
  /// The --server address agents and clients started from now on are given (default: this
  /// lab's server), e.g. a list of replicas.
  void SetServerAddressForProcesses(const std::string& addresses) { process_address_ = addresses; }
  Process* server() { return server_.get(); }
  const std::string& address() const { return address_; }
  int metrics_port() const { return metrics_port_; }
  /// The web pages' address as the server prints it ("http://127.0.0.1:PORT/"), and its port.
  const std::string& web_url() const { return web_url_; }
  int web_port() const { return web_port_; }
  std::string ServerLog() const;

  /// Starts `boardlab-agent --agent-id id --sim-boards n` and waits until the server lists its
  /// boards (id-sim-0 ...) as connected.
  ::testing::AssertionResult StartAgent(const std::string& id, int sim_boards,
                                        const std::string& token = "");
  /// Starts `boardlab-agent --config FILE` with `config_yaml` (its boards; --server, --agent-id
  /// and --state-dir are added) and waits until the server lists `boards` of its boards.
  ::testing::AssertionResult StartAgentWithConfig(const std::string& id,
                                                  const std::string& config_yaml, int boards);
  /// kill -9 of the agent (its board runner children are left running, as after a crash).
  void KillAgent(const std::string& id);
  Process* agent(const std::string& id);
  std::string AgentLog(const std::string& id) const;

  /// Runs `boardlab --server address() ARGS...` (with --token when given) to completion; kills it
  /// at `timeout`.
  ClientResult RunClient(const std::vector<std::string>& args,
                         std::chrono::milliseconds timeout = std::chrono::seconds(60),
                         const std::string& token = "");
  /// Starts the client in the background; its stdout and stderr go to `log_path`.
  absl::StatusOr<std::unique_ptr<Process>> StartClient(const std::vector<std::string>& args,
                                                       const std::string& log_path);

  // The API, called directly: as an admin of an open server, or with the token set here (the
  // harness's own calls, e.g. while waiting for an agent's boards, need one on a server with
  // tokens).
  void SetApiToken(const std::string& token) { api_token_ = token; }
  std::shared_ptr<grpc::Channel> Channel();
  absl::StatusOr<v1::Job> GetJob(const std::string& job_id);
  /// Every job of the default tenant (all pages), newest first.
  absl::StatusOr<std::vector<v1::Job>> ListJobs(const std::vector<v1::JobState>& states = {});
  /// The job's whole event stream (WatchJob from seq 0 to its `finished` event, or to `timeout`).
  absl::StatusOr<std::vector<v1::JobEvent>> Events(
      const std::string& job_id, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  absl::StatusOr<std::vector<v1::Board>> Boards();
  absl::StatusOr<std::string> ScrapeMetrics();

  /// Waits until `count` jobs are in `state` (ListJobs).
  ::testing::AssertionResult WaitForJobs(size_t count, v1::JobState state,
                                         std::chrono::milliseconds timeout);
  /// Waits until a job is done and returns it.
  absl::StatusOr<v1::Job> WaitForJobDone(const std::string& job_id,
                                         std::chrono::milliseconds timeout);

 private:
  ::testing::AssertionResult LaunchServer(const std::string& listen);
  ::testing::AssertionResult WaitForAgentBoards(const std::string& id, int sim_boards);
  ::testing::AssertionResult LaunchAgent(const std::string& id, std::vector<std::string> extra,
                                         int boards);
  std::string NextName(const std::string& stem);

  std::string dir_;
  std::string data_dir_;
  ServerOptions server_options_;
  std::unique_ptr<Process> server_;
  int server_starts_ = 0;
  std::string address_;
  std::string process_address_;  // "" = address_
  int metrics_port_ = 0;
  std::string web_url_;
  int web_port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::string api_token_;
  std::map<std::string, std::unique_ptr<Process>> agents_;
  std::vector<std::unique_ptr<Process>> dead_;  // killed processes: their groups die at the end
  int next_name_ = 0;
  std::mutex names_mutex_;
};

/// Submits `model` (input random:0) expecting the bytes of `output_path` (e.g. output0.bin of a
/// passing job's --out) with every byte changed, and waits: a FAIL verdict, exit code 1.
ClientResult SubmitWithWrongExpectedOutput(ServiceLab& lab, const std::string& model,
                                           const std::string& output_path);

/// Submits 64 zero bytes as a model and waits: COMPILE_ERROR, exit code 3.
ClientResult SubmitModelThatDoesNotCompile(ServiceLab& lab);

}  // namespace boardlab::testing::service
