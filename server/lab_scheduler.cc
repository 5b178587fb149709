#include "server/lab.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/clock.h"
#include "server/lab_internal.h"

namespace boardlab::server {

using lab_internal::HasTags;

namespace {

constexpr int kFairShareScan = 512;  // queued jobs looked at per pick beyond the first match

}  // namespace

void Lab::Schedule() {
  if (cluster_ != nullptr) {
    ClaimJobs();  // replicas: the queue is the database's
    return;
  }
  for (auto& [id, board] : boards_) {
    if (!Schedulable(board)) continue;
    if (JobEntry* job = PickJob(board)) Assign(*job, board);
  }
}

bool Lab::Schedulable(const LabBoard& board) const {
  return board.State() == v1::BOARD_STATE_IDLE && !board.health_check_running;
}

bool Lab::Matches(const JobEntry& entry, const LabBoard& board) const {
  const v1::BoardSelector& selector = entry.job.spec().selector();
  if (!selector.board_id().empty() && selector.board_id() != board.board.id()) return false;
  if (!HasTags(board.board, selector.tags())) return false;
  if (entry.failed_boards.count(board.board.id()) && selector.board_id().empty()) {
    // Retry elsewhere when another usable board of the type exists.
    for (const auto& [id, other] : boards_) {
      if (other.board.type() == board.board.type() && !entry.failed_boards.count(id) &&
          !other.session_id.empty() && !other.quarantined && !other.maintenance &&
          HasTags(other.board, selector.tags())) {
        return false;
      }
    }
  }
  return true;
}

Lab::JobEntry* Lab::PickJob(const LabBoard& board) {
  const std::string& type = board.board.type();
  // With one tenant queued, the first match is the pick: no other tenant can have fewer running
  // jobs, and the scan for one would look at up to kFairShareScan jobs per board and pass.
  const bool one_tenant = queues_.TenantCount(type) <= 1;
  JobEntry* best = nullptr;
  int32_t best_priority = 0;
  int best_running = 0;
  int scanned = 0;
  queues_.Visit(type, [&](const JobQueues::Place& place) {
    if (best && (place.priority != best_priority || ++scanned > kFairShareScan)) return false;
    JobEntry* candidate = FindJob(job_by_number_[place.number]);
    if (!candidate) return true;
    // Another job of the best's tenant has as many running jobs behind it: it cannot go first,
    // so it needs no closer look (this keeps a one-tenant queue's scan cheap).
    if (best && candidate->job.tenant() == best->job.tenant()) return true;
    if (!Matches(*candidate, board)) return true;
    const int running = running_by_tenant_[candidate->job.tenant()];
    // Same priority: the tenant with fewer running jobs goes first.
    if (!best || running < best_running) {
      if (!best) best_priority = place.priority;
      best = candidate;
      best_running = running;
    }
    return !one_tenant;
  });
  return best;
}

void Lab::Assign(JobEntry& entry, LabBoard& board) {
  Dequeue(entry);
  const std::string& type = board.board.type();
  const double waited_seconds = (NowMs() - entry.state_since_ms) / 1000.0;
  CountWhenCommitted(entry.job.id(), [this, type, waited_seconds] {
    metrics_.QueueWait(type, waited_seconds);
    metrics_.StageDuration("queue", waited_seconds);
  });
  entry.job.set_attempt(entry.job.attempt() + 1);
  entry.job.set_board_id(board.board.id());
  if (entry.job.start_time_ms() == 0) entry.job.set_start_time_ms(NowMs());
  entry.lease_deadline_ms = 0;
  board.board.set_job_id(entry.job.id());
  board.board.set_jobs_run(board.board.jobs_run() + 1);
  running_by_tenant_[entry.job.tenant()]++;
  entry.on_board = true;
  SetState(entry, v1::JOB_STATE_ASSIGNED);
  PersistBoard(board);
  UpdateBoardMetrics();

  const v1::JobSpec& spec = entry.job.spec();
  v1::ServerMessage message;
  v1::Assignment* assign = message.mutable_assign();
  assign->set_job_id(entry.job.id());
  assign->set_attempt(entry.job.attempt());
  assign->set_board_id(board.board.id());
  *assign->mutable_artifact() = entry.compiled.artifact;
  *assign->mutable_inputs() = spec.run().inputs();
  *assign->mutable_expected() = spec.run().expected();
  *assign->mutable_cases() = spec.run().cases();
  assign->set_atol(spec.run().atol());
  assign->set_iterations(spec.run().iterations() > 0 ? spec.run().iterations() : 1);
  assign->set_timeout_seconds(spec.run().timeout_seconds() > 0
                                  ? spec.run().timeout_seconds()
                                  : config_.default_run_timeout_seconds);
  SendTo(board, message);
}

void Lab::AddToQueue(const JobEntry& entry) {
  const std::string& type = entry.job.spec().selector().board_type();
  queues_.Add(type, {entry.job.spec().priority(), entry.number}, entry.job.tenant());
  UpdateQueueMetrics(type);
}

void Lab::Dequeue(JobEntry& entry) {
  const std::string& type = entry.job.spec().selector().board_type();
  queues_.Remove(type, {entry.job.spec().priority(), entry.number}, entry.job.tenant());
  UpdateQueueMetrics(type);
}

void Lab::SetQueuePlaces(const std::vector<v1::Job*>& jobs) {
  // One walk per board type, however many of its jobs are asked about.
  std::map<std::string, std::map<int64_t, v1::Job*>> wanted;  // type -> job number -> job
  for (v1::Job* job : jobs) {
    const JobEntry* entry = job->state() == v1::JOB_STATE_QUEUED ? FindJob(job->id()) : nullptr;
    if (entry != nullptr) wanted[entry->job.spec().selector().board_type()][entry->number] = job;
  }
  for (auto& [type, by_number] : wanted) {
    std::set<int64_t> numbers;
    for (const auto& [number, job] : by_number) numbers.insert(number);
    // A job restored as QUEUED whose artifact must be compiled again is not in a queue yet.
    const auto length = static_cast<int32_t>(queues_.Length(type));
    for (const auto& [number, position] : queues_.Positions(type, numbers)) {
      by_number[number]->set_queue_position(position);
      by_number[number]->set_queue_length(length);
    }
  }
}

void Lab::LogWaiting(JobEntry& entry) {
  // The queue's length, not the job's place in it: the place costs a walk of the queue, too
  // much for every job while thousands wait (GetJob computes it when asked).
  const std::string& type = entry.job.spec().selector().board_type();
  std::map<std::string, int> boards_by_state;
  for (const auto& [id, board] : boards_) {
    if (board.board.type() == type) boards_by_state[BoardStateName(board.State())]++;
  }
  std::vector<std::string> counts;
  for (const auto& [state, n] : boards_by_state) counts.push_back(absl::StrCat(n, " ", state));
  AddLog(entry, absl::StrCat("waiting for a board of type ", type, ": ", queues_.Length(type),
                             " queued; boards: ",
                             counts.empty() ? "none connected" : absl::StrJoin(counts, ", ")));
}

void Lab::UpdateQueueMetrics(const std::string& board_type) {
  if (cluster_ != nullptr) return;  // replicas: counted in the database at each poll
  metrics_.QueueDepth(board_type, static_cast<double>(queues_.Length(board_type)));
}

std::map<std::string, int> Lab::QueuedJobs(const std::string& board_type) {
  if (cluster_ != nullptr) {
    auto counts = cluster_->QueuedCounts();
    if (!counts.ok()) return {};
    if (!board_type.empty())
      std::erase_if(*counts, [&](const auto& c) { return c.first != board_type; });
    return *counts;
  }
  std::lock_guard lock(mutex_);
  return queues_.Lengths(board_type);
}

void Lab::SetQueuePlacesFromCluster(const std::vector<v1::Job*>& jobs) {
  for (v1::Job* job : jobs) {
    if (job->state() != v1::JOB_STATE_QUEUED) continue;
    auto place = cluster_->QueuePlace(std::stoll(job->id().substr(1)));
    if (!place.ok() || !place->has_value()) continue;
    job->set_queue_position((*place)->first);
    job->set_queue_length((*place)->second);
  }
}

}  // namespace boardlab::server
