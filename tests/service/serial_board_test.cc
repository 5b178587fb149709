// The agent's `serial` driver as a board farm uses it (issue 12, docs/boards.md): server + agent
// with a `sim` board and a board-link board (the an505 protocol firmware behind
// firmware/qemu-board.sh, its UART on a TCP port as ser2net serves a real board's, its QEMU
// monitor as the reset button and the power switch).
//
// - jobs land on both boards and agree byte for byte (and with the golden output); the firmware
//   is flashed once (the build the board reports is learnt from that flash) and not again;
// - a line that corrupts, drops and duplicates bytes (byte_fault_proxy) still passes, and the
//   agent's metrics count the retransmissions (promtool accepts the file);
// - a hung board (QEMU stopped) gives BOARD_ERROR and the job is retried on the sim board; the
//   agent climbs the ladder at once (resync, reset, power cycle), the server holding jobs off
//   the recovering board, and the next job passes on the board;
// - a flash tool that fails N times quarantines the board with the tool's message;
// - QEMU killed mid-run gives BOARD_ERROR, the agent stays alive and serves its other board, and
//   the dead board ends in quarantine without another job (the server's too, with the agent's
//   reason).
//
// Every process is real: boardlab-server, boardlab-agent, boardlab-run, qemu-board.sh and QEMU,
// byte_fault_proxy, the boardlab client.

#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "agent/config.h"
#include "gtest/gtest.h"
#include "tests/firmware/firmware_available.h"
#include "tests/service/harness.h"
#include "tests/support/free_port.h"
#include "tests/support/process.h"
#include "tests/support/qemu_board.h"
#include "tests/support/shared_data.h"

namespace boardlab::testing::service {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

constexpr char kKws[] = "mlperf-tiny/kws_dscnn_int8.tflite";

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "" when QEMU, the board-link firmware and the shared kws model are all here.
std::string WhyNotRunnable() {
  if (std::string why =
          firmware::WhyFirmwareCannotRun(BOARDLAB_SERVICE_AN505_ELF, firmware::NeedsRun::kYes);
      !why.empty()) {
    return why;
  }
  if (!SharedModelPath(kKws)) return "shared models folder absent: " + SharedModelsDir();
  return "";
}

// The build id the firmware build wrote next to the ELF (firmware/build_id.cmake).
std::string FirmwareBuildId() {
  const std::string header = ReadText(fs::path(BOARDLAB_SERVICE_AN505_ELF).parent_path() /
                                      "generated" / "firmware_build_id.h");
  const size_t open = header.find('"');
  const size_t close = header.find('"', open + 1);
  if (open == std::string::npos || close == std::string::npos) return "";
  return header.substr(open + 1, close - open - 1);
}

std::string Golden(const std::string& file) {
  return (fs::path(SharedModelsDir()).parent_path() / "golden" / "kws_dscnn_int8" / file).string();
}

// A QEMU board whose "flash memory" is a copy of the firmware ELF in `dir` (qemu-board.sh loads
// it again at every power cycle), so that a flash command can write it.
struct FlashableBoard {
  explicit FlashableBoard(const fs::path& dir)
      : elf(dir / "flash.elf"), board(dir, BOARDLAB_SERVICE_QEMU_BOARD, elf.string()) {
    fs::create_directories(dir);
    fs::copy_file(BOARDLAB_SERVICE_AN505_ELF, elf, fs::copy_options::overwrite_existing);
  }
  std::string Monitor(const std::string& action) const {
    return absl::StrCat("/bin/bash ", board.script(), " --", action, " ", board.monitor());
  }
  fs::path elf;
  QemuBoard board;
};

struct SerialBoardYaml {
  std::string id = "lab-evk-0";
  // QEMU's an505 board, not an i.MX RT700: its measurements must not be filed under the EVK's type.
  std::string type = "an505-qemu";
  std::string port;
  std::string build_id;  // empty: learnt at the first flash
  std::string flash;
  int flash_attempts = 3;
  std::string reset;
  std::string power_cycle;
  std::string model_flash;  // empty: none
  int timeout_seconds = 120;
};

std::string Yaml(const std::string& text) {
  return "\"" + absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"\"", "\\\""}}) + "\"";
}

std::string AgentConfig(const std::string& sim_type, const SerialBoardYaml& b) {
  std::string yaml = absl::StrCat(
      "boards:\n  - {id: lab-sim-0, type: ", sim_type, ", driver: sim}\n  - id: ", b.id,
      "\n    type: ", b.type, "\n    driver: serial\n    port: ", b.port,
      "\n    timeout_seconds: ", b.timeout_seconds, "\n    connect_timeout_seconds: 5\n");
  absl::StrAppend(&yaml, "    firmware: {elf: ", BOARDLAB_SERVICE_AN505_ELF,
                  b.build_id.empty() ? "" : absl::StrCat(", build_id: ", b.build_id), "}\n");
  absl::StrAppend(&yaml, "    flash: {command: ", Yaml(b.flash), ", attempts: ", b.flash_attempts,
                  ", timeout_seconds: 60}\n");
  if (!b.reset.empty()) absl::StrAppend(&yaml, "    reset: ", Yaml(b.reset), "\n");
  if (!b.power_cycle.empty()) {
    absl::StrAppend(&yaml, "    power_cycle: ", Yaml(b.power_cycle), "\n");
  }
  if (!b.model_flash.empty()) {
    absl::StrAppend(&yaml, "    model_flash: {command: ", Yaml(b.model_flash),
                    ", timeout_seconds: 60}\n");
  }
  return yaml;
}

SerialBoardYaml BoardOf(const FlashableBoard& b, const std::string& port) {
  SerialBoardYaml yaml;
  yaml.port = port;
  yaml.flash = absl::StrCat("cp {elf} ", b.elf.string(), " && ", b.Monitor("power-cycle"));
  yaml.reset = b.Monitor("reset");
  yaml.power_cycle = b.Monitor("power-cycle");
  return yaml;
}

// The board in the pool type the sim board serves too (a job it fails is retried there), with
// the build id of the firmware QEMU runs (no flash before its first job).
SerialBoardYaml PoolBoardRunningTheFirmware(const FlashableBoard& b) {
  SerialBoardYaml yaml = BoardOf(b, b.board.port());
  yaml.type = "qemu-and-sim-pool";
  yaml.build_id = FirmwareBuildId();
  return yaml;
}

std::string MetricsText(ServiceLab& lab) {
  return ReadText(fs::path(lab.Path("agent-lab-state")) / "metrics.prom");
}

double Metric(ServiceLab& lab, const std::string& name,
              const std::map<std::string, std::string>& labels) {
  return MetricSum(MetricsText(lab), name, labels).value_or(0);
}

// Heartbeats every second (a lease of 3 s): the QEMU board and the flash / power cycle commands
// load the machine, and an agent stalled for the default 600 ms would lose its jobs.
ServerOptions SlowHeartbeats() {
  ServerOptions options;
  options.heartbeat_ms = 1000;
  return options;
}

// The job's log lines, from its events.
std::string JobLog(ServiceLab& lab, const std::string& job_id) {
  std::string log;
  absl::StatusOr<std::vector<v1::JobEvent>> events = lab.Events(job_id);
  if (!events.ok()) return absl::StrCat("(no events: ", events.status().message(), ")");
  for (const v1::JobEvent& e : *events) {
    if (e.kind_case() == v1::JobEvent::kLog) absl::StrAppend(&log, e.log(), "\n");
  }
  return log;
}

// `boardlab submit` of kws with the golden seed-1 case to `selector` ("--board ID" or
// "--board-type T"), then `more` options.
std::vector<std::string> SubmitKwsArgv(const std::vector<std::string>& selector,
                                       const std::vector<std::string>& more) {
  std::vector<std::string> argv = {"submit", *SharedModelPath(kKws)};
  argv.insert(argv.end(), selector.begin(), selector.end());
  argv.insert(argv.end(),
              {"--input", Golden("seed1.input.bin"), "--expected", Golden("seed1.output.bin")});
  argv.insert(argv.end(), more.begin(), more.end());
  return argv;
}

// Submits kws to `selector` and waits; the job, with its output in `out`.
absl::StatusOr<v1::Job> RunKws(ServiceLab& lab, const std::vector<std::string>& selector,
                               const std::string& out, seconds timeout = seconds(240)) {
  ClientResult r =
      lab.RunClient(SubmitKwsArgv(selector, {"--wait", "--out", out, "--json"}), timeout);
  absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
  if (!job.ok()) {
    return absl::InternalError(absl::StrCat(job.status().message(), "\n", r.out, r.err));
  }
  return job;
}

// Submits kws without waiting; the job id.
std::string SubmitKws(ServiceLab& lab, const std::vector<std::string>& selector) {
  ClientResult r = lab.RunClient(SubmitKwsArgv(selector, {"--json"}));
  absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
  EXPECT_TRUE(job.ok()) << job.status() << "\n" << r;
  return job.ok() ? job->id() : "";
}

// Waits until the server shows `board_id` quarantined and returns it; nullopt after `timeout`.
std::optional<v1::Board> WaitForQuarantine(ServiceLab& lab, const std::string& board_id,
                                           std::chrono::seconds timeout) {
  std::optional<v1::Board> quarantined;
  WaitFor(
      [&] {
        absl::StatusOr<std::vector<v1::Board>> boards = lab.Boards();
        if (!boards.ok()) return false;
        for (const v1::Board& b : *boards) {
          if (b.id() == board_id && b.state() == v1::BOARD_STATE_QUARANTINED) quarantined = b;
        }
        return quarantined.has_value();
      },
      timeout, "the board's quarantine");
  return quarantined;
}

// A job pinned to a board the agent quarantined waits in the queue for the board (the server's
// quarantine keeps jobs off it); the test cancels it and returns its log.
std::string CancelWaitingJob(ServiceLab& lab, const std::string& id) {
  absl::StatusOr<v1::Job> waiting = lab.GetJob(id);
  EXPECT_TRUE(waiting.ok()) << waiting.status();
  if (waiting.ok()) {
    EXPECT_EQ(waiting->state(), v1::JOB_STATE_QUEUED) << waiting->message();
  }
  EXPECT_EQ(lab.RunClient({"cancel", id}).exit_code, 0);
  return JobLog(lab, id);
}

// Two kws jobs at once on the pool, where the serial board fails the one it takes: both pass,
// that one on its second attempt, on the sim board. `check_retried` looks at that job's log.
void TwoJobsOneRetriedOnTheSimBoard(ServiceLab& lab,
                                    const std::function<void(const std::string&)>& check_retried) {
  const std::string first = SubmitKws(lab, {"--board-type", "qemu-and-sim-pool"});
  const std::string second = SubmitKws(lab, {"--board-type", "qemu-and-sim-pool"});
  bool retried = false;
  for (const std::string& id : {first, second}) {
    absl::StatusOr<v1::Job> job = lab.WaitForJobDone(id, seconds(180));
    ASSERT_TRUE(job.ok()) << job.status();
    const std::string log = JobLog(lab, id);
    EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message() << "\n" << log;
    absl::StatusOr<std::vector<v1::JobEvent>> events = lab.Events(id);
    ASSERT_TRUE(events.ok()) << events.status();
    const std::vector<BoardInterval> runs = BoardIntervals(*events);
    if (runs.size() != 2) continue;
    retried = true;
    EXPECT_EQ(runs[0].board_id, "lab-evk-0");
    EXPECT_EQ(runs[1].board_id, "lab-sim-0");
    EXPECT_EQ(job->board_id(), "lab-sim-0");
    EXPECT_NE(log.find("BOARD_ERROR"), std::string::npos) << log;
    check_retried(log);
  }
  EXPECT_TRUE(retried) << "no job went to the serial board first";
}

TEST(SerialBoardServiceTest, SimAndSerialBoardsAgreeAndTheFirmwareIsFlashedOnce) {
  if (std::string why = WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
  ServiceLab lab;
  FlashableBoard evk(lab.Path("evk"));
  ASSERT_TRUE(evk.board.Start());
  ASSERT_TRUE(lab.StartServer(SlowHeartbeats()));
  ASSERT_TRUE(lab.StartAgentWithConfig(
      "lab", AgentConfig("imxrt700-sim", BoardOf(evk, evk.board.port())), 2));

  absl::StatusOr<v1::Job> sim =
      RunKws(lab, {"--board-type", "imxrt700-sim", "--board", "lab-sim-0"}, lab.Path("out-sim"));
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_EQ(sim->result(), v1::JOB_RESULT_PASS) << sim->message();
  for (int run = 0; run < 2; ++run) {
    const std::string out = lab.Path(absl::StrCat("out-evk-", run));
    absl::StatusOr<v1::Job> job =
        RunKws(lab, {"--board-type", "an505-qemu", "--board", "lab-evk-0"}, out);
    ASSERT_TRUE(job.ok()) << job.status() << "\n" << lab.AgentLog("lab");
    const std::string log = JobLog(lab, job->id());
    ASSERT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message() << "\n" << log;
    EXPECT_EQ(job->board_id(), "lab-evk-0");
    EXPECT_GT(job->inference_us(), 0);
    EXPECT_EQ(ReadFile(out + "/output0.bin"), ReadFile(lab.Path("out-sim") + "/output0.bin"));
    EXPECT_EQ(ReadFile(out + "/output0.bin"), ReadFile(Golden("seed1.output.bin")));
    EXPECT_TRUE(fs::is_regular_file(out + "/etdump.etdp"));
    EXPECT_TRUE(fs::is_regular_file(out + "/profile.json"));
    // The board's console (HELLO facts, result, link statistics) is the job's log.
    EXPECT_NE(log.find("board: an505 firmware"), std::string::npos) << log;
    // Its type is its own (an505-qemu), not an i.MX RT700 type: no warning.
    EXPECT_EQ(log.find("boardlab-agent: warning:"), std::string::npos) << log;
    EXPECT_NE(log.find("result: PASS"), std::string::npos) << log;
    EXPECT_NE(log.find("link: frames sent"), std::string::npos) << log;
    // The agent's check at its start flashed the board already: no job flashes or asks again.
    EXPECT_EQ(log.find("flash: "), std::string::npos) << log;
    EXPECT_EQ(log.find("for the board's HELLO"), std::string::npos) << log;
  }
  // No build id configured: the check at the agent's start flashed and learnt what the board
  // reports, before any job.
  const std::string agent_log = lab.AgentLog("lab");
  for (const char* line : {"for the board's HELLO (agent start)", "flash: cp ", " reports build ",
                           "board lab-evk-0 is ready (checked at agent start)"}) {
    EXPECT_NE(agent_log.find(line), std::string::npos) << line << "\n" << agent_log;
  }
  EXPECT_EQ(
      Metric(lab, "boardlab_agent_board_flashes_total", {{"board", "lab-evk-0"}, {"result", "ok"}}),
      1)
      << MetricsText(lab);
}

TEST(SerialBoardServiceTest, DamagedLineAndHungBoardRecover) {
  if (std::string why = WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
  ServiceLab lab;
  FlashableBoard evk(lab.Path("evk"));
  ASSERT_TRUE(evk.board.Start());
  // About one byte in 10,000 corrupted, lost or doubled each way between the agent and the board.
  const int proxy_port = FreeLoopbackPort();
  const std::string proxy_log = lab.Path("proxy.log");
  auto proxy = Process::Start(
      {BOARDLAB_SERVICE_FAULT_PROXY, "--listen", absl::StrCat("127.0.0.1:", proxy_port),
       "--connect", absl::StrCat("127.0.0.1:", evk.board.tcp_port()), "--corrupt", "0.00004",
       "--drop", "0.00003", "--duplicate", "0.00003", "--seed", "11"},
      proxy_log, proxy_log);
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  ASSERT_TRUE(WaitFor([&] { return ReadText(proxy_log).find("listening") != std::string::npos; },
                      seconds(10), "the proxy"));
  // Both boards serve one type, so that a job the serial board fails is retried on the sim one.
  SerialBoardYaml yaml = BoardOf(evk, absl::StrCat("tcp:127.0.0.1:", proxy_port));
  yaml.type = "qemu-and-sim-pool";
  yaml.timeout_seconds = 30;
  ASSERT_TRUE(lab.StartServer(SlowHeartbeats()));
  ASSERT_TRUE(lab.StartAgentWithConfig("lab", AgentConfig("qemu-and-sim-pool", yaml), 2));

  absl::StatusOr<v1::Job> damaged = RunKws(
      lab, {"--board-type", "qemu-and-sim-pool", "--board", "lab-evk-0"}, lab.Path("damaged"));
  ASSERT_TRUE(damaged.ok()) << damaged.status();
  ASSERT_EQ(damaged->result(), v1::JOB_RESULT_PASS)
      << damaged->message() << "\n"
      << JobLog(lab, damaged->id()) << ReadText(proxy_log);
  EXPECT_EQ(ReadFile(lab.Path("damaged") + "/output0.bin"), ReadFile(Golden("seed1.output.bin")));
  EXPECT_GT(Metric(lab, "boardlab_agent_link_retransmissions_total", {{"board", "lab-evk-0"}}), 0)
      << MetricsText(lab) << JobLog(lab, damaged->id());
  const std::string promtool = BOARDLAB_SERVICE_PROMTOOL;
  ASSERT_FALSE(promtool.empty()) << "promtool is missing: run deploy/install-deps.sh";
  CommandResult check =
      RunCommand(promtool + " check metrics < " +
                 (fs::path(lab.Path("agent-lab-state")) / "metrics.prom").string());
  EXPECT_EQ(check.exit_code, 0) << check.output;

  // The board hangs (its core stops; the UART stays connected): both queued jobs pass, the one
  // that went to the serial board on its second attempt, on the sim board.
  // One HMP command, and the monitor's prompt after it ran (as qemu-board.sh sends its own).
  const std::string monitor = absl::StrReplaceAll(evk.board.monitor(), {{":", "/"}});
  const std::string stop_script =
      lab.WriteFile("stop.sh", absl::StrCat("exec 3<>/dev/tcp/", monitor,
                                            "\nprintf 'stop\\n' >&3\nn=0\n"
                                            "while IFS= read -r -t 5 -d ')' line <&3; do\n"
                                            "  [[ $line == *'(qemu'* ]] && n=$((n + 1))\n"
                                            "  ((n >= 2)) && break\n"
                                            "done\n"));
  CommandResult stop = RunCommand("/bin/bash " + stop_script);
  ASSERT_EQ(stop.exit_code, 0) << stop.output;
  ASSERT_NO_FATAL_FAILURE(TwoJobsOneRetriedOnTheSimBoard(lab, [](const std::string&) {}));

  // The agent recovers the board at once: connecting again fails (stopped), the reset leaves it
  // stopped, the power cycle brings it back; the next job waits for that and passes.
  absl::StatusOr<v1::Job> back =
      RunKws(lab, {"--board-type", "qemu-and-sim-pool", "--board", "lab-evk-0"}, lab.Path("back"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->result(), v1::JOB_RESULT_PASS) << back->message() << "\n"
                                                 << JobLog(lab, back->id()) << lab.AgentLog("lab");
  for (const char* step : {"resync", "reset", "power_cycle"}) {
    EXPECT_GE(Metric(lab, "boardlab_agent_board_recovery_steps_total",
                     {{"board", "lab-evk-0"}, {"step", step}}),
              1)
        << step << "\n"
        << MetricsText(lab);
  }
  EXPECT_EQ(Metric(lab, "boardlab_agent_board_quarantined", {{"board", "lab-evk-0"}}), 0);
  (*proxy)->Terminate(seconds(5));
}

// The firmware itself hangs at the end of the first job on the serial board (the board config's
// test-only `test_fault`, boardlab-run --test-fault hang): its watchdog resets it, the host end
// collects the FAULT record, the job ends in BOARD_ERROR and passes on the sim board; the serial
// board, back from its reset, is recovered at once by one resync (no reset or power cycle) and
// serves the next job.
TEST(SerialBoardServiceTest, FirmwareHangEndsInTheWatchdogAndTheJobPassesElsewhere) {
  if (std::string why = WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
  ServiceLab lab;
  FlashableBoard evk(lab.Path("evk"));
  ASSERT_TRUE(evk.board.Start());
  SerialBoardYaml yaml = PoolBoardRunningTheFirmware(evk);
  ASSERT_FALSE(yaml.build_id.empty());
  yaml.timeout_seconds = 60;  // longer than the watchdog: only the watchdog can end the hang
  ASSERT_TRUE(lab.StartServer(SlowHeartbeats()));
  // The agent inherits the permission; unset again before anything else starts.
  ::setenv(agent::kAllowTestFaultsEnv, "1", 1);
  const bool started = lab.StartAgentWithConfig(
      "lab", AgentConfig("qemu-and-sim-pool", yaml) + "    test_fault: {fault: hang, jobs: 1}\n",
      2);
  ::unsetenv(agent::kAllowTestFaultsEnv);
  ASSERT_TRUE(started) << lab.AgentLog("lab");

  // Two jobs at once: one goes to each board, the serial board's hangs.
  ASSERT_NO_FATAL_FAILURE(TwoJobsOneRetriedOnTheSimBoard(lab, [](const std::string& log) {
    EXPECT_NE(log.find("test fault 'hang' configured for this job"), std::string::npos) << log;
    // The board's own watchdog ended the hang, long before the job's 60 s timeout.
    EXPECT_NE(log.find("the board was reset (watchdog reset) while waiting for the result"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("watchdog reset: pc 0x"), std::string::npos) << log;
  }));

  // The next job on the serial board: the fault is spent, the board answers the resync and
  // passes; no reset or power cycle was needed.
  absl::StatusOr<v1::Job> back =
      RunKws(lab, {"--board-type", "qemu-and-sim-pool", "--board", "lab-evk-0"}, lab.Path("back"));
  ASSERT_TRUE(back.ok()) << back.status();
  const std::string log = JobLog(lab, back->id());
  EXPECT_EQ(back->result(), v1::JOB_RESULT_PASS) << back->message() << "\n" << log;
  // The resync ran right after the failure, without waiting for this job.
  const std::string agent_log = lab.AgentLog("lab");
  EXPECT_NE(agent_log.find("recovering it now: connecting again"), std::string::npos) << agent_log;
  EXPECT_NE(agent_log.find("board lab-evk-0 is back: recovered"), std::string::npos) << agent_log;
  EXPECT_NE(log.find("last reset: watchdog reset"), std::string::npos) << log;
  EXPECT_EQ(log.find("test fault"), std::string::npos) << log;
  EXPECT_EQ(ReadFile(lab.Path("back") + "/output0.bin"), ReadFile(Golden("seed1.output.bin")));
  EXPECT_EQ(Metric(lab, "boardlab_agent_board_recovery_steps_total",
                   {{"board", "lab-evk-0"}, {"step", "resync"}}),
            1)
      << MetricsText(lab);
  for (const char* step : {"reset", "power_cycle"}) {
    EXPECT_EQ(Metric(lab, "boardlab_agent_board_recovery_steps_total",
                     {{"board", "lab-evk-0"}, {"step", step}}),
              0)
        << step << "\n"
        << MetricsText(lab);
  }
}

TEST(SerialBoardServiceTest, FailingFlashToolQuarantinesTheBoardWithItsMessage) {
  if (std::string why = WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
  ServiceLab lab;
  FlashableBoard evk(lab.Path("evk"));
  ASSERT_TRUE(evk.board.Start());
  SerialBoardYaml yaml = BoardOf(evk, evk.board.port());
  yaml.build_id = "00000000deadbeef";  // never what the board reports: it must be flashed
  yaml.flash = "echo 'Error: no probe found (MCU-Link not connected)' >&2; exit 3";
  yaml.flash_attempts = 2;
  ASSERT_TRUE(lab.StartServer(SlowHeartbeats()));
  ASSERT_TRUE(lab.StartAgentWithConfig("lab", AgentConfig("imxrt700-sim", yaml), 2));

  // The agent's check at its start fails to flash twice, before any job: the agent quarantines
  // the board, the server at once with the agent's reason.
  const std::optional<v1::Board> quarantined = WaitForQuarantine(lab, "lab-evk-0", seconds(120));
  ASSERT_TRUE(quarantined.has_value()) << lab.AgentLog("lab");
  EXPECT_EQ(quarantined->reason(),
            "quarantined by agent lab: flashing failed 2 times; last: flash command exit status "
            "3: Error: no probe found (MCU-Link not connected)");
  const std::string agent_log = lab.AgentLog("lab");
  EXPECT_NE(agent_log.find("board lab-evk-0 quarantined by the agent: flashing failed 2 times"),
            std::string::npos)
      << agent_log;
  EXPECT_NE(agent_log.find("flash attempt 2 of 2 failed: flash command exit status 3: Error: no "
                           "probe found (MCU-Link not connected)"),
            std::string::npos)
      << agent_log;
  // A job for the board waits in the queue: the server gives a quarantined board nothing.
  const std::string id = SubmitKws(lab, {"--board-type", "an505-qemu", "--board", "lab-evk-0"});
  ASSERT_FALSE(id.empty());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::string log = CancelWaitingJob(lab, id);
  EXPECT_EQ(log.find("flash"), std::string::npos) << log;
  // The check flashed twice; nothing flashed after the quarantine.
  EXPECT_EQ(Metric(lab, "boardlab_agent_board_flashes_total",
                   {{"board", "lab-evk-0"}, {"result", "failed"}}),
            2)
      << MetricsText(lab);
  EXPECT_EQ(Metric(lab, "boardlab_agent_board_quarantined", {{"board", "lab-evk-0"}}), 1);
  EXPECT_EQ(Metric(lab, "boardlab_agent_board_quarantines_total", {{"board", "lab-evk-0"}}), 1);
  // The agent goes on serving its other board.
  absl::StatusOr<v1::Job> sim =
      RunKws(lab, {"--board-type", "imxrt700-sim", "--board", "lab-sim-0"}, lab.Path("sim"));
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_EQ(sim->result(), v1::JOB_RESULT_PASS) << sim->message();
}

TEST(SerialBoardServiceTest, KilledQemuIsABoardErrorAndTheAgentStaysAlive) {
  if (std::string why = WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
  ServiceLab lab;
  FlashableBoard evk(lab.Path("evk"));
  ASSERT_TRUE(evk.board.Start());
  SerialBoardYaml yaml = PoolBoardRunningTheFirmware(evk);
  ASSERT_FALSE(yaml.build_id.empty());
  ASSERT_TRUE(lab.StartServer(SlowHeartbeats()));
  ASSERT_TRUE(lab.StartAgentWithConfig("lab", AgentConfig("qemu-and-sim-pool", yaml), 2));

  // kws takes seconds to reach the board over QEMU's UART: QEMU is killed during the upload.
  const std::string id =
      SubmitKws(lab, {"--board-type", "qemu-and-sim-pool", "--board", "lab-evk-0"});
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<v1::Job> job = lab.GetJob(id);
        return job.ok() && job->state() == v1::JOB_STATE_RUNNING;
      },
      seconds(60), "the job to run"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_EQ(::kill(evk.board.qemu_pid(), SIGKILL), 0);
  // The agent climbs the ladder at once, without a job: nothing answers on the port, so the
  // board ends in quarantine, the server's too, with the agent's reason.
  const std::optional<v1::Board> quarantined = WaitForQuarantine(lab, "lab-evk-0", seconds(180));
  ASSERT_TRUE(quarantined.has_value()) << lab.AgentLog("lab");
  EXPECT_NE(quarantined->reason().find("quarantined by agent lab: no answer on tcp:"),
            std::string::npos)
      << quarantined->reason();
  EXPECT_NE(quarantined->reason().find("after connecting again, reset, power cycle"),
            std::string::npos)
      << quarantined->reason();
  const std::string agent_log = lab.AgentLog("lab");
  EXPECT_NE(agent_log.find("recovering it now: connecting again"), std::string::npos) << agent_log;
  // The job is pinned to the board: it waits for it (no retry ran into the quarantine).
  const std::string log = CancelWaitingJob(lab, id);
  EXPECT_NE(log.find("BOARD_ERROR: board error:"), std::string::npos) << log;
  EXPECT_EQ(log.find("flash: "), std::string::npos) << log;  // the build id matched
  ASSERT_TRUE(lab.agent("lab")->Running()) << agent_log;
  absl::StatusOr<v1::Job> sim =
      RunKws(lab, {"--board-type", "qemu-and-sim-pool", "--board", "lab-sim-0"}, lab.Path("sim"));
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_EQ(sim->result(), v1::JOB_RESULT_PASS) << sim->message();
}

// ---- The model slot: a model larger than the board's artifact cache. ----

constexpr char kMobilenet[] = "pytorch-export/mobilenet_v2_int8_1x3x224x224.tflite";

std::string MobilenetGolden(const std::string& file) {
  return (fs::path(SharedModelsDir()).parent_path() / "golden" / "mobilenet_v2_int8_1x3x224x224" /
          file)
      .string();
}

// Submits mobilenet_v2 with its golden seed-1 case to the serial board and waits.
absl::StatusOr<v1::Job> RunMobilenet(ServiceLab& lab, const std::string& out) {
  ClientResult r = lab.RunClient(
      {"submit", *SharedModelPath(kMobilenet), "--board-type", "an505-qemu", "--board", "lab-evk-0",
       "--input", MobilenetGolden("seed1.input.bin"), "--expected",
       MobilenetGolden("seed1.output.bin"), "--wait", "--out", out, "--json"},
      seconds(400));
  absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
  if (!job.ok()) {
    return absl::InternalError(absl::StrCat(job.status().message(), "\n", r.out, r.err));
  }
  return job;
}

// mobilenet_v2's artifact (3.7 MB) does not fit the an505 board's 3 MB artifact cache: the agent
// writes it into the model slot with model_flash (qemu-board.sh --flash-model, as a flash tool
// writes XSPI flash), once; kws still goes over the link; a slot someone overwrote is refused
// by the board (its SHA-256 differs) and the agent writes the model again.
TEST(SerialBoardServiceTest, ModelLargerThanTheCacheGoesThroughTheModelSlot) {
  if (std::string why = WhyNotRunnable(); !why.empty()) GTEST_SKIP() << why;
  if (!SharedModelPath(kMobilenet) || !fs::exists(MobilenetGolden("seed1.input.bin"))) {
    GTEST_SKIP() << "mobilenet_v2 or its golden output absent under " << SharedModelsDir();
  }
  ServiceLab lab;
  FlashableBoard evk(lab.Path("evk"));
  const fs::path slot = fs::path(lab.Path("evk")) / "model-slot.bin";
  evk.board.set_model_slot_file(slot);
  ASSERT_TRUE(evk.board.Start());
  SerialBoardYaml yaml = BoardOf(evk, evk.board.port());
  yaml.build_id = FirmwareBuildId();
  yaml.model_flash = absl::StrCat("/bin/bash ", evk.board.script(), " --flash-model ",
                                  evk.board.monitor(), " {model}");
  ASSERT_TRUE(lab.StartServer(SlowHeartbeats()));
  ASSERT_TRUE(lab.StartAgentWithConfig("lab", AgentConfig("imxrt700-sim", yaml), 2));

  const std::vector<uint8_t> golden = ReadFile(MobilenetGolden("seed1.output.bin"));
  absl::StatusOr<v1::Job> first = RunMobilenet(lab, lab.Path("out-1"));
  ASSERT_TRUE(first.ok()) << first.status() << "\n" << lab.AgentLog("lab");
  std::string log = JobLog(lab, first->id());
  ASSERT_EQ(first->result(), v1::JOB_RESULT_PASS) << first->message() << "\n" << log;
  EXPECT_EQ(ReadFile(lab.Path("out-1") + "/output0.bin"), golden);
  EXPECT_NE(log.find("goes into the model slot (6291456 bytes; artifact cache 3145728 bytes)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("model_flash: /bin/bash "), std::string::npos) << log;
  EXPECT_NE(log.find("in the model slot at 0x80a00000, checked by the board"), std::string::npos)
      << log;
  ASSERT_TRUE(fs::exists(slot));
  EXPECT_GT(fs::file_size(slot), 3u << 20);  // the artifact the agent flashed

  // A model that fits the cache goes over the link; the slot is left alone.
  absl::StatusOr<v1::Job> kws =
      RunKws(lab, {"--board-type", "an505-qemu", "--board", "lab-evk-0"}, lab.Path("out-kws"));
  ASSERT_TRUE(kws.ok()) << kws.status();
  log = JobLog(lab, kws->id());
  EXPECT_EQ(kws->result(), v1::JOB_RESULT_PASS) << kws->message() << "\n" << log;
  EXPECT_EQ(log.find("model_flash"), std::string::npos) << log;

  // The same model again: the slot holds it (the board still checks it), no flash.
  absl::StatusOr<v1::Job> second = RunMobilenet(lab, lab.Path("out-2"));
  ASSERT_TRUE(second.ok()) << second.status();
  log = JobLog(lab, second->id());
  ASSERT_EQ(second->result(), v1::JOB_RESULT_PASS) << second->message() << "\n" << log;
  EXPECT_EQ(ReadFile(lab.Path("out-2") + "/output0.bin"), golden);
  EXPECT_NE(log.find("the model slot holds sha256 "), std::string::npos) << log;
  EXPECT_EQ(log.find("model_flash: "), std::string::npos) << log;

  // Someone writes another image into the slot behind the agent's back: the board refuses the
  // slot (a board error naming the stale flash, not a hang), the agent writes the model again.
  {
    std::ofstream overwrite(slot, std::ios::binary | std::ios::trunc);
    overwrite << std::string(fs::file_size(*SharedModelPath(kMobilenet)), 'x');
  }
  ASSERT_EQ(RunCommand(evk.Monitor("power-cycle")).exit_code, 0);
  absl::StatusOr<v1::Job> stale = RunMobilenet(lab, lab.Path("out-3"));
  ASSERT_TRUE(stale.ok()) << stale.status();
  log = JobLog(lab, stale->id());
  const size_t refused = log.find("board error: the board refused the artifact in its model slot");
  ASSERT_NE(refused, std::string::npos) << log;
  EXPECT_NE(log.find("(a stale or failed flash)"), std::string::npos) << log;
  // The server retried the job on the board: the agent wrote the model again, and it passed.
  EXPECT_NE(log.find("model_flash: /bin/bash ", refused), std::string::npos) << log;
  EXPECT_EQ(stale->result(), v1::JOB_RESULT_PASS) << stale->message() << "\n" << log;
  EXPECT_EQ(ReadFile(lab.Path("out-3") + "/output0.bin"), golden);
}

}  // namespace
}  // namespace boardlab::testing::service
