#pragma once

// Delegate backends: what a DelegateCall instruction runs (ExecuTorch's runtime/backend shape).
// boardlab has one, the NPU engine "BoardlabNeutronBackend" (runtime/npu/); the executor looks
// backends up by the id written in BackendDelegate.id.
//
//   class NpuBackend : public Backend { ... };
//   NpuBackend npu;                        // must outlive every Method that uses it
//   BackendRegistry registry;
//   registry.Register(&npu);

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/event_tracer.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor_view.h"

namespace boardlab::runtime {

/// Memory and context a backend gets while initialising and running one delegate instance.
struct BackendContext {
  MemoryAllocator* persistent = nullptr;  // lives as long as the Method; for Init
  MemoryAllocator* temp = nullptr;        // reset after every instruction; for Execute
  uint8_t* arena = nullptr;               // planned buffer 1 (activations)
  size_t arena_size = 0;
  uint8_t* weight_scratch = nullptr;  // planned buffer 2 (weights prefetched from flash), or null
  size_t weight_scratch_size = 0;
  EventTracer* tracer = nullptr;  // may be null
  int32_t chain = 0;              // the DELEGATE_CALL's chain and instruction, for events
  int32_t instruction = -1;
};

class Backend {
 public:
  virtual ~Backend() = default;

  /// The id the compiler writes into BackendDelegate.id.
  virtual const char* id() const = 0;

  /// Verifies `processed` (the delegate blob; it outlives the handle) and prepares a handle,
  /// allocating only from ctx.persistent. Errors: kInvalidProgram for a corrupt blob,
  /// kDelegateMemoryAllocationFailed when the persistent allocator is full.
  virtual Result<void*> Init(Span<const uint8_t> processed, BackendContext& ctx) = 0;

  /// Runs the delegate: `args` are the DelegateCall's tensors, inputs then outputs.
  virtual Error Execute(void* handle, Span<TensorView* const> args, BackendContext& ctx) = 0;

  /// Simulated cycles of the last Execute of `handle` (0 when the backend does not model time).
  virtual uint64_t LastCycles(void* /*handle*/) const { return 0; }
};

}  // namespace boardlab::runtime
