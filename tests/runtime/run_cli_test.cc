// boardlab-run end to end: the built binary (BOARDLAB_RUN) on artifacts compiled in-process.

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/runtime/boardlab_run_test_base.h"
#include "tests/runtime/executor_test_support.h"
#include "tests/runtime/pte_runner.h"
#include "tests/support/control_flow_models.h"
#include "tests/support/process.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_paths.h"

namespace boardlab::runtime {
namespace {

namespace fs = std::filesystem;

using RunResult = boardlab::testing::CommandResult;

class RunCli : public testing::BoardlabRunTest {
 protected:
  RunCli() : BoardlabRunTest("boardlab_run_cli") {}

  std::string Write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(boardlab::testing::WriteFile(path, bytes));
    return path;
  }

  // A conv on the NPU: runs with the real backend and no CPU kernels.
  std::string ConvArtifact() {
    return Write("conv.pte", testing::CompilePte(boardlab::testing::SingleConv2D(),
                                                 compiler::CompileOptions{}));
  }
};

TEST_F(RunCli, NoArgumentsIsUsageError) {
  EXPECT_EQ(Run("").exit_code, 2);
  EXPECT_EQ(Run("x.pte --profile xml").exit_code, 2);
}

TEST_F(RunCli, MissingArtifactIsUsageError) {
  const RunResult r = Run((dir_ / "absent.pte").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST_F(RunCli, GarbageArtifactIsInvalid) {
  const std::string path = Write("bad.pte", std::vector<uint8_t>(100, 0x41));
  const RunResult r = Run(path);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("invalid artifact"), std::string::npos) << r.output;
}

TEST_F(RunCli, TruncatedArtifactIsInvalid) {
  std::vector<uint8_t> pte =
      testing::CompilePte(boardlab::testing::SingleConv2D(), compiler::CompileOptions{});
  pte.resize(pte.size() / 2);
  const RunResult r = Run(Write("half.pte", pte));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("truncated"), std::string::npos) << r.output;
}

TEST_F(RunCli, RunsWritesOutputsAndVerifies) {
  const std::string pte = ConvArtifact();
  const fs::path out = dir_ / "out";
  RunResult r = Run(pte + " --input random:7 --outputs " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("UNVERIFIED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("output 0: int8 [1,8,8,4]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" npu "), std::string::npos) << r.output;  // ran on the NPU model
  EXPECT_NE(r.output.find("clock: simulated RT700 cycles"), std::string::npos) << r.output;
  const std::string output0 = (out / "output0.bin").string();
  const std::vector<uint8_t> produced = boardlab::testing::ReadFile(output0);
  ASSERT_EQ(produced.size(), 8u * 8u * 4u);

  // The same input reproduces the output exactly.
  r = Run(pte + " --input random:7 --expected " + output0);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("verdict: PASS"), std::string::npos) << r.output;

  // A changed expected file fails at atol 0 and passes with enough tolerance.
  std::vector<uint8_t> changed = produced;
  changed[5] = static_cast<uint8_t>(changed[5] ^ 0x01);
  const std::string changed_path = Write("changed.bin", changed);
  r = Run(pte + " --input random:7 --expected " + changed_path);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("verdict: FAIL"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 of 256 elements outside atol"), std::string::npos) << r.output;
  r = Run(pte + " --input random:7 --atol 1 --expected " + changed_path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(RunCli, InputFileOfWrongSizeIsUsageError) {
  const std::string pte = ConvArtifact();
  const std::string input = Write("in.bin", std::vector<uint8_t>(10, 1));
  const RunResult r = Run(pte + " --input " + input);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("has 10 bytes"), std::string::npos) << r.output;
}

TEST_F(RunCli, RandomInputsAreDeterministic) {
  const std::string pte = ConvArtifact();
  const RunResult a = Run(pte + " --input random:3 --profile json");
  const RunResult b = Run(pte + " --input random:3 --profile json");
  const RunResult c = Run(pte + " --input random:4 --profile json");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const nlohmann::json ja = nlohmann::json::parse(a.output, nullptr, false);
  const nlohmann::json jb = nlohmann::json::parse(b.output, nullptr, false);
  const nlohmann::json jc = nlohmann::json::parse(c.output, nullptr, false);
  ASSERT_FALSE(ja.is_discarded()) << a.output;
  ASSERT_FALSE(jc.is_discarded()) << c.output;
  EXPECT_EQ(ja["outputs"][0]["fnv1a32"], jb["outputs"][0]["fnv1a32"]);
  EXPECT_NE(ja["outputs"][0]["fnv1a32"], jc["outputs"][0]["fnv1a32"]);
}

TEST_F(RunCli, JsonProfileListsEveryInstruction) {
  const std::string pte = ConvArtifact();
  const RunResult r = Run(pte + " --profile json --iterations 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["verdict"], "unverified");
  EXPECT_EQ(j["profile"]["clock"], "rt700-sim-cycles");
  EXPECT_EQ(j["profile"]["count_unit"], "cycles");
  EXPECT_EQ(j["profile"]["iterations"], 3);
  ASSERT_EQ(j["profile"]["ops"].size(), 1u);
  EXPECT_EQ(j["profile"]["ops"][0]["unit"], "NPU");
  EXPECT_EQ(j["profile"]["ops"][0]["ran_on"], "npu");  // the simulator's NPU timing model
  EXPECT_GE(j["profile"]["ops"][0]["npu_kernels"].size(), 1u);
}

TEST_F(RunCli, WritesEtdump) {
  const std::string pte = ConvArtifact();
  const std::string etdp = (dir_ / "run.etdp").string();
  const RunResult r = Run(pte + " --clock wall --etdump " + etdp);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<uint8_t> bytes = boardlab::testing::ReadFile(etdp);
  ASSERT_GT(bytes.size(), 12u);
  EXPECT_EQ(std::string(bytes.begin() + 8, bytes.begin() + 12), "ED00");
}

TEST_F(RunCli, ServeAnswersEveryRequestLineInOrder) {
  const std::string pte = ConvArtifact();
  const std::string garbage = Write("bad.pte", std::vector<uint8_t>(100, 0x41));
  const std::string outputs = (dir_ / "out").string();
  const std::string requests = dir_ / "requests";
  std::ofstream(requests) << "{\"artifact\": \"" << pte << "\", \"outputs\": \"" << outputs
                          << "\", \"iterations\": 2}\n"
                          << "{\"artifact\": \"" << garbage << "\"}\n"
                          << "{\"artifact\": \"" << pte << "\", \"colour\": 1}\n"
                          << "{\"artifact\": \"" << pte << "\", \"inputs\": [\"random:3\"]}\n";
  const RunResult r = Run("--serve < " + requests);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<nlohmann::json> results;
  std::vector<std::string> lines;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("result ", 0) != 0) {
      lines.push_back(line);
      continue;
    }
    results.push_back(nlohmann::json::parse(line.substr(7)));
    lines.push_back("result");
  }
  ASSERT_EQ(results.size(), 4u) << r.output;
  EXPECT_EQ(results[0]["exit"], 0);
  EXPECT_EQ(results[0]["document"]["profile"]["iterations"], 2);
  EXPECT_EQ(results[0]["document"]["outputs"][0]["path"], outputs + "/output0.bin");
  EXPECT_TRUE(fs::exists(outputs + "/output0.bin"));
  EXPECT_EQ(results[1]["exit"], 3);
  EXPECT_NE(results[1]["error"].get<std::string>().find("invalid artifact"), std::string::npos);
  EXPECT_EQ(results[2]["exit"], 2);
  EXPECT_NE(results[2]["error"].get<std::string>().find("unknown key 'colour'"), std::string::npos);
  EXPECT_EQ(results[3]["exit"], 0);
  EXPECT_EQ(results[3]["document"]["verdict"], "unverified");
  // A failed run's message comes before its answer (stderr and stdout are one stream).
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[1].rfind("boardlab-run: invalid artifact", 0), 0u) << r.output;
  EXPECT_EQ(lines[2], "result");
}

TEST_F(RunCli, ServeTakesNoArtifact) {
  EXPECT_EQ(Run("--serve " + ConvArtifact() + " < /dev/null").exit_code, 2);
  EXPECT_EQ(Run("--serve --board qemu < /dev/null").exit_code, 2);
}

}  // namespace
}  // namespace boardlab::runtime
