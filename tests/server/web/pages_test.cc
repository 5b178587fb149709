// The web pages' rendering (server/web/*_page.h, page_layout.h): every value a user can choose is
// escaped, the filters read and write the query, and each page shows what it promises.

#include <regex>

#include "absl/strings/ascii.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/support/case_results.h"
#include "server/lab_board.h"
#include "server/web/boards_page.h"
#include "server/web/job_page.h"
#include "server/web/jobs_page.h"
#include "server/web/page_layout.h"
#include "server/web/style.h"

namespace boardlab::server::web {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kEvil[] = "<script>alert(1)</script>";
constexpr int64_t kNow = 1'700'000'100'000;

v1::Job FinishedJob() {
  v1::Job job;
  job.set_id("j00000007");
  job.set_tenant(std::string("team") + kEvil);
  job.mutable_spec()->set_name(std::string("model\"><img src=x onerror=alert(1)>"));
  job.mutable_spec()->mutable_model()->set_sha256(std::string(64, 'a'));
  job.mutable_spec()->mutable_selector()->set_board_type("imxrt700-sim");
  job.set_state(v1::JOB_STATE_DONE);
  job.set_result(v1::JOB_RESULT_PASS);
  job.set_board_id("a-sim-0");
  job.set_attempt(1);
  job.set_inference_us(612.5);
  job.set_inference_clock("rt700-sim-cycles");
  job.set_submit_time_ms(kNow - 95'000);
  job.set_end_time_ms(kNow - 90'000);
  return job;
}

// No element a value could have smuggled in: the only tags are the pages' own.
void ExpectNoInjectedMarkup(const std::string& html) {
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
}

TEST(JobsPageTest, ListsJobsWithEveryValueEscaped) {
  JobsPageData data;
  data.jobs = {FinishedJob()};
  data.now_ms = kNow;
  const std::string html = JobsPageBody(data);
  ExpectNoInjectedMarkup(html);
  EXPECT_THAT(html, HasSubstr("team&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, HasSubstr("model&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_THAT(html, HasSubstr("<a href=\"/jobs/j00000007\">j00000007</a>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"badge pass\">PASS</span>"));
  EXPECT_THAT(html, HasSubstr("612.5&nbsp;us<br><small>clock: simulated RT700</small>"));
  EXPECT_THAT(html, HasSubstr("data-label=\"Age\" class=\"num\">1m</td>"));
  EXPECT_THAT(html, HasSubstr("a-sim-0"));
}

TEST(JobsPageTest, TheFilterFormKeepsTheChosenFiltersAndOffersTenantsToAdminsOnly) {
  JobsPageData data;
  data.query.state = "done";
  data.query.verdict = "fail";
  data.query.board_type = "imxrt700-\"qemu";
  data.board_types = {"imxrt700-sim"};
  std::string html = JobsPageBody(data);
  EXPECT_THAT(html, HasSubstr("<option value=\"done\" selected>done</option>"));
  EXPECT_THAT(html, HasSubstr("<option value=\"fail\" selected>fail</option>"));
  EXPECT_THAT(html, HasSubstr("<option value=\"imxrt700-&quot;qemu\" selected>"));
  EXPECT_THAT(html, HasSubstr("<option value=\"imxrt700-sim\">"));
  EXPECT_THAT(html, HasSubstr("No jobs match these filters."));
  EXPECT_THAT(html, Not(HasSubstr("name=\"tenant\"")));
  data.tenant_filter = true;
  data.query.tenant = kEvil;
  html = JobsPageBody(data);
  EXPECT_THAT(html, HasSubstr("name=\"tenant\""));
  ExpectNoInjectedMarkup(html);
}

TEST(JobsPageTest, TheNextPageLinkKeepsTheFilters) {
  JobsPageData data;
  data.jobs = {FinishedJob()};
  data.query.verdict = "pass";
  data.query.board_type = "a b&c";
  data.next_page = "42";
  EXPECT_THAT(JobsPageBody(data),
              HasSubstr("href=\"/jobs?verdict=pass&amp;board_type=a%20b%26c&amp;page=42\""));
}

TEST(JobsQueryTest, ReadsFiltersIntoAListRequest) {
  auto query = ParseJobsQuery(
      {{"state", "done"}, {"verdict", "FAIL"}, {"board_type", "imxrt700-sim"}, {"page", "9"}});
  ASSERT_TRUE(query.ok()) << query.status();
  v1::ListJobsRequest request = ListRequestFor(*query);
  ASSERT_EQ(request.states_size(), 1);
  EXPECT_EQ(request.states(0), v1::JOB_STATE_DONE);
  ASSERT_EQ(request.results_size(), 1);
  EXPECT_EQ(request.results(0), v1::JOB_RESULT_FAIL);
  EXPECT_EQ(request.board_type(), "imxrt700-sim");
  EXPECT_EQ(request.page_token(), "9");
  EXPECT_EQ(request.page_size(), kJobsPageSize);
  EXPECT_TRUE(request.tenant().empty());

  auto any = ParseJobsQuery({{"state", ""}, {"verdict", ""}});
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(ListRequestFor(*any).states_size(), 0);
  EXPECT_EQ(ListRequestFor(*any).results_size(), 0);
}

TEST(JobsQueryTest, UnknownFiltersAndValuesAreNamed) {
  struct Case {
    FormFields fields;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {{{"state", "sleeping"}}, "the filter state='sleeping' names no state"},
           {{{"state", "unspecified"}}, "the filter state='unspecified' names no state"},
           {{{"verdict", "maybe"}}, "the filter verdict='maybe' names no verdict"},
           {{{"colour", "red"}}, "the jobs page has no filter 'colour'"}}) {
    auto query = ParseJobsQuery(c.fields);
    ASSERT_FALSE(query.ok()) << c.message;
    EXPECT_EQ(query.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(query.status().message()), HasSubstr(c.message));
  }
}

nlohmann::json Report() {
  return nlohmann::json::parse(R"({
    "target": "imxrt700",
    "ops": [
      {"index": 0, "type": "CONV_2D", "name": "conv<1>", "unit": "NPU", "partition": 0,
       "macs": 1327104, "cycles": 2400, "us": 10.0, "reason": ""},
      {"index": 1, "type": "SOFTMAX", "name": "probs", "unit": "CPU", "partition": -1,
       "macs": 0, "cycles": 900, "us": 3.75,
       "reason": "SOFTMAX #1: <not on the NPU> & never will be"},
      {"index": 0, "subgraph": 2, "type": "RELU", "name": "relu_in_else", "unit": "CPU",
       "partition": -1, "macs": 0, "cycles": 40, "us": 0.2, "reason": "in a subgraph"},
      {"index": "bad", "type": 7, "unit": ["x"]}
    ],
    "totals": {"ops": 2, "npu_ops": 1, "cpu_ops": 1, "npu_partitions": 1, "macs": 1327104,
               "npu_macs_percent": 100.0, "estimated_latency_us": 13.75},
    "memory": {"arena_bytes": 4096, "weight_bytes": 2048, "weights_placement": "sram",
               "sram_used_bytes": 6144, "sram_budget_bytes": 1048576}
  })");
}

TEST(JobPageTest, ShowsFactsChecksPartitionTimelineFilesAndLog) {
  JobPageData data;
  data.job = FinishedJob();
  v1::OutputCheck* output = data.job.add_checks();
  output->set_index(0);
  output->set_passed(true);
  v1::BudgetCheck* latency = data.job.add_budget_checks();
  latency->set_name("latency");
  latency->set_unit("us");
  latency->set_comparison("<=");
  latency->set_limit(500);
  latency->set_measured(612.5);
  latency->set_passed(false);
  latency->set_clock("simulated RT700");
  v1::BudgetCheck* sram = data.job.add_budget_checks();
  sram->set_name("sram");
  sram->set_unit("bytes");
  sram->set_comparison("<=");
  sram->set_limit(100000000);
  sram->set_passed(false);
  sram->set_detail("no <compile report>");
  data.report = Report();
  data.timeline_svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect class=\"slice\"/></svg>";
  data.files = {{"report.json", 1234}, {"trace.json", -1}};
  data.log_text = "boot\n<b>not bold</b>\n";
  data.now_ms = kNow;
  const std::string html = JobPageBody(data);
  ExpectNoInjectedMarkup(html);
  EXPECT_THAT(html, HasSubstr("<h1>Job j00000007 <span class=\"badge pass\">PASS</span></h1>"));
  EXPECT_THAT(html, HasSubstr("2023-11-14 22:13:25 UTC"));  // submitted, kNow - 95 s
  EXPECT_THAT(html, HasSubstr("Took</dt><dd>5.0 s"));
  EXPECT_THAT(html, HasSubstr("output 0"));
  EXPECT_THAT(html, HasSubstr("612.5 us (clock: simulated RT700)"));
  EXPECT_THAT(html, HasSubstr("&lt;= 500 us"));
  EXPECT_THAT(html, HasSubstr("&lt;= 100000000 bytes"));  // whole numbers without an exponent
  EXPECT_THAT(html, HasSubstr("not measured"));
  EXPECT_THAT(html, HasSubstr("no &lt;compile report&gt;"));
  EXPECT_THAT(html, HasSubstr("<span class=\"badge fail\">FAIL</span>"));
  EXPECT_THAT(html, HasSubstr("clock: simulated RT700"));
  // Partition: both units, the reason escaped, a malformed row shown empty rather than failing.
  EXPECT_THAT(html, HasSubstr("<span class=\"badge npu\">NPU</span>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"badge cpu\">CPU</span>"));
  EXPECT_THAT(html, HasSubstr("conv&lt;1&gt;"));
  EXPECT_THAT(html, HasSubstr("SOFTMAX #1: &lt;not on the NPU&gt; &amp; never will be"));
  EXPECT_THAT(html, HasSubstr("1327104"));
  EXPECT_THAT(html, HasSubstr(">2:0</td>"));  // op 0 of subgraph 2, not the main graph's op 0
  EXPECT_THAT(html,
              HasSubstr("Ops: 1 on the NPU in 1 partition(s), 1 on the CPU; 100.0% of 1327104"));
  EXPECT_THAT(html, HasSubstr("<div class=\"scroll timeline\"><svg"));
  EXPECT_THAT(html, HasSubstr("<a href=\"/jobs/j00000007/files/report.json\">report.json</a>"));
  EXPECT_THAT(html, HasSubstr("1.2 KiB"));
  EXPECT_THAT(html, HasSubstr("&lt;b&gt;not bold&lt;/b&gt;"));
}

TEST(JobPageTest, AJobThatNeverRanSaysWhatIsMissing) {
  JobPageData data;
  data.job.set_id("j1");
  data.job.set_state(v1::JOB_STATE_DONE);
  data.job.set_result(v1::JOB_RESULT_COMPILE_ERROR);
  data.job.set_message("Reading input file: <not a model>");
  data.timeline_note = "No profile: the job has not run on a board.";
  const std::string html = JobPageBody(data);
  EXPECT_THAT(html, HasSubstr("badge compile_error"));
  EXPECT_THAT(html, HasSubstr("<p class=\"error\">Reading input file: &lt;not a model&gt;</p>"));
  EXPECT_THAT(html, HasSubstr("No checks: the job has not run on a board."));
  EXPECT_THAT(html, HasSubstr("No compile report: the model was not compiled."));
  EXPECT_THAT(html, HasSubstr("No profile: the job has not run on a board."));
  EXPECT_THAT(html, Not(HasSubstr("Board log")));
}

// A job without output yet: its badge, and its message not shown as an error; a case without
// output is NO_OUTPUT, counted apart in the aggregate.
TEST(JobPageTest, NoOutputYetIsShownAsSuchNotAsAnError) {
  JobPageData data;
  data.job = FinishedJob();
  data.job.set_result(v1::JOB_RESULT_NO_OUTPUT);
  data.job.set_message("no output yet: outputs not compared");
  v1::CaseResult* c = data.job.add_cases();
  c->set_name("early");
  c->set_no_output(true);
  *data.job.mutable_case_summary() = api::SummarizeCases(data.job.cases());
  const std::string html = JobPageBody(data);
  EXPECT_THAT(html, HasSubstr("<span class=\"badge no_output\">NO_OUTPUT</span></h1>"));
  EXPECT_THAT(html, HasSubstr("<p class=\"\">no output yet: outputs not compared</p>"));
  EXPECT_THAT(html, HasSubstr("cases: 0 of 1 passed, 1 no output yet"));
  const size_t start = html.find("<h2>Cases</h2>");
  ASSERT_NE(start, std::string::npos) << html;
  EXPECT_THAT(html.substr(start), HasSubstr("<span class=\"badge no_output\">NO_OUTPUT</span>"));
}

// Every case with its verdict, difference, top-1 and time, the aggregate above them, the time's
// clock beside it; a case without expected outputs is UNVERIFIED, not passed.
TEST(JobPageTest, AManyCaseJobListsEveryCase) {
  JobPageData data;
  data.job = FinishedJob();
  struct Case {
    const char* name;
    bool checked, passed;
    int diff, top1;
  };
  for (const Case& spec : {Case{"seed<1>", true, true, 0, 3}, Case{"seed2", true, false, 7, 5},
                           Case{"free", false, true, 0, -1}}) {
    v1::CaseResult* c = data.job.add_cases();
    c->set_name(spec.name);
    c->set_passed(spec.passed);
    c->set_inference_us(600.25);
    if (spec.checked) {
      v1::OutputCheck* check = c->add_checks();
      check->set_passed(spec.passed);
      check->set_max_abs_diff(spec.diff);
      c->set_top1(spec.top1);
      c->set_top1_expected(3);
    }
    *c->add_outputs() = v1::Digest();
  }
  *data.job.mutable_case_summary() = api::SummarizeCases(data.job.cases());
  const std::string html = JobPageBody(data);
  ExpectNoInjectedMarkup(html);
  EXPECT_THAT(html, HasSubstr("<h2>Cases</h2>"));
  EXPECT_THAT(html, HasSubstr("cases: 2 of 3 passed (1 unverified), max abs diff 7 (case seed2), "
                              "top-1 agreement 50.0% (1 "
                              "of 2)"));
  EXPECT_THAT(html, HasSubstr("seed&lt;1&gt;"));
  EXPECT_THAT(html, HasSubstr("<span class=\"badge unverified\">UNVERIFIED</span>"));
  EXPECT_THAT(html, HasSubstr("5 (3)"));  // top-1 of seed2 and the expected class
  EXPECT_THAT(html, HasSubstr("600.2 us"));
  EXPECT_THAT(html, HasSubstr("each case's mean of its inferences that produced output (clock: "
                              "simulated RT700)"));
  // The job's figure says which case it is, as the client's verdict line does.
  EXPECT_THAT(html, HasSubstr("612.5 us (slowest of 3 cases: seed&lt;1&gt;) (clock: simulated "
                              "RT700)"));
  EXPECT_THAT(html, HasSubstr("/jobs/j00000007/files/cases%2Fseed2%2Foutput0.bin\""));
  // One row per case (and the header's), however many pass: the page leaves none out.
  const size_t start = html.find("<h2>Cases</h2>");
  const std::string section = html.substr(start, html.find("</section>", start) - start);
  size_t rows = 0;
  for (size_t at = section.find("<tr>"); at != std::string::npos;
       at = section.find("<tr>", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 1 + 3u);
}

// Cases without output are left out of the latency figure: the page says of how many cases
// with output it is the slowest.
TEST(JobPageTest, TheInferenceFactCountsTheCasesWithOutput) {
  JobPageData data;
  data.job = FinishedJob();
  for (const char* name : {"early", "b", "c"}) {
    v1::CaseResult* c = data.job.add_cases();
    c->set_name(name);
    c->set_passed(std::string(name) != "early");
    c->set_no_output(std::string(name) == "early");
    if (!c->no_output()) c->set_inference_us(std::string(name) == "b" ? 612.5 : 600);
  }
  *data.job.mutable_case_summary() = api::SummarizeCases(data.job.cases());
  const std::string html = JobPageBody(data);
  EXPECT_THAT(html, HasSubstr("<dt>Inference</dt><dd>612.5 us (slowest of 2 cases with output: "
                              "b) (clock: simulated RT700)</dd>"));
}

TEST(JobPageTest, ALongLogShowsItsTail) {
  std::string log;
  for (int i = 1; i <= 250; ++i) log += "line " + std::to_string(i) + "\n";
  int omitted = 0;
  const std::string tail = LogTail(log, 200, &omitted);
  EXPECT_EQ(omitted, 50);
  EXPECT_EQ(tail.substr(0, 8), "line 51\n");
  EXPECT_EQ(tail.substr(tail.size() - 8), "line 250");
  EXPECT_EQ(LogTail("one\ntwo", 200, &omitted), "one\ntwo");
  EXPECT_EQ(omitted, 0);
}

TEST(BoardsPageTest, ShowsStateHolderHealthJobsRunAndLastFailure) {
  BoardsPageData data;
  data.now_ms = kNow;
  v1::Board busy;
  busy.set_id("a-sim-0");
  busy.set_type("imxrt700-sim");
  busy.set_state(v1::BOARD_STATE_BUSY);
  busy.set_job_id("j00000007");
  busy.set_jobs_run(12);
  v1::Board sick;
  sick.set_id(std::string("b-") + kEvil);
  sick.set_type("imxrt700-sim");
  sick.set_state(v1::BOARD_STATE_QUARANTINED);
  sick.set_consecutive_failures(3);
  sick.set_reason("quarantined after 3 infrastructure failures in a row; last: <hang>");
  sick.set_last_failure("runner <died>");
  sick.set_last_failure_ms(kNow - 7'200'000);
  v1::Board reserved;
  reserved.set_id("c-sim-0");
  reserved.set_type("imxrt700-qemu");
  reserved.set_state(v1::BOARD_STATE_RESERVED);
  reserved.set_reserved_by("ml-team");
  reserved.set_lease_expires_ms(kNow + 600'000);
  data.boards = {busy, sick, reserved};
  data.queued_jobs = {{"imxrt700-sim", 4}};
  const std::string html = BoardsPageBody(data);
  ExpectNoInjectedMarkup(html);
  EXPECT_THAT(html, HasSubstr("job <a href=\"/jobs/j00000007\">j00000007</a>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"badge quarantined\">quarantined</span>"));
  EXPECT_THAT(html, HasSubstr("3 infrastructure failure(s) in a row<br>quarantined after 3"));
  EXPECT_THAT(html, HasSubstr("last: &lt;hang&gt;"));
  EXPECT_THAT(html, HasSubstr("2h ago</span>: runner &lt;died&gt;"));
  EXPECT_THAT(html, HasSubstr("data-label=\"Jobs run\" class=\"num\">12</td>"));
  EXPECT_THAT(html, HasSubstr("reserved by ml-team for 10m more"));
  EXPECT_THAT(html, HasSubstr("<strong>imxrt700-sim</strong>: 2 board(s) (1 busy, 1 quarantined); "
                              "4 job(s) queued"));
  EXPECT_THAT(html, HasSubstr("<strong>imxrt700-qemu</strong>: 1 board(s) (1 reserved); 0 job(s)"));
  EXPECT_THAT(html, HasSubstr(">never</td>"));
}

TEST(PageLayoutTest, TheDocumentLinksTheStylesheetAndHasNoScript) {
  Viewer viewer{kEvil, "client", /*has_session=*/true};
  const std::string html = PageDocument(std::string("T") + kEvil, &viewer, "<p>body</p>");
  ExpectNoInjectedMarkup(html);
  EXPECT_THAT(html, HasSubstr("<meta name=\"viewport\" content=\"width=device-width"));
  EXPECT_THAT(html, HasSubstr("<link rel=\"stylesheet\" href=\"/style.css\">"));
  EXPECT_THAT(html, HasSubstr("action=\"/logout\""));
  viewer.has_session = false;  // a bearer token or an open server: nothing to sign out of
  EXPECT_THAT(PageDocument("T", &viewer, ""), Not(HasSubstr("/logout")));
  EXPECT_THAT(PageDocument("T", nullptr, ""), Not(HasSubstr("class=\"viewer\"")));
}

TEST(PageLayoutTest, TheSignInFormPostsTheTokenAndWhereToGoNext) {
  const std::string html = LoginPage("/jobs?state=\"done\"", "the bearer token is <unknown>");
  EXPECT_THAT(html, HasSubstr("<form method=\"post\" action=\"/login\">"));
  EXPECT_THAT(html, HasSubstr("name=\"token\" type=\"password\""));
  EXPECT_THAT(html, HasSubstr("name=\"next\" value=\"/jobs?state=&quot;done&quot;\""));
  EXPECT_THAT(html, HasSubstr("the bearer token is &lt;unknown&gt;"));
}

TEST(PageLayoutTest, AgesAndSizesReadAsPeopleSayThem) {
  EXPECT_EQ(AgeText(0, kNow), "-");
  EXPECT_EQ(AgeText(kNow - 42'000, kNow), "42s");
  EXPECT_EQ(AgeText(kNow - 300'000, kNow), "5m");
  EXPECT_EQ(AgeText(kNow - 3 * 3'600'000, kNow), "3h");
  EXPECT_EQ(AgeText(kNow - 2 * 86'400'000, kNow), "2d");
  EXPECT_EQ(AgeText(kNow + 5000, kNow), "0s");  // a clock skew is not negative age
  EXPECT_EQ(BytesText(812), "812 B");
  EXPECT_EQ(BytesText(12800), "12.5 KiB");
  EXPECT_EQ(BytesText(3355443), "3.20 MiB");
  EXPECT_EQ(TimeText(0), "-");
  EXPECT_EQ(JobStateText(v1::JOB_STATE_COLLECTING), "collecting");
  EXPECT_EQ(VerdictText(v1::JOB_RESULT_QUEUE_TIMEOUT), "QUEUE_TIMEOUT");
  EXPECT_EQ(VerdictText(v1::JOB_RESULT_UNSPECIFIED), "");
}

// A class the stylesheet has no rule for is a grey badge: every state and verdict a page can show
// has its colour, including those added to the API after the pages (a board's RECOVERING).
TEST(PageLayoutTest, EveryStateAndVerdictBadgeHasAColour) {
  const std::string css = kStyleSheet;
  auto styled = [&](const std::string& name) {
    return std::regex_search(css, std::regex("\\.badge\\." + name + "[^a-z_]"));
  };
  for (int s = v1::BoardState_MIN + 1; s <= v1::BoardState_MAX; ++s) {
    if (!v1::BoardState_IsValid(s)) continue;
    const std::string name = BoardStateName(static_cast<v1::BoardState>(s));
    EXPECT_TRUE(styled(name)) << "board state " << name;
  }
  for (int s = v1::JobState_MIN + 1; s <= v1::JobState_MAX; ++s) {
    if (!v1::JobState_IsValid(s)) continue;
    const std::string name = JobStateText(static_cast<v1::JobState>(s));
    // "done" stays grey on purpose: the verdict next to it carries the colour.
    if (name != "done") {
      EXPECT_TRUE(styled(name)) << "job state " << name;
    }
  }
  for (int r = v1::JobResult_MIN + 1; r <= v1::JobResult_MAX; ++r) {
    if (!v1::JobResult_IsValid(r)) continue;
    const std::string name = absl::AsciiStrToLower(VerdictText(static_cast<v1::JobResult>(r)));
    EXPECT_TRUE(styled(name)) << "verdict " << name;
  }
}

}  // namespace
}  // namespace boardlab::server::web
