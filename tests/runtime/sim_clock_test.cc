// Simulated clock: deterministic cycles for the same artifact and inputs, CPU shapes derived from
// KernelCall arguments, and NPU delegate events nested in simulated time.

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "compiler/driver.h"
#include "compiler/npu_lowering.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/core/event_tracer_hooks.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/npu/npu_backend.h"
#include "runtime/npu/npu_payload.h"
#include "runtime/npu/npu_timing.h"
#include "runtime/profiling/etdump/etdump_reader.h"
#include "runtime/profiling/etdump/etdump_writer.h"
#include "runtime/sim/sim_clock.h"
#include "tests/support/test_models.h"

namespace boardlab::runtime::sim {
namespace {

// Runs every NPU partition of TinyDsCnn once on `backend`, tracing into `tracer`.
void RunPartitions(const compiler::CompileResult& r, npu::NpuBackend& backend,
                   EventTracer* tracer) {
  auto blobs = compiler::LowerNpuPartitions(r.compilation);
  EXPECT_TRUE(blobs.ok());
  std::vector<uint8_t> arena(static_cast<size_t>(r.compilation.memory.arena_bytes) + 16);
  std::vector<uint8_t> persistent(1 << 16);
  for (const auto& blob : *blobs) {
    MemoryAllocator allocator(persistent.data(), persistent.size());
    std::vector<uint8_t> scratch(static_cast<size_t>(blob.weight_scratch_bytes) + 16);
    BackendContext ctx;
    ctx.persistent = &allocator;
    ctx.arena = arena.data();
    ctx.arena_size = arena.size();
    ctx.weight_scratch = scratch.data();
    ctx.weight_scratch_size = scratch.size();
    ctx.tracer = tracer;
    auto handle = backend.Init(Span<const uint8_t>(blob.bytes.data(), blob.bytes.size()), ctx);
    EXPECT_TRUE(handle.ok());
    std::vector<std::vector<uint8_t>> storage;
    std::vector<TensorView> views;
    std::vector<int> ts = blob.input_tensors;
    ts.insert(ts.end(), blob.output_tensors.begin(), blob.output_tensors.end());
    views.resize(ts.size());
    std::vector<TensorView*> args;
    for (size_t i = 0; i < ts.size(); ++i) {
      const auto& t = r.compilation.graph.tensors[ts[i]];
      storage.emplace_back(static_cast<size_t>(t.SizeBytes()), uint8_t(i * 7));
      views[i].rank = 1;
      views[i].dims[0] = static_cast<int32_t>(t.SizeBytes());
      views[i].data = storage.back().data();
      args.push_back(&views[i]);
    }
    if (tracer) tracer->BeginRun("Execute");
    EXPECT_EQ(backend.Execute(*handle, Span<TensorView* const>(args.data(), args.size()), ctx),
              Error::kOk);
  }
}

// Runs every NPU partition of TinyDsCnn once on `clock`; returns the ticks it advanced.
uint64_t RunOnce(const compiler::CompileResult& r, SimClock& clock, EventTracer* tracer) {
  npu::NpuBackend backend(clock.params(), &clock);
  const Ticks before = clock.now();
  RunPartitions(r, backend, tracer);
  return clock.now() - before;
}

// The delegate events of an ETDump, in file order.
std::vector<etdump::ProfileRow> DelegateRows(etdump::EtdumpWriter& writer) {
  auto bytes = writer.Finish();
  EXPECT_TRUE(bytes.ok());
  auto reader = etdump::EtdumpReader::Open(*bytes);
  EXPECT_TRUE(reader.ok());
  std::vector<etdump::ProfileRow> rows(reader->NumProfileEvents());
  rows.resize(reader->ReadRows({rows.data(), rows.size()}));
  return rows;
}

TEST(SimClockTest, SameArtifactAndInputsGiveTheSameCycles) {
  auto r = compiler::Compile(testing::TinyDsCnn(), {});
  ASSERT_TRUE(r.ok());
  SimClock a(r->compilation.target.timing), b(r->compilation.target.timing);
  const uint64_t first = RunOnce(*r, a, nullptr);
  EXPECT_GT(first, 0u);
  EXPECT_EQ(RunOnce(*r, b, nullptr), first);
  EXPECT_EQ(RunOnce(*r, a, nullptr), first);  // a second run costs the same
  EXPECT_EQ(a.now(), 2 * first);
}

TEST(SimClockTest, DelegateEventsTileTheSimulatedTime) {
  auto r = compiler::Compile(testing::TinyDsCnn(), {});
  ASSERT_TRUE(r.ok());
  SimClock clock(r->compilation.target.timing);
  clock.Reset(1000);
  std::vector<uint8_t> buffer(64 * 1024);
  etdump::EtdumpWriter writer(buffer.data(), buffer.size());
  const uint64_t cycles = RunOnce(*r, clock, &writer);
  auto bytes = writer.Finish();
  ASSERT_TRUE(bytes.ok());
  auto reader = etdump::EtdumpReader::Open(*bytes);
  ASSERT_TRUE(reader.ok());
  etdump::ProfileRow rows[64];
  const size_t n = reader->ReadRows(Span<etdump::ProfileRow>(rows, 64));
  ASSERT_GT(n, 0u);
  std::set<int32_t> map_ids;
  const nlohmann::json map = nlohmann::json::parse(r->debug_map_json);
  for (const auto& d : map["delegates"]) {
    for (const auto& k : d["kernels"]) map_ids.insert(k["id"].get<int32_t>());
  }
  uint64_t t = 1000;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(rows[i].name, nullptr);
    EXPECT_EQ(rows[i].start, t);  // back to back, starting at the clock's time
    EXPECT_EQ(map_ids.count(rows[i].delegate_debug_id), 1u) << rows[i].delegate_debug_id;
    EXPECT_EQ(rows[i].ran_on, ExecutionUnit::kNpu);  // the NPU timing model
    t = rows[i].end;
  }
  EXPECT_EQ(t, 1000 + cycles);
}

// A board clock that moves 7 ticks per read, so that every kernel event spans exactly one read.
Ticks g_core_ticks = 0;
Ticks FakeCoreClock() { return g_core_ticks += 7; }

// On a board the engine runs the NPU kernels on the Cortex-M33: their events are the core clock
// read around each kernel, and say so; the model's NPU cycles are still known.
TEST(SimClockTest, KernelsEmulatedOnTheCoreAreTimedByItsClockAndSaySo) {
  auto r = compiler::Compile(testing::TinyDsCnn(), {});
  ASSERT_TRUE(r.ok());
  npu::NpuBackend backend(r->compilation.target.timing, npu::EmulatedOnCore{&FakeCoreClock});
  EXPECT_EQ(backend.ran_on(), ExecutionUnit::kNpuEmulatedCortexM33);
  std::vector<uint8_t> buffer(64 * 1024);
  etdump::EtdumpWriter writer(buffer.data(), buffer.size());
  g_core_ticks = 0;
  RunPartitions(*r, backend, &writer);
  const std::vector<etdump::ProfileRow> rows = DelegateRows(writer);
  ASSERT_FALSE(rows.empty());
  Ticks previous_end = 0;
  for (const etdump::ProfileRow& row : rows) {
    EXPECT_EQ(row.ran_on, ExecutionUnit::kNpuEmulatedCortexM33) << row.delegate_debug_id;
    EXPECT_EQ(row.duration(), 7u) << "one core clock read before and one after the kernel";
    EXPECT_GT(row.start, previous_end);
    previous_end = row.end;
  }
  EXPECT_EQ(g_core_ticks, 7u * 2 * rows.size());
}

// The simulator's backend without a SimClock (boardlab-run --clock wall) is the model as well.
TEST(SimClockTest, ModelledKernelsWithoutAClockSayNpu) {
  auto r = compiler::Compile(testing::TinyDsCnn(), {});
  ASSERT_TRUE(r.ok());
  npu::NpuBackend backend(r->compilation.target.timing);
  std::vector<uint8_t> buffer(64 * 1024);
  etdump::EtdumpWriter writer(buffer.data(), buffer.size());
  RunPartitions(*r, backend, &writer);
  for (const etdump::ProfileRow& row : DelegateRows(writer)) {
    EXPECT_EQ(row.ran_on, ExecutionUnit::kNpu);
    EXPECT_GT(row.duration(), 0u);
  }
}

TEST(SimClockTest, InstalledClockIsTheExecutorClock) {
  timing::TimingParams params;
  SimClock clock(params);
  SimClock::Install(&clock);
  clock.AdvanceCpuCycles(42);
  Clock fn = &SimClock::Read;
  EXPECT_EQ(fn(), 42u);
  SimClock::Install(nullptr);
  EXPECT_EQ(fn(), 0u);
}

TEST(SimClockTest, NpuCyclesConvertAtTheClockRatio) {
  timing::TimingParams params;
  params.cpu_clock_hz = 300e6;
  params.npu_clock_hz = 200e6;
  SimClock clock(params);
  EXPECT_EQ(clock.NpuCyclesToTicks(200), 300u);
  EXPECT_EQ(clock.NpuCyclesToTicks(1), 2u);  // rounded up
}

TEST(SimClockTest, CpuShapeFromKernelCallArguments) {
  TensorView in, w, out;
  in.rank = w.rank = out.rank = 4;
  const int32_t in_dims[4] = {1, 8, 8, 3}, w_dims[4] = {4, 3, 3, 3}, out_dims[4] = {1, 8, 8, 4};
  for (int i = 0; i < 4; ++i) {
    in.dims[i] = in_dims[i];
    w.dims[i] = w_dims[i];
    out.dims[i] = out_dims[i];
  }
  Value vin, vw, vout, vint;
  vin.tag = vw.tag = vout.tag = ValueTag::kTensor;
  vin.tensor = &in;
  vw.tensor = &w;
  vout.tensor = &out;
  vint.tag = ValueTag::kInt;
  Value* args[] = {&vin, &vw, &vint, &vout};
  const auto conv = CpuShapeForKernelCall("boardlab::conv_2d.out", Span<Value* const>(args, 4));
  EXPECT_EQ(conv.kind, timing::CpuKernelClass::kConv);
  EXPECT_EQ(conv.macs, 256 * 27);
  const auto dw =
      CpuShapeForKernelCall("boardlab::depthwise_conv_2d.out", Span<Value* const>(args, 4));
  EXPECT_EQ(dw.kind, timing::CpuKernelClass::kDepthwise);
  EXPECT_EQ(dw.macs, 256 * 9);
  const auto add = CpuShapeForKernelCall("boardlab::add.out", Span<Value* const>(args, 4));
  EXPECT_EQ(add.kind, timing::CpuKernelClass::kElementwise);
  EXPECT_EQ(add.elements, 256);
  const auto sm = CpuShapeForKernelCall("boardlab::softmax.out", Span<Value* const>(args, 4));
  EXPECT_EQ(sm.kind, timing::CpuKernelClass::kLut);
}

Error FakeEval(KernelContext&, Span<Value* const>) { return Error::kOk; }
const KernelRegistration kFake = {"boardlab::add.out", nullptr, &FakeEval, 0};
const KernelRegistration* FakeLookup(const char* name) {
  return std::string(name) == "boardlab::add.out" ? &kFake : nullptr;
}

TEST(SimClockTest, WrappedKernelsAdvanceTheInstalledClock) {
  timing::TimingParams params;
  params.cpu_kernel_call_cycles = 10;
  params.cpu_cycles_per_element_elementwise = 1;
  SimClock clock(params);
  SimClock::Install(&clock);
  SimKernelLookup::SetBase(&FakeLookup);
  EXPECT_EQ(SimKernelLookup::Find("boardlab::nope.out"), nullptr);
  const KernelRegistration* reg = SimKernelLookup::Find("boardlab::add.out");
  ASSERT_NE(reg, nullptr);
  EXPECT_EQ(reg, SimKernelLookup::Find("boardlab::add.out"));
  TensorView out;
  out.rank = 1;
  out.dims[0] = 100;
  Value v;
  v.tag = ValueTag::kTensor;
  v.tensor = &out;
  Value* args[] = {&v};
  KernelContext ctx;
  EXPECT_EQ(reg->eval(ctx, Span<Value* const>(args, 1)), Error::kOk);
  const uint64_t once = clock.now();
  EXPECT_GT(once, 0u);
  EXPECT_EQ(reg->eval(ctx, Span<Value* const>(args, 1)), Error::kOk);
  EXPECT_EQ(clock.now(), 2 * once);
  SimClock::Install(nullptr);
}

// What the payloads of an artifact say about its weight prefetches: per loading kernel's debug
// id, the Prefetch's bytes and the model's DMA cycles for that kernel.
struct PrefetchFacts {
  int64_t bytes = 0;
  uint64_t model_cycles = 0;
};
std::map<int32_t, PrefetchFacts> PrefetchesOf(const compiler::CompileResult& r) {
  std::map<int32_t, PrefetchFacts> facts;
  auto blobs = compiler::LowerNpuPartitions(r.compilation);
  EXPECT_TRUE(blobs.ok());
  for (const auto& blob : *blobs) {
    Result<npu::NpuPayload> payload =
        npu::VerifyNpuPayload(Span<const uint8_t>(blob.bytes.data(), blob.bytes.size()));
    EXPECT_TRUE(payload.ok());
    const auto& program = *payload->program;
    for (uint32_t i = 0; i < program.commands()->size(); ++i) {
      if (program.commands_type()->Get(i) != ::boardlab::npu::Command::Prefetch) continue;
      const auto* prefetch =
          static_cast<const ::boardlab::npu::Prefetch*>(program.commands()->Get(i));
      // The kernel that reads the slot next loads these weights.
      for (uint32_t j = i + 1; j < program.commands()->size(); ++j) {
        if (program.commands_type()->Get(j) != ::boardlab::npu::Command::RunKernel) continue;
        const uint32_t k =
            static_cast<const ::boardlab::npu::RunKernel*>(program.commands()->Get(j))->kernel();
        const auto& kernel = *program.kernels()->Get(k);
        if (kernel.weight_slot() != static_cast<int32_t>(prefetch->slot())) continue;
        facts[kernel.debug_id()] = {static_cast<int64_t>(prefetch->size()),
                                    timing::NpuKernelCycles(npu::NpuShapeForKernel(program, kernel),
                                                            r.compilation.target.timing)
                                        .prefetch};
        break;
      }
    }
  }
  return facts;
}

absl::StatusOr<compiler::CompileResult> TinyDsCnnWithWeightsInFlash() {
  compiler::CompileOptions options;
  options.weights = compiler::WeightsPlacement::kFlash;
  return compiler::Compile(testing::TinyDsCnn(), options);
}

int32_t LoadedKernel(const etdump::ProfileRow& row) {
  const char* id = row.delegate_debug_name + std::strlen(npu::kWeightPrefetchEventPrefix);
  return static_cast<int32_t>(std::atoi(id));
}

uint32_t MetadataBytes(const etdump::ProfileRow& row) {
  const uint8_t* m = row.delegate_metadata;
  return m[3] | m[4] << 8 | m[5] << 16 | static_cast<uint32_t>(m[6]) << 24;
}

// An ETDump's NPU kernel events by debug id, and its weight prefetch events.
struct DelegateEvents {
  std::map<int32_t, etdump::ProfileRow> kernels;
  std::vector<etdump::ProfileRow> prefetches;
};
DelegateEvents SplitDelegateRows(etdump::EtdumpWriter& writer) {
  DelegateEvents events;
  for (const etdump::ProfileRow& row : DelegateRows(writer)) {
    if (row.delegate_debug_id != -1) events.kernels[row.delegate_debug_id] = row;
    if (row.delegate_debug_name != nullptr) events.prefetches.push_back(row);
  }
  return events;
}

// Under the timing model a kernel costs max(compute, SRAM traffic, prefetch): its own weight
// transfer overlaps it. Each Prefetch is one named delegate event starting with the kernel that
// reads it, lasting the model's DMA cycles, on the DMA.
TEST(SimClockTest, ModelledWeightPrefetchesOverlapTheKernelThatReadsThem) {
  auto r = TinyDsCnnWithWeightsInFlash();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->compilation.memory.weights_in_flash);
  const std::map<int32_t, PrefetchFacts> facts = PrefetchesOf(*r);
  ASSERT_FALSE(facts.empty());
  SimClock clock(r->compilation.target.timing);
  std::vector<uint8_t> buffer(64 * 1024);
  etdump::EtdumpWriter writer(buffer.data(), buffer.size());
  RunOnce(*r, clock, &writer);
  const DelegateEvents events = SplitDelegateRows(writer);
  const std::map<int32_t, etdump::ProfileRow>& kernels = events.kernels;
  const std::vector<etdump::ProfileRow>& prefetches = events.prefetches;
  ASSERT_EQ(prefetches.size(), facts.size());
  for (const etdump::ProfileRow& p : prefetches) {
    const int32_t id = LoadedKernel(p);
    ASSERT_EQ(facts.count(id), 1u) << p.delegate_debug_name;
    const etdump::ProfileRow& kernel = kernels.at(id);
    EXPECT_EQ(p.ran_on, ExecutionUnit::kDma);
    EXPECT_EQ(p.delegate_debug_id, -1);
    ASSERT_EQ(p.delegate_metadata_size, npu::kPrefetchMetadataBytes);
    EXPECT_EQ(MetadataBytes(p), facts.at(id).bytes);
    EXPECT_EQ(p.start, kernel.start);
    EXPECT_EQ(p.duration(), clock.NpuCyclesToTicks(facts.at(id).model_cycles));
    EXPECT_LE(p.end, kernel.end);
  }
}

// On the core the copy is a memcpy at the Prefetch command, timed by the board clock, before the
// kernel that reads it; it says it ran on the Cortex-M33.
TEST(SimClockTest, WeightCopiesOnTheCoreAreTimedWhereTheyHappen) {
  auto r = TinyDsCnnWithWeightsInFlash();
  ASSERT_TRUE(r.ok()) << r.status();
  const std::map<int32_t, PrefetchFacts> facts = PrefetchesOf(*r);
  npu::NpuBackend backend(r->compilation.target.timing, npu::EmulatedOnCore{&FakeCoreClock});
  EXPECT_EQ(backend.prefetch_ran_on(), ExecutionUnit::kDmaEmulatedCortexM33);
  std::vector<uint8_t> buffer(64 * 1024);
  etdump::EtdumpWriter writer(buffer.data(), buffer.size());
  g_core_ticks = 0;
  RunPartitions(*r, backend, &writer);
  const DelegateEvents events = SplitDelegateRows(writer);
  const std::map<int32_t, etdump::ProfileRow>& kernels = events.kernels;
  const std::vector<etdump::ProfileRow>& prefetches = events.prefetches;
  ASSERT_EQ(prefetches.size(), facts.size());
  for (const etdump::ProfileRow& p : prefetches) {
    EXPECT_EQ(p.ran_on, ExecutionUnit::kDmaEmulatedCortexM33);
    EXPECT_EQ(p.duration(), 7u) << "one core clock read before and one after the copy";
    EXPECT_EQ(MetadataBytes(p), facts.at(LoadedKernel(p)).bytes);
    EXPECT_LE(p.end, kernels.at(LoadedKernel(p)).start);
  }
}

}  // namespace
}  // namespace boardlab::runtime::sim
