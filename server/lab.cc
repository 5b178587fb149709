#include "server/lab.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "server/board_leases.h"
#include "server/clock.h"
#include "server/lab_internal.h"
#include "server/log.h"

namespace boardlab::server {

namespace lab_internal {

std::string StateName(v1::JobState state) {
  std::string name = v1::JobState_Name(state);
  return absl::AsciiStrToLower(name.substr(std::string("JOB_STATE_").size()));
}

std::string ResultName(v1::JobResult result) {
  std::string name = v1::JobResult_Name(result);
  return absl::AsciiStrToLower(name.substr(std::string("JOB_RESULT_").size()));
}

bool OnBoard(v1::JobState state) {
  return state == v1::JOB_STATE_ASSIGNED || state == v1::JOB_STATE_LOADING ||
         state == v1::JOB_STATE_RUNNING || state == v1::JOB_STATE_COLLECTING;
}

bool HasTags(const v1::Board& board, const google::protobuf::RepeatedPtrField<v1::Tag>& wanted) {
  for (const auto& tag : wanted) {
    bool found = std::any_of(board.tags().begin(), board.tags().end(), [&](const v1::Tag& t) {
      return t.key() == tag.key() && t.value() == tag.value();
    });
    if (!found) return false;
  }
  return true;
}

}  // namespace lab_internal

using lab_internal::OnBoard;

namespace {

// After a server restart, agents need a moment to notice and reconnect: an agent's own backoff
// grows to 5 s and the gRPC channel's to 2 s, so a job waits this long (plus one lease) for its
// agent before it is retried elsewhere.
constexpr int64_t kRestartGraceMs = 15000;

}  // namespace

Lab::Lab(const ServerConfig& config, Store& store, BlobStore& blobs, CompileService& compiles,
         Metrics& metrics, ReferenceRunner* reference)
    : config_(config),
      store_(store),
      blobs_(blobs),
      compiles_(compiles),
      metrics_(metrics),
      reference_(reference),
      health_(config.quarantine_after, config.default_run_timeout_seconds),
      cluster_(store.Cluster()) {}

std::string Lab::JobId(int64_t number) const { return absl::StrFormat("j%08d", number); }

int64_t Lab::LeaseMs() const {
  return int64_t{config_.heartbeat_interval_ms} * config_.missed_heartbeats;
}

int64_t Lab::QueueTimeoutMs(const JobEntry& entry) const {
  const int seconds = entry.job.spec().queue_timeout_seconds() > 0
                          ? entry.job.spec().queue_timeout_seconds()
                          : config_.default_queue_timeout_seconds;
  return int64_t{seconds} * 1000;
}

absl::Status Lab::Recover() {
  if (cluster_ != nullptr) return RecoverAsReplica();
  auto boards = store_.LoadBoards();
  if (!boards.ok()) return boards.status();
  auto max_number = store_.MaxJobNumber();
  if (!max_number.ok()) return max_number.status();
  auto unfinished = store_.LoadUnfinishedJobs();
  if (!unfinished.ok()) return unfinished.status();

  std::vector<std::string> to_compile;
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  next_job_number_ = *max_number + 1;
  for (const v1::Board& stored : *boards) RestoreBoard(stored);
  for (v1::Job& job : *unfinished) {
    auto entry = RestoreJob(std::move(job));
    if (!entry.ok()) return entry.status();
    if (!(*entry)->compiled.error.empty() || !(*entry)->compiled.artifact.size_bytes()) {
      to_compile.push_back((*entry)->job.id());
    }
  }
  UpdateBoardMetrics();
  for (const std::string& id : to_compile) {
    JobEntry* entry = FindJob(id);
    if (entry->job.state() != v1::JOB_STATE_COMPILING) SetState(*entry, v1::JOB_STATE_COMPILING);
    // Request() answers from the cache synchronously; OnCompiled takes the lock itself, so
    // compiles are requested from a thread of their own once the lock is released.
    recovered_compiles_.push_back(id);
  }
  return absl::OkStatus();
}

void Lab::RequestRecoveredCompiles() {
  std::vector<std::string> ids;
  {
    std::lock_guard lock(mutex_);
    ids.swap(recovered_compiles_);
  }
  for (const std::string& id : ids) {
    v1::JobSpec spec;
    {
      std::lock_guard lock(mutex_);
      JobEntry* entry = FindJob(id);
      if (!entry) continue;
      spec = entry->job.spec();
    }
    RequestCompile(id, spec);
  }
}

void Lab::RestoreBoard(const v1::Board& stored) {
  LabBoard& board = boards_[stored.id()];
  board.board = stored;
  board.maintenance = stored.state() == v1::BOARD_STATE_MAINTENANCE;
  board.quarantined = stored.state() == v1::BOARD_STATE_QUARANTINED;
  board.board.clear_job_id();
  board.board.clear_reserved_by();
  board.board.set_lease_expires_ms(0);
}

// Puts a job read from the store back where it was: queued jobs in their queue, jobs on a board
// on that board, waiting one lease period (after the restart) for their agent to claim them.
absl::StatusOr<Lab::JobEntry*> Lab::RestoreJob(v1::Job job) {
  auto owned = std::make_unique<JobEntry>();
  JobEntry& e = *owned;
  e.number = std::stoll(job.id().substr(1));
  e.job = std::move(job);
  e.state_since_ms = NowMs();
  auto events = store_.Events(e.job.id(), 0);
  if (!events.ok()) return events.status();
  e.events = *std::move(events);
  unfinished_by_tenant_[e.job.tenant()]++;
  jobs_[e.job.id()] = std::move(owned);
  job_by_number_[e.number] = e.job.id();
  if (!e.job.request_id().empty()) request_ids_[{e.job.tenant(), e.job.request_id()}] = e.job.id();
  metrics_.JobStateChanged("", lab_internal::StateName(e.job.state()));
  if (e.job.state() == v1::JOB_STATE_COMPILING) return &e;  // compiled again by the caller
  auto cached =
      store_.GetCompile(CompileService::CacheKey(e.job.spec().model(), e.job.spec().compile()));
  if (cached.ok() && cached->has_value() && (*cached)->error.empty() &&
      blobs_.Has((*cached)->artifact)) {
    e.compiled = **cached;
  }
  if (!e.compiled.artifact.size_bytes()) return &e;  // recompiled by the caller
  if (e.job.state() == v1::JOB_STATE_QUEUED) {
    AddToQueue(e);
  } else if (OnBoard(e.job.state())) {
    auto board = boards_.find(e.job.board_id());
    if (board != boards_.end() && board->second.board.job_id().empty()) {
      board->second.board.set_job_id(e.job.id());
      running_by_tenant_[e.job.tenant()]++;
      e.on_board = true;
      e.lease_deadline_ms = NowMs() + LeaseMs() + kRestartGraceMs;
    } else {
      RetryOrFail(e, "the server restarted and the job's board is unknown");
    }
  }
  return &e;
}

Lab::JobEntry* Lab::FindJob(const std::string& job_id) {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

void Lab::Send(const AgentSessionPtr& session, const v1::ServerMessage& message) {
  outbox_.emplace_back(session, message);
}

// One commit for everything the call changed, then the messages that tell agents about it: a
// state is on disk before anyone hears of it, as with a write per change, at a commit per call.
void Lab::Flush() {
  if (absl::Status ok = CommitPending(); !ok.ok()) LogError(std::string(ok.message()));
  for (auto& [session, message] : outbox_) session->Send(message);
  outbox_.clear();
}

void Lab::CountWhenCommitted(const std::string& job_id, std::function<void()> count) {
  pending_counts_.push_back({job_id, "", std::move(count)});
}

void Lab::CountQuarantineWhenCommitted(const LabBoard& board) {
  pending_counts_.push_back(
      {"", board.board.id(), [this, type = board.board.type()] { metrics_.Quarantined(type); }});
}

void Lab::SettleCounts(bool committed) {
  if (committed) {
    for (const PendingCount& pending : pending_counts_) pending.count();
  }
  pending_counts_.clear();
}

// A batch that fails to commit (the disk full, another program holding SQLite's write lock) is
// kept, with its counts, and goes out with the next call's writes: its changes are already in
// memory and told to agents, so dropping it would lose them at the next restart. StoreBatch keeps
// the last version of each job and board, so the retry writes what is current.
absl::Status Lab::CommitPending() {
  if (cluster_ != nullptr) return CommitAsReplica();
  if (pending_.empty()) return absl::OkStatus();
  absl::Status committed = [&] {
    const lab_internal::TimedCommit timed(metrics_);
    return store_.Commit(pending_);
  }();
  if (!committed.ok()) return committed;
  pending_.clear();
  SettleCounts(true);
  return committed;
}

int64_t Lab::QueuedJobsForTest() {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(queues_.TotalLength());
}

// Periodic work: what ends by time alone.
void Lab::Tick() {
  // Compiles other replicas hold: their callbacks take the lock, so this runs before it.
  if (cluster_ != nullptr) compiles_.PollElsewhere();
  {
    std::lock_guard lock(mutex_);
    Flusher flush(*this);
    TickLocked(NowMs());
  }
  // Stranded compiles a replica poll took over.
  if (cluster_ != nullptr) RequestRecoveredCompiles();
}

void Lab::TickLocked(int64_t now) {
  if (cluster_ != nullptr && now >= next_cluster_poll_ms_) {
    next_cluster_poll_ms_ = now + config_.heartbeat_interval_ms;
    ClusterPoll(now);
  }
  ExpireSilentAgents(now);
  ExpireJobs(now);
  for (auto& [id, board] : boards_) ExpireReservation(board, now);
  StartHealthChecks(now);
  UpdateBoardMetrics();
  metrics_.BlobStoreBytes(static_cast<double>(blobs_.TotalBytes()));
  Schedule();
}
}  // namespace boardlab::server
