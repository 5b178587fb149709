#pragma once

// The NPU command-stream engine: executes the kernels of a verified NPU payload in software with
// the Neutron's numerics (= the TFLite Micro int8 reference arithmetic, tflite-int8.md section 9),
// reading conv / depthwise / FC weights in the NPU block layout (docs/artifact-format.md 3.3) and
// copying constants into the weight-scratch slots on Prefetch commands (3.4). The simulator and
// the QEMU board run this instead of the hardware.
//
// Usage:
//   NpuExecEnv env{args, arena, weight_scratch};
//   for each command: ExecutePrefetch(payload, *prefetch, env) / ExecuteKernel(payload, k, env);
//
// Eval-time functions do no validation (STYLE.md rule 7): the payload must have passed
// VerifyNpuPayload() and BindingsFit() must have accepted the environment.

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor_view.h"
#include "runtime/npu/npu_payload.h"

namespace boardlab::runtime::npu {

/// Where a payload's tensors live during one Execute. Nothing is owned.
struct NpuExecEnv {
  Span<TensorView* const> args;  // delegate arguments: inputs, then outputs
  uint8_t* arena = nullptr;      // activation arena (Intermediate tensors at arena_offset)
  size_t arena_size = 0;
  uint8_t* weight_scratch = nullptr;  // prefetch slots (slot i at i * slot_size)
  size_t weight_scratch_size = 0;
  // Optional kernel scratch (the Method's temp pool): a kernel may take memory from it for its
  // own run; the caller resets it after each ExecuteKernel. Null: kernels use their stack paths.
  MemoryAllocator* temp = nullptr;
};

/// Checks that `env` can hold the program: every intermediate inside the arena, the weight
/// scratch at least sram_weight_scratch_size and, with `check_args`, the argument count and each
/// argument's byte size equal to its payload tensor. kInvalidArgument otherwise.
[[nodiscard]] Error BindingsFit(const NpuPayload& payload, const NpuExecEnv& env,
                                bool check_args = true);

/// Copies the Prefetch's weight-section range into its scratch slot (the DMA the hardware does).
void ExecutePrefetch(const NpuPayload& payload, const ::boardlab::npu::Prefetch& prefetch,
                     const NpuExecEnv& env);

/// Runs kernel `kernel_index`. Returns kOk; kNotSupported only for kernel variants that a
/// verified payload cannot contain (kept as a defensive fallback, never hit in tests).
[[nodiscard]] Error ExecuteKernel(const NpuPayload& payload, uint32_t kernel_index,
                                  const NpuExecEnv& env);

/// TFLite QuantizeMultiplier (frexp, round half away from zero, 2^31 carry, flush below 2^-31),
/// for the parameters the payload leaves to the runtime (HARD_SWISH).
void QuantizeMultiplier(double real_multiplier, int32_t* multiplier, int32_t* shift);

}  // namespace boardlab::runtime::npu
