// End-to-end executor tests: compiled programs through load and execute with test kernels and a
// fake NPU backend, a heap-allocation count around Execute, the backend registry and the output
// verifier.

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/executor/backend_registry.h"
#include "runtime/executor/method.h"
#include "runtime/verify/output_verifier.h"
#include "tests/runtime/executor_test_support.h"

// Counts every global operator new while `g_counting` is set. Replacing the global operators is
// process-wide; counting is off except around the code under test.
namespace {
std::atomic<bool> g_counting{false};
std::atomic<size_t> g_allocations{0};
}  // namespace

void* operator new(size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) ++g_allocations;
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) std::abort();
  return p;
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  if (g_counting.load(std::memory_order_relaxed)) ++g_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
// GCC 12 cannot see that these pair with the malloc-based operator new above once they inline.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace boardlab::runtime {
namespace {

using testing::AlignedBytes;
using testing::CompilePte;

TEST(ExecutorEndToEnd, MixedCpuAndNpuProgramRuns) {
  compiler::CompileOptions options;
  options.no_npu = {compiler::OpType::kFullyConnected};
  AlignedBytes bytes(CompilePte(boardlab::testing::TinyDsCnn(), options));
  Result<Program> p = Program::Load(bytes.span());
  ASSERT_TRUE(p.ok()) << LastErrorMessage();
  testing::TestMemory memory(*p);
  testing::FakeNpuBackend npu;
  BackendRegistry registry;
  ASSERT_EQ(registry.Register(&npu), Error::kOk);
  testing::RecordingTracer tracer;
  MemoryManager manager = memory.manager();
  Result<Method> m = p->LoadMethod("forward", manager, registry, &tracer, testing::FakeLookup);
  ASSERT_TRUE(m.ok()) << LastErrorMessage();
  size_t kernels = 0, delegates = 0;
  for (size_t i = 0; i < m->num_instructions(); ++i) {
    const InstructionKind kind = m->instruction_info(i).kind;
    kernels += kind == InstructionKind::kKernelCall;
    delegates += kind == InstructionKind::kDelegateCall;
  }
  EXPECT_GE(kernels, 1u);
  EXPECT_GE(delegates, 1u);
  std::vector<int8_t> input(static_cast<size_t>(m->input(0)->NumBytes()), 3);
  ASSERT_EQ(m->SetInput(0, input.data(), input.size()), Error::kOk);
  tracer.Clear();
  ASSERT_EQ(m->Execute(), Error::kOk) << LastErrorMessage();
  EXPECT_EQ(npu.executes, static_cast<int>(delegates));
  // One OPERATOR_CALL per kernel call and one DELEGATE_CALL per delegate call.
  size_t operator_calls = 0, delegate_calls = 0;
  for (size_t i = 0; i < tracer.count; ++i) {
    const char* name = tracer.events[i].name;
    if (name == nullptr) continue;
    operator_calls += std::strcmp(name, "OPERATOR_CALL") == 0;
    delegate_calls += std::strcmp(name, "DELEGATE_CALL") == 0;
  }
  EXPECT_EQ(operator_calls, kernels);
  EXPECT_EQ(delegate_calls, delegates);
}

TEST(ExecutorHeap, ExecuteDoesNotAllocate) {
  compiler::CompileOptions options;
  options.no_npu = {compiler::OpType::kFullyConnected};
  AlignedBytes bytes(CompilePte(boardlab::testing::TinyDsCnn(), options));
  Result<Program> p = Program::Load(bytes.span());
  ASSERT_TRUE(p.ok()) << LastErrorMessage();
  testing::TestMemory memory(*p);
  testing::FakeNpuBackend npu;
  BackendRegistry registry;
  ASSERT_EQ(registry.Register(&npu), Error::kOk);
  testing::RecordingTracer tracer;
  MemoryManager manager = memory.manager();
  Result<Method> m = p->LoadMethod("forward", manager, registry, &tracer, testing::FakeLookup);
  ASSERT_TRUE(m.ok()) << LastErrorMessage();
  std::vector<int8_t> input(static_cast<size_t>(m->input(0)->NumBytes()), 1);

  g_allocations = 0;
  g_counting = true;
  Error set = m->SetInput(0, input.data(), input.size());
  Error first = m->Execute();
  Error second = m->Execute();
  g_counting = false;
  EXPECT_EQ(set, Error::kOk);
  EXPECT_EQ(first, Error::kOk);
  EXPECT_EQ(second, Error::kOk);
  EXPECT_EQ(g_allocations.load(), 0u);

  // The counter works: a vector allocation is seen.
  g_counting = true;
  std::vector<int>* v = new std::vector<int>(4);
  g_counting = false;
  delete v;
  EXPECT_GE(g_allocations.load(), 1u);
}

TEST(ExecutorBackendRegistry, RegistersFindsAndRejects) {
  BackendRegistry registry;
  testing::FakeNpuBackend a;
  EXPECT_EQ(registry.Find("BoardlabNeutronBackend"), nullptr);
  ASSERT_EQ(registry.Register(&a), Error::kOk);
  EXPECT_EQ(registry.Find("BoardlabNeutronBackend"), &a);
  EXPECT_EQ(registry.Find("Other"), nullptr);
  EXPECT_EQ(registry.Find(nullptr), nullptr);
  testing::FakeNpuBackend duplicate;
  EXPECT_EQ(registry.Register(&duplicate), Error::kInvalidArgument);
  EXPECT_EQ(registry.Register(nullptr), Error::kInvalidArgument);
}

TEST(ExecutorBackendRegistry, FullTableIsAnError) {
  struct Named : testing::FakeNpuBackend {
    const char* name = nullptr;
    const char* id() const override { return name; }
  };
  static const char* const kNames[] = {"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"};
  Named backends[9];
  BackendRegistry registry;
  for (size_t i = 0; i < BackendRegistry::kMaxBackends; ++i) {
    backends[i].name = kNames[i];
    ASSERT_EQ(registry.Register(&backends[i]), Error::kOk);
  }
  backends[8].name = kNames[8];
  EXPECT_EQ(registry.Register(&backends[8]), Error::kMemoryAllocationFailed);
}

TEST(ExecutorOutputVerifier, Int8WithinTolerancePasses) {
  const int8_t actual[] = {1, -5, 127, -128};
  const int8_t expected[] = {1, -4, 126, -128};
  OutputComparison c;
  ASSERT_EQ(CompareInt8(actual, expected, 1, &c), Error::kOk);
  EXPECT_TRUE(c.pass);
  EXPECT_EQ(c.mismatches, 0u);
  EXPECT_EQ(c.max_abs_diff, 1.0);
  EXPECT_EQ(c.first_mismatch, 4u);
  ASSERT_EQ(CompareInt8(actual, expected, 0, &c), Error::kOk);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.mismatches, 2u);
  EXPECT_EQ(c.first_mismatch, 1u);
}

TEST(ExecutorOutputVerifier, ExtremeInt8DifferenceDoesNotOverflow) {
  const int8_t actual[] = {127};
  const int8_t expected[] = {-128};
  OutputComparison c;
  ASSERT_EQ(CompareInt8(actual, expected, 254, &c), Error::kOk);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.max_abs_diff, 255.0);
}

TEST(ExecutorOutputVerifier, SizeMismatchIsInvalidArgument) {
  const int8_t actual[] = {1, 2};
  const int8_t expected[] = {1};
  OutputComparison c;
  EXPECT_EQ(CompareInt8(actual, expected, 0, &c), Error::kInvalidArgument);
  EXPECT_EQ(CompareInt8(actual, actual, -1, &c), Error::kInvalidArgument);
}

TEST(ExecutorOutputVerifier, ComparesTensorsOfWiderTypes) {
  int32_t actual[] = {100000, -3};
  int32_t expected[] = {100002, -3};
  TensorView view;
  view.type = ScalarType::kInt;
  view.rank = 1;
  view.dims[0] = 2;
  view.data = actual;
  OutputComparison c;
  ASSERT_EQ(
      CompareOutput(view, {reinterpret_cast<const uint8_t*>(expected), sizeof(expected)}, 1, &c),
      Error::kOk);
  EXPECT_FALSE(c.pass);
  EXPECT_EQ(c.max_abs_diff, 2.0);
  EXPECT_EQ(c.mismatches, 1u);
}

}  // namespace
}  // namespace boardlab::runtime
