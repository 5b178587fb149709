// Argument values and usage errors: bad arguments exit 2 with a message that says what was
// wrong, before any call to the server.

#include "cli/arguments.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "tests/cli/fake_boardlab_server.h"

namespace boardlab::cli {
namespace {

using ::testing::HasSubstr;

TEST(ParseKeyValue, SplitsAtTheFirstEquals) {
  absl::StatusOr<v1::Tag> tag = ParseKeyValue("ram=64M=x", "--tag");
  ASSERT_TRUE(tag.ok());
  EXPECT_EQ(tag->key(), "ram");
  EXPECT_EQ(tag->value(), "64M=x");
  ASSERT_TRUE(ParseKeyValue("empty=", "--tag").ok());
}

TEST(ParseKeyValue, RejectsAMissingKeyOrEquals) {
  for (const char* text : {"ram", "=64M", ""}) {
    absl::StatusOr<v1::Tag> tag = ParseKeyValue(text, "--label");
    ASSERT_FALSE(tag.ok()) << text;
    EXPECT_EQ(tag.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(tag.status().message()), HasSubstr("--label"));
    EXPECT_THAT(std::string(tag.status().message()), HasSubstr("KEY=VALUE"));
  }
}

TEST(ParseInputArgument, FileOrRandomSeed) {
  absl::StatusOr<InputArgument> file = ParseInputArgument("in.bin");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(std::get<std::string>(*file), "in.bin");
  absl::StatusOr<InputArgument> random = ParseInputArgument("random:18446744073709551615");
  ASSERT_TRUE(random.ok());
  EXPECT_EQ(std::get<RandomInput>(*random).seed, 18446744073709551615ull);
  for (const char* bad : {"random:", "random:x", "random:-1", "random:+3", "random: 3", ""}) {
    EXPECT_FALSE(ParseInputArgument(bad).ok()) << bad;
  }
}

TEST(ParseJobState, AcceptsShortAndFullNames) {
  EXPECT_EQ(*ParseJobState("queued"), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(*ParseJobState("DONE"), v1::JOB_STATE_DONE);
  EXPECT_EQ(*ParseJobState("JOB_STATE_RUNNING"), v1::JOB_STATE_RUNNING);
  EXPECT_FALSE(ParseJobState("unspecified").ok());
  EXPECT_FALSE(ParseJobState("sleeping").ok());
}

TEST(ParseDigest, HexWithOptionalSize) {
  const std::string hex(64, 'a');
  absl::StatusOr<v1::Digest> digest = ParseDigest(hex + ":123");
  ASSERT_TRUE(digest.ok());
  EXPECT_EQ(digest->sha256(), hex);
  EXPECT_EQ(digest->size_bytes(), 123);
  EXPECT_EQ(ParseDigest(hex)->size_bytes(), 0);
  for (const std::string& bad : {std::string(63, 'a'), std::string(64, 'A'), hex + ":x",
                                 hex + ":-1", std::string("../../etc/passwd")}) {
    EXPECT_FALSE(ParseDigest(bad).ok()) << bad;
  }
}

TEST(NewRequestId, IsAFreshVersion4Uuid) {
  const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string id = NewRequestId();
    EXPECT_TRUE(std::regex_match(id, uuid)) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 100u);
}

// Runs the CLI with arguments that must be rejected before any call; returns stderr.
std::string UsageErrorOf(const std::vector<std::string>& args) {
  // Port 1 is never our server: a call would fail with 5, not 2.
  testing::CapturedRun run = testing::RunCaptured(args, "127.0.0.1:1");
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_EQ(run.err.rfind("boardlab: ", 0), 0u) << run.err;
  return run.err;
}

TEST(UsageErrors, ExitTwoWithAMessage) {
  const std::string model = testing::WriteTestFile("usage_model.tflite", "model");
  EXPECT_THAT(UsageErrorOf({}), HasSubstr("subcommand is required"));
  EXPECT_THAT(UsageErrorOf({"frobnicate"}), HasSubstr("unknown command 'frobnicate'"));
  EXPECT_THAT(UsageErrorOf({"submit"}), HasSubstr("model is required"));
  EXPECT_THAT(UsageErrorOf({"submit", "/nonexistent/m.tflite"}),
              HasSubstr("cannot read model '/nonexistent/m.tflite'"));
  EXPECT_THAT(UsageErrorOf({"submit", model, "--input", "/nonexistent/in.bin"}),
              HasSubstr("cannot read input"));
  EXPECT_THAT(UsageErrorOf({"submit", model, "--input", "random:seven"}),
              HasSubstr("SEED must be a decimal number"));
  EXPECT_THAT(UsageErrorOf({"submit", model, "--tag", "npu"}), HasSubstr("--tag 'npu'"));
  EXPECT_THAT(UsageErrorOf({"submit", model, "--label", "=x"}), HasSubstr("--label '=x'"));
  EXPECT_THAT(UsageErrorOf({"submit", model, "--expected", model, "--expect-reference"}),
              HasSubstr("excludes"));
  EXPECT_THAT(UsageErrorOf({"submit", model, "--atol", "-1"}), HasSubstr("--atol"));
  EXPECT_THAT(UsageErrorOf({"submit", model, "--iterations", "0"}), HasSubstr("--iterations"));
  EXPECT_THAT(UsageErrorOf({"submit", model, "--bogus"}), HasSubstr("--bogus"));
  EXPECT_THAT(UsageErrorOf({"submit", model, "--out", "dir"}), HasSubstr("--out requires --wait"));
  EXPECT_THAT(UsageErrorOf({"watch"}), HasSubstr("job is required"));
  EXPECT_THAT(UsageErrorOf({"jobs", "--state", "sleeping"}), HasSubstr("--state 'sleeping'"));
  EXPECT_THAT(UsageErrorOf({"jobs", "--limit", "0"}), HasSubstr("--limit"));
  EXPECT_THAT(UsageErrorOf({"board", "maintenance", "b1", "maybe"}), HasSubstr("mode"));
  EXPECT_THAT(UsageErrorOf({"board", "release", "b1"}), HasSubstr("--lease"));
  EXPECT_THAT(UsageErrorOf({"board"}), HasSubstr("board --help"));
  EXPECT_THAT(UsageErrorOf({"artifact", "get", "abc"}), HasSubstr("64 lowercase hex"));
  EXPECT_THAT(UsageErrorOf({"--tls-ca", "/nonexistent/ca.pem", "boards"}), HasSubstr("--tls-ca"));
}

TEST(UsageErrors, HelpExitsZero) {
  testing::CapturedRun run = testing::RunCaptured({"submit", "--help"}, "127.0.0.1:1");
  EXPECT_EQ(run.code, 0);
  EXPECT_THAT(run.out, HasSubstr("--expect-reference"));
}

TEST(Unreachable, AServerThatIsNotThereIsExitFiveWithAHint) {
  testing::CapturedRun run = testing::RunCaptured({"boards"}, "127.0.0.1:1");
  EXPECT_EQ(run.code, 5);
  EXPECT_THAT(run.err, HasSubstr("check that boardlab-server runs at 127.0.0.1:1"));
}

}  // namespace
}  // namespace boardlab::cli
