#pragma once

// A loaded .pte program (ExecuTorch wire format; shared/reference/executorch-formats.md section 1,
// docs/artifact-format.md for what boardlab writes). Program::Load checks the container (extended
// header, sizes, identifier, FlatBuffers structure, segment and constant bounds) without copying
// anything; Program::LoadMethod builds a runnable Method in caller-provided memory.
//
//   Result<Program> program = Program::Load({file_bytes, file_size});
//   if (!program.ok()) { printf("%s\n", LastErrorMessage()); return; }
//   Result<Method> method = program->LoadMethod("forward", memory, backends, tracer);
//
// The file bytes are not owned: they must stay valid and unchanged for the Program's lifetime and
// for every Method loaded from it (tensor constants, list parameters and delegate blobs point into
// them). They must be aligned to alignof(std::max_align_t).

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/event_tracer.h"
#include "runtime/core/event_tracer_hooks.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/executor/kernel.h"

namespace executorch_flatbuffer {
struct Program;
struct ExecutionPlan;
}  // namespace executorch_flatbuffer

namespace boardlab::runtime {

class Method;
class MemoryManager;
class BackendRegistry;

/// How the executor finds a CPU kernel by its key ("boardlab::conv_2d.out"); FindKernel is the
/// registry of runtime/kernels/, tests pass their own.
using KernelLookupFn = const KernelRegistration* (*)(const char* name);

/// Per-Method options.
struct MethodOptions {
  /// Time source of profile events; null = rt_pal_current_ticks (the platform clock). The host
  /// simulator plugs its simulated cycle counter in here.
  Clock clock = nullptr;
};

class Program {
 public:
  /// How much Load checks (ExecuTorch's Program::Verification).
  enum class Verification : uint8_t {
    /// Header, sizes, identifier and root offset only: for trusted files where load time
    /// matters. A corrupt file may then crash the loader.
    kMinimal,
    /// Additionally runs the FlatBuffers verifier over the whole flatbuffer and checks every
    /// segment, constant offset and delegate reference. Any byte string is then safe to load.
    kInternalConsistency,
  };

  /// The identifier this runtime reads ("ET12").
  static constexpr char kFileIdentifier[5] = "ET12";

  /// Parses `file` (the whole .pte, header and segments). Errors, with LastErrorMessage() saying
  /// what and where: kInvalidArgument (null or misaligned data), kInvalidProgram (truncated or
  /// corrupt file, bad header, segment or constant offsets out of range, not a program),
  /// kIncompatibleVersion (an "ET??" identifier other than ET12).
  [[nodiscard]] static Result<Program> Load(
      Span<const uint8_t> file, Verification verification = Verification::kInternalConsistency);

  /// Number of execution plans (methods) and the name of plan `i` (nullptr when out of range).
  size_t num_methods() const;
  const char* method_name(size_t i) const;

  /// Number of memory-planned buffers method `name` needs (non_const_buffer_sizes minus the
  /// reserved entry 0) and the size of planned buffer `i` (0-based: [0] = the arena). Errors:
  /// kNotFound (no such method), kInvalidProgram (sizes missing or negative), kInvalidArgument
  /// (i out of range).
  [[nodiscard]] Result<size_t> NumPlannedBuffers(const char* name) const;
  [[nodiscard]] Result<size_t> PlannedBufferSize(const char* name, size_t i) const;

  /// Builds method `name` in `memory` (see MemoryManager for the three roles). Resolves every
  /// operator through `lookup` and runs its Prepare, and initialises every delegate through a
  /// backend of `backends`. `tracer` (nullable, not owned, must outlive the Method) receives
  /// profile events. `memory`'s allocators and `backends`' backends must outlive the Method.
  /// Errors: kNotFound (no method `name`, or no backend for a delegate id), kInvalidProgram
  /// (malformed plan, tensor out of its buffer), kNotSupported (a tensor or instruction form the
  /// runtime does not implement), kInvalidArgument (planned buffers do not match the artifact),
  /// kOperatorMissing (no kernel for an operator), kMemoryAllocationFailed (persistent memory
  /// too small), and whatever a kernel's Prepare or a backend's Init returns.
  [[nodiscard]] Result<Method> LoadMethod(const char* name, MemoryManager& memory,
                                          BackendRegistry& backends, EventTracer* tracer,
                                          KernelLookupFn lookup = FindKernel,
                                          const MethodOptions& options = {}) const;

  /// Segment `index` of the file (bounds checked at Load). Errors: kInvalidArgument.
  [[nodiscard]] Result<Span<const uint8_t>> Segment(size_t index) const;

  /// `size` bytes of constant tensor data `data_buffer_idx` (1-based; 0 is the reserved
  /// placeholder), from the constant segment or the legacy inline constant_buffer. Errors:
  /// kInvalidProgram when the index or the byte range falls outside the data.
  [[nodiscard]] Result<const uint8_t*> ConstantData(uint32_t data_buffer_idx, size_t size) const;

  /// `size` bytes of initial data `data_buffer_idx` (1-based) of mutable-data segment list entry
  /// `segment_list_index` (ExtraTensorInfo.mutable_data_segments_idx): the value a memory-planned
  /// variable tensor starts with. Errors: kInvalidProgram when the entry, the index or the byte
  /// range falls outside the data.
  [[nodiscard]] Result<const uint8_t*> MutableData(uint64_t segment_list_index,
                                                   uint32_t data_buffer_idx, size_t size) const;

  /// The delegate blob `processed` refers to (INLINE or SEGMENT). Errors: kInvalidProgram.
  [[nodiscard]] Result<Span<const uint8_t>> DelegateData(uint8_t location, uint32_t index) const;

  /// The verified flatbuffer root, for tools; never null on a loaded Program.
  const executorch_flatbuffer::Program* flatbuffer() const { return program_; }
  /// Size of the flatbuffer region (headers included), as the extended header says.
  size_t program_size() const { return program_size_; }

 private:
  Program() = default;
  const executorch_flatbuffer::ExecutionPlan* FindPlan(const char* name) const;

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t program_size_ = 0;
  const executorch_flatbuffer::Program* program_ = nullptr;
  // Segments start at segment_base_ and may not extend past segment_end_ (absolute offsets).
  uint64_t segment_base_ = 0;
  uint64_t segment_end_ = 0;
  // The constant segment, when the program has one.
  const uint8_t* constants_ = nullptr;
  size_t constants_size_ = 0;
};

}  // namespace boardlab::runtime
