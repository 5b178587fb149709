// boardlab-run --board qemu: the same command line runs on boardlab-firmware under QEMU and gives
// the same outputs and verdict as --board sim; the firmware's console is streamed; a hung
// firmware is killed after --timeout and reported as a board error (exit 4); --profile prints the
// firmware's per-op profile, labelled with its clock (QEMU instructions) and where kernels ran.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "nlohmann/json.hpp"
#include "tests/firmware/core_timeline.h"
#include "tests/firmware/firmware_available.h"
#include "tests/support/process.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

namespace boardlab::firmware {
namespace {

namespace fs = std::filesystem;

using boardlab::testing::CommandResult;
using boardlab::testing::RunCommand;

class RunCliQemuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why =
        firmware::WhyFirmwareCannotRun(BOARDLAB_FIRMWARE_ELF, firmware::NeedsRun::kYes);
    if (!why.empty()) GTEST_SKIP() << why;
    run_ = testing::RunBinary();
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("runqemu_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  std::string Compile(const std::vector<uint8_t>& model, const std::string& name,
                      const compiler::CompileOptions& options = {}) {
    absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(model, options);
    EXPECT_TRUE(compiled.ok()) << compiled.status();
    if (!compiled.ok()) return "";
    const std::string pte = (dir_ / (name + ".pte")).string();
    EXPECT_TRUE(testing::WriteFile(pte, compiled->pte));
    return pte;
  }

  // boardlab-run with the firmware and runner of this build (the environment may override them
  // in `env`, "NAME=value ...").
  CommandResult Run(const std::string& args, const std::string& env = "") {
    return RunCommand("BOARDLAB_FIRMWARE_ELF=" + std::string(BOARDLAB_FIRMWARE_ELF) +
                      " BOARDLAB_QEMU_RUNNER=" + BOARDLAB_FIRMWARE_RUNNER + " " + env + " " + run_ +
                      " " + args);
  }

  std::string run_;
  fs::path dir_;
};

// Every file of `a` exists in `b` with the same bytes.
void ExpectSameOutputs(const fs::path& a, const fs::path& b, const std::string& context) {
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(a)) {
    const std::string name = entry.path().filename().string();
    const std::vector<uint8_t> expected = testing::ReadFile(entry.path().string());
    EXPECT_FALSE(expected.empty()) << name;
    EXPECT_EQ(testing::ReadFile((b / name).string()), expected) << name << "\n" << context;
    ++files;
  }
  EXPECT_GT(files, 0u) << context;
}

TEST_F(RunCliQemuTest, KwsOnQemuMatchesSim) {
  const std::optional<std::string> model =
      testing::SharedModelPath("mlperf-tiny/kws_dscnn_int8.tflite");
  if (!model) GTEST_SKIP() << "shared models folder absent: " << testing::SharedModelsDir();
  for (const bool cpu_only : {false, true}) {
    SCOPED_TRACE(cpu_only ? "cpu-only" : "npu");
    compiler::CompileOptions options;
    options.cpu_only = cpu_only;
    const std::string pte =
        Compile(testing::ReadFile(*model), cpu_only ? "kws_cpu" : "kws_npu", options);
    ASSERT_FALSE(pte.empty());

    // Inputs not given: random:<index> on both boards.
    const fs::path sim_out = pte + ".sim";
    const fs::path qemu_out = pte + ".qemu";
    const CommandResult sim = Run("--board sim " + pte + " --outputs " + sim_out.string());
    ASSERT_EQ(sim.exit_code, 0) << sim.output;
    const std::string etdp = pte + ".etdp";
    const CommandResult qemu = Run("--board qemu " + pte + " --outputs " + qemu_out.string() +
                                   " --etdump " + etdp + " --timeout 120");
    ASSERT_EQ(qemu.exit_code, 0) << qemu.output;
    // The firmware's console came through.
    EXPECT_NE(qemu.output.find("output 0: "), std::string::npos) << qemu.output;
    EXPECT_NE(qemu.output.find("result: UNVERIFIED"), std::string::npos) << qemu.output;
    EXPECT_NE(qemu.output.find("instructions "), std::string::npos) << qemu.output;
    ExpectSameOutputs(sim_out, qemu_out, qemu.output);
    EXPECT_FALSE(testing::ReadFile(etdp).empty());

    // The same verification command line: PASS on both; a wrong expected file fails on both.
    const std::string expected = (sim_out / "output0.bin").string();
    const std::string verify = pte + " --input random:0 --expected " + expected + " --atol 0";
    const CommandResult sim_pass = Run("--board sim " + verify);
    const CommandResult qemu_pass = Run("--board qemu " + verify);
    EXPECT_EQ(sim_pass.exit_code, 0) << sim_pass.output;
    EXPECT_EQ(qemu_pass.exit_code, 0) << qemu_pass.output;
    EXPECT_NE(qemu_pass.output.find("result: PASS"), std::string::npos) << qemu_pass.output;
    std::vector<uint8_t> wrong_bytes = testing::ReadFile(expected);
    for (uint8_t& b : wrong_bytes) b ^= 0x40;
    const std::string wrong = pte + ".wrong.bin";
    ASSERT_TRUE(testing::WriteFile(wrong, wrong_bytes));
    const std::string other = pte + " --input random:0 --expected " + wrong + " --atol 0";
    EXPECT_EQ(Run("--board sim " + other).exit_code, 1);
    const CommandResult qemu_fail = Run("--board qemu " + other);
    EXPECT_EQ(qemu_fail.exit_code, 1) << qemu_fail.output;
    EXPECT_NE(qemu_fail.output.find("result: FAIL"), std::string::npos) << qemu_fail.output;
  }
}

TEST_F(RunCliQemuTest, KwsGoldenPassesOnQemu) {
  const std::optional<std::string> model =
      testing::SharedModelPath("mlperf-tiny/kws_dscnn_int8.tflite");
  if (!model) GTEST_SKIP() << "shared models folder absent: " << testing::SharedModelsDir();
  const std::string golden = testing::SharedModelsDir() + "/../golden/kws_dscnn_int8/seed1";
  if (!fs::exists(golden + ".input.bin")) GTEST_SKIP() << "no golden case " << golden;
  const std::string pte = Compile(testing::ReadFile(*model), "kws");
  ASSERT_FALSE(pte.empty());
  const std::string args =
      pte + " --input " + golden + ".input.bin --expected " + golden + ".output.bin --atol 0";
  const CommandResult sim = Run("--board sim " + args);
  const CommandResult qemu = Run("--board qemu " + args);
  EXPECT_EQ(sim.exit_code, 0) << sim.output;
  EXPECT_EQ(qemu.exit_code, 0) << qemu.output;
  EXPECT_NE(qemu.output.find("max abs diff 0,"), std::string::npos) << qemu.output;
}

// Whether `pid` still runs; a zombie (killed, not yet reaped by its new parent) does not.
bool Alive(pid_t pid) {
  for (int i = 0; i < 100; ++i) {
    const std::vector<uint8_t> stat = testing::ReadFile("/proc/" + std::to_string(pid) + "/stat");
    const std::string text(stat.begin(), stat.end());
    const size_t paren = text.rfind(')');
    if (text.empty() || (paren != std::string::npos && text.compare(paren, 4, ") Z ") == 0)) {
      return false;
    }
    ::usleep(20000);
  }
  return true;
}

// A firmware that never finishes: a runner that hangs is killed, with everything it started.
// Many cases on one firmware boot (--inputs/--expected): the four golden KWS cases, each checked
// by the firmware against TFLM's output; a wrong expected file fails its case and the run.
TEST_F(RunCliQemuTest, KwsGoldenCasesRunOnOneBoot) {
  const std::optional<std::string> model =
      testing::SharedModelPath("mlperf-tiny/kws_dscnn_int8.tflite");
  const std::string golden = testing::SharedModelsDir() + "/../golden/kws_dscnn_int8";
  if (!model || !fs::is_directory(golden)) {
    GTEST_SKIP() << "shared models or golden folder absent: " << testing::SharedModelsDir();
  }
  const std::string pte = Compile(testing::ReadFile(*model), "kws");
  ASSERT_FALSE(pte.empty());
  const fs::path out = dir_ / "out";
  const std::string results = (dir_ / "results.json").string();
  const CommandResult r =
      Run("--board qemu " + pte + " --inputs " + golden + " --expected " + golden + " --outputs " +
          out.string() + " --case-results " + results + " --timeout 120");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // One boot: the firmware's memory and result lines once, a line per case before them.
  size_t boots = 0;
  for (size_t at = r.output.find("memory: RAM pool"); at != std::string::npos;
       at = r.output.find("memory: RAM pool", at + 1)) {
    ++boots;
  }
  EXPECT_EQ(boots, 1u) << r.output;
  EXPECT_NE(r.output.find("case seed4: PASS ticks "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("result: PASS (4 of 4 cases passed)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cases: 4 of 4 passed, max abs diff 0, top-1 agreement 100.0% (4 of 4)"),
            std::string::npos)
      << r.output;
  for (int k = 1; k <= 4; ++k) {
    const std::string name = "seed" + std::to_string(k);
    EXPECT_EQ(testing::ReadFile((out / name / "output0.bin").string()),
              testing::ReadFile(golden + "/" + name + ".output.bin"))
        << name;
  }
  std::ifstream in(results);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << results;
  EXPECT_EQ(doc["clock"], "qemu-icount");
  EXPECT_EQ(doc["case_summary"]["passed"], 4);
  EXPECT_EQ(doc["cases"][2]["total_us"], nullptr) << "QEMU instructions are no time";
  EXPECT_EQ(doc["cases"][2]["outputs"][0]["verification"]["pass"], true) << "the firmware's check";
  EXPECT_EQ(doc["cases"][2]["outputs"][0]["path"], (out / "seed3" / "output0.bin").string());
  EXPECT_GT(doc["cases"][2]["ticks"].get<uint64_t>(), 0u);

  // seed2 checked against seed1's output: that case fails, the others pass.
  const fs::path wrong = dir_ / "wrong";
  fs::create_directories(wrong);
  for (int k = 1; k <= 4; ++k) {
    const std::string name = "seed" + std::to_string(k);
    fs::copy_file(golden + "/" + name + ".input.bin", wrong / (name + ".input.bin"));
    fs::copy_file(golden + "/" + (k == 2 ? std::string("seed3") : name) + ".output.bin",
                  wrong / (name + ".output.bin"));
  }
  const CommandResult failed = Run("--board qemu " + pte + " --inputs " + wrong.string() +
                                   " --expected " + wrong.string() + " --timeout 120");
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_NE(failed.output.find("case seed2: FAIL ticks "), std::string::npos) << failed.output;
  EXPECT_NE(failed.output.find("cases: 3 of 4 passed"), std::string::npos) << failed.output;
}

TEST_F(RunCliQemuTest, HungRunnerIsKilledAfterTimeout) {
  const std::string pte = Compile(testing::SingleSoftmax(), "softmax");
  ASSERT_FALSE(pte.empty());
  const fs::path runner = dir_ / "hang.sh";
  const fs::path pid_file = dir_ / "sleep.pid";
  {
    std::FILE* f = std::fopen(runner.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "#!/bin/sh\nsleep 600 &\necho $! > %s\nwait\n", pid_file.c_str());
    std::fclose(f);
  }
  fs::permissions(runner, fs::perms::owner_all);
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r =
      Run("--board qemu " + pte + " --timeout 0.5", "BOARDLAB_QEMU_RUNNER=" + runner.string());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("board error: the firmware timed out after 0.5 s"), std::string::npos)
      << r.output;
  EXPECT_LT(seconds, 10.0);
  // The runner's child went with it.
  const std::vector<uint8_t> pid_text = testing::ReadFile(pid_file.string());
  ASSERT_FALSE(pid_text.empty());
  const pid_t sleeper = std::stoi(std::string(pid_text.begin(), pid_text.end()));
  EXPECT_FALSE(Alive(sleeper)) << "the runner's child " << sleeper << " survived";
}

// The real firmware, stopped by a timeout shorter than its run.
TEST_F(RunCliQemuTest, SlowFirmwareIsKilledAfterTimeout) {
  compiler::CompileOptions options;
  options.cpu_only = true;
  // 128x128x16 -> 16 3x3 convolution: ~38 M MACs, seconds of QEMU time.
  const std::string pte = Compile(
      testing::SingleConv2D({.in_h = 128, .in_w = 128, .in_c = 16, .out_c = 16}), "conv", options);
  ASSERT_FALSE(pte.empty());
  const CommandResult r = Run("--board qemu " + pte + " --iterations 20 --timeout 0.3");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("board error: the firmware timed out"), std::string::npos) << r.output;
}

TEST_F(RunCliQemuTest, BoardErrorsAndUnsupportedOptions) {
  const std::string pte = Compile(testing::SingleSoftmax(), "softmax");
  ASSERT_FALSE(pte.empty());
  const CommandResult no_elf =
      Run("--board qemu " + pte, "BOARDLAB_FIRMWARE_ELF=" + (dir_ / "none.elf").string());
  EXPECT_EQ(no_elf.exit_code, 4) << no_elf.output;
  EXPECT_NE(no_elf.output.find("board error: no firmware ELF"), std::string::npos) << no_elf.output;
  EXPECT_EQ(Run("--board qemu " + pte + " --clock wall").exit_code, 2);
  const CommandResult map_alone = Run("--board qemu " + pte + " --debug-map x.json");
  EXPECT_EQ(map_alone.exit_code, 2) << map_alone.output;
  EXPECT_NE(map_alone.output.find(
                "--debug-map is only used with --inspect, --profile, --trace or --timeline"),
            std::string::npos)
      << map_alone.output;
  // A timeline that could not be written is refused before QEMU starts.
  const CommandResult no_dir =
      Run("--board qemu " + pte + " --trace " + (dir_ / "missing" / "t.json").string());
  EXPECT_EQ(no_dir.exit_code, 2) << no_dir.output;
  EXPECT_EQ(no_dir.output.find("board qemu:"), std::string::npos) << no_dir.output;
  // A bad debug map is refused before QEMU starts.
  const std::string bad_map = (dir_ / "bad.json").string();
  ASSERT_TRUE(testing::WriteFile(bad_map, std::vector<uint8_t>{'[', '1', ']'}));
  const CommandResult bad = Run("--board qemu " + pte + " --profile table --debug-map " + bad_map);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_EQ(bad.output.find("board qemu:"), std::string::npos) << bad.output;
  EXPECT_EQ(Run("--board sim " + pte + " --timeout 5").exit_code, 2);
  EXPECT_EQ(Run("--board qemu " + (dir_ / "missing.pte").string()).exit_code, 2);
  // Tiny artifact, tiny run: well inside the default timeout, verdict passed through.
  const CommandResult ok = Run("--board qemu " + pte + " --icount off");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("result: UNVERIFIED"), std::string::npos) << ok.output;
}

// Tiny DS-CNN with its depthwise convs on the CPU: delegate calls and kernel calls alternate.
class QemuProfileTest : public RunCliQemuTest {
 protected:
  void SetUp() override {
    RunCliQemuTest::SetUp();
    if (IsSkipped()) return;
    compiler::CompileOptions options;
    options.no_npu = {compiler::OpType::kDepthwiseConv2D};
    absl::StatusOr<compiler::CompileResult> compiled =
        compiler::Compile(testing::TinyDsCnn(), options);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    pte_ = (dir_ / "tiny.pte").string();
    map_ = (dir_ / "tiny.json").string();
    ASSERT_TRUE(testing::WriteFile(pte_, compiled->pte));
    ASSERT_TRUE(testing::WriteFile(map_, std::vector<uint8_t>(compiled->debug_map_json.begin(),
                                                              compiled->debug_map_json.end())));
  }
  // boardlab-run with temporary files in dir_, so that a leftover would be seen.
  CommandResult RunHere(const std::string& args, bool with_stderr = true) {
    return RunCommand(
        "TMPDIR=" + dir_.string() + " BOARDLAB_FIRMWARE_ELF=" + std::string(BOARDLAB_FIRMWARE_ELF) +
            " BOARDLAB_QEMU_RUNNER=" + BOARDLAB_FIRMWARE_RUNNER + " " + run_ + " " + args,
        with_stderr);
  }
  bool LeftoverEtdump() const {
    for (const auto& entry : fs::directory_iterator(dir_)) {
      if (entry.path().extension() == ".etdp") return true;
    }
    return false;
  }

  std::string pte_, map_;
};

// The line of `text` that contains `what` (empty when none does).
std::string LineWith(const std::string& text, const std::string& what) {
  const size_t at = text.find(what);
  if (at == std::string::npos) return "";
  const size_t start = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  return text.substr(start, text.find('\n', at) - start);
}

// Issue 16 item 8: the per-op profile of a firmware run, without a second --inspect call.
TEST_F(QemuProfileTest, ProfileTableFollowsTheConsole) {
  const CommandResult r = RunHere("--board qemu " + pte_ + " --profile table --debug-map " + map_);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t result = r.output.find("result: UNVERIFIED");
  const size_t profile = r.output.find("profile from ETDump (average of 1 Execute run):");
  ASSERT_NE(result, std::string::npos) << r.output;
  ASSERT_NE(profile, std::string::npos) << r.output;
  EXPECT_LT(result, profile) << "the console first, then the profile";
  EXPECT_NE(r.output.find("clock: QEMU instructions (icount shift 0), not Cortex-M33 cycles"),
            std::string::npos)
      << r.output;
  EXPECT_NE(LineWith(r.output, "DEPTHWISE_CONV_2D #").find(" cpu "), std::string::npos) << r.output;
  EXPECT_NE(LineWith(r.output, "NPU kernel 0 (id ").find(" npu-emulated-cortex-m33 "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("total (Method::execute)"), std::string::npos) << r.output;
  EXPECT_FALSE(LeftoverEtdump()) << "the temporary ETDump was not removed";
}

TEST_F(QemuProfileTest, ProfileJsonIsTheOnlyStdout) {
  const std::string etdp = (dir_ / "kept.etdp").string();
  const CommandResult r = RunHere("--board qemu " + pte_ + " --profile json --etdump " + etdp,
                                  /*with_stderr=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["board"], "qemu");
  EXPECT_EQ(j["verdict"], "unverified");
  EXPECT_EQ(j["etdump"], etdp);
  EXPECT_FALSE(testing::ReadFile(etdp).empty()) << "an --etdump the user asked for is kept";
  const nlohmann::json& p = j["profile"];
  EXPECT_EQ(p["clock"], "qemu-icount");
  EXPECT_EQ(p["iterations"], 1);
  EXPECT_GT(p["total_instructions"].get<double>(), 0);
  bool npu = false, cpu = false;
  for (const nlohmann::json& op : p["ops"]) {
    if (op["unit"] == "NPU") {
      npu = true;
      EXPECT_EQ(op["ran_on"], "npu-emulated-cortex-m33");
      for (const nlohmann::json& k : op["npu_kernels"]) {
        EXPECT_EQ(k["ran_on"], "npu-emulated-cortex-m33");
        EXPECT_TRUE(k["cycles"].is_null());
        EXPECT_GE(k["instructions"].get<double>(), 0);
      }
    } else {
      cpu = true;
      EXPECT_EQ(op["ran_on"], "cpu");
    }
  }
  EXPECT_TRUE(npu);
  EXPECT_TRUE(cpu);
}

// A mismatch still ran to the end: its verdict, and its profile.
TEST_F(QemuProfileTest, AMismatchKeepsItsProfile) {
  const std::string wrong = (dir_ / "wrong.bin").string();
  ASSERT_TRUE(testing::WriteFile(wrong, std::vector<uint8_t>(12, 0x55)));
  const CommandResult r =
      RunHere("--board qemu " + pte_ + " --expected " + wrong + " --profile json",
              /*with_stderr=*/false);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_FALSE(j["profile"]["ops"].empty());
}

// Issue 12: the firmware's timer ticks are QEMU instructions of the Cortex-M33, NPU kernels
// included. Neither --inspect nor --profile may show them as simulated cycles or NPU time (before
// clock records, --inspect said "sim clock, CPU cycles at 325 MHz assumed" on NPU rows).
TEST_F(QemuProfileTest, NoViewLabelsQemuTicksAsNpuTiming) {
  const std::string etdp = (dir_ / "fw.etdp").string();
  const CommandResult run = RunHere("--board qemu " + pte_ + " --etdump " + etdp);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const std::string& view : {"--inspect " + etdp, "--inspect " + etdp + " --debug-map " + map_,
                                  "--board qemu " + pte_ + " --profile table"}) {
    SCOPED_TRACE(view);
    const CommandResult table = RunHere(view, /*with_stderr=*/false);
    ASSERT_EQ(table.exit_code, 0) << table.output;
    EXPECT_EQ(table.output.find("sim clock"), std::string::npos) << table.output;
    EXPECT_EQ(table.output.find("CPU cycles"), std::string::npos) << table.output;
    EXPECT_EQ(table.output.find("simulated"), std::string::npos) << table.output;
    EXPECT_NE(table.output.find("QEMU instructions"), std::string::npos) << table.output;
    const std::string header = LineWith(table.output, " op ");
    EXPECT_NE(header.find("ran on"), std::string::npos) << table.output;
    EXPECT_NE(header.find("instructions"), std::string::npos) << header;
    EXPECT_EQ(header.find("cycles"), std::string::npos) << header;
    EXPECT_EQ(LineWith(table.output, " npu "), "") << "a row says it ran on the NPU";
    EXPECT_NE(LineWith(table.output, "npu-emulated-cortex-m33"), "") << table.output;
  }
  const CommandResult json = RunHere("--inspect " + etdp + " --profile json", false);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const nlohmann::json j = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json.output;
  EXPECT_EQ(j["profile"]["clock"], "qemu-icount");
  for (const nlohmann::json& op : j["profile"]["ops"]) {
    EXPECT_TRUE(op["cycles"].is_null()) << op;
    EXPECT_NE(op["ran_on"], "npu") << op;
    for (const nlohmann::json& k : op["npu_kernels"]) {
      EXPECT_TRUE(k["cycles"].is_null()) << k;
      EXPECT_EQ(k["ran_on"], "npu-emulated-cortex-m33") << k;
    }
  }
}

// Issue 14: the timeline of a firmware run counts QEMU instructions and says that the NPU kernels
// and the weight copies ran on the Cortex-M33: they share the core, so no two of them overlap.
TEST_F(RunCliQemuTest, TimelineOfAFirmwareRunSaysTheCoreDidEverything) {
  compiler::CompileOptions options;
  options.no_npu = {compiler::OpType::kDepthwiseConv2D};
  options.weights = compiler::WeightsPlacement::kFlash;
  absl::StatusOr<compiler::CompileResult> compiled =
      compiler::Compile(testing::TinyDsCnn(), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string pte = (dir_ / "tiny.pte").string();
  const std::string map = (dir_ / "tiny.json").string();
  ASSERT_TRUE(testing::WriteFile(pte, compiled->pte));
  ASSERT_TRUE(testing::WriteFile(
      map, std::vector<uint8_t>(compiled->debug_map_json.begin(), compiled->debug_map_json.end())));
  const std::string trace = (dir_ / "trace.json").string();
  const std::string svg = (dir_ / "timeline.svg").string();
  const CommandResult run = Run("--board qemu " + pte + " --debug-map " + map + " --trace " +
                                trace + " --timeline " + svg);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ExpectTheCoreDidEverything(trace, svg, (dir_ / "timeline.png").string());
}

}  // namespace
}  // namespace boardlab::firmware
