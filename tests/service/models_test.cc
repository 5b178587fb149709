// Every real model of the shared folder through the whole service: `boardlab submit` with its
// golden input and TFLM's golden output, a server and an agent with one sim board, and the files
// `--out` writes.

#include <cctype>
#include <filesystem>
#include <span>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/support/digest.h"
#include "tests/service/harness.h"
#include "tests/support/shared_data.h"

namespace boardlab::testing::service {
namespace {

namespace fs = std::filesystem;

std::string GoldenDir() { return (fs::path(SharedModelsDir()).parent_path() / "golden").string(); }

std::string Stem(std::string_view relative) { return fs::path(relative).stem().string(); }

std::string AsText(const std::vector<uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

class ModelEndToEndTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(ModelEndToEndTest, GoldenInputPassesAndOutWritesEveryFile) {
  const std::string relative(GetParam());
  std::optional<std::string> model = SharedModelPath(relative);
  if (!model) {
    GTEST_SKIP() << "shared models folder absent or incomplete: " << SharedModelsDir() << " has no "
                 << relative;
  }
  const std::string golden = GoldenDir() + "/" + Stem(relative);
  const std::string input = golden + "/seed1.input.bin";
  const std::string expected = golden + "/seed1.output.bin";
  if (!fs::is_regular_file(input) || !fs::is_regular_file(expected)) {
    GTEST_SKIP() << "golden files absent: " << input << ", " << expected;
  }
  const std::vector<uint8_t> expected_bytes = ReadFile(expected);
  ASSERT_FALSE(expected_bytes.empty()) << expected;

  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ASSERT_TRUE(lab.StartAgent("a", 1));
  // MobileNetV2 takes seconds to compile and ~1 s per inference on the simulator.
  const bool big = relative.find("mobilenet") != std::string::npos;
  const std::string out = lab.Path("out");
  ClientResult r = lab.RunClient({"submit", *model, "--input", input, "--expected", expected,
                                  "--wait", "--out", out, "--json"},
                                 big ? std::chrono::seconds(240) : std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r;
  absl::StatusOr<v1::Job> job = ParseJobJson(r.out);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->state(), v1::JOB_STATE_DONE);
  EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message();
  EXPECT_EQ(job->attempt(), 1);
  EXPECT_EQ(job->board_id(), "a-sim-0");
  ASSERT_EQ(job->checks_size(), 1);
  EXPECT_TRUE(job->checks(0).passed());
  EXPECT_EQ(job->checks(0).max_abs_diff(), 0);

  // The artifact is the one the job names, byte for byte.
  const std::vector<uint8_t> artifact = ReadFile(out + "/artifact.pte");
  ASSERT_FALSE(artifact.empty()) << "no " << out << "/artifact.pte";
  EXPECT_EQ(api::Sha256Hex(std::span<const uint8_t>(artifact)), job->files().artifact().sha256());
  // The board's output equals TFLM's golden bytes.
  EXPECT_EQ(ReadFile(out + "/output0.bin"), expected_bytes);
  // The compile report and the profile are JSON documents; the ETDump is there.
  const std::vector<uint8_t> report = ReadFile(out + "/report.json");
  ASSERT_FALSE(report.empty()) << "no report.json";
  EXPECT_TRUE(nlohmann::json::accept(AsText(report))) << "report.json is not JSON";
  const std::vector<uint8_t> profile = ReadFile(out + "/profile.json");
  ASSERT_FALSE(profile.empty()) << "no profile.json";
  EXPECT_TRUE(nlohmann::json::accept(AsText(profile))) << "profile.json is not JSON";
  const std::vector<uint8_t> etdump = ReadFile(out + "/etdump.etdp");
  EXPECT_FALSE(etdump.empty()) << "no etdump.etdp";
  EXPECT_EQ(api::Sha256Hex(std::span<const uint8_t>(etdump)), job->files().etdump().sha256());
  // job.json is the same final record as --json printed.
  absl::StatusOr<v1::Job> saved = ParseJobJson(AsText(ReadFile(out + "/job.json")));
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(saved->id(), job->id());
  EXPECT_EQ(saved->result(), v1::JOB_RESULT_PASS);
}

std::string ModelName(const ::testing::TestParamInfo<std::string_view>& info) {
  std::string name = Stem(info.param);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(SharedModels, ModelEndToEndTest, ::testing::ValuesIn(kRealModels),
                         ModelName);

}  // namespace
}  // namespace boardlab::testing::service
