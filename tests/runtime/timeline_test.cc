// The profile as a timeline (runtime/cli/timeline.h): lanes, slices and times from synthetic
// ETDumps; the Chrome trace checked against the Trace Event Format's rules and the SVG parsed by
// libxml2 and drawn by rsvg-convert (tests/support/trace_checks.h); and boardlab-run --trace /
// --timeline on a model built in code with its weights in flash, so that all three lanes fill.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "compiler/npu_lowering.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/cli/timeline.h"
#include "runtime/cli/timeline_svg.h"
#include "runtime/cli/trace_event_json.h"
#include "runtime/npu/npu_payload.h"
#include "runtime/profiling/etdump/clock_record.h"
#include "runtime/profiling/etdump/etdump_writer.h"
#include "tests/runtime/boardlab_run_test_base.h"
#include "tests/runtime/executor_test_support.h"
#include "tests/support/process.h"
#include "tests/support/shared_data.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"
#include "tests/support/trace_checks.h"

namespace boardlab::runtime {
namespace {

namespace fs = std::filesystem;
namespace lab = boardlab::testing;
using boardlab::run::Lane;
using boardlab::run::SliceKind;
using boardlab::run::Timeline;
using boardlab::run::TimelineSlice;
using boardlab::testing::CommandResult;
using boardlab::testing::RunCommand;
using nlohmann::json;

constexpr uint64_t kSimHz = 325000000;

std::string Text(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

// [kind, unit, slot, bytes (u32 LE)] as the NPU backend writes a weight prefetch's metadata.
std::vector<uint8_t> PrefetchMetadata(ExecutionUnit unit, uint8_t slot, uint32_t bytes) {
  return {0,
          static_cast<uint8_t>(unit),
          slot,
          static_cast<uint8_t>(bytes),
          static_cast<uint8_t>(bytes >> 8),
          static_cast<uint8_t>(bytes >> 16),
          static_cast<uint8_t>(bytes >> 24)};
}

// One Execute run at `t0`: a delegate call (kernels 10, 11 and the prefetch of 11) on
// instruction 0, then a softmax kernel call on instruction 1. With `complete` false the run ends
// before its Method::execute event, as when the writer ran out of room.
void LogRun(etdump::EtdumpWriter& w, uint64_t t0, bool complete, ExecutionUnit npu,
            ExecutionUnit dma) {
  w.BeginRun("Execute");
  const uint8_t kernel[2] = {0, static_cast<uint8_t>(npu)};
  const std::vector<uint8_t> prefetch = PrefetchMetadata(dma, 1, 4096);
  w.LogDelegateEvent(10, 0, 0, t0, t0 + 300, kernel, 2);
  w.LogNamedDelegateEvent("weight_prefetch:11", 0, 0, t0 + 300, t0 + 350, prefetch.data(),
                          static_cast<uint32_t>(prefetch.size()));
  w.LogDelegateEvent(11, 0, 0, t0 + 300, t0 + 400, kernel, 2);
  w.LogProfileEvent("DELEGATE_CALL", 0, 0, t0, t0 + 500);
  w.LogProfileEvent("native_call_softmax.out", 0, 1, t0 + 510, t0 + 900);
  w.LogProfileEvent("OPERATOR_CALL", 0, 1, t0 + 500, t0 + 1000);
  if (complete) w.LogProfileEvent("Method::execute", -1, -1, t0, t0 + 1000);
}

std::vector<uint8_t> SyntheticEtdump(const etdump::ClockRecord& clock, int complete_runs,
                                     bool cut_run, ExecutionUnit npu = ExecutionUnit::kNpu,
                                     ExecutionUnit dma = ExecutionUnit::kDma) {
  std::vector<uint8_t> buffer(64 * 1024);
  etdump::EtdumpWriter w(buffer.data(), buffer.size());
  w.BeginRun("Default");
  w.LogProfileEvent("Program::load_method", -1, -1, 0, 10);
  etdump::WriteClockRecord(w, clock);
  for (int r = 0; r < complete_runs; ++r) LogRun(w, 100 + 2000 * r, true, npu, dma);
  if (cut_run) LogRun(w, 100 + 2000 * complete_runs, false, npu, dma);
  Result<Span<const uint8_t>> bytes = w.Finish();
  EXPECT_TRUE(bytes.ok());
  return {bytes->data(), bytes->data() + bytes->size()};
}

etdump::ClockRecord SimClockRecord() {
  etdump::ClockRecord clock;
  clock.kind = etdump::ClockKind::kSimCycles;
  clock.ticks_per_second = kSimHz;
  clock.core_hz = kSimHz;
  return clock;
}

// Kernel 10 has the fields the compiler writes now (name, macs); kernel 11 is an older entry.
const json kMap = json::parse(R"({
    "delegates": [{"instruction": 0, "partition": 0, "backend": "BoardlabNeutronBackend",
                   "kernels": [{"id": 10, "kernel": 0, "ops": [0, 1], "names": ["conv_out"],
                                "name": "CONV_2D #0", "macs": 3456},
                               {"id": 11, "kernel": 1, "ops": [2], "names": ["fc_out"]}]}],
    "cpu_ops": [{"instruction": 1, "op": 3, "ops": [3], "name": "SOFTMAX #3", "macs": 0}]})");

Timeline MustRead(const std::vector<uint8_t>& etdp, const json& map) {
  std::string error;
  std::optional<Timeline> t = run::TimelineFromEtdump(Text(etdp), map, &error);
  EXPECT_TRUE(t.has_value()) << error;
  return t.value_or(Timeline{});
}

std::vector<TimelineSlice> LaneSlices(const Timeline& t, Lane lane) {
  std::vector<TimelineSlice> slices;
  for (const TimelineSlice& s : t.slices) {
    if (s.lane == lane) slices.push_back(s);
  }
  return slices;
}

TEST(TimelineTest, LastCompleteRunOnThreeLanesNamedByTheDebugMap) {
  const Timeline t = MustRead(SyntheticEtdump(SimClockRecord(), 2, /*cut_run=*/true), kMap);
  EXPECT_EQ(t.runs, 2);  // the cut third run does not count
  EXPECT_EQ(t.run, 2);
  EXPECT_EQ(t.duration, 1000);
  EXPECT_EQ(t.clock.kind, "rt700-sim-cycles");

  const std::vector<TimelineSlice> core = LaneSlices(t, Lane::kCortexM33);
  ASSERT_EQ(core.size(), 2u);
  EXPECT_EQ(core[0].kind, SliceKind::kDelegateCall);
  EXPECT_EQ(core[0].row.op, "delegate 0 (BoardlabNeutronBackend)");
  EXPECT_EQ(core[0].start, 0);  // times from the run's own Method::execute, not the file's
  EXPECT_EQ(core[0].end, 500);
  EXPECT_EQ(core[0].row.ran_on, "cpu");
  EXPECT_EQ(core[1].kind, SliceKind::kCpuOp);
  EXPECT_EQ(core[1].row.op, "SOFTMAX #3");
  EXPECT_EQ(core[1].row.source_ops, std::vector<int32_t>({3}));
  EXPECT_EQ(core[1].row.macs, 0);
  EXPECT_EQ(core[1].start, 500);
  EXPECT_EQ(core[1].row.cycles, 500);
  EXPECT_NEAR(core[1].row.us, 500.0 / 325, 1e-9);

  const std::vector<TimelineSlice> npu = LaneSlices(t, Lane::kNpu);
  ASSERT_EQ(npu.size(), 2u);
  EXPECT_EQ(npu[0].row.op, "CONV_2D #0");  // the op it came from, on a timeline
  EXPECT_EQ(npu[0].row.macs, 3456);
  EXPECT_EQ(npu[0].row.layer, "conv_out");
  EXPECT_EQ(npu[0].row.source_ops, std::vector<int32_t>({0, 1}));
  EXPECT_EQ(npu[0].row.ran_on, "npu");
  EXPECT_EQ(npu[0].row.debug_id, 10);
  EXPECT_EQ(npu[0].row.kernel, 0);
  EXPECT_EQ(npu[0].end, 300);
  EXPECT_EQ(npu[1].row.op, "NPU kernel 1 (id 11) ops 2");  // an entry without "name"
  EXPECT_EQ(npu[1].row.macs, -1);

  const std::vector<TimelineSlice> dma = LaneSlices(t, Lane::kDma);
  ASSERT_EQ(dma.size(), 1u);
  EXPECT_EQ(dma[0].kind, SliceKind::kWeightPrefetch);
  EXPECT_EQ(dma[0].row.op, "weights for NPU kernel 1 (id 11) ops 2");
  EXPECT_EQ(dma[0].row.ran_on, "dma");
  EXPECT_EQ(dma[0].row.debug_id, 11);
  EXPECT_EQ(dma[0].bytes, 4096);
  EXPECT_EQ(dma[0].slot, 1);
  EXPECT_EQ(dma[0].start, 300);
  EXPECT_EQ(dma[0].end, 350);
  EXPECT_EQ(run::LaneTitle(t, Lane::kNpu), "NPU (simulator timing model)");
  EXPECT_EQ(run::LaneTitle(t, Lane::kDma), "weight DMA (simulator timing model)");
}

TEST(TimelineTest, WithoutADebugMapSlicesKeepTheEventsNames) {
  const Timeline t = MustRead(SyntheticEtdump(SimClockRecord(), 1, false), nullptr);
  const std::vector<TimelineSlice> core = LaneSlices(t, Lane::kCortexM33);
  ASSERT_EQ(core.size(), 2u);
  EXPECT_EQ(core[0].row.op, "DELEGATE_CALL");
  EXPECT_EQ(core[1].row.op, "softmax");
  EXPECT_EQ(LaneSlices(t, Lane::kNpu)[0].row.op, "NPU kernel id 10");
  EXPECT_EQ(LaneSlices(t, Lane::kDma)[0].row.op, "weights for NPU kernel id 11");
}

// --clock wall: NPU kernels tick on the timing model's NPU cycles, the rest on host time. The
// kernels keep their offsets, converted to host ticks, from the start of their call.
TEST(TimelineTest, DelegateEventsOnTheirOwnClockArePlacedInTheirCall) {
  etdump::ClockRecord clock;
  clock.kind = etdump::ClockKind::kHostWall;
  clock.ticks_per_second = 1000000000;
  clock.delegate_kind = etdump::ClockKind::kSimNpuCycles;
  clock.delegate_ticks_per_second = 500000000;  // 2 ns per NPU cycle
  std::vector<uint8_t> buffer(64 * 1024);
  etdump::EtdumpWriter w(buffer.data(), buffer.size());
  w.BeginRun("Default");
  etdump::WriteClockRecord(w, clock);
  w.BeginRun("Execute");
  const uint8_t kernel[2] = {0, static_cast<uint8_t>(ExecutionUnit::kNpu)};
  w.LogDelegateEvent(10, 0, 0, 7000, 7100, kernel, 2);  // backend-local NPU cycles
  w.LogDelegateEvent(11, 0, 0, 7100, 7150, kernel, 2);
  w.LogProfileEvent("DELEGATE_CALL", 0, 0, 1000000, 1900000);  // host ns
  w.LogProfileEvent("Method::execute", -1, -1, 1000000, 2000000);
  Result<Span<const uint8_t>> bytes = w.Finish();
  ASSERT_TRUE(bytes.ok());
  const Timeline t = MustRead({bytes->data(), bytes->data() + bytes->size()}, kMap);
  const std::vector<TimelineSlice> npu = LaneSlices(t, Lane::kNpu);
  ASSERT_EQ(npu.size(), 2u);
  EXPECT_EQ(npu[0].start, 0);
  EXPECT_EQ(npu[0].end, 200);  // 100 NPU cycles = 200 ns
  EXPECT_EQ(npu[1].start, 200);
  EXPECT_EQ(npu[1].end, 300);
  EXPECT_EQ(npu[0].row.cycles, 100);  // counted in the kernel's own clock
  EXPECT_NEAR(npu[0].row.us, 0.2, 1e-12);
  const json args = run::SliceArgs(t, npu[0]);
  EXPECT_EQ(args["clock"], "rt700-sim-npu-cycles");
}

TEST(TimelineTest, BytesWithoutACompleteRunAreErrors) {
  std::string error;
  EXPECT_FALSE(run::TimelineFromEtdump("not an etdump at all", kMap, &error).has_value());
  EXPECT_NE(error.find("not an ETDump"), std::string::npos) << error;
  const std::vector<uint8_t> cut = SyntheticEtdump(SimClockRecord(), 0, /*cut_run=*/true);
  EXPECT_FALSE(run::TimelineFromEtdump(Text(cut), kMap, &error).has_value());
  EXPECT_NE(error.find("no complete Execute run"), std::string::npos) << error;
}

// ---- Chrome trace --------------------------------------------------------------------------

TEST(TraceEventJsonTest, FollowsTheTraceEventFormat) {
  const Timeline t = MustRead(SyntheticEtdump(SimClockRecord(), 2, true), kMap);
  const std::string text = run::TraceEventJson(t, "synthetic.etdp").dump();
  absl::StatusOr<lab::TraceLanes> lanes = lab::ReadTrace(text);
  ASSERT_TRUE(lanes.ok()) << lanes.status();
  EXPECT_EQ(lanes->thread_names,
            (std::map<int64_t, std::string>{{1, "Cortex-M33"},
                                            {2, "NPU (simulator timing model)"},
                                            {3, "weight DMA (simulator timing model)"}}));
  ASSERT_EQ(lanes->slices[1].size(), 2u);
  ASSERT_EQ(lanes->slices[2].size(), 2u);
  ASSERT_EQ(lanes->slices[3].size(), 1u);
  EXPECT_TRUE(lab::SlicesDoNotOverlap(*lanes));
  EXPECT_TRUE(lanes->has_display_time_unit);
  EXPECT_EQ(lanes->other_data["ts_unit"], "us");
  EXPECT_EQ(lanes->other_data["clock"], "rt700-sim-cycles");
  EXPECT_EQ(lanes->other_data["run"], 2);
  const lab::TraceSlice& softmax = lanes->slices[1][1];
  EXPECT_EQ(softmax.name, "SOFTMAX #3");
  EXPECT_EQ(softmax.category, "cpu_op");
  EXPECT_NEAR(softmax.ts, 500.0 / 325, 1e-9);  // microseconds at 325 MHz
  EXPECT_NEAR(softmax.dur, 500.0 / 325, 1e-9);
  EXPECT_EQ(softmax.args["cycles"], 500);
  EXPECT_EQ(softmax.args["ops"], json::array({3}));
  const lab::TraceSlice& conv = lanes->slices[2][0];
  EXPECT_EQ(conv.category, "npu_kernel");
  EXPECT_EQ(conv.args["macs"], 3456);
  EXPECT_EQ(conv.args["op_name"], "CONV_2D #0");
  EXPECT_EQ(conv.args["ran_on"], "npu");
  EXPECT_EQ(conv.args["clock"], "rt700-sim-cycles");
  EXPECT_EQ(conv.args["debug_id"], 10);
  const lab::TraceSlice& prefetch = lanes->slices[3][0];
  EXPECT_EQ(prefetch.category, "weight_prefetch");
  EXPECT_EQ(prefetch.args["bytes"], 4096);
  EXPECT_EQ(prefetch.args["slot"], 1);
}

// QEMU's icount is an instruction count: the trace's "ts" then counts instructions and says so,
// and the NPU kernels say they ran on the Cortex-M33.
TEST(TraceEventJsonTest, QemuInstructionsAreNeverShownAsTimeOrNpuSilicon) {
  etdump::ClockRecord clock;
  clock.kind = etdump::ClockKind::kQemuIcount;
  clock.ticks_per_second = 20000000;
  clock.icount_shift = 0;
  const Timeline t = MustRead(SyntheticEtdump(clock, 1, false, ExecutionUnit::kNpuEmulatedCortexM33,
                                              ExecutionUnit::kDmaEmulatedCortexM33),
                              kMap);
  absl::StatusOr<lab::TraceLanes> lanes = lab::ReadTrace(run::TraceEventJson(t, "fw.etdp").dump());
  ASSERT_TRUE(lanes.ok()) << lanes.status();
  EXPECT_EQ(lanes->other_data["ts_unit"], "instructions");
  EXPECT_FALSE(lanes->has_display_time_unit);
  EXPECT_NE(lanes->process_name.find("instructions"), std::string::npos) << lanes->process_name;
  EXPECT_EQ(lanes->thread_names[2], "NPU kernels run on the Cortex-M33 (software engine)");
  EXPECT_EQ(lanes->thread_names[3], "weight copies by the Cortex-M33 (memcpy)");
  // 50 instructions per tick of the 20 MHz timer at shift 0.
  EXPECT_EQ(lanes->slices[1][1].ts, 500 * 50);
  for (const auto& [tid, slices] : lanes->slices) {
    for (const lab::TraceSlice& s : slices) {
      EXPECT_NE(s.args["ran_on"], "npu") << s.name;
      EXPECT_NE(s.args["ran_on"], "dma") << s.name;
      EXPECT_FALSE(s.args.contains("cycles")) << s.name;
      EXPECT_FALSE(s.args.contains("us")) << s.name;
    }
  }
}

// ---- SVG -------------------------------------------------------------------------------------

TEST(TimelineSvgTest, WellFormedWithOneRectPerSliceAndEscapedNames) {
  json map = kMap;
  // Names come from the model file: markup characters, a control character and bytes that are
  // not UTF-8 must not break the document.
  map["cpu_ops"][0]["name"] =
      std::string("SOFTMAX <&\"> \x01 \xff\xfe \xe0\x80\x80 \xed\xa0\x80 \xef\xbf\xbe \xc3 #3");
  map["delegates"][0]["kernels"][0]["name"] = "CONV_2D \u00e9\u4e2d\U0001F600 #0";  // kept
  const Timeline t = MustRead(SyntheticEtdump(SimClockRecord(), 1, false), map);
  const std::string svg = run::TimelineSvg(t, "a <b> & \"c\"");
  absl::StatusOr<lab::SvgSlices> slices = lab::ReadSvgSlices(svg);
  ASSERT_TRUE(slices.ok()) << slices.status() << "\n" << svg;
  EXPECT_EQ(slices->total, 5);
  EXPECT_EQ(slices->per_lane, (std::map<int, int>{{0, 2}, {1, 2}, {2, 1}}));
  const auto has_text = [&](const std::string& what) {
    for (const std::string& text : slices->texts) {
      if (text.find(what) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has_text("boardlab timeline: a <b> & \"c\""));
  EXPECT_TRUE(has_text("clock: simulated RT700 cycles"));
  EXPECT_TRUE(has_text("cycles from the start of Method::execute"));
  EXPECT_TRUE(has_text("Cortex-M33"));
  EXPECT_TRUE(has_text("NPU (simulator timing model)"));
  EXPECT_TRUE(has_text("weight DMA (simulator timing model)"));
  EXPECT_TRUE(has_text("NPU kernel (simulator timing model)"));  // the legend
  EXPECT_TRUE(has_text("CPU op on the Cortex-M33"));
  EXPECT_TRUE(has_text("CONV_2D \u00e9\u4e2d\U0001F600 #0"));  // valid UTF-8 stays as it is
}

// ---- boardlab-run --trace / --timeline ----------------------------------------------------

class TimelineCli : public testing::BoardlabRunTest {
 protected:
  TimelineCli() : BoardlabRunTest("boardlab_timeline") {}

  // Tiny DS-CNN with its depthwise convs on the CPU and its weights in flash: CPU ops, NPU
  // kernels and weight prefetches. Returns the number of Prefetch commands in its payloads.
  int CompileWithWeightsInFlash() {
    compiler::CompileOptions options;
    options.no_npu = {compiler::OpType::kDepthwiseConv2D};
    options.weights = compiler::WeightsPlacement::kFlash;
    absl::StatusOr<compiler::CompileResult> compiled =
        compiler::Compile(boardlab::testing::TinyDsCnn(), options);
    EXPECT_TRUE(compiled.ok()) << compiled.status();
    if (!compiled.ok()) return -1;
    EXPECT_TRUE(lab::WriteFile(Path("tiny.pte"), compiled->pte));
    EXPECT_TRUE(lab::WriteFile(
        Path("tiny.json"),
        std::vector<uint8_t>(compiled->debug_map_json.begin(), compiled->debug_map_json.end())));
    map_ = json::parse(compiled->debug_map_json);
    absl::StatusOr<std::vector<compiler::NpuPartitionBlob>> blobs =
        compiler::LowerNpuPartitions(compiled->compilation);
    EXPECT_TRUE(blobs.ok()) << blobs.status();
    int prefetches = 0;
    for (const compiler::NpuPartitionBlob& blob : *blobs) {
      const testing::AlignedBytes bytes(blob.bytes);
      Result<npu::NpuPayload> payload = npu::VerifyNpuPayload(bytes.span());
      EXPECT_TRUE(payload.ok());
      for (const auto type : *payload->program->commands_type()) {
        prefetches += type == ::boardlab::npu::Command::Prefetch ? 1 : 0;
      }
    }
    return prefetches;
  }

  size_t CountOf(const char* list) const {
    size_t n = 0;
    if (std::string(list) == "kernels") {
      for (const json& d : map_["delegates"]) n += d["kernels"].size();
      return n;
    }
    return map_[list].size();
  }

  json map_;
};

// Copies a file to BOARDLAB_TEST_ARTIFACTS_DIR when set, for people (and CI) to look at.
void KeepArtifact(const std::string& path) {
  const char* dir = std::getenv("BOARDLAB_TEST_ARTIFACTS_DIR");
  if (dir == nullptr || *dir == '\0') return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  fs::copy_file(path, fs::path(dir) / fs::path(path).filename(),
                fs::copy_options::overwrite_existing, ec);
}

TEST_F(TimelineCli, SimRunWritesATraceAndAPictureOfEveryKernel) {
  const int prefetches = CompileWithWeightsInFlash();
  ASSERT_GT(prefetches, 0) << "the model must prefetch weights for the DMA lane";
  const CommandResult run = Run(Path("tiny.pte") + " --iterations 2 --debug-map " +
                                Path("tiny.json") + " --etdump " + Path("tiny.etdp") + " --trace " +
                                Path("trace.json") + " --timeline " + Path("timeline.svg"));
  ASSERT_EQ(run.exit_code, 0) << run.output;

  absl::StatusOr<lab::TraceLanes> lanes = lab::ReadTrace(Text(lab::ReadFile(Path("trace.json"))));
  ASSERT_TRUE(lanes.ok()) << lanes.status();
  EXPECT_EQ(lanes->thread_names.size(), 3u);
  // One slice per kernel: CPU ops and delegate calls on the core, NPU kernels, prefetches.
  EXPECT_EQ(lanes->slices[1].size(), CountOf("cpu_ops") + CountOf("delegates"));
  EXPECT_EQ(lanes->slices[2].size(), CountOf("kernels"));
  EXPECT_EQ(lanes->slices[3].size(), static_cast<size_t>(prefetches));
  EXPECT_TRUE(lab::SlicesDoNotOverlap(*lanes));
  EXPECT_EQ(lanes->other_data["run"], 2);
  // Every NPU kernel runs inside its delegate call; the model overlaps each weight transfer
  // with the kernel that reads it.
  std::map<int64_t, const lab::TraceSlice*> calls, kernels;
  for (const lab::TraceSlice& s : lanes->slices[1]) {
    if (s.category == "delegate_call") calls[s.args["instruction"]] = &s;
  }
  for (const lab::TraceSlice& k : lanes->slices[2]) {
    kernels[k.args["debug_id"]] = &k;
    const lab::TraceSlice* call = calls.at(k.args["instruction"]);
    EXPECT_GE(k.ts, call->ts - 1e-9) << k.name;
    EXPECT_LE(k.ts + k.dur, call->ts + call->dur + 1e-9) << k.name;
    EXPECT_EQ(k.args["ran_on"], "npu") << k.name;
    EXPECT_TRUE(k.args.contains("macs")) << k.name;
    EXPECT_TRUE(k.args.contains("ops")) << k.name;
  }
  for (const lab::TraceSlice& p : lanes->slices[3]) {
    const lab::TraceSlice* kernel = kernels.at(p.args["debug_id"]);
    EXPECT_EQ(p.ts, kernel->ts) << p.name;
    EXPECT_LE(p.dur, kernel->dur + 1e-9) << p.name;
    EXPECT_EQ(p.args["ran_on"], "dma") << p.name;
    EXPECT_GT(p.args["bytes"].get<int64_t>(), 0) << p.name;
  }

  const std::string svg = Text(lab::ReadFile(Path("timeline.svg")));
  absl::StatusOr<lab::SvgSlices> slices = lab::ReadSvgSlices(svg);
  ASSERT_TRUE(slices.ok()) << slices.status();
  EXPECT_EQ(slices->per_lane[0], static_cast<int>(lanes->slices[1].size()));
  EXPECT_EQ(slices->per_lane[1], static_cast<int>(lanes->slices[2].size()));
  EXPECT_EQ(slices->per_lane[2], static_cast<int>(lanes->slices[3].size()));
  EXPECT_TRUE(lab::RenderSvgToPng(Path("timeline.svg"), Path("timeline.png")));
  KeepArtifact(Path("timeline.svg"));
  KeepArtifact(Path("timeline.png"));

  // Offline, from the ETDump and the debug map alone: the same slices.
  const CommandResult offline = Run("--inspect " + Path("tiny.etdp") + " --debug-map " +
                                    Path("tiny.json") + " --trace " + Path("offline.json"));
  ASSERT_EQ(offline.exit_code, 0) << offline.output;
  absl::StatusOr<lab::TraceLanes> again = lab::ReadTrace(Text(lab::ReadFile(Path("offline.json"))));
  ASSERT_TRUE(again.ok()) << again.status();
  for (const auto& [tid, slices_of_lane] : lanes->slices) {
    ASSERT_EQ(again->slices[tid].size(), slices_of_lane.size());
    for (size_t i = 0; i < slices_of_lane.size(); ++i) {
      EXPECT_EQ(again->slices[tid][i].name, slices_of_lane[i].name);
      EXPECT_EQ(again->slices[tid][i].ts, slices_of_lane[i].ts);
      EXPECT_EQ(again->slices[tid][i].args, slices_of_lane[i].args);
    }
  }
}

TEST_F(TimelineCli, BadPathsAndEtdumpsAreClearErrors) {
  ASSERT_GE(CompileWithWeightsInFlash(), 0);
  // A directory that does not exist: refused before the run (nothing printed but the error).
  CommandResult c = Run(Path("tiny.pte") + " --trace " + Path("missing/trace.json"));
  EXPECT_EQ(c.exit_code, 2) << c.output;
  EXPECT_NE(c.output.find("cannot write '" + Path("missing/trace.json") + "'"), std::string::npos)
      << c.output;
  EXPECT_EQ(c.output.find("verdict"), std::string::npos) << c.output;
  c = Run("--inspect " + Path("tiny.json") + " --timeline " + Path("t.svg"));
  EXPECT_EQ(c.exit_code, 3) << c.output;  // a JSON file is no ETDump
  EXPECT_FALSE(fs::exists(Path("t.svg")));
  // An ETDump without a complete Execute run has a (empty) profile but no timeline.
  ASSERT_TRUE(lab::WriteFile(Path("cut.etdp"), SyntheticEtdump(SimClockRecord(), 0, true)));
  c = Run("--inspect " + Path("cut.etdp") + " --timeline " + Path("t.svg"));
  EXPECT_EQ(c.exit_code, 3) << c.output;
  EXPECT_NE(c.output.find("no complete Execute run"), std::string::npos) << c.output;
  c = Run("--serve --trace " + Path("t.json"));
  EXPECT_EQ(c.exit_code, 2) << c.output;
  EXPECT_NE(c.output.find("--trace"), std::string::npos) << c.output;
}

}  // namespace
}  // namespace boardlab::runtime
