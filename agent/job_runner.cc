#include "agent/job_runner.h"

#include <boost/asio/post.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "runtime/cli/run_cases.h"

namespace boardlab::agent {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InternalError(absl::StrCat("reading '", path, "': cannot open it"));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Creates the board's work directory, or empties what the previous run left in it (its outputs
// directory is kept) unless the executor tells its own files from leftovers. Reusing it spares
// the event loop a mkdir and a recursive removal per job; emptying it keeps an old run's outputs
// or ETDump from being taken for this run's.
absl::Status PrepareWorkDir(const std::string& dir, bool keep_files) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (keep_files && !ec) return absl::OkStatus();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code removed;
    if (it->is_directory(removed)) {
      for (fs::directory_iterator in(it->path(), ec); !ec && in != end; in.increment(ec)) {
        fs::remove_all(in->path(), removed);
      }
    } else {
      fs::remove(it->path(), removed);
    }
  }
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot prepare the work directory '", dir, "': ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace

JobRunner::JobRunner(JobEnvironment env, v1::Assignment assignment, BoardConfig board,
                     EventFn report)
    : env_(std::move(env)),
      assignment_(std::move(assignment)),
      board_(std::move(board)),
      report_(std::move(report)),
      key_{assignment_.job_id(), assignment_.attempt()},
      log_timer_(*env_.io) {}

std::string JobRunner::work_dir() const {
  // One per board, reused from run to run (a board runs one job at a time). Ids come from the
  // configuration and the server; only safe characters reach the file system.
  std::string name = board_.id;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  }
  return (fs::path(env_.work_root) / name).string();
}

double JobRunner::SecondsSince(std::chrono::steady_clock::time_point start) const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void JobRunner::Start() {
  stage_start_ = std::chrono::steady_clock::now();
  OnLine(absl::StrCat("boardlab-agent: job ", ToString(key_), " on board ", board_.id, " (",
                      board_.type, "): loading"));
  boost::asio::post(*env_.transfers, [self = shared_from_this()] {
    Fetched fetched;
    const auto fetch = [&](const v1::Digest& digest, const char* what, std::string& path) -> bool {
      absl::StatusOr<std::string> p = self->env_.cache->Fetch(digest);
      if (!p.ok()) {
        fetched.status = absl::Status(
            p.status().code(), absl::StrCat("Failed to obtain ", what, ": ", p.status().message()));
        return false;
      }
      path = *p;
      return true;
    };
    bool ok = true;
    const bool keep_files = self->env_.executor->ReportsOnlyItsOwnFiles();
    if (absl::Status prepared = PrepareWorkDir(self->work_dir(), keep_files); !prepared.ok()) {
      fetched.status = prepared;
      ok = false;
    }
    ok = ok && fetch(self->assignment_.artifact(), "the artifact", fetched.artifact);
    for (int i = 0; ok && i < self->assignment_.inputs_size(); ++i) {
      const v1::InputSpec& input = self->assignment_.inputs(i);
      std::string value;
      if (input.has_blob()) {
        ok = fetch(input.blob(), "an input", value);
      } else if (input.source_case() == v1::InputSpec::kRandomSeed) {
        value = absl::StrCat("random:", input.random_seed());
      } else {
        value = absl::StrCat("random:", i);  // types.proto: missing inputs are random:<index>
      }
      fetched.inputs.push_back(value);
    }
    for (int i = 0; ok && i < self->assignment_.expected_size(); ++i) {
      std::string path;
      ok = fetch(self->assignment_.expected(i), "an expected output", path);
      fetched.expected.push_back(path);
    }
    if (ok && self->assignment_.cases_size() > 0) self->FetchCases(fetched);
    boost::asio::post(*self->env_.io, [self, fetched = std::move(fetched)]() mutable {
      self->OnFetched(std::move(fetched));
    });
  });
}

bool JobRunner::FetchCases(Fetched& fetched) {
  std::vector<run::CaseFiles> cases;
  for (const v1::RunCase& c : assignment_.cases()) {
    run::CaseFiles files{c.name(), {}, {}};
    for (const v1::InputSpec& input : c.inputs()) {
      std::string value = absl::StrCat("random:", input.random_seed());
      if (input.has_blob()) {
        absl::StatusOr<std::string> path = env_.cache->Fetch(input.blob());
        if (!path.ok()) {
          fetched.status = absl::Status(
              path.status().code(), absl::StrCat("Failed to obtain an input of case '", c.name(),
                                                 "': ", path.status().message()));
          return false;
        }
        value = *path;
      }
      files.inputs.push_back(value);
    }
    for (const v1::Digest& expected : c.expected()) {
      absl::StatusOr<std::string> path = env_.cache->Fetch(expected);
      if (!path.ok()) {
        fetched.status = absl::Status(path.status().code(),
                                      absl::StrCat("Failed to obtain an expected output of case '",
                                                   c.name(), "': ", path.status().message()));
        return false;
      }
      files.expected.push_back(*path);
    }
    cases.push_back(std::move(files));
  }
  fetched.cases_manifest = (fs::path(work_dir()) / "cases.json").string();
  std::ofstream out(fetched.cases_manifest, std::ios::trunc);
  if (!(out << run::CaseManifestJson(cases) << "\n")) {
    fetched.status = absl::InternalError(
        absl::StrCat("cannot write the case manifest '", fetched.cases_manifest, "'"));
    return false;
  }
  return true;
}

void JobRunner::OnFetched(Fetched fetched) {
  load_seconds_ = SecondsSince(stage_start_);
  if (cancelled_) {
    v1::RunResult result;
    result.set_outcome(v1::RUN_OUTCOME_CANCELLED);
    result.set_message("cancelled before the run started");
    return Finish(std::move(result));
  }
  if (!fetched.status.ok()) {
    v1::RunResult result;
    result.set_outcome(v1::RUN_OUTCOME_BOARD_ERROR);
    result.set_message(std::string(fetched.status.message()));
    OnLine(absl::StrCat("boardlab-agent: ", fetched.status.message()));
    return Finish(std::move(result));
  }
  BoardRunRequest request;
  request.board_id = board_.id;
  request.artifact_path = fetched.artifact;
  request.artifact_sha256 = assignment_.artifact().sha256();
  request.inputs = std::move(fetched.inputs);
  request.expected = std::move(fetched.expected);
  request.atol = assignment_.atol();
  request.iterations = std::max(1, assignment_.iterations());
  request.timeout_seconds = assignment_.timeout_seconds() > 0 ? assignment_.timeout_seconds()
                            : board_.timeout_seconds > 0      ? board_.timeout_seconds
                                                              : kDefaultRunTimeoutSeconds;
  request.work_dir = work_dir();
  request.health_check = assignment_.health_check();
  request.cases_manifest = fetched.cases_manifest;
  request.cases_verified = assignment_.cases_size() > 0 && assignment_.cases(0).expected_size() > 0;
  ReportStage(v1::JOB_STATE_RUNNING);
  stage_start_ = std::chrono::steady_clock::now();
  std::weak_ptr<JobRunner> weak = weak_from_this();
  run_ = env_.executor->Start(
      request,
      [weak](std::string line) {
        if (auto self = weak.lock()) self->OnLine(std::move(line));
      },
      [weak](BoardReport report) {
        if (auto self = weak.lock()) self->OnBoardDone(std::move(report));
      });
}

void JobRunner::OnLine(std::string line) {
  if (full_log_.size() + line.size() < kMaxLogBytes) {
    absl::StrAppend(&full_log_, line, "\n");
  } else {
    dropped_log_bytes_ += line.size() + 1;
  }
  pending_lines_.push_back(std::move(line));
  if (pending_lines_.size() >= kLogBatchLines) return FlushLogs();
  if (pending_lines_.size() == 1) {
    log_timer_.expires_after(kLogBatchDelay);
    log_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      if (auto self = weak.lock(); self && !ec) self->FlushLogs();
    });
  }
}

void JobRunner::FlushLogs() {
  log_timer_.cancel();
  if (pending_lines_.empty()) return;
  std::vector<std::string> lines;
  lines.swap(pending_lines_);
  report_(JobLogs{key_, std::move(lines)});
}

void JobRunner::ReportStage(v1::JobState stage) {
  JobStage event{key_, stage, {}};
  if (env_.stage_lines) {  // the lines so far go with the stage: the server writes both at once
    log_timer_.cancel();
    event.lines.swap(pending_lines_);
  }
  report_(std::move(event));
}

void JobRunner::Cancel() {
  if (cancelled_ || finished_) return;
  cancelled_ = true;
  OnLine("boardlab-agent: cancel requested");
  if (run_ != nullptr) run_->Cancel();
}

void JobRunner::OnBoardDone(BoardReport report) {
  run_seconds_ = SecondsSince(stage_start_);
  if (report.outcome == v1::RUN_OUTCOME_CANCELLED || cancelled_) {
    v1::RunResult result;
    result.set_outcome(v1::RUN_OUTCOME_CANCELLED);
    result.set_message(report.outcome == v1::RUN_OUTCOME_CANCELLED
                           ? report.message
                           : "cancelled; the run had already ended");
    result.set_load_seconds(load_seconds_);
    result.set_run_seconds(run_seconds_);
    return Finish(std::move(result));
  }
  ReportStage(v1::JOB_STATE_COLLECTING);
  FlushLogs();  // a server that takes no lines with a stage
  stage_start_ = std::chrono::steady_clock::now();
  collecting_ = true;
  std::string log = full_log_;
  if (dropped_log_bytes_ > 0) {
    absl::StrAppend(&log, "boardlab-agent: ", dropped_log_bytes_, " more bytes of log dropped\n");
  }
  boost::asio::post(*env_.transfers, [self = shared_from_this(), report = std::move(report),
                                      log = std::move(log)] {
    v1::RunResult result;
    result.set_outcome(report.outcome);
    result.set_message(report.message);
    for (const v1::OutputCheck& check : report.checks) *result.add_checks() = check;
    result.set_inference_us(report.inference_us);
    result.set_inference_clock(report.inference_clock);
    result.set_inference_cycles(report.inference_cycles);
    absl::Status status = self->UploadResults(report, log, result);
    if (!status.ok()) {
      // The board ran, but its results did not reach the store: an infrastructure failure.
      result.set_outcome(v1::RUN_OUTCOME_BOARD_ERROR);
      result.set_message(std::string(status.message()));
    }
    boost::asio::post(*self->env_.io, [self, result = std::move(result)]() mutable {
      self->Finish(std::move(result));
    });
  });
}

absl::Status JobRunner::UploadResults(const BoardReport& report, const std::string& log,
                                      v1::RunResult& result) {
  // Files first, then every blob in one PutAll: one question to the store for all of them.
  std::vector<std::string> files;
  std::vector<const std::string*> paths;  // the outputs, then each case's outputs
  for (const std::string& path : report.output_paths) paths.push_back(&path);
  for (const CaseReport& c : report.cases) {
    for (const std::string& path : c.output_paths) paths.push_back(&path);
  }
  for (const std::string* path : paths) {
    absl::StatusOr<std::string> bytes = ReadFileBytes(*path);
    if (!bytes.ok()) return bytes.status();
    files.push_back(*std::move(bytes));
  }
  if (!report.etdump_path.empty()) {
    absl::StatusOr<std::string> bytes = ReadFileBytes(report.etdump_path);
    if (!bytes.ok()) return bytes.status();
    files.push_back(*std::move(bytes));
  }
  std::vector<std::string_view> blobs(files.begin(), files.end());
  if (!report.profile_json.empty()) blobs.push_back(report.profile_json);
  const bool inline_log = env_.inline_logs && log.size() <= kMaxInlineLogBytes;
  if (inline_log) {
    result.set_log_text(log);
  } else {
    blobs.push_back(log);
  }
  absl::StatusOr<std::vector<v1::Digest>> digests =
      blobs.empty() ? std::vector<v1::Digest>() : env_.blobs->PutAll(blobs);
  if (!digests.ok()) {
    return absl::Status(digests.status().code(),
                        absl::StrCat("Failed to upload the results: ", digests.status().message()));
  }
  size_t next = 0;
  for (size_t i = 0; i < report.output_paths.size(); ++i)
    *result.add_outputs() = (*digests)[next++];
  for (const CaseReport& c : report.cases) {
    v1::CaseResult* case_result = result.add_cases();
    *case_result = c.result;
    for (size_t i = 0; i < c.output_paths.size(); ++i)
      *case_result->add_outputs() = (*digests)[next++];
  }
  if (!report.etdump_path.empty()) *result.mutable_etdump() = (*digests)[next++];
  if (!report.profile_json.empty()) *result.mutable_profile() = (*digests)[next++];
  if (!inline_log) *result.mutable_log() = (*digests)[next];
  return absl::OkStatus();
}

void JobRunner::Finish(v1::RunResult result) {
  if (finished_) return;
  finished_ = true;
  FlushLogs();
  result.set_load_seconds(load_seconds_);
  result.set_run_seconds(run_seconds_);
  if (collecting_) result.set_collect_seconds(SecondsSince(stage_start_));
  run_.reset();
  report_(JobDone{key_, std::move(result)});
}

}  // namespace boardlab::agent
