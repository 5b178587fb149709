#include "tests/service/harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/json_util.h"
#include "proto/support/digest.h"
#include "proto/support/grpc_util.h"
#include "tests/support/free_port.h"
#include "tests/support/test_models.h"

namespace boardlab::testing::service {
namespace {

namespace fs = std::filesystem;
using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;

constexpr auto kServerStartTimeout = std::chrono::seconds(30);
constexpr auto kAgentStartTimeout = std::chrono::seconds(30);
constexpr auto kCallTimeout = std::chrono::seconds(10);
constexpr size_t kLogTailBytes = 6000;

std::string FromEnvironmentOr(const char* name, const char* built_in) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : built_in;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string Tail(const std::string& text, size_t bytes) {
  if (text.size() <= bytes) return text;
  return absl::StrCat("...", text.substr(text.size() - bytes));
}

void SetDeadline(grpc::ClientContext& context, std::chrono::milliseconds timeout) {
  context.set_deadline(std::chrono::system_clock::now() + timeout);
}

absl::Status CallStatus(const grpc::Status& status, const char* what) {
  if (status.ok()) return absl::OkStatus();
  absl::Status s = api::FromGrpcStatus(status);
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}

}  // namespace

std::string TokensYaml(const std::vector<TestToken>& tokens) {
  std::string yaml = "tokens:\n";
  for (const TestToken& token : tokens) {
    absl::StrAppend(&yaml, "  - sha256: ", api::Sha256Hex(token.secret),
                    "\n    tenant: ", token.tenant, "\n    role: ", token.role, "\n");
  }
  return yaml;
}

std::string ServerBinary() {
  return FromEnvironmentOr("BOARDLAB_SERVER_BIN", BOARDLAB_SERVER_PATH);
}
std::string AgentBinary() { return FromEnvironmentOr("BOARDLAB_AGENT_BIN", BOARDLAB_AGENT_PATH); }
std::string ClientBinary() {
  return FromEnvironmentOr("BOARDLAB_CLIENT_BIN", BOARDLAB_CLIENT_PATH);
}

std::vector<uint8_t> FastModel() { return SingleFullyConnected(); }

std::vector<uint8_t> SlowModel() {
  return SingleConv2D({.in_h = 48, .in_w = 48, .in_c = 16, .out_c = 32});
}

std::ostream& operator<<(std::ostream& os, const ClientResult& r) {
  os << "exit code " << r.exit_code << (r.timed_out ? " (timed out, killed)" : "")
     << "\n--- stdout:\n"
     << Tail(r.out, 3000) << "\n--- stderr:\n"
     << Tail(r.err, 3000);
  return os;
}

// ---------------------------------------------------------------------------------------------
// Helpers.

AssertionResult WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                        const std::string& what, std::chrono::milliseconds poll) {
  const auto start = std::chrono::steady_clock::now();
  while (!condition()) {
    if (std::chrono::steady_clock::now() - start >= timeout) {
      return AssertionFailure() << "timed out after " << timeout.count() << " ms waiting for "
                                << what;
    }
    std::this_thread::sleep_for(poll);
  }
  return AssertionSuccess();
}

absl::StatusOr<v1::Job> ParseJobJson(const std::string& json) {
  v1::Job job;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  auto status = google::protobuf::util::JsonStringToMessage(json, &job, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a Job as JSON (", status.ToString(), "): ", Tail(json, 500)));
  }
  return job;
}

absl::StatusOr<HttpAnswer> HttpFetch(int port, const HttpCall& call) {
  // Generous: a page of a sanitizer build on a loaded machine takes seconds.
  const int fd = ConnectLoopback(port, /*timeout_seconds=*/30);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot connect to 127.0.0.1:", port));
  std::string request =
      absl::StrCat(call.method, " ", call.path, " HTTP/1.0\r\nHost: 127.0.0.1:", port,
                   "\r\nConnection: close\r\n");
  for (const auto& [name, value] : call.headers)
    absl::StrAppend(&request, name, ": ", value, "\r\n");
  if (!call.body.empty() || call.method == "POST") {
    absl::StrAppend(&request, "Content-Length: ", call.body.size(), "\r\n");
  }
  absl::StrAppend(&request, "\r\n", call.body);
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return absl::UnavailableError("sending the request failed");
  }
  std::string response;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    response.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  const size_t header_end = response.find("\r\n\r\n");
  if (header_end == std::string::npos) {
    return absl::DataLossError(absl::StrCat("no HTTP header in: ", Tail(response, 300)));
  }
  HttpAnswer answer;
  answer.status_line = response.substr(0, response.find("\r\n"));
  std::istringstream status_fields(answer.status_line);
  std::string version;
  status_fields >> version >> answer.status;
  for (absl::string_view line :
       absl::StrSplit(response.substr(0, header_end), "\r\n", absl::SkipEmpty())) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;  // the status line
    answer.headers.emplace(absl::AsciiStrToLower(line.substr(0, colon)),
                           std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  answer.body = response.substr(header_end + 4);
  return answer;
}

std::string HttpAnswer::Header(const std::string& lower_case_name) const {
  auto it = headers.find(lower_case_name);
  return it == headers.end() ? "" : it->second;
}

absl::StatusOr<std::string> HttpGet(int port, const std::string& path) {
  absl::StatusOr<HttpAnswer> answer = HttpFetch(port, {.path = path});
  if (!answer.ok()) return answer.status();
  if (answer->status != 200) {
    return absl::UnavailableError(
        absl::StrCat("GET ", path, ": ", answer->status_line, ": ", Tail(answer->body, 300)));
  }
  return answer->body;
}

ClientResult SubmitWithWrongExpectedOutput(ServiceLab& lab, const std::string& model,
                                           const std::string& output_path) {
  std::ifstream in(output_path, std::ios::binary);
  std::string wrong((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& b : wrong) b = static_cast<char>(b ^ 0x55);
  return lab.RunClient({"submit", model, "--input", "random:0", "--expected",
                        lab.WriteFile("wrong.bin", wrong), "--wait"});
}

ClientResult SubmitModelThatDoesNotCompile(ServiceLab& lab) {
  return lab.RunClient({"submit", lab.WriteFile("broken.tflite", std::string(64, '\0')), "--wait"});
}

namespace {

// Parses `{a="x",b="y"}` (the part after the name) into labels; false on a syntax error.
bool ParseLabels(const std::string& text, std::map<std::string, std::string>& labels) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t eq = text.find('=', i);
    if (eq == std::string::npos || eq + 1 >= text.size() || text[eq + 1] != '"') return false;
    std::string key = text.substr(i, eq - i);
    std::string value;
    size_t j = eq + 2;
    for (; j < text.size() && text[j] != '"'; ++j) {
      if (text[j] == '\\' && j + 1 < text.size()) {
        ++j;
        value.push_back(text[j] == 'n' ? '\n' : text[j]);
      } else {
        value.push_back(text[j]);
      }
    }
    if (j >= text.size()) return false;
    labels[key] = value;
    i = j + 1;
    if (i < text.size() && text[i] == ',') ++i;
  }
  return true;
}

}  // namespace

std::optional<double> MetricSum(const std::string& text, const std::string& name,
                                const std::map<std::string, std::string>& labels) {
  std::optional<double> sum;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t name_end = line.find_first_of("{ ");
    if (name_end == std::string::npos || line.compare(0, name_end, name) != 0 ||
        name_end != name.size()) {
      continue;
    }
    std::map<std::string, std::string> have;
    size_t value_start = name_end;
    if (line[name_end] == '{') {
      const size_t close = line.rfind('}');
      if (close == std::string::npos ||
          !ParseLabels(line.substr(name_end + 1, close - name_end - 1), have)) {
        continue;
      }
      value_start = close + 1;
    }
    bool match = true;
    for (const auto& [key, value] : labels) {
      auto it = have.find(key);
      if (it == have.end() || it->second != value) match = false;
    }
    if (!match) continue;
    sum = sum.value_or(0) + std::strtod(line.c_str() + value_start, nullptr);
  }
  return sum;
}

std::vector<BoardInterval> BoardIntervals(const std::vector<v1::JobEvent>& events) {
  std::vector<BoardInterval> intervals;
  std::optional<BoardInterval> open;
  for (const v1::JobEvent& event : events) {
    const bool assigned = event.has_state() && event.state() == v1::JOB_STATE_ASSIGNED;
    const bool left_board = event.kind_case() == v1::JobEvent::kFinished ||
                            (event.has_state() && (event.state() == v1::JOB_STATE_QUEUED ||
                                                   event.state() == v1::JOB_STATE_DONE));
    if ((assigned || left_board) && open) {
      open->end_ms = event.time_ms();
      intervals.push_back(*open);
      open.reset();
    }
    if (assigned) {
      open = BoardInterval{event.job_id(), event.board_id(), event.attempt(), event.time_ms(), 0};
    }
  }
  if (open) {  // still on the board: open-ended
    open->end_ms = INT64_MAX;
    intervals.push_back(*open);
  }
  return intervals;
}

// ---------------------------------------------------------------------------------------------
// ServiceLab.

ServiceLab::ServiceLab() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/boardlab-e2e-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp(" << pattern << ") failed: " << std::strerror(errno);
  }
  dir_ = pattern;
  data_dir_ = Path("server-data");
}

ServiceLab::~ServiceLab() {
  const bool failed = ::testing::Test::HasFailure();
  agents_.clear();  // kills them
  server_.reset();
  dead_.clear();
  if (failed) {
    fprintf(stderr, "=== server log (%s) ===\n%s\n", Path("server.log").c_str(),
            Tail(ServerLog(), kLogTailBytes).c_str());
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir_, error)) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("agent-") && name.ends_with(".log")) {
        fprintf(stderr, "=== %s ===\n%s\n", name.c_str(),
                Tail(ReadText(entry.path().string()), kLogTailBytes / 2).c_str());
      }
    }
    fprintf(stderr, "=== kept the test directory %s ===\n", dir_.c_str());
    return;
  }
  const char* keep = std::getenv("BOARDLAB_KEEP_TEST_DIRS");
  if (keep != nullptr && *keep != '\0' && std::string(keep) != "0") return;
  std::error_code error;
  fs::remove_all(dir_, error);
}

std::string ServiceLab::Path(const std::string& name) const { return dir_ + "/" + name; }

std::string ServiceLab::WriteFile(const std::string& name,
                                  const std::vector<uint8_t>& bytes) const {
  return WriteFile(name, std::string(bytes.begin(), bytes.end()));
}

std::string ServiceLab::WriteFile(const std::string& name, const std::string& text) const {
  const std::string path = Path(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) ADD_FAILURE() << "cannot write " << path;
  return path;
}

std::string ServiceLab::NextName(const std::string& stem) {
  std::lock_guard lock(names_mutex_);
  return absl::StrCat(stem, "-", next_name_++);
}

AssertionResult ServiceLab::StartServer(const ServerOptions& options) {
  if (server_) return AssertionFailure() << "the server is already running";
  server_options_ = options;
  if (!options.data_dir.empty()) data_dir_ = options.data_dir;
  return LaunchServer("127.0.0.1:0");
}

AssertionResult ServiceLab::RestartServer() {
  if (server_) return AssertionFailure() << "the server is still running; KillServer() first";
  if (address_.empty()) return AssertionFailure() << "the server was never started";
  return LaunchServer(address_);
}

void ServiceLab::KillServer() {
  if (!server_) return;
  server_->Kill();
  dead_.push_back(std::move(server_));
}

AssertionResult ServiceLab::LaunchServer(const std::string& listen) {
  std::vector<std::string> argv = {ServerBinary(),
                                   "--listen",
                                   listen,
                                   "--metrics-listen",
                                   "127.0.0.1:0",
                                   "--http-listen",
                                   "127.0.0.1:0",
                                   "--data-dir",
                                   data_dir_,
                                   "--heartbeat-ms",
                                   std::to_string(server_options_.heartbeat_ms)};
  if (!server_options_.config_yaml.empty()) {
    argv.push_back("--config");
    argv.push_back(WriteFile("server.yaml", server_options_.config_yaml));
  }
  const std::string out_path = Path(absl::StrCat("server-", ++server_starts_, ".out"));
  auto started = Process::Start(argv, out_path, Path("server.log"));
  if (!started.ok()) return AssertionFailure() << started.status();
  server_ = *std::move(started);
  const std::string marker = "boardlab-server listening on ";
  std::string line;
  AssertionResult ready = WaitFor(
      [&] {
        const std::string out = ReadText(out_path);
        const size_t at = out.find(marker);
        if (at == std::string::npos || out.find('\n', at) == std::string::npos) {
          return !server_->Running();  // stop waiting when it died
        }
        line = out.substr(at + marker.size(), out.find('\n', at) - at - marker.size());
        return true;
      },
      kServerStartTimeout, "the server's 'listening' line", std::chrono::milliseconds(20));
  if (!ready) return ready << "\nserver log:\n" << Tail(ServerLog(), 3000);
  if (line.empty()) {
    return AssertionFailure() << "the server exited while starting; log:\n"
                              << Tail(ServerLog(), 3000);
  }
  // "HOST:PORT metrics MPORT web URL"
  std::istringstream fields(line);
  std::string address, word, metrics, web_word, web_url;
  fields >> address >> word >> metrics >> web_word >> web_url;
  if (word != "metrics" || web_word != "web" || address.rfind(':') == std::string::npos) {
    return AssertionFailure() << "cannot read the server's line '" << line << "'";
  }
  if (!address_.empty() && address != address_) {
    return AssertionFailure() << "the restarted server listens on " << address << ", not "
                              << address_;
  }
  address_ = address;
  metrics_port_ = metrics == "off" ? 0 : std::atoi(metrics.c_str());
  web_url_ = web_url == "off" ? "" : web_url;
  // "http://127.0.0.1:PORT/"
  web_port_ = web_url_.empty() ? 0 : std::atoi(web_url_.substr(web_url_.rfind(':') + 1).c_str());
  if (!channel_) {
    api::ChannelOptions channel_options;
    channel_options.address = address_;
    channel_options.tls_ca_file = server_options_.tls_ca;
    auto channel = api::MakeChannel(channel_options);
    if (!channel.ok()) return AssertionFailure() << channel.status();
    channel_ = *channel;
  }
  return AssertionSuccess();
}

std::string ServiceLab::ServerLog() const { return ReadText(Path("server.log")); }

AssertionResult ServiceLab::StartAgent(const std::string& id, int sim_boards,
                                       const std::string& token) {
  std::vector<std::string> extra = {"--sim-boards", std::to_string(sim_boards)};
  if (!token.empty()) {
    extra.push_back("--token");
    extra.push_back(token);
  }
  return LaunchAgent(id, std::move(extra), sim_boards);
}

AssertionResult ServiceLab::StartAgentWithConfig(const std::string& id,
                                                 const std::string& config_yaml, int boards) {
  return LaunchAgent(id, {"--config", WriteFile("agent-" + id + ".yaml", config_yaml)}, boards);
}

AssertionResult ServiceLab::LaunchAgent(const std::string& id, std::vector<std::string> extra,
                                        int boards) {
  if (address_.empty()) return AssertionFailure() << "start the server first";
  if (agents_.count(id) > 0) return AssertionFailure() << "agent " << id << " already runs";
  std::vector<std::string> argv = {AgentBinary(),
                                   "--server",
                                   process_address_.empty() ? address_ : process_address_,
                                   "--agent-id",
                                   id,
                                   "--state-dir",
                                   Path("agent-" + id + "-state")};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const std::string log = Path("agent-" + id + ".log");
  auto started = Process::Start(argv, log, log);
  if (!started.ok()) return AssertionFailure() << started.status();
  agents_[id] = *std::move(started);
  return WaitForAgentBoards(id, boards);
}

AssertionResult ServiceLab::WaitForAgentBoards(const std::string& id, int sim_boards) {
  Process* process = agents_[id].get();
  std::string last;
  AssertionResult ready = WaitFor(
      [&] {
        if (!process->Running()) return true;
        auto boards = Boards();
        if (!boards.ok()) {
          last = boards.status().ToString();
          return false;
        }
        int connected = 0;
        for (const v1::Board& board : *boards) {
          if (board.agent_id() == id && board.state() != v1::BOARD_STATE_OFFLINE) ++connected;
        }
        last = absl::StrCat(connected, " of its boards connected");
        return connected == sim_boards;
      },
      kAgentStartTimeout, absl::StrCat("agent ", id, "'s ", sim_boards, " boards"));
  if (!process->Running()) {
    return AssertionFailure() << "agent " << id << " exited; log:\n" << Tail(AgentLog(id), 3000);
  }
  if (!ready) return ready << " (" << last << ")\nagent log:\n" << Tail(AgentLog(id), 3000);
  return AssertionSuccess();
}

void ServiceLab::KillAgent(const std::string& id) {
  auto it = agents_.find(id);
  if (it == agents_.end()) {
    ADD_FAILURE() << "no agent " << id;
    return;
  }
  it->second->Kill();
  dead_.push_back(std::move(it->second));
  agents_.erase(it);
}

Process* ServiceLab::agent(const std::string& id) {
  auto it = agents_.find(id);
  return it == agents_.end() ? nullptr : it->second.get();
}

std::string ServiceLab::AgentLog(const std::string& id) const {
  return ReadText(Path("agent-" + id + ".log"));
}

ClientResult ServiceLab::RunClient(const std::vector<std::string>& args,
                                   std::chrono::milliseconds timeout, const std::string& token) {
  ClientResult result;
  std::vector<std::string> argv = {ClientBinary(), "--server",
                                   process_address_.empty() ? address_ : process_address_};
  if (!token.empty()) {
    argv.push_back("--token");
    argv.push_back(token);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string name = NextName("client");
  const std::string out_path = Path(name + ".out");
  const std::string err_path = Path(name + ".err");
  auto process = Process::Start(argv, out_path, err_path);
  if (!process.ok()) {
    result.err = process.status().ToString();
    return result;
  }
  std::optional<int> code = (*process)->Wait(timeout);
  if (!code) {
    result.timed_out = true;
    (*process)->Kill();
    code = (*process)->Wait(std::chrono::seconds(5));
  }
  result.exit_code = code.value_or(-1);
  result.out = ReadText(out_path);
  result.err = ReadText(err_path);
  std::error_code error;
  fs::remove(out_path, error);
  fs::remove(err_path, error);
  return result;
}

absl::StatusOr<std::unique_ptr<Process>> ServiceLab::StartClient(
    const std::vector<std::string>& args, const std::string& log_path) {
  std::vector<std::string> argv = {ClientBinary(), "--server",
                                   process_address_.empty() ? address_ : process_address_};
  argv.insert(argv.end(), args.begin(), args.end());
  return Process::Start(argv, log_path, log_path);
}

std::shared_ptr<grpc::Channel> ServiceLab::Channel() { return channel_; }

absl::StatusOr<v1::Job> ServiceLab::GetJob(const std::string& job_id) {
  auto stub = v1::JobService::NewStub(channel_);
  grpc::ClientContext context;
  SetDeadline(context, kCallTimeout);
  api::AddBearerToken(context, api_token_);
  v1::GetJobRequest request;
  request.set_job_id(job_id);
  v1::Job job;
  if (absl::Status s = CallStatus(stub->GetJob(&context, request, &job), "GetJob"); !s.ok()) {
    return s;
  }
  return job;
}

absl::StatusOr<std::vector<v1::Job>> ServiceLab::ListJobs(const std::vector<v1::JobState>& states) {
  auto stub = v1::JobService::NewStub(channel_);
  std::vector<v1::Job> jobs;
  v1::ListJobsRequest request;
  for (v1::JobState state : states) request.add_states(state);
  request.set_page_size(1000);
  for (int pages = 0; pages < 1000; ++pages) {
    grpc::ClientContext context;
    SetDeadline(context, kCallTimeout);
    api::AddBearerToken(context, api_token_);
    v1::ListJobsResponse response;
    if (absl::Status s = CallStatus(stub->ListJobs(&context, request, &response), "ListJobs");
        !s.ok()) {
      return s;
    }
    jobs.insert(jobs.end(), response.jobs().begin(), response.jobs().end());
    if (response.next_page_token().empty()) return jobs;
    request.set_page_token(response.next_page_token());
  }
  return absl::InternalError("ListJobs: more than 1000 pages");
}

absl::StatusOr<std::vector<v1::JobEvent>> ServiceLab::Events(const std::string& job_id,
                                                             std::chrono::milliseconds timeout) {
  auto stub = v1::JobService::NewStub(channel_);
  grpc::ClientContext context;
  SetDeadline(context, timeout);
  api::AddBearerToken(context, api_token_);
  v1::WatchJobRequest request;
  request.set_job_id(job_id);
  std::vector<v1::JobEvent> events;
  std::unique_ptr<grpc::ClientReader<v1::JobEvent>> reader = stub->WatchJob(&context, request);
  v1::JobEvent event;
  while (reader->Read(&event)) events.push_back(event);
  grpc::Status status = reader->Finish();
  if (!events.empty() && events.back().kind_case() == v1::JobEvent::kFinished) return events;
  if (!status.ok()) return CallStatus(status, "WatchJob");
  return absl::DataLossError(absl::StrCat(
      "WatchJob ", job_id, " ended without a finished event after ", events.size(), " events"));
}

absl::StatusOr<std::vector<v1::Board>> ServiceLab::Boards() {
  if (!channel_) return absl::FailedPreconditionError("no server");
  auto stub = v1::BoardService::NewStub(channel_);
  grpc::ClientContext context;
  SetDeadline(context, kCallTimeout);
  api::AddBearerToken(context, api_token_);
  v1::ListBoardsRequest request;
  v1::ListBoardsResponse response;
  if (absl::Status s = CallStatus(stub->ListBoards(&context, request, &response), "ListBoards");
      !s.ok()) {
    return s;
  }
  return std::vector<v1::Board>(response.boards().begin(), response.boards().end());
}

absl::StatusOr<std::string> ServiceLab::ScrapeMetrics() {
  if (metrics_port_ == 0) return absl::FailedPreconditionError("the server serves no /metrics");
  return HttpGet(metrics_port_, "/metrics");
}

AssertionResult ServiceLab::WaitForJobs(size_t count, v1::JobState state,
                                        std::chrono::milliseconds timeout) {
  size_t seen = 0;
  std::string error;
  AssertionResult done = WaitFor(
      [&] {
        auto jobs = ListJobs({state});
        if (!jobs.ok()) {
          error = jobs.status().ToString();
          return false;
        }
        seen = jobs->size();
        return seen >= count;
      },
      timeout, absl::StrCat(count, " jobs in ", v1::JobState_Name(state)),
      std::chrono::milliseconds(100));
  if (!done) return done << " (saw " << seen << (error.empty() ? "" : "; ") << error << ")";
  return AssertionSuccess();
}

absl::StatusOr<v1::Job> ServiceLab::WaitForJobDone(const std::string& job_id,
                                                   std::chrono::milliseconds timeout) {
  absl::StatusOr<v1::Job> job = absl::DeadlineExceededError("never asked");
  AssertionResult done = WaitFor(
      [&] {
        job = GetJob(job_id);
        return job.ok() && job->state() == v1::JOB_STATE_DONE;
      },
      timeout, "the job to finish", std::chrono::milliseconds(50));
  if (!done) {
    return absl::DeadlineExceededError(absl::StrCat(
        done.message(),
        "; last seen: ", job.ok() ? v1::JobState_Name(job->state()) : job.status().ToString()));
  }
  return job;
}

}  // namespace boardlab::testing::service
