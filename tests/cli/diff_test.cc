// `boardlab diff A B` (cli/diff.h) on --out directories made here: what it shows, each gate's
// pass and fail, its JSON and JUnit twins, and bad arguments.

#include "cli/diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "cli/tables.h"
#include "nlohmann/json.hpp"
#include "tests/cli/fake_boardlab_server.h"
#include "tests/support/process.h"
#include "tests/support/test_paths.h"

namespace boardlab::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

void Write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

struct JobShape {
  double latency_us = 100;
  std::string conv_unit = "NPU";  // where CONV_2D #1 runs
  int arena_bytes = 4096;
  std::string output = std::string("\x01\x05\x02", 3);  // int8 scores: class 1 wins
  double conv_us = 60;
  std::string clock = "";            // the profile's clock kind; none when empty
  std::string output_type = "int8";  // as the profile lists output 0
  std::string conv_ran_on = "npu";   // where the profile says CONV_2D #1 ran
};

// A `boardlab --out` directory of a job with two operators (FULLY_CONNECTED #0 on the CPU,
// CONV_2D #1 where `shape` says), a RELU in a called subgraph and one int8 output.
std::string MakeOutDir(const std::string& name, const JobShape& shape) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::create_directories(dir);
  v1::Job job;
  job.set_id(name);
  job.set_state(v1::JOB_STATE_DONE);
  job.set_result(v1::JOB_RESULT_PASS);
  job.set_inference_us(shape.latency_us);
  job.mutable_files()->add_outputs()->set_sha256(std::string(64, 'a'));
  Write(dir / "job.json", MessageJson(job));
  const nlohmann::json report = {
      {"ops",
       {{{"index", 0}, {"type", "FULLY_CONNECTED"}, {"unit", "CPU"}, {"reason", "always"}},
        {{"index", 1},
         {"type", "CONV_2D"},
         {"unit", shape.conv_unit},
         {"reason", shape.conv_unit == "CPU" ? "kernel too large" : ""}},
        // Op 1 of a subgraph that IF or WHILE calls: not the main graph's CONV_2D #1.
        {{"index", 1}, {"subgraph", 1}, {"type", "RELU"}, {"unit", "CPU"}, {"reason", "called"}}}},
      {"memory",
       {{"arena_bytes", shape.arena_bytes},
        {"weight_bytes", 1000},
        {"sram_used_bytes", shape.arena_bytes + 1000},
        {"weights_placement", "sram"}}},
      {"artifact_bytes", 5000}};
  Write(dir / "report.json", report.dump());
  nlohmann::json profile = {{"outputs", {{{"index", 0}, {"type", shape.output_type}}}},
                            {"profile",
                             {{"total_us", shape.latency_us},
                              {"ops",
                               {{{"instruction", 0},
                                 {"op", "fully_connected"},
                                 {"ran_on", "cpu"},
                                 {"us", shape.latency_us - shape.conv_us}},
                                {{"instruction", 1},
                                 {"op", "conv2d"},
                                 {"ran_on", shape.conv_ran_on},
                                 {"us", shape.conv_us}}}}}}};
  if (!shape.clock.empty()) profile["profile"]["clock"] = shape.clock;
  Write(dir / "profile.json", profile.dump());
  const nlohmann::json debug_map = {{"cpu_ops",
                                     {{{"instruction", 0}, {"name", "FULLY_CONNECTED #0"}},
                                      {{"instruction", 1}, {"name", "CONV_2D #1"}}}}};
  Write(dir / "debug_map.json", debug_map.dump());
  Write(dir / "output0.bin", shape.output);
  return dir.string();
}

testing::CapturedRun Diff(const std::vector<std::string>& args) {
  std::vector<std::string> words = {"diff"};
  words.insert(words.end(), args.begin(), args.end());
  return testing::RunCaptured(words, "127.0.0.1:1");  // offline: no server is asked
}

TEST(Diff, ShowsOutputsLatencyPlacementAndMemory) {
  const std::string a = MakeOutDir("diff_a", {});
  const std::string b = MakeOutDir("diff_b", {.latency_us = 130,
                                              .conv_unit = "CPU",
                                              .arena_bytes = 8192,
                                              .output = std::string("\x01\x02\x07", 3),
                                              .conv_us = 90,
                                              .conv_ran_on = "cpu"});
  testing::CapturedRun run = Diff({a, b});
  EXPECT_EQ(run.code, 0) << run.err << "no gate asked for";
  EXPECT_THAT(run.out,
              HasSubstr("output 0 (int8, 3 elements): max abs diff 5, top-1 DIFFERS (1 vs 2)"));
  EXPECT_THAT(run.out, HasSubstr("latency: 100.00 us -> 130.00 us (+30.00 us, +30.0%)"));
  EXPECT_THAT(run.out, HasSubstr("CONV_2D #1"));
  EXPECT_THAT(run.out, HasSubstr("+30.00"));
  EXPECT_THAT(run.out, HasSubstr("placement: 2 -> 3 operators on the CPU"));
  EXPECT_THAT(run.out, HasSubstr("CONV_2D #1: NPU -> CPU (kernel too large)"));
  EXPECT_THAT(run.out, HasSubstr("arena_bytes"));
  EXPECT_THAT(run.out, HasSubstr("(+4096)"));
  // The op that changed most comes first; each says where it really ran in A and in B.
  EXPECT_LT(run.out.find("CONV_2D #1   "), run.out.find("FULLY_CONNECTED #0"));
  EXPECT_THAT(run.out, HasSubstr("ran on (A -> B)"));
  EXPECT_THAT(run.out,
              ::testing::ContainsRegex("CONV_2D #1 +60.00 +90.00 +\\+30.00  npu -> cpu\n"));
  EXPECT_THAT(run.out,
              ::testing::ContainsRegex("FULLY_CONNECTED #0 +40.00 +40.00 +\\+0.00  cpu\n"));
  const testing::CapturedRun json = Diff({a, b, "--json"});
  const nlohmann::json doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << json.out;
  ASSERT_TRUE(doc.contains("ops")) << json.out;
  EXPECT_EQ(doc["ops"][0]["op"], "CONV_2D #1");
  EXPECT_EQ(doc["ops"][0]["a_ran_on"], "npu");
  EXPECT_EQ(doc["ops"][0]["b_ran_on"], "cpu");
}

TEST(Diff, EachGatePassesOnIdenticalJobs) {
  const std::string a = MakeOutDir("diff_same_a", {});
  const std::string b = MakeOutDir("diff_same_b", {});
  testing::CapturedRun run =
      Diff({a, b, "--fail-if-slower", "0", "--fail-if-outputs-differ", "--fail-if-cpu-ops-added"});
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("slower          pass"));
  EXPECT_THAT(run.out, HasSubstr("outputs differ  pass"));
  EXPECT_THAT(run.out, HasSubstr("cpu ops added   pass"));
}

TEST(Diff, EachGateFailsAlone) {
  const std::string a = MakeOutDir("diff_gate_a", {});
  const std::string slower = MakeOutDir("diff_gate_slower", {.latency_us = 111});
  const std::string differs =
      MakeOutDir("diff_gate_differs", {.output = std::string("\x01\x05\x03", 3)});
  const std::string moved = MakeOutDir("diff_gate_moved", {.conv_unit = "CPU"});
  EXPECT_EQ(Diff({a, slower, "--fail-if-slower", "10"}).code, 1);
  EXPECT_EQ(Diff({a, slower, "--fail-if-slower", "11"}).code, 0);
  EXPECT_EQ(Diff({a, slower, "--fail-if-outputs-differ", "--fail-if-cpu-ops-added"}).code, 0);
  testing::CapturedRun out = Diff({a, differs, "--fail-if-outputs-differ"});
  EXPECT_EQ(out.code, 1);
  EXPECT_THAT(out.out, HasSubstr("outputs differ  FAIL: output 0: max abs diff 1"));
  EXPECT_EQ(Diff({a, differs, "--fail-if-slower", "0", "--fail-if-cpu-ops-added"}).code, 0);
  testing::CapturedRun cpu = Diff({a, moved, "--fail-if-cpu-ops-added"});
  EXPECT_EQ(cpu.code, 1);
  EXPECT_THAT(cpu.out, HasSubstr("cpu ops added   FAIL: 2 -> 3 operators on the CPU: CONV_2D #1 "
                                 "NPU -> CPU (kernel too large)"));
  EXPECT_EQ(Diff({moved, a, "--fail-if-cpu-ops-added"}).code, 0) << "moving to the NPU is fine";
}

TEST(Diff, AnUnknownLatencyCannotPassTheSlowerGate) {
  const std::string a = MakeOutDir("diff_nolat_a", {.latency_us = 0});
  const std::string b = MakeOutDir("diff_nolat_b", {});
  testing::CapturedRun run = Diff({a, b, "--fail-if-slower", "50"});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.out, HasSubstr("latency unknown"));
}

TEST(Diff, JsonAndJunitTwins) {
  const std::string a = MakeOutDir("diff_twin_a", {});
  const std::string b = MakeOutDir("diff_twin_b", {.latency_us = 120, .conv_unit = "CPU"});
  const std::string junit = ::testing::TempDir() + "/diff-junit.xml";
  testing::CapturedRun run =
      Diff({a, b, "--json", "--fail-if-slower", "5", "--fail-if-cpu-ops-added",
            "--fail-if-outputs-differ", "--junit", junit});
  EXPECT_EQ(run.code, 1);
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["a_latency_us"], 100);
  EXPECT_EQ(doc["b_latency_us"], 120);
  EXPECT_EQ(doc["moves"][0]["type"], "CONV_2D");
  EXPECT_EQ(doc["outputs"][0]["max_abs_diff"], 0);
  EXPECT_EQ(doc["gates"].size(), 3u);
  boardlab::testing::CommandResult valid = boardlab::testing::RunCommand(
      "xmllint --noout --schema " + boardlab::testing::RepoDir() + "/tests/cli/junit.xsd " + junit);
  EXPECT_EQ(valid.exit_code, 0) << valid.output;
  std::ifstream in(junit);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(xml, HasSubstr("failures=\"2\""));
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"outputs differ\""));
}

TEST(Diff, BadArgumentsAreUsageErrors) {
  const std::string a = MakeOutDir("diff_bad_a", {});
  const fs::path empty = fs::path(::testing::TempDir()) / "diff_empty";
  fs::create_directories(empty);
  testing::CapturedRun missing = Diff({a, "./no/such/dir"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err, HasSubstr("neither a directory nor a job id"));
  testing::CapturedRun not_out = Diff({a, empty.string()});
  EXPECT_EQ(not_out.code, 2);
  EXPECT_THAT(not_out.err, HasSubstr("is not a `boardlab --out` directory"));
  testing::CapturedRun negative = Diff({a, a, "--fail-if-slower", "-1"});
  EXPECT_EQ(negative.code, 2);
  EXPECT_THAT(negative.err, HasSubstr("--fail-if-slower"));
  EXPECT_EQ(Diff({a}).code, 2);
}

TEST(Diff, SubmitWithABaselineAppliesTheGates) {
  testing::FakeBoardlabServer server;
  v1::Job outcome;
  outcome.set_result(v1::JOB_RESULT_PASS);
  outcome.set_inference_us(150);
  server.jobs().SetOutcome(outcome);
  const std::string baseline = MakeOutDir("diff_baseline", {});
  const std::string model = testing::WriteTestFile("baseline.tflite", "model bytes");
  testing::CapturedRun slower = testing::RunCaptured(
      {"submit", model, "--wait", "--baseline", baseline, "--fail-if-slower", "10"},
      server.address());
  EXPECT_EQ(slower.code, 1) << slower.out << slower.err;
  EXPECT_THAT(slower.out, HasSubstr("latency: 100.00 us -> 150.00 us"));
  EXPECT_THAT(slower.out, HasSubstr("slower          FAIL"));
  testing::CapturedRun lenient = testing::RunCaptured(
      {"submit", model, "--wait", "--baseline", baseline, "--fail-if-slower", "60"},
      server.address());
  EXPECT_EQ(lenient.code, 0) << lenient.out << lenient.err;
  testing::CapturedRun no_baseline =
      testing::RunCaptured({"submit", model, "--wait", "--fail-if-slower", "10"}, server.address());
  EXPECT_EQ(no_baseline.code, 2);
  EXPECT_THAT(no_baseline.err, HasSubstr("--baseline"));
}

std::string Floats(std::initializer_list<float> values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.begin(), bytes.size());
  return bytes;
}

// Outputs are compared as the on-board verifier compares them: NaN in both is equal.
TEST(Diff, NanInBothOutputsIsNoDifference) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const JobShape nan_output{.output = Floats({1.5f, nan, 0.5f}), .output_type = "float32"};
  const std::string a = MakeOutDir("diff_nan_a", nan_output);
  const std::string b = MakeOutDir("diff_nan_b", nan_output);
  testing::CapturedRun same = Diff({a, b, "--fail-if-outputs-differ"});
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  EXPECT_THAT(same.out, HasSubstr("output 0 (float32, 3 elements): max abs diff 0"));
  EXPECT_THAT(same.out, HasSubstr("outputs differ  pass"));
  const std::string c =
      MakeOutDir("diff_nan_c", {.output = Floats({1.5f, 2.0f, 0.5f}), .output_type = "float32"});
  testing::CapturedRun differs = Diff({a, c, "--fail-if-outputs-differ"});
  EXPECT_EQ(differs.code, 1) << differs.out << differs.err;
  EXPECT_THAT(differs.out, HasSubstr("max abs diff inf")) << "a NaN against a number";
}

TEST(Diff, ShowsEachSidesClock) {
  const std::string a = MakeOutDir("diff_clock_a", {.clock = "rt700-sim-cycles"});
  const std::string b =
      MakeOutDir("diff_clock_b", {.latency_us = 105, .clock = "rt700-sim-cycles"});
  testing::CapturedRun same = Diff({a, b, "--fail-if-slower", "10"});
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  EXPECT_THAT(same.out, HasSubstr("clock: simulated RT700 (both)"));
  const std::string qemu = MakeOutDir("diff_clock_qemu", {.clock = "qemu-icount"});
  testing::CapturedRun json = Diff({a, qemu, "--json"});
  EXPECT_EQ(json.code, 0) << json.err << "no gate asked for";
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["a_clock"], "simulated RT700");
  EXPECT_EQ(doc["b_clock"], "QEMU instruction count");
}

// A profile blob may be only the document's "profile" member (cli/profile_view.h); its clock and
// per-op latencies are read all the same.
TEST(Diff, ReadsTheClockOfABareProfile) {
  const std::string a = MakeOutDir("diff_bare_a", {.clock = "rt700-sim-cycles"});
  const std::string b = MakeOutDir("diff_bare_b", {.clock = "rt700-sim-cycles"});
  const fs::path profile = fs::path(b) / "profile.json";
  std::ifstream in(profile);
  const nlohmann::json document = nlohmann::json::parse(in);
  in.close();
  Write(profile, document["profile"].dump());
  testing::CapturedRun run = Diff({a, b});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("clock: simulated RT700 (both)"));
  EXPECT_THAT(run.out, HasSubstr("CONV_2D #1"));
}

// A simulator's timing model against QEMU's instruction count: no percentage means anything, so
// the gate is an error (exit 2), not a pass or a fail.
TEST(Diff, FailIfSlowerOnDifferentClocksIsAnError) {
  const std::string a = MakeOutDir("diff_clocks_a", {.clock = "rt700-sim-cycles"});
  const std::string b = MakeOutDir("diff_clocks_b", {.latency_us = 50, .clock = "qemu-icount"});
  const std::string junit = ::testing::TempDir() + "/diff-clocks-junit.xml";
  testing::CapturedRun run = Diff({a, b, "--fail-if-slower", "10", "--junit", junit});
  EXPECT_EQ(run.code, 2) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("latency: 100.00 us -> 50.00 us\n"
                                 "  clock: A simulated RT700, B QEMU instruction count"));
  EXPECT_THAT(run.err, HasSubstr("--fail-if-slower: A's latency is on simulated RT700, B's on "
                                 "QEMU instruction count"));
  std::ifstream in(junit);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(xml, HasSubstr("errors=\"1\""));
  EXPECT_THAT(xml, HasSubstr("name=\"b_clock\" value=\"QEMU instruction count\""));
  EXPECT_EQ(Diff({a, b, "--fail-if-outputs-differ"}).code, 0) << "only the latency gate cares";
}

// A report.json whose fields have the wrong types is named with the field, not a crash.
TEST(Diff, AMalformedReportIsAClearError) {
  const std::string a = MakeOutDir("diff_badreport_a", {});
  const struct {
    std::string text;
    std::string problem;
  } cases[] = {
      {R"({"ops": [{"index": 0, "unit": "CPU"}, {"index": 1, "unit": 5}]})",
       "ops[1].unit is not a string"},
      {R"({"ops": [{"index": "zero"}]})", "ops[0].index is not a number"},
      {R"({"memory": {"weights_placement": ["sram"]}})",
       "memory.weights_placement is not a string"},
      {R"({"memory": {"arena_bytes": "4096"}})", "memory.arena_bytes is not a number"},
      {R"({"memory": 3})", "memory is not an object"},
      {R"({"ops": {}})", "ops is not an array"},
      {R"([1, 2])", "not a JSON object"},
      {"{\"ops\": [", "not JSON"},
  };
  for (const auto& c : cases) {
    const std::string b = MakeOutDir("diff_badreport_b", {});
    Write(fs::path(b) / "report.json", c.text);
    testing::CapturedRun run = Diff({a, b});
    EXPECT_EQ(run.code, 2) << c.text << run.err;
    EXPECT_THAT(run.err,
                HasSubstr(b + "/report.json' is not a readable compile report: " + c.problem))
        << c.text;
  }
}

}  // namespace
}  // namespace boardlab::cli
