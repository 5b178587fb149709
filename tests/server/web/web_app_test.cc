// server/web/web_app.h against a real Lab (SQLite, blob store, compiles) and the API's
// Authenticator: who gets which page, sign-in and sessions, tenant scoping, filters, the job's
// files, and the headers every answer carries.

#include "server/web/web_app.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/support/digest.h"
#include "tests/server/lab_fixture.h"

namespace boardlab::server::web {
namespace {

using testing::FakeSession;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kCiToken[] = "ci-token";
constexpr char kDevToken[] = "dev-token";
constexpr char kAgentToken[] = "agent-token";
constexpr char kAdminToken[] = "admin-token";

class WebAppTest : public server::testing::LabTest {
 protected:
  void SetUp() override {
    LabTest::SetUp();
    for (auto [secret, tenant, role] : {std::tuple{kCiToken, "ci", Role::kClient},
                                        {kDevToken, "dev", Role::kClient},
                                        {kAgentToken, "lab", Role::kAgent},
                                        {kAdminToken, "lab", Role::kAdmin}}) {
      config_.tokens.push_back({api::Sha256Hex(std::string(secret)), tenant, role});
    }
    StartLab();
    auth_ = std::make_unique<Authenticator>(config_.tokens, /*agent_certificates=*/false);
    app_ = std::make_unique<WebApp>(WebContext{*lab_, *store_, *blobs_, *auth_, /*open=*/false},
                                    [this] { return now_ms_; });
    session_id_ = Connect("a", 1, agent_);
  }

  // Runs a job of `tenant` to its verdict on the fake agent's board; returns its id.
  std::string RunJob(const std::string& tenant, v1::RunOutcome outcome,
                     const std::string& log = "the board's log\n") {
    v1::SubmitJobRequest request = Request(PutModel());
    request.mutable_spec()->set_name(tenant + "-model");
    v1::Job job = Submit(request, tenant);
    auto assignment = agent_->WaitAssignment(++assignments_);
    EXPECT_TRUE(assignment);
    if (!assignment) return job.id();
    Result(session_id_, *assignment, outcome, outcome == v1::RUN_OUTCOME_PASS ? "" : "differs",
           log);
    EXPECT_EQ(LabTest::Get(job.id()).state(), v1::JOB_STATE_DONE);
    return job.id();
  }

  HttpResponse Page(const std::string& target, const std::string& token = "",
                    const std::string& cookie = "") {
    HttpRequest request;
    request.method = "GET";
    request.target = target;
    if (!token.empty()) request.headers["authorization"] = "Bearer " + token;
    if (!cookie.empty()) request.headers["cookie"] = cookie;
    return app_->Handle(request);
  }

  HttpResponse Post(const std::string& path, const std::string& body,
                    const std::string& cookie = "", bool secure = false) {
    HttpRequest request;
    request.method = "POST";
    request.target = path;
    request.body = body;
    request.secure = secure;
    request.headers["host"] = "lab.example:9480";
    request.headers["origin"] = secure ? "https://lab.example:9480" : "http://lab.example:9480";
    if (!cookie.empty()) request.headers["cookie"] = cookie;
    return app_->Handle(request);
  }

  // "boardlab_session=<id>" from a sign-in's Set-Cookie.
  static std::string SessionCookieOf(const HttpResponse& response) {
    const std::string set = Header(response, "Set-Cookie");
    return set.substr(0, set.find(';'));
  }

  static std::string Header(const HttpResponse& response, const std::string& name) {
    for (const auto& [key, value] : response.headers) {
      if (key == name) return value;
    }
    return "";
  }

  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<WebApp> app_;
  std::shared_ptr<FakeSession> agent_;
  std::string session_id_;
  size_t assignments_ = 0;
  int64_t now_ms_ = 1'700'000'000'000;
};

TEST_F(WebAppTest, WithoutATokenEveryPageIsTheSignInFormWith401) {
  const std::string job = RunJob("ci", v1::RUN_OUTCOME_PASS);
  for (const std::string& target : std::vector<std::string>{
           "/jobs?state=done", "/jobs/" + job, "/boards", "/jobs/" + job + "/files/job.json"}) {
    HttpResponse response = Page(target);
    EXPECT_EQ(response.status, 401) << target;
    EXPECT_THAT(response.body, HasSubstr("<form method=\"post\" action=\"/login\">")) << target;
    EXPECT_THAT(response.body, HasSubstr("name=\"next\" value=\"" + target.substr(0, 5)));
    EXPECT_THAT(response.body, Not(HasSubstr("ci-model"))) << target;
    EXPECT_EQ(Header(response, "WWW-Authenticate"), "Bearer realm=\"boardlab\"");
  }
  EXPECT_EQ(Page("/jobs", "not-a-token").status, 401);
  EXPECT_THAT(Page("/jobs", "not-a-token").body, HasSubstr("the bearer token is not known"));
  // An agent token may not read jobs, as in the API (PERMISSION_DENIED).
  HttpResponse agent = Page("/jobs", kAgentToken);
  EXPECT_EQ(agent.status, 403);
  EXPECT_THAT(agent.body, HasSubstr("a token of role &#39;agent&#39; may not make this call"));
}

TEST_F(WebAppTest, ATenantSeesOnlyItsOwnJobsAndTheirFiles) {
  const std::string ci_job = RunJob("ci", v1::RUN_OUTCOME_PASS);
  const std::string dev_job = RunJob("dev", v1::RUN_OUTCOME_PASS);
  HttpResponse list = Page("/jobs", kCiToken);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_THAT(list.body, HasSubstr(ci_job));
  EXPECT_THAT(list.body, Not(HasSubstr(dev_job)));
  EXPECT_THAT(list.body, Not(HasSubstr("dev-model")));
  EXPECT_THAT(list.body, Not(HasSubstr("name=\"tenant\"")));  // no tenant filter for clients
  // Another tenant's job is not found, word for word like a job that does not exist.
  HttpResponse other = Page("/jobs/" + dev_job, kCiToken);
  EXPECT_EQ(other.status, 404);
  EXPECT_THAT(other.body, HasSubstr("job &#39;" + dev_job + "&#39; does not exist"));
  EXPECT_EQ(Page("/jobs/j99999999", kCiToken).status, 404);
  for (const char* file : {"job.json", "report.json", "log.txt"}) {
    HttpResponse download = Page("/jobs/" + dev_job + "/files/" + file, kCiToken);
    EXPECT_EQ(download.status, 404) << file;
    EXPECT_THAT(download.body, Not(HasSubstr("dev-model"))) << file;
  }
  // Listing another tenant is for admins.
  EXPECT_EQ(Page("/jobs?tenant=dev", kCiToken).status, 403);
  HttpResponse admin = Page("/jobs", kAdminToken);
  EXPECT_THAT(admin.body, HasSubstr(ci_job));
  EXPECT_THAT(admin.body, HasSubstr(dev_job));
  EXPECT_THAT(admin.body, HasSubstr("name=\"tenant\""));
  HttpResponse only_dev = Page("/jobs?tenant=dev", kAdminToken);
  EXPECT_THAT(only_dev.body, HasSubstr(dev_job));
  EXPECT_THAT(only_dev.body, Not(HasSubstr(ci_job)));
  EXPECT_EQ(Page("/jobs/" + dev_job, kAdminToken).status, 200);
}

TEST_F(WebAppTest, SigningInSetsAStrictHttpOnlySessionCookieAndSigningOutEndsIt) {
  const std::string job = RunJob("ci", v1::RUN_OUTCOME_PASS);
  HttpResponse signed_in = Post("/login", "token=ci-token&next=%2Fjobs%2F" + job);
  ASSERT_EQ(signed_in.status, 303) << signed_in.body;
  EXPECT_EQ(Header(signed_in, "Location"), "/jobs/" + job);
  const std::string set_cookie = Header(signed_in, "Set-Cookie");
  EXPECT_THAT(set_cookie, HasSubstr("; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200"));
  EXPECT_THAT(set_cookie, Not(HasSubstr("Secure")));  // plain HTTP: the browser would drop it
  EXPECT_THAT(set_cookie, Not(HasSubstr(kCiToken)));
  const std::string cookie = SessionCookieOf(signed_in);
  HttpResponse page = Page("/jobs/" + job, "", "theme=dark; " + cookie);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_THAT(page.body, HasSubstr("ci (client)"));
  EXPECT_THAT(page.body, HasSubstr("Sign out"));

  HttpResponse signed_out = Post("/logout", "", cookie);
  EXPECT_EQ(signed_out.status, 303);
  EXPECT_EQ(Header(signed_out, "Location"), "/login");
  EXPECT_THAT(Header(signed_out, "Set-Cookie"), HasSubstr("boardlab_session=; Path=/"));
  EXPECT_THAT(Header(signed_out, "Set-Cookie"), HasSubstr("Max-Age=0"));
  EXPECT_EQ(Page("/jobs", "", cookie).status, 401);

  HttpResponse over_tls = Post("/login", "token=ci-token", "", /*secure=*/true);
  EXPECT_THAT(Header(over_tls, "Set-Cookie"), HasSubstr("; Secure"));
  EXPECT_EQ(Header(over_tls, "Location"), "/jobs");
}

TEST_F(WebAppTest, ASessionEndsAfterTwelveHours) {
  HttpResponse signed_in = Post("/login", "token=dev-token");
  const std::string cookie = SessionCookieOf(signed_in);
  now_ms_ += kSessionLifetimeMs - 1;
  EXPECT_EQ(Page("/boards", "", cookie).status, 200);
  now_ms_ += 1;
  EXPECT_EQ(Page("/boards", "", cookie).status, 401);
}

TEST_F(WebAppTest, ABadSignInSaysWhyAndSetsNoCookie) {
  struct Case {
    std::string body;
    int status;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {"token=guess", 401, "the bearer token is not known"},
           {"token=agent-token", 403, "a token of role &#39;agent&#39; may not make this call"},
           {"token=", 400, "enter your token"},
           {"token=%zz", 400, "malformed URL encoding"}}) {
    HttpResponse response = Post("/login", c.body);
    EXPECT_EQ(response.status, c.status) << c.body;
    EXPECT_THAT(response.body, HasSubstr(c.message)) << c.body;
    EXPECT_EQ(Header(response, "Set-Cookie"), "") << c.body;
  }
  // After signing in, only pages of this server: not another site, however it is spelled.
  // Browsers drop tabs and line breaks from a Location before reading it ("/<tab>/evil" is
  // "//evil"), and a line break in a header would start another header.
  for (const char* next :
       {"https%3A%2F%2Fevil.example%2F", "%2F%2Fevil.example", "%2F%5Cevil",
        "%2F%09%2Fevil.example", "%2F%0A%2Fevil.example", "%2F%0D%0ASet-Cookie%3A+x%3D1", "%2F%00",
        "%2Fjobs%7F", "%2F%20%2Fevil.example"}) {
    HttpResponse response = Post("/login", std::string("token=ci-token&next=") + next);
    EXPECT_EQ(Header(response, "Location"), "/jobs") << next;
  }
  // A form posted from another site (a forged sign-in or sign-out) is refused.
  HttpRequest forged;
  forged.method = "POST";
  forged.target = "/login";
  forged.body = "token=ci-token";
  forged.headers = {{"host", "lab.example:9480"}, {"origin", "https://evil.example"}};
  HttpResponse refused = app_->Handle(forged);
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(Header(refused, "Set-Cookie"), "");
}

TEST_F(WebAppTest, FiltersNarrowTheJobsAndBadOnesAreNamed) {
  const std::string passed = RunJob("ci", v1::RUN_OUTCOME_PASS);
  const std::string failed = RunJob("ci", v1::RUN_OUTCOME_FAIL);
  HttpResponse fails = Page("/jobs?verdict=fail", kCiToken);
  ASSERT_EQ(fails.status, 200) << fails.body;
  EXPECT_THAT(fails.body, HasSubstr(failed));
  EXPECT_THAT(fails.body, Not(HasSubstr(passed)));
  HttpResponse done = Page("/jobs?state=done&verdict=&board_type=", kCiToken);
  EXPECT_THAT(done.body, HasSubstr(failed));
  EXPECT_THAT(done.body, HasSubstr(passed));
  EXPECT_THAT(Page("/jobs?state=queued", kCiToken).body, HasSubstr("No jobs match"));
  EXPECT_THAT(Page("/jobs?board_type=imxrt700-qemu", kCiToken).body, HasSubstr("No jobs match"));
  HttpResponse bad = Page("/jobs?state=sleeping", kCiToken);
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("the filter state=&#39;sleeping&#39; names no state"));
  EXPECT_EQ(Page("/jobs?page=yesterday", kCiToken).status, 400);
  EXPECT_EQ(Page("/jobs?state=%4", kCiToken).status, 400);
}

TEST_F(WebAppTest, TheJobPageShowsItsPartitionAndLinksFilesThatDownloadThroughTheSameChecks) {
  const std::string job = RunJob("ci", v1::RUN_OUTCOME_PASS, "boot <ok>\nran 1 iteration\n");
  HttpResponse page = Page("/jobs/" + job, kCiToken);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_THAT(page.body, HasSubstr("<span class=\"badge pass\">PASS</span>"));
  EXPECT_THAT(page.body, HasSubstr("FULLY_CONNECTED"));  // from the compile report
  EXPECT_THAT(page.body, HasSubstr("No profile: the job has not run on a board."));
  EXPECT_THAT(page.body, HasSubstr("boot &lt;ok&gt;"));
  EXPECT_THAT(page.body, HasSubstr("/files/report.json\">report.json</a>"));
  EXPECT_THAT(page.body, HasSubstr("/files/job.json\">job.json</a>"));

  const v1::Job done = LabTest::Get(job);
  HttpResponse report = Page("/jobs/" + job + "/files/report.json", kCiToken);
  ASSERT_EQ(report.status, 200) << report.body;
  EXPECT_EQ(report.body, *blobs_->Read(done.files().report()));
  EXPECT_EQ(report.content_type, "application/json");
  EXPECT_EQ(Header(report, "Content-Security-Policy"),
            "default-src 'none'; style-src 'unsafe-inline'; sandbox");
  EXPECT_EQ(Header(report, "Content-Disposition"), "inline; filename=\"report.json\"");
  HttpResponse artifact = Page("/jobs/" + job + "/files/artifact.pte", kCiToken);
  EXPECT_EQ(artifact.body, *blobs_->Read(done.files().artifact()));
  EXPECT_EQ(Header(artifact, "Content-Disposition"), "attachment; filename=\"artifact.pte\"");
  HttpResponse log = Page("/jobs/" + job + "/files/log.txt", kCiToken);
  EXPECT_EQ(log.body, "boot <ok>\nran 1 iteration\n");
  EXPECT_EQ(log.content_type, "text/plain; charset=utf-8");
  HttpResponse record = Page("/jobs/" + job + "/files/job.json", kCiToken);
  EXPECT_THAT(record.body, HasSubstr("\"id\":\"" + job + "\""));
  HttpResponse missing = Page("/jobs/" + job + "/files/timeline.svg", kCiToken);
  EXPECT_EQ(missing.status, 404);  // no ETDump, nothing to draw
  EXPECT_THAT(missing.body, HasSubstr("has no file &#39;timeline.svg&#39;"));
  EXPECT_EQ(Page("/jobs/" + job + "/files/..%2F..%2Fetc%2Fpasswd", kCiToken).status, 404);
}

// A many-case job's outputs are files under cases/NAME/ (api::ListJobFiles), as in `--out`: the
// page lists each case's verdict and links its outputs with the slashes encoded, and the link
// downloads the case's output under one file name (a quote in a case name stays quoted).
TEST_F(WebAppTest, AManyCaseJobLinksEachCasesOutputs) {
  v1::SubmitJobRequest request = Request(PutModel());
  for (const auto& [name, fill] : {std::pair{"a", 1}, {"b\"q", 2}}) {
    v1::RunCase* c = request.mutable_spec()->mutable_run()->add_cases();
    c->set_name(name);
    *c->add_inputs()->mutable_blob() = PutBlob(std::vector<uint8_t>(16, fill));
  }
  const std::string job = Submit(request, "ci").id();
  auto assignment = agent_->WaitAssignment(++assignments_);
  ASSERT_TRUE(assignment);
  v1::AgentMessage m;
  v1::RunResult* r = m.mutable_result();
  r->set_job_id(assignment->job_id());
  r->set_attempt(assignment->attempt());
  r->set_board_id(assignment->board_id());
  r->set_outcome(v1::RUN_OUTCOME_PASS);
  for (const std::string name : {"a", "b\"q"}) {
    v1::CaseResult* c = r->add_cases();
    c->set_name(name);
    c->set_passed(name == "a");
    v1::OutputCheck* check = c->add_checks();
    check->set_passed(name == "a");
    check->set_max_abs_diff(name == "a" ? 0 : 9);
    *c->add_outputs() = PutAsAgent("output of case " + name);
  }
  Send(session_id_, m);
  ASSERT_EQ(LabTest::Get(job).state(), v1::JOB_STATE_DONE);

  HttpResponse page = Page("/jobs/" + job, kCiToken);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_THAT(page.body,
              HasSubstr("/files/cases%2Fb%22q%2Foutput0.bin\">cases/b&quot;q/output0.bin</a>"));
  EXPECT_THAT(page.body, HasSubstr("<h2>Cases</h2>"));
  EXPECT_THAT(page.body, HasSubstr("cases: 1 of 2 passed, max abs diff 9 (case b&quot;q)"));
  HttpResponse output = Page("/jobs/" + job + "/files/cases%2Fb%22q%2Foutput0.bin", kCiToken);
  ASSERT_EQ(output.status, 200) << output.body;
  EXPECT_EQ(output.body, "output of case b\"q");
  EXPECT_EQ(Header(output, "Content-Disposition"),
            "attachment; filename=\"cases_b\\\"q_output0.bin\"");
  EXPECT_EQ(Page("/jobs/" + job + "/files/cases%2Fc%2Foutput0.bin", kCiToken).status, 404);
  // Another tenant gets no case output either.
  EXPECT_EQ(Page("/jobs/" + job + "/files/cases%2Fb%22q%2Foutput0.bin", kDevToken).status, 404);
}

TEST_F(WebAppTest, TheBoardsPageShowsTheAgentsBoards) {
  RunJob("ci", v1::RUN_OUTCOME_PASS);
  HttpResponse boards = Page("/boards", kDevToken);  // boards are the lab's, for every client
  ASSERT_EQ(boards.status, 200) << boards.body;
  EXPECT_THAT(boards.body, HasSubstr("a-b0"));
  EXPECT_THAT(boards.body, HasSubstr("<span class=\"badge idle\">idle</span>"));
  EXPECT_THAT(boards.body, HasSubstr("data-label=\"Jobs run\" class=\"num\">1</td>"));
}

TEST_F(WebAppTest, EveryAnswerForbidsScriptsAndFramingAndPagesAreNotCached) {
  const std::string job = RunJob("ci", v1::RUN_OUTCOME_PASS);
  for (const std::string& target :
       std::vector<std::string>{"/jobs", "/jobs/" + job, "/boards", "/nowhere", "/login"}) {
    HttpResponse response = Page(target, kCiToken);
    EXPECT_THAT(Header(response, "Content-Security-Policy"),
                HasSubstr("default-src 'none'; style-src 'self'"))
        << target;
    EXPECT_EQ(Header(response, "X-Content-Type-Options"), "nosniff") << target;
    EXPECT_EQ(Header(response, "X-Frame-Options"), "DENY") << target;
    EXPECT_EQ(Header(response, "Cache-Control"), "no-store") << target;
    EXPECT_THAT(response.body, Not(HasSubstr("<script"))) << target;
  }
  HttpResponse css = Page("/style.css");
  EXPECT_EQ(css.status, 200);
  EXPECT_EQ(css.content_type, "text/css; charset=utf-8");
  EXPECT_THAT(css.body, HasSubstr("@media (max-width: 700px)"));
}

TEST_F(WebAppTest, UnknownPagesMethodsAndEncodingsAreClearErrors) {
  EXPECT_EQ(Page("/nowhere", kCiToken).status, 404);
  EXPECT_THAT(Page("/nowhere", kCiToken).body, HasSubstr("there is no page /nowhere"));
  EXPECT_EQ(Page("/jobs/a%zz", kCiToken).status, 400);
  EXPECT_EQ(Page("/", kCiToken).status, 303);
  HttpRequest put;
  put.method = "PUT";
  put.target = "/jobs";
  HttpResponse response = app_->Handle(put);
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(Header(response, "Allow"), "GET");
}

TEST_F(WebAppTest, AServerWithoutTokensShowsEverythingWithoutSigningIn) {
  Authenticator open_auth({}, false);
  WebApp open({*lab_, *store_, *blobs_, open_auth, /*open=*/true});
  const std::string job = RunJob("team", v1::RUN_OUTCOME_PASS);
  HttpRequest request;
  request.method = "GET";
  request.target = "/jobs";
  HttpResponse list = open.Handle(request);
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_THAT(list.body, HasSubstr(job));
  EXPECT_THAT(list.body, HasSubstr("default (admin)"));
  request.target = "/login";
  EXPECT_EQ(open.Handle(request).status, 303);
}

}  // namespace
}  // namespace boardlab::server::web
