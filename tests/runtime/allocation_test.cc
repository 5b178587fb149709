// Allocation-failure sweep (STYLE.md rule 24; ExecuTorch allocation_failure_stress_test): every
// persistent size below what a Method needs must fail cleanly with kMemoryAllocationFailed (or
// the backend's own allocation error), never crash or write outside the buffer (ASan), and the
// exact size must succeed.

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/executor/method.h"
#include "tests/runtime/executor_test_support.h"

namespace boardlab::runtime {
namespace {

using testing::AlignedBytes;
using testing::CompilePte;

void SweepPersistentSizes(const std::vector<uint8_t>& pte) {
  AlignedBytes bytes(pte);
  Result<Program> p = Program::Load(bytes.span());
  ASSERT_TRUE(p.ok()) << LastErrorMessage();
  testing::TestMemory memory(*p);
  testing::FakeNpuBackend npu;
  BackendRegistry registry;
  ASSERT_EQ(registry.Register(&npu), Error::kOk);

  // Pass 1: measure with plenty of memory.
  size_t needed = 0;
  {
    MemoryManager manager = memory.manager();
    Result<Method> m = p->LoadMethod("forward", manager, registry, nullptr, testing::FakeLookup);
    ASSERT_TRUE(m.ok()) << LastErrorMessage();
    needed = m->persistent_bytes();
    EXPECT_EQ(needed, memory.persistent.used());
  }
  ASSERT_GT(needed, 0u);

  // Pass 2: every smaller size fails cleanly. Each buffer is exactly `size` bytes on the heap so
  // that ASan catches any write past it.
  for (size_t size = 0; size < needed; ++size) {
    // operator new returns 16-aligned blocks on our hosts, like the sizing pass's pool.
    std::vector<uint8_t> exact(size);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(exact.data()) % 16, 0u);
    MemoryAllocator persistent(exact.data(), size);
    MemoryManager manager(&persistent, {memory.planned.data(), memory.planned.size()},
                          &memory.temp);
    Result<Method> m = p->LoadMethod("forward", manager, registry, nullptr, testing::FakeLookup);
    ASSERT_FALSE(m.ok()) << "loaded with " << size << " of " << needed << " bytes";
    ASSERT_TRUE(m.error() == Error::kMemoryAllocationFailed ||
                m.error() == Error::kDelegateMemoryAllocationFailed)
        << "size " << size << ": " << ToString(m.error()) << " " << LastErrorMessage();
  }

  // The measured size is enough, and the method runs.
  std::vector<uint8_t> pool(needed + 16);
  MemoryAllocator persistent(testing::TestMemory::Align(pool), needed);
  MemoryManager manager(&persistent, {memory.planned.data(), memory.planned.size()}, &memory.temp);
  Result<Method> m = p->LoadMethod("forward", manager, registry, nullptr, testing::FakeLookup);
  ASSERT_TRUE(m.ok()) << LastErrorMessage();
  EXPECT_EQ(m->Execute(), Error::kOk) << LastErrorMessage();
}

TEST(AllocationFailure, PersistentSweepCpuProgram) {
  SweepPersistentSizes(CompilePte(boardlab::testing::TinyDsCnn(), testing::CpuOnly()));
}

TEST(AllocationFailure, PersistentSweepDelegateProgram) {
  compiler::CompileOptions options;
  options.no_npu = {compiler::OpType::kFullyConnected};
  SweepPersistentSizes(CompilePte(boardlab::testing::TinyDsCnn(), options));
}

TEST(AllocationFailure, NullPersistentAllocatorIsInvalidArgument) {
  AlignedBytes bytes(CompilePte(testing::AddModel(), testing::CpuOnly()));
  Result<Program> p = Program::Load(bytes.span());
  ASSERT_TRUE(p.ok());
  testing::TestMemory memory(*p);
  BackendRegistry registry;
  MemoryManager manager(nullptr, {memory.planned.data(), memory.planned.size()}, &memory.temp);
  EXPECT_EQ(p->LoadMethod("forward", manager, registry, nullptr, testing::FakeLookup).error(),
            Error::kInvalidArgument);
}

}  // namespace
}  // namespace boardlab::runtime
