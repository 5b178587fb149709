#pragma once

// The NPU delegate blob ("BLNP", docs/artifact-format.md section 3) as the runtime reads it, and
// its load-time verifier (STYLE.md rule 7: everything Execute relies on is checked here once, so
// the command-stream engine runs without checks).
//
// Usage:
//   Result<NpuPayload> payload = VerifyNpuPayload(blob);   // kInvalidProgram on any corruption
//   const npu::NpuProgram* program = payload->program;
//
// The views point into `blob`, which must outlive the NpuPayload.

#include <cstddef>
#include <cstdint>

#include "boardlab/schema/npu_payload_generated.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace boardlab::runtime::npu {

/// Blob header values (must match compiler/npu_lowering.h).
inline constexpr uint32_t kPayloadVersion = 1;
inline constexpr size_t kPayloadHeaderBytes = 16;
inline constexpr size_t kPayloadAlignment = 16;

struct NpuPayload {
  const ::boardlab::npu::NpuProgram* program = nullptr;
  Span<const uint8_t> weights;  // the weight section
  /// Delegate arguments the program expects (inputs then outputs).
  uint32_t num_inputs = 0;
  uint32_t num_outputs = 0;
};

/// Parses the header, verifies the flatbuffer and checks the program's internal consistency:
/// every index (commands -> kernels -> tensors -> arguments) in range, every weight-section
/// range (tensors, weights, biases, constants, prefetches) inside the section, every scratch
/// slot inside sram_weight_scratch_size, and per kernel the operand count, element types and
/// shape relations its evaluation assumes. Errors: kInvalidProgram (with LastErrorMessage()),
/// kIncompatibleVersion for another payload version, kNotSupported for a kernel feature the
/// engine does not implement (STRIDED_SLICE ellipsis / new-axis masks).
Result<NpuPayload> VerifyNpuPayload(Span<const uint8_t> blob);

/// Bytes per element of a payload tensor type.
int ElementBytes(::boardlab::npu::ElementType type);

/// Bytes of tensor `t` (elements x element size); the verifier guarantees it fits in int64.
int64_t TensorBytes(const ::boardlab::npu::Tensor& t);

}  // namespace boardlab::runtime::npu
