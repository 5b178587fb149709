// boardlab-firmware on QEMU mps2-an505 (Cortex-M33): the cross-built runtime gives the same
// outputs as the host (boardlab-run, and the TFLM golden outputs in ../shared/golden), writes an
// ETDump with one event per kernel, refuses a model too big for the board with a clear message,
// and counts instructions deterministically under -icount.
//
// Each case runs firmware/run-qemu.sh through popen. Only the timing test uses -icount (slower);
// the others run QEMU without it.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "nlohmann/json.hpp"
#include "runtime/profiling/etdump/clock_record.h"
#include "runtime/profiling/etdump/etdump_reader.h"
#include "tests/firmware/firmware_available.h"
#include "tests/support/process.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

namespace boardlab::firmware {
namespace {

namespace fs = std::filesystem;
namespace rt = boardlab::runtime;

using RunResult = boardlab::testing::CommandResult;
using boardlab::testing::RunCommand;

// Runs the firmware with `args`; icount_shift < 0 runs QEMU without -icount.
RunResult RunFirmware(const std::string& args, int icount_shift = -1) {
  const std::string icount = icount_shift < 0 ? "off" : std::to_string(icount_shift);
  return RunCommand(std::string(BOARDLAB_FIRMWARE_RUNNER) + " --elf " + BOARDLAB_FIRMWARE_ELF +
                    " --icount " + icount + " --timeout 120 -- " + args);
}

// A fresh scratch folder per test.
class FirmwareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why =
        firmware::WhyFirmwareCannotRun(BOARDLAB_FIRMWARE_ELF, firmware::NeedsRun::kNo);
    if (!why.empty()) GTEST_SKIP() << why;
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    dir_ = fs::path(::testing::TempDir()) / ("fw_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  // Compiles `model` and writes the artifact; returns its path (empty on failure, with a
  // test failure recorded).
  std::string CompileTo(const std::vector<uint8_t>& model, const std::string& name,
                        const compiler::CompileOptions& options, std::string* debug_map = nullptr) {
    absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(model, options);
    EXPECT_TRUE(compiled.ok()) << compiled.status();
    if (!compiled.ok()) return "";
    const std::string pte = (dir_ / (name + ".pte")).string();
    EXPECT_TRUE(testing::WriteFile(pte, compiled->pte));
    if (debug_map != nullptr) *debug_map = compiled->debug_map_json;
    return pte;
  }

  fs::path dir_;
};

// The ETDump the firmware wrote decodes, and its "Execute" run has exactly one event per kernel:
// one native_call_* event per CPU op of the debug map, one delegate event per NPU kernel id. It
// records its clock (`icount_shift` < 0: QEMU run without -icount) and says the CPU ops ran on the
// CPU and the NPU kernels on the Cortex-M33, emulated.
void ExpectOneEventPerKernel(const std::string& etdp_path, const std::string& debug_map,
                             int icount_shift = -1) {
  const std::vector<uint8_t> etdp = testing::ReadFile(etdp_path);
  ASSERT_FALSE(etdp.empty()) << etdp_path;
  rt::Result<rt::etdump::EtdumpReader> reader =
      rt::etdump::EtdumpReader::Open({etdp.data(), etdp.size()});
  ASSERT_TRUE(reader.ok()) << rt::ToString(reader.error());
  const rt::etdump::ClockRecord clock = rt::etdump::ReadClockRecord(reader->root());
  EXPECT_EQ(clock.kind, icount_shift < 0 ? rt::etdump::ClockKind::kQemuVirtualTime
                                         : rt::etdump::ClockKind::kQemuIcount);
  EXPECT_EQ(clock.ticks_per_second, 20000000u);  // CMSDK timer 0, 50 ns per tick
  EXPECT_EQ(clock.icount_shift, icount_shift);
  EXPECT_EQ(clock.core_hz, 0u);  // an emulated core has no clock frequency
  EXPECT_EQ(clock.delegate_kind, rt::etdump::ClockKind::kUnknown);  // NPU kernels: the same clock
  std::vector<rt::etdump::ProfileRow> rows(reader->NumProfileEvents());
  rows.resize(reader->ReadRows({rows.data(), rows.size()}));
  ASSERT_FALSE(rows.empty());

  const nlohmann::json map = nlohmann::json::parse(debug_map);
  std::set<int32_t> cpu_instructions;
  for (const auto& op : map["cpu_ops"]) cpu_instructions.insert(op["instruction"].get<int32_t>());
  std::multiset<int32_t> kernel_ids;
  for (const auto& d : map["delegates"]) {
    for (const auto& k : d["kernels"]) kernel_ids.insert(k["id"].get<int32_t>());
  }

  std::multiset<int32_t> native_calls;
  std::multiset<int32_t> delegate_ids;
  bool nonzero_time = false;
  for (const rt::etdump::ProfileRow& row : rows) {
    if (row.run_name == nullptr || std::string(row.run_name) != "Execute") continue;
    EXPECT_LE(row.start, row.end);
    nonzero_time = nonzero_time || row.duration() > 0;
    if (row.delegate_debug_name != nullptr) {
      // A weight prefetch (weights in flash): the core copied it, no DMA.
      EXPECT_EQ(row.ran_on, rt::ExecutionUnit::kDmaEmulatedCortexM33) << row.delegate_debug_name;
    } else if (row.name == nullptr) {
      delegate_ids.insert(row.delegate_debug_id);
      EXPECT_EQ(row.ran_on, rt::ExecutionUnit::kNpuEmulatedCortexM33) << row.delegate_debug_id;
    } else if (std::string(row.name).rfind("native_call_", 0) == 0) {
      native_calls.insert(row.instruction);
      EXPECT_EQ(row.ran_on, rt::ExecutionUnit::kCpu) << row.name;
    }
  }
  EXPECT_EQ(native_calls, std::multiset<int32_t>(cpu_instructions.begin(), cpu_instructions.end()));
  EXPECT_EQ(delegate_ids, kernel_ids);
  EXPECT_TRUE(nonzero_time) << "every event has zero duration: is timer 0 running?";
}

// --- Tiny models compiled in-process: byte-identical to boardlab-run on the host. ---

struct TinyCase {
  const char* name;
  std::vector<uint8_t> (*model)();
};

class FirmwareTinyModel : public FirmwareTest,
                          public ::testing::WithParamInterface<std::tuple<TinyCase, bool>> {};

TEST_P(FirmwareTinyModel, OutputsEqualHostRun) {
  const auto& [tiny, cpu_only] = GetParam();
  const std::string run = testing::RunBinary();
  if (run.empty()) GTEST_SKIP() << "boardlab-run is not built";
  compiler::CompileOptions options;
  options.cpu_only = cpu_only;
  std::string debug_map;
  const std::string pte = CompileTo(tiny.model(), tiny.name, options, &debug_map);
  ASSERT_FALSE(pte.empty());

  const std::string host_out = (dir_ / "host").string();
  const std::string fw_out = (dir_ / "fw").string();
  const std::string etdp = (dir_ / "fw.etdp").string();
  const RunResult host = RunCommand(run + " " + pte + " --input random:11 --outputs " + host_out);
  ASSERT_EQ(host.exit_code, 0) << host.output;
  const RunResult fw =
      RunFirmware(pte + " --input random:11 --outputs " + fw_out + " --etdump " + etdp);
  ASSERT_EQ(fw.exit_code, 0) << fw.output;
  EXPECT_NE(fw.output.find("result: UNVERIFIED"), std::string::npos) << fw.output;

  size_t outputs = 0;
  for (const auto& entry : fs::directory_iterator(host_out)) {
    const std::string file = entry.path().filename().string();
    const std::vector<uint8_t> expected = testing::ReadFile(entry.path().string());
    const std::vector<uint8_t> actual = testing::ReadFile(fw_out + "/" + file);
    EXPECT_FALSE(actual.empty()) << file << "\n" << fw.output;
    EXPECT_EQ(actual, expected) << file;
    ++outputs;
  }
  EXPECT_GT(outputs, 0u);
  ExpectOneEventPerKernel(etdp, debug_map);
}

std::vector<uint8_t> DefaultConv() { return testing::SingleConv2D(); }
std::vector<uint8_t> DefaultDepthwise() { return testing::SingleDepthwise(); }
std::vector<uint8_t> DefaultFullyConnected() { return testing::SingleFullyConnected(); }
std::vector<uint8_t> DefaultSoftmax() { return testing::SingleSoftmax(); }

INSTANTIATE_TEST_SUITE_P(
    Models, FirmwareTinyModel,
    ::testing::Combine(::testing::Values(TinyCase{"conv", DefaultConv},
                                         TinyCase{"depthwise", DefaultDepthwise},
                                         TinyCase{"fully_connected", DefaultFullyConnected},
                                         TinyCase{"softmax", DefaultSoftmax},
                                         TinyCase{"conv_then_relu", testing::ConvThenRelu},
                                         TinyCase{"nchw_transpose", testing::NchwTransposeModel},
                                         TinyCase{"tiny_ds_cnn", testing::TinyDsCnn}),
                       ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param).name) +
             (std::get<1>(info.param) ? "_cpu" : "_npu");
    });

// --- The shared real models: byte-identical to the TFLM golden outputs. ---

std::string Stem(std::string_view model) {
  const std::string file(model.substr(model.find('/') + 1));
  return file.substr(0, file.find('.'));
}

class FirmwareRealModel : public FirmwareTest,
                          public ::testing::WithParamInterface<std::string_view> {};

TEST_P(FirmwareRealModel, OutputsEqualGoldenAndEtdumpHasEveryKernel) {
  const std::optional<std::string> model = testing::SharedModelPath(GetParam());
  if (!model) GTEST_SKIP() << "shared models folder absent: " << testing::SharedModelsDir();
  const std::string golden =
      testing::SharedModelsDir() + "/../golden/" + Stem(GetParam()) + "/seed1";
  if (!fs::exists(golden + ".input.bin")) GTEST_SKIP() << "no golden case " << golden;

  std::string debug_map;
  const std::string pte = CompileTo(testing::ReadFile(*model), Stem(GetParam()),
                                    compiler::CompileOptions{}, &debug_map);
  ASSERT_FALSE(pte.empty());
  const std::string out = (dir_ / "out").string();
  const std::string etdp = (dir_ / "model.etdp").string();
  const RunResult fw = RunFirmware(pte + " --input " + golden + ".input.bin --expected " + golden +
                                   ".output.bin --atol 0 --outputs " + out + " --etdump " + etdp);
  ASSERT_EQ(fw.exit_code, 0) << fw.output;
  EXPECT_NE(fw.output.find("result: PASS"), std::string::npos) << fw.output;
  EXPECT_NE(fw.output.find("max abs diff 0,"), std::string::npos) << fw.output;
  EXPECT_EQ(testing::ReadFile(out + "/output0.bin"), testing::ReadFile(golden + ".output.bin"));
  ExpectOneEventPerKernel(etdp, debug_map);
}

INSTANTIATE_TEST_SUITE_P(Shared, FirmwareRealModel, ::testing::ValuesIn(testing::kRealModels),
                         [](const auto& info) { return Stem(info.param); });

// --- Refusals and timing. ---

TEST_F(FirmwareTest, ModelTooBigForTheBoardIsRefusedWithItsSize) {
  // A 1024x1024x16 -> x16 convolution: 16 MB input + 16 MB output activations, more than the
  // 3.5 MB RAM pool and 16 MB PSRAM together. The compiler's SRAM budget is lifted so that the
  // artifact exists; the firmware's loader must refuse it before running anything.
  compiler::CompileOptions options;
  options.cpu_only = true;
  options.sram_budget = int64_t{1} << 30;
  const std::string pte = CompileTo(
      testing::SingleConv2D({.in_h = 1024, .in_w = 1024, .in_c = 16, .out_c = 16}), "big", options);
  ASSERT_FALSE(pte.empty());
  const RunResult fw = RunFirmware(pte);
  EXPECT_EQ(fw.exit_code, 4) << fw.output;
  EXPECT_NE(fw.output.find("does not fit: needs "), std::string::npos) << fw.output;
  EXPECT_NE(fw.output.find("bytes, board has "), std::string::npos) << fw.output;
  EXPECT_EQ(fw.output.find("fault"), std::string::npos) << fw.output;
}

TEST_F(FirmwareTest, GarbageArtifactIsInvalid) {
  const std::string pte = (dir_ / "garbage.pte").string();
  ASSERT_TRUE(testing::WriteFile(pte, std::vector<uint8_t>(4096, 0x5a)));
  const RunResult fw = RunFirmware(pte);
  EXPECT_EQ(fw.exit_code, 3) << fw.output;
  EXPECT_NE(fw.output.find("invalid artifact"), std::string::npos) << fw.output;
}

TEST_F(FirmwareTest, MismatchIsExitOne) {
  const std::string pte = CompileTo(testing::SingleSoftmax(), "softmax", {});
  ASSERT_FALSE(pte.empty());
  const std::string wrong = (dir_ / "wrong.bin").string();
  ASSERT_TRUE(testing::WriteFile(wrong, std::vector<uint8_t>(10, 0x7f)));
  const RunResult fw = RunFirmware(pte + " --input random:1 --expected " + wrong);
  EXPECT_EQ(fw.exit_code, 1) << fw.output;
  EXPECT_NE(fw.output.find("result: FAIL"), std::string::npos) << fw.output;
}

// Under -icount the timer counts guest instructions: two runs give the same count, and the
// ETDump says it counts QEMU instructions at that shift.
TEST_F(FirmwareTest, IcountInstructionCountsAreDeterministic) {
  std::string debug_map;
  const std::string pte = CompileTo(testing::TinyDsCnn(), "tiny_ds_cnn", {}, &debug_map);
  ASSERT_FALSE(pte.empty());
  std::string counts[2];
  for (std::string& count : counts) {
    const std::string etdp = (dir_ / "icount.etdp").string();
    const RunResult fw =
        RunFirmware(pte + " --input random:5 --etdump " + etdp, /*icount_shift=*/0);
    ASSERT_EQ(fw.exit_code, 0) << fw.output;
    ExpectOneEventPerKernel(etdp, debug_map, /*icount_shift=*/0);
    const size_t at = fw.output.find("instructions ");
    ASSERT_NE(at, std::string::npos) << fw.output;
    count = fw.output.substr(at + 13, fw.output.find(' ', at + 13) - at - 13);
  }
  EXPECT_EQ(counts[0], counts[1]);
  EXPECT_GT(std::stoull(counts[0]), 1000u);
}

}  // namespace
}  // namespace boardlab::firmware
