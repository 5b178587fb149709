// A many-case job in the Lab (v1::RunSpec.cases): what Submit refuses and why, the assignment
// carrying the cases, the agent's right to fetch their blobs, and the cases, the aggregate and
// the verdict stored from the agent's result.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "server/lab.h"
#include "tests/server/lab_fixture.h"

namespace boardlab::server::testing {
namespace {

using ::testing::HasSubstr;

class LabCasesTest : public LabTest {
 protected:
  // A case of the fully connected model: 16 input bytes, 10 expected bytes (optional).
  v1::RunCase Case(const std::string& name, uint8_t fill, bool expected = true) {
    v1::RunCase c;
    c.set_name(name);
    *c.add_inputs()->mutable_blob() = PutBlob(std::vector<uint8_t>(16, fill));
    if (expected) *c.add_expected() = PutBlob(std::vector<uint8_t>(10, fill));
    return c;
  }

  v1::CaseResult CaseResultOf(const std::string& name, bool passed, int diff, int64_t top1,
                              double us) {
    v1::CaseResult r;
    r.set_name(name);
    r.set_passed(passed);
    v1::OutputCheck* check = r.add_checks();
    check->set_passed(passed);
    check->set_max_abs_diff(diff);
    r.set_top1(top1);
    r.set_top1_expected(3);
    r.set_inference_us(us);
    // Uploaded by the agent: no tenant holds it until the result is recorded.
    *r.add_outputs() = PutAsAgent(name + " output");
    return r;
  }
};

TEST_F(LabCasesTest, SubmitRefusesCasesThatCannotRun) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  const v1::Digest model = PutModel();
  struct Bad {
    std::function<void(v1::RunSpec&)> mutate;
    std::string message;
  };
  const std::vector<Bad> bad = {
      {[&](v1::RunSpec& r) {
         *r.add_cases() = Case("x", 1);
         *r.add_cases() = Case("x", 2);
       },
       "case 'x': the name is given twice"},
      {[&](v1::RunSpec& r) { *r.add_cases() = Case("../x", 1); }, "without '/'"},
      {[&](v1::RunSpec& r) {
         *r.add_cases() = Case("a", 1);
         *r.add_cases() = Case("b", 2, /*expected=*/false);
       },
       "case 'b': give expected outputs for every case or for none"},
      {[&](v1::RunSpec& r) {
         *r.add_cases() = Case("a", 1);
         r.set_expect_reference(true);
       },
       "give expected outputs or expect_reference, not both"},
      {[&](v1::RunSpec& r) {
         *r.add_cases() = Case("a", 1);
         r.add_inputs()->set_random_seed(1);
       },
       "in cases, or in inputs and expected, not both"},
      {[&](v1::RunSpec& r) {
         v1::RunCase c = Case("a", 1);
         c.add_inputs();
         *r.add_cases() = c;
       },
       "case 'a': input 1 has neither a blob nor a seed"},
      {[&](v1::RunSpec& r) {
         for (int i = 0; i <= 1000; ++i) {
           v1::RunCase* c = r.add_cases();
           c->set_name("c" + std::to_string(i));
           c->add_inputs()->set_random_seed(static_cast<uint64_t>(i));
         }
       },
       "1001 cases; a job takes at most 1000"},
  };
  for (const Bad& b : bad) {
    v1::SubmitJobRequest request = Request(model);
    b.mutate(*request.mutable_spec()->mutable_run());
    auto response = lab_->Submit(Caller{"t", Role::kClient}, request);
    EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument) << b.message;
    EXPECT_THAT(std::string(response.status().message()), HasSubstr(b.message));
  }
  // A case blob the tenant does not hold is named with its case.
  v1::SubmitJobRequest request = Request(model);
  v1::RunCase* c = request.mutable_spec()->mutable_run()->add_cases();
  c->set_name("ghost");
  v1::Digest missing;
  missing.set_sha256(std::string(64, 'b'));
  missing.set_size_bytes(16);
  *c->add_inputs()->mutable_blob() = missing;
  auto response = lab_->Submit(Caller{"t", Role::kClient}, request);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(response.status().message()), HasSubstr("case 'ghost' input 0"));
}

TEST_F(LabCasesTest, ACaseOfTheWrongSizeIsAnInvalidRequestAfterCompiling) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  Connect("a", 1, agent);
  v1::SubmitJobRequest request = Request(PutModel());
  v1::RunCase wrong = Case("short", 1);
  *wrong.mutable_inputs(0)->mutable_blob() = PutBlob(std::vector<uint8_t>(15, 1));
  *request.mutable_spec()->mutable_run()->add_cases() = Case("fine", 2);
  *request.mutable_spec()->mutable_run()->add_cases() = wrong;
  v1::Job done = WaitState(Submit(request).id(), v1::JOB_STATE_DONE);
  EXPECT_EQ(done.result(), v1::JOB_RESULT_INVALID_REQUEST);
  EXPECT_EQ(done.message(), "case 'short': input 0 has 15 bytes; the model's input 0 needs 16");
  EXPECT_TRUE(agent->Assignments().empty());
}

TEST_F(LabCasesTest, TheAgentGetsTheCasesAndTheResultMakesTheAggregate) {
  StartLab();
  std::shared_ptr<FakeSession> agent;
  std::string session = Connect("a", 1, agent);
  v1::SubmitJobRequest request = Request(PutModel());
  request.mutable_spec()->mutable_budgets()->set_max_latency_us(612);
  for (const auto& [name, fill] : {std::pair{"a", 1}, {"b", 2}, {"c", 3}}) {
    *request.mutable_spec()->mutable_run()->add_cases() = Case(name, static_cast<uint8_t>(fill));
  }
  v1::Job job = Submit(request);
  auto assignment = agent->WaitAssignment();
  ASSERT_TRUE(assignment);
  ASSERT_EQ(assignment->cases_size(), 3);
  EXPECT_EQ(assignment->cases(1).name(), "b");
  EXPECT_EQ(assignment->inputs_size(), 0);
  // The agent may fetch every blob of the cases while the job is on its board.
  EXPECT_TRUE(lab_->AgentMayRead(assignment->cases(2).inputs(0).blob().sha256()));
  EXPECT_TRUE(lab_->AgentMayRead(assignment->cases(2).expected(0).sha256()));

  v1::AgentMessage m;
  v1::RunResult* r = m.mutable_result();
  r->set_job_id(assignment->job_id());
  r->set_attempt(assignment->attempt());
  r->set_board_id(assignment->board_id());
  r->set_outcome(v1::RUN_OUTCOME_FAIL);
  r->set_message("1 of 3 cases failed: b (output 0: max abs diff 7 > atol 0)");
  r->set_inference_us(612.5);  // the slowest case's
  r->set_inference_clock("rt700-sim-cycles");
  *r->add_cases() = CaseResultOf("a", true, 0, 3, 610.0);
  *r->add_cases() = CaseResultOf("b", false, 7, 5, 612.5);
  *r->add_cases() = CaseResultOf("c", true, 1, 3, 611.0);
  Send(session, m);

  v1::Job done = Get(job.id());
  EXPECT_EQ(done.result(), v1::JOB_RESULT_FAIL);
  EXPECT_THAT(done.message(), HasSubstr("1 of 3 cases failed: b"));
  EXPECT_THAT(done.message(), HasSubstr("budget failed: latency 612.5 us"))
      << "the slowest case is over the budget";
  ASSERT_EQ(done.cases_size(), 3);
  EXPECT_EQ(done.cases(1).top1(), 5);
  const v1::CaseSummary& s = done.case_summary();
  EXPECT_EQ(s.cases(), 3);
  EXPECT_EQ(s.passed(), 2);
  EXPECT_EQ(s.verified(), 3);
  EXPECT_EQ(s.max_abs_diff(), 7);
  EXPECT_EQ(s.max_abs_diff_case(), "b");
  EXPECT_EQ(s.top1_compared(), 3);
  EXPECT_EQ(s.top1_agreed(), 2);
  EXPECT_EQ(s.slowest_us(), 612.5);
  EXPECT_EQ(s.slowest_case(), "b");
  // The cases' outputs are the tenant's to download.
  absl::StatusOr<bool> mine = store_->HasBlobGrant("default", done.cases(1).outputs(0).sha256());
  ASSERT_TRUE(mine.ok()) << mine.status();
  EXPECT_TRUE(*mine);
}

}  // namespace
}  // namespace boardlab::server::testing
