// server/config.h: the shipped example config loads and validates; bad keys and values are named.

#include "server/config.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/test_paths.h"

namespace boardlab::server {
namespace {

using ::testing::HasSubstr;

std::string WriteConfig(const std::string& yaml) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) /
       ("config_" + std::to_string(::getpid()) + "_" +
        ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml"))
          .string();
  std::ofstream(path) << yaml;
  return path;
}

TEST(ServerConfigTest, TheShippedExampleLoadsAndValidates) {
  auto config = LoadServerConfig(boardlab::testing::RepoDir() + "/deploy/config/server.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(ValidateServerConfig(*config).ok()) << ValidateServerConfig(*config);
  EXPECT_EQ(config->data_dir, "/var/lib/boardlab");
  EXPECT_EQ(config->http_listen, "0.0.0.0:9480");
  EXPECT_EQ(config->tokens.size(), 3u);
  EXPECT_EQ(config->max_unfinished_jobs_per_tenant, 10000);
  EXPECT_EQ(config->retention.finished_jobs_seconds, 30 * 86400);
  EXPECT_EQ(config->retention.unused_blobs_seconds, 86400);
  EXPECT_EQ(config->retention.sweep_interval_seconds, 3600);
}

TEST(ServerConfigTest, RetentionDefaultsKeepAMonthOfJobsAndADayOfUnusedBlobs) {
  auto config = LoadServerConfig(WriteConfig("listen: 127.0.0.1:0\n"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->retention.finished_jobs_seconds, 30 * 86400);
  EXPECT_EQ(config->retention.unused_blobs_seconds, 86400);
}

TEST(ServerConfigTest, TheWebPagesListenOnLoopbackByDefaultAndNeedHostAndPort) {
  auto defaults = LoadServerConfig(WriteConfig("listen: 127.0.0.1:0\n"));
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->http_listen, "127.0.0.1:9480");
  auto off = LoadServerConfig(WriteConfig("http_listen: \"\"\n"));
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_TRUE(ValidateServerConfig(*off).ok());
  for (const char* bad : {"http_listen: localhost\n", "http_listen: \"host:http\"\n",
                          "http_listen: \"127.0.0.1:70000\"\n", "http_listen: \":80\"\n"}) {
    auto config = LoadServerConfig(WriteConfig(bad));
    ASSERT_TRUE(config.ok()) << config.status();
    absl::Status checked = ValidateServerConfig(*config);
    EXPECT_EQ(checked.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(checked.message()), HasSubstr("invalid configuration of http_listen"))
        << bad;
  }
}

TEST(ServerConfigTest, UnknownKeysAreNamed) {
  auto config = LoadServerConfig(WriteConfig("listen: 127.0.0.1:0\nretension: {}\n"));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("unknown key 'retension'"));
  config = LoadServerConfig(WriteConfig("retention: {finished_job_seconds: 60}\n"));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("unknown key 'retention.finished_job_seconds'"));
  config = LoadServerConfig(WriteConfig("tls: {certificate: a.crt}\n"));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()), HasSubstr("unknown key 'tls.certificate'"));
}

TEST(ServerConfigTest, BadRetentionValuesAreNamed) {
  auto negative = LoadServerConfig(WriteConfig("retention: {finished_jobs_seconds: -1}\n"));
  ASSERT_TRUE(negative.ok()) << negative.status();
  absl::Status checked = ValidateServerConfig(*negative);
  EXPECT_EQ(checked.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(checked.message()), HasSubstr("finished_jobs_seconds"));

  auto never = LoadServerConfig(WriteConfig("retention: {sweep_interval_seconds: 0}\n"));
  ASSERT_TRUE(never.ok()) << never.status();
  checked = ValidateServerConfig(*never);
  EXPECT_THAT(std::string(checked.message()), HasSubstr("retention.sweep_interval_seconds"));

  auto typo = LoadServerConfig(WriteConfig("retention: {finished_jobs_seconds: soon}\n"));
  EXPECT_FALSE(typo.ok());
}

// An empty tenant would see every tenant's jobs in ListJobs; '@' names the server's own grantees.
TEST(ServerConfigTest, TenantsThatAreNotNamesAreRefused) {
  const std::string hash(64, 'a');
  for (const std::string tenant : {"\"\"", "\"@agents\""}) {
    auto config = LoadServerConfig(
        WriteConfig("tokens:\n  - {sha256: " + hash + ", tenant: " + tenant + "}\n"));
    ASSERT_TRUE(config.ok()) << config.status();
    absl::Status checked = ValidateServerConfig(*config);
    EXPECT_EQ(checked.code(), absl::StatusCode::kInvalidArgument) << tenant;
    EXPECT_THAT(std::string(checked.message()), HasSubstr("is not a tenant name"));
  }
  auto named = LoadServerConfig(WriteConfig("tokens:\n  - {sha256: " + hash + ", tenant: ci}\n"));
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_TRUE(ValidateServerConfig(*named).ok());
}

TEST(ServerConfigTest, TheStoreIsSqliteByDefaultOrAPostgresUri) {
  auto sqlite = LoadServerConfig(WriteConfig("listen: 127.0.0.1:0\n"));
  ASSERT_TRUE(sqlite.ok()) << sqlite.status();
  EXPECT_FALSE(UsesPostgres(*sqlite));
  EXPECT_TRUE(ValidateServerConfig(*sqlite).ok());
  for (const char* uri : {"postgres://boardlab@db.example/boardlab?sslmode=verify-full",
                          "postgresql:///boardlab?host=/run/postgresql"}) {
    auto postgres = LoadServerConfig(
        WriteConfig(std::string("store: \"") + uri + "\"\nstore_password_file: /etc/pw\n"));
    ASSERT_TRUE(postgres.ok()) << postgres.status();
    EXPECT_TRUE(UsesPostgres(*postgres)) << uri;
    EXPECT_EQ(postgres->store_password_file, "/etc/pw");
    EXPECT_TRUE(ValidateServerConfig(*postgres).ok()) << ValidateServerConfig(*postgres);
  }
}

TEST(ServerConfigTest, BadStoresAreNamedAndPasswordsStayOutOfTheFile) {
  ServerConfig config;
  config.store = "postgres://boardlab:s3cret@db.example/boardlab";
  absl::Status checked = ValidateServerConfig(config);
  EXPECT_EQ(checked.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(checked.message()), HasSubstr("holds a password"));
  EXPECT_THAT(std::string(checked.message()), ::testing::Not(HasSubstr("s3cret")));
  config.store = "postgres://db.example/boardlab?password=s3cret";
  EXPECT_THAT(std::string(ValidateServerConfig(config).message()), HasSubstr("holds a password"));
  config.store = "postgres://db.example/boardlab?no_such_option=1";
  EXPECT_THAT(std::string(ValidateServerConfig(config).message()),
              HasSubstr("invalid configuration of store"));
  config.store = "mysql://db.example/boardlab";
  EXPECT_THAT(std::string(ValidateServerConfig(config).message()),
              HasSubstr("neither sqlite nor a postgres"));
  config.store = "";
  config.store_password_file = "/etc/pw";
  EXPECT_THAT(std::string(ValidateServerConfig(config).message()),
              HasSubstr("only a PostgreSQL store has a password"));
}

}  // namespace
}  // namespace boardlab::server
