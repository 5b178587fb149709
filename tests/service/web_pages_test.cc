// The web pages of a live server (docs/server.md, "Web pages"): a server with tokens of two
// tenants, an agent with a sim board, and jobs that ran on it. Every page and caller answers as
// docs/security.md's "Page" table says (the test reads the table from the file); and Debian's
// Chromium reads the pages as a person does: `chromium --dump-dom` of the jobs page without
// signing in, then, driven by playwright-core (tests/service/web_pages_browser.js), signing in
// through the form, the jobs list, one job, a many-case job, the boards and another tenant's
// job, at a desktop and a phone width. The DOMs and screenshots stay in the build tree as test
// artifacts (test-artifacts/web-pages/). Without Chromium or playwright-core the browser test
// skips, saying what to install.

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/service/harness.h"
#include "tests/service/security_tables.h"
#include "tests/support/test_paths.h"

namespace boardlab::testing::service {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kCiToken[] = "ci-token-5f1e";
constexpr char kDevToken[] = "dev-token-0a9c";
constexpr char kAgentToken[] = "agent-token-77b2";
constexpr char kAdminToken[] = "admin-token-31d4";
constexpr char kChromium[] = "/usr/bin/chromium";
// The model's file name is the job's name: markup in it must reach the pages as text.
constexpr char kModelName[] = "ci_<img src=x onerror=alert(1)>&model.tflite";
constexpr char kEscapedModelName[] = "ci_&lt;img src=x onerror=alert(1)&gt;&amp;model.tflite";

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ArtifactsDir() { return BOARDLAB_WEB_ARTIFACTS; }

std::string PlaywrightCore() { return RepoDir() + "/build-deps/node/node_modules/playwright-core"; }

class WebPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(lab_.StartServer({.config_yaml = TokensYaml({{kCiToken, "ci", "client"},
                                                             {kDevToken, "dev", "client"},
                                                             {kAgentToken, "lab", "agent"},
                                                             {kAdminToken, "lab", "admin"}})}));
    ASSERT_NE(lab_.web_port(), 0) << "the server printed no web address";
    lab_.SetApiToken(kAdminToken);
    ASSERT_TRUE(lab_.StartAgent("a", 1, kAgentToken));
    ci_job_ = Submit(kCiToken, kModelName);
    dev_job_ = Submit(kDevToken, "dev.tflite");
    cases_job_ = SubmitCases();
  }

  // A many-case job of the ci tenant: two cases of random inputs, checked against the host's
  // reference outputs, with a latency budget.
  std::string SubmitCases() {
    const std::string model = lab_.WriteFile("cases.tflite", FastModel());
    const std::string manifest = lab_.WriteFile(
        "cases.json",
        R"({"cases": [{"name": "x", "inputs": ["random:1"]}, {"name": "y", "inputs": ["random:2"]}]})");
    ClientResult r = lab_.RunClient({"submit", model, "--cases", manifest, "--expect-reference",
                                     "--max-latency-us", "1000000", "--wait", "--json"},
                                    std::chrono::seconds(90), kCiToken);
    EXPECT_EQ(r.exit_code, 0) << r;
    absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
    EXPECT_TRUE(job.ok()) << job.status();
    if (!job.ok()) return "";
    slowest_case_ = job->case_summary().slowest_case();
    return job->id();
  }

  // Runs a job of the token's tenant to its verdict (PASS, with budgets and a profile).
  std::string Submit(const char* token, const std::string& model_name) {
    const std::string model = lab_.WriteFile(model_name, FastModel());
    ClientResult r = lab_.RunClient({"submit", model, "--expect-reference", "--max-latency-us",
                                     "1000000", "--max-sram", "100000000", "--wait", "--json"},
                                    std::chrono::seconds(90), token);
    EXPECT_EQ(r.exit_code, 0) << r;
    absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? job->id() : "";
  }

  // What a page answers `token` ("" for none), in the words of docs/security.md's table.
  std::string Observe(const std::string& page, const std::string& token) {
    HttpCall call;
    if (page == "POST /login") {
      call.method = "POST";
      call.path = "/login";
      call.body = token.empty() ? "token=" : "token=" + token;
      call.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
    } else {
      call.path = absl::StrReplaceAll(page.substr(4), {{"JOB", ci_job_}, {"TENANT", "ci"}});
      if (!token.empty()) call.headers = {{"Authorization", "Bearer " + token}};
    }
    absl::StatusOr<HttpAnswer> answer = HttpFetch(lab_.web_port(), call);
    if (!answer.ok()) return answer.status().ToString();
    std::string cell = absl::StrCat(answer->status);
    if (answer->status == 401 && answer->body.find("name=\"token\"") != std::string::npos) {
      cell += ", sign-in form";
    } else if (answer->Header("set-cookie").rfind("boardlab_session=", 0) == 0) {
      cell += ", session cookie";
    } else if (answer->status == 200 &&
               (call.path == "/jobs" || call.path.rfind("/jobs?", 0) == 0)) {
      cell += answer->body.find(ci_job_) != std::string::npos ? ", listed" : ", not listed";
    }
    return cell;
  }

  ServiceLab lab_;
  std::string ci_job_;
  std::string dev_job_;
  std::string cases_job_;
  std::string slowest_case_;  // of cases_job_, as the server judged it
};

TEST_F(WebPagesTest, EveryPageAndCallerAnswersAsDocsSecurityMdSays) {
  absl::StatusOr<DocTable> table = ReadSecurityTable("Page");
  ASSERT_TRUE(table.ok()) << table.status();
  const std::map<std::string, std::string> tokens = {
      {"no token", ""},       {"wrong token", "not-a-token"},
      {"client", kCiToken},   {"other tenant", kDevToken},
      {"agent", kAgentToken}, {"admin", kAdminToken}};
  int cells = 0;
  for (const auto& [page, row] : *table) {
    for (const auto& [column, token] : tokens) {
      SCOPED_TRACE(absl::StrCat(page, " as ", column));
      ASSERT_TRUE(row.contains(column)) << "docs/security.md has no column '" << column << "'";
      EXPECT_EQ(Observe(page, token), row.at(column));
      ++cells;
    }
  }
  EXPECT_GE(cells, 5 * 6);
  // The server names the pages' address on its start line.
  EXPECT_EQ(lab_.web_url(), absl::StrCat("http://127.0.0.1:", lab_.web_port(), "/"));
}

// Runs argv to its end within `timeout`, its stdout into `out_path`; the exit code.
int RunTool(const std::vector<std::string>& argv, const std::string& out_path,
            const std::string& log_path, std::chrono::seconds timeout) {
  absl::StatusOr<std::unique_ptr<Process>> process = Process::Start(argv, out_path, log_path);
  if (!process.ok()) return -1;
  std::optional<int> code = (*process)->Wait(timeout);
  return code ? *code : -2;
}

std::vector<std::string> ChromiumFlags(const std::string& profile_dir) {
  return {kChromium,
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--user-data-dir=" + profile_dir};
}

TEST_F(WebPagesTest, ChromiumSignsInAndReadsEveryPageAtDesktopAndPhoneWidths) {
  if (!std::filesystem::exists(kChromium)) {
    GTEST_SKIP() << "Chromium is not installed (" << kChromium
                 << "): run deploy/install-deps.sh (Debian package chromium)";
  }
  if (std::system("node --version >/dev/null 2>&1") != 0 ||
      !std::filesystem::exists(PlaywrightCore())) {
    GTEST_SKIP() << "node or playwright-core is missing (" << PlaywrightCore()
                 << "): run deploy/install-node-deps.sh";
  }
  const std::string out = ArtifactsDir();
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);

  // Without signing in, the browser gets the sign-in form and nothing of the jobs.
  std::vector<std::string> dump = ChromiumFlags(lab_.Path("chromium-profile"));
  dump.insert(dump.end(), {"--dump-dom", lab_.web_url() + "jobs"});
  ASSERT_EQ(RunTool(dump, out + "/signin-dump-dom.html", lab_.Path("chromium.log"),
                    std::chrono::seconds(60)),
            0)
      << ReadText(lab_.Path("chromium.log"));
  const std::string signin_dom = ReadText(out + "/signin-dump-dom.html");
  EXPECT_THAT(signin_dom, HasSubstr("<form method=\"post\" action=\"/login\">"));
  EXPECT_THAT(signin_dom, HasSubstr("name=\"next\" value=\"/jobs\""));
  EXPECT_THAT(signin_dom, Not(HasSubstr(ci_job_)));

  nlohmann::json config = {{"playwright", PlaywrightCore()},
                           {"chromium", kChromium},
                           {"url", lab_.web_url()},
                           {"token", kCiToken},
                           {"job", ci_job_},
                           {"other_job", dev_job_},
                           {"cases_job", cases_job_},
                           {"out", out},
                           {"viewports",
                            {{{"name", "desktop"}, {"width", 1366}, {"height", 900}},
                             {{"name", "phone"}, {"width", 390}, {"height", 844}}}}};
  const std::string config_path = lab_.WriteFile("browser.json", config.dump());
  ASSERT_EQ(RunTool({"/usr/bin/env", "node", RepoDir() + "/tests/service/web_pages_browser.js",
                     config_path},
                    lab_.Path("browser.out"), lab_.Path("browser.log"), std::chrono::seconds(120)),
            0)
      << ReadText(lab_.Path("browser.log"));
  const nlohmann::json result =
      nlohmann::json::parse(ReadText(out + "/result.json"), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(result.is_object()) << ReadText(out + "/result.json");

  for (const char* viewport : {"desktop", "phone"}) {
    SCOPED_TRACE(viewport);
    auto dom = [&](const std::string& page) {
      return ReadText(absl::StrCat(out, "/", page, "-", viewport, ".html"));
    };
    for (const char* page : {"signin", "jobs", "job", "cases", "boards", "other", "signedout"}) {
      const nlohmann::json& seen =
          result.value(absl::StrCat(page, "-", viewport), nlohmann::json());
      ASSERT_TRUE(seen.is_object()) << page;
      // Readable at this width without scrolling sideways; no style or script refused.
      EXPECT_FALSE(seen.value("overflow", true)) << page << " is wider than the window";
      EXPECT_EQ(seen.value("errors", nlohmann::json::array()), nlohmann::json::array()) << page;
      EXPECT_TRUE(std::filesystem::file_size(absl::StrCat(out, "/", page, "-", viewport, ".png")) >
                  0);
    }
    EXPECT_EQ(result[absl::StrCat("signin-", viewport)]["status"], 401);
    EXPECT_THAT(dom("signin"), HasSubstr("name=\"token\""));

    EXPECT_EQ(result[absl::StrCat("jobs-", viewport)]["status"], 200);
    const std::string jobs = dom("jobs");
    EXPECT_THAT(jobs, HasSubstr(ci_job_));
    EXPECT_THAT(jobs, HasSubstr(kEscapedModelName));
    EXPECT_THAT(jobs, Not(HasSubstr("<img")));
    EXPECT_THAT(jobs, Not(HasSubstr(dev_job_)));
    EXPECT_THAT(jobs, HasSubstr(">PASS</span>"));
    EXPECT_THAT(jobs, HasSubstr("ci (client)"));

    EXPECT_EQ(result[absl::StrCat("job-", viewport)]["status"], 200);
    const std::string job = dom("job");
    EXPECT_THAT(job, HasSubstr("FULLY_CONNECTED"));  // the partition table
    EXPECT_THAT(job, HasSubstr(">NPU</span>"));
    EXPECT_THAT(job, HasSubstr("output 0"));         // the output check
    EXPECT_THAT(job, HasSubstr(">latency</td>"));    // a budget
    EXPECT_THAT(job, HasSubstr("class=\"slice\""));  // the timeline, drawn from the ETDump
    EXPECT_THAT(job, HasSubstr("/files/trace.json\">trace.json</a>"));
    EXPECT_THAT(job, HasSubstr("/files/etdump.etdp\">etdump.etdp</a>"));

    // A many-case job's inference names the case it is, as the client's verdict line does.
    EXPECT_EQ(result[absl::StrCat("cases-", viewport)]["status"], 200);
    const std::string cases = dom("cases");
    EXPECT_THAT(cases, HasSubstr("<h2>Cases</h2>"));
    EXPECT_THAT(cases, HasSubstr(absl::StrCat("(slowest of 2 cases: ", slowest_case_, ")")));

    const std::string boards = dom("boards");
    EXPECT_THAT(boards, HasSubstr("a-sim-0"));
    EXPECT_THAT(boards, HasSubstr("data-label=\"Jobs run\" class=\"num\">3</td>"));

    EXPECT_EQ(result[absl::StrCat("other-", viewport)]["status"], 404);
    EXPECT_THAT(dom("other"), Not(HasSubstr("dev.tflite")));
    EXPECT_EQ(result[absl::StrCat("signedout-", viewport)]["status"], 401);
  }
}

}  // namespace
}  // namespace boardlab::testing::service
