// The audit trail: every change a caller makes to jobs and boards is one structured log line
// of the server saying who made it.

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/service/harness.h"

namespace boardlab::testing::service {
namespace {

// The server's audit lines, parsed.
std::vector<nlohmann::json> AuditLines(const std::string& log) {
  std::vector<nlohmann::json> lines;
  for (absl::string_view text : absl::StrSplit(log, '\n')) {
    nlohmann::json line = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (line.is_object() && line.value("msg", "") == "audit") lines.push_back(line);
  }
  return lines;
}

TEST(AuditTest, ChangesToJobsAndBoardsAreLoggedWithWhoMadeThem) {
  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ASSERT_TRUE(lab.StartAgent("a", 1));
  ASSERT_EQ(
      lab.RunClient({"board", "maintenance", "a-sim-0", "on", "--reason", "new cable"}).exit_code,
      0);
  ClientResult submitted =
      lab.RunClient({"submit", lab.WriteFile("fc.tflite", FastModel()), "--json"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted;
  absl::StatusOr<v1::Job> job = ParseJobJson(submitted.out);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(lab.RunClient({"cancel", job->id()}).exit_code, 0);
  ASSERT_EQ(lab.RunClient({"board", "maintenance", "a-sim-0", "off"}).exit_code, 0);

  std::vector<nlohmann::json> audit;
  ASSERT_TRUE(WaitFor([&] { return (audit = AuditLines(lab.ServerLog())).size() >= 4; },
                      std::chrono::seconds(10), "four audit lines"));
  std::vector<std::string> actions;
  for (const nlohmann::json& line : audit) {
    actions.push_back(line.value("action", "") + " " + line.value("object", ""));
    EXPECT_EQ(line.value("tenant", ""), "default") << line;
    EXPECT_EQ(line.value("role", ""), "admin") << line;  // an open server: callers are admins
  }
  EXPECT_THAT(actions, ::testing::ElementsAre("maintenance on a-sim-0", "submit " + job->id(),
                                              "cancel " + job->id(), "maintenance off a-sim-0"));
  EXPECT_EQ(audit[0].value("detail", ""), "new cable");
  EXPECT_THAT(audit[1].value("detail", ""), ::testing::HasSubstr("board type imxrt700-sim"));
}

}  // namespace
}  // namespace boardlab::testing::service
