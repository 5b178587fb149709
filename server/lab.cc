#include "server/lab.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/target_spec.h"
#include "proto/support/digest.h"
#include "server/blob_access.h"
#include "server/clock.h"
#include "server/log.h"

namespace boardlab::server {
namespace {

constexpr char kDefaultBoardType[] = "imxrt700-sim";
constexpr int kMaxPriority = 1000;
constexpr int kMaxIterations = 100000;
constexpr int kFairShareScan = 512;  // queued jobs looked at per pick beyond the first match
constexpr int64_t kHealthCheckRetryMs = 30000;
// After a server restart, agents need a moment to notice and reconnect: an agent's own backoff
// grows to 5 s and the gRPC channel's to 2 s, so a job waits this long (plus one lease) for its
// agent before it is retried elsewhere.
constexpr int64_t kRestartGraceMs = 15000;

std::string StateName(v1::JobState state) {
  std::string name = v1::JobState_Name(state);
  return absl::AsciiStrToLower(name.substr(std::string("JOB_STATE_").size()));
}

std::string ResultName(v1::JobResult result) {
  std::string name = v1::JobResult_Name(result);
  return absl::AsciiStrToLower(name.substr(std::string("JOB_RESULT_").size()));
}

std::string BoardStateName(v1::BoardState state) {
  std::string name = v1::BoardState_Name(state);
  return absl::AsciiStrToLower(name.substr(std::string("BOARD_STATE_").size()));
}

bool OnBoard(v1::JobState state) {
  return state == v1::JOB_STATE_ASSIGNED || state == v1::JOB_STATE_LOADING ||
         state == v1::JOB_STATE_RUNNING || state == v1::JOB_STATE_COLLECTING;
}

// The blobs an agent fetches to run a job: its artifact, inputs and expected outputs.
bool JobNeedsBlob(const v1::Job& job, const std::string& sha256) {
  if (job.files().artifact().sha256() == sha256) return true;
  for (const auto& input : job.spec().run().inputs()) {
    if (input.has_blob() && input.blob().sha256() == sha256) return true;
  }
  for (const auto& expected : job.spec().run().expected()) {
    if (expected.sha256() == sha256) return true;
  }
  return false;
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

// A blob a submit refers to must be the tenant's (docs/security.md) and is touched: retention
// must not delete it under the new job. Another tenant's blob is "not in the store" like a
// missing one.
absl::Status CheckBlob(BlobStore& blobs, Store& store, const Caller& caller,
                       const v1::Digest& digest, const char* what) {
  if (!api::IsValidSha256Hex(digest.sha256())) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": '", digest.sha256(), "' is not a SHA-256 digest"));
  }
  absl::StatusOr<bool> usable = TenantMayUse(store, caller, digest.sha256());
  if (!usable.ok()) return usable.status();
  if (!*usable || !blobs.Has(digest)) {
    return absl::NotFoundError(absl::StrCat(what, " ", api::DigestString(digest),
                                            " is not in the artifact store: upload it first"));
  }
  blobs.Touch(digest);
  return absl::OkStatus();
}

// The job's inputs and expected outputs against the model's tensors (sizes from its compile).
absl::Status CheckRunFitsModel(const v1::RunSpec& run, const CompileRecord& record) {
  if (run.inputs_size() > static_cast<int>(record.input_bytes.size()) ||
      run.expected_size() > static_cast<int>(record.output_bytes.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("the job gives ", run.inputs_size(), " inputs and ", run.expected_size(),
                     " expected outputs; the model has ", record.input_bytes.size(), " and ",
                     record.output_bytes.size()));
  }
  for (int i = 0; i < run.inputs_size(); ++i) {
    if (run.inputs(i).has_blob() && run.inputs(i).blob().size_bytes() != record.input_bytes[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " has ", run.inputs(i).blob().size_bytes(),
                       " bytes; the model's input ", i, " needs ", record.input_bytes[i]));
    }
  }
  for (int i = 0; i < run.expected_size(); ++i) {
    if (run.expected(i).size_bytes() != record.output_bytes[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected output ", i, " has ", run.expected(i).size_bytes(),
                       " bytes; the model's output ", i, " has ", record.output_bytes[i]));
    }
  }
  return absl::OkStatus();
}

}  // namespace

Lab::Lab(const ServerConfig& config, Store& store, BlobStore& blobs, CompileService& compiles,
         Metrics& metrics, ReferenceRunner* reference)
    : config_(config),
      store_(store),
      blobs_(blobs),
      compiles_(compiles),
      metrics_(metrics),
      reference_(reference) {}

std::string Lab::JobId(int64_t number) const { return absl::StrFormat("j%08d", number); }

int64_t Lab::LeaseMs() const {
  return int64_t{config_.heartbeat_interval_ms} * config_.missed_heartbeats;
}

// ---------------------------------------------------------------------------------------------
// Recovery.

absl::Status Lab::Recover() {
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
  BoardEntry& board = boards_[stored.id()];
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
  metrics_.JobStateChanged("", StateName(e.job.state()));
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

// ---------------------------------------------------------------------------------------------
// Submission.

absl::Status Lab::ValidateSpec(const Caller& caller, const v1::JobSpec& spec) {
  if (!spec.has_model()) return absl::InvalidArgumentError("the job names no model digest");
  if (absl::Status ok = CheckBlob(blobs_, store_, caller, spec.model(), "model"); !ok.ok())
    return ok;
  auto options = CompileService::ToCompilerOptions(spec.compile());
  if (!options.ok()) return options.status();
  if (auto target = compiler::LoadTargetSpec(options->target); !target.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("target: ", target.status().message()));
  }
  for (int i = 0; i < spec.run().inputs_size(); ++i) {
    const auto& input = spec.run().inputs(i);
    if (input.has_blob()) {
      std::string what = absl::StrCat("input ", i);
      if (absl::Status ok = CheckBlob(blobs_, store_, caller, input.blob(), what.c_str());
          !ok.ok()) {
        return ok;
      }
    } else if (input.source_case() == v1::InputSpec::SOURCE_NOT_SET) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " has neither a blob nor a seed"));
    }
  }
  for (int i = 0; i < spec.run().expected_size(); ++i) {
    std::string what = absl::StrCat("expected output ", i);
    if (absl::Status ok = CheckBlob(blobs_, store_, caller, spec.run().expected(i), what.c_str());
        !ok.ok()) {
      return ok;
    }
  }
  const v1::RunSpec& run = spec.run();
  if (run.expect_reference() && run.expected_size() > 0) {
    return absl::InvalidArgumentError("give expected outputs or expect_reference, not both");
  }
  if (run.atol() < 0 || run.atol() > 255) {
    return absl::InvalidArgumentError(absl::StrCat("atol ", run.atol(), " is not in [0, 255]"));
  }
  if (run.iterations() < 0 || run.iterations() > kMaxIterations) {
    return absl::InvalidArgumentError(
        absl::StrCat("iterations ", run.iterations(), " is not in [0, ", kMaxIterations, "]"));
  }
  if (run.timeout_seconds() < 0 || spec.queue_timeout_seconds() < 0) {
    return absl::InvalidArgumentError("timeouts must not be negative");
  }
  if (std::abs(spec.priority()) > kMaxPriority) {
    return absl::InvalidArgumentError(absl::StrCat("priority ", spec.priority(), " is not in [-",
                                                   kMaxPriority, ", ", kMaxPriority, "]"));
  }
  return absl::OkStatus();
}

// A job no registered board could ever run is refused at once rather than left to time out.
absl::Status Lab::CheckSomeBoardCanRun(const v1::JobSpec& spec) {
  const v1::BoardSelector& selector = spec.selector();
  std::set<std::string> types;
  for (const auto& [id, board] : boards_) {
    types.insert(board.board.type());
    if (board.board.type() != selector.board_type()) continue;
    if (!selector.board_id().empty() && selector.board_id() != id) continue;
    if (!HasTags(board.board, selector.tags())) continue;
    return absl::OkStatus();
  }
  std::string known;
  for (const auto& type : types) absl::StrAppend(&known, known.empty() ? "" : ", ", type);
  return absl::FailedPreconditionError(absl::StrCat(
      "no board of type '", selector.board_type(), "'",
      selector.board_id().empty() ? "" : absl::StrCat(" with id '", selector.board_id(), "'"),
      selector.tags_size() > 0 ? " with the requested tags" : "",
      " is registered with this server (known board types: ", known.empty() ? "none" : known, ")"));
}

absl::StatusOr<v1::SubmitJobResponse> Lab::Submit(const Caller& caller,
                                                  const v1::SubmitJobRequest& request) {
  v1::JobSpec spec = request.spec();
  if (spec.selector().board_type().empty())
    spec.mutable_selector()->set_board_type(kDefaultBoardType);
  if (absl::Status ok = ValidateSpec(caller, spec); !ok.ok()) return ok;
  if (absl::Status ok = CheckAgainstCachedCompile(spec); !ok.ok()) return ok;

  std::unique_lock lock(mutex_);
  if (!request.request_id().empty()) {
    auto known = request_ids_.find({caller.tenant, request.request_id()});
    std::optional<v1::Job> original;
    if (known != request_ids_.end()) {
      original = FindJob(known->second)->job;
    } else {
      auto stored = store_.FindJobByRequestId(caller.tenant, request.request_id());
      if (!stored.ok()) return stored.status();
      original = *stored;
    }
    if (original) {
      v1::SubmitJobResponse response;
      *response.mutable_job() = *original;
      response.set_deduplicated(true);
      return response;
    }
  }
  if (absl::Status ok = CheckSomeBoardCanRun(spec); !ok.ok()) return ok;
  if (absl::Status ok = CheckTenantLimit(caller.tenant); !ok.ok()) return ok;

  auto entry = std::make_unique<JobEntry>();
  entry->number = next_job_number_++;
  v1::Job& job = entry->job;
  job.set_id(JobId(entry->number));
  job.set_tenant(caller.tenant);
  job.set_request_id(request.request_id());
  *job.mutable_spec() = spec;
  job.set_submit_time_ms(NowMs());
  JobEntry& e = *entry;
  unfinished_by_tenant_[caller.tenant]++;
  jobs_[job.id()] = std::move(entry);
  job_by_number_[e.number] = e.job.id();
  if (!e.job.request_id().empty()) request_ids_[{caller.tenant, e.job.request_id()}] = e.job.id();
  metrics_.JobSubmitted(spec.selector().board_type());
  SetState(e, v1::JOB_STATE_COMPILING);  // persists: the job is durable before we answer
  v1::SubmitJobResponse response;
  *response.mutable_job() = e.job;
  std::string id = e.job.id();
  Flush();
  lock.unlock();

  RequestCompile(id, spec);
  return response;
}

// A model compiled before tells its tensor sizes at once: a mismatched request is refused at
// submit instead of being queued for a compile that would only find the same.
absl::Status Lab::CheckAgainstCachedCompile(const v1::JobSpec& spec) {
  auto cached = store_.GetCompile(CompileService::CacheKey(spec.model(), spec.compile()));
  if (!cached.ok()) return cached.status();
  if (!cached->has_value() || !(*cached)->error.empty()) return absl::OkStatus();
  return CheckRunFitsModel(spec.run(), **cached);
}

// One CI pipeline gone wild must not fill the server's memory and queues for everyone.
absl::Status Lab::CheckTenantLimit(const std::string& tenant) const {
  const int64_t limit = config_.max_unfinished_jobs_per_tenant;
  auto it = unfinished_by_tenant_.find(tenant);
  if (limit == 0 || it == unfinished_by_tenant_.end() || it->second < limit) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "tenant '", tenant, "' has ", it->second,
      " unfinished jobs, the server's limit (max_unfinished_jobs_per_tenant): wait for some to "
      "finish or cancel them"));
}

void Lab::RequestCompile(const std::string& job_id, const v1::JobSpec& spec) {
  if (spec.run().expect_reference() && spec.run().expected_size() == 0) {
    v1::CompileOptions reference_options = spec.compile();
    reference_options.set_cpu_only(true);
    compiles_.Request(spec.model(), reference_options,
                      [this, job_id, spec](const CompileRecord& record, CompileSource) {
                        OnReferenceCompiled(job_id, spec, record);
                      });
    return;
  }
  compiles_.Request(spec.model(), spec.compile(),
                    [this, job_id](const CompileRecord& record, CompileSource source) {
                      OnCompiled(job_id, record, source);
                    });
}

// The reference outputs become the job's expected outputs before the real compile runs.
void Lab::OnReferenceCompiled(const std::string& job_id, const v1::JobSpec& spec,
                              const CompileRecord& record) {
  absl::StatusOr<std::vector<v1::Digest>> outputs =
      absl::FailedPreconditionError("this server cannot run reference models");
  if (!record.error.empty()) {
    outputs = absl::InvalidArgumentError(record.error);
  } else if (reference_) {
    outputs = reference_->Run(record.artifact, spec.run().inputs(),
                              static_cast<int>(record.output_bytes.size()));
  }
  v1::JobSpec with_expected = spec;
  {
    std::lock_guard lock(mutex_);
    Flusher flush(*this);
    JobEntry* entry = FindJob(job_id);
    if (!entry || entry->job.state() != v1::JOB_STATE_COMPILING) return;
    if (!record.error.empty()) {
      Finish(*entry, v1::JOB_RESULT_COMPILE_ERROR, record.error);
      return;
    }
    if (!outputs.ok()) {
      Finish(*entry, v1::JOB_RESULT_RUN_ERROR,
             absl::StrCat("computing the reference outputs: ", outputs.status().message()));
      return;
    }
    for (const auto& digest : *outputs) {
      *entry->job.mutable_spec()->mutable_run()->add_expected() = digest;
      GrantToTenant(*entry, digest);
    }
    with_expected = entry->job.spec();
    Persist(*entry);
    AddLog(*entry, absl::StrCat("reference outputs computed on the host (CPU kernels, TFLite "
                                "Micro arithmetic): ",
                                outputs->size(), " output(s)"));
  }
  RequestCompile(job_id, with_expected);
}

void Lab::OnCompiled(const std::string& job_id, const CompileRecord& record, CompileSource source) {
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  JobEntry* entry = FindJob(job_id);
  if (!entry || entry->job.state() != v1::JOB_STATE_COMPILING) return;  // cancelled meanwhile
  metrics_.StageDuration("compile", (NowMs() - entry->state_since_ms) / 1000.0);
  entry->job.set_compile_cache_hit(source == CompileSource::kCache);
  if (!record.error.empty()) {
    AddLog(*entry, absl::StrCat("compile: ", record.error));
    Finish(*entry, v1::JOB_RESULT_COMPILE_ERROR, record.error);
    return;
  }
  if (absl::Status fits = CheckRunFitsModel(entry->job.spec().run(), record); !fits.ok()) {
    // The request, not the model, is wrong: its own verdict, not a compile error.
    AddLog(*entry, std::string(fits.message()));
    Finish(*entry, v1::JOB_RESULT_INVALID_REQUEST, std::string(fits.message()));
    return;
  }
  entry->compiled = record;
  v1::JobFiles* files = entry->job.mutable_files();
  *files->mutable_artifact() = record.artifact;
  *files->mutable_report() = record.report;
  *files->mutable_debug_map() = record.debug_map;
  for (const v1::Digest* made : {&record.artifact, &record.report, &record.debug_map}) {
    GrantToTenant(*entry, *made);
  }
  AddLog(*entry, absl::StrCat("compiled", source == CompileSource::kCache ? " (cache hit)" : "",
                              ": artifact ", record.artifact.sha256().substr(0, 12), ", ",
                              record.artifact.size_bytes(), " bytes"));
  Enqueue(*entry);
  Schedule();
  if (entry->job.state() == v1::JOB_STATE_QUEUED) LogWaiting(*entry);
}

// ---------------------------------------------------------------------------------------------
// Job state.

Lab::JobEntry* Lab::FindJob(const std::string& job_id) {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

void Lab::AddEvent(JobEntry& entry, v1::JobEvent event) {
  event.set_job_id(entry.job.id());
  event.set_seq(entry.events.empty() ? 1 : entry.events.back().seq() + 1);
  event.set_time_ms(NowMs());
  event.set_attempt(entry.job.attempt());
  event.set_board_id(entry.job.board_id());
  pending_.events.push_back(event);
  entry.events.push_back(std::move(event));
  events_changed_.notify_all();
}

void Lab::AddLog(JobEntry& entry, const std::string& line) {
  v1::JobEvent event;
  event.set_log(line);
  AddEvent(entry, std::move(event));
}

void Lab::Persist(JobEntry& entry) { pending_.jobs[entry.number] = entry.job; }

void Lab::Send(const AgentSessionPtr& session, const v1::ServerMessage& message) {
  outbox_.emplace_back(session, message);
}

// One commit for everything the call changed, then the messages that tell agents about it: a
// state is on disk before anyone hears of it, as with a write per change, at a commit per call.
void Lab::Flush() {
  if (!pending_.empty()) {
    if (absl::Status ok = store_.Commit(pending_); !ok.ok()) LogError(std::string(ok.message()));
    pending_.clear();
  }
  for (auto& [session, message] : outbox_) session->Send(message);
  outbox_.clear();
}

void Lab::SetState(JobEntry& entry, v1::JobState state) {
  v1::JobState from = entry.job.state();
  metrics_.JobStateChanged(from == v1::JOB_STATE_UNSPECIFIED ? "" : StateName(from),
                           state == v1::JOB_STATE_DONE ? "" : StateName(state));
  entry.job.set_state(state);
  entry.state_since_ms = NowMs();
  Persist(entry);
  v1::JobEvent event;
  event.set_state(state);
  AddEvent(entry, std::move(event));
}

void Lab::Enqueue(JobEntry& entry) {
  entry.job.set_board_id("");
  SetState(entry, v1::JOB_STATE_QUEUED);
  AddToQueue(entry);
}

void Lab::AddToQueue(const JobEntry& entry) {
  const std::string& type = entry.job.spec().selector().board_type();
  queues_[type].insert({-entry.job.spec().priority(), entry.number});
  queued_tenants_[type][entry.job.tenant()]++;
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
    // A job restored as QUEUED whose artifact must be compiled again is not in a queue yet.
    auto queue_of_type = queues_.find(type);
    if (queue_of_type == queues_.end()) continue;
    const auto& queue = queue_of_type->second;
    int32_t position = 0;
    size_t found = 0;
    for (auto it = queue.begin(); it != queue.end() && found < by_number.size(); ++it) {
      ++position;
      auto job = by_number.find(it->second);
      if (job == by_number.end()) continue;
      job->second->set_queue_position(position);
      job->second->set_queue_length(static_cast<int32_t>(queue.size()));
      ++found;
    }
  }
}

void Lab::LogWaiting(JobEntry& entry) {
  // The queue's length, not the job's place in it: the place costs a walk of the queue, too
  // much for every job while thousands wait (GetJob computes it when asked).
  const std::string& type = entry.job.spec().selector().board_type();
  std::map<std::string, int> boards_by_state;
  for (const auto& [id, board] : boards_) {
    if (board.board.type() == type) boards_by_state[BoardStateName(StateOf(board))]++;
  }
  std::vector<std::string> counts;
  for (const auto& [state, n] : boards_by_state) counts.push_back(absl::StrCat(n, " ", state));
  AddLog(entry, absl::StrCat("waiting for a board of type ", type, ": ", queues_[type].size(),
                             " queued; boards: ",
                             counts.empty() ? "none connected" : absl::StrJoin(counts, ", ")));
}

void Lab::Dequeue(JobEntry& entry) {
  const std::string& type = entry.job.spec().selector().board_type();
  if (queues_[type].erase({-entry.job.spec().priority(), entry.number}) > 0) {
    auto& tenants = queued_tenants_[type];
    if (--tenants[entry.job.tenant()] <= 0) tenants.erase(entry.job.tenant());
  }
  UpdateQueueMetrics(type);
}

void Lab::Finish(JobEntry& entry, v1::JobResult result, const std::string& message) {
  if (entry.job.state() == v1::JOB_STATE_QUEUED) Dequeue(entry);
  LeaveBoard(entry);
  entry.job.set_result(result);
  entry.job.set_message(message);
  entry.job.set_end_time_ms(NowMs());
  metrics_.JobFinished(entry.job.spec().selector().board_type(), ResultName(result));
  LogInfo("job finished", {{"job", entry.job.id()},
                           {"tenant", entry.job.tenant()},
                           {"result", ResultName(result)},
                           {"board", entry.job.board_id()},
                           {"attempt", std::to_string(entry.job.attempt())},
                           {"message", message}});
  SetState(entry, v1::JOB_STATE_DONE);
  v1::JobEvent event;
  *event.mutable_finished() = entry.job;
  AddEvent(entry, std::move(event));
  // Finished jobs live in the store only; watchers and GetJob read them there.
  request_ids_.erase({entry.job.tenant(), entry.job.request_id()});
  job_by_number_.erase(entry.number);
  if (--unfinished_by_tenant_[entry.job.tenant()] <= 0) {
    unfinished_by_tenant_.erase(entry.job.tenant());
  }
  std::string id = entry.job.id();  // erasing destroys `entry`
  jobs_.erase(id);
}

// What a job produced is its tenant's to download and reference (docs/security.md); the grant
// is committed with the job's change.
void Lab::GrantToTenant(const JobEntry& entry, const v1::Digest& digest) {
  if (!digest.sha256().empty()) pending_.blob_grants.emplace(entry.job.tenant(), digest.sha256());
}

bool Lab::AgentMayRead(const std::string& sha256) {
  std::lock_guard lock(mutex_);
  if (health_check_ready_ &&
      (sha256 == health_artifact_.artifact.sha256() || sha256 == health_input_.sha256() ||
       sha256 == health_expected_.sha256())) {
    return true;
  }
  for (const auto& [id, board] : boards_) {
    if (board.board.job_id().empty()) continue;
    JobEntry* entry = FindJob(board.board.job_id());
    if (entry != nullptr && JobNeedsBlob(entry->job, sha256)) return true;
  }
  return false;
}

void Lab::LeaveBoard(JobEntry& entry) {
  if (!entry.on_board) return;
  entry.on_board = false;
  running_by_tenant_[entry.job.tenant()]--;
  FreeBoard(entry.job.board_id());
}

void Lab::RetryOrFail(JobEntry& entry, const std::string& why) {
  LeaveBoard(entry);
  entry.failed_boards.insert(entry.job.board_id());
  entry.infra_failures++;
  if (entry.cancel_requested) {
    Finish(entry, v1::JOB_RESULT_CANCELLED, "cancelled");
    return;
  }
  if (entry.infra_failures > config_.retry_budget) {
    Finish(entry, v1::JOB_RESULT_INFRA_ERROR,
           absl::StrCat(why, " (", entry.infra_failures, " infrastructure failures; retry budget ",
                        config_.retry_budget, " used up)"));
    return;
  }
  metrics_.Retry(entry.job.spec().selector().board_type());
  LogWarning("retrying job",
             {{"job", entry.job.id()}, {"board", entry.job.board_id()}, {"why", why}});
  AddLog(entry, absl::StrCat("attempt ", entry.job.attempt(), " on ", entry.job.board_id(),
                             " failed: ", why, "; retrying on another board"));
  Enqueue(entry);
}

void Lab::FreeBoard(const std::string& board_id) {
  auto it = boards_.find(board_id);
  if (it == boards_.end()) return;
  it->second.board.clear_job_id();
  PersistBoard(it->second);
  UpdateBoardMetrics();
}

absl::StatusOr<v1::Job> Lab::GetJob(const Caller& caller, const std::string& job_id) {
  std::optional<v1::Job> job;
  {
    std::lock_guard lock(mutex_);
    if (JobEntry* entry = FindJob(job_id)) {
      job = entry->job;
      SetQueuePlaces({&*job});
    }
  }
  if (!job) {
    auto stored = store_.GetJob(job_id);
    if (!stored.ok()) return stored.status();
    job = *stored;
  }
  if (!job || (job->tenant() != caller.tenant && !caller.is_admin())) {
    return absl::NotFoundError(absl::StrCat("job '", job_id, "' does not exist"));
  }
  return *job;
}

absl::StatusOr<v1::Job> Lab::Cancel(const Caller& caller, const std::string& job_id) {
  auto job = GetJob(caller, job_id);
  if (!job.ok()) return job.status();
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  JobEntry* entry = FindJob(job_id);
  if (!entry) return *job;  // already finished: cancelling is a no-op
  v1::JobState state = entry->job.state();
  if (!OnBoard(state)) {
    Finish(*entry, v1::JOB_RESULT_CANCELLED, "cancelled before it ran");
    Flush();  // the finished job is read back from the store
    auto stored = store_.GetJob(job_id);
    if (stored.ok() && stored->has_value()) return **stored;
    return *job;
  }
  entry->cancel_requested = true;
  AddLog(*entry, "cancel requested");
  auto board = boards_.find(entry->job.board_id());
  if (board == boards_.end() || board->second.session_id.empty()) {
    // Nobody to tell: the agent is away; its late result will be ignored.
    Finish(*entry, v1::JOB_RESULT_CANCELLED, "cancelled while its agent was disconnected");
  } else {
    v1::ServerMessage message;
    message.mutable_cancel()->set_job_id(job_id);
    message.mutable_cancel()->set_attempt(entry->job.attempt());
    SendTo(board->second, message);
    return entry->job;
  }
  Flush();  // the finished job is read back from the store
  auto stored = store_.GetJob(job_id);
  if (stored.ok() && stored->has_value()) return **stored;
  return *job;
}

absl::StatusOr<v1::ListJobsResponse> Lab::ListJobs(const Caller& caller,
                                                   const v1::ListJobsRequest& request) {
  JobFilter filter;
  for (int state : request.states()) filter.states.push_back(static_cast<v1::JobState>(state));
  filter.board_type = request.board_type();
  filter.labels.assign(request.labels().begin(), request.labels().end());
  filter.tenant = caller.tenant;
  if (!request.tenant().empty()) {
    if (!caller.is_admin() && request.tenant() != caller.tenant) {
      return absl::PermissionDeniedError("only admins may list other tenants' jobs");
    }
    filter.tenant = request.tenant();
  } else if (caller.is_admin()) {
    filter.tenant = "";  // admins see everything by default
  }
  int page_size = request.page_size() <= 0 ? 50 : std::min(request.page_size(), 1000);
  int64_t before = 0;
  if (!request.page_token().empty()) {
    try {
      before = std::stoll(request.page_token());
    } catch (const std::exception&) {  // std::stoll reports bad input by exception only
      return absl::InvalidArgumentError("page_token is not one this server gave out");
    }
  }
  auto page = store_.ListJobs(filter, before, page_size);
  if (!page.ok()) return page.status();
  v1::ListJobsResponse response;
  for (auto& job : page->jobs) *response.add_jobs() = std::move(job);
  std::vector<v1::Job*> jobs;
  for (v1::Job& job : *response.mutable_jobs()) jobs.push_back(&job);
  std::lock_guard lock(mutex_);
  SetQueuePlaces(jobs);
  if (page->next_before > 0) response.set_next_page_token(std::to_string(page->next_before));
  return response;
}

absl::StatusOr<std::vector<v1::JobEvent>> Lab::WaitEvents(const Caller& caller,
                                                          const std::string& job_id,
                                                          int64_t after_seq, int64_t deadline_ms) {
  std::unique_lock lock(mutex_);
  for (;;) {
    JobEntry* entry = FindJob(job_id);
    if (!entry) break;  // finished (or unknown): the store has everything
    if (entry->job.tenant() != caller.tenant && !caller.is_admin()) {
      return absl::NotFoundError(absl::StrCat("job '", job_id, "' does not exist"));
    }
    if (!entry->events.empty() && entry->events.back().seq() > after_seq) {
      std::vector<v1::JobEvent> events;
      for (const auto& event : entry->events) {
        if (event.seq() > after_seq) events.push_back(event);
      }
      return events;
    }
    int64_t wait_ms = deadline_ms - NowMs();
    if (wait_ms <= 0) return std::vector<v1::JobEvent>();
    events_changed_.wait_for(lock, std::chrono::milliseconds(wait_ms));
  }
  lock.unlock();
  auto job = GetJob(caller, job_id);
  if (!job.ok()) return job.status();
  return store_.Events(job_id, after_seq);
}

// ---------------------------------------------------------------------------------------------
// Scheduling.

v1::BoardState Lab::StateOf(const BoardEntry& board) const {
  if (board.session_id.empty()) return v1::BOARD_STATE_OFFLINE;
  if (!board.board.job_id().empty()) return v1::BOARD_STATE_BUSY;
  if (board.quarantined) return v1::BOARD_STATE_QUARANTINED;
  if (board.maintenance) return v1::BOARD_STATE_MAINTENANCE;
  if (!board.lease_id.empty()) return v1::BOARD_STATE_RESERVED;
  return v1::BOARD_STATE_IDLE;
}

bool Lab::Schedulable(const BoardEntry& board) const {
  return StateOf(board) == v1::BOARD_STATE_IDLE && !board.health_check_running;
}

bool Lab::Matches(const JobEntry& entry, const BoardEntry& board) const {
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

Lab::JobEntry* Lab::PickJob(const BoardEntry& board) {
  auto queue = queues_.find(board.board.type());
  if (queue == queues_.end()) return nullptr;
  // With one tenant queued, the first match is the pick: no other tenant can have fewer running
  // jobs, and the scan for one would look at up to kFairShareScan jobs per board and pass.
  const bool one_tenant = queued_tenants_[board.board.type()].size() <= 1;
  JobEntry* best = nullptr;
  int64_t best_priority = 0;
  int best_running = 0;
  int scanned = 0;
  for (const auto& [negative_priority, number] : queue->second) {
    if (best && (negative_priority != best_priority || ++scanned > kFairShareScan)) break;
    JobEntry* candidate = FindJob(job_by_number_[number]);
    if (!candidate) continue;
    // Another job of the best's tenant has as many running jobs behind it: it cannot go first,
    // so it needs no closer look (this keeps a one-tenant queue's scan cheap).
    if (best && candidate->job.tenant() == best->job.tenant()) continue;
    if (!Matches(*candidate, board)) continue;
    const int running = running_by_tenant_[candidate->job.tenant()];
    // Same priority: the tenant with fewer running jobs goes first.
    if (!best || running < best_running) {
      if (!best) best_priority = negative_priority;
      best = candidate;
      best_running = running;
    }
    if (one_tenant) break;
  }
  return best;
}

void Lab::Schedule() {
  for (auto& [id, board] : boards_) {
    if (!Schedulable(board)) continue;
    if (JobEntry* job = PickJob(board)) Assign(*job, board);
  }
}

void Lab::SendTo(const BoardEntry& board, const v1::ServerMessage& message) {
  auto session = sessions_.find(board.session_id);
  if (session != sessions_.end()) Send(session->second.session, message);
}

void Lab::Assign(JobEntry& entry, BoardEntry& board) {
  Dequeue(entry);
  const std::string& type = board.board.type();
  metrics_.QueueWait(type, (NowMs() - entry.state_since_ms) / 1000.0);
  metrics_.StageDuration("queue", (NowMs() - entry.state_since_ms) / 1000.0);
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
  assign->set_atol(spec.run().atol());
  assign->set_iterations(spec.run().iterations() > 0 ? spec.run().iterations() : 1);
  assign->set_timeout_seconds(spec.run().timeout_seconds() > 0
                                  ? spec.run().timeout_seconds()
                                  : config_.default_run_timeout_seconds);
  SendTo(board, message);
}

// ---------------------------------------------------------------------------------------------
// Boards.

void Lab::PersistBoard(BoardEntry& board) { pending_.boards[board.board.id()] = BoardView(board); }

v1::Board Lab::BoardView(const BoardEntry& board) const {
  v1::Board view = board.board;
  view.set_state(StateOf(board));
  // Maintenance and quarantine outlive a busy or offline spell; the store must remember them.
  return view;
}

void Lab::UpdateBoardMetrics() {
  std::map<std::string, std::map<v1::BoardState, int>> counts;
  for (const auto& [id, board] : boards_) counts[board.board.type()][StateOf(board)]++;
  for (const auto& [type, by_state] : counts) {
    for (int s = v1::BOARD_STATE_IDLE; s <= v1::BOARD_STATE_QUARANTINED; ++s) {
      auto state = static_cast<v1::BoardState>(s);
      auto it = by_state.find(state);
      metrics_.BoardsInState(type, BoardStateName(state), it == by_state.end() ? 0 : it->second);
    }
  }
}

void Lab::UpdateQueueMetrics(const std::string& board_type) {
  metrics_.QueueDepth(board_type, static_cast<double>(queues_[board_type].size()));
}

std::vector<v1::Board> Lab::ListBoards(const std::string& board_type) {
  std::lock_guard lock(mutex_);
  std::vector<v1::Board> boards;
  for (const auto& [id, board] : boards_) {
    if (board_type.empty() || board.board.type() == board_type) boards.push_back(BoardView(board));
  }
  return boards;
}

std::map<std::string, int> Lab::QueuedJobs(const std::string& board_type) {
  std::lock_guard lock(mutex_);
  std::map<std::string, int> queued;
  for (const auto& [type, queue] : queues_) {
    if (!queue.empty() && (board_type.empty() || type == board_type)) {
      queued[type] = static_cast<int>(queue.size());
    }
  }
  return queued;
}

absl::StatusOr<v1::Board> Lab::GetBoard(const std::string& board_id) {
  std::lock_guard lock(mutex_);
  auto it = boards_.find(board_id);
  if (it == boards_.end()) {
    return absl::NotFoundError(absl::StrCat("board '", board_id, "' does not exist"));
  }
  return BoardView(it->second);
}

absl::StatusOr<v1::ReserveResponse> Lab::Reserve(const Caller& caller,
                                                 const v1::ReserveRequest& request) {
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  auto it = boards_.find(request.board_id());
  if (it == boards_.end()) {
    return absl::NotFoundError(absl::StrCat("board '", request.board_id(), "' does not exist"));
  }
  BoardEntry& board = it->second;
  int ttl = request.ttl_seconds() > 0 ? request.ttl_seconds() : 600;
  // A lease is its tenant's: another tenant holding its id can neither renew nor release it.
  bool renewing = !request.lease_id().empty() && request.lease_id() == board.lease_id &&
                  (caller.is_admin() || board.board.reserved_by() == caller.tenant);
  if (!renewing) {
    if (!board.lease_id.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "board '", board.board.id(), "' is reserved by ", board.board.reserved_by()));
    }
    if (StateOf(board) != v1::BOARD_STATE_IDLE) {
      return absl::FailedPreconditionError(absl::StrCat("board '", board.board.id(), "' is ",
                                                        BoardStateName(StateOf(board)),
                                                        "; only an idle board can be reserved"));
    }
    board.lease_id =
        api::Sha256Hex(absl::StrCat(board.board.id(), NowMs(), caller.tenant)).substr(0, 16);
    board.board.set_reserved_by(caller.tenant);
  }
  board.reserved_until_ms = NowMs() + int64_t{ttl} * 1000;
  board.board.set_lease_expires_ms(board.reserved_until_ms);
  UpdateBoardMetrics();
  v1::ReserveResponse response;
  response.set_lease_id(board.lease_id);
  *response.mutable_board() = BoardView(board);
  return response;
}

absl::StatusOr<v1::Board> Lab::Release(const Caller& caller, const v1::ReleaseRequest& request) {
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  auto it = boards_.find(request.board_id());
  if (it == boards_.end()) {
    return absl::NotFoundError(absl::StrCat("board '", request.board_id(), "' does not exist"));
  }
  BoardEntry& board = it->second;
  if (board.lease_id.empty()) return BoardView(board);
  if (!caller.is_admin() &&
      (board.lease_id != request.lease_id() || board.board.reserved_by() != caller.tenant)) {
    return absl::PermissionDeniedError("that lease id does not hold this board");
  }
  board.lease_id.clear();
  board.board.clear_reserved_by();
  board.board.set_lease_expires_ms(0);
  UpdateBoardMetrics();
  Schedule();
  return BoardView(board);
}

absl::StatusOr<v1::Board> Lab::SetMaintenance(const v1::SetMaintenanceRequest& request) {
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  auto it = boards_.find(request.board_id());
  if (it == boards_.end()) {
    return absl::NotFoundError(absl::StrCat("board '", request.board_id(), "' does not exist"));
  }
  BoardEntry& board = it->second;
  board.maintenance = request.on();
  if (request.on()) {
    board.board.set_reason(request.reason().empty() ? "maintenance" : request.reason());
  } else if (board.quarantined) {
    if (health_check_ready_) {
      board.next_health_check_ms = 0;  // check it now; it returns to service when it passes
    } else {
      board.quarantined = false;  // no golden model configured: the admin's word is final
      board.board.set_consecutive_failures(0);
      board.board.clear_reason();
    }
  } else {
    board.board.clear_reason();
  }
  PersistBoard(board);
  UpdateBoardMetrics();
  Schedule();
  return BoardView(board);
}

// ---------------------------------------------------------------------------------------------
// Agents.

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
    BoardEntry& board = boards_[info.id()];
    board.board.set_id(info.id());
    board.board.set_type(info.type());
    *board.board.mutable_tags() = info.tags();
    board.board.set_agent_id(hello.agent_id());
    board.session_id = session_id;
    entry.boards.push_back(info.id());
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
    BoardEntry& board = boards_[info.id()];
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
  for (const auto& job : hello.in_flight()) {
    JobEntry* entry = FindJob(job.job_id());
    bool current = entry && entry->job.attempt() == job.attempt() &&
                   entry->job.board_id() == job.board_id() && OnBoard(entry->job.state());
    if (!current && job.still_running()) {
      v1::ServerMessage cancel;
      cancel.mutable_cancel()->set_job_id(job.job_id());
      cancel.mutable_cancel()->set_attempt(job.attempt());
      Send(sessions_[session_by_agent_[hello.agent_id()]].session, cancel);
    }
  }
}

void Lab::AgentMessage(const std::string& session_id, const v1::AgentMessage& message) {
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  auto session = sessions_.find(session_id);
  if (session == sessions_.end()) return;  // replaced or expired
  session->second.last_seen_ms = NowMs();
  switch (message.kind_case()) {
    case v1::AgentMessage::kStage:
      OnStage(message.stage());
      break;
    case v1::AgentMessage::kLogs:
      OnLogs(message.logs());
      break;
    case v1::AgentMessage::kResult:
      OnResult(session_id, message.result());
      break;
    default:
      break;  // heartbeats only refresh last_seen_ms
  }
}

void Lab::OnStage(const v1::StageEvent& stage) {
  JobEntry* entry = FindJob(stage.job_id());
  if (!entry || entry->job.attempt() != stage.attempt() || !OnBoard(entry->job.state())) return;
  if (!OnBoard(stage.stage()) || stage.stage() <= entry->job.state()) return;
  SetState(*entry, stage.stage());
}

void Lab::OnLogs(const v1::LogLines& logs) {
  JobEntry* entry = FindJob(logs.job_id());
  if (!entry || entry->job.attempt() != logs.attempt() || !OnBoard(entry->job.state())) return;
  // One event per batch: the store writes one row, however chatty the board.
  if (logs.lines_size() > 0) AddLog(*entry, absl::StrJoin(logs.lines(), "\n"));
}

void Lab::CountBoardFailure(BoardEntry& board, bool failed, const std::string& message) {
  if (!failed) {
    board.board.set_consecutive_failures(0);
    return;
  }
  board.board.set_consecutive_failures(board.board.consecutive_failures() + 1);
  if (board.board.consecutive_failures() >= config_.quarantine_after && !board.quarantined) {
    board.quarantined = true;
    board.board.set_reason(absl::StrCat("quarantined after ", board.board.consecutive_failures(),
                                        " infrastructure failures in a row; last: ", message));
    board.next_health_check_ms = NowMs();
    metrics_.Quarantined(board.board.type());
    LogWarning("board quarantined",
               {{"board", board.board.id()}, {"reason", board.board.reason()}});
  }
}

void Lab::OnResult(const std::string& session_id, const v1::RunResult& result) {
  v1::ServerMessage ack;
  ack.mutable_ack()->set_job_id(result.job_id());
  ack.mutable_ack()->set_attempt(result.attempt());
  Send(sessions_[session_id].session, ack);

  auto board_it = boards_.find(result.board_id());
  if (board_it != boards_.end() && board_it->second.health_check_running &&
      absl::StartsWith(result.job_id(), "health-")) {
    OnHealthCheckResult(board_it->second, result);
    return;
  }
  JobEntry* entry = FindJob(result.job_id());
  if (!entry || entry->job.attempt() != result.attempt() || !OnBoard(entry->job.state()) ||
      entry->job.board_id() != result.board_id()) {
    return;  // a stale attempt: the job was retried elsewhere or finished; recorded once
  }
  if (board_it != boards_.end()) {
    CountBoardFailure(board_it->second, result.outcome() == v1::RUN_OUTCOME_BOARD_ERROR,
                      result.message());
  }
  metrics_.StageDuration("load", result.load_seconds());
  metrics_.StageDuration("run", result.run_seconds());
  metrics_.StageDuration("collect", result.collect_seconds());
  v1::Job& job = entry->job;
  v1::JobFiles* files = job.mutable_files();
  *files->mutable_outputs() = result.outputs();
  *files->mutable_etdump() = result.etdump();
  *files->mutable_profile() = result.profile();
  *files->mutable_log() = result.log();
  if (!result.log_text().empty()) {
    absl::StatusOr<v1::Digest> log = blobs_.Put(result.log_text());
    if (log.ok()) {
      *files->mutable_log() = *log;
    } else {
      LogError(absl::StrCat("storing the log of job ", job.id(), ": ", log.status().message()));
    }
  }
  for (const v1::Digest& output : files->outputs()) GrantToTenant(*entry, output);
  for (const v1::Digest* made : {&files->etdump(), &files->profile(), &files->log()}) {
    GrantToTenant(*entry, *made);
  }
  *job.mutable_checks() = result.checks();
  job.set_inference_us(result.inference_us());
  job.set_inference_cycles(result.inference_cycles());
  switch (result.outcome()) {
    case v1::RUN_OUTCOME_PASS:
      Finish(*entry, v1::JOB_RESULT_PASS, result.message());
      break;
    case v1::RUN_OUTCOME_FAIL:
      Finish(*entry, v1::JOB_RESULT_FAIL, result.message());
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

void Lab::OnHealthCheckResult(BoardEntry& board, const v1::RunResult& result) {
  board.health_check_running = false;
  if (result.outcome() == v1::RUN_OUTCOME_PASS) {
    board.quarantined = false;
    board.board.set_consecutive_failures(0);
    board.board.clear_reason();
  } else {
    board.board.set_reason(absl::StrCat("quarantined; health check failed: ", result.message()));
    board.next_health_check_ms = NowMs() + kHealthCheckRetryMs;
  }
  PersistBoard(board);
  UpdateBoardMetrics();
  Schedule();
}

void Lab::DetachSession(const std::string& session_id, bool lease_expired) {
  auto session = sessions_.find(session_id);
  if (session == sessions_.end()) return;
  int64_t now = NowMs();
  for (const std::string& board_id : session->second.boards) {
    BoardEntry& board = boards_[board_id];
    if (board.session_id != session_id) continue;
    board.session_id.clear();
    board.health_check_running = false;
    if (JobEntry* entry = FindJob(board.board.job_id())) {
      if (lease_expired) {
        metrics_.LeaseExpired();
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

// ---------------------------------------------------------------------------------------------
// Periodic work.

void Lab::Tick() {
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  int64_t now = NowMs();
  std::vector<std::string> silent;
  for (const auto& [id, session] : sessions_) {
    if (now - session.last_seen_ms > LeaseMs()) silent.push_back(id);
  }
  for (const auto& id : silent) {
    sessions_[id].session->Close();
    DetachSession(id, /*lease_expired=*/true);
  }
  std::vector<JobEntry*> expired;
  std::vector<JobEntry*> timed_out;
  for (auto& [id, entry] : jobs_) {
    if (OnBoard(entry->job.state()) && entry->lease_deadline_ms > 0 &&
        now > entry->lease_deadline_ms) {
      expired.push_back(entry.get());
    }
    if (entry->job.state() == v1::JOB_STATE_QUEUED) {
      int timeout = entry->job.spec().queue_timeout_seconds() > 0
                        ? entry->job.spec().queue_timeout_seconds()
                        : config_.default_queue_timeout_seconds;
      if (now - entry->state_since_ms > int64_t{timeout} * 1000) timed_out.push_back(entry.get());
    }
  }
  for (JobEntry* entry : expired) {
    metrics_.LeaseExpired();
    RetryOrFail(*entry, "the board's agent did not come back within its lease");
  }
  for (JobEntry* entry : timed_out) {
    Finish(*entry, v1::JOB_RESULT_QUEUE_TIMEOUT,
           "no matching board became free within the queue timeout");
  }
  for (auto& [id, board] : boards_) {
    if (!board.lease_id.empty() && now > board.reserved_until_ms) {
      board.lease_id.clear();
      board.board.clear_reserved_by();
      board.board.set_lease_expires_ms(0);
    }
  }
  StartHealthChecks(now);
  UpdateBoardMetrics();
  metrics_.BlobStoreBytes(static_cast<double>(blobs_.TotalBytes()));
  Schedule();
}

void Lab::SetHealthCheck(const CompileRecord& artifact, const v1::Digest& input,
                         const v1::Digest& expected) {
  std::lock_guard lock(mutex_);
  health_artifact_ = artifact;
  health_input_ = input;
  health_expected_ = expected;
  health_check_ready_ = true;
}

void Lab::StartHealthChecks(int64_t now) {
  if (!health_check_ready_) return;
  for (auto& [id, board] : boards_) {
    if (!board.quarantined || board.maintenance || board.health_check_running ||
        board.session_id.empty() || !board.board.job_id().empty() ||
        now < board.next_health_check_ms) {
      continue;
    }
    board.health_check_running = true;
    v1::ServerMessage message;
    v1::Assignment* assign = message.mutable_assign();
    assign->set_job_id(absl::StrCat("health-", id));
    assign->set_attempt(static_cast<int32_t>(++health_attempt_));
    assign->set_board_id(id);
    *assign->mutable_artifact() = health_artifact_.artifact;
    *assign->add_inputs()->mutable_blob() = health_input_;
    *assign->add_expected() = health_expected_;
    assign->set_iterations(1);
    assign->set_timeout_seconds(config_.default_run_timeout_seconds);
    assign->set_health_check(true);
    SendTo(board, message);
  }
}

int64_t Lab::QueuedJobsForTest() {
  std::lock_guard lock(mutex_);
  int64_t n = 0;
  for (const auto& [type, queue] : queues_) n += static_cast<int64_t>(queue.size());
  return n;
}

}  // namespace boardlab::server
