#include "server/web/web_app.h"

#include <algorithm>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/clock.h"
#include "server/log.h"
#include "server/web/boards_page.h"
#include "server/web/html.h"
#include "server/web/jobs_page.h"
#include "server/web/style.h"

namespace boardlab::server::web {
namespace {

// Why a visitor without credentials sees the sign-in form: not an error, an invitation.
constexpr char kSignInPrompt[] = "Sign in with your token to see the lab's pages.";

// No scripts at all; styles only from /style.css; forms post only here; never framed.
constexpr char kPagePolicy[] =
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'";

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted:
      return 503;
    default:
      return 500;
  }
}

HttpResponse Html(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

HttpResponse Redirect(const std::string& location) {
  HttpResponse response = Html(303, "");
  response.headers.push_back({"Location", location});
  return response;
}

// The value of cookie `name` in a Cookie header ("a=1; boardlab_session=..."), "" when absent.
std::string CookieValue(const std::string& header, absl::string_view name) {
  for (absl::string_view pair : absl::StrSplit(header, ';')) {
    pair = absl::StripAsciiWhitespace(pair);
    if (absl::ConsumePrefix(&pair, name) && absl::ConsumePrefix(&pair, "=")) {
      return std::string(pair);
    }
  }
  return "";
}

std::string SessionCookie(const std::string& value, int64_t max_age_seconds, bool secure) {
  // Secure only over TLS: a browser would not send it back over plain HTTP, and a plain-HTTP lab
  // sends its tokens in the clear anyway (docs/security.md).
  return absl::StrCat(kSessionCookie, "=", value,
                      "; Path=/; HttpOnly; SameSite=Strict; Max-Age=", max_age_seconds,
                      secure ? "; Secure" : "");
}

// Where to go after signing in: a path on this server, never another site. "//evil" names
// another host, and so do "/\evil" and "/<tab>/evil" once a browser has read them (it turns
// backslashes into slashes and drops tabs and line breaks); so only visible ASCII passes, which
// also keeps line breaks out of the Location header.
std::string SafeNext(const std::string& next) {
  const bool visible_ascii = std::all_of(next.begin(), next.end(),
                                         [](char c) { return c > 0x20 && c < 0x7f && c != '\\'; });
  if (next.empty() || next[0] != '/' || absl::StartsWith(next, "//") || !visible_ascii) {
    return "/jobs";
  }
  return next;
}

// Form posts must come from these pages: a browser names the page's origin in Origin, and a
// cross-site post (signing a victim in or out) names another. Absent (scripts, old browsers):
// the SameSite=Strict cookie is the protection.
bool SameOrigin(const HttpRequest& request) {
  const std::string origin = request.Header("origin");
  if (origin.empty()) return true;
  return origin == absl::StrCat(request.secure ? "https://" : "http://", request.Header("host"));
}

void AddSecurityHeaders(HttpResponse& response) {
  bool has_policy = false;
  bool has_cache = false;
  for (const auto& [name, value] : response.headers) {
    has_policy = has_policy || name == "Content-Security-Policy";
    has_cache = has_cache || name == "Cache-Control";
  }
  if (!has_policy) response.headers.push_back({"Content-Security-Policy", kPagePolicy});
  if (!has_cache) response.headers.push_back({"Cache-Control", "no-store"});
  response.headers.push_back({"X-Content-Type-Options", "nosniff"});
  response.headers.push_back({"X-Frame-Options", "DENY"});
  // Not "no-referrer": with it a browser sends "Origin: null" on form posts, and SameOrigin()
  // could not tell the sign-in form from a forged one. "same-origin" tells other sites nothing.
  response.headers.push_back({"Referrer-Policy", "same-origin"});
}

// The stylesheet and the icon are the same for everybody: served before any sign-in, cached.
HttpResponse StaticFile(const char* body, const char* content_type) {
  HttpResponse response = Html(200, body);
  response.content_type = content_type;
  response.headers.push_back({"Cache-Control", "max-age=3600"});
  return response;
}

}  // namespace

WebApp::WebApp(WebContext context, std::function<int64_t()> now)
    : c_(context),
      now_(now ? std::move(now) : std::function<int64_t()>(NowMs)),
      sessions_(kSessionLifetimeMs, kMaxSessions) {}

HttpResponse WebApp::Handle(const HttpRequest& request) {
  HttpResponse response = Route(request);
  AddSecurityHeaders(response);
  return response;
}

HttpResponse WebApp::Route(const HttpRequest& request) {
  const size_t question = request.target.find('?');
  const std::string path = request.target.substr(0, question);
  const std::string query =
      question == std::string::npos ? "" : request.target.substr(question + 1);
  if (path == "/style.css" && request.method == "GET") {
    return StaticFile(kStyleSheet, "text/css; charset=utf-8");
  }
  if (path == "/favicon.svg" && request.method == "GET") {
    return StaticFile(kFavicon, "image/svg+xml");
  }
  if (path == "/login" || path == "/logout") {
    if (request.method == "POST") {
      if (!SameOrigin(request)) {
        return Html(403, ErrorPage(nullptr, 403, "cross-site form posts are refused"));
      }
      return path == "/login" ? SignIn(request) : SignOut(request);
    }
    if (path == "/login" && request.method == "GET") {
      if (c_.open) return Redirect("/jobs");
      auto next = ParseForm(query);
      return Html(200, LoginPage(SafeNext(next.ok() ? (*next)["next"] : ""), ""));
    }
  }
  if (request.method != "GET") {
    HttpResponse response =
        Html(405, ErrorPage(nullptr, 405, "the pages are read-only: use GET (POST signs in)"));
    response.headers.push_back({"Allow", "GET"});
    return response;
  }
  return RoutePage(request, path, query);
}

HttpResponse WebApp::RoutePage(const HttpRequest& request, const std::string& path,
                               const std::string& query) {
  if (path == "/") return Redirect("/jobs");
  absl::StatusOr<Visitor> visitor = Identify(request);
  if (!visitor.ok()) return Failure(nullptr, visitor.status(), request.target);
  if (path == "/jobs") return JobsPage(*visitor, query);
  if (path == "/boards") return BoardsPage(*visitor);
  // /jobs/<id> and /jobs/<id>/files/<name>
  std::vector<std::string> parts = absl::StrSplit(path, '/');  // "", "jobs", id, ...
  for (std::string& part : parts) {
    absl::StatusOr<std::string> decoded = PercentDecode(part);
    if (!decoded.ok()) return Failure(&*visitor, decoded.status(), request.target);
    part = *decoded;
  }
  if (parts.size() == 3 && parts[1] == "jobs" && !parts[2].empty()) {
    return JobPage(*visitor, parts[2]);
  }
  if (parts.size() == 5 && parts[1] == "jobs" && parts[3] == "files") {
    return JobFile(*visitor, parts[2], parts[4]);
  }
  return Failure(&*visitor, absl::NotFoundError(absl::StrCat("there is no page ", path)),
                 request.target);
}

absl::StatusOr<WebApp::Visitor> WebApp::Identify(const HttpRequest& request) {
  const std::string authorization = request.Header("authorization");
  absl::string_view token = authorization;
  const bool bearer = absl::ConsumePrefix(&token, "Bearer ");
  if (!bearer) {
    std::optional<Caller> session =
        sessions_.Find(CookieValue(request.Header("cookie"), kSessionCookie), now_());
    if (session) {
      // Signing in checked the token; the role still decides what the session may see.
      if (!RoleAllows(session->role, Access::kJobs)) {
        return absl::PermissionDeniedError("this session's role may not read jobs");
      }
      return Visitor{*session, Viewer{session->tenant, RoleName(session->role), true}};
    }
    if (!c_.open) return absl::UnauthenticatedError(kSignInPrompt);
  }
  // A bearer token, or nothing on a server without tokens: the API's check, word for word.
  CallCredentials credentials;
  credentials.token = std::string(absl::StripAsciiWhitespace(token));
  credentials.tenant_header = request.Header("x-boardlab-tenant");
  absl::StatusOr<Caller> caller = c_.auth.Authenticate(credentials, Access::kJobs);
  if (!caller.ok()) return caller.status();
  return Visitor{*caller, Viewer{caller->tenant, RoleName(caller->role), false}};
}

HttpResponse WebApp::SignIn(const HttpRequest& request) {
  if (c_.open) return Redirect("/jobs");
  absl::StatusOr<FormFields> form = ParseForm(request.body);
  if (!form.ok()) return Html(400, LoginPage("/jobs", std::string(form.status().message())));
  const std::string next = SafeNext((*form)["next"]);
  const std::string token((*form)["token"]);
  if (token.empty()) return Html(400, LoginPage(next, "enter your token"));
  CallCredentials credentials;
  credentials.token = token;
  absl::StatusOr<Caller> caller = c_.auth.Authenticate(credentials, Access::kJobs);
  if (!caller.ok()) {
    LogWarning("web sign-in refused", {{"error", std::string(caller.status().message())}});
    return Html(HttpStatusOf(caller.status().code()),
                LoginPage(next, std::string(caller.status().message())));
  }
  LogInfo("web sign-in", {{"tenant", caller->tenant}, {"role", RoleName(caller->role)}});
  HttpResponse response = Redirect(next);
  response.headers.push_back(
      {"Set-Cookie", SessionCookie(sessions_.Create(*caller, now_()), kSessionLifetimeMs / 1000,
                                   request.secure)});
  return response;
}

HttpResponse WebApp::SignOut(const HttpRequest& request) {
  sessions_.Remove(CookieValue(request.Header("cookie"), kSessionCookie));
  HttpResponse response = Redirect(c_.open ? "/jobs" : "/login");
  response.headers.push_back({"Set-Cookie", SessionCookie("", 0, request.secure)});
  return response;
}

HttpResponse WebApp::Failure(const Visitor* visitor, const absl::Status& status,
                             const std::string& target) {
  const int code = HttpStatusOf(status.code());
  if (code == 401) {
    const bool no_credentials = status.message() == kSignInPrompt;
    HttpResponse response =
        Html(401, LoginPage(SafeNext(target), no_credentials ? "" : std::string(status.message())));
    response.headers.push_back({"WWW-Authenticate", "Bearer realm=\"boardlab\""});
    return response;
  }
  if (code == 500) LogError("web page failed", {{"error", std::string(status.message())}});
  return Html(code,
              ErrorPage(visitor ? &visitor->viewer : nullptr, code, std::string(status.message())));
}

HttpResponse WebApp::JobsPage(const Visitor& visitor, const std::string& query) {
  absl::StatusOr<FormFields> fields = ParseForm(query);
  if (!fields.ok()) return Failure(&visitor, fields.status(), "/jobs");
  absl::StatusOr<JobsQuery> filters = ParseJobsQuery(*fields);
  if (!filters.ok()) return Failure(&visitor, filters.status(), "/jobs");
  absl::StatusOr<v1::ListJobsResponse> listed =
      c_.lab.ListJobs(visitor.caller, ListRequestFor(*filters));
  if (!listed.ok()) return Failure(&visitor, listed.status(), "/jobs");
  JobsPageData data;
  data.query = *filters;
  data.jobs.assign(listed->jobs().begin(), listed->jobs().end());
  data.next_page = listed->next_page_token();
  std::set<std::string> types;
  for (const v1::Board& board : c_.lab.ListBoards("")) types.insert(board.type());
  data.board_types.assign(types.begin(), types.end());
  data.tenant_filter = visitor.caller.is_admin();
  data.now_ms = now_();
  return Html(200, PageDocument("Jobs", &visitor.viewer, JobsPageBody(data)));
}

HttpResponse WebApp::BoardsPage(const Visitor& visitor) {
  BoardsPageData data{c_.lab.ListBoards(""), c_.lab.QueuedJobs(""), now_()};
  return Html(200, PageDocument("Boards", &visitor.viewer, BoardsPageBody(data)));
}

}  // namespace boardlab::server::web
