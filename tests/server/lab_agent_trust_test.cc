// What one agent session may report (docs/security.md, "Agents"): only about the jobs on its own
// boards, and a result grants the job's tenant nothing it could not read before.

#include "tests/server/lab_fixture.h"

namespace boardlab::server::testing {
namespace {

class LabAgentTrustTest : public LabTest {
 protected:
  /// Agent "a" runs a job of tenant "t"; agent "b" has a board of another type, so it never gets
  /// that job. Returns a's assignment.
  v1::Assignment RunOnAgentA() {
    a_session_ = Connect("a", 1, a_);
    b_session_ = Connect("b", 1, b_, "other-type");
    job_ = Submit(Request(PutModel()), "t");
    std::optional<v1::Assignment> assignment = a_->WaitAssignment();
    EXPECT_TRUE(assignment);
    return assignment ? *assignment : v1::Assignment();
  }

  bool JobLogHas(const std::string& text) {
    auto events = lab_->WaitEvents(Caller{"t", Role::kClient}, job_.id(), 0, 0);
    EXPECT_TRUE(events.ok()) << events.status();
    if (!events.ok()) return false;
    for (const v1::JobEvent& event : *events) {
      if (event.log().find(text) != std::string::npos) return true;
    }
    return false;
  }

  std::shared_ptr<FakeSession> a_, b_;
  std::string a_session_, b_session_;
  v1::Job job_;
};

TEST_F(LabAgentTrustTest, AResultFromAnAgentThatDoesNotHoldTheBoardIsIgnored) {
  StartLab();
  const v1::Assignment assignment = RunOnAgentA();
  Result(b_session_, assignment, v1::RUN_OUTCOME_PASS);
  EXPECT_EQ(Get(job_.id()).state(), v1::JOB_STATE_ASSIGNED);
  EXPECT_EQ(lab_->GetBoard("a-b0")->state(), v1::BOARD_STATE_BUSY);
}

TEST_F(LabAgentTrustTest, StagesAndLinesFromAnAgentThatDoesNotHoldTheBoardAreIgnored) {
  StartLab();
  const v1::Assignment assignment = RunOnAgentA();
  v1::AgentMessage stage;
  stage.mutable_stage()->set_job_id(assignment.job_id());
  stage.mutable_stage()->set_attempt(assignment.attempt());
  stage.mutable_stage()->set_stage(v1::JOB_STATE_RUNNING);
  stage.mutable_stage()->add_lines("a line from another agent");
  Send(b_session_, stage);
  v1::AgentMessage logs;
  logs.mutable_logs()->set_job_id(assignment.job_id());
  logs.mutable_logs()->set_attempt(assignment.attempt());
  logs.mutable_logs()->add_lines("another line from another agent");
  Send(b_session_, logs);
  EXPECT_EQ(Get(job_.id()).state(), v1::JOB_STATE_ASSIGNED);
  EXPECT_FALSE(JobLogHas("from another agent"));
}

// A board's lines are streamed and stored as events while the job runs: bounded per attempt.
TEST_F(LabAgentTrustTest, AnAttemptStreamsABoundedLog) {
  StartLab();
  const v1::Assignment assignment = RunOnAgentA();
  for (int batch = 0; batch < 40; ++batch) {
    v1::AgentMessage logs;
    logs.mutable_logs()->set_job_id(assignment.job_id());
    logs.mutable_logs()->set_attempt(assignment.attempt());
    for (int line = 0; line < 8; ++line) logs.mutable_logs()->add_lines(std::string(8192, 'x'));
    Send(a_session_, logs);
  }
  auto events = lab_->WaitEvents(Caller{"t", Role::kClient}, job_.id(), 0, 0);
  ASSERT_TRUE(events.ok()) << events.status();
  size_t bytes = 0;
  int notices = 0;
  for (const v1::JobEvent& event : *events) {
    bytes += event.log().size();
    if (event.log().find("streamed its limit of log lines") != std::string::npos) ++notices;
  }
  EXPECT_LE(bytes, (1u << 20) + 200);  // the 1.3 MiB sent (lines cut to 4 KiB), held to 1 MiB
  EXPECT_GT(bytes, 1u << 19);
  EXPECT_EQ(notices, 1);
  EXPECT_TRUE(JobLogHas(std::string(4096, 'x') + " [line cut]"));
}

// A result names its outputs by digest; naming another tenant's blob must not hand it over.
TEST_F(LabAgentTrustTest, AResultDoesNotGrantTheJobsTenantAnotherTenantsBlob) {
  TokenConfig token;  // a server with tokens: an open one has no tenants to keep apart
  token.sha256 = std::string(64, 'a');
  token.tenant = "t";
  config_.tokens.push_back(token);
  StartLab();
  const v1::Assignment assignment = RunOnAgentA();
  const std::string secret_bytes = "tenant s's model, which tenant t never uploaded";
  absl::StatusOr<v1::Digest> secret = blobs_->Put(secret_bytes);
  ASSERT_TRUE(secret.ok());
  ASSERT_TRUE(store_->GrantBlob("s", secret->sha256()).ok());
  ASSERT_FALSE(*store_->HasBlobGrant("t", secret->sha256()));

  v1::AgentMessage m;
  v1::RunResult* result = m.mutable_result();
  result->set_job_id(assignment.job_id());
  result->set_attempt(assignment.attempt());
  result->set_board_id(assignment.board_id());
  result->set_outcome(v1::RUN_OUTCOME_PASS);
  *result->add_outputs() = *secret;
  *result->add_outputs() = PutAsAgent("an output agent a uploaded");
  Send(a_session_, m);
  EXPECT_EQ(Get(job_.id()).state(), v1::JOB_STATE_DONE);
  EXPECT_FALSE(*store_->HasBlobGrant("t", secret->sha256()));
  EXPECT_TRUE(JobLogHas(secret->sha256() + " was not uploaded by an agent"));
  EXPECT_TRUE(*store_->HasBlobGrant("t", result->outputs(1).sha256()));
}

}  // namespace
}  // namespace boardlab::server::testing
