#include "server/lab.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/target_spec.h"
#include "proto/support/digest.h"
#include "server/blob_access.h"
#include "server/clock.h"
#include "server/job_budgets.h"
#include "server/job_cases.h"
#include "server/lab_internal.h"
#include "server/log.h"

namespace boardlab::server {

using lab_internal::HasTags;
using lab_internal::OnBoard;
using lab_internal::ResultName;
using lab_internal::StateName;

namespace {

constexpr char kDefaultBoardType[] = "imxrt700-sim";
constexpr int kMaxPriority = 1000;
constexpr int kMaxIterations = 100000;

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
  return CheckCasesFitModel(run, record.input_bytes, record.output_bytes);
}

// Every blob the cases name, each checked once (a thousand cases may share an expected output).
absl::Status CheckCaseBlobs(BlobStore& blobs, Store& store, const Caller& caller,
                            const v1::RunSpec& run) {
  std::set<std::string> checked;
  const auto check = [&](const v1::RunCase& c, const v1::Digest& digest, const char* what,
                         int index) {
    if (!checked.insert(digest.sha256()).second) return absl::OkStatus();
    const std::string name = absl::StrCat("case '", c.name(), "' ", what, " ", index);
    return CheckBlob(blobs, store, caller, digest, name.c_str());
  };
  for (const v1::RunCase& c : run.cases()) {
    for (int i = 0; i < c.inputs_size(); ++i) {
      if (!c.inputs(i).has_blob()) continue;
      if (absl::Status ok = check(c, c.inputs(i).blob(), "input", i); !ok.ok()) return ok;
    }
    for (int i = 0; i < c.expected_size(); ++i) {
      if (absl::Status ok = check(c, c.expected(i), "expected output", i); !ok.ok()) return ok;
    }
  }
  return absl::OkStatus();
}

// The job's expected outputs come from the host reference run (expect_reference, and none given).
bool NeedsReference(const v1::RunSpec& run) {
  return run.expect_reference() && run.expected_size() == 0 &&
         (run.cases_size() == 0 || run.cases(0).expected_size() == 0);
}

}  // namespace

absl::StatusOr<v1::SubmitJobResponse> Lab::Submit(const Caller& caller,
                                                  const v1::SubmitJobRequest& request) {
  v1::JobSpec spec = request.spec();
  if (spec.selector().board_type().empty())
    spec.mutable_selector()->set_board_type(kDefaultBoardType);
  if (absl::Status ok = ValidateSpec(caller, spec); !ok.ok()) return ok;
  absl::StatusOr<SubmitLookup> lookup = LookUpForSubmit(caller, request, spec);
  if (!lookup.ok()) return lookup.status();
  if (absl::Status ok = CheckAgainstCachedCompile(spec, lookup->compile); !ok.ok()) return ok;
  // Read before the lock: whether the cache's blobs are all there is a question to the store.
  const std::optional<CompileRecord> hit =
      NeedsReference(spec.run()) ? std::nullopt : compiles_.UsableLookedUp(lookup->compile);

  std::unique_lock lock(mutex_);
  if (!request.request_id().empty()) {
    auto known = request_ids_.find({caller.tenant, request.request_id()});
    std::optional<v1::Job> original;
    if (known != request_ids_.end()) {
      original = FindJob(known->second)->job;
    } else if (cluster_ != nullptr) {
      // A job committed since the lookup fails this submit's commit (the unique index), which
      // then answers with that job (UndoSubmit).
      original = lookup->by_request_id;
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
  if (absl::Status ok = CheckTenantLimit(caller.tenant, cluster_ ? lookup->unfinished : -1);
      !ok.ok()) {
    return ok;
  }
  const int64_t number = cluster_ != nullptr ? lookup->number : next_job_number_++;

  auto entry = std::make_unique<JobEntry>();
  entry->number = number;
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
  SetState(e, v1::JOB_STATE_COMPILING);
  // A compile the cache holds is applied at once: the job's first commit writes it queued, one
  // commit fewer per job (most of a CI pipeline's jobs test a model compiled before).
  if (hit) ApplyCompile(e, *hit, CompileSource::kCache);
  v1::SubmitJobResponse response;
  *response.mutable_job() = e.job;  // a replica forgets a queued job once it is committed
  const std::string id = e.job.id();
  // The job is durable before we answer.
  claiming_next_ = cluster_ != nullptr && IdleBoardsForPendingQueued();
  absl::Status committed = CommitPending();
  claiming_next_ = false;
  if (!committed.ok()) return UndoSubmit(e, committed);
  metrics_.JobSubmitted(spec.selector().board_type());
  if (hit) {
    compiles_.CountHit();  // not before: a refused or deduplicated submit compiles nothing
    ScheduleCompiled(id);
  }
  Flush();
  lock.unlock();

  if (!hit) RequestCompile(id, spec, &lookup->compile);
  return response;
}

// Replicas read it all in one statement before the Lab's lock, so that other calls need not wait
// for that round trip (a number a submit does not use, deduplicated or refused, is a gap in the
// sequence, as a rolled back one would be). One server has the rest in memory.
absl::StatusOr<SubmitLookup> Lab::LookUpForSubmit(const Caller& caller,
                                                  const v1::SubmitJobRequest& request,
                                                  const v1::JobSpec& spec) {
  const std::string key = CompileService::CacheKey(spec.model(), spec.compile());
  if (cluster_ != nullptr) {
    return cluster_->LookUpForSubmit(caller.tenant, request.request_id(), key);
  }
  SubmitLookup lookup;
  auto cached = store_.GetCompile(key);
  if (!cached.ok()) return cached.status();
  lookup.compile = *std::move(cached);
  return lookup;
}

absl::StatusOr<v1::SubmitJobResponse> Lab::UndoSubmit(JobEntry& entry, absl::Status failed) {
  const v1::Job job = entry.job;  // ForgetJob destroys `entry`
  if (cluster_ == nullptr) metrics_.JobStateChanged(StateName(job.state()), "");
  // A failed commit is kept to retry (CommitPending), but not this job's part: the client was
  // told it failed.
  DropPendingWrites(entry);
  // A cached compile queued it (one server's queue; a replica's is the database's).
  if (cluster_ == nullptr && job.state() == v1::JOB_STATE_QUEUED) {
    Dequeue(entry);
  }
  ForgetJob(job.id());
  if (!absl::IsAlreadyExists(failed) || job.request_id().empty()) return failed;
  // Another replica committed a job for this request id after our look-up found none: the
  // client's retry would get that job, and so does this submit.
  auto winner = store_.FindJobByRequestId(job.tenant(), job.request_id());
  if (!winner.ok()) return winner.status();
  if (!winner->has_value()) {
    return absl::AbortedError(absl::StrCat("request id '", job.request_id(),
                                           "' was submitted at the same time through another "
                                           "server, whose job is gone already: submit again"));
  }
  LogInfo("submit answered with a concurrent submit's job",
          {{"job", (*winner)->id()}, {"tenant", job.tenant()}, {"request_id", job.request_id()}});
  v1::SubmitJobResponse response;
  *response.mutable_job() = **std::move(winner);
  response.set_deduplicated(true);
  return response;
}

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
  if (absl::Status ok = ValidateCases(run); !ok.ok()) return ok;
  if (absl::Status ok = CheckCaseBlobs(blobs_, store_, caller, run); !ok.ok()) return ok;
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
  if (absl::Status ok = ValidateBudgets(spec.budgets()); !ok.ok()) return ok;
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
  auto can_run = [&](const v1::Board& board) {
    types.insert(board.type());
    return board.type() == selector.board_type() &&
           (selector.board_id().empty() || selector.board_id() == board.id()) &&
           HasTags(board, selector.tags());
  };
  for (const auto& [id, board] : boards_) {
    if (can_run(board.board)) return absl::OkStatus();
  }
  if (cluster_ != nullptr) {
    // Boards of the other replicas' agents, as of the last poll; then as of now.
    for (int look = 0; look < 2; ++look) {
      for (const ClusterBoard& board : cluster_boards_) {
        if (can_run(board.board)) return absl::OkStatus();
      }
      if (look == 0) RefreshClusterBoards();
    }
  }
  std::string known;
  for (const auto& type : types) absl::StrAppend(&known, known.empty() ? "" : ", ", type);
  return absl::FailedPreconditionError(absl::StrCat(
      "no board of type '", selector.board_type(), "'",
      selector.board_id().empty() ? "" : absl::StrCat(" with id '", selector.board_id(), "'"),
      selector.tags_size() > 0 ? " with the requested tags" : "",
      " is registered with this server (known board types: ", known.empty() ? "none" : known, ")"));
}

// A model compiled before tells its tensor sizes at once: a mismatched request is refused at
// submit instead of being queued for a compile that would only find the same.
absl::Status Lab::CheckAgainstCachedCompile(const v1::JobSpec& spec,
                                            const std::optional<CompileRecord>& cached) {
  if (!cached.has_value() || !cached->error.empty()) return absl::OkStatus();
  return CheckRunFitsModel(spec.run(), *cached);
}

// One CI pipeline gone wild must not fill the server's memory and queues for everyone.
absl::Status Lab::CheckTenantLimit(const std::string& tenant, int64_t counted) const {
  const int64_t limit = config_.max_unfinished_jobs_per_tenant;
  auto it = unfinished_by_tenant_.find(tenant);
  const int64_t unfinished =
      counted >= 0 ? counted : (it == unfinished_by_tenant_.end() ? 0 : it->second);
  if (limit == 0 || unfinished < limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "tenant '", tenant, "' has ", unfinished,
      " unfinished jobs, the server's limit (max_unfinished_jobs_per_tenant): wait for some to "
      "finish or cancel them"));
}

void Lab::RequestCompile(const std::string& job_id, const v1::JobSpec& spec,
                         const std::optional<CompileRecord>* cached) {
  if (NeedsReference(spec.run())) {  // another key first: `cached` is not its entry
    v1::CompileOptions reference_options = spec.compile();
    reference_options.set_cpu_only(true);
    compiles_.Request(spec.model(), reference_options,
                      [this, job_id, spec](const CompileRecord& record, CompileSource) {
                        OnReferenceCompiled(job_id, spec, record);
                      });
    return;
  }
  auto done = [this, job_id](const CompileRecord& record, CompileSource source) {
    OnCompiled(job_id, record, source);
  };
  if (cached != nullptr) {
    compiles_.RequestLookedUp(spec.model(), spec.compile(), *cached, std::move(done));
  } else {
    compiles_.Request(spec.model(), spec.compile(), std::move(done));
  }
}

// The reference outputs become the job's expected outputs before the real compile runs.
void Lab::OnReferenceCompiled(const std::string& job_id, const v1::JobSpec& spec,
                              const CompileRecord& record) {
  // One list of expected outputs per case (one list for a single run).
  absl::StatusOr<std::vector<std::vector<v1::Digest>>> outputs =
      absl::FailedPreconditionError("this server cannot run reference models");
  const absl::Status fits =
      record.error.empty() ? CheckRunFitsModel(spec.run(), record) : absl::OkStatus();
  const int num_outputs = static_cast<int>(record.output_bytes.size());
  if (!record.error.empty()) {
    outputs = absl::InvalidArgumentError(record.error);
  } else if (!fits.ok()) {
    outputs = fits;
  } else if (reference_ && spec.run().cases_size() > 0) {
    outputs = reference_->RunCases(record.artifact, spec.run().cases(), num_outputs);
  } else if (reference_) {
    absl::StatusOr<std::vector<v1::Digest>> single =
        reference_->Run(record.artifact, spec.run().inputs(), num_outputs);
    if (single.ok()) {
      outputs = std::vector<std::vector<v1::Digest>>{*std::move(single)};
    } else {
      outputs = single.status();
    }
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
    if (!fits.ok()) {
      AddLog(*entry, std::string(fits.message()));
      Finish(*entry, v1::JOB_RESULT_INVALID_REQUEST, std::string(fits.message()));
      return;
    }
    if (!outputs.ok()) {
      Finish(*entry, v1::JOB_RESULT_RUN_ERROR,
             absl::StrCat("computing the reference outputs: ", outputs.status().message()));
      return;
    }
    v1::RunSpec& run = *entry->job.mutable_spec()->mutable_run();
    for (size_t c = 0; c < outputs->size(); ++c) {
      // A single run's expected outputs, or case c's.
      auto& expected = run.cases_size() > 0
                           ? *run.mutable_cases(static_cast<int>(c))->mutable_expected()
                           : *run.mutable_expected();
      for (const auto& digest : (*outputs)[c]) {
        *expected.Add() = digest;
        GrantToTenant(*entry, digest);
      }
    }
    with_expected = entry->job.spec();
    Persist(*entry);
    AddLog(*entry, run.cases_size() > 0
                       ? absl::StrCat("reference outputs computed on the host (CPU kernels, "
                                      "TFLite Micro arithmetic): ",
                                      outputs->size(), " cases, one load")
                       : absl::StrCat("reference outputs computed on the host (CPU kernels, "
                                      "TFLite Micro arithmetic): ",
                                      num_outputs, " output(s)"));
  }
  RequestCompile(job_id, with_expected);
}

void Lab::OnCompiled(const std::string& job_id, const CompileRecord& record, CompileSource source) {
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  JobEntry* entry = FindJob(job_id);
  if (!entry || entry->job.state() != v1::JOB_STATE_COMPILING) return;  // cancelled meanwhile
  if (ApplyCompile(*entry, record, source)) ScheduleCompiled(job_id);
}

bool Lab::ApplyCompile(JobEntry& entry, const CompileRecord& record, CompileSource source) {
  const double compile_seconds = (NowMs() - entry.state_since_ms) / 1000.0;
  CountWhenCommitted(entry.job.id(), [this, compile_seconds] {
    metrics_.StageDuration("compile", compile_seconds);
  });
  entry.job.set_compile_cache_hit(source == CompileSource::kCache);
  if (!record.error.empty()) {
    AddLog(entry, absl::StrCat("compile: ", record.error));
    Finish(entry, v1::JOB_RESULT_COMPILE_ERROR, record.error);
    return false;
  }
  if (absl::Status fits = CheckRunFitsModel(entry.job.spec().run(), record); !fits.ok()) {
    // The request, not the model, is wrong: its own verdict, not a compile error.
    AddLog(entry, std::string(fits.message()));
    Finish(entry, v1::JOB_RESULT_INVALID_REQUEST, std::string(fits.message()));
    return false;
  }
  entry.compiled = record;
  v1::JobFiles* files = entry.job.mutable_files();
  *files->mutable_artifact() = record.artifact;
  *files->mutable_report() = record.report;
  *files->mutable_debug_map() = record.debug_map;
  for (const v1::Digest* made : {&record.artifact, &record.report, &record.debug_map}) {
    GrantToTenant(entry, *made);
  }
  AddLog(entry, absl::StrCat("compiled", source == CompileSource::kCache ? " (cache hit)" : "",
                             ": artifact ", record.artifact.sha256().substr(0, 12), ", ",
                             record.artifact.size_bytes(), " bytes"));
  Enqueue(entry);
  return true;
}

void Lab::ScheduleCompiled(const std::string& job_id) {
  Schedule();
  // Replicas: a job still queued is in the database only (whichever replica claims it logs on).
  JobEntry* entry = FindJob(job_id);
  if (entry != nullptr && entry->job.state() == v1::JOB_STATE_QUEUED) LogWaiting(*entry);
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

void Lab::Persist(JobEntry& entry) {
  pending_.jobs[entry.number] = entry.job;
  if (cluster_ != nullptr) pending_runtimes_[entry.number] = RuntimeOf(entry);
}

void Lab::SetState(JobEntry& entry, v1::JobState state) {
  v1::JobState from = entry.job.state();
  // Replicas count jobs by state in the database (a job moves between them).
  if (cluster_ == nullptr) {
    metrics_.JobStateChanged(from == v1::JOB_STATE_UNSPECIFIED ? "" : StateName(from),
                             state == v1::JOB_STATE_DONE ? "" : StateName(state));
  }
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
  if (cluster_ != nullptr) {
    // Into the shared queue: dropped from memory once committed, claimed by whichever replica
    // has a free board (this one too).
    released_.push_back(entry.job.id());
    maybe_queued_.insert(entry.job.spec().selector().board_type());
    return;
  }
  AddToQueue(entry);
}

void Lab::Finish(JobEntry& entry, v1::JobResult result, const std::string& message) {
  if (entry.job.state() == v1::JOB_STATE_QUEUED) Dequeue(entry);
  LeaveBoard(entry);
  entry.job.set_result(result);
  entry.job.set_message(message);
  entry.job.set_end_time_ms(NowMs());
  CountWhenCommitted(entry.job.id(), [this, type = entry.job.spec().selector().board_type(),
                                      result] { metrics_.JobFinished(type, ResultName(result)); });
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

// Replicas: a job given back to the queue (it is claimed from the database again) or lost to
// another replica; both: a job whose submit was not committed.
void Lab::ForgetJob(const std::string& job_id) {
  JobEntry* entry = FindJob(job_id);
  if (entry == nullptr) return;
  if (entry->on_board) {
    running_by_tenant_[entry->job.tenant()]--;
    auto board = boards_.find(entry->job.board_id());
    if (board != boards_.end() && board->second.board.job_id() == job_id) {
      board->second.board.clear_job_id();
    }
  }
  request_ids_.erase({entry->job.tenant(), entry->job.request_id()});
  job_by_number_.erase(entry->number);
  if (--unfinished_by_tenant_[entry->job.tenant()] <= 0) {
    unfinished_by_tenant_.erase(entry->job.tenant());
  }
  jobs_.erase(job_id);
}

// What a job produced is its tenant's to download and reference (docs/security.md); the grant
// is committed with the job's change.
void Lab::GrantToTenant(const JobEntry& entry, const v1::Digest& digest) {
  if (!digest.sha256().empty()) pending_.blob_grants.emplace(entry.job.tenant(), digest.sha256());
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
  CountWhenCommitted(entry.job.id(), [this, type = entry.job.spec().selector().board_type()] {
    metrics_.Retry(type);
  });
  LogWarning("retrying job",
             {{"job", entry.job.id()}, {"board", entry.job.board_id()}, {"why", why}});
  AddLog(entry, absl::StrCat("attempt ", entry.job.attempt(), " on ", entry.job.board_id(),
                             " failed: ", why, "; retrying on another board"));
  Enqueue(entry);
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
  if (cluster_ != nullptr) SetQueuePlacesFromCluster({&*job});
  return *job;
}

absl::StatusOr<v1::Job> Lab::Cancel(const Caller& caller, const std::string& job_id) {
  auto job = GetJob(caller, job_id);
  if (!job.ok()) return job.status();
  std::lock_guard lock(mutex_);
  Flusher flush(*this);
  JobEntry* entry = FindJob(job_id);
  if (!entry) {
    // Finished (cancelling is a no-op), or, with replicas, queued or held by another replica.
    if (cluster_ == nullptr || job->state() == v1::JOB_STATE_DONE) return *job;
    return CancelElsewhere(job_id, *job);
  }
  if (!CancelHere(*entry)) return entry->job;
  Flush();  // the finished job is read back from the store
  auto stored = store_.GetJob(job_id);
  if (stored.ok() && stored->has_value()) return **stored;
  return *job;
}

bool Lab::CancelHere(JobEntry& entry) {
  if (!OnBoard(entry.job.state())) {
    Finish(entry, v1::JOB_RESULT_CANCELLED, "cancelled before it ran");
    return true;
  }
  entry.cancel_requested = true;
  AddLog(entry, "cancel requested");
  auto board = boards_.find(entry.job.board_id());
  if (board == boards_.end() || board->second.session_id.empty()) {
    // Nobody to tell: the agent is away; its late result will be ignored.
    Finish(entry, v1::JOB_RESULT_CANCELLED, "cancelled while its agent was disconnected");
    return true;
  }
  if (cluster_ != nullptr) Persist(entry);  // the request must outlive this replica
  v1::ServerMessage message;
  message.mutable_cancel()->set_job_id(entry.job.id());
  message.mutable_cancel()->set_attempt(entry.job.attempt());
  SendTo(board->second, message);
  return false;
}

absl::StatusOr<v1::ListJobsResponse> Lab::ListJobs(const Caller& caller,
                                                   const v1::ListJobsRequest& request) {
  JobFilter filter;
  for (int state : request.states()) filter.states.push_back(static_cast<v1::JobState>(state));
  filter.board_type = request.board_type();
  filter.labels.assign(request.labels().begin(), request.labels().end());
  for (int result : request.results()) filter.results.push_back(static_cast<v1::JobResult>(result));
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
  if (cluster_ != nullptr) {
    SetQueuePlacesFromCluster(jobs);
  } else {
    std::lock_guard lock(mutex_);
    SetQueuePlaces(jobs);
  }
  if (page->next_before > 0) response.set_next_page_token(std::to_string(page->next_before));
  return response;
}

absl::StatusOr<std::vector<v1::JobEvent>> Lab::WaitEvents(const Caller& caller,
                                                          const std::string& job_id,
                                                          int64_t after_seq, int64_t deadline_ms) {
  std::unique_lock lock(mutex_);
  for (;;) {
    JobEntry* entry = FindJob(job_id);
    if (!entry && cluster_ != nullptr) {
      // Queued, another replica's, or finished: the store has its events so far.
      auto events = WaitEventsElsewhere(lock, caller, job_id, after_seq, deadline_ms);
      if (!events.ok()) return events.status();
      if (events->has_value()) return **std::move(events);
      if (NowMs() >= deadline_ms) return std::vector<v1::JobEvent>();
      continue;
    }
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

void Lab::ExpireJobs(int64_t now) {
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
    CountWhenCommitted(entry->job.id(), [this] { metrics_.LeaseExpired(); });
    RetryOrFail(*entry, "the board's agent did not come back within its lease");
  }
  for (JobEntry* entry : timed_out) {
    Finish(*entry, v1::JOB_RESULT_QUEUE_TIMEOUT,
           "no matching board became free within the queue timeout");
  }
}
}  // namespace boardlab::server
