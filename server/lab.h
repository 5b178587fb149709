#pragma once

// The Lab is the server's core: jobs, boards, agent sessions and the scheduler, behind one lock.
// It knows nothing about gRPC (STYLE.md rule 20): the service handlers in services.cc translate
// requests into calls here and statuses back.
//
// A job's life: Submit -> COMPILING (CompileService) -> QUEUED (a queue per board type) ->
// ASSIGNED (a board leased to it, the agent told) -> LOADING/RUNNING/COLLECTING (agent stage
// events) -> DONE with a JobResult. Every transition is written to the Store before anyone is
// told, and appended to the job's event log, which WatchJob streams.
//
// Scheduling: for each schedulable board, the best matching queued job of its type: highest
// priority first; among equal priorities, the tenant with the fewest running jobs (fair share);
// then the oldest. A board holds at most one job (its job_id), so it is never double-booked.
//
// Failures: a board run that ends in an infrastructure error (board crash, hang, agent lost or
// silent past its lease) is retried on another board while the job's retry budget lasts; model
// failures are verdicts. A board with `quarantine_after` consecutive infrastructure failures is
// quarantined until its golden-model health check passes.
//
// The Lab's code is split by concern (one class, one lock): lab.cc (recovery), lab_jobs.cc (job
// life cycle), lab_scheduler.cc (queues and picks, over JobQueues), lab_boards.cc (boards,
// reservations over board_leases.h, maintenance, health over BoardHealth), lab_agents.cc (agent
// sessions, results, periodic work).

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "boardlab/v1/agent_service.pb.h"
#include "boardlab/v1/board_service.pb.h"
#include "boardlab/v1/job_service.pb.h"
#include "server/agent_session.h"
#include "server/auth.h"
#include "server/blob_store.h"
#include "server/board_health.h"
#include "server/cluster_store.h"
#include "server/compile_service.h"
#include "server/config.h"
#include "server/job_queues.h"
#include "server/lab_board.h"
#include "server/metrics.h"
#include "server/reference_runner.h"
#include "server/store.h"

namespace boardlab::server {

class Lab {
 public:
  /// All references must outlive the Lab.
  Lab(const ServerConfig& config, Store& store, BlobStore& blobs, CompileService& compiles,
      Metrics& metrics, ReferenceRunner* reference = nullptr);

  /// Reloads boards and unfinished jobs after a start: queued jobs are queued again, compiles are
  /// restarted, and jobs that were on a board wait one lease period for their agent to report.
  absl::Status Recover();
  /// Starts the compiles Recover() found missing (call without holding anything, after Recover).
  void RequestRecoveredCompiles();
  /// Replicas: a clean shutdown hands this replica's work to the others at once (call after the
  /// gRPC server stopped). Nothing to do for a single server.
  void Shutdown();

  // JobService.
  absl::StatusOr<v1::SubmitJobResponse> Submit(const Caller& caller,
                                               const v1::SubmitJobRequest& request);
  absl::StatusOr<v1::Job> GetJob(const Caller& caller, const std::string& job_id);
  absl::StatusOr<v1::Job> Cancel(const Caller& caller, const std::string& job_id);
  absl::StatusOr<v1::ListJobsResponse> ListJobs(const Caller& caller,
                                                const v1::ListJobsRequest& request);
  /// Events of a job after `after_seq`; waits until `deadline_ms` for the first new one.
  /// Errors: NotFound (unknown job or another tenant's).
  absl::StatusOr<std::vector<v1::JobEvent>> WaitEvents(const Caller& caller,
                                                       const std::string& job_id, int64_t after_seq,
                                                       int64_t deadline_ms);

  // BoardService.
  std::vector<v1::Board> ListBoards(const std::string& board_type);
  /// Queued jobs by board type (all types when `board_type` is empty); empty queues left out.
  std::map<std::string, int> QueuedJobs(const std::string& board_type);
  absl::StatusOr<v1::Board> GetBoard(const std::string& board_id);
  absl::StatusOr<v1::ReserveResponse> Reserve(const Caller& caller,
                                              const v1::ReserveRequest& request);
  absl::StatusOr<v1::Board> Release(const Caller& caller, const v1::ReleaseRequest& request);
  absl::StatusOr<v1::Board> SetMaintenance(const v1::SetMaintenanceRequest& request);

  // AgentService. Hello registers the agent's boards and returns the session id to pass to the
  // other calls; a second Hello with the same agent_id replaces (closes) the first session.
  absl::StatusOr<std::string> AgentHello(const v1::Hello& hello, AgentSessionPtr session);
  void AgentMessage(const std::string& session_id, const v1::AgentMessage& message);
  void AgentGone(const std::string& session_id);

  /// Periodic work (call every ~100 ms): lease expiry, queue timeouts, reservation expiry,
  /// health checks; replicas also renew their heartbeat, recover dead replicas and look at the
  /// shared queue once per heartbeat interval.
  void Tick();

  /// The health-check artifact for quarantined boards (compiled at start-up when configured).
  void SetHealthCheck(const CompileRecord& artifact, const v1::Digest& input,
                      const v1::Digest& expected);

  /// Whether an agent may download this blob: a job on a board (or the health check) needs it.
  bool AgentMayRead(const std::string& sha256);

  int64_t QueuedJobsForTest();

 private:
  struct JobEntry {
    int64_t number = 0;
    v1::Job job;
    std::vector<v1::JobEvent> events;
    CompileRecord compiled;
    int64_t state_since_ms = 0;
    int infra_failures = 0;
    std::set<std::string> failed_boards;
    bool cancel_requested = false;
    int64_t lease_deadline_ms = 0;   // on a board whose agent is away: requeue after this
    bool on_board = false;           // holds a board (counted in running_by_tenant_)
    int32_t streamed_attempt = 0;    // the attempt streamed_log_bytes counts
    int64_t streamed_log_bytes = 0;  // its board's lines taken as events (AddBoardLines)
  };
  static constexpr int64_t kMaxStreamedLogBytes = 1 << 20;
  static constexpr size_t kMaxLineBytes = 4096;
  struct SessionEntry {
    std::string agent_id;
    AgentSessionPtr session;
    int64_t last_seen_ms = 0;
    std::vector<std::string> boards;
  };

  // Every call that changes state holds a Flusher (declared after its lock, so that it runs
  // before the lock is released): the call's writes are committed together, then its messages
  // to agents are sent.
  class Flusher {
   public:
    explicit Flusher(Lab& lab) : lab_(lab) {}
    ~Flusher() { lab_.Flush(); }
    Flusher(const Flusher&) = delete;
    Flusher& operator=(const Flusher&) = delete;

   private:
    Lab& lab_;
  };
  void Flush();
  /// Commits this call's writes (not its messages); Flush() logs a failure nobody else checks.
  absl::Status CommitPending();
  /// Queues `message` for `session` until the call's writes are committed.
  void Send(const AgentSessionPtr& session, const v1::ServerMessage& message);
  /// Counts a metric of a change to job `job_id` once the change is committed: never when the
  /// commit fails, nor when it finds the job lost to another replica (whose count it is).
  void CountWhenCommitted(const std::string& job_id, std::function<void()> count);
  /// A quarantine of `board` (boardlab_board_quarantines_total), counted once its new state is
  /// committed; not at all when the commit fails or another replica has taken the board.
  void CountQuarantineWhenCommitted(const LabBoard& board);
  /// Counts (`committed`) or drops what CountWhenCommitted queued.
  void SettleCounts(bool committed);

  // lab.cc: recovery after a restart and the shared lookups.
  void RestoreBoard(const v1::Board& stored);
  absl::StatusOr<JobEntry*> RestoreJob(v1::Job job);
  JobEntry* FindJob(const std::string& job_id);
  std::string JobId(int64_t number) const;
  int64_t LeaseMs() const;
  int64_t QueueTimeoutMs(const JobEntry& entry) const;
  void TickLocked(int64_t now);

  // lab_jobs.cc: a job's life cycle, submission to verdict (all under mutex_ unless noted).
  absl::Status ValidateSpec(const Caller& caller, const v1::JobSpec& spec);
  /// The compile cache's entry for the job, and with replicas the rest of SubmitLookup. Call
  /// without holding mutex_.
  absl::StatusOr<SubmitLookup> LookUpForSubmit(const Caller& caller,
                                               const v1::SubmitJobRequest& request,
                                               const v1::JobSpec& spec);
  /// InvalidArgument when the compile cache knew the model (`cached`) and the run does not fit.
  absl::Status CheckAgainstCachedCompile(const v1::JobSpec& spec,
                                         const std::optional<CompileRecord>& cached);
  absl::Status CheckSomeBoardCanRun(const v1::JobSpec& spec);
  /// A submit whose commit failed: the job is forgotten. With AlreadyExists (another replica
  /// committed the same request id first) the answer is that replica's job, as for a retry.
  absl::StatusOr<v1::SubmitJobResponse> UndoSubmit(JobEntry& entry, absl::Status failed);
  /// ResourceExhausted when `tenant` already has its limit of unfinished jobs.
  /// `counted`: the tenant's unfinished jobs as the database counts them (replicas), or -1.
  absl::Status CheckTenantLimit(const std::string& tenant, int64_t counted) const;
  /// Call without holding mutex_. `cached`: the job's compile cache entry as just read (nullptr:
  /// read it).
  void RequestCompile(const std::string& job_id, const v1::JobSpec& spec,
                      const std::optional<CompileRecord>* cached = nullptr);
  void OnReferenceCompiled(const std::string& job_id, const v1::JobSpec& spec,
                           const CompileRecord& record);
  void OnCompiled(const std::string& job_id, const CompileRecord& record, CompileSource source);
  /// A compiling job takes its compile's result: queued (true), or finished with the compile's
  /// or the request's error (false).
  bool ApplyCompile(JobEntry& entry, const CompileRecord& record, CompileSource source);
  /// A job just queued is offered to the boards (call once its queueing is committed, or within
  /// the same call's commit).
  void ScheduleCompiled(const std::string& job_id);
  void SetState(JobEntry& entry, v1::JobState state);
  void AddEvent(JobEntry& entry, v1::JobEvent event);
  void AddLog(JobEntry& entry, const std::string& line);
  void Persist(JobEntry& entry);
  void Enqueue(JobEntry& entry);
  void Finish(JobEntry& entry, v1::JobResult result, const std::string& message);
  void RetryOrFail(JobEntry& entry, const std::string& why);
  void LeaveBoard(JobEntry& entry);
  void GrantToTenant(const JobEntry& entry, const v1::Digest& digest);
  /// Drops a job from memory without a write: replicas give it back to the queue or lost it; a
  /// submit was not committed.
  void ForgetJob(const std::string& job_id);
  /// Jobs whose agent did not come back within the lease are retried; queued jobs past their
  /// queue timeout end.
  void ExpireJobs(int64_t now);

  // lab_scheduler.cc: the queues and which job a free board runs next.
  void Schedule();
  bool Schedulable(const LabBoard& board) const;
  JobEntry* PickJob(const LabBoard& board);
  bool Matches(const JobEntry& entry, const LabBoard& board) const;
  void Assign(JobEntry& entry, LabBoard& board);
  void AddToQueue(const JobEntry& entry);  // into its type's queue, no state change
  void Dequeue(JobEntry& entry);
  /// Sets queue_position and queue_length of those of `jobs` that are queued.
  void SetQueuePlaces(const std::vector<v1::Job*>& jobs);
  /// Replicas: the same from the shared queue (call without holding mutex_).
  void SetQueuePlacesFromCluster(const std::vector<v1::Job*>& jobs);
  /// For a job that stays queued: a log line on how many wait and what its boards are doing.
  void LogWaiting(JobEntry& entry);
  void UpdateQueueMetrics(const std::string& board_type);

  // lab_boards.cc: boards, their reservations, maintenance and health.
  /// NotFound naming the board when no agent ever registered it.
  absl::StatusOr<LabBoard*> FindBoard(const std::string& board_id);
  void PersistBoard(LabBoard& board);
  absl::StatusOr<v1::Board> ViewAfterSchedule(const std::string& board_id);
  void FreeBoard(const std::string& board_id);
  void SendTo(const LabBoard& board, const v1::ServerMessage& message);
  void StartHealthChecks(int64_t now);
  void UpdateBoardMetrics();

  // lab_agents.cc: agent sessions and what agents report.
  /// Whether `board_id` is a board of the agent session `session_id`.
  bool HoldsBoard(const std::string& session_id, const std::string& board_id) const;
  /// The job when `attempt` of it runs on a board of `session_id`; nullptr otherwise (a stale
  /// attempt, or another agent's board).
  JobEntry* RunOf(const std::string& session_id, const std::string& job_id, int32_t attempt);
  void OnStage(const std::string& session_id, const v1::StageEvent& stage);
  void OnLogs(const std::string& session_id, const v1::LogLines& logs);
  void AddBoardLines(JobEntry& entry, const google::protobuf::RepeatedPtrField<std::string>& lines);
  /// The blobs `result` names that an agent uploaded (AgentUploaded). Call without mutex_.
  std::set<std::string> AgentUploadedBlobs(const v1::RunResult& result);
  /// Grants a result's blob to the job's tenant when it is in `uploaded`; else a log line says
  /// why the tenant cannot download it.
  void GrantResultBlob(JobEntry& entry, const v1::Digest& digest,
                       const std::set<std::string>& uploaded);
  void TakeResultFiles(JobEntry& entry, const v1::RunResult& result,
                       const std::set<std::string>& uploaded);
  void OnResult(const std::string& session_id, const v1::RunResult& result,
                const std::set<std::string>& uploaded);
  // The agent's word on a board's condition (at Hello, or a BoardStatus since).
  void ApplyCondition(LabBoard& board, const std::string& agent_id, v1::BoardCondition condition,
                      const std::string& reason);
  void OnBoardStatus(const std::string& session_id, const v1::BoardStatus& status);
  /// The verdict of a run that ended PASS or FAIL, with the job's budgets judged.
  void FinishRun(JobEntry& entry, const v1::RunResult& result);
  void DetachSession(const std::string& session_id, bool lease_expired);
  void ReconcileInFlight(const v1::Hello& hello);
  void ExpireSilentAgents(int64_t now);
  /// Cancels a job held here: finishes it at once when it is not on a board or its agent is
  /// away (true), else tells the agent (false).
  bool CancelHere(JobEntry& entry);

  // lab_replicas.cc: one of several replicas on a shared database (only when cluster_ is set).
  absl::Status RecoverAsReplica();
  int64_t OrphanWaitMs() const;
  JobRuntime RuntimeOf(const JobEntry& entry) const;
  /// Puts a job this replica just took (with the events read when it was taken) into jobs_; its
  /// entry (the one already there when it was known).
  JobEntry& Adopt(OwnedJob owned);
  /// Commits pending_ through the cluster seam; a failed commit keeps it for the next one.
  absl::Status CommitAsReplica();
  /// Takes a job's writes out of pending_ (a submit that failed: nothing of it may be written).
  void DropPendingWrites(const JobEntry& entry);
  void DropLost(const CommitLosses& losses);
  void ClaimJobs();
  void ClaimJobsFor(const std::string& board_type);
  /// Whether pending_ queues jobs and this replica has an idle board of each of their types.
  bool IdleBoardsForPendingQueued() const;
  /// Notifies the other replicas of the jobs in unannounced_ that this replica did not claim.
  void AnnounceUnclaimed();
  bool MatchesInCluster(const v1::Job& job, const JobRuntime& runtime,
                        const v1::Board& board) const;
  void ClusterPoll(int64_t now);
  void CarryOnStranded(OwnedJob owned);
  void ResetAfterDeclaredDead();
  void RefreshClusterBoards();
  void UpdateClusterMetrics();
  void OnClusterNotification(const ClusterNotification& notification);
  bool WaitsForEventsOf(const ClusterNotification& notification) const;
  absl::Status TakeAgentBoards(const v1::Hello& hello);
  absl::StatusOr<v1::Job> CancelElsewhere(const std::string& job_id, const v1::Job& as_read);
  /// WaitEvents for a job not held here: from the store, woken by kEventsChannel. nullopt when
  /// nothing came before the deadline (or the job came here): look again. Holds `lock` on return.
  absl::StatusOr<std::optional<std::vector<v1::JobEvent>>> WaitEventsElsewhere(
      std::unique_lock<std::mutex>& lock, const Caller& caller, const std::string& job_id,
      int64_t after_seq, int64_t deadline_ms);

  const ServerConfig& config_;
  Store& store_;
  BlobStore& blobs_;
  CompileService& compiles_;
  Metrics& metrics_;
  ReferenceRunner* reference_;

  std::mutex mutex_;
  std::condition_variable events_changed_;
  int64_t next_job_number_ = 1;
  int64_t next_session_ = 1;
  std::map<std::string, std::unique_ptr<JobEntry>> jobs_;                   // unfinished jobs
  std::map<std::string, int> unfinished_by_tenant_;                         // jobs_ per tenant
  std::map<std::pair<std::string, std::string>, std::string> request_ids_;  // unfinished only
  JobQueues queues_;
  std::map<int64_t, std::string> job_by_number_;
  std::map<std::string, int> running_by_tenant_;
  std::map<std::string, LabBoard> boards_;
  std::map<std::string, SessionEntry> sessions_;
  std::map<std::string, std::string> session_by_agent_;

  StoreBatch pending_;  // this call's writes, committed by Flush()
  std::vector<std::pair<AgentSessionPtr, v1::ServerMessage>> outbox_;  // sent after the commit
  struct PendingCount {
    std::string job_id;    // the job the count is about, or ""
    std::string board_id;  // the board it is about, or ""
    std::function<void()> count;
  };
  std::vector<PendingCount> pending_counts_;  // counted after the commit
  std::vector<std::string> recovered_compiles_;
  BoardHealth health_;

  // Replicas only (lab_replicas.cc).
  ClusterStore* cluster_;                           // nullptr: a single server
  std::map<int64_t, JobRuntime> pending_runtimes_;  // with pending_.jobs
  std::vector<std::string> released_;               // queued this call: dropped after the commit
  std::set<std::string> maybe_queued_;              // board types whose queue may hold work
  bool claiming_next_ = false;  // the next commit is followed by a claim (CommitOwned's flag)
  std::map<int64_t, std::string> unannounced_;  // queued without a notification: number -> type
  int64_t next_cluster_poll_ms_ = 0;
  std::vector<ClusterBoard> cluster_boards_;  // as of the last poll
  std::set<std::string> queue_metric_types_;
  std::map<std::string, uint64_t> remote_events_;  // watched job -> its notifications so far
  std::map<std::string, int> remote_watchers_;
  // The calls in WaitEventsElsewhere, readable without mutex_: most event notifications come
  // while nobody waits on them, and the listener then leaves the Lab's lock to its callers.
  std::atomic<int> waiting_elsewhere_{0};
  std::unique_ptr<ClusterListener> listener_;  // last: stopped before the rest goes
};

}  // namespace boardlab::server
