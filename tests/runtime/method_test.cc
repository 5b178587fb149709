#include "runtime/executor/method.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "boardlab/schema/program_generated.h"
#include "gtest/gtest.h"
#include "tests/runtime/executor_test_support.h"

namespace boardlab::runtime {
namespace {

namespace et = ::executorch_flatbuffer;
using testing::AlignedBytes;
using testing::CompilePte;
using testing::CpuOnly;
using testing::FakeLookup;
using testing::FakeNpuBackend;
using testing::FakeStats;
using testing::RecordingTracer;
using testing::TestMemory;

const std::vector<uint8_t>& AddCpuPte() {
  static const std::vector<uint8_t> pte = CompilePte(testing::AddModel(), CpuOnly());
  return pte;
}
const std::vector<uint8_t>& ConvNpuPte() {
  static const std::vector<uint8_t> pte =
      CompilePte(boardlab::testing::SingleConv2D(), compiler::CompileOptions{});
  return pte;
}

// A loaded program plus everything a Method needs, for tests that only vary one thing.
struct Fixture {
  explicit Fixture(const std::vector<uint8_t>& pte) : bytes(pte) {
    Result<Program> p = Program::Load(bytes.span());
    EXPECT_TRUE(p.ok()) << LastErrorMessage();
    if (p.ok()) program.emplace_back(std::move(p.get()));
    memory = std::make_unique<TestMemory>(program.at(0));
    EXPECT_EQ(registry.Register(&npu), Error::kOk);
    testing::ResetFakeKernels();
  }
  Result<Method> Load(KernelLookupFn lookup = FakeLookup, EventTracer* tracer = nullptr,
                      const MethodOptions& options = {}) {
    MemoryManager manager = memory->manager();
    return program.at(0).LoadMethod("forward", manager, registry, tracer, lookup, options);
  }

  AlignedBytes bytes;
  std::vector<Program> program;  // 0 or 1: Program has no default constructor
  std::unique_ptr<TestMemory> memory;
  FakeNpuBackend npu;
  BackendRegistry registry;
};

TEST(MethodLoad, RunsCpuGraphWithTestKernels) {
  Fixture f(AddCpuPte());
  Result<Method> m = f.Load();
  ASSERT_TRUE(m.ok()) << LastErrorMessage();
  ASSERT_EQ(m->num_inputs(), 2u);
  ASSERT_EQ(m->num_outputs(), 1u);
  EXPECT_EQ(FakeStats().prepares, 1);
  const TensorView* out = m->GetOutput(0);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->type, ScalarType::kChar);
  ASSERT_EQ(out->rank, 4);
  EXPECT_EQ(out->dims[3], 8);
  EXPECT_EQ(m->GetOutput(1), nullptr);
  EXPECT_EQ(m->input(2), nullptr);

  std::vector<int8_t> a(128), b(128);
  for (int i = 0; i < 128; ++i) {
    a[i] = static_cast<int8_t>(i - 64);
    b[i] = static_cast<int8_t>(100 - i);
  }
  ASSERT_EQ(m->SetInput(0, a.data(), a.size()), Error::kOk);
  ASSERT_EQ(m->SetInput(1, b.data(), b.size()), Error::kOk);
  ASSERT_EQ(m->Execute(), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(FakeStats().evals, 1);
  for (int i = 0; i < 128; ++i) {
    EXPECT_EQ(out->As<int8_t>()[i], static_cast<int8_t>(36)) << i;  // (i-64)+(100-i)
  }
  const InstructionInfo info = m->instruction_info(0);
  EXPECT_EQ(info.kind, InstructionKind::kKernelCall);
  EXPECT_STREQ(info.name, "boardlab::add.out");
  EXPECT_STREQ(info.event_name, "native_call_add.out");
  EXPECT_GT(m->persistent_bytes(), 0u);
}

TEST(MethodLoad, SetInputChecksIndexAndSize) {
  Fixture f(AddCpuPte());
  Result<Method> m = f.Load();
  ASSERT_TRUE(m.ok()) << LastErrorMessage();
  std::vector<int8_t> data(128);
  EXPECT_EQ(m->SetInput(0, data.data(), 127), Error::kInvalidArgument);
  EXPECT_NE(std::string(LastErrorMessage()).find("takes 128 bytes, got 127"), std::string::npos)
      << LastErrorMessage();
  EXPECT_EQ(m->SetInput(2, data.data(), 128), Error::kInvalidArgument);
  EXPECT_EQ(m->SetInput(0, nullptr, 128), Error::kInvalidArgument);
}

TEST(MethodLoad, MissingOperatorIsNamed) {
  Fixture f(AddCpuPte());
  Result<Method> m = f.Load(testing::NoKernels);
  EXPECT_EQ(m.error(), Error::kOperatorMissing);
  EXPECT_NE(std::string(LastErrorMessage()).find("'boardlab::add.out'"), std::string::npos)
      << LastErrorMessage();
}

TEST(MethodLoad, PrepareFailureStopsLoad) {
  Fixture f(AddCpuPte());
  FakeStats().fail_prepare = true;
  Result<Method> m = f.Load();
  EXPECT_EQ(m.error(), Error::kInvalidProgram);
  EXPECT_NE(std::string(LastErrorMessage()).find("fake prepare refuses"), std::string::npos)
      << LastErrorMessage();
}

TEST(MethodLoad, UnknownMethodIsNotFound) {
  Fixture f(AddCpuPte());
  MemoryManager manager = f.memory->manager();
  Result<Method> m = f.program[0].LoadMethod("backward", manager, f.registry, nullptr, FakeLookup);
  EXPECT_EQ(m.error(), Error::kNotFound);
}

TEST(MethodLoad, PlannedBufferSizeMustMatchArtifact) {
  Fixture f(AddCpuPte());
  Span<uint8_t> smaller(f.memory->planned[0].data(), f.memory->planned[0].size() - 1);
  MemoryManager manager(&f.memory->persistent, {&smaller, 1}, &f.memory->temp);
  Result<Method> m = f.program[0].LoadMethod("forward", manager, f.registry, nullptr, FakeLookup);
  EXPECT_EQ(m.error(), Error::kInvalidArgument);
  EXPECT_NE(std::string(LastErrorMessage()).find("activation arena"), std::string::npos)
      << LastErrorMessage();
  MemoryManager none(&f.memory->persistent, {}, &f.memory->temp);
  EXPECT_EQ(f.program[0].LoadMethod("forward", none, f.registry, nullptr, FakeLookup).error(),
            Error::kInvalidArgument);
}

TEST(MethodLoad, PlannedOffsetBeyondArenaIsInvalid) {
  // Shrink the artifact's arena size (and the arena with it): the tensors' planned offsets then
  // point past the end.
  AlignedBytes bytes(AddCpuPte());
  const et::ExecutionPlan* plan = et::GetProgram(bytes.data())->execution_plan()->Get(0);
  const auto* sizes = plan->non_const_buffer_sizes();
  ASSERT_EQ(sizes->size(), 2u);
  const size_t at =
      static_cast<size_t>(reinterpret_cast<const uint8_t*>(sizes->data() + 1) - bytes.data());
  const int64_t tiny = 16;
  // GCC 12 at -O2 traces the address back to the flatbuffer accessor's 1-byte table type and
  // reports an overflow that is not there.
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
  std::memcpy(bytes.data() + at, &tiny, sizeof(tiny));
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  Fixture f(bytes.vector());
  Result<Method> m = f.Load();
  EXPECT_EQ(m.error(), Error::kInvalidProgram);
  EXPECT_NE(std::string(LastErrorMessage()).find("outside planned buffer 1 (16 bytes)"),
            std::string::npos)
      << LastErrorMessage();
}

TEST(MethodLoad, UnknownBackendIsNamed) {
  AlignedBytes bytes(ConvNpuPte());
  Result<Program> p = Program::Load(bytes.span());
  ASSERT_TRUE(p.ok());
  TestMemory memory(*p);
  BackendRegistry empty;
  MemoryManager manager = memory.manager();
  Result<Method> m = p->LoadMethod("forward", manager, empty, nullptr, FakeLookup);
  EXPECT_EQ(m.error(), Error::kNotFound);
  EXPECT_NE(std::string(LastErrorMessage()).find("'BoardlabNeutronBackend'"), std::string::npos)
      << LastErrorMessage();
}

TEST(MethodLoad, DelegateInitFailureIsReported) {
  class RefusingBackend : public FakeNpuBackend {
   public:
    Result<void*> Init(Span<const uint8_t>, BackendContext&) override {
      return Error::kDelegateInvalidCompatibility;
    }
  } refusing;
  AlignedBytes bytes(ConvNpuPte());
  Result<Program> p = Program::Load(bytes.span());
  ASSERT_TRUE(p.ok());
  TestMemory memory(*p);
  BackendRegistry registry;
  ASSERT_EQ(registry.Register(&refusing), Error::kOk);
  MemoryManager manager = memory.manager();
  EXPECT_EQ(p->LoadMethod("forward", manager, registry, nullptr, FakeLookup).error(),
            Error::kDelegateInvalidCompatibility);
}

TEST(MethodExecute, RunsDelegateThroughBackend) {
  Fixture f(ConvNpuPte());
  Result<Method> m = f.Load();
  ASSERT_TRUE(m.ok()) << LastErrorMessage();
  EXPECT_EQ(f.npu.inits, 1);
  ASSERT_EQ(m->num_instructions(), 1u);
  EXPECT_EQ(m->instruction_info(0).kind, InstructionKind::kDelegateCall);
  EXPECT_STREQ(m->instruction_info(0).name, "BoardlabNeutronBackend");
  ASSERT_EQ(m->Execute(), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(f.npu.executes, 1);
  EXPECT_EQ(f.npu.last_num_args, 2u);
  EXPECT_EQ(f.npu.last_instruction, 0);
  EXPECT_EQ(m->LastDelegateCycles(0), 1000u);
  const TensorView* out = m->GetOutput(0);
  for (int64_t i = 0; i < out->NumElements(); ++i) ASSERT_EQ(out->As<int8_t>()[i], 0x22);
}

Ticks FakeClock() {
  static Ticks now = 0;
  return now += 10;
}

TEST(MethodExecute, ReportsProfileEventsWithPluggableClock) {
  Fixture f(AddCpuPte());
  RecordingTracer tracer;
  MethodOptions options;
  options.clock = FakeClock;
  Result<Method> m = f.Load(FakeLookup, &tracer, options);
  ASSERT_TRUE(m.ok()) << LastErrorMessage();
  tracer.Clear();
  ASSERT_EQ(m->Execute(), Error::kOk);
  EXPECT_STREQ(tracer.last_run, "Execute");
  ASSERT_EQ(tracer.count, 3u);
  // Inner events end first.
  EXPECT_STREQ(tracer.events[0].name, "native_call_add.out");
  EXPECT_STREQ(tracer.events[1].name, "OPERATOR_CALL");
  EXPECT_STREQ(tracer.events[2].name, "Method::execute");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(tracer.events[i].chain, 0);
    EXPECT_EQ(tracer.events[i].instruction, 0);
  }
  EXPECT_EQ(tracer.events[2].chain, -1);
  EXPECT_EQ(tracer.events[2].instruction, -1);
  // Nested timestamps from the fake clock (multiples of 10, strictly increasing).
  EXPECT_LT(tracer.events[2].start, tracer.events[1].start);
  EXPECT_LT(tracer.events[1].start, tracer.events[0].start);
  EXPECT_LT(tracer.events[0].end, tracer.events[1].end);
  EXPECT_LT(tracer.events[1].end, tracer.events[2].end);
  EXPECT_EQ(tracer.events[0].start % 10, 0u);
}

TEST(MethodExecute, DelegateEventsCarryInstruction) {
  Fixture f(ConvNpuPte());
  RecordingTracer tracer;
  Result<Method> m = f.Load(FakeLookup, &tracer);
  ASSERT_TRUE(m.ok()) << LastErrorMessage();
  tracer.Clear();
  ASSERT_EQ(m->Execute(), Error::kOk);
  ASSERT_EQ(tracer.count, 3u);
  EXPECT_EQ(tracer.events[0].name, nullptr);  // the backend's NPU kernel event
  EXPECT_EQ(tracer.events[0].delegate_id, 10);
  EXPECT_EQ(tracer.events[0].instruction, 0);
  EXPECT_STREQ(tracer.events[1].name, "DELEGATE_CALL");
  EXPECT_STREQ(tracer.events[2].name, "Method::execute");
}

TEST(MethodExecute, TempAllocatorIsResetAfterEveryKernel) {
  // TinyDsCnn on the CPU: several kernel calls; the fake kernels each leave temp allocations.
  Fixture f(CompilePte(boardlab::testing::TinyDsCnn(), CpuOnly()));
  Result<Method> m = f.Load();
  ASSERT_TRUE(m.ok()) << LastErrorMessage();
  ASSERT_GT(m->num_instructions(), 3u);
  ASSERT_EQ(m->Execute(), Error::kOk) << LastErrorMessage();
  ASSERT_EQ(m->Execute(), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(FakeStats().evals, static_cast<int>(2 * m->num_instructions()));
  EXPECT_TRUE(FakeStats().temp_was_reset);
  EXPECT_EQ(f.memory->temp.used(), 0u);
}

TEST(MethodExecute, KernelErrorNamesInstruction) {
  static const KernelRegistration kFailing = {"boardlab::add.out", nullptr,
                                              [](KernelContext&, Span<Value* const>) -> Error {
                                                RT_CHECK_OR_RETURN_ERROR(false, kInvalidArgument,
                                                                         "divisor is zero");
                                                return Error::kOk;
                                              },
                                              0};
  Fixture f(AddCpuPte());
  Result<Method> m = f.Load([](const char*) { return &kFailing; });
  ASSERT_TRUE(m.ok()) << LastErrorMessage();
  EXPECT_EQ(m->Execute(), Error::kInvalidArgument);
  const std::string message = LastErrorMessage();
  EXPECT_NE(message.find("instruction 0"), std::string::npos) << message;
  EXPECT_NE(message.find("divisor is zero"), std::string::npos) << message;
}

}  // namespace
}  // namespace boardlab::runtime
