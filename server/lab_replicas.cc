// The Lab as one of several replicas on a shared PostgreSQL database (docs/server.md,
// "Replicas"; server/cluster_store.h). Only called when the store has a cluster seam: a Lab over
// SQLite never reaches this file.

#include "absl/strings/str_cat.h"
#include "server/clock.h"
#include "server/lab.h"
#include "server/lab_internal.h"
#include "server/log.h"

namespace boardlab::server {

using lab_internal::HasTags;
using lab_internal::OnBoard;
using lab_internal::StateName;

namespace {

// Stranded jobs taken per poll: the rest wait for the next one, so that one replica's poll does
// not hold the Lab's lock for long after a large replica died.
constexpr int kStrandedPerPoll = 64;

// After a replica's death or restart its agents need a moment to reconnect elsewhere (see
// kRestartGraceMs in lab.cc).
constexpr int64_t kOrphanGraceMs = 15000;

}  // namespace

absl::Status Lab::RecoverAsReplica() {
  if (absl::Status ok = cluster_->RegisterReplica(config_.listen); !ok.ok()) return ok;
  auto listener = cluster_->Listen(
      [this](const ClusterNotification& notification) { OnClusterNotification(notification); });
  if (!listener.ok()) return listener.status();
  std::lock_guard lock(mutex_);
  listener_ = *std::move(listener);
  LogInfo("replica started", {{"replica", cluster_->ReplicaId()}});
  // Nothing is loaded: queued jobs are claimed from the database, boards come with their agents,
  // and the work of this server's previous run is released when its replica lease ends.
  RefreshClusterBoards();
  return absl::OkStatus();
}

void Lab::Shutdown() {
  if (cluster_ == nullptr) return;
  listener_.reset();
  // Its agents reconnect elsewhere and take their runs with them; until then the runs wait.
  if (absl::Status ok = cluster_->UnregisterReplica(LeaseMs() + kOrphanGraceMs); !ok.ok()) {
    LogError("releasing the replica's work", {{"error", std::string(ok.message())}});
  }
}

int64_t Lab::OrphanWaitMs() const { return LeaseMs() + kOrphanGraceMs; }

// ---------------------------------------------------------------------------------------------
// Jobs this replica takes and gives back.

JobRuntime Lab::RuntimeOf(const JobEntry& entry) const {
  JobRuntime runtime;
  const v1::JobState state = entry.job.state();
  // A queued job is anyone's to claim; a finished one nobody's.
  if (state != v1::JOB_STATE_QUEUED && state != v1::JOB_STATE_DONE) {
    runtime.owner = cluster_->ReplicaId();
  }
  if (state == v1::JOB_STATE_QUEUED)
    runtime.queue_deadline_ms = entry.state_since_ms + QueueTimeoutMs(entry);
  runtime.lease_deadline_ms = entry.lease_deadline_ms;
  runtime.infra_failures = entry.infra_failures;
  runtime.failed_boards = entry.failed_boards;
  runtime.cancel_requested = entry.cancel_requested;
  return runtime;
}

Lab::JobEntry& Lab::Adopt(OwnedJob owned) {
  if (JobEntry* known = FindJob(owned.job.id())) return *known;
  // Its events came with it, read in the transaction that took it (server/cluster_store.h): a
  // take whose read failed was rolled back, and the job is still anyone's to take.
  auto entry = std::make_unique<JobEntry>();
  JobEntry& e = *entry;
  e.number = owned.number;
  e.job = std::move(owned.job);
  e.events = std::move(owned.events);
  // Since it entered its state (for queue wait metrics and timeouts): its last state event.
  e.state_since_ms = NowMs();
  for (auto it = e.events.rbegin(); it != e.events.rend(); ++it) {
    if (it->has_state()) {
      e.state_since_ms = it->time_ms();
      break;
    }
  }
  e.infra_failures = owned.runtime.infra_failures;
  e.failed_boards = owned.runtime.failed_boards;
  e.cancel_requested = owned.runtime.cancel_requested;
  e.lease_deadline_ms = owned.runtime.lease_deadline_ms;
  e.compiled.artifact = e.job.files().artifact();
  e.compiled.report = e.job.files().report();
  e.compiled.debug_map = e.job.files().debug_map();
  unfinished_by_tenant_[e.job.tenant()]++;
  job_by_number_[e.number] = e.job.id();
  if (!e.job.request_id().empty()) request_ids_[{e.job.tenant(), e.job.request_id()}] = e.job.id();
  jobs_[e.job.id()] = std::move(entry);
  return e;
}

// A commit that fails keeps what it was to write: the next call's commit (every call that
// changes state ends in one, and the periodic tick is such a call) writes it with its own. The
// Lab has already acted on these changes (a job requeued, a run finished, a message sent), and
// the database still says the old state, with this replica as the owner: dropped, a requeued
// job would be in no replica's memory and owned in the database, run by nobody until this
// replica died. Re-reading the database instead would undo what agents were already told.
absl::Status Lab::CommitAsReplica() {
  if (!pending_.empty()) {
    absl::StatusOr<CommitLosses> losses = [&] {
      const lab_internal::TimedCommit timed(metrics_);
      return cluster_->CommitOwned(pending_, pending_runtimes_, claiming_next_);
    }();
    if (!losses.ok()) return losses.status();  // kept: pending_, its counts, released_
    if (!losses->empty()) DropLost(*losses);
    // What this commit queued is claimed by the next ClaimJobs, not on its notification (which
    // comes back to this replica too, see OnClusterNotification).
    const std::set<int64_t> lost(losses->jobs.begin(), losses->jobs.end());
    for (const auto& [number, job] : pending_.jobs) {
      if (job.state() != v1::JOB_STATE_QUEUED || lost.count(number)) continue;
      maybe_queued_.insert(job.spec().selector().board_type());
      if (claiming_next_) unannounced_[number] = job.spec().selector().board_type();
    }
    pending_.clear();
    pending_runtimes_.clear();
  }
  SettleCounts(true);
  for (const std::string& id : released_) {
    JobEntry* entry = FindJob(id);
    if (entry != nullptr && entry->job.state() == v1::JOB_STATE_QUEUED) ForgetJob(id);
  }
  released_.clear();
  return absl::OkStatus();
}

void Lab::DropPendingWrites(const JobEntry& entry) {
  pending_.jobs.erase(entry.number);
  pending_runtimes_.erase(entry.number);
  std::erase_if(pending_.events,
                [&](const v1::JobEvent& event) { return event.job_id() == entry.job.id(); });
  std::erase_if(pending_counts_,
                [&](const PendingCount& pending) { return pending.job_id == entry.job.id(); });
}

// Another replica took these (an agent moved to it, or this replica was declared dead): they
// are dropped without a word to any agent, and what was about to be said or counted about them
// is not (the replica that holds them says and counts it).
void Lab::DropLost(const CommitLosses& losses) {
  std::set<std::string> lost_jobs;
  for (int64_t number : losses.jobs) {
    auto id = job_by_number_.find(number);
    if (id == job_by_number_.end()) {
      auto written = pending_.jobs.find(number);
      if (written != pending_.jobs.end()) lost_jobs.insert(written->second.id());
      continue;
    }
    lost_jobs.insert(id->second);
  }
  for (const std::string& id : lost_jobs) {
    LogWarning("job taken by another replica", {{"job", id}});
    ForgetJob(id);
  }
  for (const std::string& id : losses.boards) {
    LogWarning("board taken by another replica", {{"board", id}});
    boards_.erase(id);
  }
  const std::set<std::string> lost_boards(losses.boards.begin(), losses.boards.end());
  std::erase_if(pending_counts_, [&](const PendingCount& pending) {
    return lost_jobs.count(pending.job_id) || lost_boards.count(pending.board_id);
  });
  std::erase_if(outbox_, [&](const auto& item) {
    const v1::ServerMessage& message = item.second;
    return (message.has_assign() && lost_jobs.count(message.assign().job_id())) ||
           (message.has_cancel() && lost_jobs.count(message.cancel().job_id()));
  });
}

// ---------------------------------------------------------------------------------------------
// Scheduling: claims from the shared queue.

void Lab::ClaimJobs() {
  // What this call queued must be in the database before anyone claims it. When this replica
  // has idle boards for all of it, it claims first and tells the others only of what it leaves:
  // told at once, they would claim at the same moment, and most of their claims find nothing.
  claiming_next_ = IdleBoardsForPendingQueued();
  Flush();
  claiming_next_ = false;
  if (!maybe_queued_.empty()) {
    std::set<std::string> types;
    types.swap(maybe_queued_);
    for (const std::string& type : types) ClaimJobsFor(type);
  }
  AnnounceUnclaimed();
  Flush();
}

bool Lab::IdleBoardsForPendingQueued() const {
  bool queues = false;
  for (const auto& [number, job] : pending_.jobs) {
    if (job.state() != v1::JOB_STATE_QUEUED) continue;
    queues = true;
    const std::string& type = job.spec().selector().board_type();
    bool idle = false;
    for (const auto& [id, board] : boards_) {
      idle = idle || (board.board.type() == type && Schedulable(board));
    }
    if (!idle) return false;
  }
  return queues;
}

// A claim of this replica took the job (it is in memory again) or another job before it; the
// others hear of what is left. Should this replica die first, their polls find it.
void Lab::AnnounceUnclaimed() {
  std::set<std::string> types;
  for (const auto& [number, type] : unannounced_) {
    if (!job_by_number_.count(number)) types.insert(type);
  }
  unannounced_.clear();
  for (const std::string& type : types) {
    if (absl::Status ok = cluster_->NotifyQueued(type); !ok.ok()) {
      LogError("notifying queued jobs",
               {{"board_type", type}, {"error", std::string(ok.message())}});
    }
  }
}

// One claim for all the type's idle boards (each notification of a queued job reaches every
// replica: a claim per idle board would make most of them empty), and another only while the
// last one found a job and others waited behind it.
void Lab::ClaimJobsFor(const std::string& board_type) {
  for (;;) {
    std::vector<v1::Board> idle;
    for (const auto& [id, board] : boards_) {
      if (board.board.type() == board_type && Schedulable(board)) idle.push_back(board.board);
    }
    if (idle.empty()) return;
    auto claimed = cluster_->ClaimQueuedJob(
        idle, [this](const v1::Job& job, const JobRuntime& runtime, const v1::Board& board) {
          return MatchesInCluster(job, runtime, board);
        });
    if (!claimed.ok()) {
      LogError("claiming a job",
               {{"board_type", board_type}, {"error", std::string(claimed.status().message())}});
      maybe_queued_.insert(board_type);  // try again at the next poll
      return;
    }
    if (!claimed->has_value()) return;
    const bool more = (*claimed)->more;
    const std::string board_id = (*claimed)->board_id;
    JobEntry& entry = Adopt(std::move((*claimed)->owned));
    if (entry.cancel_requested) {
      Finish(entry, v1::JOB_RESULT_CANCELLED, "cancelled before it ran");
    } else {
      Assign(entry, boards_.at(board_id));
    }
    if (!more) return;
  }
}

bool Lab::MatchesInCluster(const v1::Job& job, const JobRuntime& runtime,
                           const v1::Board& board) const {
  const v1::BoardSelector& selector = job.spec().selector();
  if (!HasTags(board, selector.tags())) return false;
  if (!runtime.failed_boards.count(board.id()) || !selector.board_id().empty()) return true;
  // Retry elsewhere when another usable board of the type is online on any replica.
  for (const ClusterBoard& other : cluster_boards_) {
    const v1::Board& b = other.board;
    if (b.type() == board.type() && !runtime.failed_boards.count(b.id()) && other.owner_alive &&
        b.state() != v1::BOARD_STATE_OFFLINE && b.state() != v1::BOARD_STATE_QUARANTINED &&
        b.state() != v1::BOARD_STATE_MAINTENANCE && HasTags(b, selector.tags())) {
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Periodic work: heartbeat, dead replicas, stranded jobs, the database-wide metrics.

void Lab::ClusterPoll(int64_t now) {
  if (absl::Status beat = cluster_->HeartbeatReplica(); absl::IsNotFound(beat)) {
    ResetAfterDeclaredDead();
  } else if (!beat.ok()) {
    LogError("replica heartbeat", {{"error", std::string(beat.message())}});
  }
  auto dead = cluster_->RecoverDeadReplicas(config_.replica_lease_ms, OrphanWaitMs());
  if (!dead.ok()) {
    LogError("recovering dead replicas", {{"error", std::string(dead.status().message())}});
  } else {
    for (const std::string& id : *dead) {
      LogWarning("replica found dead; its work was released", {{"replica", id}});
    }
  }
  auto stranded = cluster_->TakeStrandedJobs(now, kStrandedPerPoll);
  if (!stranded.ok()) {
    LogError("taking stranded jobs", {{"error", std::string(stranded.status().message())}});
  } else {
    for (OwnedJob& owned : *stranded) CarryOnStranded(std::move(owned));
  }
  RefreshClusterBoards();
  UpdateClusterMetrics();
  // The safety net under notifications: every local type looks at the queue again.
  for (const auto& [id, board] : boards_) maybe_queued_.insert(board.board.type());
}

// A job no replica held: its compiler or its agent's replica died, or it waited too long.
void Lab::CarryOnStranded(OwnedJob owned) {
  const v1::JobState state = owned.job.state();
  JobEntry* entry = &Adopt(std::move(owned));
  if (entry->cancel_requested && !OnBoard(state)) {
    Finish(*entry, v1::JOB_RESULT_CANCELLED, "cancelled before it ran");
  } else if (state == v1::JOB_STATE_COMPILING) {
    recovered_compiles_.push_back(entry->job.id());
  } else if (state == v1::JOB_STATE_QUEUED) {
    Finish(*entry, v1::JOB_RESULT_QUEUE_TIMEOUT,
           "no matching board became free within the queue timeout");
  } else {
    CountWhenCommitted(entry->job.id(), [this] { metrics_.LeaseExpired(); });
    RetryOrFail(*entry, "the board's agent did not come back within its lease");
  }
}

// Another replica declared this one dead and released its work: nothing held here is ours any
// more. Agents are disconnected so that they reconnect (here or elsewhere) and take their boards
// and runs back through the database.
void Lab::ResetAfterDeclaredDead() {
  LogError("this replica was declared dead by another; dropping its work and starting over",
           {{"replica", cluster_->ReplicaId()}});
  for (auto& [id, session] : sessions_) session.session->Close();
  sessions_.clear();
  session_by_agent_.clear();
  jobs_.clear();
  job_by_number_.clear();
  request_ids_.clear();
  unfinished_by_tenant_.clear();
  running_by_tenant_.clear();
  boards_.clear();
  pending_.clear();
  pending_runtimes_.clear();
  released_.clear();
  outbox_.clear();
  pending_counts_.clear();
  metrics_.AgentsConnected(0);
  if (absl::Status ok = cluster_->RegisterReplica(config_.listen); !ok.ok()) {
    LogError("registering the replica again", {{"error", std::string(ok.message())}});
  }
}

void Lab::RefreshClusterBoards() {
  auto boards = cluster_->ClusterBoards();
  if (!boards.ok()) {
    LogError("listing the cluster's boards", {{"error", std::string(boards.status().message())}});
    return;
  }
  cluster_boards_ = *std::move(boards);
}

void Lab::UpdateClusterMetrics() {
  if (auto queued = cluster_->QueuedCounts(); queued.ok()) {
    for (const auto& [type, n] : *queued) queue_metric_types_.insert(type);
    for (const std::string& type : queue_metric_types_) {
      auto it = queued->find(type);
      metrics_.QueueDepth(type, it == queued->end() ? 0 : it->second);
    }
  }
  if (auto by_state = cluster_->UnfinishedByState(); by_state.ok()) {
    for (int s = v1::JOB_STATE_COMPILING; s < v1::JOB_STATE_DONE; ++s) {
      auto state = static_cast<v1::JobState>(s);
      auto it = by_state->find(state);
      metrics_.JobsInState(StateName(state), it == by_state->end() ? 0 : it->second);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Notifications from the other replicas.

void Lab::OnClusterNotification(const ClusterNotification& notification) {
  if (notification.channel == kCompiledChannel) {
    compiles_.CompiledElsewhere(notification.payload);
    return;
  }
  if (notification.channel == kEventsChannel && !WaitsForEventsOf(notification)) return;
  std::vector<std::string> compiles;
  {
    std::lock_guard lock(mutex_);
    Flusher flush(*this);
    const bool missed = notification.channel.empty();  // the listener reconnected
    if (notification.channel == kEventsChannel || missed) {
      if (missed) {
        for (auto& [id, generation] : remote_events_) ++generation;
      } else if (auto it = remote_events_.find(notification.payload); it != remote_events_.end()) {
        ++it->second;
      }
      events_changed_.notify_all();
    }
    if (notification.channel == kCancelChannel) {
      if (JobEntry* entry = FindJob(notification.payload)) CancelHere(*entry);
    }
    if (notification.channel == kQueueChannel || missed) {
      if (notification.payload.empty()) {
        for (const auto& [id, board] : boards_) maybe_queued_.insert(board.board.type());
      } else if (!notification.from_here) {
        maybe_queued_.insert(notification.payload);
      }
      // A job this replica queued: its commit put its type into maybe_queued_ (CommitAsReplica),
      // where it stays until a claim after that commit looks at the queue; one on the
      // notification too would find nothing.
      Schedule();
    }
  }
}

// Whether an events notification can wake a WaitEventsElsewhere call, without the Lab's lock
// (the listener would wait for it, once per committed event, behind calls that hold it across
// their commits). One from this replica's own commit cannot: their AddEvent woke the waiters.
// With nobody waiting none can: a call that starts waiting later reads the events from the
// database after it counted itself in, so it sees every commit notified before that.
bool Lab::WaitsForEventsOf(const ClusterNotification& notification) const {
  return !notification.from_here && waiting_elsewhere_.load() > 0;
}

// ---------------------------------------------------------------------------------------------
// Agents: a Hello takes its boards, and the runs on them, from whichever replica had them.

absl::Status Lab::TakeAgentBoards(const v1::Hello& hello) {
  std::vector<std::string> ids;
  for (const auto& info : hello.boards()) ids.push_back(info.id());
  auto taken = cluster_->TakeBoards(ids);
  if (!taken.ok()) return taken.status();
  for (const v1::Board& stored : taken->boards) {
    if (!boards_.count(stored.id())) RestoreBoard(stored);
  }
  for (OwnedJob& owned : taken->jobs) {
    const std::string board_id = owned.job.board_id();
    JobEntry* entry = &Adopt(std::move(owned));
    if (entry->on_board) continue;
    LabBoard& board = boards_[board_id];
    board.board.set_job_id(entry->job.id());
    running_by_tenant_[entry->job.tenant()]++;
    entry->on_board = true;
    entry->lease_deadline_ms = 0;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Jobs another replica holds, or the queue: cancel and watch.

absl::StatusOr<v1::Job> Lab::CancelElsewhere(const std::string& job_id, const v1::Job& as_read) {
  auto taken = cluster_->TakeQueuedJob(job_id);
  if (!taken.ok()) return taken.status();
  if (taken->has_value()) {
    Finish(Adopt(**std::move(taken)), v1::JOB_RESULT_CANCELLED, "cancelled before it ran");
    Flush();
  } else {
    auto owner = cluster_->RequestCancel(job_id);
    if (!owner.ok() && !absl::IsNotFound(owner.status())) return owner.status();
    // Its owner tells its agent (kCancelChannel); an unowned one is cancelled when taken.
  }
  auto stored = store_.GetJob(job_id);
  if (stored.ok() && stored->has_value()) return **stored;
  return as_read;
}

absl::StatusOr<std::optional<std::vector<v1::JobEvent>>> Lab::WaitEventsElsewhere(
    std::unique_lock<std::mutex>& lock, const Caller& caller, const std::string& job_id,
    int64_t after_seq, int64_t deadline_ms) {
  // Counted while this call waits, so that notifications about the job wake it.
  const uint64_t seen = remote_events_[job_id];
  ++remote_watchers_[job_id];
  ++waiting_elsewhere_;
  lock.unlock();
  absl::StatusOr<v1::Job> job = GetJob(caller, job_id);
  absl::StatusOr<std::vector<v1::JobEvent>> events =
      job.ok() ? store_.Events(job_id, after_seq) : job.status();
  lock.lock();
  std::optional<std::vector<v1::JobEvent>> answer;
  if (events.ok() && (!events->empty() || job->state() == v1::JOB_STATE_DONE)) {
    answer = *std::move(events);
  } else if (events.ok()) {
    // Until the job's next events are committed (kEventsChannel), it comes here, or the deadline.
    events_changed_.wait_until(
        lock, std::chrono::system_clock::time_point(std::chrono::milliseconds(deadline_ms)),
        [&] { return remote_events_[job_id] != seen || FindJob(job_id) != nullptr; });
  }
  --waiting_elsewhere_;
  if (--remote_watchers_[job_id] == 0) {
    remote_watchers_.erase(job_id);
    remote_events_.erase(job_id);
  }
  if (!events.ok()) return events.status();
  return answer;
}

}  // namespace boardlab::server
