#include "agent/serial_board_executor.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/child_process.h"
#include "agent/command_template.h"
#include "agent/runner_output.h"
#include "nlohmann/json.hpp"

namespace boardlab::agent {
namespace {

namespace fs = std::filesystem;

// A command's last output lines are its message when it fails.
constexpr size_t kKeptCommandLines = 3;

// The link's retransmissions and the board's build in boardlab-run's --json document.
struct RunDocument {
  uint64_t retransmissions = 0;
  std::string build_id;
};

RunDocument ReadRunDocument(const std::string& path) {
  RunDocument doc;
  std::ifstream in(path);
  if (!in) return doc;
  const nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return doc;
  const auto link = json.find("link");
  if (link != json.end() && link->is_object()) {
    doc.retransmissions = link->value("retransmissions", uint64_t{0});
  }
  const auto board = json.find("board");
  if (board != json.end() && board->is_object()) doc.build_id = board->value("build_id", "");
  return doc;
}

}  // namespace

// One job on the board: the preparation (probe, ladder, flash), then the run. Its callbacks run
// on the io_context thread; once `detached`, nothing is reported any more.
class SerialBoardExecutor::Run {
 public:
  BoardRunRequest request;
  LineCallback on_line;
  DoneCallback on_done;
  bool cancelled = false;
  bool detached = false;
  bool finished = false;
  int rung = 0;  // ladder steps taken in this preparation: 1 after reset, 2 after power cycle
  int flash_attempts = 0;
  bool flashed = false;               // this preparation flashed the board
  bool slot_decided = false;          // PrepareModelSlot ran for this job
  bool in_slot = false;               // the job runs its model from the slot
  std::set<std::string> images_made;  // {hex} / {bin} images made for this preparation
  std::shared_ptr<ChildProcess> command;
  std::unique_ptr<BoardRun> job;
  std::shared_ptr<BoardProbeCall> probe;  // the question to the board in progress
  // The background recovery after a board error, or the check at agent start: no job; its lines
  // go to the agent's log, and reaching StartJob means the board is ready (again).
  bool recovery = false;
  bool at_start = false;  // the check at agent start, not a recovery from a board error

  bool stopped() const { return cancelled || detached || finished; }
  void Line(const std::string& text) {
    if (!detached) on_line(text);
  }
  void Finish(BoardReport report) {
    if (finished || detached) return;
    finished = true;
    on_done(std::move(report));
  }
  void FinishCancelled() {
    BoardReport report;
    report.outcome = v1::RUN_OUTCOME_CANCELLED;
    report.message = "cancelled while preparing the board";
    Finish(std::move(report));
  }
  void Stop() {
    if (probe != nullptr) probe->Cancel();
    if (command != nullptr) command->Kill();
    if (job != nullptr) job->Cancel();
  }
};

namespace {

// What the job runner holds: Cancel() stops the run, destruction drops it without a report.
class SerialRunHandle : public BoardRun {
 public:
  SerialRunHandle(std::function<void()> cancel, std::function<void()> detach)
      : cancel_(std::move(cancel)), detach_(std::move(detach)) {}
  ~SerialRunHandle() override { detach_(); }
  void Cancel() override { cancel_(); }

 private:
  std::function<void()> cancel_;
  std::function<void()> detach_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SerialBoardExecutor>> SerialBoardExecutor::Create(
    boost::asio::io_context& io, BoardConfig board, std::string boardlab_run, BoardMetrics* metrics,
    const std::string& state_dir) {
  absl::StatusOr<BoardState> saved = LoadBoardState(BoardStatePath(state_dir, board.id));
  if (!saved.ok()) return saved.status();
  return std::make_unique<SerialBoardExecutor>(io, std::move(board), std::move(boardlab_run),
                                               metrics, state_dir, *std::move(saved));
}

SerialBoardExecutor::SerialBoardExecutor(boost::asio::io_context& io, BoardConfig board,
                                         std::string boardlab_run, BoardMetrics* metrics,
                                         std::string state_dir, BoardState saved)
    : io_(io),
      board_(std::move(board)),
      metrics_(metrics),
      firmware_dir_((fs::path(state_dir) / "firmware").string()),
      runner_(io, std::move(boardlab_run), board_.serial),
      state_path_(BoardStatePath(state_dir, board_.id)),
      saved_(std::move(saved)),
      test_faults_left_(board_.serial.test_fault_jobs),
      learnt_build_id_(saved_.learnt_build_id) {
  if (saved_.quarantined) {
    // Quarantined before the agent restarted: it stays so until a health check finds it working.
    health_ = Health::kQuarantined;
    quarantine_reason_ = saved_.quarantine_reason;
    condition_ = v1::BOARD_CONDITION_QUARANTINED;
    condition_reason_ = quarantine_reason_;
    metrics_->RestoreQuarantined(board_.id);
    std::cerr << "boardlab-agent: board " << board_.id
              << " stays quarantined (agent state, before the restart): " << quarantine_reason_
              << std::endl;
  }
}

SerialBoardExecutor::~SerialBoardExecutor() {
  *alive_ = false;
  if (recovery_ != nullptr) recovery_->Stop();
}

void SerialBoardExecutor::WatchCondition(ConditionCallback on_change) {
  on_condition_ = std::move(on_change);
  if (condition_ == v1::BOARD_CONDITION_READY) return;
  boost::asio::post(io_, [this, alive = alive_] {
    if (*alive && on_condition_) on_condition_(condition_, condition_reason_);
  });
}

void SerialBoardExecutor::SetCondition(v1::BoardCondition condition, const std::string& reason) {
  if (condition == condition_ && reason == condition_reason_) return;
  condition_ = condition;
  condition_reason_ = reason;
  if (on_condition_) on_condition_(condition_, condition_reason_);
}

void SerialBoardExecutor::SaveState() {
  BoardState state;
  state.learnt_build_id = learnt_build_id_;
  state.quarantined = health_ == Health::kQuarantined;
  state.quarantine_reason = state.quarantined ? quarantine_reason_ : "";
  if (state == saved_) return;
  if (absl::Status s = SaveBoardState(state_path_, state); !s.ok()) {
    std::cerr << "boardlab-agent: board " << board_.id << ": " << s.message()
              << " (the state is kept in memory only)" << std::endl;
    return;
  }
  saved_ = std::move(state);
}

std::unique_ptr<BoardRun> SerialBoardExecutor::Start(const BoardRunRequest& request,
                                                     LineCallback on_line, DoneCallback on_done) {
  auto run = std::make_shared<Run>();
  run->request = request;
  run->on_line = std::move(on_line);
  run->on_done = std::move(on_done);
  boost::asio::post(io_, [this, run, alive = alive_] {
    if (*alive) Prepare(run);
  });
  return std::make_unique<SerialRunHandle>(
      [this, io = &io_, run, alive = alive_] {
        if (run->stopped()) return;
        run->cancelled = true;
        run->Stop();
        // A job waiting for the recovery has nothing to stop: its cancel is reported from here
        // (posted: never from inside Cancel). The executor may be gone by then.
        boost::asio::post(*io, [this, run, alive] {
          if (*alive) ForgetWaiting(run, /*report=*/true);
        });
      },
      [this, run, alive = alive_] {
        run->detached = true;
        run->Stop();
        if (*alive) ForgetWaiting(run, /*report=*/false);
      });
}

void SerialBoardExecutor::ForgetWaiting(const std::shared_ptr<Run>& run, bool report) {
  const auto it = std::find(waiting_.begin(), waiting_.end(), run);
  if (it == waiting_.end()) return;
  waiting_.erase(it);
  if (report) run->FinishCancelled();
}

void SerialBoardExecutor::Prepare(std::shared_ptr<Run> run) {
  if (run->stopped()) return run->FinishCancelled();
  if (health_ == Health::kRecovering && !run->recovery) {
    run->Line(absl::StrCat("boardlab-agent: board ", board_.id,
                           ": waiting for the agent's recovery of the board to end"));
    waiting_.push_back(run);
    return;
  }
  if (health_ == Health::kQuarantined && !run->request.health_check) {
    BoardReport report;
    report.message =
        absl::StrCat("board ", board_.id, " is quarantined by the agent: ", quarantine_reason_);
    run->Line(absl::StrCat("boardlab-agent: ", report.message));
    return run->Finish(std::move(report));
  }
  if (health_ == Health::kReady) return StartJob(run);
  run->Line(absl::StrCat("boardlab-agent: board ", board_.id, ": asking ", board_.serial.port,
                         " for the board's HELLO"));
  Probe(run, [this, run](BoardProbe probe) { OnProbe(run, std::move(probe)); });
}

void SerialBoardExecutor::CheckAtStart() {
  // A board quarantined before a restart stays so until the server's health check; one checked
  // already (a job came first) needs no second look.
  if (health_ != Health::kUnknown || !board_.serial.check_at_start) return;
  // Recovering until the board answered: the server hands it no job before the agent knows that
  // it answers with the right firmware (a dead board is found here, not by someone's job).
  health_ = Health::kRecovering;
  condition_ = v1::BOARD_CONDITION_RECOVERING;
  condition_reason_ = "the agent checks the board at its start";
  // Posted: the agent wires WatchCondition after this, and the probe runs on the event loop.
  boost::asio::post(io_, [this, alive = alive_] {
    if (!*alive) return;
    std::shared_ptr<Run> check = StartBackgroundRun(/*at_start=*/true);
    check->Line(absl::StrCat("boardlab-agent: board ", board_.id, ": asking ", board_.serial.port,
                             " for the board's HELLO (agent start)"));
    Probe(check, [this, check](BoardProbe probe) { OnProbe(check, std::move(probe)); });
  });
}

std::shared_ptr<SerialBoardExecutor::Run> SerialBoardExecutor::StartBackgroundRun(bool at_start) {
  health_ = Health::kRecovering;
  auto run = std::make_shared<Run>();
  run->recovery = true;
  run->at_start = at_start;
  run->request.board_id = board_.id;
  run->on_line = [](std::string line) { std::cerr << line << std::endl; };
  run->on_done = [](BoardReport) {};
  recovery_ = run;
  if (!at_start) metrics_->SetRecovering(board_.id, true);
  return run;
}

void SerialBoardExecutor::StartRecovery(const std::string& why) {
  std::shared_ptr<Run> recovery = StartBackgroundRun(/*at_start=*/false);
  // The first rung: a new session (CONNECT with a new nonce) over a resynchronised stream.
  metrics_->CountStep(board_.id, RecoveryStep::kResync);
  recovery->Line(absl::StrCat("boardlab-agent: board ", board_.id,
                              ": its last job ended in a board error (", why,
                              "); recovering it now: connecting again"));
  Probe(recovery, [this, recovery](BoardProbe probe) { OnProbe(recovery, std::move(probe)); });
}

void SerialBoardExecutor::EndRecovery(std::shared_ptr<Run> recovery) {
  recovery->finished = true;
  if (recovery_ == recovery) recovery_.reset();
  const bool back = health_ != Health::kQuarantined;
  // The check at start recovers nothing: the recovery metrics count recoveries from board errors.
  if (!recovery->at_start) {
    metrics_->SetRecovering(board_.id, false);
    metrics_->CountRecovery(board_.id, back);
  }
  if (back) {
    recovery->Line(absl::StrCat(
        "boardlab-agent: board ", board_.id,
        recovery->at_start ? " is ready (checked at agent start)" : " is back: recovered"));
    SetCondition(v1::BOARD_CONDITION_READY, "");
  }
  ResumeWaiting();
}

void SerialBoardExecutor::ResumeWaiting() {
  std::vector<std::shared_ptr<Run>> waiting;
  waiting.swap(waiting_);
  for (std::shared_ptr<Run>& run : waiting) Prepare(std::move(run));
}

void SerialBoardExecutor::Probe(std::shared_ptr<Run> run, std::function<void(BoardProbe)> then) {
  run->probe = BoardProbeCall::Start(
      io_, board_.serial, [run, then = std::move(then), alive = alive_](BoardProbe probe) {
        run->probe.reset();
        if (*alive) then(std::move(probe));
      });
  // A cancel that came while the last step ended reaches the new probe too.
  if (run->cancelled || run->detached) run->probe->Cancel();
}

void SerialBoardExecutor::OnProbe(std::shared_ptr<Run> run, BoardProbe probe) {
  if (run->stopped()) return run->FinishCancelled();
  if (probe.other_protocol && !board_.serial.firmware_elf.empty()) {
    // A reset cannot help a firmware of another protocol version: only a flash can.
    const std::string why(probe.status.message());
    if (run->flashed) return OnFlashFailed(run, absl::StrCat("after flashing, ", why));
    run->Line(absl::StrCat("boardlab-agent: board ", board_.id, " runs build ", probe.build_id,
                           ": ", why, "; flashing ", board_.serial.firmware_elf));
    return Flash(run);
  }
  if (!probe.status.ok()) return ClimbLadder(run, std::string(probe.status.message()));
  run->Line(absl::StrCat("boardlab-agent: board ", board_.id, " answered: ", probe.board,
                         " firmware ", probe.firmware_version, " build ", probe.build_id));
  WarnOfAnotherBoard(run, probe);
  cache_capacity_ = probe.cache_capacity;
  model_slot_size_ = probe.model_slot_size;
  CheckFirmware(run, probe);
}

void SerialBoardExecutor::ClimbLadder(std::shared_ptr<Run> run, const std::string& why) {
  run->Line(absl::StrCat("boardlab-agent: board ", board_.id, " does not answer: ", why));
  const auto step = [this, run](RecoveryStep name, const BoardCommand& command) {
    metrics_->CountStep(board_.id, name);
    RunCommand(run, RecoveryStepName(name), command, [this, run](absl::Status status) {
      if (run->stopped()) return run->FinishCancelled();
      if (!status.ok()) return ClimbLadder(run, std::string(status.message()));
      Probe(run, [this, run](BoardProbe probe) { OnProbe(run, std::move(probe)); });
    });
  };
  const SerialBoardConfig& serial = board_.serial;
  if (run->rung < 1 && !serial.reset.command.empty()) {
    run->rung = 1;
    return step(RecoveryStep::kReset, serial.reset);
  }
  if (run->rung < 2 && !serial.power_cycle.command.empty()) {
    run->rung = 2;
    return step(RecoveryStep::kPowerCycle, serial.power_cycle);
  }
  std::string tried = "connecting again";
  if (!serial.reset.command.empty()) absl::StrAppend(&tried, ", reset");
  if (!serial.power_cycle.command.empty()) absl::StrAppend(&tried, ", power cycle");
  Quarantine(run, absl::StrCat("no answer on ", serial.port, " after ", tried, ": ", why));
}

void SerialBoardExecutor::WarnOfAnotherBoard(std::shared_ptr<Run> run, const BoardProbe& probe) {
  // Budgets, diffs and dashboards group measurements by board type: an emulated board (QEMU's
  // an505) under an i.MX RT700 type would pass its figures off as the real board's.
  if (!absl::StartsWith(board_.type, "imxrt700") || probe.board == kRt700HelloBoard) return;
  const std::string warning = absl::StrCat(
      "boardlab-agent: warning: board ", board_.id, " is configured as type ", board_.type,
      " but its HELLO says it is an '", probe.board, "' board, not '", kRt700HelloBoard,
      "': its measurements are filed under ", board_.type, "; give it a type of its own");
  std::cerr << warning << std::endl;
  if (!run->recovery) run->Line(warning);  // a recovery's lines are the agent's log already
}

std::string SerialBoardExecutor::ExpectedBuildId() const {
  return board_.serial.firmware_build_id.empty() ? learnt_build_id_
                                                 : board_.serial.firmware_build_id;
}

void SerialBoardExecutor::CheckFirmware(std::shared_ptr<Run> run, const BoardProbe& probe) {
  const std::string expected = ExpectedBuildId();
  const bool flash_configured = !board_.serial.firmware_elf.empty();
  if (!flash_configured || (!expected.empty() && probe.build_id == expected)) {
    if (health_ == Health::kQuarantined) LiftQuarantine(run);
    health_ = Health::kReady;
    return StartJob(run);
  }
  if (run->flashed && expected.empty()) {
    // No build id configured: the build this flash left on the board is the ELF's.
    learnt_build_id_ = probe.build_id;
    SaveState();
    run->Line(absl::StrCat("boardlab-agent: firmware ", board_.serial.firmware_elf,
                           " reports build ", probe.build_id));
    return CheckFirmware(run, probe);
  }
  if (run->flashed) {
    return OnFlashFailed(run, absl::StrCat("after flashing, the board reports build ",
                                           probe.build_id, ", the firmware's is ", expected));
  }
  run->Line(absl::StrCat("boardlab-agent: board ", board_.id, " runs build ", probe.build_id,
                         expected.empty() ? " (the firmware's build id is not known yet)"
                                          : absl::StrCat(", not ", expected),
                         ": flashing ", board_.serial.firmware_elf));
  Flash(run);
}

std::string SerialBoardExecutor::FirmwareImage(const std::string& format) const {
  return (fs::path(firmware_dir_) / absl::StrCat(board_.id, ".", format)).string();
}

void SerialBoardExecutor::MakeImage(std::shared_ptr<Run> run, const std::string& format,
                                    std::function<void(absl::Status)> then) {
  // LinkServer and J-Link take the ELF; some tools want Intel HEX or a raw image.
  BoardCommand objcopy;
  objcopy.command = absl::StrCat("arm-none-eabi-objcopy -O ", format == "hex" ? "ihex" : "binary",
                                 " {elf} ", ShellQuote(FirmwareImage(format)));
  objcopy.timeout_seconds = 60;
  std::error_code ec;
  fs::create_directories(firmware_dir_, ec);
  RunCommand(run, absl::StrCat("objcopy to .", format), objcopy, std::move(then));
}

void SerialBoardExecutor::Flash(std::shared_ptr<Run> run) {
  const std::string& command = board_.serial.flash.command;
  for (const char* format : {"hex", "bin"}) {
    // Made again for every flash: the ELF may have been rebuilt since the last one.
    if (UsesPlaceholder(command, format) && run->images_made.insert(format).second) {
      return MakeImage(run, format, [this, run](absl::Status status) {
        if (run->stopped()) return run->FinishCancelled();
        if (!status.ok()) return OnFlashFailed(run, std::string(status.message()));
        Flash(run);
      });
    }
  }
  ++run->flash_attempts;
  RunCommand(run, "flash", board_.serial.flash, [this, run](absl::Status status) {
    if (run->stopped()) return run->FinishCancelled();
    metrics_->CountFlash(board_.id, status.ok());
    if (!status.ok()) return OnFlashFailed(run, std::string(status.message()));
    run->flashed = true;
    Probe(run, [this, run](BoardProbe probe) { OnProbe(run, std::move(probe)); });
  });
}

void SerialBoardExecutor::OnFlashFailed(std::shared_ptr<Run> run, const std::string& why) {
  run->Line(absl::StrCat("boardlab-agent: board ", board_.id, ": flash attempt ",
                         run->flash_attempts, " of ", board_.serial.flash_attempts,
                         " failed: ", why));
  if (run->flash_attempts < board_.serial.flash_attempts) return Flash(run);
  Quarantine(run, absl::StrCat("flashing failed ", run->flash_attempts, " times; last: ", why));
}

void SerialBoardExecutor::RunCommand(std::shared_ptr<Run> run, const std::string& what,
                                     const BoardCommand& command,
                                     std::function<void(absl::Status)> then) {
  const std::map<std::string, std::string> values = {
      {"elf", board_.serial.firmware_elf}, {"hex", FirmwareImage("hex")},
      {"bin", FirmwareImage("bin")},       {"board", board_.id},
      {"port", board_.serial.port},        {"model", run->request.artifact_path}};
  const std::string expanded = ExpandCommandTemplate(command.command, values);
  ChildOptions options;
  options.argv = {"/bin/sh", "-c", expanded};
  options.timeout = std::chrono::seconds(command.timeout_seconds);
  auto last_lines = std::make_shared<std::deque<std::string>>();
  auto on_output = [run, what, last_lines](std::string line) {
    run->Line(absl::StrCat(what, ": ", line));
    last_lines->push_back(std::move(line));
    if (last_lines->size() > kKeptCommandLines) last_lines->pop_front();
  };
  const int timeout = command.timeout_seconds;
  run->command = ChildProcess::Start(
      io_, std::move(options), on_output, on_output,
      [run, what, last_lines, timeout, then, alive = alive_](const ChildExit& exit) {
        run->command.reset();
        if (!*alive) return;
        if (exit.kind == ChildExit::Kind::kExited && exit.exit_code == 0) {
          return then(absl::OkStatus());
        }
        then(absl::UnavailableError(
            absl::StrCat(what, " command ", DescribeChildExit(exit, timeout),
                         last_lines->empty() ? "" : ": ", absl::StrJoin(*last_lines, " / "))));
      });
  // Its output comes later (never inside Start); a cancel during this line must reach it.
  run->Line(absl::StrCat("boardlab-agent: board ", board_.id, ": ", what, ": ", expanded));
  if (run->cancelled || run->detached) run->command->Kill();
}

void SerialBoardExecutor::LiftQuarantine(std::shared_ptr<Run> run) {
  run->Line(absl::StrCat("boardlab-agent: board ", board_.id, " is back: quarantine lifted"));
  metrics_->SetQuarantined(board_.id, false);
  health_ = Health::kReady;
  quarantine_reason_.clear();
  SaveState();
  SetCondition(v1::BOARD_CONDITION_READY, "");
}

void SerialBoardExecutor::Quarantine(std::shared_ptr<Run> run, const std::string& reason) {
  health_ = Health::kQuarantined;
  quarantine_reason_ = reason;
  metrics_->SetQuarantined(board_.id, true);
  SaveState();
  // The agent's log has it whether a job or the background recovery got here.
  if (!run->recovery) {
    std::cerr << "boardlab-agent: board " << board_.id << " quarantined: " << reason << std::endl;
  }
  BoardReport report;
  report.message = absl::StrCat("board ", board_.id, " quarantined by the agent: ", reason);
  run->Line(absl::StrCat("boardlab-agent: ", report.message));
  SetCondition(v1::BOARD_CONDITION_QUARANTINED, reason);
  if (run->recovery) return EndRecovery(run);
  run->Finish(std::move(report));
}

bool SerialBoardExecutor::PrepareModelSlot(std::shared_ptr<Run> run) {
  const SerialBoardConfig& serial = board_.serial;
  if (serial.model_flash.command.empty()) return false;
  std::error_code ec;
  const uintmax_t size = fs::file_size(run->request.artifact_path, ec);
  if (ec) return false;  // boardlab-run says what is wrong with the file
  if (serial.model_flash_when == ModelFlashPolicy::kTooLarge && size <= cache_capacity_) {
    return false;
  }
  run->in_slot = true;
  if (model_slot_size_ == 0) {
    // boardlab-run --artifact-in-slot refuses it with the board's words; no flash is tried.
    run->Line(absl::StrCat("boardlab-agent: board ", board_.id,
                           " announces no model slot (its firmware is older, or the board has "
                           "none): the model cannot be flashed into it"));
    return false;
  }
  // The job's digest, which the artifact cache verified: hashing a model of tens of megabytes
  // here would stall the agent's event loop at every job.
  const std::string& digest = run->request.artifact_sha256;
  if (!digest.empty() && digest == slot_digest_) {
    run->Line(absl::StrCat("boardlab-agent: board ", board_.id, ": the model slot holds sha256 ",
                           digest.substr(0, 16), "... already (the board checks it)"));
    return false;
  }
  FlashModel(run, digest);
  return true;
}

void SerialBoardExecutor::FlashModel(std::shared_ptr<Run> run, const std::string& digest) {
  run->Line(absl::StrCat("boardlab-agent: board ", board_.id, ": the model (",
                         digest.empty() ? "sha256 unknown" : digest.substr(0, 16) + "...",
                         ") goes into the model slot (", model_slot_size_,
                         " bytes; artifact cache ", cache_capacity_, " bytes)"));
  slot_digest_.clear();  // whatever the slot held is being overwritten
  RunCommand(run, "model_flash", board_.serial.model_flash,
             [this, run, digest](absl::Status status) {
               if (run->stopped()) return run->FinishCancelled();
               if (!status.ok()) {
                 // The board itself is not at fault: the job fails, the board stays in service.
                 BoardReport report;
                 report.message = absl::StrCat("board ", board_.id, ": ", status.message());
                 run->Line(absl::StrCat("boardlab-agent: ", report.message));
                 return run->Finish(std::move(report));
               }
               slot_digest_ = digest;  // empty (a request without a digest): still unknown
               // The tool may have reset the board: ask it again (and check its firmware).
               Probe(run, [this, run](BoardProbe probe) { OnProbe(run, std::move(probe)); });
             });
}

void SerialBoardExecutor::StartJob(std::shared_ptr<Run> run) {
  if (run->recovery) return EndRecovery(run);  // the board answers with the right firmware
  if (!run->slot_decided) {
    run->slot_decided = true;
    if (PrepareModelSlot(run)) return;
  }
  std::error_code ec;
  fs::remove(RunJsonPath(run->request), ec);  // a document of an earlier run is not this one's
  BoardRunRequest request = run->request;
  request.artifact_in_slot = run->in_slot;
  if (test_faults_left_ > 0 && !request.health_check) {
    --test_faults_left_;
    request.test_fault = board_.serial.test_fault;
    run->Line(absl::StrCat("boardlab-agent: board ", board_.id, ": test fault '",
                           request.test_fault, "' configured for this job (tests only)"));
  }
  run->job = runner_.Start(
      request, [run](std::string line) { run->Line(line); },
      [this, run, alive = alive_](BoardReport report) {
        if (*alive) OnJobDone(run, std::move(report));
      });
}

void SerialBoardExecutor::OnJobDone(std::shared_ptr<Run> run, BoardReport report) {
  const RunDocument doc = ReadRunDocument(RunJsonPath(run->request));
  if (doc.retransmissions > 0) metrics_->AddRetransmissions(board_.id, doc.retransmissions);
  if (report.outcome == v1::RUN_OUTCOME_BOARD_ERROR) {
    if (run->in_slot) slot_digest_.clear();  // maybe a stale or failed model flash: write again
    // Recovering from now on, before the report goes out: the server must not hand the board
    // the next job on the strength of this result.
    const std::string why = report.message;
    health_ = Health::kRecovering;
    SetCondition(v1::BOARD_CONDITION_RECOVERING,
                 absl::StrCat("its last job ended in a board error: ", why));
    run->Finish(std::move(report));
    return StartRecovery(why);
  }
  if (report.outcome != v1::RUN_OUTCOME_CANCELLED && !doc.build_id.empty() &&
      !ExpectedBuildId().empty() && doc.build_id != ExpectedBuildId()) {
    // Someone flashed the board behind the agent's back: flash it again before the next job.
    health_ = Health::kUnknown;
  }
  run->Finish(std::move(report));
}

}  // namespace boardlab::agent
