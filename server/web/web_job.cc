// WebApp's job page and the job's files (/jobs/<id>, /jobs/<id>/files/<name>).

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "proto/support/job_files.h"
#include "server/blob_access.h"
#include "server/web/web_app.h"

namespace boardlab::server::web {
namespace {

// Blobs up to this size are answered from memory; larger ones are streamed from their file.
constexpr int64_t kInMemoryBytes = 8 << 20;
// A longer log is linked, not shown on the page.
constexpr int64_t kShownLogBytes = 1 << 20;

// A downloaded file is no page: nothing in it runs, even when opened in the browser.
constexpr char kFilePolicy[] = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

// The names of the files drawn from the job's ETDump, as `boardlab --out` names them.
constexpr char kTraceFile[] = "trace.json";
constexpr char kTimelineFile[] = "timeline.svg";
constexpr char kJobFile[] = "job.json";

std::string ContentType(const std::string& name) {
  if (absl::EndsWith(name, ".json")) return "application/json";
  if (absl::EndsWith(name, ".txt")) return "text/plain; charset=utf-8";
  if (absl::EndsWith(name, ".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

// The name a browser saves the file under: one file name (a case's output "cases/b/output0.bin"
// becomes "cases_b_output0.bin", where browsers would each mangle the slashes their own way), as
// an RFC 6266 quoted string (case names may hold quotes; never backslashes or controls).
std::string SavedFileName(const std::string& name) {
  std::string quoted = absl::StrReplaceAll(name, {{"/", "_"}, {"\"", "\\\""}});
  return absl::StrCat("\"", quoted, "\"");
}

// Text files open in the browser; the others download. Either way the file's own policy
// (kFilePolicy) keeps anything in it from running.
HttpResponse FileResponse(const std::string& name) {
  HttpResponse response;
  response.content_type = ContentType(name);
  const bool viewable = response.content_type != "application/octet-stream";
  response.headers.push_back(
      {"Content-Disposition",
       absl::StrCat(viewable ? "inline" : "attachment", "; filename=", SavedFileName(name))});
  response.headers.push_back({"Content-Security-Policy", kFilePolicy});
  return response;
}

nlohmann::json ParseJsonObject(const std::string& text) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_object() ? parsed : nlohmann::json();
}

// The SVG document without its XML declaration: an element to put inside the page.
std::string SvgElement(const std::string& svg) {
  const size_t start = svg.find("<svg");
  return start == std::string::npos ? "" : svg.substr(start);
}

bool HasEtdump(const v1::Job& job) { return !job.files().etdump().sha256().empty(); }

}  // namespace

absl::Status WebApp::CheckBlobVisible(const Caller& caller, const v1::Digest& digest) {
  absl::StatusOr<bool> visible = TenantMayUse(c_.store, caller, digest.sha256());
  if (!visible.ok()) return visible.status();
  if (*visible) return absl::OkStatus();
  // Word for word what a missing blob gets, as in ArtifactService.Download.
  return absl::NotFoundError(absl::StrCat("blob ", digest.sha256(), " is not in the store"));
}

absl::StatusOr<std::string> WebApp::ReadBlob(const Caller& caller, const v1::Digest& digest) {
  if (absl::Status ok = CheckBlobVisible(caller, digest); !ok.ok()) return ok;
  return c_.blobs.Read(digest);
}

absl::StatusOr<std::string> WebApp::BlobPath(const Caller& caller, const v1::Digest& digest) {
  if (absl::Status ok = CheckBlobVisible(caller, digest); !ok.ok()) return ok;
  return c_.blobs.PathOf(digest);
}

absl::StatusOr<run::TimelineTexts> WebApp::DrawTimeline(const Caller& caller, const v1::Job& job) {
  absl::StatusOr<std::string> etdump = ReadBlob(caller, job.files().etdump());
  if (!etdump.ok()) return etdump.status();
  nlohmann::json debug_map;  // null: slices keep the names the ETDump gives them
  if (!job.files().debug_map().sha256().empty()) {
    absl::StatusOr<std::string> map = ReadBlob(caller, job.files().debug_map());
    if (!map.ok()) return map.status();
    debug_map = ParseJsonObject(*map);
  }
  std::string error;
  std::optional<run::TimelineTexts> texts =
      run::TimelineFileTexts(*etdump, debug_map, "job " + job.id(), &error);
  if (!texts) return absl::InvalidArgumentError(error);
  return *std::move(texts);
}

JobPageData WebApp::GatherJobPage(const Caller& caller, const v1::Job& job) {
  JobPageData data;
  data.job = job;
  data.now_ms = now_();
  if (!job.files().report().sha256().empty()) {
    absl::StatusOr<std::string> report = ReadBlob(caller, job.files().report());
    if (report.ok()) data.report = ParseJsonObject(*report);
  }
  if (!HasEtdump(job)) {
    data.timeline_note = "No profile: the job has not run on a board.";
  } else if (absl::StatusOr<run::TimelineTexts> timeline = DrawTimeline(caller, job);
             timeline.ok()) {
    data.timeline_svg = SvgElement(timeline->svg);
  } else {
    data.timeline_note =
        absl::StrCat("The timeline cannot be drawn: ", timeline.status().message());
  }
  for (const api::JobFile& file : api::ListJobFiles(job)) {
    data.files.push_back({file.name, file.digest.size_bytes()});
  }
  data.files.push_back({kJobFile, static_cast<int64_t>(api::MessageJson(job).size() + 1)});
  if (HasEtdump(job)) {
    data.files.push_back({kTraceFile, -1});
    data.files.push_back({kTimelineFile, -1});
  }
  const v1::Digest& log = job.files().log();
  if (!log.sha256().empty() && log.size_bytes() <= kShownLogBytes) {
    absl::StatusOr<std::string> text = ReadBlob(caller, log);
    if (text.ok()) data.log_text = *std::move(text);
  }
  return data;
}

HttpResponse WebApp::JobPage(const Visitor& visitor, const std::string& job_id) {
  absl::StatusOr<v1::Job> job = c_.lab.GetJob(visitor.caller, job_id);
  if (!job.ok()) return Failure(&visitor, job.status(), "/jobs/" + job_id);
  HttpResponse response;
  response.body = PageDocument("Job " + job_id, &visitor.viewer,
                               JobPageBody(GatherJobPage(visitor.caller, *job)));
  return response;
}

HttpResponse WebApp::JobFile(const Visitor& visitor, const std::string& job_id,
                             const std::string& name) {
  const std::string target = absl::StrCat("/jobs/", job_id, "/files/", name);
  absl::StatusOr<v1::Job> job = c_.lab.GetJob(visitor.caller, job_id);
  if (!job.ok()) return Failure(&visitor, job.status(), target);
  HttpResponse response = FileResponse(name);
  if (name == kJobFile) {
    response.body = api::MessageJson(*job) + "\n";
    return response;
  }
  if (HasEtdump(*job) && (name == kTraceFile || name == kTimelineFile)) {
    absl::StatusOr<run::TimelineTexts> timeline = DrawTimeline(visitor.caller, *job);
    if (!timeline.ok()) return Failure(&visitor, timeline.status(), target);
    response.body = name == kTraceFile ? timeline->trace : timeline->svg;
    return response;
  }
  for (const api::JobFile& file : api::ListJobFiles(*job)) {
    if (file.name != name) continue;
    const bool in_memory = file.digest.size_bytes() <= kInMemoryBytes;
    absl::StatusOr<std::string> bytes_or_path =
        in_memory ? ReadBlob(visitor.caller, file.digest) : BlobPath(visitor.caller, file.digest);
    if (!bytes_or_path.ok()) return Failure(&visitor, bytes_or_path.status(), target);
    (in_memory ? response.body : response.file_path) = *std::move(bytes_or_path);
    return response;
  }
  return Failure(&visitor,
                 absl::NotFoundError(absl::StrCat("job ", job_id, " has no file '", name, "'")),
                 target);
}

}  // namespace boardlab::server::web
