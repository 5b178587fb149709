#pragma once

// A runnable method of a loaded Program (ExecuTorch's runtime/executor/method.h shape). Built by
// Program::LoadMethod entirely inside the caller's MemoryManager; after that, nothing allocates:
// SetInput copies into the planned arena, Execute runs the instruction chain, GetOutput returns
// views into the arena.
//
//   Result<Method> method = program.LoadMethod("forward", memory, backends, tracer);
//   RT_RETURN_IF_ERROR(method->SetInput(0, image, sizeof(image)));
//   RT_RETURN_IF_ERROR(method->Execute());
//   const TensorView* scores = method->GetOutput(0);
//
// Profile events (when a tracer is given): one run block "Execute" per Execute, "Method::execute"
// around the whole chain (chain -1, instruction -1), and per instruction, with chain 0 and the
// chain-local instruction index: KernelCall -> "OPERATOR_CALL" enclosing
// "native_call_<op>.<overload>" (operator name without its "boardlab::" namespace, e.g.
// "native_call_conv_2d.out"); DelegateCall -> "DELEGATE_CALL" (the backend adds its own delegate
// events inside). An inference a kernel ended early (KernelContext::end_inference) adds a
// zero-length "Method::ended_early" (chain 0, the ending instruction) before "Method::execute"
// closes. Timestamps come from MethodOptions::clock.

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/event_tracer.h"
#include "runtime/core/event_tracer_hooks.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor_view.h"
#include "runtime/executor/backend.h"
#include "runtime/executor/kernel.h"
#include "runtime/executor/program.h"
#include "runtime/executor/value.h"

namespace boardlab::runtime {

/// What one instruction of the chain is, for profilers and tools.
enum class InstructionKind : uint8_t { kKernelCall, kDelegateCall, kMove, kJumpFalse, kFree };

struct InstructionInfo {
  InstructionKind kind = InstructionKind::kKernelCall;
  /// KernelCall: the operator key ("boardlab::conv_2d.out"); DelegateCall: the backend id.
  const char* name = nullptr;
  /// KernelCall: its profile event name ("native_call_conv_2d.out"); otherwise null.
  const char* event_name = nullptr;
  /// DelegateCall: index into ExecutionPlan.delegates; otherwise -1.
  int32_t delegate_index = -1;
};

class Method {
 public:
  Method(Method&&) = default;
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;
  Method& operator=(Method&&) = delete;
  ~Method() = default;

  size_t num_inputs() const { return num_inputs_; }
  size_t num_outputs() const { return num_outputs_; }

  /// The tensor of input / output `i` (shape, type, data pointer into the planned arena), or
  /// nullptr when `i` is out of range. Valid as long as the Method.
  const TensorView* input(size_t i) const;
  const TensorView* GetOutput(size_t i) const;

  /// Copies `size` bytes from `data` into input `i`. Errors: kInvalidArgument when `i` is out of
  /// range, `data` is null or `size` differs from the tensor's byte size.
  [[nodiscard]] Error SetInput(size_t i, const void* data, size_t size);

  /// Runs the chain once. Errors: whatever a kernel's Eval or a backend's Execute returns (the
  /// chain stops at the failing instruction); kInvalidProgram for a jump outside the chain.
  /// A kernel may also end the inference early without an error (KernelContext::end_inference,
  /// TFLite Micro's CIRCULAR_BUFFER between its runs): Execute returns kOk and
  /// produced_outputs() is false.
  [[nodiscard]] Error Execute();

  /// Whether the last Execute ran the whole chain, so the outputs are this inference's. False
  /// when a streaming op ended it early ("no output yet": the output bytes are whatever the
  /// arena held, possibly shared with this inference's inputs) and before the first Execute.
  bool produced_outputs() const { return produced_outputs_; }

  size_t num_instructions() const { return num_instructions_; }
  /// Instruction `i` of the chain (kind kFree with null names when `i` is out of range).
  InstructionInfo instruction_info(size_t i) const;

  /// Backend::LastCycles of the delegate DelegateCall `instruction` runs (0 for other
  /// instructions or backends without a timing model).
  uint64_t LastDelegateCycles(size_t instruction) const;

  /// Bytes of the persistent allocator this Method used, counted from the allocator's state
  /// before LoadMethod: size a fixed persistent buffer by loading once with a large one.
  size_t persistent_bytes() const { return persistent_bytes_; }

  /// The Method's options (clock) and its tracer (nullable).
  Clock clock() const { return clock_; }
  EventTracer* tracer() const { return tracer_; }

 private:
  friend class Program;
  struct Instruction;
  struct Delegate;

  Method() = default;

  Error ExecuteInstruction(size_t pc, size_t& next_pc);

  Value* values_ = nullptr;
  size_t num_values_ = 0;
  Instruction* instructions_ = nullptr;
  size_t num_instructions_ = 0;
  Delegate* delegates_ = nullptr;
  size_t num_delegates_ = 0;
  TensorView** inputs_ = nullptr;
  size_t num_inputs_ = 0;
  TensorView** outputs_ = nullptr;
  size_t num_outputs_ = 0;
  MemoryAllocator* persistent_ = nullptr;
  MemoryAllocator* temp_ = nullptr;
  // In persistent memory so that its address stays fixed when the Method moves: backends may
  // keep a pointer to it from Init.
  BackendContext* backend_context_ = nullptr;
  EventTracer* tracer_ = nullptr;
  Clock clock_ = nullptr;
  size_t persistent_bytes_ = 0;
  bool produced_outputs_ = false;
};

}  // namespace boardlab::runtime
