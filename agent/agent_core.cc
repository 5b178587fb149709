#include "agent/agent_core.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace boardlab::agent {

std::string ToString(const JobKey& key) { return absl::StrCat(key.job_id, "#", key.attempt); }

AgentCore::AgentCore(Options options) : options_(std::move(options)) {
  for (const BoardConfig& board : options_.boards) boards_[board.id].config = board;
}

absl::StatusOr<std::unique_ptr<AgentCore>> AgentCore::Create(Options options) {
  std::unique_ptr<AgentCore> core(new AgentCore(std::move(options)));
  if (core->options_.journal_path.empty()) return core;
  absl::StatusOr<std::vector<JournalEntry>> entries = LoadJournal(core->options_.journal_path);
  if (!entries.ok()) return entries.status();
  bool changed = false;
  for (JournalEntry& e : *entries) {
    if (e.running) {
      // The child ran in our process group's care and died with us (PR_SET_PDEATHSIG): the
      // attempt is lost; the server retries it elsewhere.
      e.running = false;
      v1::RunResult result;
      result.set_job_id(e.job_id);
      result.set_attempt(e.attempt);
      result.set_board_id(e.board_id);
      result.set_outcome(v1::RUN_OUTCOME_BOARD_ERROR);
      result.set_message("agent restarted during the run");
      e.result = std::move(result);
      changed = true;
    }
    core->jobs_[JobKey{e.job_id, e.attempt}] = std::move(e);
  }
  if (changed) {
    if (absl::Status s = core->SaveJournal(); !s.ok()) return s;
  }
  return core;
}

size_t AgentCore::running_jobs() const {
  return std::count_if(jobs_.begin(), jobs_.end(), [](const auto& j) { return j.second.running; });
}

size_t AgentCore::unacked_results() const {
  return std::count_if(jobs_.begin(), jobs_.end(),
                       [](const auto& j) { return j.second.result.has_value(); });
}

std::vector<JournalEntry> AgentCore::entries() const {
  std::vector<JournalEntry> out;
  for (const auto& [key, entry] : jobs_) out.push_back(entry);
  return out;
}

const JournalEntry* AgentCore::entry(const JobKey& key) const {
  auto it = jobs_.find(key);
  return it == jobs_.end() ? nullptr : &it->second;
}

std::vector<AgentEffect> AgentCore::TakeEffects() {
  std::vector<AgentEffect> out;
  out.swap(effects_);
  return out;
}

absl::Status AgentCore::SaveJournal() {
  if (options_.journal_path.empty()) return absl::OkStatus();
  if (options_.write_journal) {
    options_.write_journal(entries());
    return absl::OkStatus();
  }
  return agent::SaveJournal(options_.journal_path, entries());
}

void AgentCore::SendIfWelcomed(v1::AgentMessage message) {
  if (session_ == Session::kWelcomed) effects_.push_back(Send{std::move(message)});
}

void AgentCore::SendResult(const v1::RunResult& result) {
  v1::AgentMessage message;
  *message.mutable_result() = result;
  SendIfWelcomed(std::move(message));
}

absl::Status AgentCore::Step(const AgentEvent& event) {
  if (std::holds_alternative<StreamUp>(event)) {
    session_ = Session::kHelloSent;
    v1::AgentMessage message;
    v1::Hello& hello = *message.mutable_hello();
    hello.set_agent_id(options_.agent_id);
    hello.set_hostname(options_.hostname);
    hello.set_version(options_.version);
    for (auto& [id, board] : boards_) {
      v1::BoardInfo& info = *hello.add_boards();
      info.set_id(id);
      info.set_type(board.config.type);
      for (const auto& [key, value] : board.config.tags) {
        v1::Tag& tag = *info.add_tags();
        tag.set_key(key);
        tag.set_value(value);
      }
      info.set_condition(board.condition);
      info.set_condition_reason(board.condition_reason);
      board.condition_unsent = false;
    }
    for (const auto& [key, entry] : jobs_) {
      v1::InFlightJob& job = *hello.add_in_flight();
      job.set_job_id(key.job_id);
      job.set_attempt(key.attempt);
      job.set_board_id(entry.board_id);
      job.set_still_running(entry.running);
    }
    effects_.push_back(Send{std::move(message)});
    return absl::OkStatus();
  }
  if (std::holds_alternative<StreamDown>(event)) {
    session_ = Session::kDown;
    return absl::OkStatus();
  }
  if (const auto* m = std::get_if<FromServer>(&event)) return OnServerMessage(m->message);
  if (const auto* h = std::get_if<HeartbeatDue>(&event)) {
    v1::AgentMessage message;
    message.mutable_heartbeat()->set_time_ms(h->now_ms);
    SendIfWelcomed(std::move(message));
    return absl::OkStatus();
  }
  if (const auto* s = std::get_if<JobStage>(&event)) {
    if (!jobs_.contains(s->key) || !jobs_[s->key].running) return absl::OkStatus();
    v1::AgentMessage message;
    message.mutable_stage()->set_job_id(s->key.job_id);
    message.mutable_stage()->set_attempt(s->key.attempt);
    message.mutable_stage()->set_stage(s->stage);
    for (const std::string& line : s->lines) message.mutable_stage()->add_lines(line);
    SendIfWelcomed(std::move(message));
    return absl::OkStatus();
  }
  if (const auto* l = std::get_if<JobLogs>(&event)) {
    if (l->lines.empty()) return absl::OkStatus();
    v1::AgentMessage message;
    message.mutable_logs()->set_job_id(l->key.job_id);
    message.mutable_logs()->set_attempt(l->key.attempt);
    for (const std::string& line : l->lines) message.mutable_logs()->add_lines(line);
    SendIfWelcomed(std::move(message));
    return absl::OkStatus();
  }
  if (const auto* d = std::get_if<JobDone>(&event)) return OnJobDone(*d);
  if (const auto* c = std::get_if<BoardConditionChanged>(&event)) {
    OnBoardCondition(*c);
    return absl::OkStatus();
  }
  if (std::holds_alternative<ShutdownRequested>(event)) {
    shutting_down_ = true;
    for (const auto& [key, entry] : jobs_) {
      if (!entry.running) continue;
      if (!cancelled_by_server_.contains(key)) stopped_by_shutdown_.insert(key);
      effects_.push_back(CancelJob{key});
    }
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

void AgentCore::OnBoardCondition(const BoardConditionChanged& change) {
  auto it = boards_.find(change.board_id);
  if (it == boards_.end()) return;
  Board& board = it->second;
  if (board.condition == change.condition && board.condition_reason == change.reason) return;
  board.condition = change.condition;
  board.condition_reason = change.reason;
  board.condition_unsent = true;
  SendCondition(change.board_id, board);
}

void AgentCore::SendCondition(const std::string& board_id, Board& board) {
  // Before Welcome it waits: for the Welcome when a Hello is out, else for the next Hello.
  if (session_ != Session::kWelcomed || !board.condition_unsent) return;
  board.condition_unsent = false;
  v1::AgentMessage message;
  v1::BoardStatus& status = *message.mutable_board_status();
  status.set_board_id(board_id);
  status.set_condition(board.condition);
  status.set_reason(board.condition_reason);
  effects_.push_back(Send{std::move(message)});
}

absl::Status AgentCore::OnServerMessage(const v1::ServerMessage& message) {
  switch (message.kind_case()) {
    case v1::ServerMessage::kWelcome: {
      session_ = Session::kWelcomed;
      inline_logs_ = message.welcome().inline_logs();
      stage_lines_ = message.welcome().stage_lines();
      const int interval = message.welcome().heartbeat_interval_ms();
      heartbeat_interval_ms_ =
          interval <= 0 ? kDefaultHeartbeatIntervalMs : std::max(interval, kMinHeartbeatIntervalMs);
      // Conditions first: a board the agent is recovering must not get the next job.
      for (auto& [id, board] : boards_) SendCondition(id, board);
      for (const auto& [key, entry] : jobs_) {
        if (entry.result.has_value()) SendResult(*entry.result);
      }
      return absl::OkStatus();
    }
    case v1::ServerMessage::kAssign:
      return OnAssignment(message.assign());
    case v1::ServerMessage::kCancel: {
      const JobKey key{message.cancel().job_id(), message.cancel().attempt()};
      auto it = jobs_.find(key);
      if (it != jobs_.end() && it->second.running) {
        cancelled_by_server_.insert(key);
        stopped_by_shutdown_.erase(key);
        effects_.push_back(CancelJob{key});
      }
      return absl::OkStatus();
    }
    case v1::ServerMessage::kAck: {
      const JobKey key{message.ack().job_id(), message.ack().attempt()};
      auto it = jobs_.find(key);
      if (it == jobs_.end() || it->second.running) return absl::OkStatus();
      jobs_.erase(it);
      return SaveJournal();
    }
    case v1::ServerMessage::KIND_NOT_SET:
      break;
  }
  return absl::OkStatus();
}

absl::Status AgentCore::OnAssignment(const v1::Assignment& assignment) {
  const JobKey key{assignment.job_id(), assignment.attempt()};
  if (auto it = jobs_.find(key); it != jobs_.end()) {
    // The server re-sent an assignment we know (e.g. after a reconnect): the run goes on, or its
    // result is sent again.
    if (it->second.result.has_value()) SendResult(*it->second.result);
    return absl::OkStatus();
  }
  if (assignment.job_id().empty())
    return RejectAssignment(assignment, "the assignment has no job id");
  if (shutting_down_) return RejectAssignment(assignment, "the agent is shutting down");
  auto board = boards_.find(assignment.board_id());
  if (board == boards_.end()) {
    return RejectAssignment(assignment,
                            absl::StrCat("board '", assignment.board_id(), "' is not on agent '",
                                         options_.agent_id, "'"));
  }
  if (board->second.job.has_value()) {
    return RejectAssignment(assignment,
                            absl::StrCat("board '", assignment.board_id(), "' is busy with job ",
                                         ToString(*board->second.job)));
  }
  board->second.job = key;
  JournalEntry entry;
  entry.job_id = key.job_id;
  entry.attempt = key.attempt;
  entry.board_id = assignment.board_id();
  entry.running = true;
  jobs_[key] = std::move(entry);
  v1::AgentMessage stage;
  stage.mutable_stage()->set_job_id(key.job_id);
  stage.mutable_stage()->set_attempt(key.attempt);
  stage.mutable_stage()->set_stage(v1::JOB_STATE_LOADING);
  SendIfWelcomed(std::move(stage));
  effects_.push_back(StartJob{assignment, board->second.config});
  return SaveJournal();
}

absl::Status AgentCore::RejectAssignment(const v1::Assignment& assignment, const std::string& why) {
  v1::RunResult result;
  result.set_job_id(assignment.job_id());
  result.set_attempt(assignment.attempt());
  result.set_board_id(assignment.board_id());
  result.set_outcome(v1::RUN_OUTCOME_BOARD_ERROR);
  result.set_message(why);
  JournalEntry entry;
  entry.job_id = assignment.job_id();
  entry.attempt = assignment.attempt();
  entry.board_id = assignment.board_id();
  entry.running = false;
  entry.result = result;
  jobs_[JobKey{assignment.job_id(), assignment.attempt()}] = std::move(entry);
  SendResult(result);
  return SaveJournal();
}

absl::Status AgentCore::OnJobDone(const JobDone& done) {
  auto it = jobs_.find(done.key);
  if (it == jobs_.end() || !it->second.running) {
    return absl::InternalError(absl::StrCat("a result for job ", ToString(done.key),
                                            ", which is not running on this agent"));
  }
  JournalEntry& entry = it->second;
  v1::RunResult result = done.result;
  if (stopped_by_shutdown_.erase(done.key) > 0 && result.outcome() == v1::RUN_OUTCOME_CANCELLED) {
    // Not the user's cancel: the attempt is lost to an infrastructure event and is retried.
    result.set_outcome(v1::RUN_OUTCOME_BOARD_ERROR);
    result.set_message("the agent shut down during the run");
  }
  cancelled_by_server_.erase(done.key);
  result.set_job_id(done.key.job_id);
  result.set_attempt(done.key.attempt);
  result.set_board_id(entry.board_id);
  entry.running = false;
  entry.result = result;
  if (auto board = boards_.find(entry.board_id);
      board != boards_.end() && board->second.job == done.key) {
    board->second.job.reset();
  }
  SendResult(result);
  return SaveJournal();
}

}  // namespace boardlab::agent
