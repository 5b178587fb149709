// service_bench: the gRPC service's latency, throughput, upload speed and memory, against
// boardlab-server (and boardlab-agent) processes the bench starts itself.
//
// Usage: service_bench [--quick] [--latency-jobs N] [--jobs N] [--threads N] [--upload-mib N]
//                      [--queued N] [--only agent|fake|upload|memory|replicas]
//                      [--store postgres [--pg-statements]] [--server-binary PATH]
//
// Figures and targets:
//   1. submit -> assigned latency with idle sim boards, p50 / p99      target p99 < 20 ms
//   2. scheduling throughput, 8 sim boards, a trivial model            target >= 500 jobs/s
//      (a) with the real boardlab-agent (a boardlab-run --serve child per sim board)
//      (b) the server alone: in-process fake agents that speak AgentService over gRPC and pass
//          every assignment at once
//   3. ArtifactService.Upload of a random blob against a raw TCP loopback copy of the same bytes
//                                                                      target >= 50 % of it
//   4. server VmRSS with N queued jobs (boards registered, their agent gone)  target < 200 MB
//   5. with --store postgres: 2(a)'s throughput over one SQLite server, and over one and two
//      replicas sharing a throwaway PostgreSQL (docs/server.md, "Replicas")
//                                          target: two replicas >= the SQLite server
//      --pg-statements: pg_stat_statements loaded into that PostgreSQL; each replica run prints
//      the statements per job and the most frequent statements (the cost of the rates above)
// --quick runs small sizes (a smoke test for ctest; it asserts no speed). Without --quick the
// exit status is 1 when a target is missed; 2 when a figure could not be measured at all.
//
// Every server and agent is a child process with its own temporary data directory; children
// are stopped and the directories removed at exit (also on SIGINT / SIGTERM).

#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "boardlab/v1/agent_service.grpc.pb.h"
#include "boardlab/v1/board_service.grpc.pb.h"
#include "boardlab/v1/job_service.grpc.pb.h"
#include "proto/support/blob_client.h"
#include "proto/support/digest.h"
#include "proto/support/grpc_util.h"
#include "tests/support/postgres_server.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = boardlab::v1;
using Clock = std::chrono::steady_clock;

constexpr int kBoards = 8;
constexpr int kUploadRounds = 6;  // each of the three copies goes first in two rounds

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---------------------------------------------------------------------------------------------
// Children and temporary directories, cleaned up at exit.

std::mutex g_cleanup_mutex;
std::vector<pid_t> g_children;
std::vector<std::string> g_temp_dirs;

void StopChild(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 100; ++i) {  // 5 s for a clean shutdown
    if (waitpid(pid, nullptr, WNOHANG) == pid) return;
    usleep(50000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

void CleanUp() {
  std::vector<pid_t> children;
  std::vector<std::string> dirs;
  {
    std::lock_guard lock(g_cleanup_mutex);
    children.swap(g_children);
    dirs.swap(g_temp_dirs);
  }
  for (pid_t pid : children) StopChild(pid);
  for (const std::string& dir : dirs) {
    std::error_code error;
    fs::remove_all(dir, error);
  }
}

void OnSignal(int signal_number) {
  // Not async-signal-safe in theory; good enough for a bench interrupted by hand.
  CleanUp();
  _exit(128 + signal_number);
}

std::string MakeTempDir(const std::string& what) {
  std::string pattern =
      (fs::temp_directory_path() / ("service_bench-" + what + ".XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("mkdtemp");
    std::exit(2);
  }
  std::lock_guard lock(g_cleanup_mutex);
  g_temp_dirs.push_back(pattern);
  return pattern;
}

void ForgetChild(pid_t pid) {
  std::lock_guard lock(g_cleanup_mutex);
  g_children.erase(std::remove(g_children.begin(), g_children.end(), pid), g_children.end());
}

// Starts `argv` with stdout to `stdout_fd` (or the log) and stderr to `log_path`.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log_path, int stdout_fd) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::lock_guard lock(g_cleanup_mutex);
  pid_t pid = fork();
  if (pid == 0) {
    int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0) dup2(log, 2);
    dup2(stdout_fd >= 0 ? stdout_fd : log, 1);
    execv(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  if (pid > 0) g_children.push_back(pid);
  return pid;
}

std::shared_ptr<grpc::Channel> Channel(const std::string& address) {
  boardlab::api::ChannelOptions options;
  options.address = address;
  return *boardlab::api::MakeChannel(options);  // cannot fail without TLS files
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

// ---------------------------------------------------------------------------------------------
// Server and agent processes.

// A child process stopped (SIGTERM, then SIGKILL) when its owner goes.
struct ChildProcess {
  pid_t pid = -1;
  ~ChildProcess() {
    if (pid > 0) {
      StopChild(pid);
      ForgetChild(pid);
    }
  }
};

struct ServerProcess : ChildProcess {
  int stdout_fd = -1;
  std::string dir;
  std::string address;
  std::shared_ptr<grpc::Channel> channel;
  ~ServerProcess() {
    if (stdout_fd >= 0) close(stdout_fd);
  }
};

// The boardlab-server the bench starts: this build's, or another build's (--server-binary) to
// compare two builds on one machine, runs alternated.
std::string g_server_binary = BOARDLAB_SERVER_PATH;

// `config`: a server.yaml for it (e.g. a PostgreSQL store); `data_dir`: replicas share one.
absl::StatusOr<std::unique_ptr<ServerProcess>> StartServer(const std::string& what,
                                                           const std::string& config = "",
                                                           const std::string& data_dir = "") {
  auto server = std::make_unique<ServerProcess>();
  server->dir = MakeTempDir(what);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
  std::string log = server->dir + "/server.log";
  std::vector<std::string> argv = {g_server_binary,
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--metrics-listen",
                                   "127.0.0.1:0",
                                   "--http-listen",
                                   "127.0.0.1:0",
                                   "--data-dir",
                                   data_dir.empty() ? server->dir + "/data" : data_dir,
                                   "--compile-workers",
                                   "1"};
  if (!config.empty()) {
    argv.push_back("--config");
    argv.push_back(config);
  }
  server->pid = Spawn(argv, log, fds[1]);
  close(fds[1]);
  server->stdout_fd = fds[0];
  if (server->pid < 0) return absl::InternalError("fork failed");
  // "boardlab-server listening on HOST:PORT metrics PORT web URL"
  std::string out;
  const auto start = Clock::now();
  while (out.find('\n') == std::string::npos) {
    if (MsSince(start) > 20000) break;
    pollfd p{server->stdout_fd, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char buffer[512];
    ssize_t n = read(server->stdout_fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  constexpr std::string_view kPrefix = "boardlab-server listening on ";
  size_t at = out.find(kPrefix);
  if (at == std::string::npos) {
    return absl::UnavailableError(
        absl::StrCat("boardlab-server did not start; its log:\n", Tail(log)));
  }
  std::string rest = out.substr(at + kPrefix.size());
  server->address = rest.substr(0, rest.find(' '));
  server->channel = Channel(server->address);
  return server;
}

struct AgentProcess : ChildProcess {
  std::string log;
};

std::unique_ptr<AgentProcess> StartAgent(const ServerProcess& server, int boards,
                                         const std::string& id = "bench") {
  auto agent = std::make_unique<AgentProcess>();
  std::string dir = MakeTempDir("agent");
  agent->log = dir + "/agent.log";
  agent->pid = Spawn({BOARDLAB_AGENT_PATH, "--server", server.address, "--agent-id", id,
                      "--state-dir", dir + "/state", "--sim-boards", std::to_string(boards),
                      "--boardlab-run", boardlab::testing::RunBinary()},
                     agent->log, -1);
  return agent;
}

// Waits until `count` boards are in `state`.
bool WaitForBoards(const ServerProcess& server, int count, v1::BoardState state,
                   int timeout_ms = 20000) {
  auto stub = v1::BoardService::NewStub(server.channel);
  const auto start = Clock::now();
  while (MsSince(start) < timeout_ms) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    v1::ListBoardsRequest request;
    v1::ListBoardsResponse response;
    if (stub->ListBoards(&context, request, &response).ok()) {
      int n = 0;
      for (const auto& board : response.boards()) n += board.state() == state ? 1 : 0;
      if (n >= count) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

struct ProcMemory {
  double rss_mb = 0;
  double hwm_mb = 0;
};

ProcMemory ReadMemory(pid_t pid) {
  ProcMemory memory;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    long long kb = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %lld kB", &kb) == 1) memory.rss_mb = kb / 1024.0;
    if (std::sscanf(line.c_str(), "VmHWM: %lld kB", &kb) == 1) memory.hwm_mb = kb / 1024.0;
  }
  return memory;
}

// ---------------------------------------------------------------------------------------------
// An in-process agent: the real AgentService protocol over gRPC (Hello with its boards,
// heartbeats, stage events, a RunResult), passing every assignment at once.

class FakeAgent {
 public:
  FakeAgent(std::shared_ptr<grpc::Channel> channel, std::string agent_id, int boards)
      : stub_(v1::AgentService::NewStub(std::move(channel))),
        agent_id_(std::move(agent_id)),
        boards_(boards) {}
  ~FakeAgent() { Stop(); }

  absl::Status Start() {
    stream_ = stub_->Connect(&context_);
    v1::AgentMessage hello_message;
    v1::Hello* hello = hello_message.mutable_hello();
    hello->set_agent_id(agent_id_);
    hello->set_hostname("service_bench");
    hello->set_version("bench");
    for (int i = 0; i < boards_; ++i) {
      v1::BoardInfo* board = hello->add_boards();
      board->set_id(absl::StrCat(agent_id_, "-sim-", i));
      board->set_type("imxrt700-sim");
    }
    if (!Write(hello_message)) return absl::UnavailableError("the agent stream closed at Hello");
    v1::ServerMessage welcome;
    if (!stream_->Read(&welcome) || !welcome.has_welcome()) {
      return absl::UnavailableError("no Welcome from the server");
    }
    heartbeat_ms_ = std::max(50, welcome.welcome().heartbeat_interval_ms());
    reader_ = std::thread([this] { ReadLoop(); });
    heartbeat_ = std::thread([this] { HeartbeatLoop(); });
    return absl::OkStatus();
  }

  // Closes the stream as an agent that goes away would.
  void Stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
      wake_.notify_all();
    }
    if (heartbeat_.joinable()) heartbeat_.join();
    {
      std::lock_guard lock(write_mutex_);
      if (stream_) stream_->WritesDone();
    }
    context_.TryCancel();
    if (reader_.joinable()) reader_.join();
    if (stream_) stream_->Finish();
  }

  int64_t results() const { return results_; }

 private:
  bool Write(const v1::AgentMessage& message) {
    std::lock_guard lock(write_mutex_);
    return stream_->Write(message);
  }

  void ReadLoop() {
    v1::ServerMessage message;
    while (stream_->Read(&message)) {
      if (!message.has_assign()) continue;
      const v1::Assignment& assign = message.assign();
      for (v1::JobState stage :
           {v1::JOB_STATE_LOADING, v1::JOB_STATE_RUNNING, v1::JOB_STATE_COLLECTING}) {
        v1::AgentMessage event;
        event.mutable_stage()->set_job_id(assign.job_id());
        event.mutable_stage()->set_attempt(assign.attempt());
        event.mutable_stage()->set_stage(stage);
        if (!Write(event)) return;
      }
      v1::AgentMessage done;
      v1::RunResult* result = done.mutable_result();
      result->set_job_id(assign.job_id());
      result->set_attempt(assign.attempt());
      result->set_board_id(assign.board_id());
      result->set_outcome(v1::RUN_OUTCOME_PASS);
      result->set_message("fake agent: passed without running");
      result->set_inference_us(1.0);
      if (!Write(done)) return;
      ++results_;
    }
  }

  void HeartbeatLoop() {
    std::unique_lock lock(mutex_);
    while (!stopped_) {
      wake_.wait_for(lock, std::chrono::milliseconds(heartbeat_ms_));
      if (stopped_) return;
      lock.unlock();
      v1::AgentMessage beat;
      beat.mutable_heartbeat()->set_time_ms(WallMs());
      Write(beat);
      lock.lock();
    }
  }

  std::unique_ptr<v1::AgentService::Stub> stub_;
  std::string agent_id_;
  int boards_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>> stream_;
  std::mutex write_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopped_ = false;
  int heartbeat_ms_ = 1000;
  std::atomic<int64_t> results_{0};
  std::thread reader_;
  std::thread heartbeat_;
};

// ---------------------------------------------------------------------------------------------
// Jobs.

v1::SubmitJobRequest JobRequest(const v1::Digest& model) {
  v1::SubmitJobRequest request;
  *request.mutable_spec()->mutable_model() = model;
  request.mutable_spec()->mutable_selector()->set_board_type("imxrt700-sim");
  request.mutable_spec()->set_name("service_bench.tflite");
  // No inputs (random:<index>) and no expected outputs: every run that completes passes.
  return request;
}

absl::StatusOr<v1::Digest> UploadTrivialModel(const ServerProcess& server) {
  std::vector<uint8_t> model = boardlab::testing::SingleFullyConnected();
  boardlab::api::BlobClient blobs(server.channel, "");
  return blobs.Put(std::string_view(reinterpret_cast<const char*>(model.data()), model.size()));
}

absl::StatusOr<v1::Job> Submit(v1::JobService::Stub& stub, const v1::SubmitJobRequest& request) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::SubmitJobResponse response;
  grpc::Status status = stub.SubmitJob(&context, request, &response);
  if (!status.ok()) return boardlab::api::FromGrpcStatus(status);
  return response.job();
}

// Follows a job's event stream to its end; `on_event` sees every event.
absl::StatusOr<v1::Job> Watch(v1::JobService::Stub& stub, const std::string& job_id,
                              const std::function<void(const v1::JobEvent&)>& on_event) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  v1::WatchJobRequest request;
  request.set_job_id(job_id);
  auto reader = stub.WatchJob(&context, request);
  v1::JobEvent event;
  std::optional<v1::Job> finished;
  while (reader->Read(&event)) {
    on_event(event);
    if (event.has_finished()) finished = event.finished();
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return boardlab::api::FromGrpcStatus(status);
  if (!finished) return absl::DataLossError("the event stream ended without a 'finished' event");
  return *finished;
}

absl::Status RunOneJob(v1::JobService::Stub& stub, const v1::Digest& model) {
  auto job = Submit(stub, JobRequest(model));
  if (!job.ok()) return job.status();
  auto done = Watch(stub, job->id(), [](const v1::JobEvent&) {});
  if (!done.ok()) return done.status();
  if (done->result() != v1::JOB_RESULT_PASS) {
    return absl::InternalError(absl::StrCat(
        "job ", done->id(), " ended ", v1::JobResult_Name(done->result()), ": ", done->message()));
  }
  return absl::OkStatus();
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

// 1. Submit -> ASSIGNED, one job at a time on idle boards.
struct Latency {
  std::vector<double> client_ms;  // SubmitJob start -> ASSIGNED event received
  std::vector<double> server_ms;  // ASSIGNED event time_ms - submit_time_ms (1 ms resolution)
  std::vector<double> submit_ms;  // the SubmitJob call alone
};

absl::StatusOr<Latency> MeasureLatency(const ServerProcess& server, const v1::Digest& model,
                                       int jobs) {
  auto stub = v1::JobService::NewStub(server.channel);
  Latency latency;
  for (int i = 0; i < jobs; ++i) {
    const auto start = Clock::now();
    auto job = Submit(*stub, JobRequest(model));
    if (!job.ok()) return job.status();
    latency.submit_ms.push_back(MsSince(start));
    bool seen = false;
    auto done = Watch(*stub, job->id(), [&](const v1::JobEvent& event) {
      if (!seen && event.kind_case() == v1::JobEvent::kState &&
          event.state() == v1::JOB_STATE_ASSIGNED) {
        seen = true;
        latency.client_ms.push_back(MsSince(start));
        latency.server_ms.push_back(static_cast<double>(event.time_ms() - job->submit_time_ms()));
      }
    });
    if (!done.ok()) return done.status();
    if (!seen) return absl::InternalError(absl::StrCat("job ", job->id(), " was never assigned"));
    if (done->result() != v1::JOB_RESULT_PASS) {
      return absl::InternalError(absl::StrCat(
          "job ", job->id(), " ended ", v1::JobResult_Name(done->result()), ": ", done->message()));
    }
  }
  return latency;
}

// CPU seconds (user + system) a process has used so far; with `children`, also those of its
// children that have ended (an agent's boardlab-run runs).
double ProcessCpuSeconds(pid_t pid, bool children = false) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 17 && fields >> field; ++i) {  // utime, stime, cutime, cstime
    if (i == 14 || i == 15 || (children && i >= 16)) ticks += std::atof(field.c_str());
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// CPU seconds of a process's children: those that ended (cutime, cstime) and those still
// running (the agent's persistent boardlab-run --serve runners).
double ChildrenCpuSeconds(pid_t pid) {
  double seconds = ProcessCpuSeconds(pid, true) - ProcessCpuSeconds(pid);
  std::error_code error;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    std::ifstream in(task.path() / "children");
    for (pid_t child; in >> child;) seconds += ProcessCpuSeconds(child);
  }
  return seconds;
}

// CPU seconds of a PostgreSQL server: the postmaster, its backends that ended and those still
// connected.
double DatabaseCpuSeconds(pid_t postmaster) {
  return ProcessCpuSeconds(postmaster) + ChildrenCpuSeconds(postmaster);
}

// Whether a postmaster's child serves a client connection (the replicas' store connections and
// listeners, the bench's own): its title names the socket ("postgres: user db [local] idle");
// the checkpointer, WAL writer, autovacuum and the like have titles of their own.
bool IsClientBackend(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string title((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return title.find("[local]") != std::string::npos;
}

// The part of DatabaseCpuSeconds spent by the client backends still connected (the rest: the
// server's own processes, and backends that ended).
double DatabaseBackendsCpuSeconds(pid_t postmaster) {
  double seconds = 0;
  std::error_code error;
  for (const auto& task :
       fs::directory_iterator("/proc/" + std::to_string(postmaster) + "/task", error)) {
    std::ifstream in(task.path() / "children");
    for (pid_t child; in >> child;) {
      if (IsClientBackend(child)) seconds += ProcessCpuSeconds(child);
    }
  }
  return seconds;
}

// The postmaster's pid, from the first line of its data directory's postmaster.pid; -1 when
// it cannot be read.
pid_t PostmasterPid(const std::string& data_dir) {
  std::ifstream in(data_dir + "/postmaster.pid");
  pid_t pid = -1;
  if (!(in >> pid)) return -1;
  return pid;
}

double SelfCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + now.tv_nsec / 1e9;
}

// 2. N jobs from several client threads; finished jobs per second.
struct Throughput {
  int jobs = 0;
  int passed = 0;
  double submit_s = 0;       // until the last SubmitJob returned
  double client_s = 0;       // until the client saw the last job done
  double server_s = 0;       // first submit (client wall clock) -> last end_time_ms (server)
  double jobs_per_s = 0;     // jobs / client_s
  double submits_per_s = 0;  // jobs / submit_s
  int done_while_submitting = 0;
  double server_cpu_s = 0;
  double agent_cpu_s = -1;     // the agent process itself; < 0: in-process fake agent
  double runs_cpu_s = 0;       // its boardlab-run children
  double bench_cpu_s = 0;      // this process: submitters, waiter (and the fake agent)
  double database_cpu_s = -1;  // the PostgreSQL server and its backends; < 0: none
  double backends_cpu_s = 0;   // of it, the client backends (the replicas' connections)
};

// What a throughput run drives: one server, or replicas behind a list of addresses (the clients
// spread their calls round robin), and the agents whose CPU is counted (none: a fake agent).
struct Target {
  std::string address;
  std::vector<pid_t> servers;
  std::vector<pid_t> agents;
  pid_t database = -1;  // a PostgreSQL postmaster whose backends' CPU is counted, or none
};

Target TargetOf(const ServerProcess& server, pid_t agent_pid = -1) {
  Target target{server.address, {server.pid}, {}};
  if (agent_pid > 0) target.agents.push_back(agent_pid);
  return target;
}

double SumCpuSeconds(const std::vector<pid_t>& pids, double (*cpu)(pid_t)) {
  double seconds = 0;
  for (pid_t pid : pids) seconds += cpu(pid);
  return seconds;
}

double OwnCpuSeconds(pid_t pid) { return ProcessCpuSeconds(pid); }

absl::StatusOr<Throughput> MeasureThroughput(const Target& target, const v1::Digest& model,
                                             int jobs, int threads) {
  const bool real_agents = !target.agents.empty();
  const double server_cpu = SumCpuSeconds(target.servers, OwnCpuSeconds);
  const double agent_cpu = SumCpuSeconds(target.agents, OwnCpuSeconds);
  const double runs_cpu = SumCpuSeconds(target.agents, ChildrenCpuSeconds);
  const double bench_cpu = SelfCpuSeconds();
  const double database_cpu = target.database > 0 ? DatabaseCpuSeconds(target.database) : 0;
  const double backends_cpu = target.database > 0 ? DatabaseBackendsCpuSeconds(target.database) : 0;
  std::vector<int64_t> end_ms;
  std::vector<std::string> ids(static_cast<size_t>(jobs));
  std::unique_ptr<std::atomic<bool>[]> ready(new std::atomic<bool>[static_cast<size_t>(jobs)]);
  for (int i = 0; i < jobs; ++i) ready[i] = false;
  std::vector<absl::Status> errors(static_cast<size_t>(threads));
  std::atomic<bool> failed{false};
  std::vector<double> done_ms(static_cast<size_t>(threads));  // each submitter's last return
  const int64_t start_wall = WallMs();
  const auto start = Clock::now();
  std::vector<std::thread> submitters;
  for (int t = 0; t < threads; ++t) {
    submitters.emplace_back([&, t] {
      auto stub = v1::JobService::NewStub(Channel(target.address));
      for (int i = t; i < jobs; i += threads) {
        auto job = Submit(*stub, JobRequest(model));
        if (!job.ok()) {
          errors[static_cast<size_t>(t)] = job.status();
          failed = true;
          return;
        }
        ids[static_cast<size_t>(i)] = job->id();
        ready[i].store(true, std::memory_order_release);
      }
      done_ms[static_cast<size_t>(t)] = MsSince(start);
    });
  }
  // Waits for the jobs in submission order, polling GetJob (at most one poll per 2 ms when the
  // next job is not done yet, so the waiting adds little load).
  auto stub = v1::JobService::NewStub(Channel(target.address));
  Throughput figures;
  figures.jobs = jobs;
  int64_t last_end_ms = 0;
  auto join = [&] {
    for (auto& thread : submitters) {
      if (thread.joinable()) thread.join();
    }
  };
  for (int i = 0; i < jobs && !failed; ++i) {
    while (!ready[i].load(std::memory_order_acquire) && !failed) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (failed) break;
    for (;;) {
      grpc::ClientContext context;
      v1::GetJobRequest request;
      request.set_job_id(ids[static_cast<size_t>(i)]);
      v1::Job job;
      grpc::Status status = stub->GetJob(&context, request, &job);
      if (!status.ok()) {
        failed = true;
        join();
        return boardlab::api::FromGrpcStatus(status);
      }
      if (job.state() == v1::JOB_STATE_DONE) {
        figures.passed += job.result() == v1::JOB_RESULT_PASS ? 1 : 0;
        last_end_ms = std::max(last_end_ms, job.end_time_ms());
        end_ms.push_back(job.end_time_ms());
        break;
      }
      if (MsSince(start) > 600000) {
        failed = true;
        join();
        return absl::DeadlineExceededError("the jobs did not finish within 10 minutes");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  figures.client_s = MsSince(start) / 1000.0;
  figures.server_cpu_s = SumCpuSeconds(target.servers, OwnCpuSeconds) - server_cpu;
  if (real_agents) {
    figures.agent_cpu_s = SumCpuSeconds(target.agents, OwnCpuSeconds) - agent_cpu;
    figures.runs_cpu_s = SumCpuSeconds(target.agents, ChildrenCpuSeconds) - runs_cpu;
  }
  figures.bench_cpu_s = SelfCpuSeconds() - bench_cpu;
  if (target.database > 0) {
    figures.database_cpu_s = DatabaseCpuSeconds(target.database) - database_cpu;
    figures.backends_cpu_s = DatabaseBackendsCpuSeconds(target.database) - backends_cpu;
  }
  join();
  for (const absl::Status& error : errors) {
    if (!error.ok()) return error;
  }
  figures.submit_s = *std::max_element(done_ms.begin(), done_ms.end()) / 1000.0;
  figures.server_s = static_cast<double>(last_end_ms - start_wall) / 1000.0;
  figures.jobs_per_s = jobs / figures.client_s;
  figures.submits_per_s = jobs / figures.submit_s;
  const int64_t submit_end_ms = start_wall + static_cast<int64_t>(figures.submit_s * 1000);
  figures.done_while_submitting = static_cast<int>(
      std::count_if(end_ms.begin(), end_ms.end(), [&](int64_t t) { return t <= submit_end_ms; }));
  return figures;
}

// --pg-statements: what a database ran during a throughput run, from pg_stat_statements (loaded
// into the bench's PostgreSQL at its start): statements per job, the most frequent statements.
class StatementProfile {
 public:
  static absl::StatusOr<std::unique_ptr<StatementProfile>> Open(
      boardlab::testing::PostgresServer& server, const std::string& uri) {
    auto session = server.Connect(uri);
    if (!session.ok()) return session.status();
    if (absl::Status ok = (*session)->Execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        !ok.ok()) {
      return ok;
    }
    return std::unique_ptr<StatementProfile>(new StatementProfile(*std::move(session)));
  }

  // Forgets what ran before (the start, the warm-up jobs).
  absl::Status Reset() { return session_->Execute("SELECT pg_stat_statements_reset()"); }

  // What ran since Reset on this database, per job of `jobs`.
  void Print(int jobs) {
    constexpr char kOfThisDatabase[] =
        " FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = "
        "current_database()) AND query NOT LIKE '%pg_stat_statements%'";
    auto total = session_->Query(absl::StrCat("SELECT COALESCE(sum(calls), 0)", kOfThisDatabase));
    auto top =
        session_->QueryRows(absl::StrCat("SELECT calls, rows, round(mean_exec_time::numeric, 3), "
                                         "left(regexp_replace(query, '\\s+', ' ', 'g'), 150)",
                                         kOfThisDatabase, " ORDER BY calls DESC LIMIT 15"));
    if (!total.ok() || !top.ok()) {
      std::printf("  pg_stat_statements: %s\n",
                  std::string((total.ok() ? top.status() : total.status()).message()).c_str());
      return;
    }
    const double statements = std::atof(total->c_str());
    std::printf("  pg_stat_statements: %.0f statements, %.1f per job; the most frequent:\n",
                statements, statements / jobs);
    std::printf("    %8s %9s %9s %8s  %s\n", "calls", "per job", "rows/call", "mean ms",
                "statement");
    for (const auto& row : *top) {
      const double calls = std::atof(row[0].c_str());
      std::printf("    %8.0f %9.2f %9.2f %8s  %s\n", calls, calls / jobs,
                  calls > 0 ? std::atof(row[1].c_str()) / calls : 0.0, row[2].c_str(),
                  row[3].c_str());
    }
  }

 private:
  explicit StatementProfile(std::unique_ptr<boardlab::testing::PostgresServer::Session> session)
      : session_(std::move(session)) {}
  std::unique_ptr<boardlab::testing::PostgresServer::Session> session_;
};

// 5. Throughput with the real agent over `replicas` servers, sharing one PostgreSQL database
// (`config` names it) and one data directory, the boards split between one agent per replica;
// without a config, one server over SQLite with all the boards. `database`: the PostgreSQL
// postmaster, whose CPU is counted too (-1: none); `profile`: the database's statements during
// the measured jobs are printed (nullptr: not profiled).
absl::StatusOr<Throughput> MeasureReplicas(int replicas, const std::string& config, int jobs,
                                           int threads, pid_t database = -1,
                                           StatementProfile* profile = nullptr) {
  const std::string shared = config.empty() ? "" : MakeTempDir("replicas-data");
  std::vector<std::unique_ptr<ServerProcess>> servers;
  std::vector<std::unique_ptr<AgentProcess>> agents;
  Target target;
  target.database = database;
  for (int r = 0; r < replicas; ++r) {
    auto server = StartServer("replica", config, shared);
    if (!server.ok()) return server.status();
    agents.push_back(StartAgent(**server, kBoards / replicas, absl::StrCat("bench-", r)));
    target.address += (r > 0 ? "," : "") + (*server)->address;
    target.servers.push_back((*server)->pid);
    target.agents.push_back(agents.back()->pid);
    servers.push_back(*std::move(server));
  }
  // Every replica lists every board (docs/server.md, "Replicas").
  if (!WaitForBoards(*servers.back(), kBoards, v1::BOARD_STATE_IDLE)) {
    return absl::UnavailableError(absl::StrCat("the agents did not bring ", kBoards,
                                               " idle boards online; the last agent's log:\n",
                                               Tail(agents.back()->log)));
  }
  absl::StatusOr<v1::Digest> model = UploadTrivialModel(*servers.front());
  if (!model.ok()) return model.status();
  for (const auto& server : servers) {  // the compile, and every replica's first assignment
    auto stub = v1::JobService::NewStub(server->channel);
    if (absl::Status ok = RunOneJob(*stub, *model); !ok.ok()) return ok;
  }
  if (profile != nullptr) {
    if (absl::Status ok = profile->Reset(); !ok.ok()) return ok;
  }
  absl::StatusOr<Throughput> throughput = MeasureThroughput(target, *model, jobs, threads);
  if (profile != nullptr && throughput.ok()) profile->Print(jobs);
  return throughput;
}

// 3. Upload against a raw loopback copy.
std::string RandomBytes(size_t size, uint64_t seed) {
  std::string bytes(size, '\0');
  uint64_t state = seed;
  for (size_t i = 0; i + 8 <= size; i += 8) {  // splitmix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    std::memcpy(&bytes[i], &z, 8);
  }
  return bytes;
}

// A connected pair of TCP sockets over 127.0.0.1; false when the sockets fail.
bool LoopbackPair(int& sender, int& receiver) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(listener);
    return false;
  }
  sender = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(sender, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(listener);
    close(sender);
    return false;
  }
  receiver = accept(listener, nullptr, nullptr);
  close(listener);
  return receiver >= 0;
}

constexpr size_t kRawPiece = 1 << 20;

// Reads the stream into memory, or into `out` when it is open; the bytes received.
size_t ReceiveRaw(int receiver, int out) {
  std::vector<char> buffer(kRawPiece);
  size_t received = 0;
  for (;;) {
    ssize_t n = read(receiver, buffer.data(), buffer.size());
    if (n <= 0) break;
    if (out >= 0 && write(out, buffer.data(), static_cast<size_t>(n)) != n) break;
    received += static_cast<size_t>(n);
  }
  return received;
}

// Reads into `slot` until it is full or the stream ends, writing each piece to `out` at once;
// the bytes read (0 at the end of the stream or on an error).
size_t FillSlot(int receiver, int out, std::vector<char>& slot) {
  size_t filled = 0;
  while (filled < slot.size()) {
    ssize_t n = read(receiver, slot.data() + filled, std::min(kRawPiece, slot.size() - filled));
    if (n <= 0 || write(out, slot.data() + filled, static_cast<size_t>(n)) != n) break;
    filled += static_cast<size_t>(n);
  }
  return filled;
}

// ReceiveRaw into `out` that also checks the bytes against `sha256`, as any receiver that
// verifies what it stores must: each 4 MiB read goes to a second thread that hashes it, through
// a ring of three buffers. The bytes received, or 0 when the hash differs.
size_t ReceiveRawVerified(int receiver, int out, const std::string& sha256) {
  constexpr int kSlots = 3;
  std::vector<std::vector<char>> slots(kSlots, std::vector<char>(4 * kRawPiece));
  std::vector<size_t> filled(kSlots, 0);
  std::counting_semaphore<kSlots> free_slots(kSlots);
  std::counting_semaphore<kSlots> full_slots(0);
  boardlab::api::Sha256 hash;
  std::thread hasher([&] {
    for (int i = 0;; i = (i + 1) % kSlots) {
      full_slots.acquire();
      if (filled[i] == 0) return;  // the end
      hash.Update(std::string_view(slots[i].data(), filled[i]));
      free_slots.release();
    }
  });
  size_t received = 0;
  for (int i = 0;; i = (i + 1) % kSlots) {
    free_slots.acquire();
    filled[i] = FillSlot(receiver, out, slots[i]);
    received += filled[i];
    full_slots.release();
    if (filled[i] == 0) break;
  }
  hasher.join();
  return hash.FinishHex() == sha256 ? received : 0;
}

// How the raw peer's receiver treats the bytes.
enum class RawSink {
  kMemory,        // reads them and drops them
  kFile,          // writes them to a file (what `nc -l > file` does)
  kVerifiedFile,  // writes them to a file and checks their SHA-256 on a second thread
};

// Copies `bytes` through a TCP connection over 127.0.0.1 with plain write/read in 1 MiB
// pieces into `sink`: the raw peer of an upload. A file is left in place, as an uploaded blob
// is. Returns MB/s (10^6 bytes), or a negative value when the sockets fail or the hash differs.
double RawLoopbackMBps(const std::string& bytes, RawSink sink, const std::string& file = "",
                       const std::string& sha256 = "") {
  int sender = -1;
  int receiver = -1;
  if (!LoopbackPair(sender, receiver)) return -1;
  const auto start = Clock::now();
  std::thread writer([&] {
    size_t offset = 0;
    while (offset < bytes.size()) {
      ssize_t n = write(sender, bytes.data() + offset, std::min(kRawPiece, bytes.size() - offset));
      if (n <= 0) break;
      offset += static_cast<size_t>(n);
    }
    shutdown(sender, SHUT_WR);
  });
  int out = sink == RawSink::kMemory ? -1 : open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  size_t received = sink == RawSink::kVerifiedFile ? ReceiveRawVerified(receiver, out, sha256)
                                                   : ReceiveRaw(receiver, out);
  if (out >= 0) close(out);
  const double seconds = MsSince(start) / 1000.0;
  writer.join();
  close(sender);
  close(receiver);
  if (received != bytes.size()) return -1;
  return static_cast<double>(bytes.size()) / 1e6 / seconds;
}

// Copies `bytes` into the new file `path` with plain 1 MiB writes and closes it (no fsync), as
// the server's blob store does, and leaves it there; returns MB/s, or a negative value on failure.
double FileWriteMBps(const std::string& bytes, const std::string& path) {
  const auto start = Clock::now();
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  size_t offset = 0;
  while (offset < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + offset, std::min<size_t>(1 << 20, bytes.size() - offset));
    if (n <= 0) break;
    offset += static_cast<size_t>(n);
  }
  close(fd);
  const double seconds = MsSince(start) / 1000.0;
  return offset == bytes.size() ? bytes.size() / 1e6 / seconds : -1;
}

struct Upload {
  std::vector<double> upload_mbps;
  std::vector<double> raw_mbps;
  std::vector<double> raw_file_mbps;  // raw TCP copy written to a file beside the server's data
  std::vector<double> verified_mbps;  // the same, hashed on a second thread and checked
  std::vector<double> disk_mbps;      // the same bytes written to a file next to the server's data
  std::vector<double> upload_s;
  std::vector<double> server_cpu_s;  // during each upload
  std::vector<double> client_cpu_s;
  double sha256_mbps = 0;  // one thread hashing the same bytes (the server hashes every upload)
};

// Every copy keeps its file to the end, as the blob store keeps each blob: a file deleted at
// once hands its page-cache pages straight to the next writer, and on a VM whose freed memory
// goes back to the host (virtio-balloon free page reporting) fresh pages cost several times
// more to fill than recycled ones. Rounds rotate which of the copies goes first.
absl::StatusOr<Upload> MeasureUpload(const ServerProcess& server, size_t size, int rounds) {
  Upload figures;
  boardlab::api::BlobClient blobs(server.channel, "");
  std::vector<std::string> kept_files;
  auto remove_kept_files = absl::MakeCleanup([&] {
    for (const std::string& file : kept_files) unlink(file.c_str());
  });
  for (int r = 0; r < rounds; ++r) {
    std::string bytes = RandomBytes(size, 1000 + static_cast<uint64_t>(r));  // new blob each time
    auto hash_start = Clock::now();
    v1::Digest digest = boardlab::api::DigestOf(bytes);
    figures.sha256_mbps = std::max(figures.sha256_mbps, size / 1e6 / (MsSince(hash_start) / 1e3));
    auto upload = [&]() -> absl::Status {
      const double server_cpu = ProcessCpuSeconds(server.pid);
      const double client_cpu = SelfCpuSeconds();
      const auto start = Clock::now();
      if (absl::Status ok = blobs.Upload(digest, bytes); !ok.ok()) return ok;
      figures.upload_s.push_back(MsSince(start) / 1000.0);
      figures.server_cpu_s.push_back(ProcessCpuSeconds(server.pid) - server_cpu);
      figures.client_cpu_s.push_back(SelfCpuSeconds() - client_cpu);
      figures.upload_mbps.push_back(size / 1e6 / figures.upload_s.back());
      return absl::OkStatus();
    };
    auto raw_copy = [&](RawSink sink, const char* name, std::vector<double>& mbps) {
      kept_files.push_back(absl::StrCat(server.dir, "/", name, "-", r));
      double figure = RawLoopbackMBps(bytes, sink, kept_files.back(), digest.sha256());
      if (figure < 0) return absl::InternalError(absl::StrCat("the ", name, " failed"));
      mbps.push_back(figure);
      return absl::OkStatus();
    };
    std::vector<std::function<absl::Status()>> copies = {
        upload,
        [&] { return raw_copy(RawSink::kFile, "raw-copy", figures.raw_file_mbps); },
        [&] {
          return raw_copy(RawSink::kVerifiedFile, "verified-raw-copy", figures.verified_mbps);
        },
    };
    // The copy that goes first in a round fills the memory the previous round freed: each goes
    // first in turn.
    std::rotate(copies.begin(), copies.begin() + r % copies.size(), copies.end());
    for (const auto& copy : copies) {
      if (absl::Status ok = copy(); !ok.ok()) return ok;
    }
    double raw = RawLoopbackMBps(bytes, RawSink::kMemory);
    if (raw < 0) return absl::InternalError("the raw loopback copy failed");
    figures.raw_mbps.push_back(raw);
    kept_files.push_back(absl::StrCat(server.dir, "/write-test-", r));
    double disk = FileWriteMBps(bytes, kept_files.back());
    if (disk < 0) return absl::InternalError("the file write test failed");
    figures.disk_mbps.push_back(disk);
  }
  auto missing = blobs.FindMissing({boardlab::api::DigestOf(RandomBytes(size, 1000))});
  if (!missing.ok()) return missing.status();
  if (!missing->empty()) return absl::InternalError("the uploaded blob is not in the store");
  return figures;
}

// 4. Memory with N queued jobs.
struct Memory {
  int jobs = 0;
  ProcMemory before;
  ProcMemory after;
  double submits_per_s = 0;
};

absl::StatusOr<Memory> MeasureQueuedMemory(int jobs, int threads) {
  auto server = StartServer("memory");
  if (!server.ok()) return server.status();
  {
    // Registers 8 boards, then goes away: the boards stay known (jobs are accepted) but offline.
    FakeAgent agent((*server)->channel, "gone", kBoards);
    if (absl::Status ok = agent.Start(); !ok.ok()) return ok;
    agent.Stop();
  }
  if (!WaitForBoards(**server, kBoards, v1::BOARD_STATE_OFFLINE)) {
    return absl::InternalError("the boards did not go offline after their agent left");
  }
  auto model = UploadTrivialModel(**server);
  if (!model.ok()) return model.status();
  Memory figures;
  figures.jobs = jobs;
  figures.before = ReadMemory((*server)->pid);
  std::vector<absl::Status> errors(static_cast<size_t>(threads));
  const auto start = Clock::now();
  std::vector<std::thread> submitters;
  for (int t = 0; t < threads; ++t) {
    submitters.emplace_back([&, t] {
      auto stub = v1::JobService::NewStub((*server)->channel);
      for (int i = t; i < jobs; i += threads) {
        auto job = Submit(*stub, JobRequest(*model));
        if (!job.ok()) {
          errors[static_cast<size_t>(t)] = job.status();
          return;
        }
      }
    });
  }
  for (auto& thread : submitters) thread.join();
  figures.submits_per_s = jobs / (MsSince(start) / 1000.0);
  for (const absl::Status& error : errors) {
    if (!error.ok()) return error;
  }
  // The first job waits for the compile; the rest hit the cache. All must end up queued.
  auto stub = v1::JobService::NewStub((*server)->channel);
  for (int attempt = 0;; ++attempt) {
    grpc::ClientContext context;
    v1::ListJobsRequest request;
    request.add_states(v1::JOB_STATE_QUEUED);
    request.set_page_size(1);
    v1::ListJobsResponse response;
    grpc::Status status = stub->ListJobs(&context, request, &response);
    if (!status.ok()) return boardlab::api::FromGrpcStatus(status);
    grpc::ClientContext get_context;
    v1::GetJobRequest get;
    get.set_job_id("j00000001");
    v1::Job first;
    status = stub->GetJob(&get_context, get, &first);
    if (!status.ok()) return boardlab::api::FromGrpcStatus(status);
    if (first.state() == v1::JOB_STATE_QUEUED) break;
    if (attempt > 200) return absl::InternalError("the first job never reached the queue");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a Tick or two over the queue
  figures.after = ReadMemory((*server)->pid);
  return figures;
}

// ---------------------------------------------------------------------------------------------
// Output.

struct Row {
  std::string figure;
  std::string target;
  std::string measured;
  std::string ok;
};

std::string Format(const char* format, double a) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, a);
  return buffer;
}

std::string Join(const std::vector<double>& values, const char* format) {
  std::string out;
  for (double v : values) absl::StrAppend(&out, out.empty() ? "" : ", ", Format(format, v));
  return out;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five;
  in >> one >> five;
  return one + " " + five;
}

std::string Verdict(bool ok) { return ok ? "ok" : "MISSED"; }

int Fail(std::vector<Row>& rows, const std::string& figure, const std::string& target,
         const absl::Status& status) {
  std::printf("  could not measure: %s\n", std::string(status.message()).c_str());
  rows.push_back({figure, target, "n/a", "ERROR"});
  return 1;
}

int ReportThroughput(std::vector<Row>& rows, const std::string& figure, const std::string& target,
                     const absl::StatusOr<Throughput>& throughput, double at_least = 500) {
  if (!throughput.ok()) return Fail(rows, figure, target, throughput.status());
  const Throughput& t = *throughput;
  std::printf(
      "  %d/%d PASS; submitted in %.2f s (%.0f submits/s); all done after %.2f s (client) / "
      "%.2f s (server end times)\n",
      t.passed, t.jobs, t.submit_s, t.submits_per_s, t.client_s, t.server_s);
  std::printf(
      "  finished jobs/s: %.0f; %d done while submitting (%.0f/s), the other %d in the "
      "%.2f s after (%.0f/s)\n",
      t.jobs_per_s, t.done_while_submitting, t.done_while_submitting / t.submit_s,
      t.jobs - t.done_while_submitting, t.client_s - t.submit_s,
      (t.jobs - t.done_while_submitting) / std::max(1e-3, t.client_s - t.submit_s));
  std::printf("  CPU s: server %.2f (%.2f ms/job)", t.server_cpu_s, 1000 * t.server_cpu_s / t.jobs);
  if (t.agent_cpu_s >= 0) {
    std::printf(", agent %.2f (%.2f ms/job), its boardlab-run children %.2f (%.2f ms/job)",
                t.agent_cpu_s, 1000 * t.agent_cpu_s / t.jobs, t.runs_cpu_s,
                1000 * t.runs_cpu_s / t.jobs);
  }
  if (t.database_cpu_s >= 0) {
    std::printf(", PostgreSQL %.2f (%.2f ms/job, of it client backends %.2f ms/job)",
                t.database_cpu_s, 1000 * t.database_cpu_s / t.jobs,
                1000 * t.backends_cpu_s / t.jobs);
  }
  std::printf(", bench %.2f; wall %.2f s on %ld CPUs (load average %s)\n", t.bench_cpu_s,
              t.client_s, sysconf(_SC_NPROCESSORS_ONLN), LoadAverage().c_str());
  const bool all_passed = t.passed == t.jobs;
  rows.push_back({figure, target, Format("%.0f jobs/s", t.jobs_per_s),
                  all_passed ? Verdict(t.jobs_per_s >= at_least) : "ERROR (not all PASS)"});
  return all_passed ? 0 : 1;
}

// All the CPU time a run's processes spent, in seconds.
double TotalCpuSeconds(const Throughput& t) {
  return t.server_cpu_s + std::max(0.0, t.agent_cpu_s) + t.runs_cpu_s +
         std::max(0.0, t.database_cpu_s) + t.bench_cpu_s;
}

// Section 5's CPU time side by side: milliseconds per job by process kind, and how many of the
// machine's CPUs the run kept busy on average (below their number: the jobs wait on each other
// or on other processes as well as on CPU). "CPU-bound" is the rate at which a run's CPU time per
// job would keep every CPU of this machine busy: no run here can go faster, whatever waits it
// loses, since every process of it shares these CPUs.
void PrintCpuTable(const std::vector<std::pair<std::string, Throughput>>& runs) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::printf("  CPU ms per job by process kind (user + system from /proc/<pid>/stat):\n");
  std::printf("    %-22s %7s %7s %7s %13s %12s %9s %7s %7s %11s %10s\n", "configuration", "jobs/s",
              "server", "agent", "boardlab-run", "PG backends", "PG other", "bench", "total",
              "CPUs busy", "CPU-bound");
  for (const auto& run : runs) {
    const Throughput& t = run.second;
    const double database = std::max(0.0, t.database_cpu_s);
    const double total = TotalCpuSeconds(t);
    auto per_job = [&](double seconds) { return 1000 * seconds / t.jobs; };
    std::printf("    %-22s %7.1f %7.2f %7.2f %13.2f %12.2f %9.2f %7.2f %7.2f %11.2f %10.0f\n",
                run.first.c_str(), t.jobs_per_s, per_job(t.server_cpu_s),
                per_job(std::max(0.0, t.agent_cpu_s)), per_job(t.runs_cpu_s),
                per_job(t.backends_cpu_s), per_job(database - t.backends_cpu_s),
                per_job(t.bench_cpu_s), per_job(total), total / t.client_s, t.jobs * cpus / total);
  }
}

// Whether the two replicas could reach the SQLite server's rate on this machine at the CPU time
// per job they spent: every process shares its CPUs, so replicas add no CPU here, and a rate
// above cpus / (CPU time per job) cannot be reached by removing waits alone.
void PrintReplicaCpuBound(const Throughput& sqlite, const Throughput& replicas) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const double replica_ms = 1000 * TotalCpuSeconds(replicas) / replicas.jobs;
  const double bound = 1000.0 * cpus / replica_ms;
  const double budget_ms = 1000.0 * cpus / sqlite.jobs_per_s;
  std::printf(
      "  two replicas at %.2f ms of CPU per job can reach at most %.0f jobs/s on these %ld CPUs; "
      "SQLite's %.0f jobs/s needs at most %.2f ms per job in all (%s)\n",
      replica_ms, bound, cpus, sqlite.jobs_per_s, budget_ms,
      bound >= sqlite.jobs_per_s ? "within reach by removing waits"
                                 : "out of reach here without cutting CPU time per job");
}

// Section 5: SQLite single server, one PostgreSQL replica, two PostgreSQL replicas.
int ReportReplicas(std::vector<Row>& rows, int jobs, int threads, bool pg_statements) {
  std::printf(
      "\n[5] throughput, %d jobs from %d client threads, %d sim boards, boardlab-agent: one "
      "server over SQLite, then one and two replicas over one PostgreSQL (a throwaway server on "
      "this machine, Unix socket) sharing a data directory, the boards split between one agent "
      "per replica and the clients' calls spread round robin over the replicas\n",
      jobs, threads, kBoards);
  const std::string sqlite_figure = "throughput, SQLite, 1 server";
  auto sqlite = MeasureReplicas(1, "", jobs, threads);
  int errors = ReportThroughput(rows, sqlite_figure, "(reference)", sqlite, 0);
  std::vector<std::pair<std::string, Throughput>> measured;
  if (sqlite.ok()) measured.emplace_back("SQLite, 1 server", *sqlite);
  // With --pg-statements a server of its own, which loads pg_stat_statements at its start.
  std::unique_ptr<boardlab::testing::PostgresServer> profiled;
  absl::StatusOr<boardlab::testing::PostgresServer*> postgres =
      boardlab::testing::PostgresServer::Shared();
  if (pg_statements) {
    auto started =
        boardlab::testing::PostgresServer::Start("-c shared_preload_libraries=pg_stat_statements");
    if (started.ok()) profiled = *std::move(started);
    postgres = started.ok() ? absl::StatusOr<boardlab::testing::PostgresServer*>(profiled.get())
                            : absl::StatusOr<boardlab::testing::PostgresServer*>(started.status());
  }
  const double reference = sqlite.ok() ? sqlite->jobs_per_s : 0;
  const std::string target = sqlite.ok() ? Format(">= %.0f jobs/s", reference) : ">= SQLite";
  for (int replicas : {1, 2}) {
    const std::string figure =
        absl::StrCat("throughput, PostgreSQL, ", replicas, " replica", replicas > 1 ? "s" : "");
    absl::StatusOr<std::string> uri = postgres.ok()
                                          ? (*postgres)->CreateDatabase()
                                          : absl::StatusOr<std::string>(postgres.status());
    if (!uri.ok()) {
      errors += Fail(rows, figure, target, uri.status());
      continue;
    }
    const std::string config = MakeTempDir("replicas-config") + "/server.yaml";
    std::ofstream(config) << "store: \"" << *uri
                          << "\"\nstore_password_file: " << (*postgres)->password_file() << "\n";
    std::printf("  %s:\n", figure.c_str());
    std::unique_ptr<StatementProfile> profile;
    if (pg_statements) {
      auto opened = StatementProfile::Open(**postgres, *uri);
      if (!opened.ok()) {
        errors += Fail(rows, figure, target, opened.status());
        continue;
      }
      profile = *std::move(opened);
    }
    // Only the two replicas have a target: as fast as the SQLite server, or faster.
    auto throughput =
        MeasureReplicas(replicas, config, jobs, threads,
                        PostmasterPid((*postgres)->socket_dir() + "/data"), profile.get());
    errors += ReportThroughput(rows, figure, replicas == 2 ? target : "(reference)", throughput,
                               replicas == 2 ? reference : 0);
    if (throughput.ok()) {
      measured.emplace_back(
          absl::StrCat("PostgreSQL, ", replicas, " replica", replicas > 1 ? "s" : ""), *throughput);
    }
  }
  PrintCpuTable(measured);
  if (sqlite.ok() && measured.size() > 1 && measured.back().first == "PostgreSQL, 2 replicas") {
    PrintReplicaCpuBound(*sqlite, measured.back().second);
  }
  return errors;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int latency_jobs = 200;
  int throughput_jobs = 2000;
  int threads = 4;
  size_t upload_mib = 256;
  int queued_jobs = 10000;
  std::string only;            // agent (1, 2a), fake (2b), upload (3), memory (4) or replicas (5)
  std::string store;           // "postgres": also 5, replicas on a throwaway PostgreSQL
  bool pg_statements = false;  // 5 profiled with pg_stat_statements
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> long { return i + 1 < argc ? std::atol(argv[++i]) : 0; };
    if (arg == "--quick") {
      quick = true;
      latency_jobs = 20;
      throughput_jobs = 200;
      threads = 2;
      upload_mib = 16;
      queued_jobs = 500;
    } else if (arg == "--jobs") {
      throughput_jobs = static_cast<int>(std::max(1L, next()));
    } else if (arg == "--latency-jobs") {
      latency_jobs = static_cast<int>(std::max(1L, next()));
    } else if (arg == "--threads") {
      threads = static_cast<int>(std::max(1L, next()));
    } else if (arg == "--upload-mib") {
      upload_mib = static_cast<size_t>(std::max(1L, next()));
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--store" && i + 1 < argc) {
      store = argv[++i];
    } else if (arg == "--pg-statements") {
      pg_statements = true;
    } else if (arg == "--queued") {
      queued_jobs = static_cast<int>(std::max(1L, next()));
    } else if (arg == "--server-binary" && i + 1 < argc) {
      g_server_binary = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: service_bench [--quick] [--latency-jobs N] [--jobs N] [--threads N] "
                   "[--upload-mib N] [--queued N] [--only agent|fake|upload|memory|replicas] "
                   "[--store postgres [--pg-statements]] [--server-binary PATH]\n");
      return 2;
    }
  }
  if (pg_statements && store != "postgres") {
    std::fprintf(stderr, "service_bench: --pg-statements profiles --store postgres only\n");
    return 2;
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::atexit(CleanUp);
  signal(SIGINT, OnSignal);
  signal(SIGTERM, OnSignal);
  signal(SIGPIPE, SIG_IGN);

  std::printf("service_bench%s: server %s\n", quick ? " --quick" : "", g_server_binary.c_str());
  std::vector<Row> rows;
  int errors = 0;

  // 1 and 2a: the real agent with 8 sim boards.
  if (only.empty() || only == "agent") {
    std::printf(
        "\n[1] submit -> assigned latency, %d jobs one at a time, %d idle sim boards "
        "(boardlab-agent)\n",
        latency_jobs, kBoards);
    std::printf(
        "  measured on the client: SubmitJob start -> receipt of the ASSIGNED event on a WatchJob\n"
        "  stream opened right after the submit returns. This is what a CI job sees, includes\n"
        "  both RPCs, and has microsecond resolution; the server's event time stamps only have\n"
        "  1 ms resolution (they are shown as a cross-check). Each job is followed to its end\n"
        "  before the next is submitted, so every submit finds idle boards; 3 warm-up jobs\n"
        "  (compile, artifact cache) are not counted.\n");
    const std::string target1 = "p99 < 20 ms";
    const std::string figure1 = "submit->assigned p99 (client)";
    const std::string figure2 = "throughput, boardlab-agent";
    const std::string target2 = ">= 500 jobs/s";
    auto server = StartServer("agent");
    std::unique_ptr<AgentProcess> agent;
    absl::StatusOr<v1::Digest> model = absl::UnknownError("");
    if (server.ok()) {
      agent = StartAgent(**server, kBoards);
      if (!WaitForBoards(**server, kBoards, v1::BOARD_STATE_IDLE)) {
        server = absl::UnavailableError(absl::StrCat("boardlab-agent did not bring ", kBoards,
                                                     " idle boards online; its log:\n",
                                                     Tail(agent->log)));
      }
    }
    if (server.ok()) model = UploadTrivialModel(**server);
    if (server.ok() && model.ok()) {
      auto stub = v1::JobService::NewStub((*server)->channel);
      for (int i = 0; i < 3 && model.ok(); ++i) {
        if (absl::Status ok = RunOneJob(*stub, *model); !ok.ok()) model = ok;
      }
    }
    if (!server.ok() || !model.ok()) {
      absl::Status why = server.ok() ? model.status() : server.status();
      errors += Fail(rows, figure1, target1, why);
      errors += Fail(rows, figure2, target2, why);
    } else {
      auto latency = MeasureLatency(**server, *model, latency_jobs);
      if (!latency.ok()) {
        errors += Fail(rows, figure1, target1, latency.status());
      } else {
        double p50 = Percentile(latency->client_ms, 50), p99 = Percentile(latency->client_ms, 99);
        std::printf("  client   p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms\n", p50, p99,
                    Percentile(latency->client_ms, 100));
        std::printf("  submit   p50 %7.2f ms  p99 %7.2f ms  (the SubmitJob call alone)\n",
                    Percentile(latency->submit_ms, 50), Percentile(latency->submit_ms, 99));
        std::printf("  server   p50 %7.0f ms  p99 %7.0f ms  (event time stamps)\n",
                    Percentile(latency->server_ms, 50), Percentile(latency->server_ms, 99));
        rows.push_back({figure1, target1, Format("%.2f ms", p99) + Format(" (p50 %.2f)", p50),
                        Verdict(p99 < 20)});
      }
      std::printf(
          "\n[2a] throughput, %d jobs from %d client threads, %d sim boards, "
          "boardlab-agent (a boardlab-run --serve child per board)\n",
          throughput_jobs, threads, kBoards);
      errors += ReportThroughput(
          rows, figure2, target2,
          MeasureThroughput(TargetOf(**server, agent->pid), *model, throughput_jobs, threads));
    }
  }

  // 2b: the server alone, with fake agents.
  if (only.empty() || only == "fake") {
    std::printf(
        "\n[2b] throughput, %d jobs from %d client threads, the server alone: an "
        "in-process fake agent (AgentService over gRPC: Hello with %d boards, heartbeats, "
        "3 stage events and a PASS RunResult per assignment, at once)\n",
        throughput_jobs, threads, kBoards);
    const std::string figure = "throughput, server alone (fake agent)";
    const std::string target = ">= 500 jobs/s";
    auto server = StartServer("fake");
    absl::Status ok = server.status();
    std::unique_ptr<FakeAgent> agent;
    absl::StatusOr<v1::Digest> model = absl::UnknownError("");
    if (ok.ok()) {
      agent = std::make_unique<FakeAgent>((*server)->channel, "fake", kBoards);
      ok = agent->Start();
    }
    if (ok.ok() && !WaitForBoards(**server, kBoards, v1::BOARD_STATE_IDLE)) {
      ok = absl::UnavailableError("the fake agent's boards did not come online");
    }
    if (ok.ok()) {
      model = UploadTrivialModel(**server);
      ok = model.status();
    }
    if (ok.ok()) {
      auto stub = v1::JobService::NewStub((*server)->channel);
      ok = RunOneJob(*stub, *model);  // the compile
    }
    absl::StatusOr<Throughput> throughput =
        ok.ok() ? MeasureThroughput(TargetOf(**server), *model, throughput_jobs, threads)
                : absl::StatusOr<Throughput>(ok);
    errors += ReportThroughput(rows, figure, target, throughput);
    if (agent) agent->Stop();
  }

  // 3: upload.
  if (only.empty() || only == "upload") {
    const size_t size = upload_mib << 20;
    std::printf(
        "\n[3] upload: a %zu MiB random blob through ArtifactService.Upload (BlobClient, "
        "4 MiB chunks) vs a raw TCP copy over 127.0.0.1 (write/read, 1 MiB pieces) of the "
        "same bytes; %d rounds, a new blob each, each copy first in turn, every file kept to the "
        "end as the blob is\n",
        upload_mib, kUploadRounds);
    const std::string figure = "upload / raw loopback copy to file";
    const std::string target = ">= 50 %";
    auto server = StartServer("upload");
    absl::StatusOr<Upload> upload = server.ok() ? MeasureUpload(**server, size, kUploadRounds)
                                                : absl::StatusOr<Upload>(server.status());
    if (!upload.ok()) {
      errors += Fail(rows, figure, target, upload.status());
    } else {
      double best_upload =
          *std::max_element(upload->upload_mbps.begin(), upload->upload_mbps.end());
      double best_raw =
          *std::max_element(upload->raw_file_mbps.begin(), upload->raw_file_mbps.end());
      double best_raw_memory = *std::max_element(upload->raw_mbps.begin(), upload->raw_mbps.end());
      double ratio = best_upload / best_raw;
      std::printf("  upload   MB/s: %s\n", Join(upload->upload_mbps, "%.0f").c_str());
      std::printf(
          "  raw TCP into a file MB/s: %s (the peer: the same bytes over a plain socket, "
          "written to a file beside the server's data, as `nc -l > file` would)\n",
          Join(upload->raw_file_mbps, "%.0f").c_str());
      double best_verified =
          *std::max_element(upload->verified_mbps.begin(), upload->verified_mbps.end());
      std::printf(
          "  verified raw TCP into a file MB/s: %s (the same raw copy, its SHA-256 computed on a "
          "second thread and checked, as any store that verifies what it keeps must: %.1f %% of "
          "the raw copy into a file; upload / this = %.1f %%)\n",
          Join(upload->verified_mbps, "%.0f").c_str(), 100 * best_verified / best_raw,
          100 * best_upload / best_verified);
      std::printf("  raw TCP to memory MB/s: %s (no disk; upload / this = %.1f %%)\n",
                  Join(upload->raw_mbps, "%.0f").c_str(), 100 * best_upload / best_raw_memory);
      std::printf(
          "  file write MB/s: %s (the same bytes written to a file beside the server's "
          "data, no fsync: the blob store's floor)\n",
          Join(upload->disk_mbps, "%.0f").c_str());
      std::printf("  upload wall s: %s; server CPU s: %s; bench CPU s: %s\n",
                  Join(upload->upload_s, "%.2f").c_str(),
                  Join(upload->server_cpu_s, "%.2f").c_str(),
                  Join(upload->client_cpu_s, "%.2f").c_str());
      std::printf(
          "  SHA-256  MB/s: %.0f (one thread here; the server hashes every upload, and "
          "writes it to its data directory)\n",
          upload->sha256_mbps);
      std::printf("  ratio (best upload / best raw copy into a file): %.1f %%\n", 100 * ratio);
      rows.push_back({figure, target,
                      Format("%.1f %%", 100 * ratio) + Format(" (%.0f", best_upload) +
                          Format(" / %.0f MB/s)", best_raw),
                      Verdict(ratio >= 0.5)});
    }
  }

  // 4: memory.
  if (only.empty() || only == "memory") {
    std::printf(
        "\n[4] server memory with %d queued jobs (8 boards registered by an agent that "
        "then left, so every job stays queued; %d client threads)\n",
        queued_jobs, threads);
    const std::string figure = absl::StrCat("server VmRSS, ", queued_jobs, " queued");
    const std::string target = "< 200 MB";
    auto memory = MeasureQueuedMemory(queued_jobs, threads);
    if (!memory.ok()) {
      errors += Fail(rows, figure, target, memory.status());
    } else {
      std::printf("  before: VmRSS %.1f MB  VmHWM %.1f MB\n", memory->before.rss_mb,
                  memory->before.hwm_mb);
      std::printf(
          "  after:  VmRSS %.1f MB  VmHWM %.1f MB  (%.1f KB per queued job; submitted "
          "at %.0f jobs/s)\n",
          memory->after.rss_mb, memory->after.hwm_mb,
          (memory->after.rss_mb - memory->before.rss_mb) * 1024 / memory->jobs,
          memory->submits_per_s);
      rows.push_back(
          {figure, target,
           Format("%.1f MB", memory->after.rss_mb) + Format(" (HWM %.1f)", memory->after.hwm_mb),
           Verdict(memory->after.rss_mb < 200)});
    }
  }

  // 5: replicas on PostgreSQL against the SQLite single server, in this run.
  if (store == "postgres" && (only.empty() || only == "replicas")) {
    errors += ReportReplicas(rows, throughput_jobs, threads, pg_statements);
  }

  std::printf("\n%-40s %-15s %-32s %s\n", "figure", "target", "measured", "ok");
  bool all_ok = true;
  for (const Row& row : rows) {
    std::printf("%-40s %-15s %-32s %s\n", row.figure.c_str(), row.target.c_str(),
                row.measured.c_str(), row.ok.c_str());
    all_ok = all_ok && row.ok == "ok";
  }
  if (quick)
    std::printf("(--quick: small sizes; the figures are not comparable with the targets)\n");
  std::fflush(stdout);
  if (errors > 0) return 2;
  return quick || all_ok ? 0 : 1;
}
