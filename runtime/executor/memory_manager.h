#pragma once

// The memory a Method runs in (STYLE.md rule 6; ExecuTorch's runtime/executor/memory_manager.h
// shape). The runtime never calls malloc: the caller owns every byte and hands it over here in
// three roles.
//
//   alignas(16) static uint8_t persistent_pool[8 * 1024];
//   alignas(16) static uint8_t arena[64 * 1024];       // = non_const_buffer_sizes[1]
//   alignas(16) static uint8_t temp_pool[4 * 1024];
//   MemoryAllocator persistent(persistent_pool, sizeof(persistent_pool));
//   MemoryAllocator temp(temp_pool, sizeof(temp_pool));
//   Span<uint8_t> planned[] = {{arena, sizeof(arena)}};
//   MemoryManager memory(&persistent, planned, &temp);
//   Result<Method> method = program.LoadMethod("forward", memory, registry, nullptr);

#include <cstdint>

#include "runtime/core/memory_allocator.h"
#include "runtime/core/span.h"

namespace boardlab::runtime {

class MemoryManager {
 public:
  /// `persistent`: everything LoadMethod builds (values, tensor views, instruction tables, kernel
  ///   op_data, delegate handles); lives as long as the Method. Program::LoadMethod fails with
  ///   kMemoryAllocationFailed when it is too small; Method::persistent_bytes() tells how much a
  ///   successful load used (two-pass sizing).
  /// `planned`: the memory-planned buffers, planned[i] = ExecutionPlan.non_const_buffer_sizes
  ///   [i + 1] bytes exactly (LoadMethod checks): [0] the activation arena, [1] (when the artifact
  ///   has it) the NPU weight-scratch window (0 bytes when only [2] is needed), [2] (when the
  ///   model has variable tensors) the state they keep between Executes, which LoadMethod resets
  ///   from the program's initial values. Each should be 16-byte aligned. The span array itself
  ///   is read only during LoadMethod; the buffers must outlive the Method.
  /// `temp`: kernel and delegate scratch, reset after every instruction. May be null when no
  ///   kernel needs scratch (a kernel that asks then fails).
  /// None of the allocators is owned; all must outlive every Method loaded with this manager.
  MemoryManager(MemoryAllocator* persistent, Span<Span<uint8_t>> planned,
                MemoryAllocator* temp = nullptr)
      : persistent_(persistent), planned_(planned), temp_(temp) {}

  MemoryAllocator* persistent() const { return persistent_; }
  Span<Span<uint8_t>> planned() const { return planned_; }
  MemoryAllocator* temp() const { return temp_; }

 private:
  MemoryAllocator* persistent_;
  Span<Span<uint8_t>> planned_;
  MemoryAllocator* temp_;
};

}  // namespace boardlab::runtime
