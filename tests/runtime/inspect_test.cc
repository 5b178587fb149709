// The ETDump boardlab-run writes, checked against the .pte and the compiler's debug map, and
// boardlab-run --inspect, which prints the per-op profile from that ETDump alone.
//
// InspectKws* runs the real binaries (boardlab-compile, boardlab-run) on the MLPerf Tiny KWS
// DS-CNN from the shared models folder (skipped when absent): once all on the NPU, once with the
// depthwise convs on the CPU so the chain alternates DelegateCall and KernelCall. InspectCli*
// uses models built in code, so it runs everywhere.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "boardlab/schema/program_generated.h"
#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/profiling/etdump/clock_record.h"
#include "runtime/profiling/etdump/etdump_reader.h"
#include "runtime/profiling/etdump/etdump_writer.h"
#include "tests/runtime/boardlab_run_test_base.h"
#include "tests/runtime/executor_test_support.h"
#include "tests/support/process.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

namespace boardlab::runtime {
namespace {

namespace fs = std::filesystem;
using boardlab::testing::CommandResult;
using boardlab::testing::RunCommand;
using nlohmann::json;

constexpr int kIterations = 3;
constexpr uint64_t kSimTicksPerSecond = 325000000;  // imxrt700 cpu_clock_hz

fs::path MakeTempDir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("boardlab_inspect_" + std::to_string(::getpid()) + "_" + name);
  fs::create_directories(dir);
  return dir;
}

// One ProfileEvent of the ETDump, with the RunData it belongs to.
struct Event {
  uint32_t run = 0;
  std::string run_name;
  std::string name;  // empty for delegate events
  int32_t chain = -1;
  int32_t instruction = -1;
  int32_t delegate_id = -1;
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t duration() const { return end - start; }
  bool operator==(const Event& o) const {
    return run == o.run && name == o.name && chain == o.chain && instruction == o.instruction &&
           delegate_id == o.delegate_id && start == o.start && end == o.end;
  }
};

std::vector<Event> ReadEvents(const std::vector<uint8_t>& etdp) {
  const testing::AlignedBytes bytes(etdp);
  Result<etdump::EtdumpReader> reader = etdump::EtdumpReader::Open(bytes.span());
  EXPECT_TRUE(reader.ok());
  if (!reader.ok()) return {};
  std::vector<etdump::ProfileRow> rows(reader->NumProfileEvents());
  rows.resize(reader->ReadRows({rows.data(), rows.size()}));
  std::vector<Event> events;
  for (const etdump::ProfileRow& r : rows) {
    events.push_back({r.run, r.run_name ? r.run_name : "", r.name ? r.name : "", r.chain,
                      r.instruction, r.delegate_debug_id, r.start, r.end});
  }
  return events;
}

// Execute blocks: run index -> its events in file order.
std::map<uint32_t, std::vector<Event>> ExecuteBlocks(const std::vector<Event>& events) {
  std::map<uint32_t, std::vector<Event>> blocks;
  for (const Event& e : events) {
    if (e.run_name == "Execute") blocks[e.run].push_back(e);
  }
  return blocks;
}

// Chain-local indices of the KernelCall and DelegateCall instructions of the .pte.
struct Chain {
  std::set<int32_t> kernel_calls;
  std::set<int32_t> delegate_calls;
};

Chain ReadChain(const std::vector<uint8_t>& pte) {
  namespace efb = ::executorch_flatbuffer;
  const testing::AlignedBytes bytes(pte);
  Chain chain;
  const efb::ExecutionPlan* plan = efb::GetProgram(bytes.data())->execution_plan()->Get(0);
  EXPECT_EQ(plan->chains()->size(), 1u);
  const auto* instructions = plan->chains()->Get(0)->instructions();
  for (uint32_t i = 0; i < instructions->size(); ++i) {
    switch (instructions->Get(i)->instr_args_type()) {
      case efb::InstructionArguments::KernelCall:
        chain.kernel_calls.insert(static_cast<int32_t>(i));
        break;
      case efb::InstructionArguments::DelegateCall:
        chain.delegate_calls.insert(static_cast<int32_t>(i));
        break;
      default:
        break;
    }
  }
  return chain;
}

// Debug map: DelegateCall instruction -> its NPU kernels' debug ids (in kernel order).
std::map<int32_t, std::vector<int32_t>> MapKernelIds(const json& map) {
  std::map<int32_t, std::vector<int32_t>> ids;
  for (const json& d : map["delegates"]) {
    std::vector<int32_t>& v = ids[d["instruction"].get<int32_t>()];
    for (const json& k : d["kernels"]) v.push_back(k["id"].get<int32_t>());
  }
  return ids;
}

// ---- The real KWS model through the real binaries -------------------------------------------

struct KwsRun {
  std::string pte_path, map_path, etdp_path;
  std::vector<uint8_t> pte, etdp;
  json map;
  json live;  // boardlab-run --profile json
};

class InspectKws : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = boardlab::testing::SharedModelPath("mlperf-tiny/kws_dscnn_int8.tflite");
    const std::string run = boardlab::testing::RunBinary();
    if (!model_ || run.empty() || !fs::exists(run)) return;
    dir_ = MakeTempDir("kws");
    all_npu_ = Build("all_npu", "");
    mixed_ = Build("mixed", "--no-npu DEPTHWISE_CONV_2D");
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
    all_npu_.reset();
    mixed_.reset();
  }
  void SetUp() override {
    if (!model_) {
      GTEST_SKIP() << "shared models folder absent: " << boardlab::testing::SharedModelsDir();
    }
    if (dir_.empty()) GTEST_SKIP() << "boardlab-run is not built";
    ASSERT_TRUE(all_npu_.has_value());
    ASSERT_TRUE(mixed_.has_value());
  }

  // boardlab-compile MODEL -o NAME.pte --debug-map NAME.json, then boardlab-run with the sim clock
  // and the imxrt700 timing constants for kIterations, writing NAME.etdp.
  static std::optional<KwsRun> Build(const std::string& name, const std::string& compile_flags) {
    KwsRun r;
    r.pte_path = (dir_ / (name + ".pte")).string();
    r.map_path = (dir_ / (name + ".json")).string();
    r.etdp_path = (dir_ / (name + ".etdp")).string();
    const CommandResult c =
        RunCommand(boardlab::testing::CompilerBinary() + " " + *model_ + " -o " + r.pte_path +
                   " --debug-map " + r.map_path + " -q " + compile_flags);
    EXPECT_EQ(c.exit_code, 0) << c.output;
    if (c.exit_code != 0) return std::nullopt;
    const CommandResult run = RunCommand(RunCommandLine(r, r.etdp_path), /*with_stderr=*/false);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    r.pte = boardlab::testing::ReadFile(r.pte_path);
    r.etdp = boardlab::testing::ReadFile(r.etdp_path);
    const std::vector<uint8_t> map = boardlab::testing::ReadFile(r.map_path);
    r.map = json::parse(map.begin(), map.end(), nullptr, false);
    r.live = json::parse(run.output, nullptr, false);
    EXPECT_FALSE(r.map.is_discarded());
    EXPECT_FALSE(r.live.is_discarded()) << run.output;
    if (run.exit_code != 0 || r.map.is_discarded() || r.live.is_discarded() || r.etdp.empty()) {
      return std::nullopt;
    }
    return r;
  }
  static std::string RunCommandLine(const KwsRun& r, const std::string& etdp) {
    return boardlab::testing::RunBinary() + " " + r.pte_path + " --input random:1 --iterations " +
           std::to_string(kIterations) + " --clock sim --profile json --etdump " + etdp +
           " --target " + boardlab::testing::RepoDir() + "/compiler/targets/imxrt700.json";
  }
  static std::vector<const KwsRun*> Both() { return {&*all_npu_, &*mixed_}; }

  static inline std::optional<std::string> model_;
  static inline fs::path dir_;
  static inline std::optional<KwsRun> all_npu_;
  static inline std::optional<KwsRun> mixed_;
};

TEST_F(InspectKws, OneExecuteBlockPerIteration) {
  for (const KwsRun* r : Both()) {
    const testing::AlignedBytes bytes(r->etdp);
    Result<etdump::EtdumpReader> reader = etdump::EtdumpReader::Open(bytes.span());
    ASSERT_TRUE(reader.ok());
    const auto* runs = reader->root().run_data();
    ASSERT_NE(runs, nullptr);
    ASSERT_EQ(runs->size(), 1u + kIterations) << r->pte_path;
    EXPECT_STREQ(runs->Get(0)->name()->c_str(), "Default");
    for (uint32_t i = 1; i < runs->size(); ++i) {
      EXPECT_STREQ(runs->Get(i)->name()->c_str(), "Execute");
    }
    for (const auto& [run, events] : ExecuteBlocks(ReadEvents(r->etdp))) {
      int method_execute = 0;
      for (const Event& e : events) method_execute += e.name == "Method::execute" ? 1 : 0;
      EXPECT_EQ(method_execute, 1) << "run " << run;
    }
  }
}

TEST_F(InspectKws, OneProfileEventPerCpuKernelCall) {
  const Chain chain = ReadChain(mixed_->pte);
  ASSERT_EQ(chain.kernel_calls.size(), 4u);  // the four depthwise convs
  std::set<int32_t> map_cpu_instructions;
  for (const json& op : mixed_->map["cpu_ops"]) {
    map_cpu_instructions.insert(op["instruction"].get<int32_t>());
  }
  EXPECT_EQ(map_cpu_instructions, chain.kernel_calls);
  const auto blocks = ExecuteBlocks(ReadEvents(mixed_->etdp));
  ASSERT_EQ(blocks.size(), static_cast<size_t>(kIterations));
  for (const auto& [run, events] : blocks) {
    std::multiset<int32_t> operator_calls, native_calls;
    for (const Event& e : events) {
      if (e.name == "OPERATOR_CALL") {
        EXPECT_EQ(e.chain, 0);
        operator_calls.insert(e.instruction);
      } else if (e.name.rfind("native_call_", 0) == 0) {
        EXPECT_EQ(e.chain, 0);
        EXPECT_EQ(e.name, "native_call_depthwise_conv_2d.out");
        native_calls.insert(e.instruction);
      }
    }
    EXPECT_EQ(operator_calls,
              std::multiset<int32_t>(chain.kernel_calls.begin(), chain.kernel_calls.end()))
        << "run " << run;
    EXPECT_EQ(native_calls, operator_calls) << "run " << run;
  }
}

TEST_F(InspectKws, OneDelegateEventPerNpuKernelWithTheDebugMapIds) {
  for (const KwsRun* r : Both()) {
    const Chain chain = ReadChain(r->pte);
    const std::map<int32_t, std::vector<int32_t>> map_ids = MapKernelIds(r->map);
    std::set<int32_t> map_instructions;
    for (const auto& [instruction, ids] : map_ids) map_instructions.insert(instruction);
    ASSERT_FALSE(chain.delegate_calls.empty());
    EXPECT_EQ(map_instructions, chain.delegate_calls) << r->map_path;
    for (const auto& [run, events] : ExecuteBlocks(ReadEvents(r->etdp))) {
      std::map<int32_t, std::vector<int32_t>> logged_ids;
      std::multiset<int32_t> delegate_calls;
      for (const Event& e : events) {
        if (e.delegate_id != -1) {
          EXPECT_TRUE(e.name.empty());
          EXPECT_EQ(e.chain, 0);
          logged_ids[e.instruction].push_back(e.delegate_id);
        } else if (e.name == "DELEGATE_CALL") {
          EXPECT_EQ(e.chain, 0);
          delegate_calls.insert(e.instruction);
        }
      }
      EXPECT_EQ(logged_ids, map_ids) << r->pte_path << " run " << run;
      EXPECT_EQ(delegate_calls,
                std::multiset<int32_t>(chain.delegate_calls.begin(), chain.delegate_calls.end()));
    }
  }
}

TEST_F(InspectKws, TimestampsNestAndNpuKernelsFitInTheirDelegateCall) {
  for (const KwsRun* r : Both()) {
    for (const auto& [run, events] : ExecuteBlocks(ReadEvents(r->etdp))) {
      std::map<int32_t, const Event*> delegate_call;
      const Event* method = nullptr;
      for (const Event& e : events) {
        EXPECT_LE(e.start, e.end) << e.name << " " << e.instruction;
        if (e.name == "DELEGATE_CALL") delegate_call[e.instruction] = &e;
        if (e.name == "OPERATOR_CALL") {
          EXPECT_GT(e.duration(), 0u) << "CPU ops cost cycles";
        }
        if (e.name == "Method::execute") method = &e;
      }
      ASSERT_NE(method, nullptr);
      std::map<int32_t, uint64_t> kernel_sum;
      uint64_t previous_end = 0;
      for (const Event& e : events) {
        EXPECT_GE(e.start, method->start);
        EXPECT_LE(e.end, method->end);
        if (e.delegate_id == -1) continue;
        ASSERT_TRUE(delegate_call.count(e.instruction)) << e.instruction;
        const Event& call = *delegate_call[e.instruction];
        EXPECT_GE(e.start, call.start) << "kernel " << e.delegate_id;
        EXPECT_LE(e.end, call.end) << "kernel " << e.delegate_id;
        EXPECT_GE(e.start, previous_end) << "NPU kernels run one after another";
        previous_end = e.end;
        kernel_sum[e.instruction] += e.duration();
      }
      for (const auto& [instruction, sum] : kernel_sum) {
        EXPECT_GT(sum, 0u);
        EXPECT_LE(sum, delegate_call[instruction]->duration()) << "instruction " << instruction;
      }
    }
  }
}

TEST_F(InspectKws, SimulatedCyclesAreDeterministic) {
  for (const KwsRun* r : Both()) {
    const std::string again = (dir_ / "again.etdp").string();
    const CommandResult run = RunCommand(RunCommandLine(*r, again), /*with_stderr=*/false);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const json live = json::parse(run.output, nullptr, false);
    ASSERT_FALSE(live.is_discarded());
    EXPECT_EQ(live["profile"]["total_cycles"], r->live["profile"]["total_cycles"]);
    EXPECT_EQ(live["profile"]["ops"], r->live["profile"]["ops"]);
    const std::vector<Event> a = ReadEvents(r->etdp);
    const std::vector<Event> b = ReadEvents(boardlab::testing::ReadFile(again));
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      // Load-time events are in simulated time too, so every timestamp matches.
      EXPECT_TRUE(a[i] == b[i]) << "event " << i << " " << a[i].name << " " << a[i].instruction;
    }
    // Every iteration of one run costs the same cycles, event by event.
    const auto blocks = ExecuteBlocks(a);
    const std::vector<Event>& first = blocks.begin()->second;
    for (const auto& [run_index, events] : blocks) {
      ASSERT_EQ(events.size(), first.size());
      for (size_t i = 0; i < events.size(); ++i) {
        EXPECT_EQ(events[i].duration(), first[i].duration()) << "run " << run_index;
      }
    }
  }
}

TEST_F(InspectKws, InspectReproducesTheLiveProfile) {
  for (const KwsRun* r : Both()) {
    const CommandResult c =
        RunCommand(boardlab::testing::RunBinary() + " --inspect " + r->etdp_path + " --debug-map " +
                       r->map_path + " --profile json",
                   /*with_stderr=*/false);
    ASSERT_EQ(c.exit_code, 0) << c.output;
    const json j = json::parse(c.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << c.output;
    const json& p = j["profile"];
    const json& live = r->live["profile"];
    EXPECT_EQ(p["clock"], "rt700-sim-cycles");
    EXPECT_EQ(p["clock"], live["clock"]);
    EXPECT_EQ(p["clock_label"], live["clock_label"]);
    EXPECT_EQ(p["ticks_per_second"], static_cast<double>(kSimTicksPerSecond));
    EXPECT_EQ(p["core_hz"], static_cast<double>(kSimTicksPerSecond));
    EXPECT_EQ(p["iterations"], kIterations);
    EXPECT_EQ(p["total_cycles"], live["total_cycles"]);
    EXPECT_NEAR(p["total_us"].get<double>(), live["total_us"].get<double>(), 1e-6);
    ASSERT_EQ(p["ops"].size(), live["ops"].size());
    std::map<int32_t, const json*> cpu_ops;
    for (const json& op : r->map["cpu_ops"]) cpu_ops[op["instruction"].get<int32_t>()] = &op;
    double percent = 0;
    for (size_t i = 0; i < p["ops"].size(); ++i) {
      const json& op = p["ops"][i];
      const json& live_op = live["ops"][i];
      EXPECT_EQ(op["instruction"], live_op["instruction"]);
      EXPECT_EQ(op["unit"], live_op["unit"]);
      EXPECT_EQ(op["ran_on"], live_op["ran_on"]);
      EXPECT_EQ(op["ran_on"], op["unit"] == "CPU" ? "cpu" : "npu");
      EXPECT_EQ(op["cycles"], live_op["cycles"]);
      percent += op["percent"].get<double>();
      const int32_t instruction = op["instruction"].get<int32_t>();
      if (op["unit"] == "CPU") {
        // "DEPTHWISE_CONV_2D #3": TFLite type and source index, from the debug map.
        ASSERT_TRUE(cpu_ops.count(instruction)) << instruction;
        EXPECT_EQ(op["op"], (*cpu_ops[instruction])["name"]);
        EXPECT_EQ(op["source_ops"], (*cpu_ops[instruction])["ops"]);
        continue;
      }
      ASSERT_EQ(op["npu_kernels"].size(), live_op["npu_kernels"].size());
      const json* delegate = nullptr;
      for (const json& d : r->map["delegates"]) {
        if (d["instruction"] == instruction) delegate = &d;
      }
      ASSERT_NE(delegate, nullptr);
      ASSERT_EQ(op["npu_kernels"].size(), (*delegate)["kernels"].size());
      for (size_t k = 0; k < op["npu_kernels"].size(); ++k) {
        const json& kernel = op["npu_kernels"][k];
        const json& mapped = (*delegate)["kernels"][k];
        EXPECT_EQ(kernel["cycles"], live_op["npu_kernels"][k]["cycles"]);
        EXPECT_EQ(kernel["ran_on"], "npu");
        EXPECT_EQ(live_op["npu_kernels"][k]["ran_on"], "npu");
        EXPECT_EQ(kernel["debug_id"], mapped["id"]);
        EXPECT_EQ(kernel["kernel"], mapped["kernel"]);
        EXPECT_EQ(kernel["source_ops"], mapped["ops"]);
        EXPECT_EQ(kernel["layer"], mapped["names"][0]);
        EXPECT_EQ(kernel["op"].get<std::string>().rfind(
                      "NPU kernel " + std::to_string(mapped["kernel"].get<int>()) + " (id ", 0),
                  0u)
            << kernel["op"];
      }
    }
    EXPECT_NEAR(percent, 100.0, 1e-6);
  }
}

TEST_F(InspectKws, InspectTable) {
  const CommandResult c = RunCommand(boardlab::testing::RunBinary() + " --inspect " +
                                     mixed_->etdp_path + " --debug-map " + mixed_->map_path);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("profile from ETDump (average of 3 Execute runs):"), std::string::npos)
      << c.output;
  EXPECT_NE(c.output.find("clock: simulated RT700 cycles (host simulator timing model, CPU at "
                          "325 MHz)"),
            std::string::npos)
      << c.output;
  EXPECT_NE(c.output.find("ran on"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("DEPTHWISE_CONV_2D #1"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("NPU kernel 0 (id "), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("total (Method::execute)"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find(" cpu "), std::string::npos) << c.output;
  EXPECT_NE(c.output.find(" npu "), std::string::npos) << c.output;
}

// The sim board's ETDump says what it is: simulated RT700 cycles at the target's CPU clock, NPU
// kernels on the NPU timing model, CPU kernels on the CPU.
TEST_F(InspectKws, EtdumpRecordsSimulatedCyclesAndTheNpu) {
  for (const KwsRun* r : Both()) {
    const testing::AlignedBytes bytes(r->etdp);
    Result<etdump::EtdumpReader> reader = etdump::EtdumpReader::Open(bytes.span());
    ASSERT_TRUE(reader.ok());
    const etdump::ClockRecord clock = etdump::ReadClockRecord(reader->root());
    EXPECT_EQ(clock.kind, etdump::ClockKind::kSimCycles);
    EXPECT_EQ(clock.ticks_per_second, kSimTicksPerSecond);
    EXPECT_EQ(clock.core_hz, kSimTicksPerSecond);
    EXPECT_EQ(clock.delegate_kind, etdump::ClockKind::kUnknown);  // the same clock
    EXPECT_FALSE(clock.legacy);
    std::vector<etdump::ProfileRow> rows(reader->NumProfileEvents());
    rows.resize(reader->ReadRows({rows.data(), rows.size()}));
    int kernels = 0;
    for (const etdump::ProfileRow& row : rows) {
      if (row.delegate_debug_id != -1) {
        EXPECT_EQ(row.ran_on, ExecutionUnit::kNpu) << row.delegate_debug_id;
        ++kernels;
      } else if (row.name != nullptr && std::string(row.name).rfind("native_call_", 0) == 0) {
        EXPECT_EQ(row.ran_on, ExecutionUnit::kCpu);
      }
    }
    EXPECT_GT(kernels, 0);
  }
}

// A live run named through the debug map shows the same source ops as --inspect.
TEST_F(InspectKws, LiveRunNamesOpsThroughTheDebugMap) {
  const CommandResult c = RunCommand(boardlab::testing::RunBinary() + " " + mixed_->pte_path +
                                         " --debug-map " + mixed_->map_path + " --profile json",
                                     /*with_stderr=*/false);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const json j = json::parse(c.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << c.output;
  const CommandResult i =
      RunCommand(boardlab::testing::RunBinary() + " --inspect " + mixed_->etdp_path +
                     " --debug-map " + mixed_->map_path + " --profile json",
                 /*with_stderr=*/false);
  ASSERT_EQ(i.exit_code, 0) << i.output;
  const json inspected = json::parse(i.output, nullptr, false);
  const json& ops = j["profile"]["ops"];
  ASSERT_EQ(ops.size(), inspected["profile"]["ops"].size());
  for (size_t k = 0; k < ops.size(); ++k) {
    const json& a = ops[k];
    const json& b = inspected["profile"]["ops"][k];
    EXPECT_EQ(a["op"], b["op"]);
    EXPECT_EQ(a["source_ops"], b["source_ops"]);
    ASSERT_EQ(a["npu_kernels"].size(), b["npu_kernels"].size());
    for (size_t n = 0; n < a["npu_kernels"].size(); ++n) {
      EXPECT_EQ(a["npu_kernels"][n]["op"], b["npu_kernels"][n]["op"]);
      EXPECT_EQ(a["npu_kernels"][n]["layer"], b["npu_kernels"][n]["layer"]);
    }
  }
  EXPECT_EQ(ops[1]["op"], "DEPTHWISE_CONV_2D #1");
}

// ---- Small models and synthetic ETDumps (no shared folder needed) ---------------------------

class InspectCli : public testing::BoardlabRunTest {
 protected:
  InspectCli() : BoardlabRunTest("boardlab_inspect") {}

  std::string Write(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = Path(name);
    EXPECT_TRUE(boardlab::testing::WriteFile(path, bytes));
    return path;
  }
  std::string Write(const std::string& name, const std::string& text) {
    return Write(name, std::vector<uint8_t>(text.begin(), text.end()));
  }
};

TEST_F(InspectCli, TinyDsCnnMatchesTheLiveRun) {
  compiler::CompileOptions options;
  options.no_npu = {compiler::OpType::kDepthwiseConv2D};
  absl::StatusOr<compiler::CompileResult> compiled =
      compiler::Compile(boardlab::testing::TinyDsCnn(), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string pte = Write("tiny.pte", compiled->pte);
  const std::string map = Write("tiny.json", compiled->debug_map_json);
  const std::string etdp = (dir_ / "tiny.etdp").string();
  const CommandResult live = Run(pte + " --iterations 2 --profile json --etdump " + etdp, false);
  ASSERT_EQ(live.exit_code, 0) << live.output;
  const CommandResult inspect =
      Run("--inspect " + etdp + " --debug-map " + map + " --profile json");
  ASSERT_EQ(inspect.exit_code, 0) << inspect.output;
  const json a = json::parse(live.output, nullptr, false);
  const json b = json::parse(inspect.output, nullptr, false);
  ASSERT_FALSE(a.is_discarded()) << live.output;
  ASSERT_FALSE(b.is_discarded()) << inspect.output;
  EXPECT_EQ(b["profile"]["iterations"], 2);
  EXPECT_EQ(b["profile"]["total_cycles"], a["profile"]["total_cycles"]);
  ASSERT_EQ(b["profile"]["ops"].size(), a["profile"]["ops"].size());
  bool cpu = false, npu = false;
  for (size_t i = 0; i < a["profile"]["ops"].size(); ++i) {
    EXPECT_EQ(b["profile"]["ops"][i]["cycles"], a["profile"]["ops"][i]["cycles"]) << i;
    cpu = cpu || b["profile"]["ops"][i]["unit"] == "CPU";
    npu = npu || b["profile"]["ops"][i]["unit"] == "NPU";
  }
  EXPECT_TRUE(cpu);
  EXPECT_TRUE(npu);

  // Without the debug map the rows still come out, named from the events.
  const CommandResult bare = Run("--inspect " + etdp);
  ASSERT_EQ(bare.exit_code, 0) << bare.output;
  EXPECT_NE(bare.output.find("depthwise_conv_2d"), std::string::npos) << bare.output;
  EXPECT_NE(bare.output.find("NPU kernel id "), std::string::npos) << bare.output;
  EXPECT_NE(bare.output.find("no debug map"), std::string::npos) << bare.output;
}

TEST_F(InspectCli, WallClockRecordsItsTickRates) {
  const std::string pte = Write("conv.pte", testing::CompilePte(boardlab::testing::SingleConv2D(),
                                                                compiler::CompileOptions{}));
  const std::string etdp = (dir_ / "wall.etdp").string();
  ASSERT_EQ(Run(pte + " --clock wall --etdump " + etdp).exit_code, 0);
  const CommandResult c = Run("--inspect " + etdp + " --profile json", false);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const json j = json::parse(c.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << c.output;
  const json& p = j["profile"];
  EXPECT_EQ(p["clock"], "host-wall");
  EXPECT_EQ(p["ticks_per_second"], 1e9);  // POSIX ticks are ns
  EXPECT_EQ(p["delegate_clock"], "rt700-sim-npu-cycles");
  EXPECT_EQ(p["delegate_ticks_per_second"], static_cast<double>(kSimTicksPerSecond));
  EXPECT_NE(p["clock_label"].get<std::string>().find("NPU kernels: simulated NPU cycles"),
            std::string::npos)
      << p["clock_label"];
  EXPECT_TRUE(p["total_cycles"].is_null());
  ASSERT_EQ(p["ops"].size(), 1u);
  EXPECT_TRUE(p["ops"][0]["cycles"].is_null());
  EXPECT_FALSE(p["ops"][0]["npu_kernels"][0]["cycles"].is_null());
  EXPECT_EQ(p["ops"][0]["npu_kernels"][0]["ran_on"], "npu");
}

// A hand-written ETDump of two kernel calls, stamped with `clock` (none: nullptr), its NPU kernels
// marked as run on `unit`; and the debug map naming them.
std::vector<uint8_t> SyntheticEtdump(const etdump::ClockRecord* clock, ExecutionUnit unit) {
  std::vector<uint8_t> buffer(64 * 1024);
  etdump::EtdumpWriter w(buffer.data(), buffer.size());
  w.BeginRun("Default");
  w.LogProfileEvent("Program::load_method", -1, -1, 0, 10);
  if (clock != nullptr) etdump::WriteClockRecord(w, *clock);
  w.BeginRun("Execute");
  const uint8_t metadata[2] = {0, static_cast<uint8_t>(unit)};
  const uint32_t metadata_size = unit == ExecutionUnit::kUnknown ? 1 : 2;
  w.LogDelegateEvent(10, 0, 0, 100, 400, metadata, metadata_size);
  w.LogDelegateEvent(11, 0, 0, 400, 500, metadata, metadata_size);
  w.LogProfileEvent("DELEGATE_CALL", 0, 0, 100, 600);
  w.LogProfileEvent("native_call_softmax.out", 0, 1, 610, 1000);
  w.LogProfileEvent("OPERATOR_CALL", 0, 1, 600, 1100);
  w.LogProfileEvent("Method::execute", -1, -1, 100, 1100);
  Result<Span<const uint8_t>> bytes = w.Finish();
  EXPECT_TRUE(bytes.ok());
  return std::vector<uint8_t>(bytes->data(), bytes->data() + bytes->size());
}

constexpr char kSyntheticMap[] = R"({
    "delegates": [{"instruction": 0, "partition": 0, "backend": "BoardlabNeutronBackend",
                   "kernels": [{"id": 10, "kernel": 0, "ops": [0, 1], "names": ["conv_out"]},
                               {"id": 11, "kernel": 1, "ops": [2], "names": ["pool_out"]}]}],
    "cpu_ops": [{"instruction": 1, "op": 3, "ops": [3], "name": "SOFTMAX #3"}]})";

// Without a clock record (an ETDump of another producer, or of the firmware before clocks were
// recorded) the clock is unknown: raw ticks, no cycles, no time; named through the debug map.
TEST_F(InspectCli, SyntheticEtdumpWithoutAClockIsLabelledClockUnknown) {
  const std::string etdp =
      Write("synthetic.etdp", SyntheticEtdump(nullptr, ExecutionUnit::kUnknown));
  const std::string map = Write("map.json", std::string(kSyntheticMap));

  CommandResult c = Run("--inspect " + etdp + " --debug-map " + map + " --profile json", false);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  json j = json::parse(c.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << c.output;
  const json& p = j["profile"];
  EXPECT_EQ(p["clock"], "unknown");
  EXPECT_EQ(p["count_unit"], "ticks");
  EXPECT_NE(p["clock_label"].get<std::string>().find("clock unknown"), std::string::npos);
  EXPECT_TRUE(p["ticks_per_second"].is_null());
  const json& ops = p["ops"];
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0]["op"], "delegate 0 (BoardlabNeutronBackend)");
  EXPECT_EQ(ops[0]["ticks"], 500);
  EXPECT_TRUE(ops[0]["cycles"].is_null());
  EXPECT_TRUE(ops[0]["us"].is_null());
  EXPECT_EQ(ops[0]["ran_on"], "unknown");  // no unit byte in its kernels' metadata
  EXPECT_EQ(ops[0]["source_ops"], json::array({0, 1, 2}));
  ASSERT_EQ(ops[0]["npu_kernels"].size(), 2u);
  EXPECT_EQ(ops[0]["npu_kernels"][0]["op"], "NPU kernel 0 (id 10) ops 0,1");
  EXPECT_EQ(ops[0]["npu_kernels"][0]["ticks"], 300);
  EXPECT_EQ(ops[0]["npu_kernels"][0]["ran_on"], "unknown");
  EXPECT_EQ(ops[0]["npu_kernels"][0]["layer"], "conv_out");
  EXPECT_EQ(ops[0]["npu_kernels"][1]["op"], "NPU kernel 1 (id 11) ops 2");
  EXPECT_EQ(ops[1]["op"], "SOFTMAX #3");
  EXPECT_EQ(ops[1]["unit"], "CPU");
  EXPECT_EQ(ops[1]["ran_on"], "cpu");
  EXPECT_EQ(ops[1]["ticks"], 500);
  EXPECT_DOUBLE_EQ(ops[1]["percent"].get<double>(), 50.0);  // shares of the ticks
  EXPECT_EQ(p["total_ticks"], 1000);
  EXPECT_TRUE(p["total_us"].is_null());

  c = Run("--inspect " + etdp);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("clock: clock unknown (the ETDump does not record it)"),
            std::string::npos)
      << c.output;
  EXPECT_NE(c.output.find("ticks"), std::string::npos) << c.output;
  EXPECT_EQ(c.output.find("cycles"), std::string::npos) << c.output;
  EXPECT_NE(c.output.find("softmax"), std::string::npos) << c.output;

  // An explicit --target supplies a rate to assume, and the label says so.
  const std::string target = boardlab::testing::RepoDir() + "/compiler/targets/imxrt700.json";
  c = Run("--inspect " + etdp + " --target " + target + " --profile json", false);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  j = json::parse(c.output, nullptr, false);
  EXPECT_NE(j["profile"]["clock_label"].get<std::string>().find("us assume 325 MHz (--target)"),
            std::string::npos)
      << j["profile"]["clock_label"];
  EXPECT_NEAR(j["profile"]["total_us"].get<double>(), 1000 / 325.0, 1e-9);
  EXPECT_TRUE(j["profile"]["total_cycles"].is_null());
}

// The firmware's ETDump under QEMU: instruction counts, and NPU kernels that the software engine
// ran on the Cortex-M33. No view may show them as NPU cycles or as simulated time.
TEST_F(InspectCli, QemuEtdumpShowsInstructionsAndEmulatedNpuKernels) {
  etdump::ClockRecord clock;
  clock.kind = etdump::ClockKind::kQemuIcount;
  clock.ticks_per_second = 20000000;  // CMSDK timer 0: 50 ns of virtual time per tick
  clock.icount_shift = 0;
  const std::string etdp =
      Write("qemu.etdp", SyntheticEtdump(&clock, ExecutionUnit::kNpuEmulatedCortexM33));
  const std::string map = Write("map.json", std::string(kSyntheticMap));

  const CommandResult c = Run("--inspect " + etdp + " --debug-map " + map, false);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(c.output.find("clock: QEMU instructions (icount shift 0), not Cortex-M33 cycles"),
            std::string::npos)
      << c.output;
  EXPECT_NE(c.output.find("instructions"), std::string::npos) << c.output;
  EXPECT_EQ(c.output.find("cycles  "), std::string::npos) << c.output;  // no cycles column
  EXPECT_EQ(c.output.find("sim"), std::string::npos) << c.output;
  EXPECT_EQ(c.output.find(" npu "), std::string::npos) << c.output;
  const size_t kernel = c.output.find("NPU kernel 0 (id 10) ops 0,1");
  ASSERT_NE(kernel, std::string::npos) << c.output;
  const std::string line = c.output.substr(kernel, c.output.find('\n', kernel) - kernel);
  EXPECT_NE(line.find(" npu-emulated-cortex-m33 "), std::string::npos) << line;

  const CommandResult js = Run("--inspect " + etdp + " --profile json", false);
  ASSERT_EQ(js.exit_code, 0) << js.output;
  const json j = json::parse(js.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << js.output;
  const json& p = j["profile"];
  EXPECT_EQ(p["clock"], "qemu-icount");
  EXPECT_EQ(p["icount_shift"], 0);
  EXPECT_EQ(p["count_unit"], "instructions");
  EXPECT_TRUE(p["total_cycles"].is_null());
  EXPECT_TRUE(p["total_us"].is_null());           // virtual time is no Cortex-M33 time
  EXPECT_EQ(p["total_instructions"], 1000 * 50);  // 50 instructions per tick at shift 0
  const json& delegate = p["ops"][0];
  EXPECT_EQ(delegate["ran_on"], "npu-emulated-cortex-m33");
  for (const json& kernel : delegate["npu_kernels"]) {
    EXPECT_EQ(kernel["ran_on"], "npu-emulated-cortex-m33");
    EXPECT_TRUE(kernel["cycles"].is_null()) << kernel;
    EXPECT_TRUE(kernel["us"].is_null()) << kernel;
  }
  EXPECT_EQ(delegate["npu_kernels"][0]["instructions"], 300 * 50);
  EXPECT_EQ(p["ops"][1]["ran_on"], "cpu");
}

// A real board's DWT cycle counter with its core clock: cycles and time.
TEST_F(InspectCli, DwtEtdumpShowsCyclesAtTheCoreClock) {
  etdump::ClockRecord clock;
  clock.kind = etdump::ClockKind::kDwtCycles;
  clock.ticks_per_second = 324000000;
  clock.core_hz = 324000000;
  const std::string etdp =
      Write("dwt.etdp", SyntheticEtdump(&clock, ExecutionUnit::kNpuEmulatedCortexM33));
  const CommandResult c = Run("--inspect " + etdp + " --profile json", false);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const json j = json::parse(c.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << c.output;
  EXPECT_EQ(j["profile"]["clock"], "dwt-cycles");
  EXPECT_EQ(j["profile"]["clock_label"], "DWT cycles of the Cortex-M33 at 324 MHz");
  EXPECT_EQ(j["profile"]["total_cycles"], 1000);
  EXPECT_NEAR(j["profile"]["total_us"].get<double>(), 1000 / 324.0, 1e-9);
  EXPECT_EQ(j["profile"]["ops"][0]["npu_kernels"][0]["ran_on"], "npu-emulated-cortex-m33");
}

TEST_F(InspectCli, Errors) {
  EXPECT_EQ(Run("--inspect " + (dir_ / "absent.etdp").string()).exit_code, 2);
  const std::string garbage = Write("garbage.etdp", std::vector<uint8_t>(64, 0x41));
  const CommandResult bad = Run("--inspect " + garbage);
  EXPECT_EQ(bad.exit_code, 3) << bad.output;
  EXPECT_NE(bad.output.find("not an ETDump"), std::string::npos) << bad.output;

  std::vector<uint8_t> buffer(64 * 1024);
  etdump::EtdumpWriter w(buffer.data(), buffer.size());
  w.BeginRun("Execute");
  Result<Span<const uint8_t>> bytes = w.Finish();
  ASSERT_TRUE(bytes.ok());
  const std::string etdp =
      Write("empty.etdp", std::vector<uint8_t>(bytes->data(), bytes->data() + bytes->size()));
  const std::string not_json = Write("map.json", std::string("{not json"));
  const CommandResult bad_map = Run("--inspect " + etdp + " --debug-map " + not_json);
  EXPECT_EQ(bad_map.exit_code, 3) << bad_map.output;
  EXPECT_NE(bad_map.output.find("debug map"), std::string::npos) << bad_map.output;
  EXPECT_EQ(Run("--inspect " + etdp + " --debug-map " + (dir_ / "absent.json").string()).exit_code,
            2);
  EXPECT_EQ(Run("x.pte --inspect " + etdp).exit_code, 2);  // artifact and --inspect
  // A run's debug map is checked before the run: a bad one is a usage error.
  const CommandResult run_bad_map = Run(garbage + " --debug-map " + not_json);
  EXPECT_EQ(run_bad_map.exit_code, 2) << run_bad_map.output;
  EXPECT_NE(run_bad_map.output.find("the debug map is not a JSON object"), std::string::npos)
      << run_bad_map.output;
  EXPECT_EQ(Run("--serve --debug-map " + not_json).exit_code, 2);
  EXPECT_EQ(Run("--inspect " + etdp).exit_code, 0);  // an empty profile is fine
}

}  // namespace
}  // namespace boardlab::runtime
