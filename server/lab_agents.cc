#include "server/lab.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/support/case_results.h"
#include "server/blob_access.h"
#include "server/clock.h"
#include "server/job_budgets.h"
#include "server/lab_internal.h"
#include "server/log.h"

namespace boardlab::server {

using lab_internal::OnBoard;

namespace {

std::string RunKey(const std::string& job_id, int32_t attempt) {
  return absl::StrCat(job_id, "#", attempt);
}

}  // namespace

absl::StatusOr<std::string> Lab::AgentHello(const v1::Hello& hello, AgentSessionPtr session) {
  if (hello.agent_id().empty()) return absl::InvalidArgumentError("hello: agent_id is empty");
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  for (const auto& info : hello.boards()) {
    auto it = boards_.find(info.id());
    if (it != boards_.end() && !it->second.board.agent_id().empty() &&
        it->second.board.agent_id() != hello.agent_id() && !it->second.session_id.empty()) {
      return absl::AlreadyExistsError(absl::StrCat("board '", info.id(), "' belongs to agent '",
                                                   it->second.board.agent_id(), "'"));
    }
  }
  if (cluster_ != nullptr) {
    // The boards (and the runs on them) may have been another replica's until now.
    if (absl::Status ok = TakeAgentBoards(hello); !ok.ok()) return ok;
  }
  if (auto old = session_by_agent_.find(hello.agent_id()); old != session_by_agent_.end()) {
    // A reconnecting agent replaces its old session; its jobs stay where they are.
    std::string old_id = old->second;
    sessions_[old_id].session->Close();
    DetachSession(old_id, /*lease_expired=*/false);
  }
  std::string session_id = absl::StrCat(hello.agent_id(), "#", next_session_++);
  SessionEntry& entry = sessions_[session_id];
  entry.agent_id = hello.agent_id();
  entry.session = std::move(session);
  entry.last_seen_ms = NowMs();
  session_by_agent_[hello.agent_id()] = session_id;
  for (const auto& info : hello.boards()) {
    LabBoard& board = boards_[info.id()];
    board.board.set_id(info.id());
    board.board.set_type(info.type());
    *board.board.mutable_tags() = info.tags();
    board.board.set_agent_id(hello.agent_id());
    board.session_id = session_id;
    entry.boards.push_back(info.id());
    // Before anything is scheduled: a board the agent is recovering gets no job meanwhile.
    ApplyCondition(board, hello.agent_id(), info.condition(), info.condition_reason());
    PersistBoard(board);
  }
  metrics_.AgentsConnected(static_cast<double>(sessions_.size()));
  LogInfo("agent connected", {{"agent", hello.agent_id()},
                              {"session", session_id},
                              {"boards", std::to_string(hello.boards_size())},
                              {"in_flight", std::to_string(hello.in_flight_size())}});
  ReconcileInFlight(hello);
  UpdateBoardMetrics();
  v1::ServerMessage welcome;
  welcome.mutable_welcome()->set_session_id(session_id);
  welcome.mutable_welcome()->set_heartbeat_interval_ms(config_.heartbeat_interval_ms);
  welcome.mutable_welcome()->set_inline_logs(true);
  welcome.mutable_welcome()->set_stage_lines(true);
  Send(entry.session, welcome);
  Schedule();
  return session_id;
}

// The agent's journal against ours: jobs we think run on its boards but it does not know were
// lost with an agent restart; jobs it runs that we gave to someone else must stop.
void Lab::ReconcileInFlight(const v1::Hello& hello) {
  std::map<std::string, const v1::InFlightJob*> reported;
  for (const auto& job : hello.in_flight()) reported[job.job_id()] = &job;
  for (const auto& info : hello.boards()) {
    LabBoard& board = boards_[info.id()];
    if (board.board.job_id().empty()) continue;
    JobEntry* entry = FindJob(board.board.job_id());
    if (!entry) {
      board.board.clear_job_id();
      continue;
    }
    auto it = reported.find(entry->job.id());
    if (it != reported.end() && it->second->attempt() == entry->job.attempt()) {
      entry->lease_deadline_ms = 0;  // still there (a result may follow right away)
      continue;
    }
    RetryOrFail(*entry, "the agent reconnected without the job (it restarted mid-run)");
  }
  const std::string session_id = session_by_agent_[hello.agent_id()];
  for (const auto& job : hello.in_flight()) {
    JobEntry* entry = FindJob(job.job_id());
    bool current = entry && entry->job.attempt() == job.attempt() &&
                   entry->job.board_id() == job.board_id() && OnBoard(entry->job.state());
    if (current || !job.still_running()) continue;
    v1::ServerMessage cancel;
    cancel.mutable_cancel()->set_job_id(job.job_id());
    cancel.mutable_cancel()->set_attempt(job.attempt());
    Send(sessions_[session_id].session, cancel);
    // Until it ends the agent refuses the board new work, and each refusal would cost a job a
    // retry: the board is busy with it.
    auto board = boards_.find(job.board_id());
    if (board != boards_.end() && board->second.session_id == session_id) {
      board->second.stale_run = RunKey(job.job_id(), job.attempt());
      PersistBoard(board->second);
    }
  }
}

void Lab::AgentMessage(const std::string& session_id, const v1::AgentMessage& message) {
  // Which of a result's blobs an agent uploaded is a question to the store, asked before the lock.
  const std::set<std::string> uploaded =
      message.has_result() ? AgentUploadedBlobs(message.result()) : std::set<std::string>();
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  auto session = sessions_.find(session_id);
  if (session == sessions_.end()) return;  // replaced or expired
  session->second.last_seen_ms = NowMs();
  switch (message.kind_case()) {
    case v1::AgentMessage::kStage:
      OnStage(session_id, message.stage());
      break;
    case v1::AgentMessage::kLogs:
      OnLogs(session_id, message.logs());
      break;
    case v1::AgentMessage::kResult:
      OnResult(session_id, message.result(), uploaded);
      break;
    case v1::AgentMessage::kBoardStatus:
      OnBoardStatus(session_id, message.board_status());
      break;
    default:
      break;  // heartbeats only refresh last_seen_ms
  }
}

bool Lab::HoldsBoard(const std::string& session_id, const std::string& board_id) const {
  auto board = boards_.find(board_id);
  return board != boards_.end() && board->second.session_id == session_id;
}

Lab::JobEntry* Lab::RunOf(const std::string& session_id, const std::string& job_id,
                          int32_t attempt) {
  JobEntry* entry = FindJob(job_id);
  if (!entry || entry->job.attempt() != attempt || !OnBoard(entry->job.state())) return nullptr;
  return HoldsBoard(session_id, entry->job.board_id()) ? entry : nullptr;
}

void Lab::OnStage(const std::string& session_id, const v1::StageEvent& stage) {
  JobEntry* entry = RunOf(session_id, stage.job_id(), stage.attempt());
  if (!entry) return;
  AddBoardLines(*entry, stage.lines());  // printed before the stage changed
  if (!OnBoard(stage.stage()) || stage.stage() <= entry->job.state()) return;
  SetState(*entry, stage.stage());
}

void Lab::OnLogs(const std::string& session_id, const v1::LogLines& logs) {
  JobEntry* entry = RunOf(session_id, logs.job_id(), logs.attempt());
  if (entry) AddBoardLines(*entry, logs.lines());
}

// A board's lines go to watchers and into the store as events while the job runs; the whole log
// is the job's log file. So that a chatty (or hostile) board cannot fill the server's memory and
// database, an attempt streams at most kMaxStreamedLogBytes, each line at most kMaxLineBytes.
void Lab::AddBoardLines(JobEntry& entry,
                        const google::protobuf::RepeatedPtrField<std::string>& lines) {
  if (lines.empty()) return;
  if (entry.streamed_attempt != entry.job.attempt()) {
    entry.streamed_attempt = entry.job.attempt();
    entry.streamed_log_bytes = 0;
  }
  if (entry.streamed_log_bytes >= kMaxStreamedLogBytes) return;  // told once already
  std::string batch;  // one event per batch: the store writes one row, however chatty the board
  bool full = false;
  for (const std::string& line : lines) {
    std::string kept = line.size() <= kMaxLineBytes
                           ? line
                           : absl::StrCat(line.substr(0, kMaxLineBytes), " [line cut]");
    if (entry.streamed_log_bytes + batch.size() + kept.size() + 1 > kMaxStreamedLogBytes) {
      full = true;
      break;
    }
    absl::StrAppend(&batch, batch.empty() ? "" : "\n", kept);
  }
  entry.streamed_log_bytes += static_cast<int64_t>(batch.size()) + 1;
  if (full) {
    entry.streamed_log_bytes = kMaxStreamedLogBytes;
    absl::StrAppend(&batch, batch.empty() ? "" : "\n",
                    "boardlab: this attempt streamed its limit of log lines; the rest are in the "
                    "job's log file");
  }
  AddLog(entry, batch);
}

void Lab::ApplyCondition(LabBoard& board, const std::string& agent_id, v1::BoardCondition condition,
                         const std::string& reason) {
  board.recovering = condition == v1::BOARD_CONDITION_RECOVERING;
  board.recovery_reason = board.recovering ? reason : "";
  if (condition == v1::BOARD_CONDITION_QUARANTINED) {
    if (health_.QuarantineByAgent(board, agent_id, reason, NowMs())) {
      CountQuarantineWhenCommitted(board);
    }
  }
}

void Lab::OnBoardStatus(const std::string& session_id, const v1::BoardStatus& status) {
  auto it = boards_.find(status.board_id());
  if (it == boards_.end() || it->second.session_id != session_id) return;  // not this agent's
  LabBoard& board = it->second;
  const std::string agent_id = sessions_[session_id].agent_id;
  ApplyCondition(board, agent_id, status.condition(), status.reason());
  LogInfo("board condition", {{"board", status.board_id()},
                              {"agent", agent_id},
                              {"condition", v1::BoardCondition_Name(status.condition())},
                              {"reason", status.reason()}});
  PersistBoard(board);
  UpdateBoardMetrics();
  Schedule();
}

std::set<std::string> Lab::AgentUploadedBlobs(const v1::RunResult& result) {
  std::vector<const v1::Digest*> named = {&result.etdump(), &result.profile(), &result.log()};
  for (const v1::Digest& output : result.outputs()) named.push_back(&output);
  for (const v1::CaseResult& c : result.cases()) {
    for (const v1::Digest& output : c.outputs()) named.push_back(&output);
  }
  std::set<std::string> uploaded;
  for (const v1::Digest* digest : named) {
    if (digest->sha256().empty() || uploaded.count(digest->sha256())) continue;
    if (config_.tokens.empty()) {  // an open server: every caller is an admin and sees all
      uploaded.insert(digest->sha256());
      continue;
    }
    absl::StatusOr<bool> held = AgentUploaded(store_, digest->sha256());
    if (!held.ok()) {
      LogError("reading a blob grant", {{"error", std::string(held.status().message())}});
    } else if (*held) {
      uploaded.insert(digest->sha256());
    }
  }
  return uploaded;
}

void Lab::GrantResultBlob(JobEntry& entry, const v1::Digest& digest,
                          const std::set<std::string>& uploaded) {
  if (digest.sha256().empty()) return;
  if (uploaded.count(digest.sha256())) {
    GrantToTenant(entry, digest);
    return;
  }
  LogWarning("a result names a blob no agent uploaded; not granted",
             {{"job", entry.job.id()}, {"sha256", digest.sha256()}});
  AddLog(entry, absl::StrCat("boardlab: result blob ", digest.sha256(),
                             " was not uploaded by an agent; it is not yours to download"));
}

// The result's files become the job's; its tenant may download those an agent uploaded.
void Lab::TakeResultFiles(JobEntry& entry, const v1::RunResult& result,
                          const std::set<std::string>& uploaded) {
  v1::Job& job = entry.job;
  v1::JobFiles* files = job.mutable_files();
  *files->mutable_outputs() = result.outputs();
  *files->mutable_etdump() = result.etdump();
  *files->mutable_profile() = result.profile();
  *files->mutable_log() = result.log();
  bool log_stored_here = false;
  if (!result.log_text().empty()) {
    absl::StatusOr<v1::Digest> log = blobs_.Put(result.log_text());
    if (log.ok()) {
      *files->mutable_log() = *log;
      log_stored_here = true;
    } else {
      LogError(absl::StrCat("storing the log of job ", job.id(), ": ", log.status().message()));
    }
  }
  for (const v1::Digest& output : files->outputs()) GrantResultBlob(entry, output, uploaded);
  for (const v1::Digest* made : {&files->etdump(), &files->profile()}) {
    GrantResultBlob(entry, *made, uploaded);
  }
  if (log_stored_here) {
    GrantToTenant(entry, files->log());  // the server stored it itself
  } else {
    GrantResultBlob(entry, files->log(), uploaded);
  }
}

void Lab::OnResult(const std::string& session_id, const v1::RunResult& result,
                   const std::set<std::string>& uploaded) {
  v1::ServerMessage ack;
  ack.mutable_ack()->set_job_id(result.job_id());
  ack.mutable_ack()->set_attempt(result.attempt());
  Send(sessions_[session_id].session, ack);

  // Only the session holding the board reports about it: another agent could otherwise pass or
  // fail any job, or end a quarantined board's health check.
  if (!HoldsBoard(session_id, result.board_id())) return;
  auto board_it = boards_.find(result.board_id());
  if (!board_it->second.stale_run.empty() &&
      board_it->second.stale_run == RunKey(result.job_id(), result.attempt())) {
    board_it->second.stale_run.clear();  // the board is free again; the result is nobody's
    PersistBoard(board_it->second);
    UpdateBoardMetrics();
    Schedule();
    return;
  }
  if (BoardHealth::IsCheckResult(board_it->second, result)) {
    health_.OnCheckResult(board_it->second, result, NowMs());
    PersistBoard(board_it->second);
    UpdateBoardMetrics();
    Schedule();
    return;
  }
  JobEntry* entry = FindJob(result.job_id());
  if (!entry || entry->job.attempt() != result.attempt() || !OnBoard(entry->job.state()) ||
      entry->job.board_id() != result.board_id()) {
    return;  // a stale attempt: the job was retried elsewhere or finished; recorded once
  }
  if (health_.CountRun(board_it->second, result.outcome() == v1::RUN_OUTCOME_BOARD_ERROR,
                       result.message(), NowMs())) {
    CountQuarantineWhenCommitted(board_it->second);
  }
  CountWhenCommitted(result.job_id(), [this, result] {
    metrics_.StageDuration("load", result.load_seconds());
    metrics_.StageDuration("run", result.run_seconds());
    metrics_.StageDuration("collect", result.collect_seconds());
  });
  TakeResultFiles(*entry, result, uploaded);
  v1::Job& job = entry->job;
  *job.mutable_checks() = result.checks();
  if (result.cases_size() > 0) {
    *job.mutable_cases() = result.cases();
    for (const v1::CaseResult& c : job.cases()) {
      for (const v1::Digest& output : c.outputs()) GrantResultBlob(*entry, output, uploaded);
    }
    *job.mutable_case_summary() = api::SummarizeCases(job.cases());
  }
  job.set_inference_us(result.inference_us());
  job.set_inference_cycles(result.inference_cycles());
  job.set_inference_clock(result.inference_clock());
  switch (result.outcome()) {
    case v1::RUN_OUTCOME_PASS:
    case v1::RUN_OUTCOME_FAIL:
    case v1::RUN_OUTCOME_NO_OUTPUT:
      FinishRun(*entry, result);
      break;
    case v1::RUN_OUTCOME_MODEL_ERROR:
      Finish(*entry, v1::JOB_RESULT_RUN_ERROR, result.message());
      break;
    case v1::RUN_OUTCOME_CANCELLED:
      Finish(*entry, v1::JOB_RESULT_CANCELLED,
             entry->cancel_requested ? "cancelled" : result.message());
      break;
    default:
      RetryOrFail(*entry, result.message().empty() ? "board error" : result.message());
      break;
  }
  Schedule();
}

// A job that ran: its outputs' verdict and its budgets (server/job_budgets.h), judged here so
// that the stored job, the watchers and job.json agree.
void Lab::FinishRun(JobEntry& entry, const v1::RunResult& result) {
  v1::Job& job = entry.job;
  std::optional<std::string> report;
  std::string report_error;
  // The report blob is read only when a budget is set (this runs under the Lab's mutex).
  if (!BudgetLimitsOf(job.spec().budgets()).empty()) {
    absl::StatusOr<std::string> read = blobs_.Read(job.files().report());
    if (read.ok()) {
      report = *std::move(read);
    } else {
      report_error = absl::StrCat("compile report unreadable: ", read.status().message());
    }
  }
  // No output yet is not a failure of the outputs: only a budget makes such a run a FAIL (not
  // the latency, which such a run does not measure).
  const bool no_output = result.outcome() == v1::RUN_OUTCOME_NO_OUTPUT;
  const std::string failed_budgets =
      JudgeBudgets(job, report, report_error, result.inference_clock(), no_output);
  const bool outputs_pass = result.outcome() == v1::RUN_OUTCOME_PASS || no_output;
  if (failed_budgets.empty()) {
    Finish(entry,
           no_output      ? v1::JOB_RESULT_NO_OUTPUT
           : outputs_pass ? v1::JOB_RESULT_PASS
                          : v1::JOB_RESULT_FAIL,
           result.message());
    return;
  }
  AddLog(entry, failed_budgets);
  Finish(entry, v1::JOB_RESULT_FAIL,
         outputs_pass || result.message().empty()
             ? failed_budgets
             : absl::StrCat(result.message(), "; ", failed_budgets));
}

void Lab::DetachSession(const std::string& session_id, bool lease_expired) {
  auto session = sessions_.find(session_id);
  if (session == sessions_.end()) return;
  int64_t now = NowMs();
  for (const std::string& board_id : session->second.boards) {
    auto found = boards_.find(board_id);  // replicas: another may have taken it
    if (found == boards_.end()) continue;
    LabBoard& board = found->second;
    if (board.session_id != session_id) continue;
    board.session_id.clear();
    board.health_check_running = false;
    board.stale_run.clear();  // its agent's next Hello says whether it still runs
    if (JobEntry* entry = FindJob(board.board.job_id())) {
      if (lease_expired) {
        CountWhenCommitted(entry->job.id(), [this] { metrics_.LeaseExpired(); });
        RetryOrFail(*entry, "the board's agent went silent (lease expired)");
      } else if (entry->lease_deadline_ms == 0) {
        entry->lease_deadline_ms = now + LeaseMs();  // room to reconnect and report
      }
    }
    PersistBoard(board);
  }
  LogInfo(lease_expired ? "agent lease expired" : "agent disconnected",
          {{"agent", session->second.agent_id}, {"session", session_id}});
  if (session_by_agent_[session->second.agent_id] == session_id) {
    session_by_agent_.erase(session->second.agent_id);
  }
  sessions_.erase(session);
  metrics_.AgentsConnected(static_cast<double>(sessions_.size()));
  UpdateBoardMetrics();
}

void Lab::AgentGone(const std::string& session_id) {
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  DetachSession(session_id, /*lease_expired=*/false);
  Schedule();
}

void Lab::ExpireSilentAgents(int64_t now) {
  std::vector<std::string> silent;
  for (const auto& [id, session] : sessions_) {
    if (now - session.last_seen_ms > LeaseMs()) silent.push_back(id);
  }
  for (const auto& id : silent) {
    sessions_[id].session->Close();
    DetachSession(id, /*lease_expired=*/true);
  }
}

}  // namespace boardlab::server
