#pragma once

// The `serial` board driver: a board that speaks the board link protocol (docs/board-protocol.md)
// on a serial port or a TCP socket, as a board farm drives it (docs/boards.md):
//
//   - when the agent starts (check_at_start, on by default: a dead board is found before anyone's
//     job), before a board's first job otherwise, and after a job that ended in a board error,
//     the agent asks the board for its HELLO (BoardProbeCall: asynchronously, on the agent's
//     io_context);
//   - when the firmware build the board reports differs from the configured ELF's, the agent runs
//     the `flash` command (up to `attempts` times) and asks again;
//   - a board that does not answer climbs the recovery ladder: resync (connect again) -> `reset`
//     -> `power_cycle` -> quarantine, each step logged in the job's log and counted in
//     BoardMetrics; a quarantined board answers every job at once with BOARD_ERROR and the
//     reason until a health check from the server finds it working again;
//   - right after a job that ended in a board error the ladder runs in the background, without
//     waiting for the next job: the board is reported recovering (WatchCondition: the server
//     gives it no job meanwhile), each step goes to the agent's log and BoardMetrics, and the
//     board comes back ready or is reported quarantined with the reason (the server then
//     quarantines it too); a job that arrives meanwhile waits for the ladder's end;
//   - the firmware build id learnt after a flash and the agent's quarantine (with its reason)
//     are kept in `<state_dir>/boards/<id>.json` (board_state_file.h) and survive a restart;
//   - with `model_flash` configured, a model larger than the board's artifact cache (or every
//     model) is written into the board's model slot by that command ({model}) and run from there
//     (boardlab-run --artifact-in-slot: the board checks the slot's SHA-256 first); the agent
//     flashes a model again only when the slot holds another one;
//   - the job itself is `boardlab-run --board serial --json` in a child process
//     (ProcessBoardExecutor): the same host session, a crash or hang cannot take the agent down,
//     the board's UART log lines stream into the job log, and its JSON document gives the link's
//     retransmissions.
//
//   ASSIGN_OR_RETURN(auto evk, SerialBoardExecutor::Create(io, board_config,
//                                                           "/usr/bin/boardlab-run", &metrics,
//                                                           "/var/lib/boardlab-agent"));
//   evk->WatchCondition(on_condition);
//   auto run = evk->Start(request, on_line, on_done);

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <string>

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/board_executor.h"
#include "agent/board_metrics.h"
#include "agent/board_probe.h"
#include "agent/board_state_file.h"
#include "agent/config.h"
#include "agent/process_board_executor.h"

namespace boardlab::agent {

/// What the i.MX RT700 firmware (firmware/rt700_board_support.cc) puts in HELLO's board field.
inline constexpr char kRt700HelloBoard[] = "rt700";

class SerialBoardExecutor : public BoardExecutor {
 public:
  /// Reads the board's state file under `state_dir` (board_state_file.h) and makes the driver.
  /// Errors: the state file's (DataLoss).
  static absl::StatusOr<std::unique_ptr<SerialBoardExecutor>> Create(boost::asio::io_context& io,
                                                                     BoardConfig board,
                                                                     std::string boardlab_run,
                                                                     BoardMetrics* metrics,
                                                                     const std::string& state_dir);

  /// `io` and `metrics` outlive the executor. Below `state_dir`: `firmware/` receives the .hex /
  /// .bin copies of the firmware when a flash template asks for them, `boards/<id>.json` the
  /// board's state. `saved` is that state as read (Create reads it).
  SerialBoardExecutor(boost::asio::io_context& io, BoardConfig board, std::string boardlab_run,
                      BoardMetrics* metrics, std::string state_dir, BoardState saved = {});
  ~SerialBoardExecutor() override;

  std::unique_ptr<BoardRun> Start(const BoardRunRequest& request, LineCallback on_line,
                                  DoneCallback on_done) override;
  void WatchCondition(ConditionCallback on_change) override;

  /// Asks the board for its HELLO in the background as soon as the event loop runs (flashing it
  /// or climbing the recovery ladder as a job's preparation would), unless `check_at_start` is
  /// off or the board is quarantined from before a restart. Until it ends the board is reported
  /// RECOVERING and jobs wait. Call before the event loop runs.
  void CheckAtStart();

  bool quarantined() const { return health_ == Health::kQuarantined; }
  bool recovering() const { return health_ == Health::kRecovering; }

 private:
  class Run;
  enum class Health {
    kUnknown,      // not asked yet (agent start)
    kReady,        // answered with the right firmware; its last job did not end in a board error
    kRecovering,   // its last job ended in a board error: the ladder runs in the background
    kQuarantined,  // the ladder ran out; jobs fail at once
  };

  void Prepare(std::shared_ptr<Run> run);
  // A cancelled or dropped job that waits for the recovery: forgotten (a cancel is reported).
  void ForgetWaiting(const std::shared_ptr<Run>& run, bool report);
  // A run without a job (the check at start or a recovery), its lines to the agent's log.
  std::shared_ptr<Run> StartBackgroundRun(bool at_start);
  void StartRecovery(const std::string& why);
  void EndRecovery(std::shared_ptr<Run> recovery);
  void ResumeWaiting();
  void SetCondition(v1::BoardCondition condition, const std::string& reason);
  void LiftQuarantine(std::shared_ptr<Run> run);
  // Writes the state file when what it keeps changed; a failure is logged (the agent goes on).
  void SaveState();
  void Probe(std::shared_ptr<Run> run, std::function<void(BoardProbe)> then);
  void OnProbe(std::shared_ptr<Run> run, BoardProbe probe);
  void ClimbLadder(std::shared_ptr<Run> run, const std::string& why);
  void WarnOfAnotherBoard(std::shared_ptr<Run> run, const BoardProbe& probe);
  void CheckFirmware(std::shared_ptr<Run> run, const BoardProbe& probe);
  void Flash(std::shared_ptr<Run> run);
  void OnFlashFailed(std::shared_ptr<Run> run, const std::string& why);
  void RunCommand(std::shared_ptr<Run> run, const std::string& what, const BoardCommand& command,
                  std::function<void(absl::Status)> then);
  void MakeImage(std::shared_ptr<Run> run, const std::string& format,
                 std::function<void(absl::Status)> then);
  void Quarantine(std::shared_ptr<Run> run, const std::string& reason);
  // Whether the job's model goes into the model slot (model_flash and its policy); when the slot
  // does not hold it yet, runs model_flash, probes the board and comes back to StartJob: true.
  bool PrepareModelSlot(std::shared_ptr<Run> run);
  void FlashModel(std::shared_ptr<Run> run, const std::string& digest);
  void StartJob(std::shared_ptr<Run> run);
  void OnJobDone(std::shared_ptr<Run> run, BoardReport report);
  std::string FirmwareImage(const std::string& format) const;
  std::string ExpectedBuildId() const;

  boost::asio::io_context& io_;
  BoardConfig board_;
  BoardMetrics* metrics_;
  std::string firmware_dir_;
  ProcessBoardExecutor runner_;
  std::string state_path_;
  BoardState saved_;  // what the state file holds
  Health health_ = Health::kUnknown;
  std::string quarantine_reason_;
  v1::BoardCondition condition_ = v1::BOARD_CONDITION_READY;
  std::string condition_reason_;
  ConditionCallback on_condition_;
  std::shared_ptr<Run> recovery_;              // the ladder running in the background
  std::vector<std::shared_ptr<Run>> waiting_;  // jobs that came during the recovery
  int test_faults_left_ = 0;                   // jobs that still get the configured test fault
  std::string learnt_build_id_;  // what the board reported after our flash (no build_id given)
  uint32_t cache_capacity_ = 0;  // the board's artifact cache and model slot, from its last HELLO
  uint32_t model_slot_size_ = 0;
  // The SHA-256 (hex) of the artifact model_flash last wrote into the slot; empty when unknown
  // (none yet, or a job that ran from the slot ended in a board error: maybe a failed flash).
  std::string slot_digest_;
  // False once the executor is gone: callbacks still queued on the io_context do nothing.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace boardlab::agent
