// boardlab-run --board serial against the an505 board-link firmware behind firmware/qemu-board.sh
// (QEMU mps2-an505, UART0 on a TCP port, as ser2net serves a real board): every shared model that
// fits gives the outputs of --board sim and an ETDump with one event per kernel; an unchanged
// artifact is not sent again; a line that corrupts, drops and duplicates bytes still gives the
// right answer, with the retransmissions counted; a board that is killed, hangs, faults or is
// reset is a board error (exit 4) in seconds, and the board recovers for the next run.
//
// Every process is real: qemu-board.sh and QEMU, boardlab-run, byte_fault_proxy.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compiler/driver.h"
#include "nlohmann/json.hpp"
#include "tests/firmware/core_timeline.h"
#include "tests/firmware/etdump_events.h"
#include "tests/firmware/firmware_available.h"
#include "tests/support/child_process.h"
#include "tests/support/free_port.h"
#include "tests/support/op_cases.h"
#include "tests/support/process.h"
#include "tests/support/qemu_board.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

namespace boardlab::firmware {
namespace {

namespace fs = std::filesystem;
using boardlab::testing::CommandResult;
using boardlab::testing::Process;
using boardlab::testing::RunCommand;
using nlohmann::json;

std::string ReadText(const fs::path& path) {
  const std::vector<uint8_t> bytes = testing::ReadFile(path.string());
  return std::string(bytes.begin(), bytes.end());
}

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// One board: qemu-board.sh on free ports, in `dir`, running the an505 board-link firmware.
class QemuBoard : public testing::QemuBoard {
 public:
  explicit QemuBoard(const fs::path& dir)
      : testing::QemuBoard(dir, BOARDLAB_QEMU_BOARD, BOARDLAB_FIRMWARE_AN505_ELF) {}
};

bool QemuAvailable(std::string* why) {
  *why = firmware::WhyFirmwareCannotRun(BOARDLAB_FIRMWARE_AN505_ELF, firmware::NeedsRun::kYes);
  return why->empty();
}

fs::path TestDir(const std::string& name) {
  const fs::path dir =
      fs::path(::testing::TempDir()) / ("serial_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Compile(const std::vector<uint8_t>& model, const fs::path& pte,
                    std::string* debug_map = nullptr, compiler::CompileOptions options = {}) {
  absl::StatusOr<compiler::CompileResult> compiled = compiler::Compile(model, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return "";
  EXPECT_TRUE(testing::WriteFile(pte.string(), compiled->pte));
  if (debug_map != nullptr) *debug_map = compiled->debug_map_json;
  return pte.string();
}

CommandResult BoardlabRun(const std::string& args) {
  return RunCommand(testing::RunBinary() + " " + args);
}

json ReadJson(const fs::path& path) {
  const std::string text = ReadText(path);
  return text.empty() ? json() : json::parse(text);
}

// Every output file of the sim board (at least one) has the same bytes in `serial`.
void ExpectSameOutputs(const fs::path& sim, const fs::path& serial) {
  size_t outputs = 0;
  for (const auto& entry : fs::directory_iterator(sim)) {
    const std::string file = entry.path().filename().string();
    EXPECT_EQ(testing::ReadFile((serial / file).string()), testing::ReadFile(entry.path().string()))
        << file;
    ++outputs;
  }
  EXPECT_GT(outputs, 0u);
}

// ---- The shared models on one board. ----

std::string Stem(std::string_view model) {
  const std::string file(model.substr(model.find('/') + 1));
  return file.substr(0, file.find('.'));
}

class SerialBoardModels : public ::testing::TestWithParam<std::string_view> {
 protected:
  static void SetUpTestSuite() {
    std::string why;
    if (!QemuAvailable(&why)) return;
    dir_ = new fs::path(TestDir("models"));
    board_ = new QemuBoard(*dir_);
    if (!board_->Start()) {
      delete board_;
      board_ = nullptr;
    }
  }
  static void TearDownTestSuite() {
    delete board_;
    board_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  static QemuBoard* board_;
  static fs::path* dir_;
};
QemuBoard* SerialBoardModels::board_ = nullptr;
fs::path* SerialBoardModels::dir_ = nullptr;

// mobilenet_v2 (3.7 MB) does not fit the an505 board's 3 MB artifact cache (and would take
// about five minutes over QEMU's emulated UART, ~12 kB/s): it runs from the model slot
// (SerialBoardModelSlot below).
bool LargerThanTheCache(std::string_view model) {
  return model.find("mobilenet") != std::string_view::npos;
}

TEST_P(SerialBoardModels, OutputsEqualSimAndEtdumpHasEveryKernelAndCacheHitsTheSecondTime) {
  std::string why;
  if (!QemuAvailable(&why)) GTEST_SKIP() << why;
  ASSERT_NE(board_, nullptr) << "the board did not start";
  const std::optional<std::string> model = testing::SharedModelPath(GetParam());
  if (!model) GTEST_SKIP() << "shared models folder absent: " << testing::SharedModelsDir();
  if (LargerThanTheCache(GetParam())) {
    GTEST_SKIP() << "larger than the board's artifact cache: SerialBoardModelSlot runs it from "
                    "the model slot";
  }
  const std::string stem = Stem(GetParam());
  const fs::path dir = *dir_ / stem;
  fs::create_directories(dir);
  std::string debug_map;
  const std::string pte = Compile(testing::ReadFile(*model), dir / "model.pte", &debug_map);
  ASSERT_FALSE(pte.empty());
  const std::string golden = testing::SharedModelsDir() + "/../golden/" + stem + "/seed1";
  const bool have_golden = fs::exists(golden + ".input.bin");
  const std::string io = have_golden ? " --input " + golden + ".input.bin --expected " + golden +
                                           ".output.bin --atol 0"
                                     : " --input random:3";

  const CommandResult sim =
      BoardlabRun("--board sim " + pte + io + " --outputs " + (dir / "sim").string());
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  const fs::path etdp = dir / "serial.etdp";
  const auto start = std::chrono::steady_clock::now();
  const CommandResult serial =
      BoardlabRun("--board serial --port " + board_->port() + " " + pte + io + " --outputs " +
                  (dir / "serial").string() + " --etdump " + etdp.string() + " --json " +
                  (dir / "first.json").string());
  const double first_seconds = Seconds(start);
  ASSERT_EQ(serial.exit_code, 0) << serial.output;
  EXPECT_NE(serial.output.find(have_golden ? "result: PASS" : "result: UNVERIFIED"),
            std::string::npos)
      << serial.output;
  ExpectSameOutputs(dir / "sim", dir / "serial");
  KernelEvents events;
  ASSERT_TRUE(ReadKernelEvents(testing::ReadFile(etdp.string()), &events)) << etdp;
  const KernelEvents expected = ExpectedKernelEvents(debug_map);
  EXPECT_EQ(events.cpu_instructions, expected.cpu_instructions);
  EXPECT_EQ(events.npu_kernel_ids, expected.npu_kernel_ids);
  EXPECT_TRUE(events.ordered);
  EXPECT_TRUE(events.timed) << "every event lasted zero ticks: is the board clock running?";
  // qemu-board.sh runs QEMU with -icount shift=0: the board clock counts instructions.
  EXPECT_EQ(events.clock.kind, runtime::etdump::ClockKind::kQemuIcount);
  EXPECT_EQ(events.clock.icount_shift, 0);
  EXPECT_EQ(events.clock.ticks_per_second, 20000000u);
  const json first = ReadJson(dir / "first.json");
  EXPECT_EQ(first["board"]["board"], "an505");
  EXPECT_EQ(first["board"]["icount_shift"], 0);
  EXPECT_EQ(first["transfer"]["bytes"], fs::file_size(pte));
  const double rate = first["transfer"]["bytes_per_second"].get<double>();
  std::printf("%s: %ju bytes, %s, %.0f bytes/s, whole run %.1f s\n", stem.c_str(),
              static_cast<uintmax_t>(fs::file_size(pte)),
              first["transfer"]["cache_hit"].get<bool>() ? "cache hit" : "sent", rate,
              first_seconds);

  // The same artifact again: the board holds it.
  const CommandResult again = BoardlabRun("--board serial --port " + board_->port() + " " + pte +
                                          io + " --json " + (dir / "second.json").string());
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("the board holds it (cache hit), not sent"), std::string::npos)
      << again.output;
  const json second = ReadJson(dir / "second.json");
  EXPECT_TRUE(second["transfer"]["cache_hit"].get<bool>());
  EXPECT_EQ(second["transfer"]["bytes_sent"], 0);
  EXPECT_LT(second["link"]["bytes_sent"].get<uint64_t>(),
            4 * 1024 + 2 * fs::file_size(golden + ".input.bin"));
}

INSTANTIATE_TEST_SUITE_P(Shared, SerialBoardModels, ::testing::ValuesIn(testing::kRealModels),
                         [](const auto& info) { return Stem(info.param); });

// `qemu-board.sh --reset` or `--power-cycle` against the board's monitor.
CommandResult MonitorCommand(const QemuBoard& board, const std::string& action) {
  return RunCommand("/bin/bash " + std::string(BOARDLAB_QEMU_BOARD) + " " + action + " " +
                    board.monitor());
}

// ---- One board per test: faults and recovery. ----

// A fresh board in a directory of the test's own (removed when the test passed).
class OneBoardTest : public ::testing::Test {
 protected:
  // Starts the board; `model_slot_file` (qemu-board.sh --model) when not empty.
  void StartBoard(const fs::path& model_slot_file = {}) {
    std::string why;
    if (!QemuAvailable(&why)) GTEST_SKIP() << why;
    dir_ = TestDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    board_ = std::make_unique<QemuBoard>(dir_);
    if (!model_slot_file.empty()) board_->set_model_slot_file(dir_ / model_slot_file);
    ASSERT_TRUE(board_->Start());
  }
  void TearDown() override {
    board_.reset();
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  fs::path dir_;
  std::unique_ptr<QemuBoard> board_;
};

class SerialBoardTest : public OneBoardTest {
 protected:
  void SetUp() override {
    StartBoard();
    if (IsSkipped() || HasFatalFailure()) return;
    pte_ = Compile(testing::TinyDsCnn(), dir_ / "tiny.pte", &debug_map_);
    ASSERT_FALSE(pte_.empty());
  }
  CommandResult RunOnBoard(const std::string& args, const std::string& port = "") {
    return BoardlabRun("--board serial --port " + (port.empty() ? board_->port() : port) + " " +
                       pte_ + " " + args);
  }

  std::string pte_;
  std::string debug_map_;
};

// A model with more outputs than protocol 1 carried (8): the first layout and selection cases in
// one model (their inputs baked in), every output sent back, checked on the board against the
// sim board's bytes, and each check reported (CHECK messages, protocol 2).
TEST_F(SerialBoardTest, ManyOutputsAreSentAndCheckedOverTheUart) {
  const std::vector<testing::OpCase>& all = testing::LayoutAndSelectionCases();
  ASSERT_GE(all.size(), 12u);
  const testing::CaseModel m =
      testing::ConstantInputsModel(std::vector<testing::OpCase>(all.begin(), all.begin() + 12));
  const size_t outputs = m.output_tensors.size();
  ASSERT_GT(outputs, 8u);
  const std::string pte = Compile(m.model, dir_ / "many.pte");
  ASSERT_FALSE(pte.empty());
  std::string inputs;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const fs::path file = dir_ / ("many.in" + std::to_string(i));
    ASSERT_TRUE(testing::WriteFile(file.string(), m.inputs[i]));
    inputs += " --input " + file.string();
  }
  const CommandResult sim =
      BoardlabRun("--board sim " + pte + inputs + " --outputs " + (dir_ / "sim").string());
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  std::string expected;
  for (size_t k = 0; k < outputs; ++k) {
    expected += " --expected " + (dir_ / "sim" / ("output" + std::to_string(k) + ".bin")).string();
  }
  const fs::path json_path = dir_ / "many.json";
  const CommandResult serial = BoardlabRun(
      "--board serial --port " + board_->port() + " " + pte + inputs + expected + " --atol 0" +
      " --outputs " + (dir_ / "serial").string() + " --json " + json_path.string());
  ASSERT_EQ(serial.exit_code, 0) << serial.output;
  EXPECT_NE(serial.output.find("result: PASS"), std::string::npos) << serial.output;
  const json doc = ReadJson(json_path);
  ASSERT_EQ(doc["outputs"].size(), outputs) << doc.dump();
  for (size_t k = 0; k < outputs; ++k) {
    const std::string file = "output" + std::to_string(k) + ".bin";
    EXPECT_EQ(testing::ReadFile((dir_ / "serial" / file).string()),
              testing::ReadFile((dir_ / "sim" / file).string()))
        << file;
    EXPECT_TRUE(doc["outputs"][k]["verification"]["pass"].get<bool>()) << doc["outputs"][k];
  }
}

TEST_F(SerialBoardTest, DamagedLineStillPassesAndRetransmissionsAreCounted) {
  // About one byte in 10,000 corrupted, lost or doubled, each way, by a proxy between
  // boardlab-run and the board; an artifact of ~50 kB so that the damage hits it several times.
  const std::string pte =
      Compile(testing::SingleFullyConnected({.in_shape = {1, 512}, .units = 96}), dir_ / "fc.pte");
  ASSERT_FALSE(pte.empty());
  const CommandResult sim =
      BoardlabRun("--board sim " + pte + " --input random:0 --outputs " + (dir_ / "sim").string());
  ASSERT_EQ(sim.exit_code, 0) << sim.output;
  const int proxy_port = testing::FreeLoopbackPort();
  auto proxy =
      Process::Start({BOARDLAB_FAULT_PROXY, "--listen", "127.0.0.1:" + std::to_string(proxy_port),
                      "--connect", "127.0.0.1:" + std::to_string(board_->tcp_port()), "--corrupt",
                      "0.00004", "--drop", "0.00003", "--duplicate", "0.00003", "--seed", "7"},
                     (dir_ / "proxy.log").string(), (dir_ / "proxy.log").string());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  ASSERT_TRUE(
      WaitFor([&] { return ReadText(dir_ / "proxy.log").find("listening") != std::string::npos; },
              std::chrono::seconds(10)));
  const std::string port = "tcp:127.0.0.1:" + std::to_string(proxy_port);
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = BoardlabRun(
      "--board serial --port " + port + " " + pte + " --input random:0 --expected " +
      (dir_ / "sim" / "output0.bin").string() + " --etdump " + (dir_ / "d.etdp").string() +
      " --iterations 10 --json " + (dir_ / "damaged.json").string());
  const double seconds = Seconds(start);
  (*proxy)->Terminate(std::chrono::seconds(5));
  const std::string proxy_log = ReadText(dir_ / "proxy.log");
  ASSERT_EQ(r.exit_code, 0) << r.output << "\n" << proxy_log;
  EXPECT_NE(r.output.find("result: PASS"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("retransmissions "), std::string::npos);  // the stats line
  const json doc = ReadJson(dir_ / "damaged.json");
  const json& link = doc["link"];
  EXPECT_GT(link["retransmissions"].get<int>(), 0) << link.dump() << "\n" << proxy_log;
  EXPECT_GT(link["crc_errors"].get<int>() + link["header_errors"].get<int>() +
                link["resyncs"].get<int>() + link["duplicates"].get<int>() +
                link["naks_received"].get<int>(),
            0)
      << link.dump();
  std::printf("damaged line, %.1f s: %s\n%s", seconds, link.dump().c_str(), proxy_log.c_str());
}

TEST_F(SerialBoardTest, KilledBoardIsABoardErrorAtOnce) {
  // A long run (many iterations), and QEMU killed while it runs: the connection drops.
  auto run = Process::Start({testing::RunBinary(), "--board", "serial", "--port", board_->port(),
                             pte_, "--iterations", "20000"},
                            (dir_ / "run.log").string(), (dir_ / "run.log").string());
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(WaitFor(
      [&] { return ReadText(dir_ / "run.log").find("artifact sha256") != std::string::npos; },
      std::chrono::seconds(30)))
      << ReadText(dir_ / "run.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // RUN is on its way
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(board_->qemu_pid(), SIGKILL), 0);
  const std::optional<int> code = (*run)->Wait(std::chrono::seconds(20));
  ASSERT_TRUE(code.has_value()) << "boardlab-run hangs after the board died";
  const std::string log = ReadText(dir_ / "run.log");
  EXPECT_EQ(*code, 4) << log;
  EXPECT_NE(log.find("board error: board connection lost"), std::string::npos) << log;
  EXPECT_LT(Seconds(killed), 5.0) << log;
}

TEST_F(SerialBoardTest, HangIsEndedByTheWatchdogAndReported) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = RunOnBoard("--test-fault hang --timeout 60");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("board error: the board was reset (watchdog reset) while waiting for the "
                          "result"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("watchdog reset: pc 0x"), std::string::npos) << r.output;
  // The watchdog, not the run's 60 s timeout, ended it (QEMU under a loaded machine took 44 s).
  EXPECT_LT(Seconds(start), 60.0);
  // The board is back: the next run works and says why it restarted.
  const CommandResult next = RunOnBoard("");
  EXPECT_EQ(next.exit_code, 0) << next.output;
  EXPECT_NE(next.output.find("last reset: watchdog reset"), std::string::npos) << next.output;
}

TEST_F(SerialBoardTest, HangWithoutWatchdogEndsInTheTimeoutThenAResetRecovers) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = RunOnBoard("--test-fault hang-without-watchdog --timeout 2");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("board error: waiting for the result of the run (--timeout 2 s): "
                          "nothing within 2 s"),
            std::string::npos)
      << r.output;
  EXPECT_LT(Seconds(start), 20.0);
  // The reset button (the QEMU monitor) brings it back.
  const CommandResult reset = MonitorCommand(*board_, "--reset");
  ASSERT_EQ(reset.exit_code, 0) << reset.output;
  const CommandResult next = RunOnBoard("");
  EXPECT_EQ(next.exit_code, 0) << next.output;
  EXPECT_NE(next.output.find("last reset: power-on or external reset"), std::string::npos)
      << next.output;
}

TEST_F(SerialBoardTest, HardFaultIsABoardErrorWithTheRegisters) {
  const CommandResult r = RunOnBoard("--test-fault hardfault --json " + (dir_ / "f.json").string());
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("the board was reset (fault reset)"), std::string::npos) << r.output;
  // UsageFault UNDEFINSTR (udf), escalated to HardFault (FORCED).
  EXPECT_NE(r.output.find("cfsr 0x00010000 hfsr 0x40000000"), std::string::npos) << r.output;
  const json doc = ReadJson(dir_ / "f.json");
  ASSERT_EQ(doc["faults"].size(), 1u) << doc.dump();
  EXPECT_EQ(doc["faults"][0]["cause"], "fault reset");
  EXPECT_EQ(doc["exit"], 4);
}

TEST_F(SerialBoardTest, PowerCycleEmptiesTheCacheAndTheBoardComesBack) {
  ASSERT_EQ(RunOnBoard("").exit_code, 0);
  const CommandResult hit = RunOnBoard("");
  EXPECT_NE(hit.output.find("(cache hit)"), std::string::npos) << hit.output;
  const CommandResult cycle = MonitorCommand(*board_, "--power-cycle");
  ASSERT_EQ(cycle.exit_code, 0) << cycle.output;
  const CommandResult after = RunOnBoard("");
  EXPECT_EQ(after.exit_code, 0) << after.output << ReadText(board_->log());
  EXPECT_NE(after.output.find("holding 0 artifacts"), std::string::npos) << after.output;
  EXPECT_EQ(after.output.find("(cache hit)"), std::string::npos) << after.output;
  EXPECT_TRUE(board_->process()->Running());
}

TEST_F(SerialBoardTest, MismatchAndInvalidArtifactKeepTheirExitCodes) {
  const std::string wrong = (dir_ / "wrong.bin").string();
  ASSERT_TRUE(testing::WriteFile(wrong, std::vector<uint8_t>(12, 0x55)));
  const CommandResult mismatch = RunOnBoard("--input random:1 --expected " + wrong);
  EXPECT_EQ(mismatch.exit_code, 1) << mismatch.output;
  EXPECT_NE(mismatch.output.find("result: FAIL"), std::string::npos) << mismatch.output;
  const std::string garbage = (dir_ / "garbage.pte").string();
  ASSERT_TRUE(testing::WriteFile(garbage, std::vector<uint8_t>(4096, 0x5a)));
  const CommandResult invalid =
      BoardlabRun("--board serial --port " + board_->port() + " " + garbage);
  EXPECT_EQ(invalid.exit_code, 3) << invalid.output;
}

// Many cases in one host session: the artifact goes to the board once (later cases find it in
// the board's cache), each case's outputs are the sim board's, a wrong expected file fails its
// case only, and --json lists the cases.
TEST_F(SerialBoardTest, CasesShareOneSessionAndTheArtifactIsSentOnce) {
  const fs::path in = dir_ / "in";
  fs::create_directories(in);
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_TRUE(testing::WriteFile((in / (std::string(name) + ".bin")).string(),
                                   std::vector<uint8_t>(490, static_cast<uint8_t>(name[0]))));
  }
  const fs::path sim = dir_ / "sim";
  const CommandResult reference = BoardlabRun("--board sim " + pte_ + " --inputs " + in.string() +
                                              " --outputs " + sim.string());
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  const fs::path expected = dir_ / "expected";
  fs::create_directories(expected);
  for (const char* name : {"a", "b", "c"}) {
    fs::copy_file(sim / name / "output0.bin", expected / (std::string(name) + ".bin"));
  }
  const fs::path json_path = dir_ / "cases.json";
  const CommandResult serial =
      RunOnBoard("--inputs " + in.string() + " --expected " + expected.string() + " --outputs " +
                 (dir_ / "serial").string() + " --json " + json_path.string());
  ASSERT_EQ(serial.exit_code, 0) << serial.output;
  size_t cache_hits = 0;
  for (size_t at = serial.output.find("(cache hit), not sent"); at != std::string::npos;
       at = serial.output.find("(cache hit), not sent", at + 1)) {
    ++cache_hits;
  }
  EXPECT_EQ(cache_hits, 2u) << "sent for case a, found in the cache for b and c\n" << serial.output;
  EXPECT_NE(serial.output.find("cases: 3 of 3 passed, max abs diff 0, top-1 agreement 100.0%"),
            std::string::npos)
      << serial.output;
  for (const char* name : {"a", "b", "c"}) {
    EXPECT_EQ(testing::ReadFile((dir_ / "serial" / name / "output0.bin").string()),
              testing::ReadFile((sim / name / "output0.bin").string()))
        << name;
  }
  const json doc = ReadJson(json_path);
  EXPECT_EQ(doc["case_summary"]["passed"], 3) << doc.dump();
  EXPECT_EQ(doc["cases"][0]["name"], "a");
  EXPECT_FALSE(doc["transfer"]["cache_hit"].get<bool>()) << "the first case sent the artifact";

  fs::copy_file(expected / "a.bin", expected / "b.bin", fs::copy_options::overwrite_existing);
  const CommandResult wrong =
      RunOnBoard("--inputs " + in.string() + " --expected " + expected.string());
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_NE(wrong.output.find("case b: FAIL"), std::string::npos) << wrong.output;
  EXPECT_NE(wrong.output.find("cases: 2 of 3 passed"), std::string::npos) << wrong.output;
}

// The ETDump comes back over the link: its timeline is drawn on the host, and the board-link
// build records what the semihosting build does (QEMU instructions, NPU kernels and weight copies
// on the core).
// The board's timeline and its per-op profile (boardlab-run --profile, as for --board qemu): the
// clock the board's timer counts and where each kernel ran (the an505 firmware emulates the NPU
// on its Cortex-M33), as a table after the console and as JSON alone on stdout.
TEST_F(SerialBoardTest, TimelineAndProfileFromTheEtdumpTheBoardSent) {
  compiler::CompileOptions options;
  options.no_npu = {compiler::OpType::kDepthwiseConv2D};
  options.weights = compiler::WeightsPlacement::kFlash;
  std::string debug_map;
  const std::string pte = Compile(testing::TinyDsCnn(), dir_ / "flash.pte", &debug_map, options);
  ASSERT_FALSE(pte.empty());
  const std::string map = (dir_ / "flash.json").string();
  ASSERT_TRUE(testing::WriteFile(map, std::vector<uint8_t>(debug_map.begin(), debug_map.end())));
  const std::string trace = (dir_ / "trace.json").string();
  const std::string svg = (dir_ / "timeline.svg").string();
  // The board's HELLO may take longer than the default 10 s on a loaded machine (this test once
  // ended in a board error after 13.5 s at load 10).
  const std::string board = "--board serial --connect-timeout 30 --port " + board_->port() + " ";
  const CommandResult run = BoardlabRun(board + pte + " --debug-map " + map + " --trace " + trace +
                                        " --timeline " + svg + " --profile table");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ExpectTheCoreDidEverything(trace, svg, (dir_ / "timeline.png").string());
  // The table follows the console: the clock line, then "ran on" for every row.
  const size_t table = run.output.find("profile from ETDump");
  ASSERT_NE(table, std::string::npos) << run.output;
  EXPECT_LT(run.output.find("result: UNVERIFIED"), table) << run.output;
  EXPECT_NE(
      run.output.find("  clock: QEMU instructions (icount shift 0), not Cortex-M33 cycles", table),
      std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("ran on", table), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("npu-emulated-cortex-m33", table), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("DEPTHWISE_CONV_2D #", table), std::string::npos) << run.output;

  // JSON: the document alone on stdout (the console went to stderr).
  const CommandResult doc = RunCommand(
      testing::RunBinary() + " " + board + pte + " --debug-map " + map + " --profile json",
      /*with_stderr=*/false);
  ASSERT_EQ(doc.exit_code, 0) << doc.output;
  const json parsed = json::parse(doc.output, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(parsed.is_object()) << doc.output;
  EXPECT_EQ(parsed["board"], "serial");
  const json& profile = parsed["profile"];
  EXPECT_EQ(profile["clock"], "qemu-icount");
  EXPECT_EQ(profile["count_unit"], "instructions");
  ASSERT_TRUE(profile["ops"].is_array());
  std::set<std::string> ran_on;
  for (const json& op : profile["ops"]) {
    ran_on.insert(op.value("ran_on", "missing"));
    for (const json& kernel : op.value("npu_kernels", json::array())) {
      ran_on.insert(kernel.value("ran_on", "missing"));
    }
  }
  EXPECT_EQ(ran_on, (std::set<std::string>{"cpu", "npu-emulated-cortex-m33"})) << profile.dump(2);
}

TEST_F(SerialBoardTest, UsageErrorsAndAMissingBoard) {
  EXPECT_EQ(BoardlabRun("--board serial " + pte_).exit_code, 2);  // no --port
  EXPECT_EQ(BoardlabRun("--board serial --port /dev/null --baud 12345 " + pte_).exit_code, 2);
  EXPECT_EQ(RunOnBoard("--test-fault sometimes").exit_code, 2);
  EXPECT_EQ(RunOnBoard("--icount 0").exit_code, 2);
  EXPECT_EQ(RunOnBoard("--clock wall").exit_code, 2);
  const CommandResult map_alone = RunOnBoard("--debug-map " + (dir_ / "m.json").string());
  EXPECT_EQ(map_alone.exit_code, 2);
  EXPECT_NE(map_alone.output.find("--debug-map is only used with --profile, --trace or --timeline"),
            std::string::npos)
      << map_alone.output;
  // A timeline that could not be written is refused before the board is asked for anything.
  const CommandResult unwritable =
      RunOnBoard("--trace " + (dir_ / "missing" / "t.json").string(),
                 "tcp:127.0.0.1:" + std::to_string(testing::FreeLoopbackPort()));
  EXPECT_EQ(unwritable.exit_code, 2) << unwritable.output;
  EXPECT_EQ(BoardlabRun("--board sim --port " + board_->port() + " " + pte_).exit_code, 2);
  const auto start = std::chrono::steady_clock::now();
  const CommandResult none = BoardlabRun(
      "--board serial --port tcp:127.0.0.1:" + std::to_string(testing::FreeLoopbackPort()) +
      " --connect-timeout 1 " + pte_);
  EXPECT_EQ(none.exit_code, 4) << none.output;
  EXPECT_NE(none.output.find("board error: "), std::string::npos) << none.output;
  EXPECT_LT(Seconds(start), 10.0);
  const CommandResult not_a_tty = BoardlabRun("--board serial --port /dev/null " + pte_);
  EXPECT_EQ(not_a_tty.exit_code, 4) << not_a_tty.output;
  EXPECT_NE(not_a_tty.output.find("is not a serial port"), std::string::npos) << not_a_tty.output;
}

// ---- The model slot: models larger than the artifact cache, "flashed" with qemu-board.sh. ----

class SerialBoardModelSlot : public OneBoardTest {
 protected:
  void SetUp() override { StartBoard("slot.bin"); }  // the slot is empty until the first flash
  CommandResult RunOnBoard(const std::string& pte, const std::string& args) {
    return BoardlabRun("--board serial --port " + board_->port() + " --connect-timeout 30 " + pte +
                       " " + args);
  }
  // Runs `pte` from the slot and on the sim board with `io`; the outputs must be equal.
  void ExpectSlotRunEqualsSim(const std::string& pte, const std::string& io) {
    const CommandResult sim =
        BoardlabRun("--board sim " + pte + io + " --outputs " + (dir_ / "sim").string());
    ASSERT_EQ(sim.exit_code, 0) << sim.output;
    const CommandResult run =
        RunOnBoard(pte, "--artifact-in-slot" + io + " --outputs " + (dir_ / "serial").string() +
                            " --json " + (dir_ / "slot.json").string());
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("in the model slot at 0x80a00000, checked by the board"),
              std::string::npos)
        << run.output;
    ExpectSameOutputs(dir_ / "sim", dir_ / "serial");
    const json doc = ReadJson(dir_ / "slot.json");
    EXPECT_TRUE(doc["transfer"]["in_model_slot"].get<bool>());
    EXPECT_EQ(doc["transfer"]["bytes_sent"], 0);
    EXPECT_GT(doc["transfer"]["bytes"].get<uint64_t>(),
              doc["board"]["artifact_cache"]["capacity"].get<uint64_t>());
    EXPECT_EQ(doc["board"]["model_slot"]["base"], 0x80A00000u);
    EXPECT_EQ(doc["board"]["model_slot"]["size"], 6u << 20);
    // Only the input, a few messages and the outputs crossed the line.
    EXPECT_LT(doc["link"]["bytes_sent"].get<uint64_t>(), 256u * 1024u);
  }
};

// A fully connected layer with 3.7 MB of weights: larger than the 3 MB artifact cache.
std::vector<uint8_t> LargerThanTheCacheModel(uint32_t seed) {
  testing::FullyConnectedParams p;
  p.in_shape = {1, 2048};
  p.units = 1800;
  p.seed = seed;
  return testing::SingleFullyConnected(p);
}

TEST_F(SerialBoardModelSlot, ModelLargerThanTheCacheRunsFromTheSlotAsOnSim) {
  const std::string pte = Compile(LargerThanTheCacheModel(3), dir_ / "large.pte");
  ASSERT_FALSE(pte.empty());
  // Over the link it cannot run at all.
  const CommandResult sent = RunOnBoard(pte, "--input random:3");
  EXPECT_EQ(sent.exit_code, 4) << sent.output;
  EXPECT_NE(sent.output.find("board's artifact cache holds 3145728"), std::string::npos)
      << sent.output;

  ASSERT_EQ(board_->FlashModel(pte), "");
  ExpectSlotRunEqualsSim(pte, " --input random:3");
}

TEST_F(SerialBoardModelSlot, SlotHoldingAnotherModelIsAClearBoardError) {
  const std::string pte = Compile(LargerThanTheCacheModel(3), dir_ / "large.pte");
  const std::string other = Compile(LargerThanTheCacheModel(4), dir_ / "other.pte");
  ASSERT_FALSE(pte.empty());
  ASSERT_FALSE(other.empty());
  ASSERT_EQ(fs::file_size(pte), fs::file_size(other));  // only the weights differ
  // Nothing flashed yet: the slot holds zeros.
  const auto start = std::chrono::steady_clock::now();
  CommandResult run = RunOnBoard(pte, "--artifact-in-slot --input random:3");
  EXPECT_EQ(run.exit_code, 4) << run.output;
  EXPECT_NE(run.output.find("board error: the board refused the artifact in its model slot: "
                            "the model slot's first "),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("(a stale or failed flash)"), std::string::npos) << run.output;

  // A flash of another model of the same size (a stale slot).
  ASSERT_EQ(board_->FlashModel(other), "");
  run = RunOnBoard(pte, "--artifact-in-slot --input random:3");
  EXPECT_EQ(run.exit_code, 4) << run.output;
  EXPECT_NE(run.output.find("(a stale or failed flash)"), std::string::npos) << run.output;
  EXPECT_LT(Seconds(start), 90.0) << "a refused slot must not wait for a timeout";

  // The board is not harmed: the right model, flashed, runs.
  ASSERT_EQ(board_->FlashModel(pte), "");
  run = RunOnBoard(pte, "--artifact-in-slot --input random:3");
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

TEST_F(SerialBoardModelSlot, FlashToolRefusesAModelLargerThanTheSlot) {
  std::vector<uint8_t> big((6u << 20) + 1, 0x5A);
  ASSERT_TRUE(testing::WriteFile((dir_ / "big.bin").string(), big));
  const std::string flashed = board_->FlashModel(dir_ / "big.bin");
  EXPECT_NE(flashed.find("exit 2"), std::string::npos) << flashed;
  EXPECT_NE(flashed.find("the model slot holds 6291456"), std::string::npos) << flashed;
}

// A real model that does not fit the artifact cache (mobilenet_v2, 3.7 MB): from the slot, its
// output equals TFLite Micro's golden output and the sim board's.
TEST_F(SerialBoardModelSlot, MobilenetFromTheSlotMatchesTheGoldenOutput) {
  const std::string name = "pytorch-export/mobilenet_v2_int8_1x3x224x224.tflite";
  const std::optional<std::string> model = testing::SharedModelPath(name);
  if (!model) GTEST_SKIP() << "shared models folder absent: " << testing::SharedModelsDir();
  const std::string golden =
      testing::SharedModelsDir() + "/../golden/mobilenet_v2_int8_1x3x224x224/seed1";
  if (!fs::exists(golden + ".input.bin")) GTEST_SKIP() << "no golden output at " << golden;
  const std::string pte = Compile(testing::ReadFile(*model), dir_ / "mobilenet.pte");
  ASSERT_FALSE(pte.empty());
  ASSERT_EQ(board_->FlashModel(pte), "");
  ExpectSlotRunEqualsSim(
      pte, " --input " + golden + ".input.bin --expected " + golden + ".output.bin --atol 0");
}

}  // namespace
}  // namespace boardlab::firmware
