#pragma once

// The agent's brain as a step function (STYLE.md rule 23): events in (the stream came up or
// broke, a server message, a job's progress, a heartbeat tick), effects out (messages to send,
// runs to start or cancel). It owns the board table and the journal and never blocks, never
// touches the network and never starts a process, so that tests drive it with plain calls;
// Agent (agent.h) schedules it on a Boost.Asio io_context and carries out its effects.
//
//   ASSIGN_OR_RETURN(auto core, AgentCore::Create(options));   // reads the journal
//   core->Step(StreamUp{});          // effects: Send(Hello)
//   core->Step(FromServer{welcome}); // effects: Send(pending results)
//   core->Step(FromServer{assign});  // effects: Send(Stage LOADING), StartJob
//   for (AgentEffect& e : core->TakeEffects()) { ... }
//
// Protocol rules it enforces: Hello first on every stream and nothing else before Welcome;
// stage events and logs are dropped while disconnected, results never are (journal until the
// server's ResultAck, re-sent after every Welcome); one job per board; an assignment for an
// unknown or busy board is answered at once with BOARD_ERROR; a board's condition (a driver
// recovering or quarantining it) goes in Hello and, when it changes, in a BoardStatus.

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/config.h"
#include "agent/journal.h"
#include "boardlab/v1/agent_service.pb.h"

namespace boardlab::agent {

struct JobKey {
  std::string job_id;
  int attempt = 0;
  auto operator<=>(const JobKey&) const = default;
};

std::string ToString(const JobKey& key);  // "job-1#2"

// Events.
struct StreamUp {};    // a new stream to the server is open
struct StreamDown {};  // the stream broke or was closed
struct FromServer {
  v1::ServerMessage message;
};
struct HeartbeatDue {
  int64_t now_ms = 0;  // unix epoch
};
struct JobStage {
  JobKey key;
  v1::JobState stage;
  std::vector<std::string> lines;  // log lines before the stage, when the server takes them so
};
struct JobLogs {
  JobKey key;
  std::vector<std::string> lines;
};
struct JobDone {
  JobKey key;
  v1::RunResult result;  // outcome, message, digests, figures; ids are filled in by the core
};
struct ShutdownRequested {};
/// A board driver changed its word on a board (recovering after a failure, quarantined, ready).
struct BoardConditionChanged {
  std::string board_id;
  v1::BoardCondition condition = v1::BOARD_CONDITION_READY;
  std::string reason;
};
using AgentEvent = std::variant<StreamUp, StreamDown, FromServer, HeartbeatDue, JobStage, JobLogs,
                                JobDone, ShutdownRequested, BoardConditionChanged>;

// Effects.
struct Send {
  v1::AgentMessage message;
};
struct StartJob {
  v1::Assignment assignment;
  BoardConfig board;
};
struct CancelJob {
  JobKey key;
};
using AgentEffect = std::variant<Send, StartJob, CancelJob>;

inline constexpr int kDefaultHeartbeatIntervalMs = 5000;
inline constexpr int kMinHeartbeatIntervalMs = 50;

class AgentCore {
 public:
  struct Options {
    std::string agent_id;
    std::string hostname;
    std::string version;
    std::vector<BoardConfig> boards;
    std::string journal_path;  // empty: no journal (tests)
    /// Where snapshots of the journal go; empty: SaveJournal(journal_path) at once. The agent
    /// hands them to a JournalWriter (its thread does the fsync).
    std::function<void(std::vector<JournalEntry> entries)> write_journal;
  };

  /// Reads the journal. Jobs it lists as running died with the previous agent process: they
  /// become BOARD_ERROR results "agent restarted during the run", to be reported after Welcome.
  /// Errors: the journal's (DataLoss, Internal).
  static absl::StatusOr<std::unique_ptr<AgentCore>> Create(Options options);

  /// Applies one event; its effects are queued for TakeEffects(). An error (the journal could
  /// not be written) leaves the in-memory state applied: the agent goes on, the caller logs it.
  absl::Status Step(const AgentEvent& event);

  /// The effects queued since the last call, in order.
  std::vector<AgentEffect> TakeEffects();

  bool welcomed() const { return session_ == Session::kWelcomed; }
  int heartbeat_interval_ms() const { return heartbeat_interval_ms_; }
  /// The server takes a run's log inline (Welcome.inline_logs).
  bool inline_logs() const { return inline_logs_; }
  /// The server takes log lines with a stage (Welcome.stage_lines).
  bool stage_lines() const { return stage_lines_; }
  bool shutting_down() const { return shutting_down_; }
  /// Runs not finished yet.
  size_t running_jobs() const;
  /// Results the server has not acknowledged.
  size_t unacked_results() const;
  /// The journal entries, in job order (tests, logs).
  std::vector<JournalEntry> entries() const;
  /// The entry of one job attempt, nullptr when there is none; valid until the next Step().
  const JournalEntry* entry(const JobKey& key) const;

 private:
  enum class Session { kDown, kHelloSent, kWelcomed };
  struct Board {
    BoardConfig config;
    std::optional<JobKey> job;
    v1::BoardCondition condition = v1::BOARD_CONDITION_READY;
    std::string condition_reason;
    bool condition_unsent = false;  // changed since the last Hello, and not sent as BoardStatus
  };

  explicit AgentCore(Options options);
  absl::Status OnServerMessage(const v1::ServerMessage& message);
  absl::Status OnAssignment(const v1::Assignment& assignment);
  absl::Status OnJobDone(const JobDone& done);
  void OnBoardCondition(const BoardConditionChanged& change);
  void SendCondition(const std::string& board_id, Board& board);
  absl::Status RejectAssignment(const v1::Assignment& assignment, const std::string& why);
  void SendResult(const v1::RunResult& result);
  void SendIfWelcomed(v1::AgentMessage message);
  absl::Status SaveJournal();

  Options options_;
  std::map<std::string, Board> boards_;
  std::map<JobKey, JournalEntry> jobs_;
  Session session_ = Session::kDown;
  int heartbeat_interval_ms_ = kDefaultHeartbeatIntervalMs;
  bool inline_logs_ = false;
  bool stage_lines_ = false;
  bool shutting_down_ = false;
  std::set<JobKey> cancelled_by_server_;  // CancelRun received
  std::set<JobKey> stopped_by_shutdown_;  // cancelled because the agent stops
  std::vector<AgentEffect> effects_;
};

}  // namespace boardlab::agent
