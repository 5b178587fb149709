#pragma once

// Shared doubles for the executor tests (program_test, method_test, executor_test,
// allocation_test): compile tiny TFLite models to .pte in-process, hold them in aligned memory,
// and provide a fake kernel table, a fake NPU backend and a recording tracer.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/driver.h"
#include "gtest/gtest.h"
#include "runtime/core/event_tracer.h"
#include "runtime/executor/backend.h"
#include "runtime/executor/backend_registry.h"
#include "runtime/executor/kernel.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "tests/support/test_models.h"

namespace boardlab::runtime::testing {

/// Bytes at an address aligned like malloc's strongest guarantee (Program::Load requires it).
class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(const std::vector<uint8_t>& bytes) { Assign(bytes.data(), bytes.size()); }
  AlignedBytes(const uint8_t* data, size_t size) { Assign(data, size); }
  void Assign(const uint8_t* data, size_t size) {
    storage_.assign(size / sizeof(std::max_align_t) + 1, std::max_align_t{});
    size_ = size;
    if (size > 0) std::memcpy(storage_.data(), data, size);
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(storage_.data()); }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(storage_.data()); }
  size_t size() const { return size_; }
  Span<const uint8_t> span() const { return {data(), size_}; }
  std::vector<uint8_t> vector() const { return {data(), data() + size_}; }

 private:
  std::vector<std::max_align_t> storage_;
  size_t size_ = 0;
};

/// Compiles `model` with `options`; fails the test (empty result) on a compiler error.
inline std::vector<uint8_t> CompilePte(const std::vector<uint8_t>& model,
                                       const compiler::CompileOptions& options,
                                       compiler::Compilation* compilation = nullptr) {
  absl::StatusOr<compiler::CompileResult> r = compiler::Compile(model, options);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  if (compilation != nullptr) *compilation = r->compilation;
  return r->pte;
}

inline compiler::CompileOptions CpuOnly() {
  compiler::CompileOptions o;
  o.cpu_only = true;
  return o;
}

/// ADD of two [1,4,4,8] int8 activations, all on the CPU: no constants, so a bare flatbuffer.
inline std::vector<uint8_t> AddModel() {
  return boardlab::testing::SingleBinaryBuilder(compiler::OpType::kAdd, {1, 4, 4, 8}, {1, 4, 4, 8})
      .Finish();
}

// ---- Fake kernels -------------------------------------------------------------------------

/// Counts of fake kernel activity, reset by ResetFakeKernels().
struct FakeKernelStats {
  int prepares = 0;
  int evals = 0;
  bool temp_was_reset = true;  // false if a kernel saw leftover temp allocations
  bool fail_prepare = false;   // make every Prepare fail with kInvalidProgram
};
inline FakeKernelStats& FakeStats() {
  static FakeKernelStats stats;
  return stats;
}
inline void ResetFakeKernels() { FakeStats() = FakeKernelStats{}; }

inline Error FakePrepare(KernelContext& ctx, Span<Value* const> args) {
  ++FakeStats().prepares;
  if (FakeStats().fail_prepare) {
    RT_CHECK_OR_RETURN_ERROR(false, kInvalidProgram, "fake prepare refuses");
  }
  RT_CHECK_OR_RETURN_ERROR(!args.empty() && args[args.size() - 1]->is_tensor(), kInvalidProgram,
                           "fake kernel: last argument is not a tensor");
  // op_data arrives zeroed; record something to prove it persists into Eval.
  if (ctx.op_data != nullptr) *static_cast<uint32_t*>(ctx.op_data) = 0xC0FFEEu;
  return Error::kOk;
}

/// Prepare of the fake ADD: checks what its Eval relies on, as a real kernel's Prepare would.
inline Error FakeAddPrepare(KernelContext& ctx, Span<Value* const> args) {
  RT_RETURN_IF_ERROR(FakePrepare(ctx, args));
  RT_CHECK_OR_RETURN_ERROR(args.size() >= 3 && args[0]->is_tensor() && args[1]->is_tensor(),
                           kInvalidProgram, "fake add: inputs are not tensors");
  const TensorView* out = args[args.size() - 1]->tensor;
  for (int i = 0; i < 2; ++i) {
    const TensorView* in = args[i]->tensor;
    RT_CHECK_OR_RETURN_ERROR(in->type == ScalarType::kChar && out->type == ScalarType::kChar &&
                                 in->NumElements() == out->NumElements(),
                             kInvalidProgram, "fake add: shapes or types differ");
  }
  return Error::kOk;
}

/// ADD as the fake sees it: out[i] = saturate(a[i] + b[i]) on raw int8 (quantization ignored).
inline Error FakeAddEval(KernelContext& ctx, Span<Value* const> args) {
  ++FakeStats().evals;
  if (ctx.temp != nullptr && ctx.temp->used() != 0) FakeStats().temp_was_reset = false;
  if (ctx.temp != nullptr) (void)ctx.temp->Allocate(64);  // must be gone by the next kernel
  if (ctx.op_data == nullptr || *static_cast<uint32_t*>(ctx.op_data) != 0xC0FFEEu) {
    return Error::kInternal;
  }
  const TensorView* a = args[0]->tensor;
  const TensorView* b = args[1]->tensor;
  TensorView* out = args[args.size() - 1]->tensor;
  for (int64_t i = 0; i < out->NumElements(); ++i) {
    int v = a->As<int8_t>()[i] + b->As<int8_t>()[i];
    v = v < -128 ? -128 : v > 127 ? 127 : v;
    out->As<int8_t>()[i] = static_cast<int8_t>(v);
  }
  return Error::kOk;
}

/// Every other op: fills the output (last argument) with 0x11.
inline Error FakeFillEval(KernelContext& ctx, Span<Value* const> args) {
  ++FakeStats().evals;
  if (ctx.temp != nullptr && ctx.temp->used() != 0) FakeStats().temp_was_reset = false;
  TensorView* out = args[args.size() - 1]->tensor;
  std::memset(out->data, 0x11, static_cast<size_t>(out->NumBytes()));
  return Error::kOk;
}

/// A lookup that knows every "boardlab::*" key: ADD gets FakeAddEval, the rest FakeFillEval.
inline const KernelRegistration* FakeLookup(const char* name) {
  static const KernelRegistration kAdd = {"boardlab::add.out", FakeAddPrepare, FakeAddEval, 16};
  static const KernelRegistration kFill = {"fake", FakePrepare, FakeFillEval, 8};
  if (std::strcmp(name, "boardlab::add.out") == 0) return &kAdd;
  if (std::strncmp(name, "boardlab::", 10) == 0) return &kFill;
  return nullptr;
}

inline const KernelRegistration* NoKernels(const char*) { return nullptr; }

// ---- Fake backend ---------------------------------------------------------------------------

/// Stands in for the NPU backend: Init checks the "BLNP" magic and takes some persistent memory;
/// Execute fills each output (arguments after `num_inputs`, guessed as all but the first) with
/// 0x22, logs one delegate event and reports 1000 cycles.
class FakeNpuBackend : public Backend {
 public:
  const char* id() const override { return "BoardlabNeutronBackend"; }
  Result<void*> Init(Span<const uint8_t> processed, BackendContext& ctx) override {
    ++inits;
    if (processed.size() < 4 || std::memcmp(processed.data(), "BLNP", 4) != 0) {
      return Error::kInvalidProgram;
    }
    void* handle = ctx.persistent->Allocate(48);
    if (handle == nullptr) return Error::kDelegateMemoryAllocationFailed;
    return handle;
  }
  Error Execute(void* handle, Span<TensorView* const> args, BackendContext& ctx) override {
    ++executes;
    last_num_args = args.size();
    last_instruction = ctx.instruction;
    for (size_t i = 1; i < args.size(); ++i) {
      std::memset(args[i]->data, 0x22, static_cast<size_t>(args[i]->NumBytes()));
    }
    if (ctx.tracer != nullptr) {
      ctx.tracer->LogDelegateEvent(10, ctx.chain, ctx.instruction, 5, 9, nullptr, 0);
    }
    return handle != nullptr ? Error::kOk : Error::kDelegateInvalidHandle;
  }
  uint64_t LastCycles(void*) const override { return 1000; }

  int inits = 0;
  int executes = 0;
  size_t last_num_args = 0;
  int32_t last_instruction = -2;
};

// ---- Recording tracer -------------------------------------------------------------------------

/// Keeps events in a fixed array (no heap while recording, so it can run in the heap-count test).
class RecordingTracer : public EventTracer {
 public:
  struct Event {
    const char* name;  // null for delegate events
    int32_t delegate_id;
    int32_t chain;
    int32_t instruction;
    Ticks start;
    Ticks end;
  };
  void BeginRun(const char* name) override {
    last_run = name;
    ++runs;
  }
  void LogProfileEvent(const char* name, int32_t chain, int32_t instruction, Ticks start,
                       Ticks end) override {
    Add({name, -1, chain, instruction, start, end});
  }
  void LogDelegateEvent(int32_t id, int32_t chain, int32_t instruction, Ticks start, Ticks end,
                        const uint8_t*, uint32_t) override {
    Add({nullptr, id, chain, instruction, start, end});
  }
  void Clear() {
    count = 0;
    runs = 0;
  }

  static constexpr size_t kCapacity = 256;
  Event events[kCapacity] = {};
  size_t count = 0;
  int runs = 0;
  const char* last_run = nullptr;

 private:
  void Add(const Event& e) {
    if (count < kCapacity) events[count++] = e;
  }
};

// ---- Memory -----------------------------------------------------------------------------------

/// Owns the three memory roles for one Method, sized from the program.
struct TestMemory {
  explicit TestMemory(const Program& program, size_t persistent_bytes = 256 * 1024,
                      size_t temp_bytes = 64 * 1024)
      : persistent_pool(persistent_bytes + 16),
        temp_pool(temp_bytes + 16),
        persistent(Align(persistent_pool), persistent_bytes),
        temp(Align(temp_pool), temp_bytes) {
    Result<size_t> n = program.NumPlannedBuffers("forward");
    EXPECT_TRUE(n.ok());
    for (size_t i = 0; n.ok() && i < *n; ++i) {
      Result<size_t> size = program.PlannedBufferSize("forward", i);
      EXPECT_TRUE(size.ok());
      buffers.emplace_back(size.ok() ? *size + 16 : 16);
    }
    for (size_t i = 0; i < buffers.size(); ++i) {
      planned.emplace_back(Align(buffers[i]), buffers[i].size() - 16);
    }
  }
  MemoryManager manager() {
    return MemoryManager(&persistent, {planned.data(), planned.size()}, &temp);
  }

  static uint8_t* Align(std::vector<uint8_t>& v) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(v.data());
    return v.data() + ((16 - p % 16) % 16);
  }

  std::vector<uint8_t> persistent_pool;
  std::vector<uint8_t> temp_pool;
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<Span<uint8_t>> planned;
  MemoryAllocator persistent;
  MemoryAllocator temp;
};

}  // namespace boardlab::runtime::testing
