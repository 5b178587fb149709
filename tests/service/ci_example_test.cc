// docs/ci.md's example commands, run as written against a live server and agent: the block
// between its ci-example markers is executed with /bin/sh in a directory holding what the
// example names (model.tflite, golden/, baseline-out/ from a main-branch run).

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/harness.h"
#include "tests/support/process.h"
#include "tests/support/test_paths.h"

namespace boardlab::testing::service {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The shell commands of docs/ci.md between <!-- ci-example:begin --> and <!-- ci-example:end -->,
// without the code fence.
std::string CiExampleCommands() {
  const std::string doc = ReadText(RepoDir() + "/docs/ci.md");
  const size_t begin = doc.find("<!-- ci-example:begin -->");
  const size_t end = doc.find("<!-- ci-example:end -->");
  if (begin == std::string::npos || end == std::string::npos || end < begin) return "";
  std::string block = doc.substr(begin, end - begin);
  const size_t fence = block.find("```sh\n");
  const size_t close = block.rfind("```");
  if (fence == std::string::npos || close <= fence) return "";
  return block.substr(fence + 6, close - fence - 6);
}

// The script in `work` as a CI job numbered `job` would run it (the job number is part of the
// example's request id: a retried job gets its first run back).
CommandResult RunScript(const ServiceLab& lab, const std::string& work, const std::string& script,
                        int job) {
  const std::string path = lab.WriteFile("ci-example.sh", "set -e\n" + script);
  const std::string client_dir = fs::path(ClientBinary()).parent_path().string();
  return RunCommand("cd " + work + " && PATH=" + client_dir +
                    ":$PATH BOARDLAB_SERVER=" + lab.address() +
                    " CI_PIPELINE_ID=7 CI_JOB_ID=" + std::to_string(job) + " sh " + path);
}

bool ValidJunit(const std::string& path, std::string& output) {
  CommandResult r =
      RunCommand("xmllint --noout --schema " + RepoDir() + "/tests/cli/junit.xsd " + path);
  output = r.output;
  return r.exit_code == 0;
}

TEST(CiExampleTest, TheDocumentedCommandsPassAgainstALiveServer) {
  const std::string commands = CiExampleCommands();
  ASSERT_THAT(commands, HasSubstr("boardlab submit ")) << "docs/ci.md lost its example block";
  ASSERT_THAT(commands, HasSubstr("boardlab diff "));

  ServiceLab lab;
  ASSERT_TRUE(lab.StartServer());
  ASSERT_TRUE(lab.StartAgent("a", 1));
  const std::string work = lab.Path("repo");
  fs::create_directories(work + "/golden");
  const std::vector<uint8_t> model = FastModel();
  std::ofstream(work + "/model.tflite", std::ios::binary)
      .write(reinterpret_cast<const char*>(model.data()),
             static_cast<std::streamsize>(model.size()));
  std::ofstream(work + "/golden/in.bin", std::ios::binary) << std::string(16, '\x11');
  // The golden output: the host reference run of the same input.
  ClientResult reference =
      lab.RunClient({"submit", work + "/model.tflite", "--input", work + "/golden/in.bin",
                     "--expect-reference", "--wait", "--out", lab.Path("reference")});
  ASSERT_EQ(reference.exit_code, 0) << reference;
  fs::copy_file(lab.Path("reference") + "/output0.bin", work + "/golden/out.bin");
  // The main branch's run: the baseline.
  ClientResult main_run = lab.RunClient(
      {"submit", work + "/model.tflite", "--input", work + "/golden/in.bin", "--expected",
       work + "/golden/out.bin", "--wait", "--out", work + "/baseline-out"});
  ASSERT_EQ(main_run.exit_code, 0) << main_run;

  CommandResult r = RunScript(lab, work, commands, 1);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("budget latency "));
  EXPECT_THAT(r.output, HasSubstr("gates:"));
  absl::StatusOr<v1::Job> job = ParseJobJson(ReadText(work + "/boardlab-out/job.json"));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->result(), v1::JOB_RESULT_PASS) << job->message();
  EXPECT_EQ(job->budget_checks_size(), 4);
  for (const char* report : {"/boardlab-junit.xml", "/boardlab-diff.xml"}) {
    std::string output;
    EXPECT_TRUE(ValidJunit(work + report, output)) << report << "\n" << output;
  }
  EXPECT_THAT(ReadText(work + "/boardlab-junit.xml"), HasSubstr("name=\"budget npu_macs\""));
  EXPECT_THAT(ReadText(work + "/boardlab-junit.xml"), HasSubstr("name=\"slower\""));

  // The same commands gate: a budget the board cannot keep fails the pipeline with exit 1.
  std::string tight = commands;
  const size_t latency = tight.find("--max-latency-us 5000");
  ASSERT_NE(latency, std::string::npos);
  tight.replace(latency, 21, "--max-latency-us 0.01");
  CommandResult failed = RunScript(lab, work, tight, 2);
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_THAT(failed.output, HasSubstr("budget failed: latency"));
}

}  // namespace
}  // namespace boardlab::testing::service
