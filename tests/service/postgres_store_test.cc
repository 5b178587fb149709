// boardlab-server with `store: postgres://...`: jobs run, and a killed and restarted server finds
// them (and their events) in PostgreSQL. The database is a throwaway server's
// (tests/support/postgres_server.h); skipped with the reason where PostgreSQL is not installed.

#include <filesystem>

#include "gtest/gtest.h"
#include "tests/service/harness.h"
#include "tests/support/postgres_server.h"

namespace boardlab::testing::service {
namespace {

using std::chrono::seconds;

TEST(PostgresStoreServiceTest, JobsOutliveAServerRestartInPostgres) {
  absl::StatusOr<PostgresServer*> shared = PostgresServer::Shared();
  if (absl::IsFailedPrecondition(shared.status())) {
    GTEST_SKIP() << "PostgreSQL service test skipped: " << shared.status().message();
  }
  ASSERT_TRUE(shared.ok()) << shared.status();  // installed, but it did not start
  PostgresServer* postgres = *shared;
  absl::StatusOr<std::string> uri = postgres->CreateDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status();

  ServiceLab lab;
  ServerOptions options;
  options.config_yaml =
      "store: \"" + *uri + "\"\nstore_password_file: " + postgres->password_file() + "\n";
  ASSERT_TRUE(lab.StartServer(options));
  ASSERT_TRUE(lab.StartAgent("a", 1));
  const std::string model = lab.WriteFile("fc.tflite", FastModel());
  ClientResult first = lab.RunClient({"submit", model, "--expect-reference", "--wait", "--json"});
  ASSERT_EQ(first.exit_code, 0) << first;
  absl::StatusOr<v1::Job> job = ParseJobJson(first.out);
  ASSERT_TRUE(job.ok()) << job.status();
  // A second job waits in the queue while no agent serves it.
  lab.KillAgent("a");
  ClientResult queued = lab.RunClient({"submit", model, "--json"});
  ASSERT_EQ(queued.exit_code, 0) << queued;
  absl::StatusOr<v1::Job> waiting = ParseJobJson(queued.out);
  ASSERT_TRUE(waiting.ok()) << waiting.status();

  lab.KillServer();
  ASSERT_TRUE(lab.RestartServer());
  absl::StatusOr<v1::Job> finished = absl::UnavailableError("not asked yet");
  // The harness's channel reconnects to the new process on one of the first calls.
  EXPECT_TRUE(WaitFor(
      [&] {
        finished = lab.GetJob(job->id());
        return finished.status().code() != absl::StatusCode::kUnavailable;
      },
      seconds(30), "the restarted server to answer"));
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_EQ(finished->state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(finished->result(), v1::JOB_RESULT_PASS) << finished->message();
  absl::StatusOr<std::vector<v1::JobEvent>> events = lab.Events(job->id());
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(events->back().kind_case(), v1::JobEvent::kFinished);
  // The queued job was recovered from the database and runs once an agent is back.
  ASSERT_TRUE(lab.StartAgent("b", 1));
  absl::StatusOr<v1::Job> second = lab.WaitForJobDone(waiting->id(), seconds(60));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->result(), v1::JOB_RESULT_PASS) << second->message();
  // Nothing went to a SQLite file in the data directory.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(lab.dir())) {
    EXPECT_NE(entry.path().filename(), "boardlab.db") << entry.path();
  }
}

}  // namespace
}  // namespace boardlab::testing::service
