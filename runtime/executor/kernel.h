#pragma once

// CPU kernels as the executor calls them (STYLE.md rules 8 and 10). A kernel is registered under
// the operator key the compiler writes, "boardlab::<op>.out" (docs/artifact-format.md 2.1), with
// two functions:
//   Prepare: runs once at load. Checks argument count, types, shapes and quantization, and may
//            precompute into `op_data` (ctx.persistent, op_data_size bytes). Errors are load
//            errors (kInvalidProgram with LastErrorMessage()).
//   Eval:    runs every inference, without re-checking what Prepare checked; may use ctx.temp
//            (reset after every kernel call) for scratch, and may end the inference early
//            (ctx.end_inference).
// `args` are the KernelCall's values: inputs, then parameters, then outputs.

#include <cstddef>

#include "runtime/core/error.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/span.h"
#include "runtime/executor/value.h"

namespace boardlab::runtime {

struct KernelContext {
  MemoryAllocator* persistent = nullptr;
  MemoryAllocator* temp = nullptr;
  void* op_data = nullptr;  // op_data_size bytes from `persistent`, zeroed, 16-byte aligned
  // Set by an Eval to end this inference after it, as TFLite Micro's kTfLiteAbort does (a
  // streaming op that has not gathered enough input yet): the rest of the chain is skipped and
  // Method::produced_outputs() turns false. Not an error.
  bool end_inference = false;
};

using KernelPrepareFn = Error (*)(KernelContext& ctx, Span<Value* const> args);
using KernelEvalFn = Error (*)(KernelContext& ctx, Span<Value* const> args);

struct KernelRegistration {
  const char* name;  // "boardlab::conv_2d.out"
  KernelPrepareFn prepare;
  KernelEvalFn eval;
  size_t op_data_size;
  /// Eval changes op_data (a delay line, a noise estimate, a ring): the state carries over
  /// between inferences, and KernelCalls of this kernel with the same arguments share one
  /// op_data, prepared once (docs/artifact-format.md 2.2, TFLite Micro's one node per operator).
  bool keeps_state = false;
};

/// Every CPU kernel boardlab has, as a static table (runtime/kernels/registry.cc).
Span<const KernelRegistration> AllKernels();

/// The registration for `name` ("boardlab::conv_2d.out"), or nullptr.
const KernelRegistration* FindKernel(const char* name);

}  // namespace boardlab::runtime
