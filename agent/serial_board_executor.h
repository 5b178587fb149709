#pragma once

// The `serial` board driver: a board that speaks the board link protocol (docs/board-protocol.md)
// on a serial port or a TCP socket, as a board farm drives it (docs/boards.md):
//
//   - before a board's first job, and after a job that ended in a board error, the agent asks the
//     board for its HELLO (link::HostSession::Connect, on a thread of its own: it blocks);
//   - when the firmware build the board reports differs from the configured ELF's, the agent runs
//     the `flash` command (up to `attempts` times) and asks again;
//   - a board that does not answer climbs the recovery ladder: resync (connect again) -> `reset`
//     -> `power_cycle` -> quarantine, each step logged in the job's log and counted in
//     BoardMetrics; a quarantined board answers every job at once with BOARD_ERROR and the
//     reason (the server retries the job elsewhere and, after a few, quarantines the board with
//     that reason too) until a health check from the server finds it working again;
//   - with `model_flash` configured, a model larger than the board's artifact cache (or every
//     model) is written into the board's model slot by that command ({model}) and run from there
//     (boardlab-run --artifact-in-slot: the board checks the slot's SHA-256 first); the agent
//     flashes a model again only when the slot holds another one;
//   - the job itself is `boardlab-run --board serial --json` in a child process
//     (ProcessBoardExecutor): the same host session, a crash or hang cannot take the agent down,
//     the board's UART log lines stream into the job log, and its JSON document gives the link's
//     retransmissions.
//
//   SerialBoardExecutor evk(io, board_config, "/usr/bin/boardlab-run", &metrics, "/var/lib/x");
//   auto run = evk.Start(request, on_line, on_done);

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "agent/board_executor.h"
#include "agent/board_metrics.h"
#include "agent/config.h"
#include "agent/process_board_executor.h"

namespace boardlab::agent {

/// What a probe of the board found: its HELLO's facts, or why there was none.
struct BoardProbe {
  absl::Status status;
  std::string board;     // the board name HELLO gives
  std::string build_id;  // the firmware build HELLO gives
  std::string firmware_version;
  uint32_t cache_capacity = 0;   // bytes of its artifact cache
  uint32_t model_slot_size = 0;  // bytes of its model slot (0: none, or a protocol-2 board)
  // The board answered but speaks another board link protocol version (status says which):
  // its firmware is older or newer than this agent's, so the agent flashes rather than resets.
  bool other_protocol = false;
};

/// What the i.MX RT700 firmware (firmware/rt700_board_support.cc) puts in HELLO's board field.
inline constexpr char kRt700HelloBoard[] = "rt700";

/// Connects to the board and returns its HELLO (blocking, up to `connect_timeout_seconds`; a
/// port that cannot be opened or closes at once is tried again within that time). Uses
/// link::HostSession, like boardlab-run --board serial. `stop` (set by another thread) ends it
/// within a second with a Cancelled status.
BoardProbe ProbeBoard(const SerialBoardConfig& serial, const std::atomic<bool>& stop);

class SerialBoardExecutor : public BoardExecutor {
 public:
  /// `io` and `metrics` outlive the executor. `firmware_dir` receives the .hex / .bin copies of
  /// the firmware when a flash template asks for them.
  SerialBoardExecutor(boost::asio::io_context& io, BoardConfig board, std::string boardlab_run,
                      BoardMetrics* metrics, std::string firmware_dir);
  ~SerialBoardExecutor() override;

  std::unique_ptr<BoardRun> Start(const BoardRunRequest& request, LineCallback on_line,
                                  DoneCallback on_done) override;

  bool quarantined() const { return health_ == Health::kQuarantined; }

 private:
  class Run;
  enum class Health {
    kUnknown,      // not asked yet (agent start)
    kReady,        // answered with the right firmware; its last job did not end in a board error
    kSuspect,      // its last job ended in a board error: ask it again before the next job
    kQuarantined,  // the ladder ran out; jobs fail at once
  };

  void Prepare(std::shared_ptr<Run> run);
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
  Health health_ = Health::kUnknown;
  std::string quarantine_reason_;
  int test_faults_left_ = 0;     // jobs that still get the configured test fault
  std::string learnt_build_id_;  // what the board reported after our flash (no build_id given)
  uint32_t cache_capacity_ = 0;  // the board's artifact cache and model slot, from its last HELLO
  uint32_t model_slot_size_ = 0;
  // The SHA-256 (hex) of the artifact model_flash last wrote into the slot; empty when unknown
  // (none yet, or a job that ran from the slot ended in a board error: maybe a failed flash).
  std::string slot_digest_;
  // False once the executor is gone: callbacks still queued on the io_context do nothing.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  // Probes block (up to the connect timeout); one board asks one question at a time. Joined
  // first on destruction (declared last).
  boost::asio::thread_pool probes_{1};
};

}  // namespace boardlab::agent
