// JUnit reports (cli/junit.h): checked against tests/cli/junit.xsd with xmllint --schema, read
// back with libxml2 for their counts, and written by `submit --wait --junit` and `watch --junit`.

#include "cli/junit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>

#include <fstream>
#include <sstream>

#include "tests/cli/fake_boardlab_server.h"
#include "tests/support/process.h"
#include "tests/support/test_paths.h"

namespace boardlab::cli {
namespace {

using ::testing::HasSubstr;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// xmllint --schema: exit 0 only for a well-formed document that the schema accepts.
boardlab::testing::CommandResult ValidateAgainstSchema(const std::string& xml,
                                                       const std::string& name) {
  const std::string path = testing::WriteTestFile(name, xml);
  return boardlab::testing::RunCommand("xmllint --noout --schema " + boardlab::testing::RepoDir() +
                                       "/tests/cli/junit.xsd " + path);
}

// The number the XPath expression counts in `xml`, e.g. "count(//failure)"; -1 when it does not
// parse.
double XPathNumber(const std::string& xml, const std::string& expression) {
  xmlDocPtr doc = xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "junit.xml", nullptr,
                                XML_PARSE_NONET);
  if (doc == nullptr) return -1;
  xmlXPathContextPtr context = xmlXPathNewContext(doc);
  xmlXPathObjectPtr result =
      xmlXPathEvalExpression(reinterpret_cast<const xmlChar*>(expression.c_str()), context);
  const double number = result != nullptr ? xmlXPathCastToNumber(result) : -1;
  xmlXPathFreeObject(result);
  xmlXPathFreeContext(context);
  xmlFreeDoc(doc);
  return number;
}

v1::Job FailedJob() {
  v1::Job job;
  job.set_id("j00000007");
  job.mutable_spec()->set_name("kws <int8> & \"friends\".tflite");
  job.mutable_spec()->mutable_selector()->set_board_type("imxrt700-sim");
  job.mutable_spec()->mutable_run()->set_atol(1);
  job.set_board_id("lab1-sim-0");
  job.set_state(v1::JOB_STATE_DONE);
  job.set_result(v1::JOB_RESULT_FAIL);
  job.set_message(
      "output 1 differs: max abs diff 9 > 1; budget failed: sram 2048 bytes > 1024 bytes");
  job.set_submit_time_ms(1'764'000'000'000);
  job.set_end_time_ms(1'764'000'001'500);
  job.set_inference_us(612.5);
  v1::OutputCheck* good = job.add_checks();
  good->set_index(0);
  good->set_passed(true);
  v1::OutputCheck* bad = job.add_checks();
  bad->set_index(1);
  bad->set_max_abs_diff(9);
  v1::BudgetCheck* sram = job.add_budget_checks();
  sram->set_name("sram");
  sram->set_unit("bytes");
  sram->set_comparison("<=");
  sram->set_limit(1024);
  sram->set_measured(2048);
  v1::BudgetCheck* latency = job.add_budget_checks();
  latency->set_name("latency");
  latency->set_unit("us");
  latency->set_comparison("<=");
  latency->set_limit(700);
  latency->set_measured(612.5);
  latency->set_passed(true);
  return job;
}

TEST(Junit, AFailedJobIsOneSuiteWithACasePerCheck) {
  const std::string xml = JunitXml({JobSuite(FailedJob())});
  boardlab::testing::CommandResult valid = ValidateAgainstSchema(xml, "failed.xml");
  EXPECT_EQ(valid.exit_code, 0) << valid.output << xml;
  EXPECT_EQ(XPathNumber(xml, "count(/testsuites/testsuite)"), 1);
  EXPECT_EQ(XPathNumber(xml, "count(//testcase)"), 5) << "run, 2 outputs, 2 budgets";
  EXPECT_EQ(XPathNumber(xml, "number(/testsuites/@tests)"), 5);
  EXPECT_EQ(XPathNumber(xml, "number(/testsuites/@failures)"), 2);
  EXPECT_EQ(XPathNumber(xml, "number(//testsuite/@failures)"), 2);
  EXPECT_EQ(XPathNumber(xml, "number(//testsuite/@errors)"), 0);
  EXPECT_EQ(XPathNumber(xml, "count(//testcase[@name='output 1']/failure)"), 1);
  EXPECT_EQ(XPathNumber(xml, "count(//testcase[@name='budget sram']/failure)"), 1);
  EXPECT_EQ(XPathNumber(xml, "count(//testcase[@name='budget latency']/*)"), 0);
  EXPECT_EQ(XPathNumber(xml, "number(//testsuite/@time)"), 1.5);
  EXPECT_THAT(xml, HasSubstr("timestamp=\"2025-11-24T16:00:00\""));
  EXPECT_THAT(xml, HasSubstr("message=\"max abs diff 9 &gt; atol 1\""));
  EXPECT_THAT(xml, HasSubstr("message=\"sram 2048 bytes &lt;= 1024 bytes: FAIL\""));
  EXPECT_THAT(xml, HasSubstr("kws &lt;int8&gt; &amp; &quot;friends&quot;.tflite"));
}

// What timed the latency is a suite property, whether the budget passed or failed.
TEST(Junit, TheLatencyClockIsAProperty) {
  v1::Job job = FailedJob();
  job.mutable_budget_checks(1)->set_clock("simulated RT700");
  const std::string xml = JunitXml({JobSuite(job)});
  EXPECT_EQ(ValidateAgainstSchema(xml, "clock.xml").exit_code, 0) << xml;
  EXPECT_THAT(xml, HasSubstr("<property name=\"latency_clock\" value=\"simulated RT700\"/>"));
  EXPECT_EQ(XPathNumber(xml, "count(//property[@name='sram_clock'])"), 0) << "only a clocked check";
  // The inference time names its clock too ("clock not recorded" when the job does not say).
  EXPECT_THAT(xml, HasSubstr("<property name=\"inference_us\" value=\"612.500\"/>"));
  EXPECT_THAT(xml, HasSubstr("<property name=\"inference_clock\" value=\"clock not recorded\"/>"));
  job.set_inference_clock("qemu-icount");
  EXPECT_THAT(JunitXml({JobSuite(job)}),
              HasSubstr("<property name=\"inference_clock\" value=\"QEMU instruction count\"/>"));
}

TEST(Junit, AJobThatNeverRanIsAnError) {
  v1::Job job;
  job.set_id("j00000008");
  job.set_result(v1::JOB_RESULT_COMPILE_ERROR);
  job.set_message("operator 3: unsupported");
  const std::string xml = JunitXml({JobSuite(job)});
  EXPECT_EQ(ValidateAgainstSchema(xml, "error.xml").exit_code, 0) << xml;
  EXPECT_EQ(XPathNumber(xml, "number(/testsuites/@errors)"), 1);
  EXPECT_EQ(XPathNumber(xml, "number(/testsuites/@failures)"), 0);
  EXPECT_THAT(xml, HasSubstr("message=\"COMPILE_ERROR: operator 3: unsupported\""));
}

// A job without output yet ran (its run case passes) but its outputs were not compared: a
// skipped case, as CI servers show it; a many-case job's cases without output likewise.
TEST(Junit, NoOutputYetIsSkippedNotPassed) {
  v1::Job job;
  job.set_id("j00000009");
  job.set_result(v1::JOB_RESULT_NO_OUTPUT);
  job.set_message("no output yet: a streaming op ended the last inference early");
  std::string xml = JunitXml({JobSuite(job)});
  EXPECT_EQ(ValidateAgainstSchema(xml, "no_output.xml").exit_code, 0) << xml;
  EXPECT_EQ(XPathNumber(xml, "number(/testsuites/@skipped)"), 1);
  EXPECT_EQ(XPathNumber(xml, "number(/testsuites/@errors)"), 0);
  EXPECT_EQ(XPathNumber(xml, "number(/testsuites/@failures)"), 0);
  EXPECT_THAT(xml, HasSubstr("<skipped message=\"no output yet: a streaming op"));

  job.set_result(v1::JOB_RESULT_PASS);
  v1::CaseResult* early = job.add_cases();
  early->set_name("a");
  early->set_no_output(true);
  v1::CaseResult* ran = job.add_cases();
  ran->set_name("b");
  ran->set_passed(true);
  job.mutable_case_summary()->set_cases(2);
  job.mutable_case_summary()->set_passed(1);
  job.mutable_case_summary()->set_no_output(1);
  xml = JunitXml({JobSuite(job)});
  EXPECT_EQ(ValidateAgainstSchema(xml, "no_output_cases.xml").exit_code, 0) << xml;
  EXPECT_EQ(XPathNumber(xml, "count(//testcase[@name='case a']/skipped)"), 1) << xml;
  EXPECT_EQ(XPathNumber(xml, "count(//testcase[@name='case b']/*)"), 0) << xml;
  EXPECT_EQ(XPathNumber(xml, "number(/testsuites/@failures)"), 0);
  EXPECT_THAT(xml, HasSubstr("<property name=\"cases_no_output\" value=\"1\"/>"));
}

TEST(Junit, BytesThatXmlForbidsAreReplaced) {
  v1::Job job = FailedJob();
  job.set_message(std::string("bad \x01 byte \xff and \xc3\x28 and ok \xc3\xa9 \xef\xbf\xbf", 33));
  const std::string xml = JunitXml({JobSuite(job)});
  EXPECT_EQ(ValidateAgainstSchema(xml, "bytes.xml").exit_code, 0) << xml;
  EXPECT_THAT(xml, HasSubstr("bad ? byte ? and ?( and ok \xc3\xa9 ?"));
}

TEST(Junit, TheSchemaCheckRejectsWhatCiServersWouldNotRead) {
  const std::string good = JunitXml({JobSuite(FailedJob())});
  ASSERT_EQ(ValidateAgainstSchema(good, "good.xml").exit_code, 0);
  // Malformed: cut off in the middle.
  EXPECT_NE(ValidateAgainstSchema(good.substr(0, good.size() / 2), "cut.xml").exit_code, 0);
  // Well-formed but not a report: a testcase without its name, counts that are not numbers.
  EXPECT_NE(ValidateAgainstSchema("<testsuites><testsuite name=\"s\" tests=\"1\"><testcase/>"
                                  "</testsuite></testsuites>",
                                  "noname.xml")
                .exit_code,
            0);
  EXPECT_NE(ValidateAgainstSchema("<testsuites><testsuite name=\"s\" tests=\"many\"/>"
                                  "</testsuites>",
                                  "count.xml")
                .exit_code,
            0);
  EXPECT_NE(ValidateAgainstSchema("<report/>", "other.xml").exit_code, 0);
}

TEST(Junit, SubmitAndWatchWriteTheReport) {
  testing::FakeBoardlabServer server;
  server.jobs().SetOutcome(FailedJob());
  const std::string model = testing::WriteTestFile("junit.tflite", "model bytes");
  const std::string submitted = ::testing::TempDir() + "/submit-junit.xml";
  testing::CapturedRun submit =
      testing::RunCaptured({"submit", model, "--wait", "--junit", submitted}, server.address());
  EXPECT_EQ(submit.code, 1) << submit.err;
  const std::string xml = ReadText(submitted);
  EXPECT_EQ(ValidateAgainstSchema(xml, "submit.xml").exit_code, 0) << xml;
  EXPECT_EQ(XPathNumber(xml, "number(/testsuites/@failures)"), 2) << xml;

  const std::string watched = ::testing::TempDir() + "/watch-junit.xml";
  testing::CapturedRun watch =
      testing::RunCaptured({"watch", "job-1", "--junit", watched}, server.address());
  EXPECT_EQ(watch.code, 1) << watch.err;
  EXPECT_EQ(ReadText(watched), xml) << "the same job, the same report";
}

TEST(Junit, SubmitWithoutWaitRefusesJunit) {
  testing::FakeBoardlabServer server;
  const std::string model = testing::WriteTestFile("junit_nowait.tflite", "model bytes");
  testing::CapturedRun run =
      testing::RunCaptured({"submit", model, "--junit", "r.xml"}, server.address());
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("--wait"));
}

TEST(Junit, AnUnwritableReportIsExitFiveForAPassingJob) {
  testing::FakeBoardlabServer server;
  v1::Job pass;
  pass.set_result(v1::JOB_RESULT_PASS);
  server.jobs().SetOutcome(pass);
  const std::string model = testing::WriteTestFile("junit_bad.tflite", "model bytes");
  testing::CapturedRun run = testing::RunCaptured(
      {"submit", model, "--wait", "--junit", "/nonexistent-dir/r.xml"}, server.address());
  EXPECT_EQ(run.code, 5) << run.err;
  EXPECT_THAT(run.err, HasSubstr("writing the JUnit report"));
}

}  // namespace
}  // namespace boardlab::cli
