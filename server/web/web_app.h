#pragma once

// The lab's read-only web pages (docs/server.md, "Web pages"): what a request asks for, who asks
// (the API's Authenticator, tenant scoping by the Lab), and the page or file it gets. Knows
// nothing about sockets: server/web/http_server.h carries requests here.
//
// Pages: /jobs (filters as query parameters), /jobs/<id>, /jobs/<id>/files/<name>, /boards, and
// /login, /logout, /style.css. Who is asking:
//   - `Authorization: Bearer TOKEN` (scripts): checked on every request;
//   - a session cookie from signing in at /login with a token (browsers; server/web/sessions.h);
//   - neither: on a server without tokens, an admin of tenant "default" (or the tenant named in
//     an X-Boardlab-Tenant header), as in the API; otherwise 401 and the sign-in form.
// A token's role must allow the API's job calls (Access::kJobs: clients and admins); a client
// sees its tenant's jobs and files only (another tenant's job is 404, as GetJob's NOT_FOUND).
// Every response carries a Content-Security-Policy that allows no script at all and styles only
// from /style.css; every value on a page is HTML-escaped.
//
//   WebApp app({lab, store, blobs, auth, /*open=*/config.tokens.empty()});
//   HttpResponse response = app.Handle(request);

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/cli/timeline_files.h"
#include "server/auth.h"
#include "server/blob_store.h"
#include "server/lab.h"
#include "server/store.h"
#include "server/web/http_message.h"
#include "server/web/job_page.h"
#include "server/web/page_layout.h"
#include "server/web/sessions.h"

namespace boardlab::server::web {

/// How long a sign-in lasts.
inline constexpr int64_t kSessionLifetimeMs = 12 * 3600 * 1000;
/// Sessions kept at most; signing in beyond it ends the oldest.
inline constexpr size_t kMaxSessions = 10000;
/// The session cookie's name.
inline constexpr char kSessionCookie[] = "boardlab_session";

/// What the pages read; all must outlive the WebApp.
struct WebContext {
  Lab& lab;
  Store& store;  // blob grants: a tenant downloads only the files it may use
  BlobStore& blobs;
  const Authenticator& auth;
  bool open = false;  // the server has no tokens: every visitor is an admin, no sign-in
};

class WebApp {
 public:
  /// `now` gives the time in Unix milliseconds (ages on the pages, session expiry).
  explicit WebApp(WebContext context, std::function<int64_t()> now = nullptr);

  /// Answers one request. Thread-safe.
  HttpResponse Handle(const HttpRequest& request);

 private:
  struct Visitor {
    Caller caller;
    Viewer viewer;
  };

  HttpResponse Route(const HttpRequest& request);
  HttpResponse RoutePage(const HttpRequest& request, const std::string& path,
                         const std::string& query);
  /// Who sent the request. Errors: the Authenticator's (Unauthenticated, PermissionDenied).
  absl::StatusOr<Visitor> Identify(const HttpRequest& request);
  HttpResponse SignIn(const HttpRequest& request);
  HttpResponse SignOut(const HttpRequest& request);
  HttpResponse JobsPage(const Visitor& visitor, const std::string& query);
  HttpResponse JobPage(const Visitor& visitor, const std::string& job_id);
  HttpResponse JobFile(const Visitor& visitor, const std::string& job_id, const std::string& name);
  HttpResponse BoardsPage(const Visitor& visitor);
  /// The page for a failed status: 401 with the sign-in form, else an error page.
  HttpResponse Failure(const Visitor* visitor, const absl::Status& status,
                       const std::string& target);
  /// NotFound, as for a missing blob, unless `caller` may use the blob (TenantMayUse, as
  /// ArtifactService.Download).
  absl::Status CheckBlobVisible(const Caller& caller, const v1::Digest& digest);
  /// The blob's bytes, or the path of its file, when `caller` may use it.
  absl::StatusOr<std::string> ReadBlob(const Caller& caller, const v1::Digest& digest);
  absl::StatusOr<std::string> BlobPath(const Caller& caller, const v1::Digest& digest);
  /// trace.json and timeline.svg of a job that has an ETDump, as `boardlab --out` draws them.
  /// Errors: ReadBlob's, InvalidArgument when the ETDump holds no complete run.
  absl::StatusOr<run::TimelineTexts> DrawTimeline(const Caller& caller, const v1::Job& job);

  /// Written in web_job.cc, the job page and its files.
  JobPageData GatherJobPage(const Caller& caller, const v1::Job& job);

  WebContext c_;
  std::function<int64_t()> now_;
  WebSessions sessions_;
};

}  // namespace boardlab::server::web
